//! StopReplica (api 5, v0–4), the controller telling this broker to stop hosting partitions,
//! deleting their logs when asked (Kafka's `ReplicaManager.stopReplicas`). A partition's
//! request leader epoch must be -2 (its topic is being deleted), -1 (none sent) or not older
//! than the partition's, else FENCED_LEADER_EPOCH and the partition stays. A stopped
//! `__consumer_offsets` partition's groups are unloaded (Kafka's `onResignation`). A request
//! with a stale broker or controller epoch is refused at the top only, as Kafka's; one its
//! principal may not send is CLUSTER_AUTHORIZATION_FAILED on every partition too.

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::stop_replica_request::StopReplicaRequest;
use crate::protocol::messages::stop_replica_response::{
    StopReplicaPartitionError, StopReplicaResponse,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::topic_validation::GROUP_METADATA_TOPIC_NAME;

const EPOCH_DURING_DELETE: i32 = -2;
const NO_EPOCH: i32 = -1;

pub fn handle(apis: &KafkaApis, ctx: &RequestContext, request: StopReplicaRequest) -> Response {
    // Kafka's `authorizeClusterOperation(CLUSTER_ACTION)`: the request's error response, the
    // error at the top and on every partition (`getErrorResponse`).
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::ClusterAction)
    {
        let code = ErrorCode::ClusterAuthorizationFailed;
        let partition_errors = partitions(&request)
            .into_iter()
            .map(|(tp, _, _)| partition_error(&tp, code))
            .collect();
        return ctx.respond(ResponseKind::StopReplica(StopReplicaResponse {
            error_code: code.code(),
            partition_errors,
            ..StopReplicaResponse::default()
        }));
    }
    let response = stop_replicas(apis, request);
    ctx.respond(ResponseKind::StopReplica(response))
}

/// The partitions of a request of any version: (partition, leader epoch, delete).
fn partitions(request: &StopReplicaRequest) -> Vec<(TopicPartition, i32, bool)> {
    let mut out: Vec<(TopicPartition, i32, bool)> = request
        .ungrouped_partitions
        .iter()
        .map(|p| {
            let tp = TopicPartition::new(p.topic_name.to_string(), p.partition_index);
            (tp, NO_EPOCH, request.delete_partitions)
        })
        .collect();
    for t in &request.topics {
        for p in &t.partition_indexes {
            let tp = TopicPartition::new(t.name.to_string(), *p);
            out.push((tp, NO_EPOCH, request.delete_partitions));
        }
    }
    for t in &request.topic_states {
        for p in &t.partition_states {
            let tp = TopicPartition::new(t.topic_name.to_string(), p.partition_index);
            out.push((tp, p.leader_epoch, p.delete_partition));
        }
    }
    out
}

pub fn stop_replicas(apis: &KafkaApis, request: StopReplicaRequest) -> StopReplicaResponse {
    if apis.epochs.is_broker_epoch_stale(request.broker_epoch) {
        return whole_request_error(ErrorCode::StaleBrokerEpoch);
    }
    if !apis
        .epochs
        .accept_controller_epoch(request.controller_epoch)
    {
        return whole_request_error(ErrorCode::StaleControllerEpoch);
    }
    let partition_errors = partitions(&request)
        .into_iter()
        .map(|(tp, leader_epoch, delete)| {
            let code = stop_replica(apis, &tp, leader_epoch, delete);
            partition_error(&tp, code)
        })
        .collect();
    StopReplicaResponse {
        partition_errors,
        ..StopReplicaResponse::default()
    }
}

fn partition_error(tp: &TopicPartition, code: ErrorCode) -> StopReplicaPartitionError {
    StopReplicaPartitionError {
        topic_name: StrBytes::from(tp.topic.as_str()),
        partition_index: tp.partition,
        error_code: code.code(),
        ..StopReplicaPartitionError::default()
    }
}

fn stop_replica(
    apis: &KafkaApis,
    tp: &TopicPartition,
    leader_epoch: i32,
    delete: bool,
) -> ErrorCode {
    if let Some(partition) = apis.replica_manager.get_partition(tp) {
        if partition.is_offline() {
            return ErrorCode::KafkaStorageError;
        }
        let current = partition.leader_and_isr().leader_epoch;
        if leader_epoch != EPOCH_DURING_DELETE && leader_epoch != NO_EPOCH && leader_epoch < current
        {
            tracing::info!(partition = %tp, leader_epoch, current,
                "ignoring StopReplica: its leader epoch is older than the partition's");
            return ErrorCode::FencedLeaderEpoch;
        }
    }
    match apis.replica_manager.stop_replica(tp, delete) {
        Ok(()) => {
            tracing::info!(partition = %tp, delete, "stopped replica");
            if tp.topic == GROUP_METADATA_TOPIC_NAME {
                // Kafka resigns only when the partition is deleted; kcli whenever it stops
                // hosting it, as a coordinator without its partition cannot write a commit.
                let epoch = (leader_epoch >= 0).then_some(leader_epoch);
                apis.group_coordinator.on_resignation(tp.partition, epoch);
            }
            ErrorCode::None
        }
        Err(err) => {
            tracing::error!(partition = %tp, %err, "cannot stop the replica");
            err.error_code()
        }
    }
}

fn whole_request_error(code: ErrorCode) -> StopReplicaResponse {
    StopReplicaResponse {
        error_code: code as i16,
        ..StopReplicaResponse::default()
    }
}
