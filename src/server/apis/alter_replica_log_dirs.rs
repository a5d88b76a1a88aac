//! AlterReplicaLogDirs (Kafka's `handleAlterReplicaLogDirsRequest`): moves each listed
//! partition to the given log dir of this broker (`replication::alter_log_dirs`). Per
//! partition: NONE when the move started, is under way or the log is already there;
//! LOG_DIR_NOT_FOUND for a path that is not one of `log.dirs` (compared as absolute paths);
//! KAFKA_STORAGE_ERROR for an offline dir or partition; REPLICA_NOT_AVAILABLE for a partition
//! this broker does not host yet (it will be created in that dir); INVALID_TOPIC_EXCEPTION when
//! the future dir's name would be too long. The answer comes when the move has started, not
//! when it ends.

use std::collections::BTreeMap;

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::alter_replica_log_dirs_request::AlterReplicaLogDirsRequest;
use crate::protocol::messages::alter_replica_log_dirs_response::{
    AlterReplicaLogDirPartitionResult, AlterReplicaLogDirTopicResult, AlterReplicaLogDirsResponse,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AlterReplicaLogDirsRequest,
) -> Response {
    // Kafka answers one entry per partition (the last dir wins when one is listed twice),
    // grouped by topic.
    let mut wanted: BTreeMap<TopicPartition, String> = BTreeMap::new();
    for dir in &request.dirs {
        let path = dir.path.to_string_lossy().into_owned();
        for topic in &dir.topics {
            let name = topic.name.to_string_lossy().into_owned();
            for p in &topic.partitions {
                wanted.insert(TopicPartition::new(name.clone(), *p), path.clone());
            }
        }
    }
    // Kafka: without ALTER on the cluster every partition is CLUSTER_AUTHORIZATION_FAILED.
    let allowed = apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::Alter);
    let mut by_topic: BTreeMap<String, Vec<AlterReplicaLogDirPartitionResult>> = BTreeMap::new();
    for (tp, path) in wanted {
        let error = if allowed {
            apis.replica_manager.alter_replica_log_dir(&tp, &path)
        } else {
            crate::protocol::errors::ErrorCode::ClusterAuthorizationFailed
        };
        tracing::info!(topic_partition = %tp, log_dir = %path, ?error, "alter replica log dir");
        by_topic
            .entry(tp.topic.clone())
            .or_default()
            .push(AlterReplicaLogDirPartitionResult {
                partition_index: tp.partition,
                error_code: error.code(),
                ..AlterReplicaLogDirPartitionResult::default()
            });
    }
    let results = by_topic
        .into_iter()
        .map(|(name, partitions)| AlterReplicaLogDirTopicResult {
            topic_name: StrBytes::from(name),
            partitions,
            ..AlterReplicaLogDirTopicResult::default()
        })
        .collect();
    ctx.respond(ResponseKind::AlterReplicaLogDirs(
        AlterReplicaLogDirsResponse {
            results,
            ..AlterReplicaLogDirsResponse::default()
        },
    ))
}
