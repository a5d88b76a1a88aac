//! The magic-2 record batch header (61 bytes): parsing, CRC-32C, in-place patches.
//!
//! Layout (big-endian), see docs/storage-format.md and Kafka's `DefaultRecordBatch`:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | base_offset i64 |
//! | 8..12 | batch_length i32 (bytes after this field) |
//! | 12..16 | partition_leader_epoch i32 (not covered by the CRC) |
//! | 16 | magic i8 = 2 |
//! | 17..21 | crc u32: CRC-32C of bytes 21..end |
//! | 21..23 | attributes i16: bits 0-2 codec, 3 LogAppendTime, 4 transactional, 5 control, 6 delete horizon |
//! | 23..27 | last_offset_delta i32 |
//! | 27..35 | base_timestamp i64 |
//! | 35..43 | max_timestamp i64 |
//! | 43..51 | producer_id i64 |
//! | 51..53 | producer_epoch i16 |
//! | 53..57 | base_sequence i32 |
//! | 57..61 | records_count i32 |

use std::fmt;

use super::big_endian::{i16_at, i32_at, i64_at};
use super::compression::CompressionType;
use super::error::RecordError;

/// Offset (8) + size (4): the part of every log entry in front of the size-counted bytes.
pub const LOG_OVERHEAD: usize = 12;
/// Size of the v2 batch header, up to and including `records_count`.
pub const RECORD_BATCH_OVERHEAD: usize = 61;
pub const MAGIC_V0: i8 = 0;
pub const MAGIC_V1: i8 = 1;
pub const MAGIC_V2: i8 = 2;
/// Kafka's `RecordBatch.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;
/// Kafka's `RecordBatch.NO_PRODUCER_ID`.
pub const NO_PRODUCER_ID: i64 = -1;
/// Kafka's `RecordBatch.NO_SEQUENCE`.
pub const NO_SEQUENCE: i32 = -1;
/// `RecordBatch.NO_PRODUCER_EPOCH`.
pub const NO_PRODUCER_EPOCH: i16 = -1;

/// Byte position of the magic byte in any log entry (v0/v1/v2).
pub const MAGIC_OFFSET: usize = 16;
/// Byte position of the CRC field of a v2 batch.
pub const CRC_OFFSET: usize = 17;
/// First byte covered by the v2 CRC (the attributes).
pub const ATTRIBUTES_OFFSET: usize = 21;
const LAST_OFFSET_DELTA_OFFSET: usize = 23;
const BASE_TIMESTAMP_OFFSET: usize = 27;
const MAX_TIMESTAMP_OFFSET: usize = 35;
const PRODUCER_ID_OFFSET: usize = 43;
const PRODUCER_EPOCH_OFFSET: usize = 51;
const BASE_SEQUENCE_OFFSET: usize = 53;
const RECORDS_COUNT_OFFSET: usize = 57;

pub const COMPRESSION_CODEC_MASK: i16 = 0x07;
pub const TIMESTAMP_TYPE_MASK: i16 = 0x08;
pub const TRANSACTIONAL_FLAG_MASK: i16 = 0x10;
pub const CONTROL_FLAG_MASK: i16 = 0x20;
pub const DELETE_HORIZON_FLAG_MASK: i16 = 0x40;

/// How a batch's timestamps were set. v0 messages have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimestampType {
    NoTimestampType,
    CreateTime,
    LogAppendTime,
}

impl fmt::Display for TimestampType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimestampType::NoTimestampType => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        })
    }
}

/// The parsed 61-byte header of a magic-2 batch. Parsing checks only the magic and that
/// `batch_length` covers at least the header; the CRC is checked by [`is_crc_valid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordBatchHeader {
    pub base_offset: i64,
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

impl RecordBatchHeader {
    /// Parses the first 61 bytes of `batch`. Errors when fewer are present, when the magic is not
    /// 2 or when `batch_length` is smaller than the header (Kafka's minimum-overhead check).
    pub fn parse(batch: &[u8]) -> Result<Self, RecordError> {
        let Some(h) = batch.get(..RECORD_BATCH_OVERHEAD) else {
            return Err(RecordError::corrupt(
                batch.len(),
                format!(
                    "record batch header needs {RECORD_BATCH_OVERHEAD} bytes but only {} are present",
                    batch.len()
                ),
            ));
        };
        let magic = h[MAGIC_OFFSET] as i8;
        if magic != MAGIC_V2 {
            return Err(RecordError::corrupt(
                MAGIC_OFFSET,
                format!("expected magic 2 but found {magic}"),
            ));
        }
        let batch_length = i32_at(h, 8);
        if i64::from(batch_length) + (LOG_OVERHEAD as i64) < RECORD_BATCH_OVERHEAD as i64 {
            return Err(RecordError::corrupt(
                8,
                format!(
                    "Record batch is corrupt (the size {} is smaller than the minimum allowed overhead {RECORD_BATCH_OVERHEAD})",
                    i64::from(batch_length) + LOG_OVERHEAD as i64
                ),
            ));
        }
        Ok(RecordBatchHeader {
            base_offset: i64_at(h, 0),
            batch_length,
            partition_leader_epoch: i32_at(h, 12),
            magic,
            crc: i32_at(h, CRC_OFFSET) as u32,
            attributes: i16_at(h, ATTRIBUTES_OFFSET),
            last_offset_delta: i32_at(h, LAST_OFFSET_DELTA_OFFSET),
            base_timestamp: i64_at(h, BASE_TIMESTAMP_OFFSET),
            max_timestamp: i64_at(h, MAX_TIMESTAMP_OFFSET),
            producer_id: i64_at(h, PRODUCER_ID_OFFSET),
            producer_epoch: i16_at(h, PRODUCER_EPOCH_OFFSET),
            base_sequence: i32_at(h, BASE_SEQUENCE_OFFSET),
            records_count: i32_at(h, RECORDS_COUNT_OFFSET),
        })
    }

    /// The whole batch including the 12-byte log overhead: `batch_length + 12`.
    pub fn size_in_bytes(&self) -> usize {
        // parse() guarantees batch_length >= 49, so this is positive.
        (i64::from(self.batch_length) + LOG_OVERHEAD as i64) as usize
    }

    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    pub fn compression(&self) -> Result<CompressionType, RecordError> {
        CompressionType::from_id((self.attributes & COMPRESSION_CODEC_MASK) as u8)
    }

    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes & TIMESTAMP_TYPE_MASK != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_FLAG_MASK != 0
    }

    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_FLAG_MASK != 0
    }

    pub fn has_delete_horizon(&self) -> bool {
        self.attributes & DELETE_HORIZON_FLAG_MASK != 0
    }

    pub fn has_producer_id(&self) -> bool {
        self.producer_id > NO_PRODUCER_ID
    }

    /// The sequence of the last record: `base_sequence + last_offset_delta`, wrapping past
    /// `i32::MAX` to 0 as Kafka's `DefaultRecordBatch.incrementSequence` does.
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence == NO_SEQUENCE {
            return NO_SEQUENCE;
        }
        increment_sequence(self.base_sequence, self.last_offset_delta)
    }
}

/// The records in the whole v2 batches at the start of `data` (their headers'
/// `records_count`); a torn or unreadable tail ends the count.
pub fn count_records(data: &[u8]) -> u64 {
    let mut count = 0u64;
    let mut position = 0;
    while let Some(rest) = data.get(position..) {
        let Ok(header) = RecordBatchHeader::parse(rest) else {
            break;
        };
        let size = header.size_in_bytes();
        if size == 0 || size > rest.len() {
            break;
        }
        count += u64::try_from(header.records_count).unwrap_or(0);
        position += size;
    }
    count
}

/// Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap from `i32::MAX` to 0.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// Kafka's `DefaultRecordBatch.decrementSequence`: the inverse of [`increment_sequence`],
/// wrapping below 0 back to `i32::MAX`.
pub fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        i32::MAX
            .wrapping_sub(decrement.wrapping_sub(sequence))
            .wrapping_add(1)
    } else {
        sequence.wrapping_sub(decrement)
    }
}

/// CRC-32C of `batch[21..]`, the bytes a v2 batch's CRC covers. `batch` must be exactly the batch.
pub fn compute_crc(batch: &[u8]) -> u32 {
    crc32c::crc32c(batch.get(ATTRIBUTES_OFFSET..).unwrap_or(&[]))
}

/// CRC-32C over a header (61 bytes) followed by the record bytes, without joining them.
pub fn compute_crc_parts(header: &[u8; RECORD_BATCH_OVERHEAD], records: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&header[ATTRIBUTES_OFFSET..]), records)
}

/// Whether `batch` (exactly one whole v2 batch) is at least a header long and its stored CRC
/// matches; Kafka's `DefaultRecordBatch.isValid`.
pub fn is_crc_valid(batch: &[u8]) -> bool {
    batch.len() >= RECORD_BATCH_OVERHEAD && i32_at(batch, CRC_OFFSET) as u32 == compute_crc(batch)
}

/// Rewrites the base offset (bytes 0..8); the CRC does not cover it.
pub fn set_base_offset(batch_header: &mut [u8], base_offset: i64) {
    if let Some(b) = batch_header.get_mut(0..8) {
        b.copy_from_slice(&base_offset.to_be_bytes());
    }
}

/// Rewrites the partition leader epoch (bytes 12..16); the CRC does not cover it.
pub fn set_partition_leader_epoch(batch_header: &mut [u8], epoch: i32) {
    if let Some(b) = batch_header.get_mut(12..16) {
        b.copy_from_slice(&epoch.to_be_bytes());
    }
}

/// Sets the timestamp type bit and `max_timestamp`, then recomputes the CRC over
/// `header[21..61]` followed by `records`; Kafka's `DefaultRecordBatch.setMaxTimestamp`
/// (which leaves the batch untouched when neither changes).
pub fn set_max_timestamp(
    header: &mut [u8; RECORD_BATCH_OVERHEAD],
    records: &[u8],
    timestamp_type: TimestampType,
    timestamp: i64,
) {
    let attributes = i16_at(header, ATTRIBUTES_OFFSET);
    let new_attributes = if timestamp_type == TimestampType::LogAppendTime {
        attributes | TIMESTAMP_TYPE_MASK
    } else {
        attributes & !TIMESTAMP_TYPE_MASK
    };
    if new_attributes == attributes && i64_at(header, MAX_TIMESTAMP_OFFSET) == timestamp {
        return;
    }
    header[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&new_attributes.to_be_bytes());
    header[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8]
        .copy_from_slice(&timestamp.to_be_bytes());
    let crc = compute_crc_parts(header, records);
    header[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

/// LogAppendTime: sets max_timestamp and the timestamp-type bit in the 61-byte header and
/// recomputes the CRC over header[21..61] followed by `records` (the bytes after the header).
pub fn set_log_append_time(
    header: &mut [u8; RECORD_BATCH_OVERHEAD],
    records: &[u8],
    timestamp: i64,
) {
    set_max_timestamp(header, records, TimestampType::LogAppendTime, timestamp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};

    fn batch() -> Vec<u8> {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.base_offset = 100;
        b.producer_id = 7;
        b.producer_epoch = 2;
        b.base_sequence = i32::MAX - 1;
        b.is_transactional = true;
        for i in 0..3 {
            b.records.push(SimpleRecord::new(
                1000 + i,
                Some(b"k".to_vec()),
                Some(b"v".to_vec()),
            ));
        }
        b.build().unwrap()
    }

    #[test]
    fn count_records_sums_whole_batches_and_stops_at_a_torn_tail() {
        let one = batch();
        let mut two = one.clone();
        two.extend_from_slice(&one);
        assert_eq!(count_records(&one), 3);
        assert_eq!(count_records(&two), 6);
        assert_eq!(count_records(&two[..two.len() - 1]), 3);
        assert_eq!(count_records(&[]), 0);
    }

    #[test]
    fn parses_the_header() {
        let bytes = batch();
        let h = RecordBatchHeader::parse(&bytes).unwrap();
        assert_eq!(h.base_offset, 100);
        assert_eq!(h.size_in_bytes(), bytes.len());
        assert_eq!(h.last_offset(), 102);
        assert_eq!(h.next_offset(), 103);
        assert_eq!(h.records_count, 3);
        assert_eq!(h.max_timestamp, 1002);
        assert_eq!(h.timestamp_type(), TimestampType::CreateTime);
        assert!(h.is_transactional() && !h.is_control() && !h.has_delete_horizon());
        assert_eq!(h.compression().unwrap(), CompressionType::None);
        // base_sequence MAX-1 plus 2 wraps to 0.
        assert_eq!(h.last_sequence(), 0);
        assert!(is_crc_valid(&bytes));
        assert_eq!(h.crc, compute_crc(&bytes));
    }

    #[test]
    fn sequence_wraps_like_kafka() {
        assert_eq!(increment_sequence(i32::MAX, 1), 0);
        assert_eq!(increment_sequence(i32::MAX - 2, 5), 2);
        assert_eq!(increment_sequence(5, 3), 8);
        assert_eq!(decrement_sequence(0, 1), i32::MAX);
        assert_eq!(decrement_sequence(2, 5), i32::MAX - 2);
        assert_eq!(decrement_sequence(8, 3), 5);
        for (s, d) in [(i32::MAX - 2, 5), (7, 0), (i32::MAX, 1)] {
            assert_eq!(decrement_sequence(increment_sequence(s, d), d), s);
        }
    }

    #[test]
    fn rejects_short_wrong_magic_and_tiny_length() {
        let bytes = batch();
        assert!(RecordBatchHeader::parse(&bytes[..60]).is_err());
        let mut m = bytes.clone();
        m[MAGIC_OFFSET] = 1;
        assert!(RecordBatchHeader::parse(&m).is_err());
        let mut l = bytes.clone();
        l[8..12].copy_from_slice(&48i32.to_be_bytes());
        assert!(RecordBatchHeader::parse(&l).is_err());
        l[8..12].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(RecordBatchHeader::parse(&l).is_err());
    }

    #[test]
    fn patches_outside_the_crc_keep_it_valid() {
        let mut bytes = batch();
        set_base_offset(&mut bytes, 5000);
        set_partition_leader_epoch(&mut bytes, 9);
        let h = RecordBatchHeader::parse(&bytes).unwrap();
        assert_eq!((h.base_offset, h.partition_leader_epoch), (5000, 9));
        assert!(is_crc_valid(&bytes));
        bytes[70] ^= 1;
        assert!(!is_crc_valid(&bytes));
    }

    #[test]
    fn log_append_time_patch_recomputes_the_crc() {
        let bytes = batch();
        let mut header = [0u8; RECORD_BATCH_OVERHEAD];
        header.copy_from_slice(&bytes[..RECORD_BATCH_OVERHEAD]);
        set_log_append_time(&mut header, &bytes[RECORD_BATCH_OVERHEAD..], 123_456);
        let mut patched = header.to_vec();
        patched.extend_from_slice(&bytes[RECORD_BATCH_OVERHEAD..]);
        let h = RecordBatchHeader::parse(&patched).unwrap();
        assert_eq!(h.timestamp_type(), TimestampType::LogAppendTime);
        assert_eq!(h.max_timestamp, 123_456);
        assert!(h.is_transactional());
        assert!(is_crc_valid(&patched));
        assert_eq!(TimestampType::LogAppendTime.to_string(), "LogAppendTime");
    }
}
