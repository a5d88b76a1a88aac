//! SyncGroup (Kafka's `handleSyncGroupRequest`), v0-5: the leader brings the assignment, every
//! member gets its own; answers wait (deferred) until the leader's assignment is stored. v5
//! requires the protocol type and name.

use std::collections::HashMap;

use crate::coordinator::group::group_coordinator::SyncParams;
use crate::coordinator::group::member_metadata::SyncGroupResult;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::sync_group_request::SyncGroupRequest;
use crate::protocol::messages::sync_group_response::SyncGroupResponse;

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: SyncGroupRequest) -> Response {
    let v = ctx.api_version;
    if v >= 5 && (r.protocol_type.is_none() || r.protocol_name.is_none()) {
        let e = SyncGroupResult::error(ErrorCode::InconsistentGroupProtocol);
        return ctx.respond(ResponseKind::SyncGroup(response(e)));
    }
    let text = |s: &StrBytes| s.to_string_lossy().into_owned();
    if !apis.auth.authorize(
        ctx,
        AclOperation::Read,
        ResourceType::Group,
        &text(&r.group_id),
    ) {
        let e = SyncGroupResult::error(ErrorCode::GroupAuthorizationFailed);
        return ctx.respond(ResponseKind::SyncGroup(response(e)));
    }
    let assignment: HashMap<String, bytes::Bytes> = r
        .assignments
        .iter()
        .map(|a| (text(&a.member_id), a.assignment.clone()))
        .collect();
    let mut rx = apis.group_coordinator.handle_sync_group(SyncParams {
        group_id: text(&r.group_id),
        generation_id: r.generation_id,
        member_id: text(&r.member_id),
        protocol_type: r.protocol_type.as_ref().map(text),
        protocol_name: r.protocol_name.as_ref().map(text),
        group_instance_id: r.group_instance_id.as_ref().filter(|_| v >= 3).map(text),
        assignment,
    });
    if let Ok(result) = rx.try_recv() {
        return ctx.respond(ResponseKind::SyncGroup(response(result)));
    }
    let ctx = ctx.deferred();
    Response::Deferred(Box::pin(async move {
        // A dropped answer means the member left the generation: it must rejoin.
        let result = rx
            .await
            .unwrap_or_else(|_| SyncGroupResult::error(ErrorCode::RebalanceInProgress));
        ctx.respond(ResponseKind::SyncGroup(response(result)))
    }))
}

fn response(r: SyncGroupResult) -> SyncGroupResponse {
    SyncGroupResponse {
        error_code: r.error.code(),
        protocol_type: r.protocol_type.map(StrBytes::from),
        protocol_name: r.protocol_name.map(StrBytes::from),
        assignment: r.assignment,
        ..SyncGroupResponse::default()
    }
}
