//! Criterion benchmarks of the storage write and recovery paths:
//!
//! - `append`: `UnifiedLog::append_as_leader` of 1 KiB and 16 KiB uncompressed batches
//!   (validation, offset assignment, one gathering write) on tmpfs and on disk, beside a plain
//!   `write()` loop of the same sizes to the same file system in the same run;
//! - `recovery`: `LogSegment::recover` of a 64 MiB segment on a warm page cache (CRC of every
//!   batch, index rebuild).
//!
//! Run: `cargo bench --bench storage`. Figures are in docs/benchmarks.md.

#![allow(clippy::expect_used)] // a benchmark that cannot set up has nothing to measure

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kcli::cluster::TopicPartition;
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::log_config::LogConfig;
use kcli::storage::log_segment::LogSegment;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::unified_log::UnifiedLog;

const NOW: i64 = 1_767_225_600_000;

/// A batch of `size` bytes in total, of 1 KiB records (or one record for 1 KiB batches).
fn batch_of(size: usize) -> Vec<u8> {
    let records = (size / 1024).max(1);
    let mut builder = RecordBatchBuilder::new(CompressionType::None);
    builder.records = (0..records)
        .map(|i| {
            SimpleRecord::new(
                NOW + i as i64,
                Some(format!("key-{i}").into_bytes()),
                Some(vec![b'x'; size / records - 80]),
            )
        })
        .collect();
    builder.build().expect("batch builds")
}

fn fresh_dir(root: &Path) -> tempfile::TempDir {
    tempfile::tempdir_in(root).expect("temp dir")
}

fn bench_append(c: &mut Criterion) {
    let mut group = c.benchmark_group("append");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    let roots = [
        ("tmpfs", Path::new("/dev/shm")),
        ("disk", Path::new(env!("CARGO_TARGET_TMPDIR"))),
    ];
    for size in [1024usize, 16 * 1024] {
        let batch = batch_of(size);
        group.throughput(Throughput::Bytes(batch.len() as u64));
        for (fs_name, root) in roots {
            group.bench_with_input(
                BenchmarkId::new(format!("kcli/{fs_name}"), size),
                &batch,
                |b, batch| {
                    b.iter_custom(|iters| {
                        let dir = fresh_dir(root);
                        let config = LogConfig {
                            segment_bytes: 256 * 1024 * 1024,
                            ..LogConfig::default()
                        };
                        let mut log = UnifiedLog::open(
                            dir.path().join("t-0"),
                            TopicPartition::new("t", 0),
                            config,
                            0,
                            0,
                            true,
                            NOW,
                        )
                        .expect("log opens");
                        let start = Instant::now();
                        for _ in 0..iters {
                            black_box(
                                log.append_as_leader(batch, 0, AppendOrigin::Client, NOW)
                                    .expect("append"),
                            );
                        }
                        start.elapsed()
                    })
                },
            );
            group.bench_with_input(
                BenchmarkId::new(format!("write_loop/{fs_name}"), size),
                &batch,
                |b, batch| {
                    b.iter_custom(|iters| {
                        let dir = fresh_dir(root);
                        let mut file = File::create(dir.path().join("plain.log")).expect("file");
                        let start = Instant::now();
                        for _ in 0..iters {
                            file.write_all(black_box(batch)).expect("write");
                        }
                        start.elapsed()
                    })
                },
            );
        }
    }
    group.finish();
}

fn bench_recovery(c: &mut Criterion) {
    let mut group = c.benchmark_group("recovery");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    let dir = fresh_dir(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let config = LogConfig {
        segment_bytes: i32::MAX,
        ..LogConfig::default()
    };
    let log_dir = dir.path().join("t-0");
    {
        let mut log = UnifiedLog::open(
            log_dir.clone(),
            TopicPartition::new("t", 0),
            config.clone(),
            0,
            0,
            true,
            NOW,
        )
        .expect("log opens");
        let batch = batch_of(16 * 1024);
        while log.size() < 64 * 1024 * 1024 {
            log.append_as_leader(&batch, 0, AppendOrigin::Client, NOW)
                .expect("append");
        }
        log.close(NOW).expect("close");
    }
    let mut segment = LogSegment::open(&log_dir, 0, &config, false, 0, NOW).expect("segment opens");
    group.throughput(Throughput::Bytes(segment.size()));
    group.bench_function("recover_64MiB_16KiB_batches", |b| {
        b.iter(|| black_box(segment.recover(None).expect("recover")))
    });
    group.finish();
}

criterion_group!(benches, bench_append, bench_recovery);
criterion_main!(benches);
