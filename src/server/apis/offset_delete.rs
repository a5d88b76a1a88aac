//! OffsetDelete (Kafka's `handleDeleteOffsetsRequest`), v0: removes committed offsets of an
//! empty group, or of topics a consumer group does not subscribe to (GROUP_SUBSCRIBED_TO_TOPIC
//! otherwise). A group-level error answers without topics.

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::offset_delete_request::OffsetDeleteRequest;
use crate::protocol::messages::offset_delete_response::{
    OffsetDeleteResponse, OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(apis: &KafkaApis, ctx: &RequestContext, r: OffsetDeleteRequest) -> Response {
    if !apis.auth.authorize(
        ctx,
        AclOperation::Delete,
        ResourceType::Group,
        &r.group_id.to_string_lossy(),
    ) {
        return ctx.respond(ResponseKind::OffsetDelete(OffsetDeleteResponse {
            error_code: ErrorCode::GroupAuthorizationFailed.code(),
            ..OffsetDeleteResponse::default()
        }));
    }
    let may_read = |topic: &str| {
        apis.auth
            .authorize(ctx, AclOperation::Read, ResourceType::Topic, topic)
    };
    let mut known = Vec::new();
    for t in &r.topics {
        let topic = t.name.to_string_lossy().into_owned();
        if may_read(&topic) && apis.metadata_cache.contains_topic(&topic) {
            known.extend(
                t.partitions
                    .iter()
                    .map(|p| TopicPartition::new(topic.clone(), p.partition_index)),
            );
        }
    }
    let (error, results) = apis
        .group_coordinator
        .delete_offsets(&r.group_id.to_string_lossy(), &known);
    if error != ErrorCode::None {
        return ctx.respond(ResponseKind::OffsetDelete(OffsetDeleteResponse {
            error_code: error.code(),
            ..OffsetDeleteResponse::default()
        }));
    }
    let topics = r
        .topics
        .iter()
        .map(|t| {
            let topic = t.name.to_string_lossy().into_owned();
            let denied = !may_read(&topic);
            OffsetDeleteResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| {
                        let tp = TopicPartition::new(topic.clone(), p.partition_index);
                        let e = if denied {
                            ErrorCode::TopicAuthorizationFailed
                        } else {
                            results
                                .iter()
                                .find(|(r, _)| *r == tp)
                                .map_or(ErrorCode::UnknownTopicOrPartition, |(_, e)| *e)
                        };
                        OffsetDeleteResponsePartition {
                            partition_index: p.partition_index,
                            error_code: e.code(),
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    ctx.respond(ResponseKind::OffsetDelete(OffsetDeleteResponse {
        topics,
        ..OffsetDeleteResponse::default()
    }))
}
