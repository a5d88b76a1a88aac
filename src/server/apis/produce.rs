//! Produce (Kafka's `handleProduceRequest`): translates the request into
//! `ReplicaManager::append_records` and its answers back into the response. v3 and later carry
//! one magic-2 batch per partition, passed on as a slice of the frame; v0-2 carry message sets
//! of magic 0/1, converted first (`protocol::record::convert`).
//!
//! acks: 0 answers nothing (and closes the connection if any partition failed, the only way to
//! tell such a client); 1 answers once the leader has appended; -1 (all) answers once the
//! replica manager's wait for the ISR ends (on the connection's own task).
//!
//! A partition this broker does not host answers NOT_LEADER_OR_FOLLOWER when the metadata cache
//! knows it (the leader is elsewhere; the client refreshes and retries), else
//! UNKNOWN_TOPIC_OR_PARTITION.
//!
//! Authorization (Kafka's order): a request whose first batch of any partition is
//! transactional needs a transactional id with WRITE on it, else every partition is
//! TRANSACTIONAL_ID_AUTHORIZATION_FAILED (`RequestUtils.hasTransactionalRecords`); a topic the
//! principal may not Write is TOPIC_AUTHORIZATION_FAILED for each of its partitions, before any
//! other check of them. Transactional batches then go to the leaders' producer state, which
//! tracks the transaction until its marker; a transaction's first batch in a partition is first
//! verified with its coordinator (KIP-890, `verification`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

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
use crate::protocol::record::batch::{RecordBatchHeader, count_records};
use crate::protocol::record::compression::CompressionType;
use crate::protocol::record::convert::message_set_to_batch;
use crate::replication::{
    AppendEntry, AppendParams, PartitionResponse, ProduceResult, ReplicaManager,
};
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::metadata_cache::MetadataCache;
use super::super::quota::request_quotas::throttle_produce;
use super::super::request_context::RequestContext;
use super::partition_error;

mod verification;

use verification::Verification;

/// The client id of Kafka's admin client, the one producer allowed to write to internal topics.
const ADMIN_CLIENT_ID: &str = "__admin_client";

/// Where one partition of the request stands: refused by the handler, or sent to the replica
/// manager at this index of its entries.
enum Slot {
    Refused(PartitionResponse),
    Appended(usize),
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: ProduceRequest,
) -> Response {
    let acks = request.acks;
    let transactional_refused = has_transactional_records(ctx, &request)
        && !request.transactional_id.as_ref().is_some_and(|id| {
            apis.auth.authorize(
                ctx,
                AclOperation::Write,
                ResourceType::TransactionalId,
                &id.to_string_lossy(),
            )
        });
    let mut entries = Vec::new();
    let mut layout = Vec::with_capacity(request.topic_data.len());
    for topic in &request.topic_data {
        let name = topic.name.to_string_lossy().into_owned();
        let may_write = apis
            .auth
            .authorize(ctx, AclOperation::Write, ResourceType::Topic, &name);
        let mut slots = Vec::with_capacity(topic.partition_data.len());
        for data in &topic.partition_data {
            let tp = TopicPartition::new(name.clone(), data.index);
            let slot = if transactional_refused {
                Slot::Refused(PartitionResponse::error(
                    ErrorCode::TransactionalIdAuthorizationFailed,
                ))
            } else if !may_write {
                Slot::Refused(PartitionResponse::error(
                    ErrorCode::TopicAuthorizationFailed,
                ))
            } else if !matches!(acks, -1..=1) {
                Slot::Refused(PartitionResponse::error(ErrorCode::InvalidRequiredAcks))
            } else {
                match records_of(ctx, data.records.clone()) {
                    Ok(records) => {
                        if ctx.api_version < 3 {
                            // Up-converted from the message format of an old client.
                            let converted = count_records(&records);
                            let stats = apis.replica_manager.topic_stats();
                            stats
                                .topic(&name)
                                .produce_message_conversions
                                .mark(converted);
                            stats
                                .all_topics()
                                .produce_message_conversions
                                .mark(converted);
                        }
                        entries.push(AppendEntry::new(tp, records));
                        Slot::Appended(entries.len() - 1)
                    }
                    Err(refused) => Slot::Refused(refused),
                }
            };
            slots.push(slot);
        }
        layout.push(slots);
    }
    let params = AppendParams {
        // Only Kafka's admin client may write to internal topics (`AdminUtils.ADMIN_CLIENT_ID`).
        internal_topics_allowed: ctx.client_id == ADMIN_CLIENT_ID,
        ..AppendParams::client(request.timeout_ms, acks)
    };
    let mut refused = vec![None; entries.len()];
    let transactional_id = request
        .transactional_id
        .as_ref()
        .map(|id| id.to_string_lossy().into_owned());
    let manager = apis.add_partitions_to_txn_manager.clone();
    let verifying = manager.is_some()
        && apis
            .dynamic_config
            .current()
            .transaction_partition_verification_enable;
    let question = match verification::start(
        &apis.replica_manager,
        transactional_id.as_deref(),
        ctx.api_version,
        verifying,
        &mut entries,
        &mut refused,
    ) {
        Verification::Refused(code) => {
            let answers = vec![PartitionResponse::error(code); entries.len()];
            let layout = refuse_all(layout, code);
            let response = response_of(ctx, &apis.metadata_cache, &request, layout, answers);
            return respond(ctx, acks, response);
        }
        Verification::Append => None,
        Verification::Ask(question) => Some(question),
    };
    let (Some(question), Some(manager)) = (question, manager) else {
        return match append(&apis.replica_manager, params, entries, refused) {
            Appended::Ready(answers) => {
                let response = response_of(ctx, &apis.metadata_cache, &request, layout, answers);
                respond(ctx, acks, response)
            }
            Appended::Delayed(answers) => {
                let ctx = ctx.deferred();
                let metadata_cache = Arc::clone(&apis.metadata_cache);
                // The batches are in the log: the connection reads the producer's next
                // requests while the followers catch up (see `Response::Pipelined`).
                Response::Pipelined(Box::pin(async move {
                    let answers = answers.await;
                    let response = response_of(&ctx, &metadata_cache, &request, layout, answers);
                    respond(&ctx, acks, response)
                }))
            }
        };
    };
    // The coordinator's answer comes over the network: wait on the connection's task, not on
    // an I/O handler.
    let ctx = ctx.deferred();
    let metadata_cache = Arc::clone(&apis.metadata_cache);
    let replica_manager = Arc::clone(&apis.replica_manager);
    Response::Deferred(Box::pin(async move {
        let errors = manager.verify_transaction(question).await;
        verification::apply_errors(&errors, &entries, &mut refused);
        let answers = match append(&replica_manager, params, entries, refused) {
            Appended::Ready(answers) => answers,
            Appended::Delayed(answers) => answers.await,
        };
        let response = response_of(&ctx, &metadata_cache, &request, layout, answers);
        respond(&ctx, acks, response)
    }))
}

/// The answers of an append, in entry order: now, or once acks=-1's wait ends.
enum Appended {
    Ready(Vec<PartitionResponse>),
    Delayed(Pin<Box<dyn Future<Output = Vec<PartitionResponse>> + Send>>),
}

/// Appends the entries not `refused` and answers every entry, the refused with their refusal.
fn append(
    replica_manager: &ReplicaManager,
    params: AppendParams,
    entries: Vec<AppendEntry>,
    refused: Vec<Option<PartitionResponse>>,
) -> Appended {
    let to_append: Vec<AppendEntry> = entries
        .into_iter()
        .zip(&refused)
        .filter(|(_, r)| r.is_none())
        .map(|(e, _)| e)
        .collect();
    let merge = move |answers: Vec<PartitionResponse>| -> Vec<PartitionResponse> {
        let mut answers = answers.into_iter();
        refused
            .into_iter()
            .map(|r| {
                r.or_else(|| answers.next())
                    .unwrap_or_else(|| PartitionResponse::error(ErrorCode::UnknownServerError))
            })
            .collect()
    };
    match replica_manager.append_records(params, to_append) {
        ProduceResult::Ready(answers) => Appended::Ready(merge(answers)),
        ProduceResult::Delayed(delayed) => {
            Appended::Delayed(Box::pin(async move { merge(delayed.complete().await) }))
        }
    }
}

/// Every partition of the request fails with `code` (Kafka's error response to a request
/// that failed as a whole).
fn refuse_all(layout: Vec<Vec<Slot>>, code: ErrorCode) -> Vec<Vec<Slot>> {
    layout
        .into_iter()
        .map(|slots| {
            slots
                .into_iter()
                .map(|_| Slot::Refused(PartitionResponse::error(code)))
                .collect()
        })
        .collect()
}

/// The response on the wire, throttled for the client's quotas; with acks=0 nothing (the
/// connection may still be muted), or the connection closed if any partition failed (the only
/// way to tell such a client).
fn respond(ctx: &RequestContext, acks: i16, mut response: ProduceResponse) -> Response {
    response.throttle_time_ms = throttle_produce(ctx, acks);
    if acks == 0 {
        ctx.count_produce_errors(&response);
        let any_error = response
            .responses
            .iter()
            .flat_map(|t| &t.partition_responses)
            .any(|p| p.error_code != ErrorCode::None.code());
        return if any_error {
            Response::CloseConnection
        } else {
            Response::NoOp
        };
    }
    ctx.respond(ResponseKind::Produce(response))
}

/// Whether the first batch of any partition is transactional (v3+: magic-2 batches).
fn has_transactional_records(ctx: &RequestContext, request: &ProduceRequest) -> bool {
    ctx.api_version >= 3
        && request
            .topic_data
            .iter()
            .flat_map(|t| &t.partition_data)
            .filter_map(|p| p.records.as_deref())
            .any(|records| {
                RecordBatchHeader::parse(records)
                    .is_ok_and(|h| h.magic == 2 && h.is_transactional())
            })
}

/// The records to append for one partition, or the handler's refusal: missing records, zstd
/// below v7 (Kafka's `ProduceRequest.validateRecords`), and v0-2 message sets that do not
/// convert. Internal topics are the replica manager's to refuse.
fn records_of(ctx: &RequestContext, records: Option<Bytes>) -> Result<Bytes, PartitionResponse> {
    let Some(records) = records else {
        return Err(PartitionResponse::error_with_message(
            ErrorCode::InvalidRecord,
            "Produce request without records",
        ));
    };
    if ctx.api_version < 3 {
        return message_set_to_batch(&records)
            .map(Bytes::from)
            .map_err(|e| PartitionResponse::error_with_message(e.code, e.message));
    }
    if ctx.api_version < 7 && is_zstd(&records) {
        return Err(PartitionResponse::error_with_message(
            ErrorCode::UnsupportedCompressionType,
            "Produce requests with version below 7 are not allowed to use ZStandard compression",
        ));
    }
    Ok(records)
}

/// The wire response: each partition's answer in request order.
fn response_of(
    ctx: &RequestContext,
    metadata_cache: &MetadataCache,
    request: &ProduceRequest,
    layout: Vec<Vec<Slot>>,
    answers: Vec<PartitionResponse>,
) -> ProduceResponse {
    let mut answers: Vec<Option<PartitionResponse>> = answers.into_iter().map(Some).collect();
    let responses = request
        .topic_data
        .iter()
        .zip(layout)
        .map(|(topic, slots)| {
            let partition_responses = topic
                .partition_data
                .iter()
                .zip(slots)
                .map(|(data, slot)| {
                    let answer = match slot {
                        Slot::Refused(r) => r,
                        Slot::Appended(i) => answers
                            .get_mut(i)
                            .and_then(Option::take)
                            .unwrap_or_else(|| {
                                PartitionResponse::error(ErrorCode::UnknownServerError)
                            }),
                    };
                    wire_partition(ctx, metadata_cache, &topic.name, data.index, answer)
                })
                .collect();
            TopicProduceResponse {
                name: topic.name.clone(),
                partition_responses,
                ..TopicProduceResponse::default()
            }
        })
        .collect();
    ProduceResponse {
        responses,
        ..ProduceResponse::default()
    }
}

fn wire_partition(
    ctx: &RequestContext,
    metadata_cache: &MetadataCache,
    topic: &StrBytes,
    index: i32,
    answer: PartitionResponse,
) -> PartitionProduceResponse {
    let error_code = partition_error(
        metadata_cache,
        &topic.to_string_lossy(),
        index,
        answer.error_code,
    );
    let mut response = PartitionProduceResponse {
        index,
        error_code: error_code.code(),
        base_offset: answer.base_offset,
        log_append_time_ms: answer.log_append_time_ms,
        log_start_offset: answer.log_start_offset,
        ..PartitionProduceResponse::default()
    };
    if ctx.api_version >= 8 && error_code != ErrorCode::None {
        response.error_message = answer.error_message.map(StrBytes::from);
        response.record_errors = answer
            .record_errors
            .into_iter()
            .map(|(batch_index, message)| BatchIndexAndErrorMessage {
                batch_index,
                batch_index_error_message: Some(StrBytes::from(message)),
                ..BatchIndexAndErrorMessage::default()
            })
            .collect();
    }
    response
}

/// Whether the first batch is a zstd one, as Kafka's `ProduceRequest.validateRecords` checks it;
/// a malformed batch is left to the validator.
fn is_zstd(records: &[u8]) -> bool {
    RecordBatchHeader::parse(records)
        .is_ok_and(|header| matches!(header.compression(), Ok(CompressionType::Zstd)))
}
