//! Errors of record parsing and validation.

/// Why bytes could not be read as Kafka records. Every variant carries enough context to be
/// reported to a client or printed by `dump-segment`; none of them is ever a panic.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The bytes do not form a valid batch or record; Kafka's `CorruptRecordException`.
    /// `position` is the byte offset, within the buffer being parsed, where the problem was seen.
    #[error("corrupt record at byte {position}: {reason}")]
    Corrupt { position: usize, reason: String },

    /// The compression id in the attributes is not one Kafka defines (0..=4).
    #[error("unknown compression type id: {0}")]
    UnknownCompression(u8),

    /// The magic byte is not 0, 1 or 2.
    #[error("invalid magic found in record: {0}")]
    UnknownMagic(i8),

    /// The codec rejected the compressed stream.
    #[error("failed to {op} {codec} data: {reason}")]
    Codec {
        op: &'static str,
        codec: &'static str,
        reason: String,
    },

    /// Decompression would produce more than the caller's cap; nothing past the cap was kept.
    #[error("decompressed {codec} data exceeds the limit of {limit} bytes")]
    DecompressedTooLarge { codec: &'static str, limit: usize },
}

impl RecordError {
    /// Shorthand for [`RecordError::Corrupt`].
    pub fn corrupt(position: usize, reason: impl Into<String>) -> Self {
        RecordError::Corrupt {
            position,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_problem() {
        assert_eq!(
            RecordError::corrupt(7, "short").to_string(),
            "corrupt record at byte 7: short"
        );
        assert_eq!(
            RecordError::UnknownCompression(5).to_string(),
            "unknown compression type id: 5"
        );
        let e = RecordError::DecompressedTooLarge {
            codec: "lz4",
            limit: 10,
        };
        assert!(e.to_string().contains("10 bytes"));
    }
}
