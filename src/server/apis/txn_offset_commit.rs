//! TxnOffsetCommit (Kafka's `handleTxnOffsetCommitRequest`), v0-4: a transactional producer
//! commits a consumer group's offsets as part of its transaction (`sendOffsetsToTransaction`);
//! they become the group's offsets with the transaction's COMMIT marker
//! (`coordinator::group::txn_offsets`). Needs WRITE on the transactional id (else every
//! partition gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group (else
//! GROUP_AUTHORIZATION_FAILED) and READ on each topic (TOPIC_AUTHORIZATION_FAILED); an unknown
//! partition is UNKNOWN_TOPIC_OR_PARTITION. v3+ carry the member's generation, id and instance
//! id (KIP-447). With `transaction.partition.verification.enable`, the group's
//! `__consumer_offsets` partition is verified with the transaction coordinator first, as a
//! produce's partitions are (KIP-890). Before v2, COORDINATOR_LOAD_IN_PROGRESS is answered as
//! COORDINATOR_NOT_AVAILABLE, which those clients retry.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cluster::{GROUP_METADATA_TOPIC_NAME, TopicPartition};
use crate::coordinator::group::GroupCoordinator;
use crate::coordinator::group::group_coordinator::GroupApi;
use crate::coordinator::group::group_metadata_manager::commit_error;
use crate::coordinator::group::group_offsets::CommitParams;
use crate::coordinator::group::offsets_records::OffsetAndMetadata;
use crate::coordinator::group::txn_offsets::TxnCommitParams;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::txn_offset_commit_request::TxnOffsetCommitRequest;
use crate::protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponse, TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use crate::protocol::record::batch::NO_SEQUENCE;
use crate::replication::{ReplicaManager, VerificationGuard};
use crate::security::acl::{AclOperation, ResourceType};

use super::super::add_partitions_to_txn_manager::{AddPartitionsToTxnManager, TxnVerification};
use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    r: TxnOffsetCommitRequest,
) -> Response {
    let v = ctx.api_version;
    let text = |s: &StrBytes| s.to_string_lossy().into_owned();
    let group_id = text(&r.group_id);
    let refused = if !apis.auth.authorize(
        ctx,
        AclOperation::Write,
        ResourceType::TransactionalId,
        &text(&r.transactional_id),
    ) {
        Some(ErrorCode::TransactionalIdAuthorizationFailed)
    } else if !apis
        .auth
        .authorize(ctx, AclOperation::Read, ResourceType::Group, &group_id)
    {
        Some(ErrorCode::GroupAuthorizationFailed)
    } else {
        None
    };
    let mut errors: HashMap<TopicPartition, ErrorCode> = HashMap::new();
    let now = apis.replica_manager.time().milliseconds();
    let mut offsets = Vec::new();
    for t in &r.topics {
        let topic = text(&t.name);
        let may_read = apis
            .auth
            .authorize(ctx, AclOperation::Read, ResourceType::Topic, &topic);
        for p in &t.partitions {
            let tp = TopicPartition::new(topic.clone(), p.partition_index);
            let error = if let Some(e) = refused {
                Some(e)
            } else if !may_read {
                Some(ErrorCode::TopicAuthorizationFailed)
            } else if apis
                .metadata_cache
                .partition(&topic, p.partition_index)
                .is_none()
            {
                Some(ErrorCode::UnknownTopicOrPartition)
            } else {
                None
            };
            if let Some(e) = error {
                errors.insert(tp, e);
                continue;
            }
            offsets.push((
                tp,
                OffsetAndMetadata {
                    committed_offset: p.committed_offset,
                    leader_epoch: if v >= 2 { p.committed_leader_epoch } else { -1 },
                    metadata: p.committed_metadata.as_ref().map(&text).unwrap_or_default(),
                    commit_timestamp_ms: now,
                    expire_timestamp_ms: None,
                },
            ));
        }
    }
    if offsets.is_empty() {
        return ctx.respond(ResponseKind::TxnOffsetCommit(response(&r, &errors)));
    }
    let params = TxnCommitParams {
        commit: CommitParams {
            group_id,
            member_id: if v >= 3 {
                text(&r.member_id)
            } else {
                String::new()
            },
            group_instance_id: r.group_instance_id.as_ref().filter(|_| v >= 3).map(text),
            generation_id: if v >= 3 { r.generation_id } else { -1 },
            offsets,
        },
        producer_id: r.producer_id,
        producer_epoch: r.producer_epoch,
        verification_guard: None,
    };
    let coordinator = Arc::clone(&apis.group_coordinator);
    let verifier = apis
        .add_partitions_to_txn_manager
        .clone()
        .filter(|_| {
            apis.dynamic_config
                .current()
                .transaction_partition_verification_enable
        })
        .map(|manager| Verifier {
            manager,
            replica_manager: Arc::clone(&apis.replica_manager),
        });
    let ctx = ctx.deferred();
    Response::Deferred(Box::pin(async move {
        let mut params = params;
        if let Some(verifier) = verifier {
            let verified = verifier
                .verify(&coordinator, &text(&r.transactional_id), &params, v)
                .await;
            match verified {
                Ok(guard) => params.verification_guard = Some(guard),
                Err(e) => {
                    for (tp, _) in &params.commit.offsets {
                        errors.insert(tp.clone(), e);
                    }
                    return ctx.respond(ResponseKind::TxnOffsetCommit(response(&r, &errors)));
                }
            }
        }
        for (tp, e) in coordinator.commit_transactional_offsets(params).await {
            let e = if v < 2 && e == ErrorCode::CoordinatorLoadInProgress {
                ErrorCode::CoordinatorNotAvailable
            } else {
                e
            };
            errors.insert(tp, e);
        }
        ctx.respond(ResponseKind::TxnOffsetCommit(response(&r, &errors)))
    }))
}

/// KIP-890's verification of the group's `__consumer_offsets` partition (Kafka's
/// `handleTxnCommitOffsets` before `doTxnCommitOffsets`).
struct Verifier {
    manager: Arc<AddPartitionsToTxnManager>,
    replica_manager: Arc<ReplicaManager>,
}

impl Verifier {
    /// The guard to append the offsets with, or the error every partition gets: the group's
    /// status first, then the offsets partition's verification, whose failures become
    /// offset-commit errors (`maybeConvertOffsetCommitError`).
    async fn verify(
        &self,
        coordinator: &GroupCoordinator,
        transactional_id: &str,
        params: &TxnCommitParams,
        version: i16,
    ) -> Result<VerificationGuard, ErrorCode> {
        let group_id = &params.commit.group_id;
        if let Some(e) = coordinator.validate_group_status(group_id, GroupApi::OffsetCommit) {
            return Err(e);
        }
        let tp = TopicPartition::new(
            GROUP_METADATA_TOPIC_NAME,
            coordinator.manager.partition_for(group_id),
        );
        let guard = self
            .replica_manager
            .maybe_start_transaction_verification(
                &tp,
                params.producer_id,
                NO_SEQUENCE,
                params.producer_epoch,
            )
            .map_err(|r| commit_error(r.error_code))?;
        if guard == VerificationGuard::SENTINEL {
            return Ok(guard);
        }
        let question = TxnVerification {
            transactional_id: transactional_id.to_string(),
            producer_id: params.producer_id,
            producer_epoch: params.producer_epoch,
            partitions: vec![tp.clone()],
            // Kafka 3.9 picks the generic error (TRANSACTION_ABORTABLE answered as
            // INVALID_TXN_STATE) for v4+ and keeps TRANSACTION_ABORTABLE below v4, the reverse
            // of its produce path; what its clients see is reproduced.
            supports_transaction_abortable: version < 4,
        };
        match self.manager.verify_transaction(question).await.get(&tp) {
            Some(e) => Err(commit_error(*e)),
            None => Ok(guard),
        }
    }
}

/// The answer in the request's order.
fn response(
    r: &TxnOffsetCommitRequest,
    errors: &HashMap<TopicPartition, ErrorCode>,
) -> TxnOffsetCommitResponse {
    let topics = r
        .topics
        .iter()
        .map(|t| {
            let name = t.name.to_string_lossy();
            TxnOffsetCommitResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| {
                        let tp = TopicPartition::new(name.as_ref(), p.partition_index);
                        TxnOffsetCommitResponsePartition {
                            partition_index: p.partition_index,
                            error_code: errors
                                .get(&tp)
                                .copied()
                                .unwrap_or(ErrorCode::UnknownServerError)
                                .code(),
                            ..TxnOffsetCommitResponsePartition::default()
                        }
                    })
                    .collect(),
                ..TxnOffsetCommitResponseTopic::default()
            }
        })
        .collect();
    TxnOffsetCommitResponse {
        topics,
        ..TxnOffsetCommitResponse::default()
    }
}
