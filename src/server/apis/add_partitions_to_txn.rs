//! AddPartitionsToTxn (Kafka's `handleAddPartitionsToTxnRequest`), v0-5. v0-3 come from
//! clients: one transaction, which needs WRITE on its transactional id (else every partition
//! gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and WRITE on each topic; an internal topic is
//! never authorized this way (TOPIC_AUTHORIZATION_FAILED) and an unknown partition is
//! UNKNOWN_TOPIC_OR_PARTITION. If any partition fails, nothing is added: the others get
//! OPERATION_NOT_ATTEMPTED. Otherwise the coordinator's one answer goes to every partition
//! (PRODUCER_FENCED as INVALID_PRODUCER_EPOCH before v2).
//!
//! v4+ come from partition leaders (CLUSTER_ACTION on the cluster, else the top-level
//! CLUSTER_AUTHORIZATION_FAILED) and batch transactions, each an add or, with `VerifyOnly`
//! (KIP-890 part 1), a question answered per partition. The response goes out once every
//! transaction is answered.

use std::collections::BTreeSet;

use crate::cluster::{TopicPartition, is_internal_topic};
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::add_partitions_to_txn_request::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnTopic, AddPartitionsToTxnTransaction,
};
use crate::protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResponse, AddPartitionsToTxnResult,
    AddPartitionsToTxnTopicResult,
};
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AddPartitionsToTxnRequest,
) -> Response {
    let v = ctx.api_version;
    // Kafka's `allVerifyOnlyRequest`: counted as AddPartitionsToTxnVerification.
    if v >= 4 && request.transactions.iter().all(|t| t.verify_only) {
        ctx.recorder.verify_only();
    }
    if v >= 4
        && !apis
            .auth
            .authorize_cluster(ctx, AclOperation::ClusterAction)
    {
        return ctx.respond(ResponseKind::AddPartitionsToTxn(
            AddPartitionsToTxnResponse {
                error_code: ErrorCode::ClusterAuthorizationFailed.code(),
                ..AddPartitionsToTxnResponse::default()
            },
        ));
    }
    let transactions = if v < 4 {
        vec![AddPartitionsToTxnTransaction {
            transactional_id: request.v3_and_below_transactional_id,
            producer_id: request.v3_and_below_producer_id,
            producer_epoch: request.v3_and_below_producer_epoch,
            verify_only: false,
            topics: request.v3_and_below_topics,
            ..AddPartitionsToTxnTransaction::default()
        }]
    } else {
        request.transactions
    };
    // One after another: a batch from a leader holds verifications, answered at once, and
    // seldom an add, whose append is quick.
    let mut results = Vec::with_capacity(transactions.len());
    for txn in &transactions {
        results.push(handle_transaction(apis, ctx, txn).await);
    }
    let response = if v < 4 {
        AddPartitionsToTxnResponse {
            results_by_topic_v3_and_below: results
                .into_iter()
                .next()
                .map(|r| r.topic_results)
                .unwrap_or_default(),
            ..AddPartitionsToTxnResponse::default()
        }
    } else {
        AddPartitionsToTxnResponse {
            results_by_transaction: results,
            ..AddPartitionsToTxnResponse::default()
        }
    };
    ctx.respond(ResponseKind::AddPartitionsToTxn(response))
}

/// One transaction's answer.
async fn handle_transaction(
    apis: &KafkaApis,
    ctx: &RequestContext,
    txn: &AddPartitionsToTxnTransaction,
) -> AddPartitionsToTxnResult {
    let v = ctx.api_version;
    let id = txn.transactional_id.to_string_lossy();
    let partitions = partitions_of(&txn.topics);
    let answer_all = |code: ErrorCode| {
        result(
            &txn.transactional_id,
            partitions.iter().map(|tp| (tp.clone(), code)),
        )
    };
    if v < 4
        && !apis
            .auth
            .authorize(ctx, AclOperation::Write, ResourceType::TransactionalId, &id)
    {
        return answer_all(ErrorCode::TransactionalIdAuthorizationFailed);
    }
    let mut failed = false;
    let checked: Vec<(TopicPartition, ErrorCode)> = partitions
        .iter()
        .map(|tp| {
            let authorized = v >= 4
                || (!is_internal_topic(&tp.topic)
                    && apis.auth.authorize(
                        ctx,
                        AclOperation::Write,
                        ResourceType::Topic,
                        &tp.topic,
                    ));
            let code = if !authorized {
                ErrorCode::TopicAuthorizationFailed
            } else if apis
                .metadata_cache
                .partition(&tp.topic, tp.partition)
                .is_none()
            {
                ErrorCode::UnknownTopicOrPartition
            } else {
                ErrorCode::None
            };
            failed |= code != ErrorCode::None;
            (tp.clone(), code)
        })
        .collect();
    if failed {
        return result(
            &txn.transactional_id,
            checked.into_iter().map(|(tp, code)| {
                let code = if code == ErrorCode::None {
                    ErrorCode::OperationNotAttempted
                } else {
                    code
                };
                (tp, code)
            }),
        );
    }
    let coordinator = &apis.txn_coordinator;
    if txn.verify_only {
        let answers = coordinator.handle_verify_partitions_in_transaction(
            &id,
            txn.producer_id,
            txn.producer_epoch,
            &partitions.iter().cloned().collect::<Vec<_>>(),
        );
        return result(&txn.transactional_id, answers);
    }
    let code = coordinator
        .handle_add_partitions_to_transaction(&id, txn.producer_id, txn.producer_epoch, &partitions)
        .await;
    answer_all(if code == ErrorCode::ProducerFenced && v < 2 {
        ErrorCode::InvalidProducerEpoch
    } else {
        code
    })
}

/// The request's partitions, each once.
fn partitions_of(topics: &[AddPartitionsToTxnTopic]) -> BTreeSet<TopicPartition> {
    topics
        .iter()
        .flat_map(|t| {
            let name = t.name.to_string_lossy().into_owned();
            t.partitions
                .iter()
                .map(move |p| TopicPartition::new(name.clone(), *p))
        })
        .collect()
}

/// A transaction's result, its partitions grouped by topic in order.
fn result(
    transactional_id: &StrBytes,
    answers: impl IntoIterator<Item = (TopicPartition, ErrorCode)>,
) -> AddPartitionsToTxnResult {
    let mut topic_results: Vec<AddPartitionsToTxnTopicResult> = Vec::new();
    for (tp, code) in answers {
        let partition = AddPartitionsToTxnPartitionResult {
            partition_index: tp.partition,
            partition_error_code: code.code(),
            ..AddPartitionsToTxnPartitionResult::default()
        };
        match topic_results
            .iter_mut()
            .find(|t| t.name == tp.topic.as_str())
        {
            Some(t) => t.results_by_partition.push(partition),
            None => topic_results.push(AddPartitionsToTxnTopicResult {
                name: StrBytes::from(tp.topic),
                results_by_partition: vec![partition],
                ..AddPartitionsToTxnTopicResult::default()
            }),
        }
    }
    AddPartitionsToTxnResult {
        transactional_id: transactional_id.clone(),
        topic_results,
        ..AddPartitionsToTxnResult::default()
    }
}
