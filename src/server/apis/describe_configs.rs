//! DescribeConfigs (Kafka's `ConfigHelper.describeConfigs`): the configs of topics and of this
//! broker, each with its value, source, read-only flag, type (v3+) and, when asked (v1+), its
//! synonyms; see [`config_entries`](super::super::config_entries) for how sources are found.
//! `configuration_keys` (when non-empty) picks the keys to list. A `BROKER` resource is named
//! by this broker's id (everything in force) or `""` (only the cluster-wide dynamic defaults).
//! Documentation is null: kcli carries no doc text. kcli has no log4j loggers to list, so a
//! valid `BROKER_LOGGER` resource lists none, and it stores no client-metrics subscriptions.
//!
//! v0 has no source field, only `is_default`, which Kafka 3.9's `ConfigHelper` never sets: it is
//! false for every config, and so it is here (clients of v0 read the same answer from both).

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_configs_request::{
    DescribeConfigsRequest, DescribeConfigsResource,
};
use crate::protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResponse, DescribeConfigsResult,
    DescribeConfigsSynonym,
};

use super::super::config_entries::{BrokerLevels, Entry};
use super::super::config_ops::{
    RESOURCE_BROKER, RESOURCE_BROKER_LOGGER, RESOURCE_CLIENT_METRICS, RESOURCE_TOPIC,
};
use crate::security::acl::AclOperation;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::topic_validation::validate_topic_name;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DescribeConfigsRequest,
) -> Response {
    let known = |t: i8| {
        matches!(
            t,
            RESOURCE_TOPIC | RESOURCE_BROKER | RESOURCE_BROKER_LOGGER | RESOURCE_CLIENT_METRICS
        )
    };
    // Kafka's handler throws on an unknown resource type before describing anything, so every
    // resource gets the request's error.
    let results = if request.resources.iter().all(|r| known(r.resource_type)) {
        // Kafka's order: the described resources, then those the principal may not
        // DescribeConfigs (TOPIC_ or CLUSTER_AUTHORIZATION_FAILED).
        let mut denied = Vec::new();
        let mut results: Vec<DescribeConfigsResult> = Vec::new();
        for r in &request.resources {
            match apis.auth.config_resource_denied(
                ctx,
                AclOperation::DescribeConfigs,
                r.resource_type,
                &r.resource_name.to_string_lossy(),
            ) {
                Some(code) => denied.push(DescribeConfigsResult {
                    error_code: code.code(),
                    error_message: Some(StrBytes::from(code.message())),
                    resource_type: r.resource_type,
                    resource_name: r.resource_name.clone(),
                    ..DescribeConfigsResult::default()
                }),
                None => results.push(describe(apis, ctx, &request, r)),
            }
        }
        results.extend(denied);
        results
    } else {
        request
            .resources
            .iter()
            .map(|r| DescribeConfigsResult {
                error_code: ErrorCode::InvalidRequest.code(),
                error_message: Some(StrBytes::from(ErrorCode::InvalidRequest.message())),
                resource_type: r.resource_type,
                resource_name: r.resource_name.clone(),
                ..DescribeConfigsResult::default()
            })
            .collect()
    };
    let response = DescribeConfigsResponse {
        results,
        ..DescribeConfigsResponse::default()
    };
    ctx.respond(ResponseKind::DescribeConfigs(response))
}

/// A resource's failure: the code and Kafka's message.
type Failure = (ErrorCode, Option<String>);

fn describe(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: &DescribeConfigsRequest,
    resource: &DescribeConfigsResource,
) -> DescribeConfigsResult {
    let mut result = DescribeConfigsResult {
        resource_type: resource.resource_type,
        resource_name: resource.resource_name.clone(),
        ..DescribeConfigsResult::default()
    };
    match entries(apis, resource) {
        Ok(entries) => {
            let wanted = resource
                .configuration_keys
                .as_ref()
                .filter(|k| !k.is_empty());
            result.configs = entries
                .into_iter()
                .filter(|e| wanted.is_none_or(|keys| keys.iter().any(|k| *k == e.name.as_str())))
                .map(|e| to_wire(e, ctx.api_version, request.include_synonyms))
                .collect();
        }
        Err((code, message)) => {
            result.error_code = code.code();
            // Kafka leaves the message at its empty default for an unknown topic.
            if let Some(m) = message {
                result.error_message = Some(StrBytes::from(m));
            }
        }
    }
    result
}

fn entries(apis: &KafkaApis, resource: &DescribeConfigsResource) -> Result<Vec<Entry>, Failure> {
    let name = resource.resource_name.to_string_lossy().into_owned();
    let broker_id = apis.config.broker_id;
    let invalid = |m: String| (ErrorCode::InvalidRequest, Some(m));
    let parse_id = |name: &str| {
        name.parse::<i32>()
            .map_err(|_| invalid(format!("Broker id must be an integer, but it is: {name}")))
    };
    let layers = apis.dynamic_config.layers();
    let levels = BrokerLevels {
        static_config: apis.dynamic_config.static_config(),
        layers: &layers,
    };
    match resource.resource_type {
        RESOURCE_TOPIC => {
            validate_topic_name(&name).map_err(|m| (ErrorCode::InvalidTopicException, Some(m)))?;
            if !apis.metadata_cache.contains_topic(&name) {
                return Err((ErrorCode::UnknownTopicOrPartition, None));
            }
            let config = apis
                .topic_manager
                .topic_log_config(&name)
                .map_err(|e| super::create_topics::api_error(&e))?;
            Ok(levels.topic_entries(&config, &apis.topic_manager.topic_overrides(&name)))
        }
        RESOURCE_BROKER if name.is_empty() => Ok(levels.cluster_default_entries()),
        RESOURCE_BROKER if parse_id(&name)? == broker_id => Ok(levels.broker_entries()),
        RESOURCE_BROKER => Err(invalid(format!(
            "Unexpected broker id, expected {broker_id} or empty string, but received {name}"
        ))),
        RESOURCE_BROKER_LOGGER if name.is_empty() => {
            Err(invalid("Broker id must not be empty".into()))
        }
        RESOURCE_BROKER_LOGGER if parse_id(&name)? != broker_id => Err(invalid(format!(
            "Unexpected broker id, expected {broker_id} but received {name}"
        ))),
        RESOURCE_CLIENT_METRICS if name.is_empty() => Err(invalid(
            "Client metrics subscription name must not be empty".into(),
        )),
        _ => Ok(Vec::new()),
    }
}

fn to_wire(e: Entry, version: i16, include_synonyms: bool) -> DescribeConfigsResourceResult {
    let synonyms = if include_synonyms && version >= 1 {
        e.synonyms
            .into_iter()
            .map(|s| DescribeConfigsSynonym {
                name: StrBytes::from(s.name),
                value: s.value.map(StrBytes::from),
                source: s.source,
                ..DescribeConfigsSynonym::default()
            })
            .collect()
    } else {
        Vec::new()
    };
    DescribeConfigsResourceResult {
        name: StrBytes::from(e.name),
        value: e.value.map(StrBytes::from),
        read_only: e.read_only,
        is_default: false,
        config_source: e.source,
        is_sensitive: e.is_sensitive,
        synonyms,
        config_type: e.config_type,
        documentation: None,
        ..DescribeConfigsResourceResult::default()
    }
}
