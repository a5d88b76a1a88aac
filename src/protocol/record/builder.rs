//! Builders for v2 record batches and legacy message sets.
