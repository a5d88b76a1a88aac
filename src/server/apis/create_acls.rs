//! CreateAcls (Kafka's `AclApis.handleCreateAcls`), v0-3: each creation added to the
//! authorizer's store, one result per creation in order. Needs Alter on the cluster (else
//! every creation is CLUSTER_AUTHORIZATION_FAILED); without an authorizer SECURITY_DISABLED.
//! INVALID_REQUEST for a cluster resource not named `kafka-cluster`, an empty name, codes this
//! version does not know, a `/` in the name or a principal not `type:name`; v0 carries literal
//! patterns only (UNSUPPORTED_VERSION otherwise).

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::create_acls_request::{AclCreation, CreateAclsRequest};
use crate::protocol::messages::create_acls_response::{AclCreationResult, CreateAclsResponse};
use crate::security::acl::{
    AccessControlEntry, AclBinding, AclOperation, AclPermissionType, CLUSTER_NAME, PatternType,
    ResourcePattern, ResourceType,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::describe_acls::NO_AUTHORIZER;

fn binding_of(c: &AclCreation) -> AclBinding {
    AclBinding {
        pattern: ResourcePattern::new(
            ResourceType::from_code(c.resource_type),
            c.resource_name.to_string_lossy().into_owned(),
            PatternType::from_code(c.resource_pattern_type),
        ),
        entry: AccessControlEntry {
            principal: c.principal.to_string_lossy().into_owned(),
            host: c.host.to_string_lossy().into_owned(),
            operation: AclOperation::from_code(c.operation),
            permission_type: AclPermissionType::from_code(c.permission_type),
        },
    }
}

fn result(outcome: Result<(), (ErrorCode, String)>) -> AclCreationResult {
    match outcome {
        Ok(()) => AclCreationResult::default(),
        Err((code, message)) => AclCreationResult {
            error_code: code.code(),
            error_message: Some(StrBytes::from(message)),
            ..AclCreationResult::default()
        },
    }
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    r: CreateAclsRequest,
) -> Response {
    let all = |code: ErrorCode, message: &str| {
        r.creations
            .iter()
            .map(|_| result(Err((code, message.to_string()))))
            .collect()
    };
    let results = if !apis.auth.authorize_cluster(ctx, AclOperation::Alter) {
        let code = ErrorCode::ClusterAuthorizationFailed;
        all(code, code.message())
    } else if let Some(authorizer) = apis.auth.authorizer() {
        let bindings: Vec<AclBinding> = r.creations.iter().map(binding_of).collect();
        let mut outcomes: Vec<Option<Result<(), (ErrorCode, String)>>> = bindings
            .iter()
            .map(|b| {
                let invalid = |m: &str| Some(Err((ErrorCode::InvalidRequest, m.to_string())));
                if ctx.api_version == 0 && b.pattern.pattern_type != PatternType::Literal {
                    Some(Err((
                        ErrorCode::UnsupportedVersion,
                        "Version 0 only supports literal resource pattern types".to_string(),
                    )))
                } else if b.pattern.resource_type == ResourceType::Cluster
                    && b.pattern.name != CLUSTER_NAME
                {
                    invalid("The only valid name for the CLUSTER resource is kafka-cluster")
                } else if b.pattern.name.is_empty() {
                    invalid("Invalid empty resource name")
                } else {
                    None
                }
            })
            .collect();
        let valid: Vec<AclBinding> = bindings
            .iter()
            .zip(&outcomes)
            .filter(|(_, o)| o.is_none())
            .map(|(b, _)| b.clone())
            .collect();
        let mut created = authorizer.create_acls(&valid).await.into_iter();
        for o in outcomes.iter_mut().filter(|o| o.is_none()) {
            *o = created.next();
        }
        outcomes
            .into_iter()
            .map(|o| result(o.unwrap_or(Ok(()))))
            .collect()
    } else {
        all(ErrorCode::SecurityDisabled, NO_AUTHORIZER)
    };
    ctx.respond(ResponseKind::CreateAcls(CreateAclsResponse {
        results,
        ..CreateAclsResponse::default()
    }))
}
