//! DeleteGroups (Kafka's `handleDeleteGroupsRequest`), v0-2: empty groups are removed with
//! tombstones for their offsets and metadata; a group with members is NON_EMPTY_GROUP, an
//! unknown one GROUP_ID_NOT_FOUND.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::delete_groups_request::DeleteGroupsRequest;
use crate::protocol::messages::delete_groups_response::{
    DeletableGroupResult, DeleteGroupsResponse,
};

use crate::protocol::errors::ErrorCode;
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: DeleteGroupsRequest) -> Response {
    let ids: Vec<String> = r
        .groups_names
        .iter()
        .map(|g| g.to_string_lossy().into_owned())
        .collect();
    // Kafka's order: the deleted groups' results, then those the principal may not Delete.
    let (allowed, denied): (Vec<String>, Vec<String>) = ids.into_iter().partition(|id| {
        apis.auth
            .authorize(ctx, AclOperation::Delete, ResourceType::Group, id)
    });
    let mut results = apis.group_coordinator.delete_groups(&allowed);
    results.extend(
        denied
            .into_iter()
            .map(|id| (id, ErrorCode::GroupAuthorizationFailed)),
    );
    ctx.respond(ResponseKind::DeleteGroups(DeleteGroupsResponse {
        results: results
            .into_iter()
            .map(|(id, e)| DeletableGroupResult {
                group_id: StrBytes::from(id),
                error_code: e.code(),
                ..DeletableGroupResult::default()
            })
            .collect(),
        ..DeleteGroupsResponse::default()
    }))
}
