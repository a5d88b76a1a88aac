//! ControlledShutdown (api 7), a stopping broker's request to the controller (Kafka's
//! `KafkaApis.handleControlledShutdownRequest`): a broker that is not the active controller
//! answers NOT_CONTROLLER, so the stopping broker looks for the controller again; the active
//! one moves the broker's leaderships through its event queue (`controller/controlled_shutdown.rs`)
//! and answers with the partitions it still leads. A stopping broker that is the controller
//! itself skips the listener (`BrokerToControllerChannelManager::controlled_shutdown`).

use crate::network::Response;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::controlled_shutdown_request::ControlledShutdownRequest;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: ControlledShutdownRequest,
) -> Response {
    // Kafka's `authorizeClusterOperation(CLUSTER_ACTION)`: the request's error response.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::ClusterAction)
    {
        return ctx.respond(ResponseKind::ControlledShutdown(
            crate::protocol::messages::ControlledShutdownResponse {
                error_code: crate::protocol::errors::ErrorCode::ClusterAuthorizationFailed.code(),
                ..Default::default()
            },
        ));
    }
    // v0 carries no epoch: the default -1 is "unknown", which the controller accepts.
    let response = apis
        .controller
        .controlled_shutdown(request.broker_id, request.broker_epoch)
        .await;
    ctx.respond(ResponseKind::ControlledShutdown(response))
}
