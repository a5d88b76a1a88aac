//! DeleteAcls (Kafka's `AclApis.handleDeleteAcls`), v0-3: for each filter, the bindings it
//! deleted from the authorizer's store (each once, under the first filter that matched it).
//! Needs Alter on the cluster (else every filter is CLUSTER_AUTHORIZATION_FAILED); without an
//! authorizer SECURITY_DISABLED; a filter with codes this version does not know is
//! INVALID_REQUEST.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::delete_acls_request::DeleteAclsRequest;
use crate::protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl, DeleteAclsResponse,
};
use crate::security::acl::{AclBindingFilter, AclOperation};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::describe_acls::{NO_AUTHORIZER, filter_of};

fn failed(code: ErrorCode, message: &str) -> DeleteAclsFilterResult {
    DeleteAclsFilterResult {
        error_code: code.code(),
        error_message: Some(StrBytes::from(message.to_string())),
        ..DeleteAclsFilterResult::default()
    }
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    r: DeleteAclsRequest,
) -> Response {
    let filter_results = if !apis.auth.authorize_cluster(ctx, AclOperation::Alter) {
        let code = ErrorCode::ClusterAuthorizationFailed;
        r.filters
            .iter()
            .map(|_| failed(code, code.message()))
            .collect()
    } else if let Some(authorizer) = apis.auth.authorizer() {
        let filters: Vec<Option<AclBindingFilter>> = r
            .filters
            .iter()
            .map(|f| {
                filter_of(
                    f.resource_type_filter,
                    f.resource_name_filter.as_ref(),
                    f.pattern_type_filter,
                    f.principal_filter.as_ref(),
                    f.host_filter.as_ref(),
                    f.operation,
                    f.permission_type,
                )
            })
            .collect();
        let known: Vec<AclBindingFilter> = filters.iter().flatten().cloned().collect();
        let mut deleted = authorizer.delete_acls(&known).await.into_iter();
        filters
            .iter()
            .map(|f| match f {
                None => failed(
                    ErrorCode::InvalidRequest,
                    "The filter contains UNKNOWN elements",
                ),
                Some(_) => DeleteAclsFilterResult {
                    matching_acls: deleted
                        .next()
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(b, error)| DeleteAclsMatchingAcl {
                            error_code: if error.is_some() {
                                ErrorCode::UnknownServerError.code()
                            } else {
                                0
                            },
                            error_message: error.map(StrBytes::from),
                            resource_type: b.pattern.resource_type.code(),
                            resource_name: StrBytes::from(b.pattern.name),
                            pattern_type: b.pattern.pattern_type.code(),
                            principal: StrBytes::from(b.entry.principal),
                            host: StrBytes::from(b.entry.host),
                            operation: b.entry.operation.code(),
                            permission_type: b.entry.permission_type.code(),
                            ..DeleteAclsMatchingAcl::default()
                        })
                        .collect(),
                    ..DeleteAclsFilterResult::default()
                },
            })
            .collect()
    } else {
        r.filters
            .iter()
            .map(|_| failed(ErrorCode::SecurityDisabled, NO_AUTHORIZER))
            .collect()
    };
    ctx.respond(ResponseKind::DeleteAcls(DeleteAclsResponse {
        filter_results,
        ..DeleteAclsResponse::default()
    }))
}
