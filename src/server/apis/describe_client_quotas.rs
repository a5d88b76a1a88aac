//! DescribeClientQuotas (api 48; Kafka's `KafkaApis.handleDescribeClientQuotasRequest` in
//! ZooKeeper mode): any broker reads `/config/{users,clients,ips}` and answers the entities the
//! filter selects with their quota values (`server/client_quota_admin.rs` has Kafka's filter
//! rules). DESCRIBE_CONFIGS on the cluster is required (CLUSTER_AUTHORIZATION_FAILED); a bad
//! filter is a top-level error with no entries, as Kafka's `getErrorResponse`.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_client_quotas_request::DescribeClientQuotasRequest;
use crate::protocol::messages::describe_client_quotas_response::{
    DescribeClientQuotasResponse, EntityData, EntryData, ValueData,
};
use crate::security::acl::AclOperation;

use super::super::client_quota_admin::{ComponentMatch, FilterComponent};
use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

/// The wire's `match_type`s.
const MATCH_TYPE_EXACT: i8 = 0;
const MATCH_TYPE_DEFAULT: i8 = 1;
const MATCH_TYPE_SPECIFIED: i8 = 2;

fn failed(error: ErrorCode, message: Option<String>) -> DescribeClientQuotasResponse {
    DescribeClientQuotasResponse {
        error_code: error.code(),
        error_message: message.map(Into::into),
        entries: None,
        ..DescribeClientQuotasResponse::default()
    }
}

/// Kafka's `DescribeClientQuotasRequest.filter`: an unknown match type or an exact match
/// without a name fails the request (Java's exceptions there are UNKNOWN_SERVER_ERROR).
fn components(request: &DescribeClientQuotasRequest) -> Result<Vec<FilterComponent>, String> {
    request
        .components
        .iter()
        .map(|c| {
            let matching = match (c.match_type, &c.r#match) {
                (MATCH_TYPE_EXACT, Some(name)) => {
                    ComponentMatch::Exact(name.to_string_lossy().into_owned())
                }
                (MATCH_TYPE_EXACT, None) => return Err("exact match without a name".to_string()),
                (MATCH_TYPE_DEFAULT, _) => ComponentMatch::Default,
                (MATCH_TYPE_SPECIFIED, _) => ComponentMatch::Specified,
                (other, _) => return Err(format!("Unexpected match type: {other}")),
            };
            Ok(FilterComponent {
                entity_type: c.entity_type.to_string_lossy().into_owned(),
                matching,
            })
        })
        .collect()
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DescribeClientQuotasRequest,
) -> Response {
    if !apis
        .auth
        .authorize_cluster(ctx, AclOperation::DescribeConfigs)
    {
        return ctx.respond(ResponseKind::DescribeClientQuotas(failed(
            ErrorCode::ClusterAuthorizationFailed,
            None,
        )));
    }
    let components = match components(&request) {
        Ok(c) => c,
        Err(message) => {
            return ctx.respond(ResponseKind::DescribeClientQuotas(failed(
                ErrorCode::UnknownServerError,
                Some(message),
            )));
        }
    };
    let response = match apis
        .client_quota_admin
        .describe(&components, request.strict)
        .await
    {
        Ok(described) => DescribeClientQuotasResponse {
            entries: Some(
                described
                    .into_iter()
                    .map(|(entity, values)| EntryData {
                        entity: entity
                            .wire_entries()
                            .into_iter()
                            .map(|(entity_type, name)| EntityData {
                                entity_type: entity_type.into(),
                                entity_name: name.map(Into::into),
                                ..EntityData::default()
                            })
                            .collect(),
                        values: values
                            .into_iter()
                            .map(|(key, value)| ValueData {
                                key: key.into(),
                                value,
                                ..ValueData::default()
                            })
                            .collect(),
                        ..EntryData::default()
                    })
                    .collect(),
            ),
            ..DescribeClientQuotasResponse::default()
        },
        Err(err) => failed(err.code(), Some(err.to_string())),
    };
    ctx.respond(ResponseKind::DescribeClientQuotas(response))
}
