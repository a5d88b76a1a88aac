//! Criterion benchmark of `validate_records` (placeholder while the validator is written).
fn main() {}
