//! DescribeGroups (Kafka's `handleDescribeGroupsRequest`), v0-5: state, protocol and members of
//! each group; members' metadata and assignments only for a Stable group; an unknown group is
//! `Dead`. v3+ may ask for the authorized operations (all of a group's, without an authorizer).
//! A group the principal may not Describe is GROUP_AUTHORIZATION_FAILED, listed after the
//! others as Kafka lists them.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_groups_request::DescribeGroupsRequest;
use crate::protocol::messages::describe_groups_response::{
    DescribeGroupsResponse, DescribedGroup, DescribedGroupMember,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use crate::protocol::errors::ErrorCode;
use crate::security::acl::{AclOperation, ResourceType};

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: DescribeGroupsRequest) -> Response {
    let include_ops = ctx.api_version >= 3 && r.include_authorized_operations;
    let (allowed, denied): (Vec<_>, Vec<_>) = r.groups.iter().partition(|id| {
        apis.auth.authorize(
            ctx,
            AclOperation::Describe,
            ResourceType::Group,
            &id.to_string_lossy(),
        )
    });
    let mut groups: Vec<DescribedGroup> = allowed
        .into_iter()
        .map(|id| {
            let (error, summary) = apis.group_coordinator.describe_group(&id.to_string_lossy());
            DescribedGroup {
                error_code: error.code(),
                group_id: id.clone(),
                group_state: StrBytes::from(summary.state),
                protocol_type: StrBytes::from(summary.protocol_type),
                protocol_data: StrBytes::from(summary.protocol),
                members: summary
                    .members
                    .into_iter()
                    .map(|m| DescribedGroupMember {
                        member_id: StrBytes::from(m.member_id),
                        group_instance_id: m.group_instance_id.map(StrBytes::from),
                        client_id: StrBytes::from(m.client_id),
                        client_host: StrBytes::from(m.client_host),
                        member_metadata: m.metadata,
                        member_assignment: m.assignment,
                        ..DescribedGroupMember::default()
                    })
                    .collect(),
                authorized_operations: if include_ops {
                    apis.auth
                        .authorized_operations(ctx, ResourceType::Group, &id.to_string_lossy())
                } else {
                    i32::MIN
                },
                ..DescribedGroup::default()
            }
        })
        .collect();
    groups.extend(denied.into_iter().map(|id| DescribedGroup {
        error_code: ErrorCode::GroupAuthorizationFailed.code(),
        group_id: id.clone(),
        authorized_operations: i32::MIN,
        ..DescribedGroup::default()
    }));
    ctx.respond(ResponseKind::DescribeGroups(DescribeGroupsResponse {
        groups,
        ..DescribeGroupsResponse::default()
    }))
}
