//! The requests `kcli assign` sends with `--bootstrap-server`, built with the generated codec,
//! and what it reads from their responses (pure, so both are unit-tested): Metadata (brokers with
//! racks, the controller, topics' replicas), ListPartitionReassignments (46) and
//! AlterPartitionReassignments (45) for the controller, DescribeLogDirs for partition sizes.

use std::collections::BTreeMap;

use crate::admin::replica_assignment::{Assignment, BrokerMetadata};
use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use crate::protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsTopics;
use crate::protocol::messages::metadata_request::MetadataRequestTopic;
use crate::protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
    DescribeLogDirsRequest, DescribeLogDirsResponse, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse, MetadataRequest, MetadataResponse,
};

/// The versions sent: the highest Kafka 3.9 and kcli both serve.
pub(crate) const METADATA_VERSION: i16 = 12;
pub(crate) const LIST_REASSIGNMENTS_VERSION: i16 = 0;
pub(crate) const ALTER_REASSIGNMENTS_VERSION: i16 = 0;
pub(crate) const DESCRIBE_LOG_DIRS_VERSION: i16 = 4;

/// A broker as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LiveBroker {
    pub metadata: BrokerMetadata,
    /// `host:port`, an IPv6 host in brackets.
    pub address: String,
}

/// What a Metadata response says of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ClusterMetadata {
    /// By id.
    pub brokers: Vec<LiveBroker>,
    /// -1 when none is known.
    pub controller_id: BrokerId,
    /// The topics asked for that exist, with their replicas.
    pub topics: BTreeMap<String, Assignment>,
    /// The topics asked for that do not (UNKNOWN_TOPIC_OR_PARTITION).
    pub unknown_topics: Vec<String>,
}

/// A reassignment in progress, as ListPartitionReassignments reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Ongoing {
    pub replicas: Vec<BrokerId>,
    pub adding: Vec<BrokerId>,
    pub removing: Vec<BrokerId>,
}

/// A refusal by the broker, as `code: message`.
pub(crate) fn error_text(code: i16, message: Option<&StrBytes>) -> String {
    let known = ErrorCode::from_code(code);
    let name = known.map_or_else(|| format!("error {code}"), |e| format!("{e:?}"));
    match message.map(|m| m.to_string_lossy().into_owned()) {
        Some(m) if !m.is_empty() => format!("{name}: {m}"),
        _ => match known {
            Some(e) => format!("{name}: {}", e.message()),
            None => name,
        },
    }
}

/// Metadata for `topics` (none: brokers and controller only), never creating a topic.
pub(crate) fn metadata_request(topics: &[String]) -> MetadataRequest {
    MetadataRequest {
        topics: Some(
            topics
                .iter()
                .map(|t| MetadataRequestTopic {
                    name: Some(StrBytes::from(t.as_str())),
                    ..MetadataRequestTopic::default()
                })
                .collect(),
        ),
        allow_auto_topic_creation: false,
        ..MetadataRequest::default()
    }
}

fn address(host: &str, port: i32) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The brokers, controller and topics of a Metadata response; a topic error other than
/// UNKNOWN_TOPIC_OR_PARTITION is returned as text.
pub(crate) fn read_metadata(response: &MetadataResponse) -> Result<ClusterMetadata, String> {
    let mut brokers: Vec<LiveBroker> = response
        .brokers
        .iter()
        .map(|b| LiveBroker {
            metadata: BrokerMetadata {
                id: b.node_id,
                rack: b.rack.as_ref().map(|r| r.to_string_lossy().into_owned()),
            },
            address: address(&b.host.to_string_lossy(), b.port),
        })
        .collect();
    brokers.sort_by_key(|b| b.metadata.id);
    let mut out = ClusterMetadata {
        brokers,
        controller_id: response.controller_id,
        ..ClusterMetadata::default()
    };
    for topic in &response.topics {
        let name = topic
            .name
            .as_ref()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if topic.error_code == ErrorCode::UnknownTopicOrPartition.code() {
            out.unknown_topics.push(name);
            continue;
        }
        if topic.error_code != 0 {
            return Err(format!(
                "topic {name}: {}",
                error_text(topic.error_code, None)
            ));
        }
        let partitions = topic
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.replica_nodes.clone()))
            .collect();
        out.topics.insert(name, partitions);
    }
    Ok(out)
}

/// ListPartitionReassignments for `partitions`, or every one in progress.
pub(crate) fn list_request(
    partitions: Option<&[TopicPartition]>,
) -> ListPartitionReassignmentsRequest {
    ListPartitionReassignmentsRequest {
        topics: partitions.map(|parts| {
            let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
            for tp in parts {
                by_topic.entry(&tp.topic).or_default().push(tp.partition);
            }
            by_topic
                .into_iter()
                .map(|(name, indexes)| ListPartitionReassignmentsTopics {
                    name: StrBytes::from(name),
                    partition_indexes: indexes,
                    ..ListPartitionReassignmentsTopics::default()
                })
                .collect()
        }),
        ..ListPartitionReassignmentsRequest::default()
    }
}

/// The reassignments in progress; a top-level error as text.
pub(crate) fn read_list_response(
    response: &ListPartitionReassignmentsResponse,
) -> Result<BTreeMap<TopicPartition, Ongoing>, String> {
    if response.error_code != 0 {
        return Err(error_text(
            response.error_code,
            response.error_message.as_ref(),
        ));
    }
    let mut out = BTreeMap::new();
    for topic in &response.topics {
        let name = topic.name.to_string_lossy();
        for p in &topic.partitions {
            out.insert(
                TopicPartition::new(name.as_ref(), p.partition_index),
                Ongoing {
                    replicas: p.replicas.clone(),
                    adding: p.adding_replicas.clone(),
                    removing: p.removing_replicas.clone(),
                },
            );
        }
    }
    Ok(out)
}

/// AlterPartitionReassignments: each partition to its target replicas, or `None` to cancel.
pub(crate) fn alter_request(
    targets: &BTreeMap<TopicPartition, Option<Vec<BrokerId>>>,
    timeout_ms: i32,
) -> AlterPartitionReassignmentsRequest {
    let mut by_topic: BTreeMap<&str, Vec<ReassignablePartition>> = BTreeMap::new();
    for (tp, replicas) in targets {
        by_topic
            .entry(&tp.topic)
            .or_default()
            .push(ReassignablePartition {
                partition_index: tp.partition,
                replicas: replicas.clone(),
                ..ReassignablePartition::default()
            });
    }
    AlterPartitionReassignmentsRequest {
        timeout_ms,
        topics: by_topic
            .into_iter()
            .map(|(name, partitions)| ReassignableTopic {
                name: StrBytes::from(name),
                partitions,
                ..ReassignableTopic::default()
            })
            .collect(),
        ..AlterPartitionReassignmentsRequest::default()
    }
}

/// The partitions refused, with why; a top-level error refuses them all.
pub(crate) fn read_alter_response(
    response: &AlterPartitionReassignmentsResponse,
    asked: &[TopicPartition],
) -> BTreeMap<TopicPartition, String> {
    if response.error_code != 0 {
        let why = error_text(response.error_code, response.error_message.as_ref());
        return asked.iter().map(|tp| (tp.clone(), why.clone())).collect();
    }
    let mut out = BTreeMap::new();
    for topic in &response.responses {
        let name = topic.name.to_string_lossy();
        for p in &topic.partitions {
            if p.error_code != 0 {
                out.insert(
                    TopicPartition::new(name.as_ref(), p.partition_index),
                    error_text(p.error_code, p.error_message.as_ref()),
                );
            }
        }
    }
    out
}

/// DescribeLogDirs for every partition the broker hosts.
pub(crate) fn describe_log_dirs_request() -> DescribeLogDirsRequest {
    DescribeLogDirsRequest {
        topics: None,
        ..DescribeLogDirsRequest::default()
    }
}

/// Folds one broker's DescribeLogDirs answer into `sizes`: each partition's largest size over
/// the replicas seen (a lagging follower holds less than its leader), current logs only.
pub(crate) fn add_partition_sizes(
    response: &DescribeLogDirsResponse,
    sizes: &mut BTreeMap<TopicPartition, i64>,
) {
    for dir in response.results.iter().filter(|d| d.error_code == 0) {
        for topic in &dir.topics {
            let name = topic.name.to_string_lossy();
            for p in topic.partitions.iter().filter(|p| !p.is_future_key) {
                let size = sizes
                    .entry(TopicPartition::new(name.as_ref(), p.partition_index))
                    .or_insert(0);
                *size = (*size).max(p.partition_size);
            }
        }
    }
}

#[cfg(test)]
#[path = "requests_tests.rs"]
mod tests;
