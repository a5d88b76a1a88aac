//! DeleteRecords (Kafka's `handleDeleteRecordsRequest` and `ReplicaManager.deleteRecords`):
//! per partition, raises the log start offset (the low watermark) to the given offset, `-1`
//! meaning the high watermark, and answers the new low watermark. An offset above the high
//! watermark, or negative, is OFFSET_OUT_OF_RANGE; a topic without the `delete` cleanup policy
//! is POLICY_VIOLATION; internal topics are INVALID_TOPIC_EXCEPTION; a partition the cluster
//! does not know is UNKNOWN_TOPIC_OR_PARTITION. Failed partitions answer low watermark -1.
//!
//! Kafka waits (up to `timeout_ms`) until every in-sync replica has moved its log start too;
//! the single-node broker is its partitions' only replica, so the answer comes at once.

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::delete_records_request::DeleteRecordsRequest;
use crate::protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsResponse, DeleteRecordsTopicResult,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use super::super::topic_validation::is_internal;

/// `DeleteRecordsResponse.INVALID_LOW_WATERMARK`.
const INVALID_LOW_WATERMARK: i64 = -1;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DeleteRecordsRequest,
) -> Response {
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let name = topic.name.to_string_lossy().into_owned();
            // Kafka: each partition of a topic without DELETE is TOPIC_AUTHORIZATION_FAILED.
            let allowed = apis.auth.authorize(
                ctx,
                crate::security::acl::AclOperation::Delete,
                crate::security::acl::ResourceType::Topic,
                &name,
            );
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let (low_watermark, error) = if allowed {
                        delete(apis, &name, p.partition_index, p.offset)
                    } else {
                        (-1, ErrorCode::TopicAuthorizationFailed)
                    };
                    DeleteRecordsPartitionResult {
                        partition_index: p.partition_index,
                        low_watermark,
                        error_code: error.code(),
                        ..DeleteRecordsPartitionResult::default()
                    }
                })
                .collect();
            DeleteRecordsTopicResult {
                name: topic.name,
                partitions,
                ..DeleteRecordsTopicResult::default()
            }
        })
        .collect();
    let response = DeleteRecordsResponse {
        topics,
        ..DeleteRecordsResponse::default()
    };
    ctx.respond(ResponseKind::DeleteRecords(response))
}

fn delete(apis: &KafkaApis, topic: &str, partition: i32, offset: i64) -> (i64, ErrorCode) {
    if apis.metadata_cache.partition(topic, partition).is_none() {
        return (INVALID_LOW_WATERMARK, ErrorCode::UnknownTopicOrPartition);
    }
    if is_internal(topic) {
        return (INVALID_LOW_WATERMARK, ErrorCode::InvalidTopicException);
    }
    let tp = TopicPartition::new(topic, partition);
    // The cluster knows the partition, so not hosting it means another broker leads it.
    let Some(hosted) = apis.replica_manager.get_partition(&tp) else {
        return (INVALID_LOW_WATERMARK, ErrorCode::NotLeaderOrFollower);
    };
    match hosted.delete_records_on_leader(offset) {
        Ok(low_watermark) => (low_watermark, ErrorCode::None),
        Err(e) => {
            tracing::debug!(topic_partition = %tp, %e, "delete records failed");
            (INVALID_LOW_WATERMARK, e.error_code())
        }
    }
}
