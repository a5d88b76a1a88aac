//! ListOffsets (Kafka's `handleListOffsetRequest`): per partition, the offset for a timestamp or
//! one of the special values (-1 latest, -2 earliest, -3 max timestamp, -4 earliest local,
//! -5 latest tiered). Consumers see the high watermark as the latest offset and never an offset
//! above it; replicas (`replica_id` >= 0) see the log end.
//!
//! v0 answers `old_style_offsets`, a list of at most `max_num_offsets` offsets: kcli gives the
//! one offset the v1 lookup finds (Kafka's legacy lookup also lists segment base offsets before
//! the time, which no maintained client reads).
//!
//! A topic the principal may not Describe is TOPIC_AUTHORIZATION_FAILED for its partitions.

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::list_offsets_request::ListOffsetsRequest;
use crate::protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsResponse, ListOffsetsTopicResponse,
};
use crate::protocol::record::batch::NO_TIMESTAMP;
use crate::security::acl::{AclOperation, ResourceType};
use crate::storage::log_reads::FetchIsolation;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: ListOffsetsRequest,
) -> Response {
    // Kafka's: a client's request (replica id -1) sees the high watermark, or at v2+ for
    // read_committed the last stable offset; a replica's or a debugging one's the log end.
    let isolation = if request.replica_id != -1 {
        None
    } else if ctx.api_version >= 2 && request.isolation_level == 1 {
        Some(FetchIsolation::TxnCommitted)
    } else {
        Some(FetchIsolation::HighWatermark)
    };
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let name = topic.name.to_string_lossy().into_owned();
            let allowed =
                apis.auth
                    .authorize(ctx, AclOperation::Describe, ResourceType::Topic, &name);
            let partitions = topic
                .partitions
                .into_iter()
                .map(|p| {
                    let mut response = ListOffsetsPartitionResponse {
                        partition_index: p.partition_index,
                        timestamp: NO_TIMESTAMP,
                        offset: -1,
                        leader_epoch: -1,
                        ..ListOffsetsPartitionResponse::default()
                    };
                    if !allowed {
                        response.error_code = ErrorCode::TopicAuthorizationFailed.code();
                        return response;
                    }
                    let tp = TopicPartition::new(name.clone(), p.partition_index);
                    let found =
                        apis.replica_manager
                            .get_partition_or_error(&tp)
                            .and_then(|partition| {
                                partition.fetch_offset_for_timestamp(
                                    p.timestamp,
                                    isolation,
                                    p.current_leader_epoch,
                                )
                            });
                    match found {
                        Ok(Some(t)) => {
                            if ctx.api_version == 0 {
                                let max = usize::try_from(p.max_num_offsets).unwrap_or(0);
                                response.old_style_offsets =
                                    std::iter::once(t.offset).take(max).collect();
                            } else {
                                response.timestamp = t.timestamp;
                                response.offset = t.offset;
                                if ctx.api_version >= 4 {
                                    response.leader_epoch = t.leader_epoch.unwrap_or(-1);
                                }
                            }
                        }
                        Ok(None) => {}
                        Err(e) => response.error_code = e.code(),
                    }
                    if ctx.api_version == 0 && response.error_code != ErrorCode::None.code() {
                        response.old_style_offsets = Vec::new();
                    }
                    response
                })
                .collect();
            ListOffsetsTopicResponse {
                name: topic.name,
                partitions,
                ..ListOffsetsTopicResponse::default()
            }
        })
        .collect();
    let response = ListOffsetsResponse {
        topics,
        ..ListOffsetsResponse::default()
    };
    ctx.respond(ResponseKind::ListOffsets(response))
}
