//! ListGroups (Kafka's `handleListGroupsRequest`), v0-5: every group this coordinator holds,
//! filtered by state (v4+) and type (v5+: all of them are `classic`); COORDINATOR_LOAD_IN_PROGRESS
//! while an offsets partition is loading, with the groups known so far.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::list_groups_request::ListGroupsRequest;
use crate::protocol::messages::list_groups_response::{ListGroupsResponse, ListedGroup};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: ListGroupsRequest) -> Response {
    let text = |v: &[StrBytes]| -> Vec<String> {
        v.iter().map(|s| s.to_string_lossy().into_owned()).collect()
    };
    let states = if ctx.api_version >= 4 {
        text(&r.states_filter)
    } else {
        Vec::new()
    };
    let types = if ctx.api_version >= 5 {
        text(&r.types_filter)
    } else {
        Vec::new()
    };
    let (error, mut groups) = apis.group_coordinator.list_groups(&states, &types);
    // Kafka's: every group with Describe on the cluster, else those the principal may Describe.
    if !apis.auth.authorize_cluster(ctx, AclOperation::Describe) {
        groups.retain(|(id, _, _)| {
            apis.auth
                .authorize(ctx, AclOperation::Describe, ResourceType::Group, id)
        });
    }
    ctx.respond(ResponseKind::ListGroups(ListGroupsResponse {
        error_code: error.code(),
        groups: groups
            .into_iter()
            .map(|(id, protocol_type, state)| ListedGroup {
                group_id: StrBytes::from(id),
                protocol_type: StrBytes::from(protocol_type),
                group_state: StrBytes::from(state),
                group_type: StrBytes::from("classic"),
                ..ListedGroup::default()
            })
            .collect(),
        ..ListGroupsResponse::default()
    }))
}
