//! AlterConfigs, the legacy API (Kafka's `handleAlterConfigsRequest`,
//! `ConfigAdminManager.preprocess` and `ZkAdminManager.alterConfigs`): each resource's configs
//! are replaced by exactly the given entries (keys left out lose their override). Kafka's
//! preprocessing comes first: a resource given twice, a key given twice, a null value, an
//! unsupported resource type, a broker id other than this broker's, or a broker config the
//! broker cannot change dynamically is INVALID_REQUEST. Topics go to the topic manager
//! (`/config/topics/<t>`), brokers to the dynamic broker config (`/config/brokers/<id>`, or
//! `/config/brokers/<default>` for the resource named `""`). `validate_only` checks everything
//! and changes nothing.
//!
//! The helpers here are IncrementalAlterConfigs' too: both end in the same writes.

use std::collections::BTreeMap;

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::alter_configs_request::{AlterConfigsRequest, AlterConfigsResource};
use crate::protocol::messages::alter_configs_response::{
    AlterConfigsResourceResponse, AlterConfigsResponse,
};

use super::super::config_ops::{
    RESOURCE_BROKER, RESOURCE_CLIENT_METRICS, RESOURCE_TOPIC, check_entries, resource_type_name,
};
use super::super::dynamic_broker_config::{DynamicConfigError, DynamicLevel};
use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::topic_manager::TopicError;
use super::create_topics::api_error;

/// A resource's failure: the code and Kafka's message.
pub(crate) type Failure = (ErrorCode, Option<String>);

pub(crate) fn invalid_request(message: impl Into<String>) -> Failure {
    (ErrorCode::InvalidRequest, Some(message.into()))
}

/// The per-resource loop both AlterConfigs APIs share: each resource is answered in request
/// order, a repeated one with INVALID_REQUEST, one the principal may not AlterConfigs with
/// TOPIC_ or CLUSTER_AUTHORIZATION_FAILED (no message, as Kafka's), the others by `$alter`. A macro because the two
/// APIs' resource and response types differ only in name, and an async closure over them would
/// not be `Send`.
macro_rules! alter_each_resource {
    ($apis:expr, $ctx:expr, $request:expr, $alter:path, $response:ident) => {{
        let request = $request;
        let dups = $crate::server::config_ops::duplicate_resources(
            request
                .resources
                .iter()
                .map(|r| (r.resource_type, r.resource_name.as_bytes())),
        );
        let mut responses = Vec::with_capacity(request.resources.len());
        for (i, resource) in request.resources.iter().enumerate() {
            let denied = $apis.auth.config_resource_denied(
                $ctx,
                $crate::security::acl::AclOperation::AlterConfigs,
                resource.resource_type,
                &resource.resource_name.to_string_lossy(),
            );
            let outcome = if dups.contains(&i) {
                Err($crate::server::apis::alter_configs::invalid_request(
                    "Each resource must appear at most once.",
                ))
            } else if let Some(code) = denied {
                Err((code, None))
            } else {
                $alter($apis, resource, request.validate_only).await
            };
            let (code, message) = outcome
                .err()
                .unwrap_or(($crate::protocol::errors::ErrorCode::None, None));
            responses.push($response {
                error_code: code.code(),
                error_message: message.map($crate::protocol::codec::StrBytes::from),
                resource_type: resource.resource_type,
                resource_name: resource.resource_name.clone(),
                ..$response::default()
            });
        }
        responses
    }};
}
pub(crate) use alter_each_resource;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AlterConfigsRequest,
) -> Response {
    let responses = alter_each_resource!(apis, ctx, &request, alter, AlterConfigsResourceResponse);
    let response = AlterConfigsResponse {
        responses,
        ..AlterConfigsResponse::default()
    };
    ctx.respond(ResponseKind::AlterConfigs(response))
}

async fn alter(
    apis: &KafkaApis,
    resource: &AlterConfigsResource,
    validate_only: bool,
) -> Result<(), Failure> {
    let name = resource.resource_name.to_string_lossy().into_owned();
    check_entries(resource.configs.iter().map(|c| {
        (
            c.name.to_string_lossy().into_owned(),
            true,
            c.value.is_some(),
        )
    }))
    .map_err(invalid_request)?;
    let props: BTreeMap<String, String> = resource
        .configs
        .iter()
        .filter_map(|c| {
            Some((
                c.name.to_string_lossy().into_owned(),
                c.value.as_ref()?.to_string_lossy().into_owned(),
            ))
        })
        .collect();
    match resource.resource_type {
        RESOURCE_BROKER => {
            let level = broker_level(apis, &name)?;
            preprocess_broker(apis, &props, level)?;
            alter_broker(apis, &name, level, props, validate_only).await
        }
        RESOURCE_TOPIC => alter_topic(apis, &name, props, validate_only).await,
        RESOURCE_CLIENT_METRICS => Err(only_topics_and_brokers(resource.resource_type)),
        other => Err(invalid_request(format!("Unknown resource type {other}"))),
    }
}

pub(crate) fn only_topics_and_brokers(resource_type: i8) -> Failure {
    invalid_request(format!(
        "AlterConfigs is only supported for topics and brokers, but resource type is {}",
        resource_type_name(resource_type)
    ))
}

/// `validateResourceNameIsCurrentNodeId` for a `BROKER` resource: `""` is the cluster-wide
/// default, anything else must be this broker's id.
pub(crate) fn broker_level(apis: &KafkaApis, name: &str) -> Result<DynamicLevel, Failure> {
    if name.is_empty() {
        return Ok(DynamicLevel::ClusterDefault);
    }
    let Ok(id) = name.parse::<i32>() else {
        return Err(invalid_request(format!(
            "Node id must be an integer, but it is: {name}"
        )));
    };
    let own = apis.config.broker_id;
    if id != own {
        return Err(invalid_request(format!(
            "Unexpected broker id, expected {own}, but received {name}"
        )));
    }
    Ok(DynamicLevel::PerBroker)
}

/// Preprocessing's `validateBrokerConfigChange`: a failure is INVALID_REQUEST.
pub(crate) fn preprocess_broker(
    apis: &KafkaApis,
    props: &BTreeMap<String, String>,
    level: DynamicLevel,
) -> Result<(), Failure> {
    apis.dynamic_config
        .validate(props, level)
        .map_err(|e| invalid_request(e.to_string()))
}

/// `ZkAdminManager.alterBrokerConfigs`: stores and applies the broker layer.
pub(crate) async fn alter_broker(
    apis: &KafkaApis,
    name: &str,
    level: DynamicLevel,
    props: BTreeMap<String, String>,
    validate_only: bool,
) -> Result<(), Failure> {
    match apis.dynamic_config.alter(level, props, validate_only).await {
        Ok(()) => Ok(()),
        Err(DynamicConfigError::Invalid(m)) => Err((
            ErrorCode::InvalidConfig,
            Some(format!(
                "Invalid config value for resource ConfigResource(type=BROKER, name='{name}'): {m}"
            )),
        )),
        Err(e) => {
            tracing::error!(%e, "altering broker configs failed");
            Err((ErrorCode::UnknownServerError, None))
        }
    }
}

/// `ZkAdminManager.alterTopicConfigs`: replaces the topic's overrides with `props`.
pub(crate) async fn alter_topic(
    apis: &KafkaApis,
    topic: &str,
    props: BTreeMap<String, String>,
    validate_only: bool,
) -> Result<(), Failure> {
    if topic.is_empty() {
        return Err(invalid_request("Default topic resources are not allowed."));
    }
    match apis
        .topic_manager
        .set_topic_overrides(topic, props, validate_only)
        .await
    {
        Ok(()) => Ok(()),
        // Kafka wraps a `ConfigException` (a value that does not parse, remote storage on a
        // broker without it) with the resource.
        Err(TopicError::TopicConfig(e)) if e.is_config_exception() => Err((
            ErrorCode::InvalidConfig,
            Some(format!(
                "Invalid config value for resource ConfigResource(type=TOPIC, name='{topic}'): {e}"
            )),
        )),
        Err(e) => Err(api_error(&e)),
    }
}
