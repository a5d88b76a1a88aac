//! A partition's log.
