//! Errors of the storage layer. Each names the file or partition involved; the server maps them
//! to Kafka error codes (`KAFKA_STORAGE_ERROR`, `CORRUPT_MESSAGE`, `OFFSET_OUT_OF_RANGE`, ...).

use std::path::PathBuf;

use crate::protocol::record::RecordError;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// Any I/O failure, disk full included. The log stays consistent: a failed append leaves the
    /// log end offset where it was.
    #[error("i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// An index file whose size or contents break the index invariants.
    #[error("corrupt index {path}: {reason}")]
    CorruptIndex { path: PathBuf, reason: String },

    /// A checkpoint or metadata file that does not parse.
    #[error("malformed {path}: {reason}")]
    MalformedFile { path: PathBuf, reason: String },

    /// Another process (a kcli or Java Kafka broker) holds the log dir's `.lock`.
    #[error("log dir {path} is locked by another process")]
    LogDirLocked { path: PathBuf },

    /// Record batches that fail validation.
    #[error(transparent)]
    Record(#[from] RecordError),

    /// An append to an index with no free slot (Kafka's "Attempt to append to a full index").
    #[error("attempt to append to a full index {path} (size = {entries})")]
    IndexFull { path: PathBuf, entries: usize },

    /// An index append whose offset is not above the last one (Kafka's `InvalidOffsetException`).
    #[error("invalid offset for {path}: {reason}")]
    InvalidOffset { path: PathBuf, reason: String },

    /// An offset that does not fit the index's 4-byte relative offset
    /// (Kafka's `IndexOffsetOverflowException`).
    #[error("integer overflow for offset: {offset} ({path})")]
    IndexOffsetOverflow { path: PathBuf, offset: i64 },

    /// A time-index append whose timestamp is below the last one.
    #[error("invalid timestamp for {path}: {reason}")]
    InvalidTimestamp { path: PathBuf, reason: String },

    /// A call whose arguments break the callee's contract (Kafka's `IllegalArgumentException`).
    #[error("invalid argument: {reason}")]
    InvalidArgument { reason: String },
}

impl StorageError {
    /// Wraps an `io::Error` with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StorageError::Io {
            path: path.into(),
            source,
        }
    }
}
