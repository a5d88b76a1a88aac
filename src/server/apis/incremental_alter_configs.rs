//! IncrementalAlterConfigs (Kafka's `handleIncrementalAlterConfigsRequest`,
//! `ConfigAdminManager.preprocess` and `ZkAdminManager.incrementalAlterConfigs`): each
//! resource's stored configs change only as its operations say: SET, DELETE, and APPEND or
//! SUBTRACT on list configs (see [`config_ops`](super::super::config_ops)). Preprocessing is
//! AlterConfigs' (each resource once, each key once, no null value outside DELETE; broker ids
//! and broker changes checked, INVALID_REQUEST), then the changed configs are written as
//! AlterConfigs writes them.
//!
//! `BROKER_LOGGER` resources change log4j levels in Kafka; kcli has no log4j loggers, so after
//! Kafka's own checks every logger named is one that does not exist.

use crate::config::defs::{self, Kind};
use crate::config::synonyms::topic_config;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, IncrementalAlterConfigsRequest,
};
use crate::protocol::messages::incremental_alter_configs_response::{
    AlterConfigsResourceResponse, IncrementalAlterConfigsResponse,
};
use crate::storage::log_config::LogConfig;

use super::super::config_ops::{
    AlterConfigOp, KeyInfo, OpError, OpType, RESOURCE_BROKER, RESOURCE_BROKER_LOGGER,
    RESOURCE_CLIENT_METRICS, RESOURCE_TOPIC, check_entries, prepare_incremental_configs,
};
use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::alter_configs::{
    Failure, alter_broker, alter_each_resource, alter_topic, broker_level, invalid_request,
    only_topics_and_brokers, preprocess_broker,
};

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: IncrementalAlterConfigsRequest,
) -> Response {
    let responses = alter_each_resource!(apis, ctx, &request, alter, AlterConfigsResourceResponse);
    let response = IncrementalAlterConfigsResponse {
        responses,
        ..IncrementalAlterConfigsResponse::default()
    };
    ctx.respond(ResponseKind::IncrementalAlterConfigs(response))
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
            c.config_operation != 1,
            c.value.is_some(),
        )
    }))
    .map_err(invalid_request)?;
    match resource.resource_type {
        RESOURCE_BROKER_LOGGER => broker_loggers(apis, &name, resource),
        RESOURCE_BROKER => {
            let level = broker_level(apis, &name)?;
            let ops = resource
                .configs
                .iter()
                .map(|c| {
                    let op = OpType::from_id(c.config_operation).ok_or_else(|| {
                        invalid_request(format!("Unknown operations type {}", c.config_operation))
                    })?;
                    Ok(op_of(c, op))
                })
                .collect::<Result<Vec<_>, Failure>>()?;
            let mut props = apis.dynamic_config.persisted(level);
            prepare_incremental_configs(&ops, &mut props, broker_key_info).map_err(op_failure)?;
            preprocess_broker(apis, &props, level)?;
            alter_broker(apis, &name, level, props, validate_only).await
        }
        RESOURCE_TOPIC => {
            if name.is_empty() {
                return Err(invalid_request("Default topic resources are not allowed."));
            }
            let mut props = apis.topic_manager.topic_overrides(&name);
            let mut ops = Vec::with_capacity(resource.configs.len());
            for c in &resource.configs {
                // Kafka fails matching an unknown operation: an unexpected error.
                let op = OpType::from_id(c.config_operation)
                    .ok_or((ErrorCode::UnknownServerError, None))?;
                ops.push(op_of(c, op));
            }
            prepare_incremental_configs(&ops, &mut props, topic_key_info).map_err(op_failure)?;
            alter_topic(apis, &name, props, validate_only).await
        }
        RESOURCE_CLIENT_METRICS => Err(only_topics_and_brokers(resource.resource_type)),
        other => Err(invalid_request(format!("Unknown resource type {other}"))),
    }
}

fn op_of(
    c: &crate::protocol::messages::incremental_alter_configs_request::AlterableConfig,
    op: OpType,
) -> AlterConfigOp {
    AlterConfigOp {
        name: c.name.to_string_lossy().into_owned(),
        op,
        value: c.value.as_ref().map(|v| v.to_string_lossy().into_owned()),
    }
}

fn op_failure(e: OpError) -> Failure {
    match e {
        OpError::UnknownKey(_) => (ErrorCode::UnknownServerError, None),
        OpError::NotAList { .. } => (ErrorCode::InvalidConfig, Some(e.to_string())),
    }
}

/// A topic key's list-ness and Kafka's topic default (not the broker's: Kafka appends to the
/// `LogConfig` default).
fn topic_key_info(name: &str) -> Option<KeyInfo> {
    let def = topic_config(name)?;
    Some(KeyInfo {
        is_list: def.kind == Kind::List,
        default: LogConfig::default().value_string(name),
    })
}

fn broker_key_info(name: &str) -> Option<KeyInfo> {
    let def = defs::find(name)?;
    Some(KeyInfo {
        is_list: def.kind == Kind::List,
        default: def.default.map(String::from),
    })
}

/// Kafka's `RuntimeLoggerManager` checks, against a broker with no log4j loggers.
fn broker_loggers(
    apis: &KafkaApis,
    name: &str,
    resource: &AlterConfigsResource,
) -> Result<(), Failure> {
    let Ok(id) = name.parse::<i32>() else {
        return Err(invalid_request(format!(
            "Node id must be an integer, but it is: {name}"
        )));
    };
    let own = apis.config.broker_id;
    if id != own {
        // Kafka's message prints its own id twice.
        return Err(invalid_request(format!(
            "Unexpected node id. Expected {own}, but received {own}"
        )));
    }
    // Every operation fails here, so the first one answers.
    let Some(c) = resource.configs.first() else {
        return Ok(());
    };
    let logger = c.name.to_string_lossy();
    Err(match OpType::from_id(c.config_operation) {
        Some(OpType::Set | OpType::Delete) => (
            ErrorCode::InvalidConfig,
            Some(format!("Logger {logger} does not exist!")),
        ),
        Some(OpType::Append) => {
            invalid_request("APPEND operation is not allowed for the BROKER_LOGGER resource")
        }
        Some(OpType::Subtract) => {
            invalid_request("SUBTRACT operation is not allowed for the BROKER_LOGGER resource")
        }
        None => invalid_request(format!(
            "Unknown operation type {} is not allowed for the BROKER_LOGGER resource",
            c.config_operation
        )),
    })
}
