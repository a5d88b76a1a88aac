//! LeaderAndIsr (api 4, v0–7), the controller telling this broker which partitions it hosts and
//! who leads them: Kafka's `ReplicaManager.becomeLeaderOrFollower`.
//!
//! A request from an older controller epoch is refused whole (STALE_CONTROLLER_EPOCH), as is one
//! addressed to an older registration of this broker (STALE_BROKER_EPOCH) or one its principal
//! may not send (CLUSTER_AUTHORIZATION_FAILED): the error at the top and on every partition, as
//! Kafka's `getErrorResponse` answers. Each partition then follows Kafka's checks in order: a
//! topic id other than the log's is INCONSISTENT_TOPIC_ID; a leader epoch newer than the
//! partition's is applied if this broker is a replica (else UNKNOWN_TOPIC_OR_PARTITION); an
//! older one is STALE_CONTROLLER_EPOCH and changes nothing; an equal one only gives a topic
//! without an id the request's (`at_same_epoch`). Becoming leader of a `__consumer_offsets`
//! partition loads its groups; becoming its follower unloads them (Kafka's
//! `onElection`/`onResignation`, at the partition's leader epoch).
//!
//! New logs that do not fit in the descriptors left are refused with KAFKA_STORAGE_ERROR
//! before anything is opened, and the log dir stays online (`new_logs`).

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

mod new_logs;

use new_logs::NewLogAdmission;

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
        let states = partition_states(ctx.api_version, request);
        return ctx.respond(ResponseKind::LeaderAndIsr(refused(
            ctx.api_version,
            states,
            ErrorCode::ClusterAuthorizationFailed,
        )));
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
    let (broker_epoch, controller_id, controller_epoch) = (
        request.broker_epoch,
        request.controller_id,
        request.controller_epoch,
    );
    let states = partition_states(version, request);
    if apis.epochs.is_broker_epoch_stale(broker_epoch) {
        return refused(version, states, ErrorCode::StaleBrokerEpoch);
    }
    if !apis.epochs.accept_controller_epoch(controller_epoch) {
        tracing::warn!(
            controller = controller_id,
            epoch = controller_epoch,
            current = apis.epochs.controller_epoch(),
            "LeaderAndIsr from a stale controller"
        );
        return refused(version, states, ErrorCode::StaleControllerEpoch);
    }
    let mut results: Vec<(Uuid, LeaderAndIsrPartitionState, ErrorCode)> = Vec::new();
    let mut led_offsets_partitions = Vec::new();
    let partitions = states.len();
    let mut admission = NewLogAdmission::admit(apis, states.iter().map(|(_, s)| s));
    for (topic_id, state) in states {
        let error = if admission.refuses(apis, &state) {
            ErrorCode::KafkaStorageError
        } else {
            apply_partition_state(apis, topic_id, &state, broker_epoch, &mut admission).await
        };
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
    admission.log_summary(controller_id, partitions);
    if !led_offsets_partitions.is_empty() {
        apis.group_coordinator.on_elected(led_offsets_partitions);
    }
    response_for(version, ErrorCode::None, results)
}

/// The request's partitions in order, each with its topic's id (nil before v5) and its topic's
/// name filled in (v2+ carry it once per topic).
fn partition_states(
    version: i16,
    request: LeaderAndIsrRequest,
) -> Vec<(Uuid, LeaderAndIsrPartitionState)> {
    if version < 2 {
        return request
            .ungrouped_partition_states
            .into_iter()
            .map(|p| (Uuid::nil(), p))
            .collect();
    }
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
}

/// The request refused whole: `code` at the top and on every partition.
fn refused(
    version: i16,
    states: Vec<(Uuid, LeaderAndIsrPartitionState)>,
    code: ErrorCode,
) -> LeaderAndIsrResponse {
    let results = states.into_iter().map(|(id, s)| (id, s, code)).collect();
    response_for(version, code, results)
}

/// One partition of the request; the error code of its answer.
async fn apply_partition_state(
    apis: &KafkaApis,
    topic_id: Uuid,
    state: &LeaderAndIsrPartitionState,
    broker_epoch: i64,
    admission: &mut NewLogAdmission,
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
        if state.leader_epoch < current {
            tracing::debug!(partition = %tp, request_epoch = state.leader_epoch, current,
                "ignoring LeaderAndIsr: its leader epoch is older");
            return ErrorCode::StaleControllerEpoch;
        }
        if state.leader_epoch == current {
            return at_same_epoch(apis, partition, request_topic_id, state);
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
            if admission.record_failure(&err) {
                // Counted in the request's one line; a line per partition would flood the log.
                tracing::debug!(partition = %tp, %err, "cannot host the partition");
            } else {
                tracing::error!(partition = %tp, %err, "cannot host the partition");
            }
            err.error_code()
        }
    }
}

/// A LeaderAndIsr at the partition's own leader epoch (Kafka's equal-epoch branch): it changes
/// nothing, except that a topic that had no id gets the one the request carries (the controller
/// sends the id a topic was given without bumping the epoch). A follower told of no id while
/// its partition has one (the cluster going back to an older `inter.broker.protocol.version`)
/// is answered NONE too: its fetcher already names topics as that version's Fetch does.
/// Anything else is STALE_CONTROLLER_EPOCH.
fn at_same_epoch(
    apis: &KafkaApis,
    partition: &crate::replication::partition::Partition,
    request_topic_id: Option<Uuid>,
    state: &LeaderAndIsrPartitionState,
) -> ErrorCode {
    let tp = partition.topic_partition();
    match (request_topic_id, partition.topic_id()) {
        (Some(topic_id), None) => match partition.assign_topic_id(topic_id) {
            Ok(assigned) if assigned != topic_id => {
                tracing::error!(partition = %tp, log_topic_id = %assigned,
                    request_topic_id = %topic_id, "LeaderAndIsr topic id does not match the log's");
                ErrorCode::InconsistentTopicId
            }
            Ok(_) => {
                tracing::info!(partition = %tp, %topic_id,
                    "assigned the topic id of a LeaderAndIsr at the current leader epoch");
                ErrorCode::None
            }
            Err(err) => {
                tracing::error!(partition = %tp, %err, "cannot record the topic id");
                ErrorCode::KafkaStorageError
            }
        },
        (None, Some(_)) if state.leader != apis.config.broker_id => ErrorCode::None,
        _ => {
            tracing::debug!(partition = %tp, leader_epoch = state.leader_epoch,
                "ignoring LeaderAndIsr: its leader epoch is the partition's");
            ErrorCode::StaleControllerEpoch
        }
    }
}

/// v5+ answers per topic id; older versions per partition by name.
fn response_for(
    version: i16,
    error_code: ErrorCode,
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
            error_code: error_code as i16,
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
        error_code: error_code as i16,
        ..LeaderAndIsrResponse::default()
    }
}
