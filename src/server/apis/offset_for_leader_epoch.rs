//! OffsetForLeaderEpoch (Kafka's `handleOffsetForLeaderEpochRequest` and
//! `ReplicaManager.lastOffsetForLeaderEpoch`): per partition, the largest epoch at most the
//! requested one in the leader's epoch cache and the end offset of that epoch (the start of the
//! next, or the log end for the latest); `-1`/`-1` when the cache has no such epoch. Followers
//! and consumers (KIP-320, truncation detection) ask; only the leader answers (Kafka 3.9 always
//! fetches from the leader here, whatever `replica_id` says), after checking the caller's
//! `current_leader_epoch` (`-1`: no check) for FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH.
//! Without ClusterAction on the cluster, a topic the principal may not Describe is
//! TOPIC_AUTHORIZATION_FAILED.

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::offset_for_leader_epoch_request::OffsetForLeaderEpochRequest;
use crate::protocol::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderEpochResponse, OffsetForLeaderTopicResult,
};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: OffsetForLeaderEpochRequest,
) -> Response {
    let cluster_action = apis
        .auth
        .authorize_cluster(ctx, AclOperation::ClusterAction);
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let name = topic.topic.to_string_lossy().into_owned();
            let allowed = cluster_action
                || apis
                    .auth
                    .authorize(ctx, AclOperation::Describe, ResourceType::Topic, &name);
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let mut out = EpochEndOffset {
                        partition: p.partition,
                        ..EpochEndOffset::default()
                    };
                    if !allowed {
                        out.error_code = ErrorCode::TopicAuthorizationFailed.code();
                        return out;
                    }
                    let tp = TopicPartition::new(name.clone(), p.partition);
                    match apis.replica_manager.get_partition(&tp) {
                        Some(partition) => {
                            match partition.last_offset_for_leader_epoch(
                                p.current_leader_epoch,
                                p.leader_epoch,
                            ) {
                                Ok((epoch, end_offset)) => {
                                    out.leader_epoch = epoch;
                                    out.end_offset = end_offset;
                                }
                                Err(e) => out.error_code = e.code(),
                            }
                        }
                        // Known to the cluster but not hosted here: another broker leads it.
                        None if apis.metadata_cache.partition(&name, p.partition).is_some() => {
                            out.error_code = ErrorCode::NotLeaderOrFollower.code();
                        }
                        None => out.error_code = ErrorCode::UnknownTopicOrPartition.code(),
                    }
                    out
                })
                .collect();
            OffsetForLeaderTopicResult {
                topic: topic.topic,
                partitions,
                ..OffsetForLeaderTopicResult::default()
            }
        })
        .collect();
    let response = OffsetForLeaderEpochResponse {
        topics,
        ..OffsetForLeaderEpochResponse::default()
    };
    ctx.respond(ResponseKind::OffsetForLeaderEpoch(response))
}
