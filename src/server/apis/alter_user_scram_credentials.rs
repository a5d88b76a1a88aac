//! AlterUserScramCredentials (api 51; Kafka's `KafkaApis.handleAlterUserScramCredentialsRequest`
//! in ZooKeeper mode): sets and removes users' SCRAM credentials in `/config/users`
//! (`server/user_scram_admin.rs` has Kafka's checks and the merge). Only the active controller
//! alters: any other broker answers NOT_CONTROLLER for every user named, and the client asks
//! the controller. Upsertions carry a salt and the salted password, never the password.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::alter_user_scram_credentials_request::AlterUserScramCredentialsRequest;
use crate::protocol::messages::alter_user_scram_credentials_response::{
    AlterUserScramCredentialsResponse, AlterUserScramCredentialsResult,
};
use crate::security::acl::AclOperation;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::user_scram_admin::{AlterResult, Deletion, Upsertion};

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AlterUserScramCredentialsRequest,
) -> Response {
    let upsertions: Vec<Upsertion> = request
        .upsertions
        .iter()
        .map(|u| Upsertion {
            name: u.name.to_string_lossy().into_owned(),
            mechanism: u.mechanism,
            iterations: u.iterations,
            salt: u.salt.to_vec(),
            salted_password: u.salted_password.to_vec(),
        })
        .collect();
    let deletions: Vec<Deletion> = request
        .deletions
        .iter()
        .map(|d| Deletion {
            name: d.name.to_string_lossy().into_owned(),
            mechanism: d.mechanism,
        })
        .collect();
    // Kafka checks the controller first, then authorizes ALTER on the CLUSTER resource
    // (CLUSTER_AUTHORIZATION_FAILED for every user through `every_user`).
    let results = if !apis.controller.is_active() {
        every_user(&upsertions, &deletions, ErrorCode::NotController)
    } else if !apis.auth.authorize_cluster(ctx, AclOperation::Alter) {
        every_user(
            &upsertions,
            &deletions,
            ErrorCode::ClusterAuthorizationFailed,
        )
    } else {
        apis.user_scram_admin.alter(&upsertions, &deletions).await
    };
    ctx.respond(ResponseKind::AlterUserScramCredentials(
        AlterUserScramCredentialsResponse {
            results: results
                .into_iter()
                .map(|r| AlterUserScramCredentialsResult {
                    user: r.user.into(),
                    error_code: r.error.code(),
                    error_message: r.message.map(Into::into),
                    ..AlterUserScramCredentialsResult::default()
                })
                .collect(),
            ..AlterUserScramCredentialsResponse::default()
        },
    ))
}

/// Kafka's `AlterUserScramCredentialsRequest.getErrorResponse`: each user named, once, sorted,
/// with `error` and its default message.
pub(crate) fn every_user(
    upsertions: &[Upsertion],
    deletions: &[Deletion],
    error: ErrorCode,
) -> Vec<AlterResult> {
    let users: std::collections::BTreeSet<&str> = deletions
        .iter()
        .map(|d| d.name.as_str())
        .chain(upsertions.iter().map(|u| u.name.as_str()))
        .collect();
    users
        .into_iter()
        .map(|user| AlterResult {
            user: user.to_string(),
            error,
            message: Some(error.message().to_string()),
        })
        .collect()
}
