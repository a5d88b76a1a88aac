//! DescribeLogDirs (Kafka's `handleDescribeLogDirsRequest` and `ReplicaManager
//! .describeLogDirs`): every configured log dir (its absolute path) with, for v4+, its file
//! system's total and usable bytes, and the partition logs in it: size, offset lag and whether
//! it is the future log of a move. A null topic list asks for every partition. As in Kafka,
//! every topic with a log in the dir is listed, with only the asked-for partitions (so a topic
//! may come with none). A failed dir answers KAFKA_STORAGE_ERROR and nothing else.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_log_dirs_request::DescribeLogDirsRequest;
use crate::protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResponse, DescribeLogDirsResult, DescribeLogDirsTopic,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DescribeLogDirsRequest,
) -> Response {
    // Kafka: without DESCRIBE on the cluster, no results and CLUSTER_AUTHORIZATION_FAILED.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::Describe)
    {
        return ctx.respond(ResponseKind::DescribeLogDirs(DescribeLogDirsResponse {
            error_code: ErrorCode::ClusterAuthorizationFailed.code(),
            ..DescribeLogDirsResponse::default()
        }));
    }
    let log_manager = apis.replica_manager.log_manager();
    let wanted: Option<BTreeSet<TopicPartition>> = request.topics.map(|topics| {
        topics
            .iter()
            .flat_map(|t| {
                let name = t.topic.to_string_lossy().into_owned();
                t.partitions
                    .iter()
                    .map(move |p| TopicPartition::new(name.clone(), *p))
            })
            .collect()
    });
    let results = log_manager
        .describe_log_dirs()
        .into_iter()
        .map(|dir| {
            let log_dir = StrBytes::from(dir.path.to_string_lossy().into_owned());
            if !dir.online {
                return DescribeLogDirsResult {
                    error_code: ErrorCode::KafkaStorageError.code(),
                    log_dir,
                    total_bytes: -1,
                    usable_bytes: -1,
                    ..DescribeLogDirsResult::default()
                };
            }
            let mut topics: BTreeMap<String, Vec<DescribeLogDirsPartition>> = BTreeMap::new();
            for log in dir.logs {
                let partitions = topics.entry(log.topic_partition.topic.clone()).or_default();
                if wanted
                    .as_ref()
                    .is_none_or(|w| w.contains(&log.topic_partition))
                {
                    partitions.push(DescribeLogDirsPartition {
                        partition_index: log.topic_partition.partition,
                        partition_size: i64::try_from(log.size).unwrap_or(i64::MAX),
                        offset_lag: log.offset_lag,
                        is_future_key: log.is_future,
                        ..DescribeLogDirsPartition::default()
                    });
                }
            }
            DescribeLogDirsResult {
                error_code: ErrorCode::None.code(),
                log_dir,
                topics: topics
                    .into_iter()
                    .map(|(name, mut partitions)| {
                        partitions.sort_by_key(|p| p.partition_index);
                        DescribeLogDirsTopic {
                            name: StrBytes::from(name),
                            partitions,
                            ..DescribeLogDirsTopic::default()
                        }
                    })
                    .collect(),
                total_bytes: dir.total_bytes,
                usable_bytes: dir.usable_bytes,
                ..DescribeLogDirsResult::default()
            }
        })
        .collect();
    ctx.respond(ResponseKind::DescribeLogDirs(DescribeLogDirsResponse {
        results,
        ..DescribeLogDirsResponse::default()
    }))
}
