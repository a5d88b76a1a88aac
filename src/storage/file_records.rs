//! A segment's .log file.
