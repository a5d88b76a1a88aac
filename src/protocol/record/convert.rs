//! Up-conversion, the slow path for old producers: Produce v0-2 carries message sets of magic
//! 0/1, which are converted to one magic-2 batch before the leader append (Kafka's
//! `LogValidator.convertAndAssignOffsets*`). It decodes every record and allocates; the fast
//! path (Produce v3+) never comes here. The way down (Fetch v0-3) is
//! [`super::down_convert`]; the error type is shared.

use super::batch::MAGIC_V2;
use super::batch_iter::BatchIter;
use super::builder::{RecordBatchBuilder, SimpleRecord};
use super::compression::CompressionType;
use super::legacy::{LegacyRecord, deep_records};
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

pub(super) fn corrupt(message: impl Into<String>) -> ConversionError {
    ConversionError {
        code: ErrorCode::CorruptMessage,
        message: message.into(),
    }
}

/// Up-conversion: a magic 0/1 message set (every entry, compressed wrappers expanded) becomes
/// one magic-2 batch at offset 0 with the wrappers' codec, ready for `append_as_leader`. Records
/// keep their timestamps (`NO_TIMESTAMP` for magic 0).
pub(crate) fn message_set_to_batch(records: &[u8]) -> Result<Vec<u8>, ConversionError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::builder::build_legacy_message_set;

    fn records() -> Vec<SimpleRecord> {
        vec![
            SimpleRecord::new(1_000, Some(b"k".to_vec()), Some(b"v1".to_vec())),
            SimpleRecord::new(2_000, None, None),
        ]
    }

    #[test]
    fn refuses_what_kafka_refuses() {
        let mut b = RecordBatchBuilder::new(CompressionType::Zstd);
        b.records = records();
        let zstd = b.build().unwrap();
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
