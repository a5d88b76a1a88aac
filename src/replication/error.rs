//! Why an operation on one partition failed. Every variant maps to the Kafka error code the
//! response carries for that partition; only that partition fails, never the request.

use crate::cluster::TopicPartition;
use crate::protocol::errors::ErrorCode;
use crate::storage::StorageError;
use crate::storage::producer_state::ProducerStateError;

#[derive(Debug, thiserror::Error)]
pub enum PartitionError {
    /// The broker has no replica of the partition.
    #[error("this server does not host {topic_partition}")]
    UnknownTopicOrPartition { topic_partition: TopicPartition },
    /// The broker hosts the partition but is not its leader.
    #[error("broker {broker_id} is not the leader of {topic_partition}")]
    NotLeaderOrFollower {
        topic_partition: TopicPartition,
        broker_id: i32,
    },
    /// The request's leader epoch is older than the partition's.
    #[error(
        "leader epoch {request_epoch} of the request is older than {topic_partition}'s epoch {leader_epoch}"
    )]
    FencedLeaderEpoch {
        topic_partition: TopicPartition,
        request_epoch: i32,
        leader_epoch: i32,
    },
    /// The request's leader epoch is newer than the partition's.
    #[error(
        "leader epoch {request_epoch} of the request is newer than {topic_partition}'s epoch {leader_epoch}"
    )]
    UnknownLeaderEpoch {
        topic_partition: TopicPartition,
        request_epoch: i32,
        leader_epoch: i32,
    },
    /// acks=all with fewer in-sync replicas than the effective min ISR
    /// (`min.insync.replicas` capped at the replica count).
    #[error(
        "the size of the current ISR {isr_size} of {topic_partition} is insufficient to satisfy the min.isr requirement of {min_isr}"
    )]
    NotEnoughReplicas {
        topic_partition: TopicPartition,
        isr_size: usize,
        min_isr: usize,
    },
    /// The topic's configuration forbids the operation (DeleteRecords without the `delete`
    /// cleanup policy).
    #[error("{0}")]
    PolicyViolation(String),
    /// An offset asked for outside what the log holds.
    #[error("{0}")]
    OffsetOutOfRange(String),
    /// A new leader's high watermark still lags the start of its epoch, so a client's
    /// ListOffsets for the latest offset cannot be answered yet (Kafka's OFFSET_NOT_AVAILABLE).
    #[error(
        "failed to fetch offsets for {topic_partition}: its high watermark ({high_watermark}) \
         is lagging behind the start offset of leader epoch {leader_epoch} ({epoch_start})"
    )]
    OffsetNotAvailable {
        topic_partition: TopicPartition,
        leader_epoch: i32,
        high_watermark: i64,
        epoch_start: i64,
    },
    /// The partition's log dir failed; it is offline.
    #[error("the log dir of {topic_partition} is offline")]
    KafkaStorage { topic_partition: TopicPartition },
    /// The log refused or failed the operation.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl PartitionError {
    /// The Kafka error code for this failure.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            PartitionError::UnknownTopicOrPartition { .. } => ErrorCode::UnknownTopicOrPartition,
            PartitionError::NotLeaderOrFollower { .. } => ErrorCode::NotLeaderOrFollower,
            PartitionError::FencedLeaderEpoch { .. } => ErrorCode::FencedLeaderEpoch,
            PartitionError::UnknownLeaderEpoch { .. } => ErrorCode::UnknownLeaderEpoch,
            PartitionError::NotEnoughReplicas { .. } => ErrorCode::NotEnoughReplicas,
            PartitionError::PolicyViolation(_) => ErrorCode::PolicyViolation,
            PartitionError::OffsetOutOfRange(_) => ErrorCode::OffsetOutOfRange,
            PartitionError::OffsetNotAvailable { .. } => ErrorCode::OffsetNotAvailable,
            PartitionError::KafkaStorage { .. } => ErrorCode::KafkaStorageError,
            PartitionError::Storage(e) => storage_error_code(e),
        }
    }

    /// The code as the wire's `i16`.
    pub fn code(&self) -> i16 {
        self.error_code().code()
    }
}

/// Kafka's mapping of log failures to error codes (`ReplicaManager.appendToLocalLog` and
/// `readFromLog`'s exception handlers).
pub(crate) fn storage_error_code(e: &StorageError) -> ErrorCode {
    match e {
        StorageError::Validation(v) => v.error_code(),
        StorageError::Record(_) | StorageError::CorruptBatch { .. } => ErrorCode::CorruptMessage,
        StorageError::RecordBatchTooLarge { .. } => ErrorCode::RecordListTooLarge,
        StorageError::ProducerState(p) => match p {
            ProducerStateError::OutOfOrderSequence { .. } => ErrorCode::OutOfOrderSequenceNumber,
            ProducerStateError::InvalidProducerEpoch { .. } => ErrorCode::InvalidProducerEpoch,
            ProducerStateError::CoordinatorFenced { .. } => ErrorCode::TransactionCoordinatorFenced,
            ProducerStateError::InvalidTxnState { .. } => ErrorCode::InvalidTxnState,
        },
        StorageError::OffsetOutOfRange { .. } => ErrorCode::OffsetOutOfRange,
        StorageError::Io { .. }
        | StorageError::CorruptIndex { .. }
        | StorageError::MalformedFile { .. }
        | StorageError::IndexFull { .. }
        | StorageError::NoSegments { .. }
        | StorageError::LogDirsOffline { .. }
        | StorageError::TooManyOpenFiles { .. }
        | StorageError::DescriptorsExhausted { .. }
        | StorageError::MapFailed { .. }
        | StorageError::MapsExhausted { .. } => ErrorCode::KafkaStorageError,
        _ => ErrorCode::UnknownServerError,
    }
}
