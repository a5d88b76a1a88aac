//! The time index.
