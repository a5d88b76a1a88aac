//! CreatePartitions (Kafka's `handleCreatePartitionsRequest` and `ZkAdminManager
//! .createPartitions`): grows each topic to `count` partitions, placing the new ones as
//! `assignments` says (checked as Kafka checks them) or with Kafka's algorithm from partition
//! 0's first replica; `validate_only` checks without changing anything. A topic named twice
//! gets one INVALID_REQUEST answer.
//!
//! As with CreateTopics, Kafka answers REQUEST_TIMED_OUT for partitions created but not yet
//! known everywhere when `timeout_ms` runs out, and at once for a timeout of zero or less; the
//! single-node broker knows them at once.
//!
//! The controller mutation quota (KIP-599) counts the partitions added; from v3 a topic over it
//! is refused with THROTTLING_QUOTA_EXCEEDED, before v3 it grows and the response is only
//! throttled.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::create_partitions_request::CreatePartitionsRequest;
use crate::protocol::messages::create_partitions_response::{
    CreatePartitionsResponse, CreatePartitionsTopicResult,
};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::create_topics::api_error;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: CreatePartitionsRequest,
) -> Response {
    let mut results: Vec<CreatePartitionsTopicResult> = Vec::new();
    let mut quota = ctx.quotas.controller_mutation.new_quota_for(
        &ctx.principal.name,
        &ctx.client_id,
        ctx.api_version,
        STRICT_SINCE_VERSION,
    );
    if !apis.controller.is_active() {
        // ZooKeeper mode: only the controller adds partitions; clients send it there next.
        let results = request
            .topics
            .iter()
            .map(|t| CreatePartitionsTopicResult {
                name: t.name.clone(),
                error_code: ErrorCode::NotController.code(),
                ..CreatePartitionsTopicResult::default()
            })
            .collect();
        return ctx.respond(ResponseKind::CreatePartitions(CreatePartitionsResponse {
            results,
            ..CreatePartitionsResponse::default()
        }));
    }
    for topic in &request.topics {
        if results.iter().any(|r| r.name == topic.name) {
            continue;
        }
        let given = request
            .topics
            .iter()
            .filter(|t| t.name == topic.name)
            .count();
        let (code, message) = if given > 1 {
            (
                ErrorCode::InvalidRequest,
                Some("Duplicate topic in request.".to_string()),
            )
        } else if !apis.auth.authorize(
            ctx,
            AclOperation::Alter,
            ResourceType::Topic,
            &topic.name.to_string_lossy(),
        ) {
            (
                ErrorCode::TopicAuthorizationFailed,
                Some("The topic authorization is failed.".to_string()),
            )
        } else {
            let name = topic.name.to_string_lossy().into_owned();
            let assignments = topic
                .assignments
                .as_ref()
                .map(|list| list.iter().map(|a| a.broker_ids.clone()).collect());
            match apis
                .topic_manager
                .create_partitions(
                    &name,
                    topic.count,
                    assignments,
                    request.validate_only,
                    &mut quota,
                )
                .await
            {
                Ok(()) if request.timeout_ms <= 0 && !request.validate_only => {
                    (ErrorCode::RequestTimedOut, None)
                }
                Ok(()) if request.validate_only => (ErrorCode::None, None),
                Ok(()) => {
                    let timeout = std::time::Duration::from_millis(
                        u64::try_from(request.timeout_ms).unwrap_or(0),
                    );
                    let count = usize::try_from(topic.count).unwrap_or(0);
                    if apis
                        .topic_manager
                        .wait_for_leaders(&name, count, timeout)
                        .await
                    {
                        (ErrorCode::None, None)
                    } else {
                        (ErrorCode::RequestTimedOut, None)
                    }
                }
                Err(e) => api_error(&e),
            }
        };
        results.push(CreatePartitionsTopicResult {
            name: topic.name.clone(),
            error_code: code.code(),
            error_message: message.map(StrBytes::from),
            ..CreatePartitionsTopicResult::default()
        });
    }
    let response = CreatePartitionsResponse {
        results,
        ..CreatePartitionsResponse::default()
    };
    ctx.respond_with_controller_quota(ResponseKind::CreatePartitions(response), &quota)
}

/// The first version whose topics the controller mutation quota refuses (Kafka's
/// `strictSinceVersion`).
const STRICT_SINCE_VERSION: i16 = 3;
