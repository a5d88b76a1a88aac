//! CreateTopics (Kafka's `handleCreateTopicsRequest` and `ZkAdminManager.createTopics`), every
//! version. Each topic is checked and created on its own, in request order: a name given twice
//! is INVALID_REQUEST for every entry of it, `__cluster_metadata` is refused, then the topic
//! manager applies Kafka's checks (exists, null configs, partitions/replication factor (`-1`:
//! the broker default) or a manual assignment, name, collisions, assignment, configs) and
//! creates it, or only checks when `validate_only`. v5+ answers carry the partition count,
//! replication factor and every topic config with its source; v7 the topic id.
//!
//! Kafka waits up to `timeout_ms` for the new topics' metadata to reach the brokers and answers
//! REQUEST_TIMED_OUT for a topic that is created but not yet everywhere; a timeout of zero or
//! less answers so at once although the topics are created. The single-node broker has the
//! metadata at once, so only the zero timeout gives REQUEST_TIMED_OUT.
//!
//! The controller mutation quota (KIP-599) counts each created topic's partitions; from v6 a
//! topic over it is refused with THROTTLING_QUOTA_EXCEEDED, before v6 it is created and the
//! response only throttled.

use std::collections::BTreeMap;

use crate::network::Response;
use crate::protocol::codec::{StrBytes, Uuid};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
use crate::protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult, CreateTopicsResponse,
};

use super::super::config_entries::BrokerLevels;
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::quota::controller_mutation_quota::ControllerMutationQuota;
use super::super::request_context::RequestContext;
use super::super::topic_manager::{CreatedTopic, NewTopic, TopicError};

/// Kafka's `Topic.CLUSTER_METADATA_TOPIC_NAME`, the KRaft log, which no client may create.
const CLUSTER_METADATA_TOPIC_NAME: &str = "__cluster_metadata";

/// The first version whose topics the controller mutation quota refuses (Kafka's
/// `strictSinceVersion`); older ones are only throttled.
const STRICT_SINCE_VERSION: i16 = 6;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: CreateTopicsRequest,
) -> Response {
    let mut results = Vec::with_capacity(request.topics.len());
    if !apis.controller.is_active() {
        // ZooKeeper mode: only the controller creates topics; clients send it there next.
        results.extend(request.topics.iter().map(|t| CreatableTopicResult {
            name: t.name.clone(),
            error_code: ErrorCode::NotController.code(),
            ..CreatableTopicResult::default()
        }));
        return ctx.respond(ResponseKind::CreateTopics(CreateTopicsResponse {
            topics: results,
            ..CreateTopicsResponse::default()
        }));
    }
    let may_create_any = apis.auth.authorize_cluster(ctx, AclOperation::Create);
    let mut quota = ctx.quotas.controller_mutation.new_quota_for(
        &ctx.principal.name,
        &ctx.client_id,
        ctx.api_version,
        STRICT_SINCE_VERSION,
    );
    for topic in &request.topics {
        let name = topic.name.to_string_lossy().into_owned();
        let mut result = CreatableTopicResult {
            name: topic.name.clone(),
            ..CreatableTopicResult::default()
        };
        let given = request
            .topics
            .iter()
            .filter(|t| t.name == topic.name)
            .count();
        let outcome = if name == CLUSTER_METADATA_TOPIC_NAME {
            Err((
                ErrorCode::InvalidRequest,
                Some(format!(
                    "Creation of internal topic {CLUSTER_METADATA_TOPIC_NAME} is prohibited."
                )),
            ))
        } else if given > 1 {
            Err((
                ErrorCode::InvalidRequest,
                Some("Found multiple entries for this topic.".to_string()),
            ))
        } else if !may_create_any
            && !apis
                .auth
                .authorize(ctx, AclOperation::Create, ResourceType::Topic, &name)
        {
            Err((
                ErrorCode::TopicAuthorizationFailed,
                Some("Authorization failed.".to_string()),
            ))
        } else {
            create(apis, &name, topic, request.validate_only, &mut quota)
                .await
                .map_err(|e| api_error(&e))
        };
        match outcome {
            // Kafka answers a zero timeout before looking at what it created.
            Ok(_) if request.timeout_ms <= 0 && !request.validate_only => {
                result.error_code = ErrorCode::RequestTimedOut.code();
                result.error_message = None;
                result.configs = Some(Vec::new());
            }
            Ok(created)
                if !request.validate_only
                    && !wait_for_leaders(apis, &name, &created, request.timeout_ms).await =>
            {
                // Kafka's DelayedCreatePartitions expired before every leader was known.
                result.error_code = ErrorCode::RequestTimedOut.code();
                result.error_message = None;
                result.configs = Some(Vec::new());
            }
            Ok(created) => {
                result.error_message = None;
                result.num_partitions = created.num_partitions;
                result.replication_factor = created.replication_factor;
                result.configs = Some(topic_configs(apis, &created, topic));
                if !request.validate_only {
                    result.topic_id = created.topic_id;
                }
            }
            Err((code, message)) => {
                result.error_code = code.code();
                result.error_message = message.map(StrBytes::from);
                result.configs = Some(Vec::new());
                result.topic_id = Uuid::nil();
            }
        }
        results.push(result);
    }
    let response = CreateTopicsResponse {
        topics: results,
        ..CreateTopicsResponse::default()
    };
    ctx.respond_with_controller_quota(ResponseKind::CreateTopics(response), &quota)
}

async fn create(
    apis: &KafkaApis,
    name: &str,
    topic: &CreatableTopic,
    validate_only: bool,
    quota: &mut ControllerMutationQuota<'_>,
) -> Result<CreatedTopic, TopicError> {
    if apis.metadata_cache.contains_topic(name) {
        return Err(TopicError::TopicAlreadyExists(name.to_string()));
    }
    let nulls: Vec<String> = topic
        .configs
        .iter()
        .filter(|c| c.value.is_none())
        .map(|c| c.name.to_string_lossy().into_owned())
        .collect();
    if !nulls.is_empty() {
        return Err(TopicError::InvalidConfig(format!(
            "Null value not supported for topic configs: {}",
            nulls.join(",")
        )));
    }
    let new_topic = NewTopic {
        name: name.to_string(),
        num_partitions: topic.num_partitions,
        replication_factor: topic.replication_factor,
        // A partition given twice keeps its last assignment, as Kafka's map does.
        assignment: topic
            .assignments
            .iter()
            .map(|a| (a.partition_index, a.broker_ids.clone()))
            .collect(),
        configs: configs_of(topic),
    };
    apis.topic_manager
        .create_topic(&new_topic, validate_only, quota)
        .await
}

/// Waits up to the request's timeout until this broker's metadata has a leader for every
/// partition of the new topic.
async fn wait_for_leaders(
    apis: &KafkaApis,
    name: &str,
    created: &CreatedTopic,
    timeout_ms: i32,
) -> bool {
    let partitions = usize::try_from(created.num_partitions).unwrap_or(0);
    let timeout = std::time::Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
    apis.topic_manager
        .wait_for_leaders(name, partitions, timeout)
        .await
}

fn configs_of(topic: &CreatableTopic) -> BTreeMap<String, String> {
    topic
        .configs
        .iter()
        .filter_map(|c| {
            let value = c.value.as_ref()?;
            Some((
                c.name.to_string_lossy().into_owned(),
                value.to_string_lossy().into_owned(),
            ))
        })
        .collect()
}

/// The v5+ config list: every topic config, as DescribeConfigs would list it without synonyms.
fn topic_configs(
    apis: &KafkaApis,
    created: &CreatedTopic,
    topic: &CreatableTopic,
) -> Vec<CreatableTopicConfigs> {
    let layers = apis.dynamic_config.layers();
    let levels = BrokerLevels {
        static_config: apis.dynamic_config.static_config(),
        layers: &layers,
    };
    levels
        .topic_entries(&created.config, &configs_of(topic))
        .into_iter()
        .map(|e| CreatableTopicConfigs {
            name: StrBytes::from(e.name),
            value: e.value.map(StrBytes::from),
            read_only: e.read_only,
            config_source: e.source,
            is_sensitive: e.is_sensitive,
            ..CreatableTopicConfigs::default()
        })
        .collect()
}

/// Kafka's `ApiError.fromThrowable`: the code, and the message unless it is the code's default
/// one (or the error is an unexpected one, whose details Kafka keeps to its log).
pub(crate) fn api_error(e: &TopicError) -> (ErrorCode, Option<String>) {
    let code = e.error_code();
    if code == ErrorCode::UnknownServerError {
        tracing::error!(%e, "topic operation failed");
        return (code, None);
    }
    let message = e.to_string();
    if message == code.message() {
        (code, None)
    } else {
        (code, Some(message))
    }
}
