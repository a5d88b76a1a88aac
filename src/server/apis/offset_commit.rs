//! OffsetCommit (Kafka's `handleOffsetCommitRequest`), v0-9. v0 stores offsets in ZooKeeper
//! (`/consumers/<group>/offsets/<topic>/<partition>`, the offset as a decimal string) as Kafka
//! 3.9 still does; v1+ go to the group coordinator and `__consumer_offsets`, answered once the
//! append is committed. Partitions of unknown topics fail with UNKNOWN_TOPIC_OR_PARTITION.
//! v1 may carry a commit timestamp, v2-4 a retention time (the old per-offset expiry), v6+ the
//! leader epoch, v7+ `group.instance.id`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cluster::TopicPartition;
use crate::coordinator::group::GroupCoordinator;
use crate::coordinator::group::group_offsets::CommitParams;
use crate::coordinator::group::offsets_records::OffsetAndMetadata;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::offset_commit_request::OffsetCommitRequest;
use crate::protocol::messages::offset_commit_response::{
    OffsetCommitResponse, OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use crate::zk::{ZkClient, ZkError, recipes};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

/// ZooKeeper's path of a v0 offset (Kafka's `ConsumerPathZNode`/`ConsumerOffset`).
pub(crate) fn zk_offset_path(group: &str, tp: &TopicPartition) -> String {
    format!("/consumers/{group}/offsets/{}/{}", tp.topic, tp.partition)
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    r: OffsetCommitRequest,
) -> Response {
    let v = ctx.api_version;
    let group_id = r.group_id.to_string_lossy().into_owned();
    let now = apis.replica_manager.time().milliseconds();
    let expire =
        (r.retention_time_ms != -1 && (2..=4).contains(&v)).then(|| now + r.retention_time_ms);
    let mut errors: HashMap<TopicPartition, ErrorCode> = HashMap::new();
    let may_read_group =
        apis.auth
            .authorize(ctx, AclOperation::Read, ResourceType::Group, &group_id);
    let mut offsets = Vec::new();
    for t in &r.topics {
        let topic = t.name.to_string_lossy().into_owned();
        let may_read_topic = may_read_group
            && apis
                .auth
                .authorize(ctx, AclOperation::Read, ResourceType::Topic, &topic);
        for p in &t.partitions {
            let tp = TopicPartition::new(topic.clone(), p.partition_index);
            if !may_read_group {
                errors.insert(tp, ErrorCode::GroupAuthorizationFailed);
                continue;
            }
            if !may_read_topic {
                errors.insert(tp, ErrorCode::TopicAuthorizationFailed);
                continue;
            }
            if apis
                .metadata_cache
                .partition(&topic, p.partition_index)
                .is_none()
            {
                errors.insert(tp, ErrorCode::UnknownTopicOrPartition);
                continue;
            }
            offsets.push((
                tp,
                OffsetAndMetadata {
                    committed_offset: p.committed_offset,
                    leader_epoch: if v >= 6 { p.committed_leader_epoch } else { -1 },
                    metadata: p
                        .committed_metadata
                        .as_ref()
                        .map(|m| m.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    commit_timestamp_ms: if v == 1 && p.commit_timestamp != -1 {
                        p.commit_timestamp
                    } else {
                        now
                    },
                    expire_timestamp_ms: expire,
                },
            ));
        }
    }
    if !may_read_group {
        return ctx.respond(ResponseKind::OffsetCommit(response(&r, &errors)));
    }
    let coordinator = Arc::clone(&apis.group_coordinator);
    let ctx = ctx.deferred();
    let params = CommitParams {
        group_id,
        member_id: r.member_id.to_string_lossy().into_owned(),
        group_instance_id: r
            .group_instance_id
            .as_ref()
            .filter(|_| v >= 7)
            .map(|i| i.to_string_lossy().into_owned()),
        generation_id: if v >= 1 {
            r.generation_id_or_member_epoch
        } else {
            -1
        },
        offsets,
    };
    Response::Deferred(Box::pin(async move {
        let results = if v == 0 {
            commit_to_zk(&coordinator, &params).await
        } else {
            coordinator.commit_offsets(params).await
        };
        errors.extend(results);
        ctx.respond(ResponseKind::OffsetCommit(response(&r, &errors)))
    }))
}

async fn commit_to_zk(
    coordinator: &GroupCoordinator,
    p: &CommitParams,
) -> Vec<(TopicPartition, ErrorCode)> {
    if p.group_id.is_empty() {
        return p
            .offsets
            .iter()
            .map(|(tp, _)| (tp.clone(), ErrorCode::InvalidGroupId))
            .collect();
    }
    let max = coordinator.manager.config.metadata_max_bytes;
    let mut out = Vec::with_capacity(p.offsets.len());
    for (tp, o) in &p.offsets {
        let e = if o.metadata.len() > max {
            ErrorCode::OffsetMetadataTooLarge
        } else {
            let path = zk_offset_path(&p.group_id, tp);
            match set_or_create(
                coordinator.zk.as_ref(),
                &path,
                o.committed_offset.to_string().as_bytes(),
            )
            .await
            {
                Ok(()) => ErrorCode::None,
                Err(e) => {
                    tracing::warn!(%path, err = %e, "cannot store a v0 offset in the metadata store");
                    ErrorCode::UnknownServerError
                }
            }
        };
        out.push((tp.clone(), e));
    }
    out
}

/// Kafka's `setOrCreateConsumerOffset`.
async fn set_or_create(zk: &dyn ZkClient, path: &str, data: &[u8]) -> Result<(), ZkError> {
    match zk.set_data(path, data, -1).await {
        Ok(_) => Ok(()),
        Err(ZkError::NoNode(_)) => match recipes::create_recursive(zk, path, data).await {
            Err(ZkError::NodeExists(_)) => zk.set_data(path, data, -1).await.map(|_| ()),
            other => other,
        },
        Err(e) => Err(e),
    }
}

fn response(
    r: &OffsetCommitRequest,
    errors: &HashMap<TopicPartition, ErrorCode>,
) -> OffsetCommitResponse {
    OffsetCommitResponse {
        topics: r
            .topics
            .iter()
            .map(|t| {
                let topic = t.name.to_string_lossy().into_owned();
                OffsetCommitResponseTopic {
                    name: StrBytes::from(topic.clone()),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| OffsetCommitResponsePartition {
                            partition_index: p.partition_index,
                            error_code: errors
                                .get(&TopicPartition::new(topic.clone(), p.partition_index))
                                .copied()
                                .unwrap_or(ErrorCode::UnknownServerError)
                                .code(),
                            ..OffsetCommitResponsePartition::default()
                        })
                        .collect(),
                    ..OffsetCommitResponseTopic::default()
                }
            })
            .collect(),
        ..OffsetCommitResponse::default()
    }
}
