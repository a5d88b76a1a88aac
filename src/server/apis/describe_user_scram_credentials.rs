//! DescribeUserScramCredentials (api 50; Kafka's `KafkaApis.handleDescribeUserScramCredentialsRequest`
//! in ZooKeeper mode): any broker reads `/config/users` and answers each user's SCRAM mechanisms
//! and iteration counts, never the salts or keys (`server/user_scram_admin.rs` has Kafka's
//! rules: null or empty users = every user with a credential, sorted; named users in request
//! order, RESOURCE_NOT_FOUND for one without a credential, DUPLICATE_RESOURCE for one named twice).

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_user_scram_credentials_request::DescribeUserScramCredentialsRequest;
use crate::protocol::messages::describe_user_scram_credentials_response::{
    CredentialInfo, DescribeUserScramCredentialsResponse, DescribeUserScramCredentialsResult,
};
use crate::security::acl::AclOperation;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::user_scram_admin::DescribeOutcome;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DescribeUserScramCredentialsRequest,
) -> Response {
    // Kafka authorizes DESCRIBE on the CLUSTER resource first; without it the answer is
    // `error_code` CLUSTER_AUTHORIZATION_FAILED at the top level and no results.
    if !apis.auth.authorize_cluster(ctx, AclOperation::Describe) {
        return ctx.respond(ResponseKind::DescribeUserScramCredentials(
            DescribeUserScramCredentialsResponse {
                error_code: ErrorCode::ClusterAuthorizationFailed.code(),
                ..DescribeUserScramCredentialsResponse::default()
            },
        ));
    }
    let users: Option<Vec<String>> = request.users.as_ref().map(|users| {
        users
            .iter()
            .map(|u| u.name.to_string_lossy().into_owned())
            .collect()
    });
    let response = match apis.user_scram_admin.describe(users.as_deref()).await {
        DescribeOutcome::Results(results) => DescribeUserScramCredentialsResponse {
            results: results
                .into_iter()
                .map(|r| DescribeUserScramCredentialsResult {
                    user: r.user.into(),
                    error_code: r.error.code(),
                    error_message: r.message.map(Into::into),
                    credential_infos: r
                        .credentials
                        .into_iter()
                        .map(|(mechanism, iterations)| CredentialInfo {
                            mechanism: mechanism.mechanism_type(),
                            iterations,
                            ..CredentialInfo::default()
                        })
                        .collect(),
                    ..DescribeUserScramCredentialsResult::default()
                })
                .collect(),
            ..DescribeUserScramCredentialsResponse::default()
        },
        DescribeOutcome::Failed { error, message } => DescribeUserScramCredentialsResponse {
            error_code: error.code(),
            error_message: Some(message.into()),
            ..DescribeUserScramCredentialsResponse::default()
        },
    };
    ctx.respond(ResponseKind::DescribeUserScramCredentials(response))
}
