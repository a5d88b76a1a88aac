//! DescribeAcls (Kafka's `AclApis.handleDescribeAcls`), v0-3: the bindings the filter matches,
//! grouped by resource pattern. Needs Describe on the cluster (else CLUSTER_AUTHORIZATION_FAILED);
//! without an authorizer SECURITY_DISABLED. A filter with codes this version does not know is
//! INVALID_REQUEST.

use std::collections::BTreeMap;

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_acls_request::DescribeAclsRequest;
use crate::protocol::messages::describe_acls_response::{
    AclDescription, DescribeAclsResource, DescribeAclsResponse,
};
use crate::security::acl::{
    AccessControlEntryFilter, AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
    PatternType, ResourcePattern, ResourcePatternFilter, ResourceType,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

/// `SecurityDisabledException`'s message in the ACL APIs.
pub(super) const NO_AUTHORIZER: &str = "No Authorizer is configured.";

/// The wire filter fields (DescribeAcls and each DeleteAcls filter) as a binding filter;
/// `None` when a code is unknown.
pub(super) fn filter_of(
    resource_type: i8,
    name: Option<&StrBytes>,
    pattern_type: i8,
    principal: Option<&StrBytes>,
    host: Option<&StrBytes>,
    operation: i8,
    permission_type: i8,
) -> Option<AclBindingFilter> {
    let filter = AclBindingFilter {
        pattern_filter: ResourcePatternFilter {
            resource_type: ResourceType::from_code(resource_type),
            name: name.map(|n| n.to_string_lossy().into_owned()),
            pattern_type: PatternType::from_code(pattern_type),
        },
        entry_filter: AccessControlEntryFilter {
            principal: principal.map(|p| p.to_string_lossy().into_owned()),
            host: host.map(|h| h.to_string_lossy().into_owned()),
            operation: AclOperation::from_code(operation),
            permission_type: AclPermissionType::from_code(permission_type),
        },
    };
    (!filter.is_unknown()).then_some(filter)
}

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: DescribeAclsRequest) -> Response {
    let error = |code: ErrorCode, message: &str| DescribeAclsResponse {
        error_code: code.code(),
        error_message: Some(StrBytes::from(message.to_string())),
        ..DescribeAclsResponse::default()
    };
    let response = if !apis.auth.authorize_cluster(ctx, AclOperation::Describe) {
        let code = ErrorCode::ClusterAuthorizationFailed;
        error(code, code.message())
    } else if let Some(authorizer) = apis.auth.authorizer() {
        match filter_of(
            r.resource_type_filter,
            r.resource_name_filter.as_ref(),
            r.pattern_type_filter,
            r.principal_filter.as_ref(),
            r.host_filter.as_ref(),
            r.operation,
            r.permission_type,
        ) {
            Some(filter) => DescribeAclsResponse {
                resources: acls_resources(authorizer.acls(&filter)),
                ..DescribeAclsResponse::default()
            },
            None => error(
                ErrorCode::InvalidRequest,
                "The filter contains UNKNOWN elements",
            ),
        }
    } else {
        error(ErrorCode::SecurityDisabled, NO_AUTHORIZER)
    };
    ctx.respond(ResponseKind::DescribeAcls(response))
}

/// `DescribeAclsResponse.aclsResources`: the bindings grouped by pattern.
fn acls_resources(bindings: Vec<AclBinding>) -> Vec<DescribeAclsResource> {
    let mut by_pattern: BTreeMap<ResourcePattern, Vec<AclDescription>> = BTreeMap::new();
    for b in bindings {
        by_pattern
            .entry(b.pattern)
            .or_default()
            .push(AclDescription {
                principal: StrBytes::from(b.entry.principal),
                host: StrBytes::from(b.entry.host),
                operation: b.entry.operation.code(),
                permission_type: b.entry.permission_type.code(),
                ..AclDescription::default()
            });
    }
    by_pattern
        .into_iter()
        .map(|(p, acls)| DescribeAclsResource {
            resource_type: p.resource_type.code(),
            resource_name: StrBytes::from(p.name),
            pattern_type: p.pattern_type.code(),
            acls,
            ..DescribeAclsResource::default()
        })
        .collect()
}
