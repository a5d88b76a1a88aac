//! A memory-mapped, preallocated index file of fixed-size entries.
