//! Errors of the storage layer. Each names the file or partition involved; the server maps them
//! to Kafka error codes (`KAFKA_STORAGE_ERROR`, `CORRUPT_MESSAGE`, `OFFSET_OUT_OF_RANGE`, ...).

use std::path::PathBuf;

use crate::cluster::TopicPartition;
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

    /// The descriptor table is full (EMFILE: this process's `ulimit -n`; ENFILE: the system's
    /// table) while opening `path`. Not a failed disk: nothing reports it to the log dir
    /// failure channel, so the dir stays online and only the operation that needed the
    /// descriptor fails. `soft_limit` is `RLIMIT_NOFILE` when it happened (0: unknown).
    #[error(
        "too many open files opening {path} (open file limit {soft_limit}): raise ulimit -n: {source}"
    )]
    TooManyOpenFiles {
        path: PathBuf,
        soft_limit: u64,
        #[source]
        source: std::io::Error,
    },

    /// `logs` new logs of `topic` refused before anything was opened: they need `needed`
    /// descriptors and only `available` are left once `reserve` of the `soft_limit` are kept
    /// free (`open` were in use).
    #[error(
        "too many open files: {logs} new partition logs of topic {topic} need {needed} file descriptors, {available} are left (open file limit {soft_limit}, {open} open, {reserve} kept free): raise ulimit -n"
    )]
    DescriptorsExhausted {
        topic: String,
        logs: usize,
        needed: u64,
        available: u64,
        open: u64,
        soft_limit: u64,
        reserve: u64,
    },

    /// Mapping an index failed with ENOMEM: the process has `vm.max_map_count` maps (each
    /// segment's two indexes are two). Not a failed disk, as with [`Self::TooManyOpenFiles`].
    #[error(
        "cannot map {path} (vm.max_map_count {max_map_count}): raise vm.max_map_count: {source}"
    )]
    MapFailed {
        path: PathBuf,
        max_map_count: u64,
        #[source]
        source: std::io::Error,
    },

    /// `logs` new logs of `topic` refused before anything was mapped: they need `needed` memory
    /// maps and only `available` are left once `reserve` of `max_map_count` are kept free
    /// (`mapped` were in use).
    #[error(
        "too many memory maps: {logs} new partition logs of topic {topic} need {needed} maps, {available} are left (vm.max_map_count {max_map_count}, {mapped} mapped, {reserve} kept free): raise vm.max_map_count"
    )]
    MapsExhausted {
        topic: String,
        logs: usize,
        needed: u64,
        available: u64,
        mapped: u64,
        max_map_count: u64,
        reserve: u64,
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

    /// An offset that cannot be stored relative to its segment's base offset.
    #[error("offset {offset} does not fit in the segment with base offset {segment_base_offset}")]
    OffsetOverflow {
        segment_base_offset: i64,
        offset: i64,
    },

    /// A segment position past what 32-bit index entries can address.
    #[error("segment position {position} exceeds what an index entry can address")]
    SegmentTooLarge { position: u64 },

    /// A log dir partition directory with no segment at all (never the case once loaded).
    #[error("log {dir} has no segments")]
    NoSegments { dir: PathBuf },

    /// The log cleaner stopped cleaning a partition: the broker is shutting down, the partition
    /// is being deleted or truncated, or the log changed under the cleaner. Nothing was swapped.
    #[error("cleaning of {topic_partition} was aborted")]
    CleaningAborted { topic_partition: TopicPartition },

    /// A replicated batch whose CRC does not match.
    #[error("corrupt record batch at byte {position} of an append to {topic_partition}")]
    CorruptBatch {
        topic_partition: TopicPartition,
        position: usize,
    },

    /// Replicated batches whose offsets do not increase from the log end.
    #[error(
        "out of order offsets in append to {topic_partition}: offset {offset} but log end offset {log_end_offset}"
    )]
    OffsetsOutOfOrder {
        topic_partition: TopicPartition,
        offset: i64,
        log_end_offset: i64,
    },

    /// An append larger than a whole segment (`RECORD_LIST_TOO_LARGE`).
    #[error(
        "batch size {size} in append to {topic_partition} exceeds segment.bytes {segment_bytes}"
    )]
    RecordBatchTooLarge {
        topic_partition: TopicPartition,
        size: usize,
        segment_bytes: i32,
    },

    /// A roll onto a base offset that already has a non-empty segment.
    #[error("segment with base offset {base_offset} already exists in {dir}")]
    SegmentExists { dir: PathBuf, base_offset: i64 },

    /// A read or log start outside `[log_start_offset, log_end_offset]`.
    #[error(
        "offset {offset} is out of range for {topic_partition}: log start offset {log_start_offset}, log end offset {log_end_offset}"
    )]
    OffsetOutOfRange {
        topic_partition: TopicPartition,
        offset: i64,
        log_start_offset: i64,
        log_end_offset: i64,
    },

    /// A truncation to a negative offset.
    #[error("cannot truncate to negative offset {offset}")]
    InvalidTruncation { offset: i64 },

    /// Two log dirs hold the same partition.
    #[error("duplicate log directories for {topic_partition}: {dir}")]
    DuplicateLog {
        topic_partition: TopicPartition,
        dir: PathBuf,
    },

    /// A partition with no log here that is not new (the controller says it had replicas
    /// before) while log dirs are offline: its log may be in one of them (Kafka's refusal in
    /// `getOrCreateLog`).
    #[error("cannot create a log for {topic_partition}: log dirs {dirs:?} are offline")]
    LogDirsOffline {
        topic_partition: TopicPartition,
        dirs: Vec<PathBuf>,
    },

    /// `log.dirs` is empty.
    #[error("no log dirs configured")]
    NoLogDirs,

    /// A partition asked to move to another log dir has no log on this broker.
    #[error("{topic_partition} has no log on this broker to move")]
    NoCurrentLog { topic_partition: TopicPartition },

    /// A log dir that belongs to another broker or cluster.
    #[error("{dir}: {reason}")]
    MetaPropertiesMismatch { dir: PathBuf, reason: String },

    /// Produced batches rejected by validation; carries Kafka's error code.
    #[error(transparent)]
    Validation(#[from] super::log_validator::LogValidationError),

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

    /// A producer's batch refused by the leader's sequence and epoch checks.
    #[error(transparent)]
    ProducerState(#[from] super::producer_state::ProducerStateError),

    /// Records on their way into a log that could not be read from where they waited (the pipe
    /// a fetch response's records were spliced into). The log is unchanged.
    #[error("cannot read the records for {topic_partition}: {source}")]
    RecordsSource {
        topic_partition: TopicPartition,
        #[source]
        source: std::io::Error,
    },

    /// A call whose arguments break the callee's contract (Kafka's `IllegalArgumentException`).
    #[error("invalid argument: {reason}")]
    InvalidArgument { reason: String },
}

impl StorageError {
    /// Wraps an `io::Error` with the path it happened on. A full descriptor table is
    /// [`StorageError::TooManyOpenFiles`], told apart here once so that no caller takes a log
    /// dir offline for it.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        if super::descriptors::is_exhaustion(&source) {
            return super::descriptors::too_many_open_files(path.into(), source);
        }
        StorageError::Io {
            path: path.into(),
            source,
        }
    }

    /// Whether this is a limit of the process (its descriptor table or its memory maps full,
    /// or new logs refused for one) rather than a failure of the disk.
    pub fn is_resource_exhaustion(&self) -> bool {
        matches!(
            self,
            StorageError::TooManyOpenFiles { .. }
                | StorageError::DescriptorsExhausted { .. }
                | StorageError::MapFailed { .. }
                | StorageError::MapsExhausted { .. }
        )
    }
}
