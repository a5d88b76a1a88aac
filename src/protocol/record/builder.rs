//! Builders for v2 record batches and legacy message sets.
//!
//! Used by tests, tools and down/up-conversion. The broker never re-encodes client batches; these
//! builders write the same bytes Kafka's `MemoryRecordsBuilder` would for the same input
//! (compressed payloads aside, which depend on the codec implementation).

use super::batch::{
    CONTROL_FLAG_MASK, CRC_OFFSET, LOG_OVERHEAD, MAGIC_V0, MAGIC_V1, MAGIC_V2, NO_SEQUENCE,
    NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK,
    TimestampType, compute_crc,
};
use super::compression::{CompressionType, compress};
use super::error::RecordError;
use super::varint::{varint_size, varlong_size, write_varint, write_varlong};

/// A record to encode: absolute timestamp, optional key and value, headers in order (keys may
/// repeat, values may be null).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleRecord {
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

impl SimpleRecord {
    /// A record without headers.
    pub fn new(timestamp: i64, key: Option<Vec<u8>>, value: Option<Vec<u8>>) -> Self {
        SimpleRecord {
            timestamp,
            key,
            value,
            headers: Vec::new(),
        }
    }
}

fn bytes_size(b: Option<&[u8]>) -> usize {
    match b {
        None => varint_size(-1),
        Some(b) => varint_size(b.len() as i32) + b.len(),
    }
}

fn write_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => write_varint(out, -1),
        Some(b) => {
            write_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

/// Appends one v2 record (length varint included), as Kafka's `DefaultRecord.writeTo`.
pub fn encode_record(out: &mut Vec<u8>, offset_delta: i32, timestamp_delta: i64, r: &SimpleRecord) {
    let mut body = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta);
    body += bytes_size(r.key.as_deref()) + bytes_size(r.value.as_deref());
    body += varint_size(r.headers.len() as i32);
    for (k, v) in &r.headers {
        body += bytes_size(Some(k.as_bytes())) + bytes_size(v.as_deref());
    }
    out.reserve(body + 5);
    write_varint(out, body as i32);
    out.push(0);
    write_varlong(out, timestamp_delta);
    write_varint(out, offset_delta);
    write_bytes(out, r.key.as_deref());
    write_bytes(out, r.value.as_deref());
    write_varint(out, r.headers.len() as i32);
    for (k, v) in &r.headers {
        write_bytes(out, Some(k.as_bytes()));
        write_bytes(out, v.as_deref());
    }
}

/// Builds one magic-2 batch. Offsets are `base_offset + i`; the base timestamp is the first
/// record's and `max_timestamp` the largest record timestamp (`NO_TIMESTAMP` when empty).
#[derive(Debug, Clone)]
pub struct RecordBatchBuilder {
    pub base_offset: i64,
    pub partition_leader_epoch: i32,
    pub compression: CompressionType,
    pub timestamp_type: TimestampType,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub records: Vec<SimpleRecord>,
}

impl RecordBatchBuilder {
    /// An empty, non-idempotent (producer id, epoch and sequence -1) CreateTime batch at offset 0.
    pub fn new(compression: CompressionType) -> Self {
        RecordBatchBuilder {
            base_offset: 0,
            partition_leader_epoch: -1,
            compression,
            timestamp_type: TimestampType::CreateTime,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: NO_SEQUENCE,
            is_transactional: false,
            is_control: false,
            records: Vec::new(),
        }
    }

    /// The encoded batch, CRC included.
    pub fn build(&self) -> Result<Vec<u8>, RecordError> {
        let base_timestamp = self.records.first().map_or(NO_TIMESTAMP, |r| r.timestamp);
        let max_timestamp = self
            .records
            .iter()
            .map(|r| r.timestamp)
            .max()
            .unwrap_or(NO_TIMESTAMP);
        let mut body = Vec::new();
        for (i, r) in self.records.iter().enumerate() {
            encode_record(
                &mut body,
                i as i32,
                r.timestamp.wrapping_sub(base_timestamp),
                r,
            );
        }
        if self.compression != CompressionType::None {
            body = compress(self.compression, &body)?;
        }
        let size = RECORD_BATCH_OVERHEAD + body.len();
        let batch_length = i32::try_from(size - LOG_OVERHEAD)
            .map_err(|_| RecordError::corrupt(0, format!("batch of {size} bytes is too large")))?;
        let mut attributes = i16::from(self.compression.id());
        if self.timestamp_type == TimestampType::LogAppendTime {
            attributes |= TIMESTAMP_TYPE_MASK;
        }
        if self.is_transactional {
            attributes |= TRANSACTIONAL_FLAG_MASK;
        }
        if self.is_control {
            attributes |= CONTROL_FLAG_MASK;
        }
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(&self.base_offset.to_be_bytes());
        out.extend_from_slice(&batch_length.to_be_bytes());
        out.extend_from_slice(&self.partition_leader_epoch.to_be_bytes());
        out.push(MAGIC_V2 as u8);
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&attributes.to_be_bytes());
        let last_offset_delta = (self.records.len() as i32 - 1).max(0);
        out.extend_from_slice(&last_offset_delta.to_be_bytes());
        out.extend_from_slice(&base_timestamp.to_be_bytes());
        out.extend_from_slice(&max_timestamp.to_be_bytes());
        out.extend_from_slice(&self.producer_id.to_be_bytes());
        out.extend_from_slice(&self.producer_epoch.to_be_bytes());
        out.extend_from_slice(&self.base_sequence.to_be_bytes());
        out.extend_from_slice(&(self.records.len() as i32).to_be_bytes());
        out.extend_from_slice(&body);
        let crc = compute_crc(&out);
        out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        Ok(out)
    }
}

/// Kafka's `ControlRecordType`: the marker a transaction coordinator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlRecordType {
    Abort,
    Commit,
}

/// A transaction marker batch: transactional + control, one record whose key is
/// `{version: i16 = 0, type: i16}` and whose value is `EndTxnMarker {version: i16 = 0,
/// coordinator_epoch: i32}`.
pub fn build_control_batch(
    marker: ControlRecordType,
    base_offset: i64,
    partition_leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    coordinator_epoch: i32,
    timestamp: i64,
) -> Result<Vec<u8>, RecordError> {
    let kind: i16 = match marker {
        ControlRecordType::Abort => 0,
        ControlRecordType::Commit => 1,
    };
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend_from_slice(&kind.to_be_bytes());
    let mut value = 0i16.to_be_bytes().to_vec();
    value.extend_from_slice(&coordinator_epoch.to_be_bytes());
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.base_offset = base_offset;
    b.partition_leader_epoch = partition_leader_epoch;
    b.producer_id = producer_id;
    b.producer_epoch = producer_epoch;
    b.is_transactional = true;
    b.is_control = true;
    b.records
        .push(SimpleRecord::new(timestamp, Some(key), Some(value)));
    b.build()
}

/// Appends one legacy entry `[offset][size][crc][magic][attributes][timestamp v1][key][value]`.
pub(super) fn write_legacy_entry(
    out: &mut Vec<u8>,
    magic: i8,
    attributes: i8,
    offset: i64,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<(), RecordError> {
    let ts_len = if magic == MAGIC_V1 { 8 } else { 0 };
    let size =
        4 + 1 + 1 + ts_len + 4 + key.map_or(0, <[u8]>::len) + 4 + value.map_or(0, <[u8]>::len);
    let size_i32 = i32::try_from(size)
        .map_err(|_| RecordError::corrupt(0, format!("message of {size} bytes is too large")))?;
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&size_i32.to_be_bytes());
    let crc_at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(magic as u8);
    out.push(attributes as u8);
    if magic == MAGIC_V1 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    for part in [key, value] {
        match part {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    let crc = crc32fast::hash(&out[crc_at + 4..]);
    out[crc_at..crc_at + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// A magic 0 or 1 message set. Uncompressed: one entry per record at `base_offset + i`.
/// Compressed: one wrapper whose offset is the last inner offset, whose key is null and whose
/// value is the compressed inner set; inner offsets are absolute for v0 and relative (0..n) for
/// v1, and a v1 wrapper carries the largest inner timestamp (CreateTime).
pub fn build_legacy_message_set(
    magic: i8,
    compression: CompressionType,
    base_offset: i64,
    records: &[SimpleRecord],
) -> Result<Vec<u8>, RecordError> {
    if magic != MAGIC_V0 && magic != MAGIC_V1 {
        return Err(RecordError::UnknownMagic(magic));
    }
    if compression == CompressionType::Zstd {
        return Err(RecordError::corrupt(
            0,
            "zstd compression is not supported by magic 0 or 1",
        ));
    }
    let mut out = Vec::new();
    if compression == CompressionType::None {
        for (i, r) in records.iter().enumerate() {
            write_legacy_entry(
                &mut out,
                magic,
                0,
                base_offset + i as i64,
                r.timestamp,
                r.key.as_deref(),
                r.value.as_deref(),
            )?;
        }
        return Ok(out);
    }
    let mut inner = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let offset = if magic == MAGIC_V1 {
            i as i64
        } else {
            base_offset + i as i64
        };
        write_legacy_entry(
            &mut inner,
            magic,
            0,
            offset,
            r.timestamp,
            r.key.as_deref(),
            r.value.as_deref(),
        )?;
    }
    let compressed = compress(compression, &inner)?;
    let max_ts = records
        .iter()
        .map(|r| r.timestamp)
        .max()
        .unwrap_or(NO_TIMESTAMP);
    let last = base_offset + (records.len() as i64 - 1).max(0);
    write_legacy_entry(
        &mut out,
        magic,
        compression.id() as i8,
        last,
        max_ts,
        None,
        Some(&compressed),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::batch::{RecordBatchHeader, is_crc_valid};
    use crate::protocol::record::records::{RecordIter, batch_records};
    use proptest::prelude::*;

    fn arb_record() -> impl Strategy<Value = SimpleRecord> {
        let bytes = || proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40));
        let header = ("[a-c]{0,2}", bytes());
        (
            -5i64..5_000_000_000_000,
            bytes(),
            bytes(),
            proptest::collection::vec(header, 0..4),
        )
            .prop_map(|(timestamp, key, value, headers)| SimpleRecord {
                timestamp,
                key,
                value,
                headers,
            })
    }

    proptest! {
        #[test]
        fn v2_round_trip_every_codec(
            records in proptest::collection::vec(arb_record(), 0..12),
            id in 0u8..5,
            base in 0i64..1 << 40,
        ) {
            let codec = CompressionType::from_id(id).unwrap();
            let mut b = RecordBatchBuilder::new(codec);
            b.base_offset = base;
            b.records = records.clone();
            let bytes = b.build().unwrap();
            prop_assert!(is_crc_valid(&bytes));
            let h = RecordBatchHeader::parse(&bytes).unwrap();
            prop_assert_eq!(h.size_in_bytes(), bytes.len());
            prop_assert_eq!(h.compression().unwrap(), codec);
            let body = batch_records(&bytes, &h, 1 << 20).unwrap();
            let walked: Vec<_> = RecordIter::new(&body, h.records_count)
                .collect::<Result<_, _>>()
                .unwrap();
            prop_assert_eq!(walked.len(), records.len());
            for (i, (w, r)) in walked.iter().zip(&records).enumerate() {
                prop_assert_eq!(w.offset(h.base_offset), base + i as i64);
                prop_assert_eq!(w.timestamp(h.base_timestamp), r.timestamp);
                prop_assert_eq!(w.key, r.key.as_deref());
                prop_assert_eq!(w.value, r.value.as_deref());
                let headers: Vec<_> = w
                    .headers()
                    .map(|h| (String::from_utf8(h.key.to_vec()).unwrap(), h.value.map(<[u8]>::to_vec)))
                    .collect();
                prop_assert_eq!(&headers, &r.headers);
            }
        }

        #[test]
        fn legacy_round_trip(
            records in proptest::collection::vec(arb_record(), 1..8),
            magic in 0i8..2,
            id in 0u8..4,
            base in 0i64..1 << 40,
        ) {
            use crate::protocol::record::batch_iter::BatchIter;
            use crate::protocol::record::legacy::deep_records;
            let codec = CompressionType::from_id(id).unwrap();
            let set = build_legacy_message_set(magic, codec, base, &records).unwrap();
            let mut deep = Vec::new();
            for entry in BatchIter::new(&set) {
                let entry = entry.unwrap();
                prop_assert!(entry.is_valid());
                deep.extend(deep_records(entry.bytes, 1 << 20).unwrap());
            }
            prop_assert_eq!(deep.len(), records.len());
            for (i, (d, r)) in deep.iter().zip(&records).enumerate() {
                prop_assert_eq!(d.offset, base + i as i64);
                prop_assert_eq!(&d.key, &r.key);
                prop_assert_eq!(&d.value, &r.value);
                prop_assert_eq!(d.timestamp, if magic == 1 { r.timestamp } else { NO_TIMESTAMP });
            }
        }
    }

    #[test]
    fn control_batch_layout() {
        let b = build_control_batch(ControlRecordType::Commit, 10, 3, 99, 1, 7, 1234).unwrap();
        let h = RecordBatchHeader::parse(&b).unwrap();
        assert!(h.is_control() && h.is_transactional());
        assert_eq!(
            (h.producer_id, h.producer_epoch, h.base_offset),
            (99, 1, 10)
        );
        assert!(is_crc_valid(&b));
        let body = batch_records(&b, &h, 1024).unwrap();
        let r = RecordIter::new(&body, 1).next().unwrap().unwrap();
        assert_eq!(r.key, Some(&[0, 0, 0, 1][..]));
        assert_eq!(r.value, Some(&[0, 0, 0, 0, 0, 7][..]));
    }

    #[test]
    fn empty_batch_has_no_timestamps() {
        let b = RecordBatchBuilder::new(CompressionType::None)
            .build()
            .unwrap();
        assert_eq!(b.len(), RECORD_BATCH_OVERHEAD);
        let h = RecordBatchHeader::parse(&b).unwrap();
        assert_eq!((h.records_count, h.max_timestamp), (0, NO_TIMESTAMP));
    }

    #[test]
    fn legacy_v0_entry_bytes() {
        let r = SimpleRecord::new(5, Some(b"k".to_vec()), None);
        let set = build_legacy_message_set(0, CompressionType::None, 3, &[r]).unwrap();
        // offset 3, size 4+1+1+4+1+4 = 15, then crc, magic 0, attributes 0.
        assert_eq!(&set[..12], &[0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 15]);
        assert_eq!(set.len(), 12 + 15);
        assert_eq!(&set[16..18], &[0, 0]);
        assert_eq!(&set[22..27], &[b'k', 0xff, 0xff, 0xff, 0xff]);
        assert!(build_legacy_message_set(2, CompressionType::None, 0, &[]).is_err());
        assert!(build_legacy_message_set(1, CompressionType::Zstd, 0, &[]).is_err());
    }
}
