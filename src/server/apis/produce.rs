//! Produce (Kafka's `handleProduceRequest` and `ReplicaManager.appendRecords`). Each partition's
//! records are appended by its leader as they arrived: v3 and later carry one magic-2 batch,
//! validated in place and written without being decoded into objects; v0-2 carry message sets of
//! magic 0/1, converted first (`protocol::record::convert`).
//!
//! acks: 0 answers nothing (and closes the connection if any partition failed, the only way to
//! tell such a client); 1 answers once the leader has appended; -1 (all) answers once the high
//! watermark has passed every appended batch, waiting up to `timeout_ms` in the purgatory, or
//! with REQUEST_TIMED_OUT for the partitions that did not get there.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::produce_request::ProduceRequest;
use crate::protocol::messages::produce_response::{
    BatchIndexAndErrorMessage, PartitionProduceResponse, ProduceResponse, TopicProduceResponse,
};
use crate::protocol::record::batch::{NO_TIMESTAMP, RecordBatchHeader};
use crate::protocol::record::compression::CompressionType;
use crate::replication::delayed::PartitionWatch;
use crate::replication::{Partition, PartitionError};
use crate::storage::StorageError;
use crate::storage::log_manager::now_ms;
use crate::storage::producer_state::ProducerStateError;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::topic_validation::is_internal;
use crate::protocol::record::convert::message_set_to_batch;

/// One partition's append, waiting for the high watermark when acks=all.
struct PendingAck {
    topic: usize,
    partition: usize,
    log: Arc<Partition>,
    required_offset: i64,
}

pub async fn handle(apis: &KafkaApis, ctx: &RequestContext, request: ProduceRequest) -> Response {
    let acks = request.acks;
    let now = now_ms();
    let mut responses = Vec::with_capacity(request.topic_data.len());
    let mut pending = Vec::new();
    let mut any_error = false;
    for (ti, topic) in request.topic_data.into_iter().enumerate() {
        let name = topic.name.to_string_lossy().into_owned();
        let mut partitions = Vec::with_capacity(topic.partition_data.len());
        for (pi, data) in topic.partition_data.into_iter().enumerate() {
            let tp = TopicPartition::new(name.clone(), data.index);
            let mut response = PartitionProduceResponse {
                index: data.index,
                base_offset: -1,
                log_append_time_ms: NO_TIMESTAMP,
                log_start_offset: -1,
                ..PartitionProduceResponse::default()
            };
            let outcome = if !matches!(acks, -1..=1) {
                Err(AppendFailure::code(ErrorCode::InvalidRequiredAcks))
            } else if request.transactional_id.is_some() {
                // Transactions are not supported: a non-retriable answer, so a transactional
                // producer fails fast instead of retrying.
                Err(AppendFailure::code(
                    ErrorCode::TransactionalIdAuthorizationFailed,
                ))
            } else {
                append(apis, ctx, &tp, data.records, acks, now)
            };
            match outcome {
                Ok((partition, info)) => {
                    response.base_offset = info.first_offset;
                    response.log_append_time_ms = info.log_append_time;
                    response.log_start_offset = info.log_start_offset;
                    if acks == -1 {
                        pending.push(PendingAck {
                            topic: ti,
                            partition: pi,
                            log: partition,
                            required_offset: info.last_offset + 1,
                        });
                    }
                }
                Err(failure) => {
                    any_error = true;
                    response.error_code = failure.code.code();
                    response.log_start_offset = failure.log_start_offset;
                    if ctx.api_version >= 8 {
                        response.error_message = failure.message.map(StrBytes::from);
                        response.record_errors = failure.record_errors;
                    }
                }
            }
            partitions.push(response);
        }
        responses.push(TopicProduceResponse {
            name: topic.name,
            partition_responses: partitions,
            ..TopicProduceResponse::default()
        });
    }
    if acks == 0 {
        return if any_error {
            Response::CloseConnection
        } else {
            Response::NoOp
        };
    }
    let response = ProduceResponse {
        responses,
        ..ProduceResponse::default()
    };
    if pending.iter().all(acked) {
        return ctx.respond(ResponseKind::Produce(response));
    }
    // A DelayedProduce: wait for the ISR, then answer from the connection's own task.
    let timeout = Duration::from_millis(u64::try_from(request.timeout_ms).unwrap_or(0));
    let deadline = tokio::time::Instant::now() + timeout;
    let ctx = ctx.clone();
    let shutting_down = apis.replica_manager.shutting_down().clone();
    Response::Deferred(Box::pin(async move {
        let mut response = response;
        loop {
            let waiting: Vec<&PendingAck> = pending.iter().filter(|p| !acked(p)).collect();
            if waiting.is_empty() {
                break;
            }
            let watch = PartitionWatch::register(waiting.iter().map(|p| &p.log));
            if pending.iter().all(acked) {
                break;
            }
            if !watch.wait(deadline, &shutting_down).await {
                break;
            }
        }
        for p in &pending {
            if !acked(p) {
                let r = &mut response.responses[p.topic].partition_responses[p.partition];
                r.error_code = ErrorCode::RequestTimedOut.code();
            }
        }
        ctx.respond(ResponseKind::Produce(response))
    }))
}

fn acked(p: &PendingAck) -> bool {
    p.log.offsets().high_watermark >= p.required_offset
}

/// Why one partition's append failed, as the response carries it.
struct AppendFailure {
    code: ErrorCode,
    message: Option<String>,
    record_errors: Vec<BatchIndexAndErrorMessage>,
    /// -1, except where Kafka's `processFailedRecord` reports the partition's log start.
    log_start_offset: i64,
}

impl AppendFailure {
    fn code(code: ErrorCode) -> Self {
        AppendFailure {
            code,
            message: None,
            record_errors: Vec::new(),
            log_start_offset: -1,
        }
    }
}

impl From<PartitionError> for AppendFailure {
    fn from(e: PartitionError) -> Self {
        let code = e.error_code();
        let mut failure = AppendFailure::code(code);
        if let PartitionError::Storage(StorageError::Validation(v)) = &e {
            failure.message = Some(v.to_string());
            failure.record_errors = v
                .record_errors()
                .iter()
                .map(|(index, message)| BatchIndexAndErrorMessage {
                    batch_index: *index,
                    batch_index_error_message: Some(StrBytes::from(message.as_str())),
                    ..BatchIndexAndErrorMessage::default()
                })
                .collect();
        } else if let PartitionError::Storage(StorageError::ProducerState(p)) = &e {
            // Kafka sends no message for sequence and epoch errors; the refusal of a
            // transactional batch is kcli's own and says why.
            if matches!(p, ProducerStateError::TransactionsUnsupported { .. }) {
                failure.message = Some(p.to_string());
            }
        } else if matches!(
            code,
            ErrorCode::InvalidRecord | ErrorCode::CorruptMessage | ErrorCode::NotEnoughReplicas
        ) {
            failure.message = Some(e.to_string());
        }
        if code == ErrorCode::UnknownServerError || code == ErrorCode::KafkaStorageError {
            tracing::error!(err = %e, "append failed");
        }
        failure
    }
}

fn append(
    apis: &KafkaApis,
    ctx: &RequestContext,
    tp: &TopicPartition,
    records: Option<Bytes>,
    acks: i16,
    now: i64,
) -> Result<(Arc<Partition>, crate::storage::unified_log::LogAppendInfo), AppendFailure> {
    if is_internal(&tp.topic) {
        return Err(AppendFailure {
            message: Some(format!("Cannot append to internal topic {}", tp.topic)),
            ..AppendFailure::code(ErrorCode::InvalidTopicException)
        });
    }
    let partition = apis
        .replica_manager
        .get_partition_or_error(tp)
        .map_err(AppendFailure::from)?;
    let Some(records) = records else {
        return Err(AppendFailure {
            message: Some("Produce request without records".into()),
            ..AppendFailure::code(ErrorCode::InvalidRecord)
        });
    };
    let info = if ctx.api_version < 3 {
        let batch = message_set_to_batch(&records).map_err(|e| AppendFailure {
            message: Some(e.message),
            ..AppendFailure::code(e.code)
        })?;
        partition.append_records_to_leader(&batch, acks, now)
    } else {
        if ctx.api_version < 7 && is_zstd(&records) {
            return Err(AppendFailure {
                message: Some(
                    "Produce requests with version below 7 are not allowed to use ZStandard compression"
                        .into(),
                ),
                ..AppendFailure::code(ErrorCode::UnsupportedCompressionType)
            });
        }
        partition.append_records_to_leader(&records, acks, now)
    }
    .map_err(|e| {
        let producer_state = matches!(&e, PartitionError::Storage(StorageError::ProducerState(_)));
        let mut failure = AppendFailure::from(e);
        if producer_state {
            // Kafka's generic failure path (`processFailedRecord`) answers the log start.
            failure.log_start_offset = partition.offsets().log_start_offset;
        }
        failure
    })?;
    Ok((partition, info.0))
}

/// Whether the first batch is a zstd one, as Kafka's `ProduceRequest.validateRecords` checks it;
/// a malformed batch is left to the validator.
fn is_zstd(records: &[u8]) -> bool {
    RecordBatchHeader::parse(records)
        .is_ok_and(|header| matches!(header.compression(), Ok(CompressionType::Zstd)))
}
