//! DescribeProducers (Kafka's `handleDescribeProducersRequest`, KIP-664), v0: the producers each
//! partition's state holds, on any replica that hosts it (the admin client asks the leader
//! unless told a broker): id, epoch, last sequence (-1 when none), last timestamp, the
//! coordinator epoch of its last marker (-1 when none) and the first offset of its open
//! transaction (-1 when none). READ on the topic, else TOPIC_AUTHORIZATION_FAILED; a partition
//! not hosted here is NOT_LEADER_OR_FOLLOWER when the cluster knows it, else
//! UNKNOWN_TOPIC_OR_PARTITION.

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_producers_request::DescribeProducersRequest;
use crate::protocol::messages::describe_producers_response::{
    DescribeProducersResponse, PartitionResponse, ProducerState, TopicResponse,
};
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::partition_error;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DescribeProducersRequest,
) -> Response {
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let name = t.name.to_string_lossy().into_owned();
            let may_read = apis
                .auth
                .authorize(ctx, AclOperation::Read, ResourceType::Topic, &name);
            let partitions = t
                .partition_indexes
                .iter()
                .map(|index| {
                    let failed = |code: ErrorCode| PartitionResponse {
                        partition_index: *index,
                        error_code: code.code(),
                        ..PartitionResponse::default()
                    };
                    if !may_read {
                        return failed(ErrorCode::TopicAuthorizationFailed);
                    }
                    let tp = TopicPartition::new(name.clone(), *index);
                    let Some(partition) = apis.replica_manager.get_partition(&tp) else {
                        return failed(partition_error(
                            &apis.metadata_cache,
                            &name,
                            *index,
                            ErrorCode::UnknownTopicOrPartition,
                        ));
                    };
                    let active_producers = partition
                        .active_producers()
                        .into_iter()
                        .map(|e| ProducerState {
                            producer_id: e.producer_id,
                            producer_epoch: i32::from(e.producer_epoch),
                            last_sequence: e.last_seq(),
                            last_timestamp: e.last_timestamp,
                            coordinator_epoch: e.coordinator_epoch,
                            current_txn_start_offset: e.current_txn_first_offset.unwrap_or(-1),
                            ..ProducerState::default()
                        })
                        .collect();
                    PartitionResponse {
                        partition_index: *index,
                        active_producers,
                        ..PartitionResponse::default()
                    }
                })
                .collect();
            TopicResponse {
                name: t.name.clone(),
                partitions,
                ..TopicResponse::default()
            }
        })
        .collect();
    ctx.respond(ResponseKind::DescribeProducers(DescribeProducersResponse {
        topics,
        ..DescribeProducersResponse::default()
    }))
}
