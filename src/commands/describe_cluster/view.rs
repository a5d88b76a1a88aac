//! What describe-cluster shows: the snapshot's topics narrowed by `--topic`, each partition with
//! its flags, and only the partitions `--under-replicated` / `--offline` ask for (either flag
//! when both are given; a topic with no partition left is not shown). Brokers and the
//! controller are always shown in full.

use std::collections::BTreeSet;

use super::flags::{self, Flag, MinIsrSource, PartitionFacts};
use super::snapshot::{
    BROKER_DEFAULT_CONFIG_PATH, ClusterSnapshot, PartitionSnapshot, TopicSnapshot,
};

/// The filters of the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Filters {
    /// Only these topics; all when empty.
    pub topics: Vec<String>,
    pub under_replicated: bool,
    pub offline: bool,
    /// `--min-isr`: min.insync.replicas where ZooKeeper sets none.
    pub min_isr: i32,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(super) enum ViewError {
    #[error("topic {topic:?} does not exist (no {path})")]
    UnknownTopic { topic: String, path: String },
    #[error("malformed znode {path}: min.insync.replicas {value:?} is not a positive integer")]
    BadMinIsr { path: String, value: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PartitionView<'a> {
    pub partition: &'a PartitionSnapshot,
    pub flags: Vec<Flag>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TopicView<'a> {
    pub topic: &'a TopicSnapshot,
    pub min_isr: i32,
    pub partitions: Vec<PartitionView<'a>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ClusterView<'a> {
    pub snapshot: &'a ClusterSnapshot,
    pub topics: Vec<TopicView<'a>>,
}

impl ClusterView<'_> {
    /// Whether any shown partition is OFFLINE or UNDER-MIN-ISR (exit 1).
    pub(super) fn unhealthy(&self) -> bool {
        self.topics
            .iter()
            .flat_map(|t| &t.partitions)
            .any(|p| p.flags.iter().any(|f| f.is_unhealthy()))
    }

    /// Whether the controller registered at `/controller` is a registered broker (during a
    /// KRaft migration it is a KRaft controller, absent from `/brokers/ids`).
    pub(super) fn controller_is_a_broker(&self) -> bool {
        self.snapshot
            .controller
            .as_ref()
            .is_some_and(|c| self.snapshot.brokers.iter().any(|b| b.id == c.broker_id))
    }
}

/// Applies `filters` to `snapshot`.
pub(super) fn build<'a>(
    snapshot: &'a ClusterSnapshot,
    filters: &Filters,
) -> Result<ClusterView<'a>, ViewError> {
    for topic in &filters.topics {
        if !snapshot.topics.iter().any(|t| &t.name == topic) {
            return Err(ViewError::UnknownTopic {
                topic: topic.clone(),
                path: crate::zk::zk_data::topic_path(topic),
            });
        }
    }
    let live: BTreeSet<i32> = snapshot.brokers.iter().map(|b| b.id).collect();
    let mut topics = Vec::new();
    for topic in &snapshot.topics {
        if !filters.topics.is_empty() && !filters.topics.contains(&topic.name) {
            continue;
        }
        let min_isr = match flags::min_insync_replicas(
            &topic.configs,
            &snapshot.broker_defaults,
            filters.min_isr,
        ) {
            Ok((n, _)) => n,
            Err(source) => {
                let (path, configs) = match source {
                    MinIsrSource::Topic => (
                        crate::zk::zk_data::topic_config_path(&topic.name),
                        &topic.configs,
                    ),
                    _ => (
                        BROKER_DEFAULT_CONFIG_PATH.to_string(),
                        &snapshot.broker_defaults,
                    ),
                };
                return Err(ViewError::BadMinIsr {
                    path,
                    value: configs
                        .get(flags::MIN_INSYNC_REPLICAS)
                        .cloned()
                        .unwrap_or_default(),
                });
            }
        };
        let partitions: Vec<PartitionView<'_>> = topic
            .partitions
            .iter()
            .map(|p| PartitionView {
                partition: p,
                flags: flags::partition_flags(&facts(p, topic.marked_for_deletion), &live, min_isr),
            })
            .filter(|p| shown(&p.flags, filters))
            .collect();
        if partitions.is_empty() && (filters.under_replicated || filters.offline) {
            continue;
        }
        topics.push(TopicView {
            topic,
            min_isr,
            partitions,
        });
    }
    Ok(ClusterView { snapshot, topics })
}

fn facts(p: &PartitionSnapshot, marked_for_deletion: bool) -> PartitionFacts<'_> {
    PartitionFacts {
        replicas: &p.replicas,
        adding_replicas: &p.adding_replicas,
        removing_replicas: &p.removing_replicas,
        leader: p.state.as_ref().map(|s| s.state.leader),
        isr: p.state.as_ref().map_or(&[], |s| &s.state.isr),
        leader_recovery_state: p
            .state
            .as_ref()
            .map_or(0, |s| s.state.leader_recovery_state),
        marked_for_deletion,
    }
}

fn shown(flags: &[Flag], filters: &Filters) -> bool {
    if !filters.under_replicated && !filters.offline {
        return true;
    }
    (filters.under_replicated && flags.contains(&Flag::UnderReplicated))
        || (filters.offline && flags.contains(&Flag::Offline))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::zk::zk_data::PartitionState;

    use super::super::snapshot::StateSnapshot;

    fn partition(n: i32, replicas: &[i32], leader: i32, isr: &[i32]) -> PartitionSnapshot {
        PartitionSnapshot {
            partition: n,
            replicas: replicas.to_vec(),
            adding_replicas: vec![],
            removing_replicas: vec![],
            state: Some(StateSnapshot {
                state: PartitionState {
                    leader,
                    leader_epoch: 0,
                    isr: isr.to_vec(),
                    controller_epoch: 1,
                    leader_recovery_state: 0,
                },
                partition_epoch: 0,
            }),
        }
    }

    fn topic(name: &str, partitions: Vec<PartitionSnapshot>) -> TopicSnapshot {
        TopicSnapshot {
            name: name.into(),
            topic_id: None,
            configs: BTreeMap::new(),
            marked_for_deletion: false,
            partitions,
        }
    }

    fn snapshot() -> ClusterSnapshot {
        ClusterSnapshot {
            topics: vec![
                topic(
                    "a",
                    vec![
                        partition(0, &[1, 2], 1, &[1, 2]),
                        partition(1, &[2, 1], -1, &[2]),
                    ],
                ),
                topic("b", vec![partition(0, &[1, 2], 1, &[1])]),
            ],
            ..ClusterSnapshot::default()
        }
    }

    fn with_broker(mut s: ClusterSnapshot, ids: &[i32]) -> ClusterSnapshot {
        use crate::zk::zk_data::{BrokerRegistration, BrokerZNode};
        for &id in ids {
            s.brokers.push(super::super::snapshot::BrokerSnapshot {
                id,
                znode: BrokerZNode {
                    version: 5,
                    host: None,
                    port: -1,
                    registration: BrokerRegistration {
                        endpoints: vec![],
                        rack: None,
                        jmx_port: -1,
                        timestamp_ms: 0,
                    },
                    features: BTreeMap::new(),
                },
                broker_epoch: 1,
            });
        }
        s
    }

    fn names(v: &ClusterView<'_>) -> Vec<(String, i32)> {
        v.topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.topic.name.clone(), p.partition.partition))
            })
            .collect()
    }

    #[test]
    fn filters_narrow_partitions_and_topics() {
        let s = with_broker(snapshot(), &[1, 2]);
        let all = Filters {
            min_isr: 1,
            ..Filters::default()
        };
        let v = build(&s, &all).unwrap();
        assert_eq!(names(&v).len(), 3);
        assert!(v.unhealthy(), "a-1 is offline");
        let offline = Filters {
            offline: true,
            ..all.clone()
        };
        assert_eq!(names(&build(&s, &offline).unwrap()), [("a".to_string(), 1)]);
        let under = Filters {
            under_replicated: true,
            ..all.clone()
        };
        assert_eq!(
            names(&build(&s, &under).unwrap()),
            [("a".to_string(), 1), ("b".to_string(), 0)]
        );
        let b = Filters {
            topics: vec!["b".into()],
            ..all.clone()
        };
        let v = build(&s, &b).unwrap();
        assert_eq!(names(&v), [("b".to_string(), 0)]);
        assert!(
            !v.unhealthy(),
            "under-replicated alone is healthy at min ISR 1"
        );
        let b2 = Filters { min_isr: 2, ..b };
        assert!(build(&s, &b2).unwrap().unhealthy());
        let missing = Filters {
            topics: vec!["zz".into()],
            ..all
        };
        assert_eq!(
            build(&s, &missing),
            Err(ViewError::UnknownTopic {
                topic: "zz".into(),
                path: "/brokers/topics/zz".into()
            })
        );
    }

    #[test]
    fn a_bad_min_isr_names_its_znode() {
        let mut s = snapshot();
        s.broker_defaults
            .insert("min.insync.replicas".into(), "x".into());
        let err = build(
            &s,
            &Filters {
                min_isr: 1,
                ..Filters::default()
            },
        )
        .unwrap_err();
        assert_eq!(
            err,
            ViewError::BadMinIsr {
                path: "/config/brokers/<default>".into(),
                value: "x".into()
            }
        );
    }
}
