//! Files for the dump-segment comparisons, built with kcli's record builder: v2 batches with
//! every codec and field, legacy v0/v1 message sets, index files.

use std::path::Path;

use kcli::protocol::record::batch::{
    RECORD_BATCH_OVERHEAD, TimestampType, compute_crc, set_log_append_time,
};
use kcli::protocol::record::builder::{
    ControlRecordType, RecordBatchBuilder, SimpleRecord, build_control_batch,
    build_legacy_message_set,
};
use kcli::protocol::record::compression::CompressionType;

pub const SEGMENT: &str = "00000000000000000000";
pub const TS: i64 = 1_700_000_000_000;

pub fn rec(ts: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> SimpleRecord {
    SimpleRecord::new(ts, key.map(<[u8]>::to_vec), value.map(<[u8]>::to_vec))
}

pub fn batch(codec: CompressionType, base_offset: i64, records: Vec<SimpleRecord>) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(codec);
    b.base_offset = base_offset;
    b.partition_leader_epoch = 3;
    b.records = records;
    b.build().unwrap()
}

/// A segment of v2 batches exercising every field Kafka prints, with consecutive offsets.
/// Returns the file bytes and `(position, last offset, max timestamp)` per batch.
pub fn v2_segment() -> (Vec<u8>, Vec<(u32, i64, i64)>) {
    let mut batches = Vec::new();
    let mut offset = 0i64;
    let codecs = [
        CompressionType::None,
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ];
    for (i, codec) in codecs.into_iter().enumerate() {
        let mut records = vec![
            rec(TS + i as i64, Some(b"key"), Some(b"value")),
            rec(TS + 5, None, Some("h\u{e9}llo w\u{f6}rld".as_bytes())),
            rec(TS + 2, Some(b"k2"), None),
            rec(TS + 7, Some(b"\xff\xfebin"), Some(b"\x00\x01\x02")),
        ];
        records[0].headers = vec![
            ("h1".into(), Some(b"v1".to_vec())),
            ("h2".into(), None),
            ("h1".into(), Some(vec![])),
        ];
        let n = records.len() as i64;
        batches.push(batch(codec, offset, records));
        offset += n;
    }
    // An idempotent producer's batch with a sequence that wraps.
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.base_offset = offset;
    b.producer_id = 4000;
    b.producer_epoch = 2;
    b.base_sequence = i32::MAX - 1;
    b.records = (0..4)
        .map(|i| rec(TS + i, Some(b"p"), Some(b"q")))
        .collect();
    batches.push(b.build().unwrap());
    offset += 4;
    // A transaction, committed, then one aborted.
    for (marker, codec) in [
        (ControlRecordType::Commit, CompressionType::Lz4),
        (ControlRecordType::Abort, CompressionType::None),
    ] {
        let mut b = RecordBatchBuilder::new(codec);
        b.base_offset = offset;
        b.producer_id = 5000;
        b.producer_epoch = 0;
        b.base_sequence = 0;
        b.is_transactional = true;
        b.partition_leader_epoch = 3;
        b.records = vec![rec(TS + 20, Some(b"t"), Some(b"txn"))];
        batches.push(b.build().unwrap());
        offset += 1;
        batches.push(build_control_batch(marker, offset, 3, 5000, 0, 17, TS + 21).unwrap());
        offset += 1;
    }
    // LogAppendTime: every record reads the batch's max timestamp.
    let mut b = RecordBatchBuilder::new(CompressionType::Gzip);
    b.base_offset = offset;
    b.timestamp_type = TimestampType::LogAppendTime;
    b.records = vec![rec(TS, Some(b"a"), Some(b"1")), rec(TS + 1, None, None)];
    let mut bytes = b.build().unwrap();
    let (head, rest) = bytes.split_at_mut(RECORD_BATCH_OVERHEAD);
    let head: &mut [u8; RECORD_BATCH_OVERHEAD] = head.try_into().unwrap();
    set_log_append_time(head, rest, TS + 999);
    batches.push(bytes);
    offset += 2;
    // A batch with a delete horizon (bit 6), as the cleaner writes them.
    let mut bytes = batch(
        CompressionType::None,
        offset,
        vec![rec(TS + 30, Some(b"d"), None)],
    );
    bytes[22] |= 0x40;
    let crc = compute_crc(&bytes);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    batches.push(bytes);

    let mut file = Vec::new();
    let mut layout = Vec::new();
    for b in batches {
        let base = i64::from_be_bytes(b[0..8].try_into().unwrap());
        let last_delta = i32::from_be_bytes(b[23..27].try_into().unwrap());
        let max_ts = i64::from_be_bytes(b[35..43].try_into().unwrap());
        layout.push((file.len() as u32, base + i64::from(last_delta), max_ts));
        file.extend_from_slice(&b);
    }
    (file, layout)
}

pub fn legacy_segment() -> Vec<u8> {
    let records: Vec<SimpleRecord> = (0..3)
        .map(|i| {
            rec(
                TS + i,
                if i == 1 { None } else { Some(b"lk") },
                Some(b"legacy value"),
            )
        })
        .collect();
    let mut file = Vec::new();
    let mut offset = 0;
    for magic in [0i8, 1] {
        for codec in [
            CompressionType::None,
            CompressionType::Gzip,
            CompressionType::Snappy,
            CompressionType::Lz4,
        ] {
            file.extend(build_legacy_message_set(magic, codec, offset, &records).unwrap());
            offset += records.len() as i64;
        }
    }
    file
}

pub fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

pub fn offset_index(entries: &[(i32, u32)], padding: usize) -> Vec<u8> {
    let mut b: Vec<u8> = entries
        .iter()
        .flat_map(|(o, p)| o.to_be_bytes().into_iter().chain(p.to_be_bytes()))
        .collect();
    b.resize(b.len() + padding * 8, 0);
    b
}

pub fn time_index(entries: &[(i64, i32)], padding: usize) -> Vec<u8> {
    let mut b: Vec<u8> = entries
        .iter()
        .flat_map(|(t, o)| t.to_be_bytes().into_iter().chain(o.to_be_bytes()))
        .collect();
    b.resize(b.len() + padding * 12, 0);
    b
}

/// A v1 compressed wrapper switched to LogAppendTime: every inner record reads the wrapper's
/// timestamp.
pub fn v1_log_append_time_wrapper(offset: i64) -> Vec<u8> {
    let records: Vec<SimpleRecord> = (0..3)
        .map(|i| rec(TS + i, Some(b"k"), Some(b"v")))
        .collect();
    let mut w = build_legacy_message_set(1, CompressionType::Gzip, offset, &records).unwrap();
    w[17] |= 0x08;
    w[18..26].copy_from_slice(&(TS + 500).to_be_bytes());
    let crc = crc32fast::hash(&w[16..]);
    w[12..16].copy_from_slice(&crc.to_be_bytes());
    w
}
