//! AddOffsetsToTxn (Kafka's `handleAddOffsetsToTxnRequest`), v0-4: the group's
//! `__consumer_offsets` partition joins the producer's transaction, so the offsets its
//! TxnOffsetCommit writes there are committed or aborted with it. Needs WRITE on the
//! transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on the group (else
//! GROUP_AUTHORIZATION_FAILED). The group itself is not contacted. PRODUCER_FENCED is
//! INVALID_PRODUCER_EPOCH before v2.

use std::collections::BTreeSet;

use crate::cluster::{GROUP_METADATA_TOPIC_NAME, TopicPartition};
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::add_offsets_to_txn_request::AddOffsetsToTxnRequest;
use crate::protocol::messages::add_offsets_to_txn_response::AddOffsetsToTxnResponse;
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AddOffsetsToTxnRequest,
) -> Response {
    let id = request.transactional_id.to_string_lossy();
    let group_id = request.group_id.to_string_lossy();
    let code = if !apis
        .auth
        .authorize(ctx, AclOperation::Write, ResourceType::TransactionalId, &id)
    {
        ErrorCode::TransactionalIdAuthorizationFailed
    } else if !apis
        .auth
        .authorize(ctx, AclOperation::Read, ResourceType::Group, &group_id)
    {
        ErrorCode::GroupAuthorizationFailed
    } else {
        let offsets_partition = TopicPartition::new(
            GROUP_METADATA_TOPIC_NAME,
            apis.group_coordinator.manager.partition_for(&group_id),
        );
        let code = apis
            .txn_coordinator
            .handle_add_partitions_to_transaction(
                &id,
                request.producer_id,
                request.producer_epoch,
                &BTreeSet::from([offsets_partition]),
            )
            .await;
        if code == ErrorCode::ProducerFenced && ctx.api_version < 2 {
            ErrorCode::InvalidProducerEpoch
        } else {
            code
        }
    };
    ctx.respond(ResponseKind::AddOffsetsToTxn(AddOffsetsToTxnResponse {
        error_code: code.code(),
        ..AddOffsetsToTxnResponse::default()
    }))
}
