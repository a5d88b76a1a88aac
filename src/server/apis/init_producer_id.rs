//! InitProducerId (Kafka's `handleInitProducerIdRequest`). Without a transactional id, an
//! idempotent producer gets a new producer id with epoch 0 from any broker: a producer id and
//! epoch from a KIP-360 retry (v3+) are validated as Kafka does (both or neither) and otherwise
//! ignored, as Kafka blindly hands an idempotent producer a fresh id. While the broker waits for
//! its next block of ids from the controller: COORDINATOR_LOAD_IN_PROGRESS (as Kafka 3.9's
//! `RPCProducerIdManager`).
//!
//! With a transactional id, the transaction coordinator decides (fencing, epoch bumps, the
//! transaction timeout; `coordinator::transaction::init_producer_id`); clients before v4 are
//! told INVALID_PRODUCER_EPOCH for PRODUCER_FENCED, which they do not know. Errors answer
//! producer id -1, epoch -1.
//!
//! Authorization first, as Kafka's: a transactional id needs WRITE on it, else
//! TRANSACTIONAL_ID_AUTHORIZATION_FAILED; an idempotent producer needs IDEMPOTENT_WRITE on the
//! cluster or WRITE on some topic (KIP-679), else CLUSTER_AUTHORIZATION_FAILED.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::init_producer_id_request::InitProducerIdRequest;
use crate::protocol::messages::init_producer_id_response::InitProducerIdResponse;
use crate::protocol::record::batch::{NO_PRODUCER_EPOCH, NO_PRODUCER_ID};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: InitProducerIdRequest,
) -> Response {
    let answer = |error: ErrorCode, producer_id: i64, producer_epoch: i16| {
        ctx.respond(ResponseKind::InitProducerId(InitProducerIdResponse {
            error_code: error.code(),
            producer_id,
            producer_epoch,
            ..InitProducerIdResponse::default()
        }))
    };
    let fail = |error: ErrorCode| answer(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH);
    let authorized = match &request.transactional_id {
        Some(id) => apis.auth.authorize(
            ctx,
            AclOperation::Write,
            ResourceType::TransactionalId,
            &id.to_string_lossy(),
        ),
        None => {
            apis.auth
                .authorize_cluster(ctx, AclOperation::IdempotentWrite)
                || apis.auth.authorize_by_resource_type(
                    ctx,
                    AclOperation::Write,
                    ResourceType::Topic,
                )
        }
    };
    if !authorized {
        return fail(if request.transactional_id.is_some() {
            ErrorCode::TransactionalIdAuthorizationFailed
        } else {
            ErrorCode::ClusterAuthorizationFailed
        });
    }
    let given_id = request.producer_id != NO_PRODUCER_ID;
    let given_epoch = request.producer_epoch != NO_PRODUCER_EPOCH;
    if given_id != given_epoch {
        return fail(ErrorCode::InvalidRequest);
    }
    if let Some(transactional_id) = &request.transactional_id {
        let result = apis
            .txn_coordinator
            .handle_init_producer_id(
                &transactional_id.to_string_lossy(),
                request.transaction_timeout_ms,
                request.producer_id,
                request.producer_epoch,
            )
            .await;
        let error = if result.error == ErrorCode::ProducerFenced && ctx.api_version < 4 {
            ErrorCode::InvalidProducerEpoch
        } else {
            result.error
        };
        return answer(error, result.producer_id, result.producer_epoch);
    }
    match apis.producer_id_manager.generate_producer_id() {
        Ok(producer_id) => answer(ErrorCode::None, producer_id, 0),
        Err(err) => {
            // Kafka's `Errors.forException` of the manager's exception: retriable, so the
            // producer asks again once the next block has arrived.
            tracing::debug!(%err, "no producer id to hand out yet");
            fail(err.error_code())
        }
    }
}
