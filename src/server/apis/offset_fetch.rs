//! OffsetFetch (Kafka's `handleOffsetFetchRequest`), v0-9. v0 reads ZooKeeper's
//! `/consumers/<group>/offsets/<topic>/<partition>`; v1+ ask the group coordinator; v2+ may ask
//! for every partition (null topics) and carry a top-level error (before v2 the error goes to
//! each partition); v8+ ask for several groups at once. A partition without a committed offset
//! has offset -1 and empty metadata. v7+ may require stable offsets (KIP-447): a partition an
//! open transaction wrote an offset of is then UNSTABLE_OFFSET_COMMIT, offset -1.

use crate::cluster::TopicPartition;
use crate::coordinator::group::GroupCoordinator;
use crate::coordinator::group::offsets_records::OffsetAndMetadata;
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::offset_fetch_request::OffsetFetchRequest;
use crate::protocol::messages::offset_fetch_response::{
    OffsetFetchResponse, OffsetFetchResponseGroup, OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions, OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use crate::zk::ZkError;

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::metadata_cache::MetadataCache;
use super::super::request_context::RequestContext;
use super::offset_commit::zk_offset_path;

/// One partition's answer: offset, leader epoch, metadata, error.
type Fetched = (TopicPartition, i64, i32, String, ErrorCode);

fn fetched(tp: TopicPartition, o: Option<OffsetAndMetadata>, e: ErrorCode) -> Fetched {
    match o {
        Some(o) => (tp, o.committed_offset, o.leader_epoch, o.metadata, e),
        None => (tp, -1, -1, String::new(), e),
    }
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    r: OffsetFetchRequest,
) -> Response {
    let v = ctx.api_version;
    let coordinator = &apis.group_coordinator;
    let text = |s: &StrBytes| s.to_string_lossy().into_owned();
    if v >= 8 {
        let groups = r
            .groups
            .iter()
            .map(|g| {
                let tps = g.topics.as_ref().map(|ts| {
                    ts.iter()
                        .flat_map(|t| {
                            t.partition_indexes
                                .iter()
                                .map(|p| TopicPartition::new(text(&t.name), *p))
                        })
                        .collect()
                });
                let (e, found) = fetch_group(apis, ctx, &text(&g.group_id), tps, r.require_stable);
                OffsetFetchResponseGroup {
                    group_id: g.group_id.clone(),
                    error_code: e.code(),
                    topics: group_topics(found)
                        .into_iter()
                        .map(|(name, parts)| OffsetFetchResponseTopics {
                            name: StrBytes::from(name),
                            partitions: parts
                                .into_iter()
                                .map(|(tp, offset, epoch, metadata, e)| {
                                    OffsetFetchResponsePartitions {
                                        partition_index: tp.partition,
                                        committed_offset: offset,
                                        committed_leader_epoch: epoch,
                                        metadata: Some(StrBytes::from(metadata)),
                                        error_code: e.code(),
                                        ..OffsetFetchResponsePartitions::default()
                                    }
                                })
                                .collect(),
                            ..OffsetFetchResponseTopics::default()
                        })
                        .collect(),
                    ..OffsetFetchResponseGroup::default()
                }
            })
            .collect();
        return ctx.respond(ResponseKind::OffsetFetch(OffsetFetchResponse {
            groups,
            ..OffsetFetchResponse::default()
        }));
    }
    let group_id = text(&r.group_id);
    let requested: Option<Vec<TopicPartition>> = r.topics.as_ref().map(|ts| {
        ts.iter()
            .flat_map(|t| {
                t.partition_indexes
                    .iter()
                    .map(|p| TopicPartition::new(text(&t.name), *p))
            })
            .collect()
    });
    let may_describe_group =
        apis.auth
            .authorize(ctx, AclOperation::Describe, ResourceType::Group, &group_id);
    let (error, found) = if v == 0 && may_describe_group {
        let tps = requested.unwrap_or_default();
        (
            ErrorCode::None,
            fetch_from_zk(coordinator, &apis.metadata_cache, &group_id, tps).await,
        )
    } else {
        let (e, found) = fetch_group(
            apis,
            ctx,
            &group_id,
            requested.clone(),
            v >= 7 && r.require_stable,
        );
        if e != ErrorCode::None && v < 2 {
            // No top-level error before v2: each requested partition carries it.
            let each = requested
                .unwrap_or_default()
                .into_iter()
                .map(|tp| fetched(tp, None, e))
                .collect();
            (ErrorCode::None, each)
        } else {
            (e, found)
        }
    };
    let topics = group_topics(found)
        .into_iter()
        .map(|(name, parts)| OffsetFetchResponseTopic {
            name: StrBytes::from(name),
            partitions: parts
                .into_iter()
                .map(
                    |(tp, offset, epoch, metadata, e)| OffsetFetchResponsePartition {
                        partition_index: tp.partition,
                        committed_offset: offset,
                        committed_leader_epoch: epoch,
                        metadata: Some(StrBytes::from(metadata)),
                        error_code: e.code(),
                        ..OffsetFetchResponsePartition::default()
                    },
                )
                .collect(),
            ..OffsetFetchResponseTopic::default()
        })
        .collect();
    ctx.respond(ResponseKind::OffsetFetch(OffsetFetchResponse {
        topics,
        error_code: error.code(),
        ..OffsetFetchResponse::default()
    }))
}

/// One group's offsets as the principal may see them: GROUP_AUTHORIZATION_FAILED without
/// Describe on the group; a requested partition of a topic it may not Describe is
/// TOPIC_AUTHORIZATION_FAILED, and such topics are left out of an all-partitions answer.
fn fetch_group(
    apis: &KafkaApis,
    ctx: &RequestContext,
    group_id: &str,
    tps: Option<Vec<TopicPartition>>,
    require_stable: bool,
) -> (ErrorCode, Vec<Fetched>) {
    let auth = &apis.auth;
    if !auth.authorize(ctx, AclOperation::Describe, ResourceType::Group, group_id) {
        return (ErrorCode::GroupAuthorizationFailed, Vec::new());
    }
    let may = |topic: &str| auth.authorize(ctx, AclOperation::Describe, ResourceType::Topic, topic);
    let (allowed, denied) = match tps {
        Some(tps) => {
            let (a, d): (Vec<_>, Vec<_>) = tps.into_iter().partition(|tp| may(&tp.topic));
            (Some(a), d)
        }
        None => (None, Vec::new()),
    };
    let (e, found) = apis.group_coordinator.fetch_offsets(group_id, allowed);
    let unstable = if require_stable {
        let asked: Vec<TopicPartition> = found.iter().map(|(tp, _)| tp.clone()).collect();
        apis.group_coordinator.unstable_offsets(group_id, &asked)
    } else {
        Vec::new()
    };
    let mut out: Vec<Fetched> = found
        .into_iter()
        .filter(|(tp, _)| may(&tp.topic))
        .map(|(tp, o)| {
            if unstable.contains(&tp) {
                fetched(tp, None, ErrorCode::UnstableOffsetCommit)
            } else {
                fetched(tp, o, ErrorCode::None)
            }
        })
        .collect();
    out.extend(
        denied
            .into_iter()
            .map(|tp| fetched(tp, None, ErrorCode::TopicAuthorizationFailed)),
    );
    (e, out)
}

async fn fetch_from_zk(
    coordinator: &GroupCoordinator,
    cache: &MetadataCache,
    group_id: &str,
    tps: Vec<TopicPartition>,
) -> Vec<Fetched> {
    let mut out = Vec::with_capacity(tps.len());
    for tp in tps {
        if cache.partition(&tp.topic, tp.partition).is_none() {
            out.push(fetched(tp, None, ErrorCode::UnknownTopicOrPartition));
            continue;
        }
        let path = zk_offset_path(group_id, &tp);
        let row = match coordinator.zk.get_data(&path, false).await {
            Ok((data, _)) => match std::str::from_utf8(&data)
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
            {
                Some(offset) => (tp, offset, -1, String::new(), ErrorCode::None),
                None => fetched(tp, None, ErrorCode::UnknownServerError),
            },
            Err(ZkError::NoNode(_)) => fetched(tp, None, ErrorCode::None),
            Err(e) => {
                tracing::warn!(%path, err = %e, "cannot read a v0 offset from the metadata store");
                fetched(tp, None, ErrorCode::UnknownServerError)
            }
        };
        out.push(row);
    }
    out
}

/// Partitions grouped by topic, topics in first-seen order.
fn group_topics(found: Vec<Fetched>) -> Vec<(String, Vec<Fetched>)> {
    let mut out: Vec<(String, Vec<Fetched>)> = Vec::new();
    for f in found {
        match out.iter_mut().find(|(t, _)| *t == f.0.topic) {
            Some((_, parts)) => parts.push(f),
            None => out.push((f.0.topic.clone(), vec![f])),
        }
    }
    out
}
