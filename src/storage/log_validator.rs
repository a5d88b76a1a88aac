//! Validation of produced batches.
