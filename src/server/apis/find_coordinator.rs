//! FindCoordinator: which broker coordinates a consumer group or a transactional id: the leader
//! of the key's partition of `__consumer_offsets` or `__transaction_state` (`partitionFor`).
//! The first lookup of either kind creates its topic, as Kafka's auto-creation does:
//! - `__consumer_offsets`: `offsets.topic.num.partitions` partitions, compacted,
//!   `compression.type=producer`, `segment.bytes` = `offsets.topic.segment.bytes`;
//! - `__transaction_state`: `transaction.state.log.num.partitions` partitions, replication
//!   factor `transaction.state.log.replication.factor`, compacted, uncompressed, no unclean
//!   election, `min.insync.replicas` = `transaction.state.log.min.isr`, `segment.bytes` =
//!   `transaction.state.log.segment.bytes`.
//!
//! The single-node broker creates them with replication factor (and min ISR) 1, since there is
//! only one broker to hold them, as Kafka's quick-start config does, and answers once their
//! partitions are loaded; a cluster answers COORDINATOR_NOT_AVAILABLE until the new partitions
//! have leaders, which clients retry. A transactional id needs DESCRIBE on it, else
//! TRANSACTIONAL_ID_AUTHORIZATION_FAILED. v4+ look up several keys at once.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use crate::protocol::messages::find_coordinator_response::{Coordinator, FindCoordinatorResponse};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::topic_manager::{ADMIN_WAIT, NewTopic, TopicError};
use crate::cluster::{GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME};

const GROUP: i8 = 0;
const TRANSACTION: i8 = 1;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: FindCoordinatorRequest,
) -> Response {
    match request.key_type {
        GROUP => ensure_offsets_topic(apis, ctx).await,
        TRANSACTION => ensure_transaction_topic(apis, ctx).await,
        _ => {}
    }
    let keys: Vec<StrBytes> = if ctx.api_version >= 4 {
        request.coordinator_keys.clone()
    } else {
        vec![request.key.clone()]
    };
    let coordinators: Vec<Coordinator> = keys
        .into_iter()
        .map(|key| lookup(apis, ctx, request.key_type, key))
        .collect();
    let response = if ctx.api_version >= 4 {
        FindCoordinatorResponse {
            coordinators,
            ..FindCoordinatorResponse::default()
        }
    } else {
        let c = coordinators.into_iter().next().unwrap_or_default();
        FindCoordinatorResponse {
            error_code: c.error_code,
            error_message: if ctx.api_version >= 1 {
                c.error_message
            } else {
                None
            },
            node_id: c.node_id,
            host: c.host,
            port: c.port,
            ..FindCoordinatorResponse::default()
        }
    };
    ctx.respond(ResponseKind::FindCoordinator(response))
}

/// Creates `__consumer_offsets` if it does not exist yet, and loads its (empty) partitions.
async fn ensure_offsets_topic(apis: &KafkaApis, ctx: &RequestContext) {
    if apis
        .metadata_cache
        .contains_topic(GROUP_METADATA_TOPIC_NAME)
    {
        return;
    }
    let config = &apis.config;
    // Single-node mode (no zookeeper.connect): one broker can hold one replica.
    let replication_factor = if config.zookeeper_connect.is_none() {
        1
    } else {
        config.offsets_topic_replication_factor
    };
    let topic = NewTopic {
        name: GROUP_METADATA_TOPIC_NAME.to_string(),
        num_partitions: config.offsets_topic_num_partitions,
        replication_factor,
        configs: [
            ("cleanup.policy", "compact".to_string()),
            ("compression.type", "producer".to_string()),
            (
                "segment.bytes",
                config.offsets_topic_segment_bytes.to_string(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        ..NewTopic::default()
    };
    // Groups of the new partitions answer COORDINATOR_LOAD_IN_PROGRESS (retried by clients)
    // until the partitions are loaded, not NOT_COORDINATOR.
    // (Single-node: in a cluster each partition's leader marks and loads it on LeaderAndIsr.)
    let manager = &apis.group_coordinator.manager;
    if config.zookeeper_connect.is_none() {
        for p in 0..config.offsets_topic_num_partitions {
            manager.mark_loading_if_unknown(p);
        }
    }
    // Kafka counts an internal topic against the client's controller mutation quota.
    let mut quota = ctx.permissive_mutation_quota();
    match apis
        .topic_manager
        .create_topic(&topic, false, &mut quota)
        .await
    {
        // In a cluster the leaders load their partitions when the controller's LeaderAndIsr
        // makes them leaders; until then FindCoordinator answers COORDINATOR_NOT_AVAILABLE.
        Ok(created) if config.zookeeper_connect.is_some() => {
            tracing::info!(
                partitions = created.num_partitions,
                "created __consumer_offsets"
            );
        }
        Ok(created) => {
            tracing::info!(
                partitions = created.num_partitions,
                "created __consumer_offsets"
            );
            let count = usize::try_from(created.num_partitions).unwrap_or(0);
            apis.topic_manager
                .wait_for_leaders(GROUP_METADATA_TOPIC_NAME, count, ADMIN_WAIT)
                .await;
            // The controller's LeaderAndIsr made this broker their leader, which loads them
            // (empty: at once); the answer waits for that, so a single broker's first group
            // request finds its coordinator ready.
            let deadline = tokio::time::Instant::now() + ADMIN_WAIT;
            while (0..created.num_partitions).any(|p| !manager.is_partition_loaded(p))
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
        // Another request created it; its creator loads the partitions.
        Err(TopicError::TopicAlreadyExists(_)) => {}
        Err(e) => {
            tracing::warn!(err = %e, "cannot create __consumer_offsets");
            for p in 0..config.offsets_topic_num_partitions {
                manager.forget_partition(p);
            }
        }
    }
}

/// Creates `__transaction_state` if it does not exist yet; a single broker waits until its
/// partitions are loaded.
async fn ensure_transaction_topic(apis: &KafkaApis, ctx: &RequestContext) {
    if apis
        .metadata_cache
        .contains_topic(TRANSACTION_STATE_TOPIC_NAME)
    {
        return;
    }
    let config = &apis.config;
    let single_node = config.zookeeper_connect.is_none();
    let (replication_factor, min_isr) = if single_node {
        (1, 1)
    } else {
        (
            config.transaction_state_log_replication_factor,
            config.transaction_state_log_min_isr,
        )
    };
    let topic = NewTopic {
        name: TRANSACTION_STATE_TOPIC_NAME.to_string(),
        num_partitions: config.transaction_state_log_num_partitions,
        replication_factor,
        configs: [
            ("cleanup.policy", "compact".to_string()),
            ("compression.type", "uncompressed".to_string()),
            ("unclean.leader.election.enable", "false".to_string()),
            ("min.insync.replicas", min_isr.to_string()),
            (
                "segment.bytes",
                config.transaction_state_log_segment_bytes.to_string(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        ..NewTopic::default()
    };
    // Kafka counts an internal topic against the client's controller mutation quota.
    let mut quota = ctx.permissive_mutation_quota();
    match apis
        .topic_manager
        .create_topic(&topic, false, &mut quota)
        .await
    {
        Ok(created) => {
            tracing::info!(
                partitions = created.num_partitions,
                "created __transaction_state"
            );
            if single_node {
                let count = usize::try_from(created.num_partitions).unwrap_or(0);
                apis.topic_manager
                    .wait_for_leaders(TRANSACTION_STATE_TOPIC_NAME, count, ADMIN_WAIT)
                    .await;
                let manager = apis.txn_coordinator.state_manager();
                let deadline = tokio::time::Instant::now() + ADMIN_WAIT;
                while (0..created.num_partitions).any(|p| !manager.is_partition_loaded(p))
                    && tokio::time::Instant::now() < deadline
                {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
        }
        Err(TopicError::TopicAlreadyExists(_)) => {}
        Err(e) => tracing::warn!(err = %e, "cannot create __transaction_state"),
    }
}

fn lookup(apis: &KafkaApis, ctx: &RequestContext, key_type: i8, key: StrBytes) -> Coordinator {
    let failed = |code: ErrorCode, message: &str| Coordinator {
        key: key.clone(),
        node_id: -1,
        host: StrBytes::default(),
        port: -1,
        error_code: code.code(),
        error_message: Some(StrBytes::from(message)),
        ..Coordinator::default()
    };
    let name = key.to_string_lossy();
    let (topic, partition) = match key_type {
        GROUP => {
            if !apis
                .auth
                .authorize(ctx, AclOperation::Describe, ResourceType::Group, &name)
            {
                return failed(
                    ErrorCode::GroupAuthorizationFailed,
                    "Group authorization failed.",
                );
            }
            (
                GROUP_METADATA_TOPIC_NAME,
                apis.group_coordinator.manager.partition_for(&name),
            )
        }
        TRANSACTION => {
            if !apis.auth.authorize(
                ctx,
                AclOperation::Describe,
                ResourceType::TransactionalId,
                &name,
            ) {
                return failed(
                    ErrorCode::TransactionalIdAuthorizationFailed,
                    "Transactional Id authorization failed.",
                );
            }
            (
                TRANSACTION_STATE_TOPIC_NAME,
                apis.txn_coordinator.partition_for(&name),
            )
        }
        _ => return failed(ErrorCode::InvalidRequest, "unknown coordinator key type"),
    };
    let leader = apis
        .metadata_cache
        .partition(topic, partition)
        .map_or(-1, |p| p.leader);
    let me = leader;
    let endpoint = apis
        .metadata_cache
        .alive_brokers()
        .into_iter()
        .find(|b| b.id == leader)
        .and_then(|b| b.endpoint(&ctx.listener_name).cloned());
    match endpoint {
        Some(e) => Coordinator {
            key,
            node_id: me,
            host: StrBytes::from(e.host.as_str()),
            port: e.port,
            error_code: ErrorCode::None.code(),
            error_message: None,
            ..Coordinator::default()
        },
        None => failed(
            ErrorCode::CoordinatorNotAvailable,
            "The coordinator is not available.",
        ),
    }
}
