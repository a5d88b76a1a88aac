//! The leaders' append path of the replica manager (Kafka's `ReplicaManager.appendRecords` and
//! `DelayedProduce`), for producers and for the coordinators alike: each partition's records
//! are appended by its leader as they arrived (a `Bytes` slice of the request frame, validated
//! and written in place, as their [`AppendOrigin`] asks); acks 0 and 1 answer at once; acks=-1
//! (all) waits in the purgatory until the high watermark passes every appended batch, the
//! partition's leadership moves, or the request's timeout. Internal topics take appends only
//! when the caller allows them (a coordinator, or Kafka's admin client).
//!
//! A waiting acks=-1 append is acknowledged only while this broker has led its partition without
//! a break since the append (a re-election at a new epoch is none): once leadership moves, the
//! new leader may truncate the append away, so the wait ends with NOT_LEADER_OR_FOLLOWER, never
//! with success.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cluster::{TopicPartition, is_internal_topic};
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::batch::NO_TIMESTAMP;
use crate::storage::StorageError;
pub use crate::storage::log_validator::AppendOrigin;
use crate::storage::producer_state::VerificationGuard;

use super::super::delayed::{PartitionWatch, PurgatorySize};
use super::super::error::PartitionError;
use super::super::partition::{LeaderAppend, Partition, ReplicationCheck};
use super::ReplicaManager;

/// One partition's records of a produce request.
#[derive(Debug, Clone)]
pub struct AppendEntry {
    pub topic_partition: TopicPartition,
    /// Magic-2 batches, a slice of the request frame.
    pub records: Bytes,
    /// Set when transaction verification is on (KIP-890): the guard the partition's
    /// [`ReplicaManager::maybe_start_transaction_verification`] gave, or the sentinel.
    pub verification_guard: Option<VerificationGuard>,
}

impl AppendEntry {
    /// Records to append without transaction verification.
    pub fn new(topic_partition: TopicPartition, records: Bytes) -> Self {
        AppendEntry {
            topic_partition,
            records,
            verification_guard: None,
        }
    }
}

/// One partition's answer (Kafka's `ProduceResponse.PartitionResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionResponse {
    pub error_code: ErrorCode,
    /// Kafka's `errorMessage` (produce v8+).
    pub error_message: Option<String>,
    /// The failed records' batch indexes and messages (produce v8+).
    pub record_errors: Vec<(i32, String)>,
    pub base_offset: i64,
    pub log_append_time_ms: i64,
    pub log_start_offset: i64,
}

impl PartitionResponse {
    /// A failure with only a code: -1 offsets, as Kafka answers a partition it did not append.
    pub fn error(error_code: ErrorCode) -> Self {
        PartitionResponse {
            error_code,
            error_message: None,
            record_errors: Vec::new(),
            base_offset: -1,
            log_append_time_ms: NO_TIMESTAMP,
            log_start_offset: -1,
        }
    }

    /// A failure with its message.
    pub fn error_with_message(error_code: ErrorCode, message: impl Into<String>) -> Self {
        PartitionResponse {
            error_message: Some(message.into()),
            ..Self::error(error_code)
        }
    }
}

/// Who appends, and where they may (Kafka's `appendRecords` arguments beside the records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendParams {
    /// How long an acks=-1 append waits for the ISR.
    pub timeout_ms: i32,
    /// 0, 1 or -1 (all); anything else is INVALID_REQUIRED_ACKS.
    pub required_acks: i16,
    /// Whether `__consumer_offsets` and `__transaction_state` may be appended to.
    pub internal_topics_allowed: bool,
    /// Which validation the batches get.
    pub origin: AppendOrigin,
}

impl AppendParams {
    /// A producer's Produce request, to topics other than the internal ones.
    pub fn client(timeout_ms: i32, required_acks: i16) -> Self {
        AppendParams {
            timeout_ms,
            required_acks,
            internal_topics_allowed: false,
            origin: AppendOrigin::Client,
        }
    }

    /// A coordinator writing to its internal topic at acks=-1.
    pub fn coordinator(timeout_ms: i32) -> Self {
        AppendParams {
            timeout_ms,
            required_acks: -1,
            internal_topics_allowed: true,
            origin: AppendOrigin::Coordinator,
        }
    }
}

/// What `append_records` gives: the answers now, or a wait for the ISR.
#[derive(Debug)]
pub enum ProduceResult {
    Ready(Vec<PartitionResponse>),
    Delayed(DelayedProduce),
}

/// An acks=-1 produce waiting for the high watermark (Kafka's `DelayedProduce`), answered by
/// [`DelayedProduce::complete`].
#[derive(Debug)]
pub struct DelayedProduce {
    responses: Vec<PartitionResponse>,
    pending: Vec<PendingAck>,
    deadline: Instant,
    shutting_down: CancellationToken,
    /// Where its waits count (the Produce purgatory).
    purgatory: Arc<PurgatorySize>,
}

/// One partition's append still waiting for its acknowledgement.
#[derive(Debug)]
struct PendingAck {
    index: usize,
    partition: Arc<Partition>,
    append: LeaderAppend,
}

impl ReplicaManager {
    /// Kafka's `appendRecords`: appends each entry to its partition as leader, in order, and
    /// answers them in the same order. acks=-1 waits up to `timeout_ms` for the ISR (the
    /// caller awaits [`DelayedProduce::complete`]); acks outside -1..=1 fail every partition
    /// with INVALID_REQUIRED_ACKS, and an internal topic not allowed fails with
    /// INVALID_TOPIC_EXCEPTION.
    pub fn append_records(&self, params: AppendParams, entries: Vec<AppendEntry>) -> ProduceResult {
        let AppendParams {
            timeout_ms,
            required_acks,
            ..
        } = params;
        if !matches!(required_acks, -1..=1) {
            let invalid = entries
                .iter()
                .map(|_| PartitionResponse::error(ErrorCode::InvalidRequiredAcks))
                .collect();
            return ProduceResult::Ready(invalid);
        }
        let now_ms = self.time().milliseconds();
        let mut responses = Vec::with_capacity(entries.len());
        let mut pending = Vec::new();
        for (index, entry) in entries.into_iter().enumerate() {
            match self.append_to_local_log(&entry, params, now_ms) {
                Ok((partition, response, append)) => {
                    responses.push(response);
                    if required_acks == -1 {
                        pending.push(PendingAck {
                            index,
                            partition,
                            append,
                        });
                    }
                }
                Err(response) => responses.push(response),
            }
        }
        let mut delayed = DelayedProduce {
            responses,
            pending,
            deadline: Instant::now()
                + Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0)),
            shutting_down: self.shutting_down().clone(),
            purgatory: Arc::clone(&self.produce_purgatory),
        };
        if delayed.try_complete() {
            ProduceResult::Ready(delayed.responses)
        } else {
            ProduceResult::Delayed(delayed)
        }
    }

    /// Kafka's `maybeStartTransactionVerificationForPartition`, before a producer's
    /// transactional batch: the guard to append it with (the sentinel when its transaction is
    /// open here already), or the partition's error (not the leader, not hosted, offline).
    pub fn maybe_start_transaction_verification(
        &self,
        tp: &TopicPartition,
        producer_id: i64,
        sequence: i32,
        epoch: i16,
    ) -> Result<VerificationGuard, PartitionResponse> {
        let partition = self
            .get_partition_or_error(tp)
            .map_err(|e| failed(&e, -1))?;
        partition
            .maybe_start_transaction_verification(
                producer_id,
                sequence,
                epoch,
                self.time().milliseconds(),
            )
            .map_err(|e| failed(&e, -1))
    }

    fn append_to_local_log(
        &self,
        entry: &AppendEntry,
        params: AppendParams,
        now_ms: i64,
    ) -> Result<(Arc<Partition>, PartitionResponse, LeaderAppend), PartitionResponse> {
        let tp = &entry.topic_partition;
        if is_internal_topic(&tp.topic) && !params.internal_topics_allowed {
            return Err(PartitionResponse::error_with_message(
                ErrorCode::InvalidTopicException,
                format!("Cannot append to internal topic {}", tp.topic),
            ));
        }
        let partition = self
            .get_partition_or_error(tp)
            .map_err(|e| failed(&e, -1))?;
        let (topic, all) = (
            partition.topic_metrics(),
            partition.topic_stats().all_topics(),
        );
        topic.total_produce_requests.mark(1);
        all.total_produce_requests.mark(1);
        match partition.append_records_to_leader(
            &entry.records,
            params.origin,
            params.required_acks,
            entry.verification_guard,
            now_ms,
        ) {
            Ok((info, append)) => {
                let bytes = entry.records.len() as u64;
                let messages = info.records_count as u64;
                topic.bytes_in.mark(bytes);
                all.bytes_in.mark(bytes);
                topic.messages_in.mark(messages);
                all.messages_in.mark(messages);
                let response = PartitionResponse {
                    base_offset: info.first_offset,
                    log_append_time_ms: info.log_append_time,
                    log_start_offset: info.log_start_offset,
                    ..PartitionResponse::error(ErrorCode::None)
                };
                Ok((partition, response, append))
            }
            Err(e) => {
                // Kafka counts a failed produce for any error but a moved or missing partition,
                // a record too large or corrupt, or a failed disk.
                if !matches!(
                    e.error_code(),
                    ErrorCode::NotLeaderOrFollower
                        | ErrorCode::UnknownTopicOrPartition
                        | ErrorCode::MessageTooLarge
                        | ErrorCode::RecordListTooLarge
                        | ErrorCode::CorruptMessage
                        | ErrorCode::KafkaStorageError
                ) {
                    topic.failed_produce_requests.mark(1);
                    all.failed_produce_requests.mark(1);
                }
                // Kafka's generic failure path (`processFailedRecord`) answers the log start
                // for sequence and epoch errors.
                let log_start =
                    if matches!(&e, PartitionError::Storage(StorageError::ProducerState(_))) {
                        partition.offsets().log_start_offset
                    } else {
                        -1
                    };
                Err(failed(&e, log_start))
            }
        }
    }
}

impl DelayedProduce {
    /// Kafka's `DelayedProduce.tryComplete`: settles every pending partition whose high
    /// watermark passed its append or whose leadership moved; `true` when none is left.
    fn try_complete(&mut self) -> bool {
        let responses = &mut self.responses;
        self.pending.retain(
            |p| match p.partition.check_enough_replicas_reach_offset(p.append) {
                ReplicationCheck::Pending => true,
                ReplicationCheck::Done => false,
                ReplicationCheck::Failed(code) => {
                    if let Some(r) = responses.get_mut(p.index) {
                        r.error_code = code;
                    }
                    false
                }
            },
        );
        self.pending.is_empty()
    }

    /// Waits until every pending partition is settled, the timeout passes (those left answer
    /// REQUEST_TIMED_OUT, Kafka's `onExpiration`) or the broker shuts down (likewise).
    pub async fn complete(mut self) -> Vec<PartitionResponse> {
        loop {
            if self.try_complete() {
                break;
            }
            let watch = PartitionWatch::register(
                &self.purgatory,
                self.pending.iter().map(|p| &p.partition),
            );
            // A change between the check above and the registration is caught here.
            if self.try_complete() {
                break;
            }
            if !watch.wait(self.deadline, &self.shutting_down).await {
                self.try_complete();
                break;
            }
        }
        for p in &self.pending {
            if let Some(r) = self.responses.get_mut(p.index) {
                r.error_code = ErrorCode::RequestTimedOut;
            }
        }
        self.responses
    }
}

/// A failed append as the response carries it (Kafka's `appendToLocalLog` exception handlers).
fn failed(e: &PartitionError, log_start_offset: i64) -> PartitionResponse {
    let code = e.error_code();
    let mut response = PartitionResponse {
        log_start_offset,
        ..PartitionResponse::error(code)
    };
    match e {
        PartitionError::Storage(StorageError::Validation(v)) => {
            response.error_message = Some(v.to_string());
            response.record_errors = v.record_errors().to_vec();
        }
        // Kafka sends no message for sequence and epoch errors.
        PartitionError::Storage(StorageError::ProducerState(_)) => {}
        _ if matches!(
            code,
            ErrorCode::InvalidRecord | ErrorCode::CorruptMessage | ErrorCode::NotEnoughReplicas
        ) =>
        {
            response.error_message = Some(e.to_string());
        }
        _ => {}
    }
    if code == ErrorCode::UnknownServerError || code == ErrorCode::KafkaStorageError {
        tracing::error!(err = %e, "append failed");
    }
    response
}
