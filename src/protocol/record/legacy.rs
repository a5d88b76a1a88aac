//! Legacy magic 0/1 message sets.
