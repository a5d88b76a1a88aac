//! LeaderAndIsr (api 4, v0–7), the controller telling this broker which partitions it hosts and
//! who leads them. The replica manager applies it (Kafka's
//! `ReplicaManager.becomeLeaderOrFollower`, `replication::replica_manager::leadership`); this
//! handler checks the request and translates it.
//!
//! A request from an older controller epoch is refused whole (STALE_CONTROLLER_EPOCH), as is one
//! addressed to an older registration of this broker (STALE_BROKER_EPOCH) or one its principal
//! may not send (CLUSTER_AUTHORIZATION_FAILED): the error at the top and on every partition, as
//! Kafka's `getErrorResponse` answers.

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
use crate::replication::replica_manager::PartitionLeadership;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
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
pub(crate) async fn become_leader_or_follower(
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
    let leaderships: Vec<PartitionLeadership> = states
        .iter()
        .map(|(topic_id, state)| partition_leadership(apis, *topic_id, state))
        .collect();
    let errors = apis
        .replica_manager
        .become_leader_or_follower_all(
            controller_id,
            broker_epoch,
            &leaderships,
            apis.topic_manager.as_ref(),
        )
        .await;
    let results = states
        .into_iter()
        .zip(errors)
        .map(|((id, state), error)| (id, state, error))
        .collect();
    response_for(version, ErrorCode::None, results)
}

/// One partition of the request as the replica manager takes it.
fn partition_leadership(
    apis: &KafkaApis,
    topic_id: Uuid,
    state: &LeaderAndIsrPartitionState,
) -> PartitionLeadership {
    let topic_partition = TopicPartition::new(state.topic_name.to_string(), state.partition_index);
    PartitionLeadership {
        known_topic_id: apis.metadata_cache.topic_id(&topic_partition.topic),
        topic_partition,
        topic_id: (!topic_id.is_nil()).then_some(topic_id),
        replicas: state.replicas.clone(),
        leader_and_isr: LeaderAndIsr {
            leader: state.leader,
            leader_epoch: state.leader_epoch,
            isr: state.isr.clone(),
            partition_epoch: state.partition_epoch,
            leader_recovery_state: LeaderRecoveryState::of(state.leader_recovery_state),
        },
        is_new: state.is_new,
    }
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
