//! Heartbeat (Kafka's `handleHeartbeatRequest`), v0-4: keeps a member's session alive and tells
//! it of a rebalance (REBALANCE_IN_PROGRESS). v3+ carry `group.instance.id`.

use crate::network::Response;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::heartbeat_request::HeartbeatRequest;
use crate::protocol::messages::heartbeat_response::HeartbeatResponse;

use crate::protocol::errors::ErrorCode;
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: HeartbeatRequest) -> Response {
    let instance = r
        .group_instance_id
        .as_ref()
        .filter(|_| ctx.api_version >= 3)
        .map(|i| i.to_string_lossy().into_owned());
    let group_id = r.group_id.to_string_lossy();
    let error = if !apis
        .auth
        .authorize(ctx, AclOperation::Read, ResourceType::Group, &group_id)
    {
        ErrorCode::GroupAuthorizationFailed
    } else {
        apis.group_coordinator.handle_heartbeat(
            &group_id,
            &r.member_id.to_string_lossy(),
            instance.as_deref(),
            r.generation_id,
        )
    };
    ctx.respond(ResponseKind::Heartbeat(HeartbeatResponse {
        error_code: error.code(),
        ..HeartbeatResponse::default()
    }))
}
