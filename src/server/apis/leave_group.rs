//! LeaveGroup (Kafka's `handleLeaveGroupRequest`), v0-5: v0-2 name one member and answer one
//! error (the group's, else the member's); v3+ remove a batch of members, by member id or, for
//! administrative removal, by `group.instance.id` alone.

use crate::coordinator::group::group_coordinator::LeavingMember;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::leave_group_request::LeaveGroupRequest;
use crate::protocol::messages::leave_group_response::{LeaveGroupResponse, MemberResponse};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: LeaveGroupRequest) -> Response {
    let text = |s: &StrBytes| s.to_string_lossy().into_owned();
    let leaving: Vec<LeavingMember> = if ctx.api_version < 3 {
        vec![LeavingMember {
            member_id: text(&r.member_id),
            group_instance_id: None,
        }]
    } else {
        r.members
            .iter()
            .map(|m| LeavingMember {
                member_id: text(&m.member_id),
                group_instance_id: m.group_instance_id.as_ref().map(text),
            })
            .collect()
    };
    let (error, member_errors) = if !apis.auth.authorize(
        ctx,
        AclOperation::Read,
        ResourceType::Group,
        &text(&r.group_id),
    ) {
        (ErrorCode::GroupAuthorizationFailed, Vec::new())
    } else {
        apis.group_coordinator
            .handle_leave_group(&text(&r.group_id), &leaving)
    };
    let response = if ctx.api_version < 3 {
        let first = member_errors
            .iter()
            .copied()
            .find(|e| *e != ErrorCode::None)
            .unwrap_or(ErrorCode::None);
        LeaveGroupResponse {
            error_code: if error != ErrorCode::None {
                error
            } else {
                first
            }
            .code(),
            ..LeaveGroupResponse::default()
        }
    } else {
        LeaveGroupResponse {
            error_code: error.code(),
            members: leaving
                .iter()
                .zip(member_errors)
                .map(|(l, e)| MemberResponse {
                    member_id: StrBytes::from(l.member_id.clone()),
                    group_instance_id: l.group_instance_id.clone().map(StrBytes::from),
                    error_code: e.code(),
                    ..MemberResponse::default()
                })
                .collect(),
            ..LeaveGroupResponse::default()
        }
    };
    ctx.respond(ResponseKind::LeaveGroup(response))
}
