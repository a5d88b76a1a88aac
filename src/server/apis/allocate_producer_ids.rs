//! AllocateProducerIds, the broker-to-controller request of Kafka's ZooKeeper mode (since IBP
//! 3.0, `KafkaApis.handleAllocateProducerIdsRequest` and the controller's
//! `processAllocateProducerIds`): the controller claims the next block of 1000 ids from
//! `/latest_producer_id_block` for the requesting broker. A broker that is not the controller
//! answers NOT_CONTROLLER; a requester without a registration BROKER_ID_NOT_REGISTERED; an epoch
//! other than its registration's czxid STALE_BROKER_EPOCH; a store failure or exhausted ids
//! UNKNOWN_SERVER_ERROR (Kafka's `Errors.forException` of the exception it throws).
//!
//! [`allocate_producer_ids`] is also how this broker's own producer-id manager asks when the
//! broker is the controller itself (in process, the same answer the listener gives).

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::allocate_producer_ids_request::AllocateProducerIdsRequest;
use crate::protocol::messages::allocate_producer_ids_response::AllocateProducerIdsResponse;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::zk_producer_id_manager::{AllocateError, ZkProducerIdManager};

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AllocateProducerIdsRequest,
) -> Response {
    // Kafka's `authorizeClusterOperation(CLUSTER_ACTION)`: the request's error response.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::ClusterAction)
    {
        return ctx.respond(ResponseKind::AllocateProducerIds(
            crate::protocol::messages::AllocateProducerIdsResponse {
                error_code: crate::protocol::errors::ErrorCode::ClusterAuthorizationFailed.code(),
                ..Default::default()
            },
        ));
    }
    let response = allocate_producer_ids(&apis.zk_producer_id_manager, &request).await;
    ctx.respond(ResponseKind::AllocateProducerIds(response))
}

/// The controller's answer to `request`.
pub(crate) async fn allocate_producer_ids(
    manager: &ZkProducerIdManager,
    request: &AllocateProducerIdsRequest,
) -> AllocateProducerIdsResponse {
    let result = manager
        .allocate_block_for(request.broker_id, request.broker_epoch)
        .await;
    match result {
        Ok(block) => AllocateProducerIdsResponse {
            producer_id_start: block.block_start,
            producer_id_len: i32::try_from(block.block_end - block.block_start + 1)
                .unwrap_or(i32::MAX),
            ..AllocateProducerIdsResponse::default()
        },
        Err(err) => {
            let code = match &err {
                AllocateError::NotController => ErrorCode::NotController,
                AllocateError::BrokerIdNotRegistered(_) => ErrorCode::BrokerIdNotRegistered,
                AllocateError::StaleBrokerEpoch { .. } => ErrorCode::StaleBrokerEpoch,
                AllocateError::Block(_) => ErrorCode::UnknownServerError,
            };
            tracing::warn!(broker_id = request.broker_id, %err, "refusing AllocateProducerIds");
            AllocateProducerIdsResponse {
                error_code: code.code(),
                ..AllocateProducerIdsResponse::default()
            }
        }
    }
}
