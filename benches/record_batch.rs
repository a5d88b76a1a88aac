//! Criterion benchmark of `validate_records` (client leader append): time per batch and
//! throughput in bytes of batch (as received, i.e. compressed for lz4) for ~1 KiB and ~16 KiB of
//! records, uncompressed and lz4. Records carry a 16-byte key and a ~100-byte JSON-like value
//! with pseudo-random fields, so lz4 compresses them about as much as real payloads. Run with
//! `cargo bench --bench record_batch`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kcli::protocol::record::batch::TimestampType;
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::log_validator::{AppendOrigin, ValidationContext, validate_records};

const NOW: i64 = 1_700_000_000_000;

/// Pseudo-random printable bytes (a fixed LCG, so runs are comparable).
fn text(seed: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            b'a' + ((*seed >> 33) % 26) as u8
        })
        .collect()
}

/// A batch of records whose uncompressed records section is about `target` bytes.
fn batch(codec: CompressionType, target: usize) -> Vec<u8> {
    let mut seed = 42u64;
    let mut b = RecordBatchBuilder::new(codec);
    let mut size = 61;
    while size < target {
        let key = text(&mut seed, 16);
        let name = String::from_utf8_lossy(&text(&mut seed, 12)).into_owned();
        let n = seed % 1_000_000;
        let value = format!(
            "{{\"id\":{n:06},\"name\":\"{name}\",\"kind\":\"click\",\"page\":\"/home\",\"ok\":true}}"
        )
        .into_bytes();
        size += 24 + value.len();
        b.records.push(SimpleRecord::new(
            NOW - 1000 + b.records.len() as i64,
            Some(key),
            Some(value),
        ));
    }
    b.build().unwrap_or_default()
}

fn ctx() -> ValidationContext {
    ValidationContext {
        origin: AppendOrigin::Client,
        compacted: false,
        timestamp_type: TimestampType::CreateTime,
        now_ms: NOW,
        timestamp_before_max_ms: i64::MAX,
        timestamp_after_max_ms: i64::MAX,
        max_message_bytes: 1 << 20,
        max_decompressed_bytes: 1 << 24,
        target_compression: None,
    }
}

fn bench_validate(c: &mut Criterion) {
    let ctx = ctx();
    let mut group = c.benchmark_group("validate_records");
    for (codec, target, name) in [
        (CompressionType::None, 1 << 10, "none_1KiB"),
        (CompressionType::None, 16 << 10, "none_16KiB"),
        (CompressionType::Lz4, 1 << 10, "lz4_1KiB"),
        (CompressionType::Lz4, 16 << 10, "lz4_16KiB"),
    ] {
        let bytes = batch(codec, target);
        assert!(validate_records(&bytes, &ctx).is_ok(), "{name}");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| validate_records(black_box(&bytes), black_box(&ctx)))
        });
    }
    // Reference: CRC-32C alone over the same 16 KiB batch.
    let bytes = batch(CompressionType::None, 16 << 10);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("crc32c_only_16KiB", |b| {
        b.iter(|| kcli::protocol::record::batch::is_crc_valid(black_box(&bytes)))
    });
    // Reference: walking the records alone (no CRC, no checks).
    let body = &bytes[61..];
    let records = kcli::protocol::record::records::RecordIter::new(body, i32::MAX).count();
    let n = i32::try_from(records).unwrap_or(0);
    group.bench_function("walk_only_16KiB", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            let r = kcli::protocol::record::records::for_each_record(black_box(body), n, |_, r| {
                sum += r.timestamp_delta;
            });
            (r.is_ok(), sum)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_validate);
criterion_main!(benches);
