//! The group coordinator's MBeans as Kafka 3.9 registers them:
//! `kafka.coordinator.group:type=GroupMetadataManager` NumGroups and `NumGroups<State>`
//! (PreparingRebalance, CompletingRebalance, Stable, Dead, Empty), the groups this broker
//! coordinates now, read from the manager's cache when the metrics are collected.
//!
//! Strimzi's rules export no `kafka.coordinator.*` MBean (their patterns' `\w+` stops at the
//! domain's dot), so these render under rules that do, such as Confluent's.
//!
//! Reading takes the groups map only to copy the groups out, then each group's lock alone, as
//! the manager's lock order asks (nothing locks a group while holding the map).

use std::sync::{Arc, Weak};

use crate::cluster::sync::lock;
use crate::metrics::{MBeanName, MetricSample, MetricsSource, Reading};

use super::group_metadata::GroupState;
use super::group_metadata_manager::GroupMetadataManager;

/// The states in the order Kafka registers their gauges, with the gauges' names.
const STATES: [(GroupState, &str); 5] = [
    (
        GroupState::PreparingRebalance,
        "NumGroupsPreparingRebalance",
    ),
    (
        GroupState::CompletingRebalance,
        "NumGroupsCompletingRebalance",
    ),
    (GroupState::Stable, "NumGroupsStable"),
    (GroupState::Dead, "NumGroupsDead"),
    (GroupState::Empty, "NumGroupsEmpty"),
];

/// The manager's source; see the module doc.
#[derive(Debug)]
pub(crate) struct GroupMetadataManagerMetrics {
    manager: Weak<GroupMetadataManager>,
}

impl GroupMetadataManagerMetrics {
    pub(crate) fn new(manager: &Arc<GroupMetadataManager>) -> Self {
        GroupMetadataManagerMetrics {
            manager: Arc::downgrade(manager),
        }
    }
}

fn gauge(name: &'static str, value: usize) -> MetricSample {
    MetricSample {
        mbean: MBeanName::yammer("kafka.coordinator.group", "GroupMetadataManager", name, &[]),
        reading: Reading::Gauge(value as f64),
    }
}

impl MetricsSource for GroupMetadataManagerMetrics {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        let Some(manager) = self.manager.upgrade() else {
            return;
        };
        let groups = manager.all_groups();
        let mut counts = [0usize; STATES.len()];
        for group in &groups {
            let state = lock(group).state;
            if let Some(i) = STATES.iter().position(|(s, _)| *s == state) {
                counts[i] += 1;
            }
        }
        out.push(gauge("NumGroups", groups.len()));
        for ((_, name), count) in STATES.iter().zip(counts) {
            out.push(gauge(name, count));
        }
    }
}
