//! AlterClientQuotas (api 49; Kafka's `KafkaApis.handleAlterClientQuotasRequest` in ZooKeeper
//! mode): any broker applies each entry to `/config/{users,clients,ips}` and writes its change
//! notification, so every broker's config change listener delivers it to the quota handlers
//! (`server/client_quota_admin.rs` has Kafka's rules and errors). ALTER_CONFIGS on the cluster
//! is required: without it every entry fails with CLUSTER_AUTHORIZATION_FAILED. Each entry's
//! result echoes its entity as sent.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::alter_client_quotas_request::AlterClientQuotasRequest;
use crate::protocol::messages::alter_client_quotas_response::{
    AlterClientQuotasResponse, EntityData, EntryData,
};
use crate::security::acl::AclOperation;

use super::super::client_quota_admin::QuotaAlteration;
use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

fn echoed(
    request: &AlterClientQuotasRequest,
    outcomes: Vec<(ErrorCode, Option<String>)>,
) -> AlterClientQuotasResponse {
    AlterClientQuotasResponse {
        entries: request
            .entries
            .iter()
            .zip(outcomes)
            .map(|(entry, (error, message))| EntryData {
                error_code: error.code(),
                error_message: message.map(Into::into),
                entity: entry
                    .entity
                    .iter()
                    .map(|e| EntityData {
                        entity_type: e.entity_type.clone(),
                        entity_name: e.entity_name.clone(),
                        ..EntityData::default()
                    })
                    .collect(),
                ..EntryData::default()
            })
            .collect(),
        ..AlterClientQuotasResponse::default()
    }
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AlterClientQuotasRequest,
) -> Response {
    if !apis.auth.authorize_cluster(ctx, AclOperation::AlterConfigs) {
        let error = ErrorCode::ClusterAuthorizationFailed;
        let outcomes = vec![(error, Some(error.message().to_string())); request.entries.len()];
        return ctx.respond(ResponseKind::AlterClientQuotas(echoed(&request, outcomes)));
    }
    let alterations: Vec<QuotaAlteration> = request
        .entries
        .iter()
        .map(|entry| QuotaAlteration {
            entity: entry
                .entity
                .iter()
                .map(|e| {
                    (
                        e.entity_type.to_string_lossy().into_owned(),
                        e.entity_name
                            .as_ref()
                            .map(|n| n.to_string_lossy().into_owned()),
                    )
                })
                .collect(),
            ops: entry
                .ops
                .iter()
                .map(|op| {
                    (
                        op.key.to_string_lossy().into_owned(),
                        (!op.remove).then_some(op.value),
                    )
                })
                .collect(),
        })
        .collect();
    let outcomes = apis
        .client_quota_admin
        .alter(&alterations, request.validate_only)
        .await
        .into_iter()
        .map(|outcome| match outcome {
            Ok(()) => (ErrorCode::None, None),
            Err(err) => (err.code(), Some(err.to_string())),
        })
        .collect();
    ctx.respond(ResponseKind::AlterClientQuotas(echoed(&request, outcomes)))
}
