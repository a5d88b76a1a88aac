//! Criterion benchmarks of index lookups: `OffsetIndex::lookup` and `TimeIndex::lookup` on full
//! 10 MiB indexes (Kafka's default `segment.index.bytes`), for random targets across the whole
//! index and for targets in the warm tail where in-sync consumers and followers look.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kcli::storage::offset_index::OffsetIndex;
use kcli::storage::time_index::TimeIndex;

const MAX_INDEX_SIZE: usize = 10 * 1024 * 1024;
const BASE_OFFSET: i64 = 1_000_000;
const TARGETS: usize = 4096;

/// A small deterministic generator, so every run looks up the same targets.
fn targets(range: std::ops::Range<i64>) -> Vec<i64> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..TARGETS)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            range.start + ((state >> 33) as i64).rem_euclid(range.end - range.start)
        })
        .collect()
}

fn bench_lookups(c: &mut Criterion) {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("no temp dir: {e}");
            return;
        }
    };

    // Offset index: one entry every 10 offsets, positions 4 KiB apart, until full.
    let Ok(mut offsets) =
        OffsetIndex::open(dir.path().join("0.index"), BASE_OFFSET, MAX_INDEX_SIZE)
    else {
        return;
    };
    let mut n = 0i64;
    while !offsets.is_full() {
        if offsets
            .append(BASE_OFFSET + n * 10, (n as u32).wrapping_mul(4096))
            .is_err()
        {
            return;
        }
        n += 1;
    }
    let last_offset = offsets.last_offset();
    let random = targets(BASE_OFFSET..last_offset + 10);
    let warm = targets(last_offset - 5_000..last_offset + 10);
    let mut group = c.benchmark_group("offset_index_lookup_full_10MiB");
    for (name, list) in [("random", &random), ("warm_tail", &warm)] {
        group.bench_function(name, |b| {
            let mut i = 0usize;
            b.iter(|| {
                i = (i + 1) % TARGETS;
                black_box(offsets.lookup(black_box(list[i])))
            })
        });
    }
    group.finish();

    // Time index: one entry every 10 offsets and 7 ms, until only the reserved slot is left,
    // then the final entry written at roll.
    let Ok(mut times) =
        TimeIndex::open(dir.path().join("0.timeindex"), BASE_OFFSET, MAX_INDEX_SIZE)
    else {
        return;
    };
    let start_ts = 1_700_000_000_000i64;
    let mut n = 0i64;
    while !times.is_full() {
        if times
            .maybe_append(start_ts + n * 7, BASE_OFFSET + n * 10, false)
            .is_err()
        {
            return;
        }
        n += 1;
    }
    if times
        .maybe_append(start_ts + n * 7, BASE_OFFSET + n * 10, true)
        .is_err()
    {
        return;
    }
    let last_ts = times.last_entry().timestamp;
    let random = targets(start_ts - 10..last_ts + 10);
    let warm = targets(last_ts - 3_500..last_ts + 10);
    let mut group = c.benchmark_group("time_index_lookup_full_10MiB");
    for (name, list) in [("random", &random), ("warm_tail", &warm)] {
        group.bench_function(name, |b| {
            let mut i = 0usize;
            b.iter(|| {
                i = (i + 1) % TARGETS;
                black_box(times.lookup(black_box(list[i])))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_lookups);
criterion_main!(benches);
