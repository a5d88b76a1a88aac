//! DeleteTopics (Kafka's `handleDeleteTopicsRequest` and `ZkAdminManager.deleteTopics`): topics
//! by name, or (v6) by name or topic id. With `delete.topic.enable=false` every topic answers
//! TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3, which has no such code). An unknown
//! name is UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID; an entry with both a
//! name and an id fails the whole request with INVALID_REQUEST, as Kafka's handler throws.
//!
//! Kafka marks the topics for deletion and waits up to `timeout_ms` for the controller to
//! finish; a timeout of zero or less answers REQUEST_TIMED_OUT at once while the deletion goes
//! on. The single-node broker deletes before it answers, so only the zero timeout gives
//! REQUEST_TIMED_OUT.
//!
//! The controller mutation quota (KIP-599) counts each deleted topic's partitions; from v5 a
//! topic over it is refused with THROTTLING_QUOTA_EXCEEDED, before v5 it is deleted and the
//! response only throttled.

use crate::network::Response;
use crate::protocol::codec::{StrBytes, Uuid};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::delete_topics_request::DeleteTopicsRequest;
use crate::protocol::messages::delete_topics_response::{
    DeletableTopicResult, DeleteTopicsResponse,
};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::quota::controller_mutation_quota::ControllerMutationQuota;
use super::super::request_context::RequestContext;
use super::super::topic_manager::TopicError;

/// The first version whose topics the controller mutation quota refuses (Kafka's
/// `strictSinceVersion`).
const STRICT_SINCE_VERSION: i16 = 5;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DeleteTopicsRequest,
) -> Response {
    // Kafka's `DeleteTopicsRequest.topics()`: before v6 the names alone.
    let topics: Vec<(Option<StrBytes>, Uuid)> = if ctx.api_version >= 6 {
        request
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.topic_id))
            .collect()
    } else {
        request
            .topic_names
            .iter()
            .map(|n| (Some(n.clone()), Uuid::nil()))
            .collect()
    };
    let mut quota = ctx.quotas.controller_mutation.new_quota_for(
        &ctx.principal.name,
        &ctx.client_id,
        ctx.api_version,
        STRICT_SINCE_VERSION,
    );
    let all_failed = |code: ErrorCode| {
        topics
            .iter()
            .map(|(name, id)| DeletableTopicResult {
                name: name.clone(),
                topic_id: *id,
                error_code: code.code(),
                ..DeletableTopicResult::default()
            })
            .collect::<Vec<_>>()
    };
    let responses = if !apis.controller.is_active() {
        // ZooKeeper mode: only the controller deletes topics; clients send it there next.
        all_failed(ErrorCode::NotController)
    } else if !apis.config.delete_topic_enable {
        all_failed(if ctx.api_version < 3 {
            ErrorCode::InvalidRequest
        } else {
            ErrorCode::TopicDeletionDisabled
        })
    } else if topics
        .iter()
        .any(|(name, id)| name.is_some() && !id.is_nil())
    {
        all_failed(ErrorCode::InvalidRequest)
    } else {
        delete(apis, ctx, &topics, request.timeout_ms, &mut quota).await
    };
    let response = DeleteTopicsResponse {
        responses,
        ..DeleteTopicsResponse::default()
    };
    ctx.respond_with_controller_quota(ResponseKind::DeleteTopics(response), &quota)
}

async fn delete(
    apis: &KafkaApis,
    ctx: &RequestContext,
    topics: &[(Option<StrBytes>, Uuid)],
    timeout_ms: i32,
    quota: &mut ControllerMutationQuota<'_>,
) -> Vec<DeletableTopicResult> {
    let mut results = Vec::with_capacity(topics.len());
    let mut to_delete: Vec<String> = Vec::new();
    for (name, id) in topics {
        let resolved = if id.is_nil() {
            name.as_ref().map(|n| n.to_string_lossy().into_owned())
        } else {
            apis.metadata_cache.topic_name(*id)
        };
        let error = match &resolved {
            None if !id.is_nil() => ErrorCode::UnknownTopicId,
            // Neither a name nor an id: Kafka's authorization filter drops the null name, so
            // the entry fails authorization.
            None => ErrorCode::TopicAuthorizationFailed,
            Some(n)
                if !apis
                    .auth
                    .authorize(ctx, AclOperation::Delete, ResourceType::Topic, n) =>
            {
                ErrorCode::TopicAuthorizationFailed
            }
            Some(n) if !apis.metadata_cache.contains_topic(n) => ErrorCode::UnknownTopicOrPartition,
            Some(n) => {
                if !to_delete.contains(n) {
                    to_delete.push(n.clone());
                }
                ErrorCode::None
            }
        };
        results.push(DeletableTopicResult {
            name: resolved.map(StrBytes::from),
            topic_id: *id,
            error_code: error.code(),
            ..DeletableTopicResult::default()
        });
    }
    for topic in to_delete {
        let error = match apis.topic_manager.delete_topic(&topic, quota).await {
            Ok(_) if timeout_ms <= 0 => ErrorCode::RequestTimedOut,
            Ok(_) => ErrorCode::None,
            Err(TopicError::ThrottlingQuotaExceeded(e)) => {
                tracing::debug!(%topic, throttle_time_ms = e.throttle_time_ms, "topic deletion not allowed: the quota is violated");
                ErrorCode::ThrottlingQuotaExceeded
            }
            Err(e) => {
                tracing::warn!(%topic, %e, "topic deletion failed");
                e.error_code()
            }
        };
        // Kafka sets the outcome on the first entry of the name.
        if let Some(r) = results
            .iter_mut()
            .find(|r| r.name.as_ref().is_some_and(|n| *n == topic.as_str()))
        {
            r.error_code = error.code();
        }
    }
    results
}
