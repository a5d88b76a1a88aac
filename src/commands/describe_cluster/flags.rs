//! The health flags of one partition, computed from what ZooKeeper holds and nothing else (pure
//! functions), and the `min.insync.replicas` a topic gets: its override at `/config/topics/<t>`,
//! else the cluster default at `/config/brokers/<default>`, else `--min-isr`.

use std::collections::{BTreeMap, BTreeSet};

/// What describe-cluster says about a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Flag {
    /// No leader (-1, or no state yet), or a leader that is not in `/brokers/ids`.
    Offline,
    /// Fewer in-sync replicas than the replication factor.
    UnderReplicated,
    /// Fewer in-sync replicas than min(min.insync.replicas, replication factor).
    UnderMinIsr,
    /// A leader other than the first replica of the assignment.
    PreferredNotLeader,
    /// `leader_recovery_state` 1 (KIP-704: the leader was elected uncleanly and is recovering).
    Recovering,
    /// A reassignment in flight: adding or removing replicas.
    Reassigning,
    /// The topic is under `/admin/delete_topics`.
    MarkedForDeletion,
}

impl Flag {
    pub(super) fn name(self) -> &'static str {
        match self {
            Flag::Offline => "OFFLINE",
            Flag::UnderReplicated => "UNDER-REPLICATED",
            Flag::UnderMinIsr => "UNDER-MIN-ISR",
            Flag::PreferredNotLeader => "PREFERRED-NOT-LEADER",
            Flag::Recovering => "RECOVERING",
            Flag::Reassigning => "REASSIGNING",
            Flag::MarkedForDeletion => "MARKED-FOR-DELETION",
        }
    }

    /// The flags that make describe-cluster exit 1: the partition cannot take writes that need
    /// the ISR (or any writes at all).
    pub(super) fn is_unhealthy(self) -> bool {
        matches!(self, Flag::Offline | Flag::UnderMinIsr)
    }
}

/// The facts about a partition the flags are computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PartitionFacts<'a> {
    pub replicas: &'a [i32],
    pub adding_replicas: &'a [i32],
    pub removing_replicas: &'a [i32],
    /// `None` without a state znode.
    pub leader: Option<i32>,
    pub isr: &'a [i32],
    pub leader_recovery_state: i8,
    pub marked_for_deletion: bool,
}

/// The replication factor as Kafka's `TopicCommand` counts it: during a reassignment the
/// replicas being added do not count yet.
pub(super) fn replication_factor(replicas: &[i32], adding: &[i32]) -> usize {
    replicas.iter().filter(|r| !adding.contains(r)).count()
}

/// The partition's flags, in [`Flag`] order.
pub(super) fn partition_flags(
    p: &PartitionFacts<'_>,
    live_brokers: &BTreeSet<i32>,
    min_isr: i32,
) -> Vec<Flag> {
    let mut flags = Vec::new();
    let leader = p.leader.filter(|&l| l >= 0);
    if leader.is_none_or(|l| !live_brokers.contains(&l)) {
        flags.push(Flag::Offline);
    }
    let rf = replication_factor(p.replicas, p.adding_replicas);
    if p.isr.len() < rf {
        flags.push(Flag::UnderReplicated);
    }
    let needed = usize::try_from(min_isr.max(0)).unwrap_or(0).min(rf);
    if p.isr.len() < needed {
        flags.push(Flag::UnderMinIsr);
    }
    if leader.is_some_and(|l| p.replicas.first() != Some(&l)) {
        flags.push(Flag::PreferredNotLeader);
    }
    if p.leader_recovery_state == 1 {
        flags.push(Flag::Recovering);
    }
    if !p.adding_replicas.is_empty() || !p.removing_replicas.is_empty() {
        flags.push(Flag::Reassigning);
    }
    if p.marked_for_deletion {
        flags.push(Flag::MarkedForDeletion);
    }
    flags
}

/// Where a topic's `min.insync.replicas` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MinIsrSource {
    /// `/config/topics/<t>`.
    Topic,
    /// `/config/brokers/<default>`.
    BrokerDefault,
    /// `--min-isr`.
    CommandLine,
}

pub(super) const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";

/// The topic's `min.insync.replicas` and its source; `Err` names the source whose value is not
/// a positive integer.
pub(super) fn min_insync_replicas(
    topic_configs: &BTreeMap<String, String>,
    broker_defaults: &BTreeMap<String, String>,
    command_line: i32,
) -> Result<(i32, MinIsrSource), MinIsrSource> {
    for (configs, source) in [
        (topic_configs, MinIsrSource::Topic),
        (broker_defaults, MinIsrSource::BrokerDefault),
    ] {
        if let Some(v) = configs.get(MIN_INSYNC_REPLICAS) {
            return match v.trim().parse::<i32>() {
                Ok(n) if n >= 1 => Ok((n, source)),
                _ => Err(source),
            };
        }
    }
    Ok((command_line, MinIsrSource::CommandLine))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(replicas: &'a [i32], leader: Option<i32>, isr: &'a [i32]) -> PartitionFacts<'a> {
        PartitionFacts {
            replicas,
            adding_replicas: &[],
            removing_replicas: &[],
            leader,
            isr,
            leader_recovery_state: 0,
            marked_for_deletion: false,
        }
    }

    fn live(ids: &[i32]) -> BTreeSet<i32> {
        ids.iter().copied().collect()
    }

    #[test]
    fn a_healthy_partition_has_no_flags() {
        assert!(
            partition_flags(
                &facts(&[1, 2, 3], Some(1), &[1, 2, 3]),
                &live(&[1, 2, 3]),
                2
            )
            .is_empty()
        );
    }

    #[test]
    fn offline_without_a_leader_or_with_a_dead_one() {
        let all = live(&[1, 2]);
        assert!(partition_flags(&facts(&[1, 2], Some(-1), &[1]), &all, 1).contains(&Flag::Offline));
        assert!(partition_flags(&facts(&[1, 2], None, &[]), &all, 1).contains(&Flag::Offline));
        // Leader 1 is recorded but not registered: offline, though the ISR is full.
        let flags = partition_flags(&facts(&[1, 2], Some(1), &[1, 2]), &live(&[2]), 1);
        assert_eq!(flags, [Flag::Offline]);
    }

    #[test]
    fn under_replicated_and_under_min_isr() {
        let all = live(&[1, 2, 3]);
        let f = facts(&[1, 2, 3], Some(1), &[1, 2]);
        assert_eq!(partition_flags(&f, &all, 2), [Flag::UnderReplicated]);
        assert_eq!(
            partition_flags(&f, &all, 3),
            [Flag::UnderReplicated, Flag::UnderMinIsr]
        );
        // min.insync.replicas above the replication factor is capped at it.
        let rf1 = facts(&[1], Some(1), &[1]);
        assert!(partition_flags(&rf1, &all, 3).is_empty());
        let rf2 = facts(&[1, 2], Some(1), &[1]);
        assert_eq!(
            partition_flags(&rf2, &all, 5),
            [Flag::UnderReplicated, Flag::UnderMinIsr]
        );
    }

    #[test]
    fn preferred_recovering_reassigning_deleting() {
        let all = live(&[1, 2, 3]);
        let f = facts(&[1, 2], Some(2), &[1, 2]);
        assert_eq!(partition_flags(&f, &all, 1), [Flag::PreferredNotLeader]);
        let mut f = facts(&[1, 2, 3], Some(1), &[1, 2]);
        f.adding_replicas = &[3];
        // The replica being added does not count: RF 2, ISR 2.
        assert_eq!(partition_flags(&f, &all, 2), [Flag::Reassigning]);
        let mut f = facts(&[1, 2], Some(1), &[1, 2]);
        f.removing_replicas = &[2];
        f.leader_recovery_state = 1;
        f.marked_for_deletion = true;
        assert_eq!(
            partition_flags(&f, &all, 1),
            [Flag::Recovering, Flag::Reassigning, Flag::MarkedForDeletion]
        );
        assert_eq!(replication_factor(&[1, 2, 3], &[3, 4]), 2);
    }

    #[test]
    fn min_isr_precedence() {
        let m = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let none = m(&[]);
        let topic = m(&[(MIN_INSYNC_REPLICAS, "3")]);
        let cluster = m(&[(MIN_INSYNC_REPLICAS, "2")]);
        assert_eq!(
            min_insync_replicas(&topic, &cluster, 1),
            Ok((3, MinIsrSource::Topic))
        );
        assert_eq!(
            min_insync_replicas(&none, &cluster, 1),
            Ok((2, MinIsrSource::BrokerDefault))
        );
        assert_eq!(
            min_insync_replicas(&none, &none, 4),
            Ok((4, MinIsrSource::CommandLine))
        );
        let bad = m(&[(MIN_INSYNC_REPLICAS, "two")]);
        assert_eq!(
            min_insync_replicas(&bad, &cluster, 1),
            Err(MinIsrSource::Topic)
        );
        assert_eq!(
            min_insync_replicas(&none, &bad, 1),
            Err(MinIsrSource::BrokerDefault)
        );
    }
}
