//! Down-conversion against the up-conversion and the legacy reader: every codec Kafka converts,
//! both magics, offsets with gaps, log-append time, the size contract and what is refused.

use super::*;
use crate::protocol::record::builder::{
    RecordBatchBuilder, SimpleRecord, build_legacy_message_set, encode_record,
};
use crate::protocol::record::compression::compress;
use crate::protocol::record::convert::message_set_to_batch;
use crate::protocol::record::legacy::{LegacyRecord, deep_records};

const CONVERTED: [CompressionType; 4] = [
    CompressionType::None,
    CompressionType::Gzip,
    CompressionType::Snappy,
    CompressionType::Lz4,
];

fn records() -> Vec<SimpleRecord> {
    vec![
        SimpleRecord::new(1_000, Some(b"k".to_vec()), Some(b"v1".to_vec())),
        SimpleRecord::new(2_000, None, None),
    ]
}

/// Every record of a converted set: (absolute offset, timestamp, key, value).
type Flat = Vec<(i64, i64, Option<Vec<u8>>, Option<Vec<u8>>)>;

fn flatten(set: &[u8]) -> Flat {
    let mut out = Vec::new();
    for entry in BatchIter::new(set) {
        let entry = entry.unwrap();
        assert!(LegacyRecord::parse(entry.bytes).unwrap().is_valid());
        for r in deep_records(entry.bytes, 1 << 20).unwrap() {
            out.push((r.offset, r.timestamp, r.key.clone(), r.value.clone()));
        }
    }
    out
}

/// A magic-2 batch at `base_offset` whose records have the given offset deltas (a compacted
/// batch has gaps), value `v<delta>`, timestamp 10 000 + delta.
fn batch_with_deltas(codec: CompressionType, base_offset: i64, deltas: &[i32]) -> Vec<u8> {
    let mut body = Vec::new();
    for &d in deltas {
        let r = SimpleRecord::new(0, None, Some(format!("v{d}").into_bytes()));
        encode_record(&mut body, d, i64::from(d), &r);
    }
    let body = compress(codec, &body).unwrap();
    let mut b = RecordBatchBuilder::new(codec);
    b.base_offset = base_offset;
    b.records = vec![SimpleRecord::new(10_000, None, None)];
    let mut batch = b.build().unwrap()[..RECORD_BATCH_HEADER].to_vec();
    batch.extend_from_slice(&body);
    let batch_length = i32::try_from(batch.len() - 12).unwrap();
    batch[8..12].copy_from_slice(&batch_length.to_be_bytes());
    batch[23..27].copy_from_slice(&deltas.last().unwrap().to_be_bytes());
    let count = i32::try_from(deltas.len()).unwrap();
    batch[57..61].copy_from_slice(&count.to_be_bytes());
    batch
}

const RECORD_BATCH_HEADER: usize = 61;

#[test]
fn round_trips_through_both_directions() {
    for codec in CONVERTED {
        for magic in [0, 1] {
            let set = build_legacy_message_set(magic, codec, 0, &records()).unwrap();
            let batch = message_set_to_batch(&set).unwrap();
            let header = RecordBatchHeader::parse(&batch).unwrap();
            assert_eq!(header.records_count, 2);
            assert_eq!(header.compression().unwrap(), codec);
            let back = batches_to_message_set(&batch, magic).unwrap();
            assert_eq!(flatten(&back), flatten(&set), "{codec:?} magic {magic}");
            let again = message_set_to_batch(&back).unwrap();
            assert_eq!(again, batch, "{codec:?} magic {magic}");
        }
    }
}

#[test]
fn offsets_with_gaps_are_kept_in_both_magics() {
    let deltas = [0, 2, 5, 9];
    for codec in CONVERTED {
        let batch = batch_with_deltas(codec, 100, &deltas);
        for magic in [0, 1] {
            let set = batches_to_message_set(&batch, magic).unwrap();
            let got = flatten(&set);
            let want: Flat = deltas
                .iter()
                .map(|&d| {
                    let ts = if magic == 0 {
                        NO_TIMESTAMP
                    } else {
                        10_000 + i64::from(d)
                    };
                    (
                        100 + i64::from(d),
                        ts,
                        None,
                        Some(format!("v{d}").into_bytes()),
                    )
                })
                .collect();
            assert_eq!(got, want, "{codec:?} magic {magic}");
            let entries = BatchIter::new(&set).count();
            let wrappers = if codec == CompressionType::None {
                deltas.len()
            } else {
                1
            };
            assert_eq!(entries, wrappers, "{codec:?} magic {magic}");
        }
    }
}

#[test]
fn log_append_time_stamps_every_record() {
    let mut b = RecordBatchBuilder::new(CompressionType::Gzip);
    b.records = records();
    b.timestamp_type = TimestampType::LogAppendTime;
    let batch = b.build().unwrap();
    let set = batches_to_message_set(&batch, 1).unwrap();
    // The batch's max timestamp is the append time the leader set.
    assert!(
        flatten(&set).iter().all(|r| r.1 == 2_000),
        "{:?}",
        flatten(&set)
    );
}

#[test]
fn the_converted_set_stops_growing_at_the_size_read() {
    let mut data = Vec::new();
    for i in 0..20 {
        data.extend(batch_with_deltas(CompressionType::None, i * 10, &[0, 1, 2]));
    }
    // Magic 1 entries are larger than v2 records, so not all 20 batches fit the size read.
    let set = batches_to_message_set(&data, 1).unwrap();
    let got = flatten(&set);
    assert!(got.len() < 60 && !got.is_empty(), "{} records", got.len());
    assert_eq!(got.len() % 3, 0, "whole batches only");
    let offsets: Vec<i64> = got.iter().map(|r| r.0).collect();
    let expected: Vec<i64> = (0..got.len() as i64 / 3)
        .flat_map(|b| [b * 10, b * 10 + 1, b * 10 + 2])
        .collect();
    assert_eq!(offsets, expected);
    let size_before_last = set.len() - flatten_last_batch_len(&set);
    assert!(size_before_last < data.len());
}

/// The bytes of the last three entries (one converted uncompressed batch).
fn flatten_last_batch_len(set: &[u8]) -> usize {
    let sizes: Vec<usize> = BatchIter::new(set)
        .map(|e| e.unwrap().bytes.len())
        .collect();
    sizes.iter().rev().take(3).sum()
}

#[test]
fn a_partial_batch_at_the_end_is_dropped_and_control_batches_skipped() {
    let mut data = batch_with_deltas(CompressionType::Lz4, 0, &[0, 1]);
    let mut control = RecordBatchBuilder::new(CompressionType::None);
    control.base_offset = 2;
    control.is_control = true;
    control.is_transactional = true;
    control.records = records();
    data.extend(control.build().unwrap());
    let whole = data.len();
    data.extend(batch_with_deltas(CompressionType::None, 4, &[0, 1]));
    data.truncate(whole + 30);
    let set = batches_to_message_set(&data, 1).unwrap();
    let offsets: Vec<i64> = flatten(&set).iter().map(|r| r.0).collect();
    assert_eq!(offsets, vec![0, 1]);
}

#[test]
fn refuses_what_kafka_refuses() {
    let zstd = batch_with_deltas(CompressionType::Zstd, 0, &[0]);
    assert_eq!(
        batches_to_message_set(&zstd, 1).unwrap_err().code,
        ErrorCode::UnsupportedCompressionType
    );
    // A record that claims more bytes than its stream holds.
    let mut body = Vec::new();
    encode_record(
        &mut body,
        0,
        0,
        &SimpleRecord::new(0, None, Some(vec![7; 100])),
    );
    body[0] = 0xfe; // size varint 127 (zigzag): past the end
    body.insert(1, 0x01);
    let lying = {
        let mut b = batch_with_deltas(CompressionType::Gzip, 0, &[0]);
        b.truncate(RECORD_BATCH_HEADER);
        b.extend(compress(CompressionType::Gzip, &body).unwrap());
        let len = i32::try_from(b.len() - 12).unwrap();
        b[8..12].copy_from_slice(&len.to_be_bytes());
        b
    };
    assert_eq!(
        batches_to_message_set(&lying, 1).unwrap_err().code,
        ErrorCode::CorruptMessage
    );
    assert_eq!(
        batches_to_message_set(&lying, 2).unwrap_err().code,
        ErrorCode::CorruptMessage
    );
}
