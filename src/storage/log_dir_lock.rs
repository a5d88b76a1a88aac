//! The .lock of a log dir.
