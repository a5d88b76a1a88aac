//! AlterPartition (api 56), a partition leader's ISR change (KIP-497; Kafka's
//! `KafkaApis.handleAlterPartitionRequest`): a broker that is not the active controller answers
//! NOT_CONTROLLER, so the leader finds the controller again; the active one answers through its
//! event queue (`controller/alter_partition.rs`). A leader that is the controller itself skips
//! the listener (`BrokerToControllerChannelManager::alter_partition`).

use crate::network::Response;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::alter_partition_request::AlterPartitionRequest;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AlterPartitionRequest,
) -> Response {
    // Kafka's `authorizeClusterOperation(CLUSTER_ACTION)`: the request's error response.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::ClusterAction)
    {
        return ctx.respond(ResponseKind::AlterPartition(
            crate::protocol::messages::AlterPartitionResponse {
                error_code: crate::protocol::errors::ErrorCode::ClusterAuthorizationFailed.code(),
                ..Default::default()
            },
        ));
    }
    let response = apis
        .controller
        .alter_partition(request, ctx.api_version)
        .await;
    ctx.respond(ResponseKind::AlterPartition(response))
}
