//! LeaderAndIsr (api 4, v0–7), the controller telling this broker which partitions it hosts and
//! who leads them: Kafka's `ReplicaManager.becomeLeaderOrFollower`.
//!
//! A request from an older controller epoch is refused whole (STALE_CONTROLLER_EPOCH), as is one
//! addressed to an older registration of this broker (STALE_BROKER_EPOCH). Each partition then
//! follows Kafka's checks in order: a topic id other than the log's is INCONSISTENT_TOPIC_ID; a
//! leader epoch newer than the partition's is applied if this broker is a replica (else
//! UNKNOWN_TOPIC_OR_PARTITION); an older or equal one is STALE_CONTROLLER_EPOCH and changes
//! nothing. Becoming leader of a `__consumer_offsets` partition loads its groups; becoming its
//! follower unloads them (Kafka's `onElection`/`onResignation`, at the partition's leader epoch).

use uuid::Uuid;

use crate::cluster::{LeaderAndIsr, LeaderRecoveryState, TopicPartition};
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::leader_and_isr_request::{
    LeaderAndIsrPartitionState, LeaderAndIsrRequest,
};
use crate::protocol::messages::leader_and_isr_response::{
    LeaderAndIsrPartitionError, LeaderAndIsrResponse, LeaderAndIsrTopicError,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::topic_validation::GROUP_METADATA_TOPIC_NAME;

pub async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: LeaderAndIsrRequest,
) -> Response {
    // Kafka's `authorizeClusterOperation(CLUSTER_ACTION)`: the request's error response.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::ClusterAction)
    {
        return ctx.respond(ResponseKind::LeaderAndIsr(
            crate::protocol::messages::LeaderAndIsrResponse {
                error_code: crate::protocol::errors::ErrorCode::ClusterAuthorizationFailed.code(),
                ..Default::default()
            },
        ));
    }
    let response = become_leader_or_follower(apis, ctx.api_version, request).await;
    ctx.respond(ResponseKind::LeaderAndIsr(response))
}

/// The whole of the broker's side; the in-process channel of the local controller calls it too.
pub async fn become_leader_or_follower(
    apis: &KafkaApis,
    version: i16,
    request: LeaderAndIsrRequest,
) -> LeaderAndIsrResponse {
    if apis.epochs.is_broker_epoch_stale(request.broker_epoch) {
        return whole_request_error(ErrorCode::StaleBrokerEpoch);
    }
    if !apis
        .epochs
        .accept_controller_epoch(request.controller_epoch)
    {
        tracing::warn!(
            controller = request.controller_id,
            epoch = request.controller_epoch,
            current = apis.epochs.controller_epoch(),
            "LeaderAndIsr from a stale controller"
        );
        return whole_request_error(ErrorCode::StaleControllerEpoch);
    }
    let mut results: Vec<(Uuid, LeaderAndIsrPartitionState, ErrorCode)> = Vec::new();
    let mut led_offsets_partitions = Vec::new();
    let grouped = version >= 2;
    let states: Vec<(Uuid, LeaderAndIsrPartitionState)> = if grouped {
        request
            .topic_states
            .into_iter()
            .flat_map(|t| {
                let name = t.topic_name;
                let id = t.topic_id;
                t.partition_states.into_iter().map(move |mut p| {
                    p.topic_name = name.clone();
                    (id, p)
                })
            })
            .collect()
    } else {
        request
            .ungrouped_partition_states
            .into_iter()
            .map(|p| (Uuid::nil(), p))
            .collect()
    };
    let broker_epoch = request.broker_epoch;
    for (topic_id, state) in states {
        let error = apply_partition_state(apis, topic_id, &state, broker_epoch).await;
        if error == ErrorCode::None
            && state.leader == apis.config.broker_id
            && state.topic_name == GROUP_METADATA_TOPIC_NAME
        {
            led_offsets_partitions.push((state.partition_index, state.leader_epoch));
        } else if error == ErrorCode::None && state.topic_name == GROUP_METADATA_TOPIC_NAME {
            // No longer its coordinator (Kafka's `onResignation`): its groups are unloaded, and
            // a later election here loads the partition afresh.
            apis.group_coordinator
                .on_resignation(state.partition_index, Some(state.leader_epoch));
        }
        results.push((topic_id, state, error));
    }
    if !led_offsets_partitions.is_empty() {
        apis.group_coordinator.on_elected(led_offsets_partitions);
    }
    response_for(version, results)
}

/// One partition of the request; the error code of its answer.
async fn apply_partition_state(
    apis: &KafkaApis,
    topic_id: Uuid,
    state: &LeaderAndIsrPartitionState,
    broker_epoch: i64,
) -> ErrorCode {
    let tp = TopicPartition::new(state.topic_name.to_string(), state.partition_index);
    let request_topic_id = (!topic_id.is_nil()).then_some(topic_id);
    let existing = apis.replica_manager.get_partition(&tp);
    if let Some(partition) = &existing {
        if partition.is_offline() {
            return ErrorCode::KafkaStorageError;
        }
        if let (Some(ours), Some(theirs)) = (partition.topic_id(), request_topic_id)
            && ours != theirs
        {
            tracing::error!(partition = %tp, log_topic_id = %ours, request_topic_id = %theirs,
                "LeaderAndIsr topic id does not match the log's");
            return ErrorCode::InconsistentTopicId;
        }
        let current = partition.leader_and_isr().leader_epoch;
        if state.leader_epoch <= current {
            tracing::debug!(partition = %tp, request_epoch = state.leader_epoch, current,
                "ignoring LeaderAndIsr: its leader epoch is not newer");
            return ErrorCode::StaleControllerEpoch;
        }
    }
    if !state.replicas.contains(&apis.config.broker_id) {
        return ErrorCode::UnknownTopicOrPartition;
    }
    if existing.is_none()
        && let Err(err) = apis
            .replica_manager
            .log_manager()
            .check_log_creatable(&tp, state.is_new)
    {
        tracing::error!(partition = %tp, %err, "cannot host the partition");
        return ErrorCode::KafkaStorageError;
    }
    let log_config = match apis.topic_manager.fetch_topic_log_config(&tp.topic).await {
        Ok(config) => config,
        Err(err) => {
            tracing::error!(partition = %tp, %err, "cannot read the topic's config");
            return err.error_code();
        }
    };
    let leader_and_isr = LeaderAndIsr {
        leader: state.leader,
        leader_epoch: state.leader_epoch,
        isr: state.isr.clone(),
        partition_epoch: state.partition_epoch,
        leader_recovery_state: LeaderRecoveryState::of(state.leader_recovery_state),
    };
    match apis.replica_manager.become_leader_or_follower_at(
        &tp,
        request_topic_id.or_else(|| apis.metadata_cache.topic_id(&tp.topic)),
        state.replicas.clone(),
        leader_and_isr,
        log_config.clone(),
        (broker_epoch >= 0).then_some(broker_epoch),
    ) {
        Ok(partition) => {
            // A log opened at startup has the broker's defaults until its topic's config is
            // known, which is now.
            crate::cluster::sync::lock(partition.log()).update_config(log_config);
            tracing::info!(partition = %tp, leader = state.leader, leader_epoch = state.leader_epoch,
                isr = ?state.isr, "applied LeaderAndIsr");
            ErrorCode::None
        }
        Err(err) => {
            tracing::error!(partition = %tp, %err, "cannot host the partition");
            err.error_code()
        }
    }
}

fn whole_request_error(code: ErrorCode) -> LeaderAndIsrResponse {
    LeaderAndIsrResponse {
        error_code: code as i16,
        ..LeaderAndIsrResponse::default()
    }
}

/// v5+ answers per topic id; older versions per partition by name.
fn response_for(
    version: i16,
    results: Vec<(Uuid, LeaderAndIsrPartitionState, ErrorCode)>,
) -> LeaderAndIsrResponse {
    let error = |state: &LeaderAndIsrPartitionState, code: ErrorCode, name: bool| {
        LeaderAndIsrPartitionError {
            topic_name: if name {
                state.topic_name.clone()
            } else {
                StrBytes::default()
            },
            partition_index: state.partition_index,
            error_code: code as i16,
            ..LeaderAndIsrPartitionError::default()
        }
    };
    if version < 5 {
        return LeaderAndIsrResponse {
            partition_errors: results
                .iter()
                .map(|(_, s, code)| error(s, *code, true))
                .collect(),
            ..LeaderAndIsrResponse::default()
        };
    }
    let mut topics: Vec<LeaderAndIsrTopicError> = Vec::new();
    for (topic_id, state, code) in &results {
        let entry = error(state, *code, false);
        match topics.iter_mut().find(|t| t.topic_id == *topic_id) {
            Some(t) => t.partition_errors.push(entry),
            None => topics.push(LeaderAndIsrTopicError {
                topic_id: *topic_id,
                partition_errors: vec![entry],
                ..LeaderAndIsrTopicError::default()
            }),
        }
    }
    LeaderAndIsrResponse {
        topics,
        ..LeaderAndIsrResponse::default()
    }
}
