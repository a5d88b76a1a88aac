//! Errors of record parsing and validation.

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The bytes do not form a valid batch or record; Kafka's `CorruptRecordException`.
    #[error("corrupt record at byte {position}: {reason}")]
    Corrupt { position: usize, reason: String },
}
