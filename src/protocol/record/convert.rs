//! The slow paths between message formats, for old clients: Produce v0-2 carries message sets of
//! magic 0/1, which are converted to one magic-2 batch before the leader append (Kafka's
//! `LogValidator.convertAndAssignOffsets*`); Fetch v0-3 wants magic 0 (v0-1) or magic 1 (v2-3),
//! so stored batches are down-converted (Kafka's `RecordsUtil.downConvert`). Both decode every
//! record and allocate; the fast paths (Produce v3+, Fetch v4+) never come here.
//!
//! What cannot be expressed is refused as Kafka refuses it: headers are dropped on the way down
//! (magic 0/1 have none); zstd batches cannot be down-converted
//! (`UNSUPPORTED_COMPRESSION_TYPE`); control batches are skipped.

use super::batch::{MAGIC_V2, NO_TIMESTAMP, RecordBatchHeader, TimestampType};
use super::batch_iter::BatchIter;
use super::builder::{RecordBatchBuilder, SimpleRecord, build_legacy_message_set};
use super::compression::CompressionType;
use super::legacy::{LegacyRecord, deep_records};
use super::records::{batch_records, for_each_record};
use crate::protocol::errors::ErrorCode;

/// The most a compressed entry may inflate to on these paths, as the storage layer's cap.
const MAX_DECOMPRESSED: usize = 256 * 1024 * 1024;

/// A conversion failure: the partition's error code and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConversionError {
    pub code: ErrorCode,
    pub message: String,
}

fn corrupt(message: impl Into<String>) -> ConversionError {
    ConversionError {
        code: ErrorCode::CorruptMessage,
        message: message.into(),
    }
}

/// Up-conversion: a magic 0/1 message set (every entry, compressed wrappers expanded) becomes
/// one magic-2 batch at offset 0 with the wrappers' codec, ready for `append_as_leader`. Records
/// keep their timestamps (`NO_TIMESTAMP` for magic 0).
pub fn message_set_to_batch(records: &[u8]) -> Result<Vec<u8>, ConversionError> {
    let mut out = Vec::new();
    let mut codec = CompressionType::None;
    for entry in BatchIter::new(records) {
        let entry = entry.map_err(|e| corrupt(e.to_string()))?;
        if entry.magic >= MAGIC_V2 {
            return Err(ConversionError {
                code: ErrorCode::InvalidRecord,
                message: "Produce requests with version 0-2 are only allowed to contain message sets of magic 0 or 1".into(),
            });
        }
        let wrapper = LegacyRecord::parse(entry.bytes).map_err(|e| corrupt(e.to_string()))?;
        if !wrapper.is_valid() {
            return Err(corrupt(format!(
                "Record is corrupt (stored crc = {}) in topic partition",
                wrapper.crc
            )));
        }
        let entry_codec = wrapper.compression().map_err(|e| corrupt(e.to_string()))?;
        if entry_codec != CompressionType::None {
            codec = entry_codec;
        }
        for r in deep_records(entry.bytes, MAX_DECOMPRESSED).map_err(|e| corrupt(e.to_string()))? {
            if !r.crc_valid {
                return Err(corrupt("Inner record is corrupt"));
            }
            out.push(SimpleRecord::new(r.timestamp, r.key, r.value));
        }
    }
    if out.is_empty() {
        return Err(ConversionError {
            code: ErrorCode::InvalidRecord,
            message: "Produce requests must have at least one record".into(),
        });
    }
    let mut builder = RecordBatchBuilder::new(codec);
    builder.records = out;
    builder.build().map_err(|e| corrupt(e.to_string()))
}

/// Down-conversion: stored magic-2 batches become a message set of `magic` (0 or 1), one
/// legacy entry (or compressed wrapper) per batch, offsets kept.
pub fn batches_to_message_set(data: &[u8], magic: i8) -> Result<Vec<u8>, ConversionError> {
    let mut out = Vec::with_capacity(data.len());
    for entry in BatchIter::new(data) {
        let Ok(entry) = entry else {
            // A partial batch at the end of a read is normal; stop there as Kafka does.
            break;
        };
        if entry.magic < MAGIC_V2 {
            // Already old: pass it on (Kafka would convert magic 1 down to 0; clients of
            // v0-1 read magic 1 wrappers badly, so convert those entry by entry).
            out.extend_from_slice(entry.bytes);
            continue;
        }
        let header = RecordBatchHeader::parse(entry.bytes).map_err(|e| corrupt(e.to_string()))?;
        if header.is_control() {
            continue;
        }
        let codec = header.compression().map_err(|e| corrupt(e.to_string()))?;
        if codec == CompressionType::Zstd {
            return Err(ConversionError {
                code: ErrorCode::UnsupportedCompressionType,
                message: "Down-conversion of zstandard-compressed batches is not supported".into(),
            });
        }
        let body = batch_records(entry.bytes, &header, MAX_DECOMPRESSED)
            .map_err(|e| corrupt(e.to_string()))?;
        let mut records = Vec::new();
        let log_append = header.timestamp_type() == TimestampType::LogAppendTime;
        for_each_record(&body, header.records_count, |_, r| {
            let timestamp = if magic == 0 {
                NO_TIMESTAMP
            } else if log_append {
                header.max_timestamp
            } else {
                r.timestamp(header.base_timestamp)
            };
            records.push(SimpleRecord::new(
                timestamp,
                r.key.map(<[u8]>::to_vec),
                r.value.map(<[u8]>::to_vec),
            ));
        })
        .map_err(|e| corrupt(e.to_string()))?;
        if records.is_empty() {
            continue;
        }
        let set = build_legacy_message_set(magic, codec, header.base_offset, &records)
            .map_err(|e| corrupt(e.to_string()))?;
        out.extend_from_slice(&set);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<SimpleRecord> {
        vec![
            SimpleRecord::new(1_000, Some(b"k".to_vec()), Some(b"v1".to_vec())),
            SimpleRecord::new(2_000, None, None),
        ]
    }

    #[test]
    fn round_trips_through_both_directions() {
        for codec in [
            CompressionType::None,
            CompressionType::Gzip,
            CompressionType::Lz4,
        ] {
            let set = build_legacy_message_set(1, codec, 0, &records()).unwrap();
            let batch = message_set_to_batch(&set).unwrap();
            let header = RecordBatchHeader::parse(&batch).unwrap();
            assert_eq!(header.records_count, 2);
            assert_eq!(header.compression().unwrap(), codec);
            let back = batches_to_message_set(&batch, 1).unwrap();
            let again = message_set_to_batch(&back).unwrap();
            assert_eq!(again, batch, "{codec:?}");
        }
    }

    #[test]
    fn refuses_what_kafka_refuses() {
        let mut b = RecordBatchBuilder::new(CompressionType::Zstd);
        b.records = records();
        let zstd = b.build().unwrap();
        assert_eq!(
            batches_to_message_set(&zstd, 1).unwrap_err().code,
            ErrorCode::UnsupportedCompressionType
        );
        assert_eq!(
            message_set_to_batch(&zstd).unwrap_err().code,
            ErrorCode::InvalidRecord
        );
        let mut set = build_legacy_message_set(1, CompressionType::None, 0, &records()).unwrap();
        let last = set.len() - 1;
        set[last] ^= 1;
        assert_eq!(
            message_set_to_batch(&set).unwrap_err().code,
            ErrorCode::CorruptMessage
        );
        assert_eq!(
            message_set_to_batch(b"").unwrap_err().code,
            ErrorCode::InvalidRecord
        );
    }
}
