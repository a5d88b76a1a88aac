//! InitProducerId (Kafka's `handleInitProducerIdRequest` and the non-transactional path of
//! `TransactionCoordinator.handleInitProducerId`): an idempotent producer gets a new producer
//! id with epoch 0. A producer id and epoch from a KIP-360 retry (v3+) are validated as Kafka
//! does (both or neither) and, without a transactional id, answered like a first call: Kafka
//! bumps epochs only for transactional ids, and blindly hands an idempotent producer a fresh
//! id. Errors answer producer id -1, epoch -1; while the broker waits for its next block of
//! ids from the controller, COORDINATOR_LOAD_IN_PROGRESS (as Kafka 3.9's `RPCProducerIdManager`).
//!
//! Transactions are not supported. A transactional id gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
//! the same code FindCoordinator answers for key type TRANSACTION: it is fatal in the Java
//! client (`TransactionManager` raises `TransactionalIdAuthorizationException` at once instead
//! of retrying) and in librdkafka, so a transactional producer fails fast with a clear cause.
//! An empty transactional id is INVALID_REQUEST, as in Kafka.
//!
//! Authorization first, as Kafka's: an idempotent producer needs IdempotentWrite on the
//! cluster or Write on some topic (KIP-679), else CLUSTER_AUTHORIZATION_FAILED.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::init_producer_id_request::InitProducerIdRequest;
use crate::protocol::messages::init_producer_id_response::InitProducerIdResponse;
use crate::protocol::record::batch::{NO_PRODUCER_EPOCH, NO_PRODUCER_ID};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub async fn handle(
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
    if request.transactional_id.is_none()
        && !apis
            .auth
            .authorize_cluster(ctx, AclOperation::IdempotentWrite)
        && !apis
            .auth
            .authorize_by_resource_type(ctx, AclOperation::Write, ResourceType::Topic)
    {
        return fail(ErrorCode::ClusterAuthorizationFailed);
    }
    let given_id = request.producer_id != NO_PRODUCER_ID;
    let given_epoch = request.producer_epoch != NO_PRODUCER_EPOCH;
    if given_id != given_epoch {
        return fail(ErrorCode::InvalidRequest);
    }
    if let Some(transactional_id) = &request.transactional_id {
        if transactional_id.is_empty() {
            return fail(ErrorCode::InvalidRequest);
        }
        tracing::info!(
            transactional_id = %transactional_id.to_string_lossy(),
            "refusing InitProducerId for a transactional id: transactions are not supported"
        );
        return fail(ErrorCode::TransactionalIdAuthorizationFailed);
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
