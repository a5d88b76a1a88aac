//! StopReplica (api 5, v0–4), the controller telling this broker to stop hosting partitions,
//! deleting their logs when asked. The replica manager applies it (Kafka's
//! `ReplicaManager.stopReplicas`, `replication::replica_manager::leadership`); this handler
//! checks the request and translates it. A request with a stale broker or controller epoch is
//! refused at the top only, as Kafka's; one its principal may not send is
//! CLUSTER_AUTHORIZATION_FAILED on every partition too.

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::stop_replica_request::StopReplicaRequest;
use crate::protocol::messages::stop_replica_response::{
    StopReplicaPartitionError, StopReplicaResponse,
};

use crate::replication::replica_manager::StopPartition;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

/// The leader epoch of a partition of a request that carries none (v0-2).
const NO_EPOCH: i32 = -1;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: StopReplicaRequest,
) -> Response {
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

pub(crate) fn stop_replicas(apis: &KafkaApis, request: StopReplicaRequest) -> StopReplicaResponse {
    if apis.epochs.is_broker_epoch_stale(request.broker_epoch) {
        return whole_request_error(ErrorCode::StaleBrokerEpoch);
    }
    if !apis
        .epochs
        .accept_controller_epoch(request.controller_epoch)
    {
        return whole_request_error(ErrorCode::StaleControllerEpoch);
    }
    let stops: Vec<StopPartition> = partitions(&request)
        .into_iter()
        .map(|(topic_partition, leader_epoch, delete)| StopPartition {
            topic_partition,
            leader_epoch,
            delete,
        })
        .collect();
    let errors = apis.replica_manager.stop_replicas(&stops);
    let partition_errors = stops
        .iter()
        .zip(errors)
        .map(|(stop, code)| partition_error(&stop.topic_partition, code))
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

fn whole_request_error(code: ErrorCode) -> StopReplicaResponse {
    StopReplicaResponse {
        error_code: code as i16,
        ..StopReplicaResponse::default()
    }
}
