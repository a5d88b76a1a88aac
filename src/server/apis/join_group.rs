//! JoinGroup (Kafka's `handleJoinGroupRequest`), v0-9: the request goes to the group
//! coordinator; an answer that waits for the rebalance is a deferred response, so the parked
//! request holds no io thread. v0 has no rebalance timeout (the session timeout is used), v4+
//! new members get MEMBER_ID_REQUIRED first, v5+ carry `group.instance.id`, v9 may skip the
//! assignment of a static leader.

use bytes::Bytes;

use crate::coordinator::group::group_join::JoinParams;
use crate::coordinator::group::member_metadata::JoinGroupResult;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::join_group_request::JoinGroupRequest;
use crate::protocol::messages::join_group_response::{JoinGroupResponse, JoinGroupResponseMember};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

/// Kafka's `clientHost`: the peer address as Java's `InetAddress.toString` writes it.
pub(crate) fn client_host(ctx: &RequestContext) -> String {
    format!("/{}", ctx.peer.ip())
}

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: JoinGroupRequest) -> Response {
    let v = ctx.api_version;
    let member_id = r.member_id.to_string_lossy().into_owned();
    if !apis.auth.authorize(
        ctx,
        AclOperation::Read,
        ResourceType::Group,
        &r.group_id.to_string_lossy(),
    ) {
        let denied = JoinGroupResult::error(&member_id, ErrorCode::GroupAuthorizationFailed);
        return ctx.respond(ResponseKind::JoinGroup(response(denied, v)));
    }
    let params = JoinParams {
        group_id: r.group_id.to_string_lossy().into_owned(),
        member_id: member_id.clone(),
        group_instance_id: r
            .group_instance_id
            .filter(|_| v >= 5)
            .map(|i| i.to_string_lossy().into_owned()),
        require_known_member_id: v >= 4,
        support_skipping_assignment: v >= 9,
        client_id: ctx.client_id.clone(),
        client_host: client_host(ctx),
        rebalance_timeout_ms: if v == 0 {
            r.session_timeout_ms
        } else {
            r.rebalance_timeout_ms
        },
        session_timeout_ms: r.session_timeout_ms,
        protocol_type: r.protocol_type.to_string_lossy().into_owned(),
        protocols: r
            .protocols
            .into_iter()
            .map(|p| (p.name.to_string_lossy().into_owned(), p.metadata))
            .collect(),
    };
    let mut rx = apis.group_coordinator.handle_join_group(params);
    if let Ok(result) = rx.try_recv() {
        return ctx.respond(ResponseKind::JoinGroup(response(result, v)));
    }
    let ctx = ctx.deferred();
    Response::Deferred(Box::pin(async move {
        // A dropped answer means the member was replaced or removed: it must rejoin.
        let result = rx
            .await
            .unwrap_or_else(|_| JoinGroupResult::error(&member_id, ErrorCode::UnknownMemberId));
        ctx.respond(ResponseKind::JoinGroup(response(result, ctx.api_version)))
    }))
}

fn response(r: JoinGroupResult, v: i16) -> JoinGroupResponse {
    JoinGroupResponse {
        error_code: r.error.code(),
        generation_id: r.generation_id,
        protocol_type: r.protocol_type.map(StrBytes::from),
        // Before v7 the name is not nullable: Kafka sends "" (`NoProtocol`).
        protocol_name: if v >= 7 {
            r.protocol_name.map(StrBytes::from)
        } else {
            Some(StrBytes::from(r.protocol_name.unwrap_or_default()))
        },
        leader: StrBytes::from(r.leader_id),
        skip_assignment: r.skip_assignment,
        member_id: StrBytes::from(r.member_id),
        members: r
            .members
            .into_iter()
            .map(
                |(id, instance, metadata): (String, Option<String>, Bytes)| {
                    JoinGroupResponseMember {
                        member_id: StrBytes::from(id),
                        group_instance_id: instance.map(StrBytes::from),
                        metadata,
                        ..JoinGroupResponseMember::default()
                    }
                },
            )
            .collect(),
        ..JoinGroupResponse::default()
    }
}
