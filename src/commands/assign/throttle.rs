//! `--throttle` of `--execute` and the clean-up of `--verify`, as Kafka's
//! `ReassignPartitionsCommand` does them: the moves of a plan (each partition's sources, the
//! replicas it has now or, mid-reassignment, had; its destinations, the target replicas it does
//! not have), the topics' `leader.replication.throttled.replicas` (every source) and
//! `follower.replication.throttled.replicas` (every destination), the rates on every broker a
//! move touches, and the IncrementalAlterConfigs that set them and, once every move is done,
//! delete them.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::codec::StrBytes;
use crate::protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig, IncrementalAlterConfigsRequest,
};

use super::requests::Ongoing;

pub(super) const LEADER_RATE: &str = "leader.replication.throttled.rate";
pub(super) const FOLLOWER_RATE: &str = "follower.replication.throttled.rate";
const LOG_DIRS_RATE: &str = "replica.alter.log.dirs.io.max.bytes.per.second";
pub(super) const LEADER_REPLICAS: &str = "leader.replication.throttled.replicas";
pub(super) const FOLLOWER_REPLICAS: &str = "follower.replication.throttled.replicas";

/// Kafka's `ConfigResource.Type` ids.
const TOPIC: i8 = 2;
const BROKER: i8 = 4;
/// Kafka's `AlterConfigOp.OpType` ids.
const SET: i8 = 0;
const DELETE: i8 = 1;

/// One partition's move (Kafka's `PartitionMove`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PartitionMove {
    pub sources: BTreeSet<BrokerId>,
    pub destinations: BTreeSet<BrokerId>,
}

/// Kafka's `calculateProposedMoveMap`: the reassignments in progress (their replicas less those
/// being added are the sources, the added ones the destinations), then each partition of the
/// plan from its sources (in progress, else its replicas now) to the target replicas it lacks.
pub(super) fn move_map(
    ongoing: &BTreeMap<TopicPartition, Ongoing>,
    targets: &BTreeMap<TopicPartition, Vec<BrokerId>>,
    current: &BTreeMap<TopicPartition, Vec<BrokerId>>,
) -> BTreeMap<TopicPartition, PartitionMove> {
    let mut moves: BTreeMap<TopicPartition, PartitionMove> = ongoing
        .iter()
        .map(|(tp, o)| {
            let adding: BTreeSet<BrokerId> = o.adding.iter().copied().collect();
            let sources = o
                .replicas
                .iter()
                .copied()
                .filter(|r| !adding.contains(r))
                .collect();
            (
                tp.clone(),
                PartitionMove {
                    sources,
                    destinations: adding,
                },
            )
        })
        .collect();
    for (tp, replicas) in targets {
        let sources: BTreeSet<BrokerId> = match moves.get(tp) {
            Some(m) => m.sources.clone(),
            None => current.get(tp).into_iter().flatten().copied().collect(),
        };
        let destinations = replicas
            .iter()
            .copied()
            .filter(|r| !sources.contains(r))
            .collect();
        moves.insert(
            tp.clone(),
            PartitionMove {
                sources,
                destinations,
            },
        );
    }
    moves
}

/// Each topic's `partition:broker` list of one side (Kafka's `calculateLeaderThrottles` and
/// `calculateFollowerThrottles`), entries sorted as strings as Kafka's `TreeSet` sorts them.
pub(super) fn throttled_replicas(
    moves: &BTreeMap<TopicPartition, PartitionMove>,
    leader: bool,
) -> BTreeMap<String, String> {
    let mut lists: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (tp, m) in moves {
        let brokers = if leader { &m.sources } else { &m.destinations };
        let list = lists.entry(tp.topic.clone()).or_default();
        for b in brokers {
            list.insert(format!("{}:{b}", tp.partition));
        }
    }
    lists
        .into_iter()
        .map(|(topic, list)| (topic, list.into_iter().collect::<Vec<_>>().join(",")))
        .collect()
}

/// Every broker a move reads from or writes to (Kafka's `calculateReassigningBrokers`).
pub(super) fn reassigning_brokers(
    moves: &BTreeMap<TopicPartition, PartitionMove>,
) -> BTreeSet<BrokerId> {
    moves
        .values()
        .flat_map(|m| m.sources.iter().chain(&m.destinations).copied())
        .collect()
}

fn config(name: &str, operation: i8, value: Option<&str>) -> AlterableConfig {
    AlterableConfig {
        name: StrBytes::from(name.to_string()),
        config_operation: operation,
        value: value.map(|v| StrBytes::from(v.to_string())),
        ..AlterableConfig::default()
    }
}

fn resource(
    resource_type: i8,
    name: String,
    configs: Vec<AlterableConfig>,
) -> AlterConfigsResource {
    AlterConfigsResource {
        resource_type,
        resource_name: StrBytes::from(name),
        configs,
        ..AlterConfigsResource::default()
    }
}

fn request(resources: Vec<AlterConfigsResource>) -> IncrementalAlterConfigsRequest {
    IncrementalAlterConfigsRequest {
        resources,
        validate_only: false,
        ..IncrementalAlterConfigsRequest::default()
    }
}

/// Kafka's `modifyTopicThrottles`: SET each topic's leader and follower lists.
pub(super) fn set_topic_throttles(
    moves: &BTreeMap<TopicPartition, PartitionMove>,
) -> IncrementalAlterConfigsRequest {
    let leaders = throttled_replicas(moves, true);
    let followers = throttled_replicas(moves, false);
    request(
        leaders
            .iter()
            .map(|(topic, list)| {
                let mut configs = vec![config(LEADER_REPLICAS, SET, Some(list))];
                if let Some(f) = followers.get(topic) {
                    configs.push(config(FOLLOWER_REPLICAS, SET, Some(f)));
                }
                resource(TOPIC, topic.clone(), configs)
            })
            .collect(),
    )
}

/// Kafka's `modifyInterBrokerThrottle` for one broker: SET both rates.
pub(super) fn set_broker_throttle(broker: BrokerId, rate: i64) -> IncrementalAlterConfigsRequest {
    let rate = rate.to_string();
    request(vec![resource(
        BROKER,
        broker.to_string(),
        vec![
            config(LEADER_RATE, SET, Some(&rate)),
            config(FOLLOWER_RATE, SET, Some(&rate)),
        ],
    )])
}

/// Kafka's `clearBrokerLevelThrottles` for one broker: DELETE the three rates.
pub(super) fn clear_broker_throttles(broker: BrokerId) -> IncrementalAlterConfigsRequest {
    request(vec![resource(
        BROKER,
        broker.to_string(),
        [LEADER_RATE, FOLLOWER_RATE, LOG_DIRS_RATE]
            .iter()
            .map(|k| config(k, DELETE, None))
            .collect(),
    )])
}

/// Kafka's `clearTopicLevelThrottles`: DELETE both lists of every topic.
pub(super) fn clear_topic_throttles(topics: &BTreeSet<String>) -> IncrementalAlterConfigsRequest {
    request(
        topics
            .iter()
            .map(|t| {
                resource(
                    TOPIC,
                    t.clone(),
                    [LEADER_REPLICAS, FOLLOWER_REPLICAS]
                        .iter()
                        .map(|k| config(k, DELETE, None))
                        .collect(),
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(topic: &str, partition: i32) -> TopicPartition {
        TopicPartition::new(topic.to_string(), partition)
    }

    #[test]
    fn moves_throttle_sources_as_leaders_and_new_replicas_as_followers() {
        let current = BTreeMap::from([(tp("t", 0), vec![1, 2]), (tp("t", 1), vec![2, 3])]);
        let targets = BTreeMap::from([(tp("t", 0), vec![2, 4]), (tp("t", 1), vec![2, 3])]);
        let moves = move_map(&BTreeMap::new(), &targets, &current);
        assert_eq!(
            throttled_replicas(&moves, true)["t"],
            "0:1,0:2,1:2,1:3",
            "Kafka lists every source, even of a partition that does not move"
        );
        assert_eq!(throttled_replicas(&moves, false)["t"], "0:4");
        assert_eq!(reassigning_brokers(&moves), BTreeSet::from([1, 2, 3, 4]));
    }

    #[test]
    fn a_reassignment_in_progress_keeps_its_sources() {
        let ongoing = BTreeMap::from([(
            tp("t", 0),
            Ongoing {
                replicas: vec![1, 2, 5],
                adding: vec![5],
                removing: vec![1],
            },
        )]);
        let current = BTreeMap::from([(tp("t", 0), vec![1, 2, 5])]);
        let targets = BTreeMap::from([(tp("t", 0), vec![2, 6])]);
        let moves = move_map(&ongoing, &targets, &current);
        assert_eq!(throttled_replicas(&moves, true)["t"], "0:1,0:2");
        assert_eq!(throttled_replicas(&moves, false)["t"], "0:6");
    }

    #[test]
    fn requests_set_and_delete_kafkas_keys() {
        let set = set_broker_throttle(3, 10_000_000);
        assert_eq!(set.resources[0].resource_type, BROKER);
        assert_eq!(set.resources[0].resource_name.to_string_lossy(), "3");
        assert_eq!(set.resources[0].configs.len(), 2);
        let clear = clear_topic_throttles(&BTreeSet::from(["t".to_string()]));
        assert_eq!(clear.resources[0].resource_type, TOPIC);
        assert!(
            clear.resources[0]
                .configs
                .iter()
                .all(|c| c.config_operation == DELETE && c.value.is_none())
        );
    }
}
