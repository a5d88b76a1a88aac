//! Kafka's partition leader election algorithms (`Election.scala` and
//! `PartitionLeaderElectionAlgorithms`), as pure functions of the assignment, the ISR and the
//! live brokers. Nothing here reads ZooKeeper or the controller context, so every rule is
//! property-tested on its own.
//!
//! The orders matter and are Kafka's: a leader is chosen in **assignment order** (the replica
//! list of `/brokers/topics/<t>`), never in ISR order, so the preferred replica wins whenever it
//! can and leadership stays where operators placed it.

use std::collections::BTreeSet;

use crate::cluster::BrokerId;
pub(crate) use crate::cluster::LeaderRecoveryState;

/// A partition's current leadership as the election sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ElectionInput<'a> {
    /// The replica list in assignment order; its head is the preferred leader.
    pub assignment: &'a [BrokerId],
    /// The in-sync replicas, in the order the state znode lists them.
    pub isr: &'a [BrokerId],
    /// Brokers registered in `/brokers/ids` (and, for replicas, not on a failed log dir).
    pub live: &'a BTreeSet<BrokerId>,
}

impl ElectionInput<'_> {
    fn is_live_in_isr(&self, id: BrokerId) -> bool {
        self.live.contains(&id) && self.isr.contains(&id)
    }
}

/// The outcome of an election: the new leader and ISR. The caller bumps the leader epoch, as
/// every controller-driven leadership change does (`LeaderAndIsr.newLeaderAndIsr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ElectedLeader {
    pub leader: BrokerId,
    pub isr: Vec<BrokerId>,
    pub leader_recovery_state: LeaderRecoveryState,
}

/// `offlinePartitionLeaderElection`: the first replica in assignment order that is live and in
/// the ISR; failing that, when unclean election is allowed, the first live replica at all.
pub(crate) fn offline_partition_leader(
    input: &ElectionInput<'_>,
    unclean: bool,
) -> Option<BrokerId> {
    input
        .assignment
        .iter()
        .copied()
        .find(|id| input.is_live_in_isr(*id))
        .or_else(|| {
            unclean
                .then(|| {
                    input
                        .assignment
                        .iter()
                        .copied()
                        .find(|id| input.live.contains(id))
                })
                .flatten()
        })
}

/// `Election.leaderForOffline`: the leader for an offline (or new) partition and its ISR. A clean
/// leader keeps the live part of the ISR; an unclean one starts a new ISR of itself alone and is
/// RECOVERING (from IBP 3.2, which every version kcli speaks is). `None`: no replica can lead, and
/// the partition stays offline.
pub(crate) fn leader_for_offline(
    input: &ElectionInput<'_>,
    unclean: bool,
) -> Option<ElectedLeader> {
    let leader = offline_partition_leader(input, unclean)?;
    Some(if input.isr.contains(&leader) {
        ElectedLeader {
            leader,
            isr: live_isr(input),
            leader_recovery_state: LeaderRecoveryState::Recovered,
        }
    } else {
        ElectedLeader {
            leader,
            isr: vec![leader],
            leader_recovery_state: LeaderRecoveryState::Recovering,
        }
    })
}

/// `reassignPartitionLeaderElection`: the first replica of the *target* replica set that is live
/// and in the ISR. The ISR keeps its live members.
pub(crate) fn leader_for_reassignment(
    target: &[BrokerId],
    input: &ElectionInput<'_>,
) -> Option<ElectedLeader> {
    let leader = target
        .iter()
        .copied()
        .find(|id| input.is_live_in_isr(*id))?;
    Some(ElectedLeader {
        leader,
        isr: input.isr.to_vec(),
        leader_recovery_state: LeaderRecoveryState::Recovered,
    })
}

/// `preferredReplicaPartitionLeaderElection`: the head of the assignment, only if it is live and
/// in the ISR; the ISR is unchanged.
pub(crate) fn leader_for_preferred_replica(input: &ElectionInput<'_>) -> Option<ElectedLeader> {
    let leader = input
        .assignment
        .first()
        .copied()
        .filter(|id| input.is_live_in_isr(*id))?;
    Some(ElectedLeader {
        leader,
        isr: input.isr.to_vec(),
        leader_recovery_state: LeaderRecoveryState::Recovered,
    })
}

/// `controlledShutdownPartitionLeaderElection`: the first assigned replica that is live, in the
/// ISR and not shutting down. The new ISR drops the brokers shutting down.
pub(crate) fn leader_for_controlled_shutdown(
    input: &ElectionInput<'_>,
    shutting_down: &BTreeSet<BrokerId>,
) -> Option<ElectedLeader> {
    let leader = input
        .assignment
        .iter()
        .copied()
        .find(|id| input.is_live_in_isr(*id) && !shutting_down.contains(id))?;
    Some(ElectedLeader {
        leader,
        isr: input
            .isr
            .iter()
            .copied()
            .filter(|id| !shutting_down.contains(id))
            .collect(),
        leader_recovery_state: LeaderRecoveryState::Recovered,
    })
}

/// The leader and ISR of a brand-new partition (`initializeLeaderAndIsrForPartitions`): the
/// live replicas form the ISR, in assignment order, and the first of them leads.
pub(crate) fn leader_for_new_partition(
    assignment: &[BrokerId],
    live: &BTreeSet<BrokerId>,
) -> Option<ElectedLeader> {
    let isr: Vec<BrokerId> = assignment
        .iter()
        .copied()
        .filter(|id| live.contains(id))
        .collect();
    Some(ElectedLeader {
        leader: *isr.first()?,
        isr,
        leader_recovery_state: LeaderRecoveryState::Recovered,
    })
}

/// The ISR once a replica goes offline (`ReplicaStateMachine`'s `removeReplicasFromIsr`): the
/// replica leaves it, unless it is the last member, because the ISR is never made empty: its
/// last members are the only clean leaders the partition can come back with.
pub(crate) fn isr_without_replica(isr: &[BrokerId], replica: BrokerId) -> Vec<BrokerId> {
    if isr.len() == 1 && isr[0] == replica {
        return isr.to_vec();
    }
    isr.iter().copied().filter(|id| *id != replica).collect()
}

fn live_isr(input: &ElectionInput<'_>) -> Vec<BrokerId> {
    input
        .isr
        .iter()
        .copied()
        .filter(|id| input.live.contains(id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn live(ids: &[BrokerId]) -> BTreeSet<BrokerId> {
        ids.iter().copied().collect()
    }

    #[test]
    fn offline_election_picks_in_assignment_order_not_isr_order() {
        let live = live(&[1, 2, 3]);
        let input = ElectionInput {
            assignment: &[2, 3, 1],
            isr: &[1, 3, 2],
            live: &live,
        };
        assert_eq!(offline_partition_leader(&input, false), Some(2));
    }

    #[test]
    fn offline_election_skips_dead_and_out_of_sync_replicas() {
        let live = live(&[1, 3]);
        let input = ElectionInput {
            assignment: &[2, 1, 3],
            isr: &[2, 3],
            live: &live,
        };
        // 2 is dead, 1 is not in the ISR: 3 it is, and the ISR keeps only its live member.
        let elected = leader_for_offline(&input, false).unwrap();
        assert_eq!(elected.leader, 3);
        assert_eq!(elected.isr, vec![3]);
        assert_eq!(
            elected.leader_recovery_state,
            LeaderRecoveryState::Recovered
        );
    }

    #[test]
    fn unclean_election_only_when_enabled_and_then_recovering() {
        let live = live(&[3]);
        let input = ElectionInput {
            assignment: &[1, 2, 3],
            isr: &[1],
            live: &live,
        };
        assert_eq!(leader_for_offline(&input, false), None);
        let elected = leader_for_offline(&input, true).unwrap();
        assert_eq!(elected.leader, 3);
        assert_eq!(elected.isr, vec![3]);
        assert_eq!(
            elected.leader_recovery_state,
            LeaderRecoveryState::Recovering
        );
    }

    #[test]
    fn preferred_election_takes_only_the_head() {
        let live = live(&[1, 2]);
        let head_out_of_isr = ElectionInput {
            assignment: &[1, 2],
            isr: &[2],
            live: &live,
        };
        assert_eq!(leader_for_preferred_replica(&head_out_of_isr), None);
        let ok = ElectionInput {
            assignment: &[1, 2],
            isr: &[2, 1],
            live: &live,
        };
        assert_eq!(leader_for_preferred_replica(&ok).unwrap().leader, 1);
    }

    #[test]
    fn controlled_shutdown_moves_leadership_and_drops_the_broker_from_the_isr() {
        let live = live(&[1, 2, 3]);
        let input = ElectionInput {
            assignment: &[1, 2, 3],
            isr: &[1, 2, 3],
            live: &live,
        };
        let elected = leader_for_controlled_shutdown(&input, &live_set(&[1])).unwrap();
        assert_eq!(elected.leader, 2);
        assert_eq!(elected.isr, vec![2, 3]);
    }

    fn live_set(ids: &[BrokerId]) -> BTreeSet<BrokerId> {
        live(ids)
    }

    #[test]
    fn the_isr_is_never_made_empty() {
        assert_eq!(isr_without_replica(&[2], 2), vec![2]);
        assert_eq!(isr_without_replica(&[1, 2], 2), vec![1]);
        assert_eq!(isr_without_replica(&[1], 2), vec![1]);
    }

    /// A replica list of distinct ids, an ISR that is a subset of it, and a live set.
    fn partition() -> impl Strategy<Value = (Vec<BrokerId>, Vec<BrokerId>, BTreeSet<BrokerId>)> {
        proptest::sample::subsequence((0..8).collect::<Vec<BrokerId>>(), 1..6)
            .prop_shuffle()
            .prop_flat_map(|assignment| {
                let n = assignment.len();
                (
                    Just(assignment.clone()),
                    proptest::sample::subsequence(assignment.clone(), 0..=n).prop_shuffle(),
                    proptest::sample::subsequence((0..10).collect::<Vec<BrokerId>>(), 0..10),
                )
            })
            .prop_map(|(a, isr, live)| (a, isr, live.into_iter().collect()))
    }

    proptest! {
        #[test]
        fn clean_leader_is_the_first_assigned_live_isr_member(
            (assignment, isr, live) in partition(),
        ) {
            let input = ElectionInput { assignment: &assignment, isr: &isr, live: &live };
            let expected = assignment.iter().copied()
                .find(|id| live.contains(id) && isr.contains(id));
            let elected = leader_for_offline(&input, false);
            prop_assert_eq!(elected.as_ref().map(|e| e.leader), expected);
            if let Some(e) = elected {
                // The ISR is the old ISR's live members, in the old order, and holds the leader.
                let kept: Vec<BrokerId> = isr.iter().copied().filter(|id| live.contains(id)).collect();
                prop_assert_eq!(&e.isr, &kept);
                prop_assert!(e.isr.contains(&e.leader));
                prop_assert_eq!(e.leader_recovery_state, LeaderRecoveryState::Recovered);
            }
        }

        #[test]
        fn unclean_election_changes_nothing_when_a_clean_leader_exists(
            (assignment, isr, live) in partition(),
        ) {
            let input = ElectionInput { assignment: &assignment, isr: &isr, live: &live };
            let clean = leader_for_offline(&input, false);
            let unclean = leader_for_offline(&input, true);
            if clean.is_some() {
                prop_assert_eq!(clean, unclean);
            } else if let Some(e) = unclean {
                // An unclean leader is a live assigned replica outside the ISR, alone in it.
                prop_assert!(live.contains(&e.leader) && assignment.contains(&e.leader));
                prop_assert!(!isr.contains(&e.leader) || !live.contains(&e.leader));
                prop_assert_eq!(e.isr, vec![e.leader]);
                prop_assert_eq!(e.leader_recovery_state, LeaderRecoveryState::Recovering);
            } else {
                prop_assert!(assignment.iter().all(|id| !live.contains(id)));
            }
        }

        #[test]
        fn every_leader_is_live_and_assigned(
            (assignment, isr, live) in partition(),
            down in proptest::sample::subsequence((0..8).collect::<Vec<BrokerId>>(), 0..4),
        ) {
            let input = ElectionInput { assignment: &assignment, isr: &isr, live: &live };
            let shutting_down: BTreeSet<BrokerId> = down.into_iter().collect();
            let results = [
                leader_for_offline(&input, false),
                leader_for_preferred_replica(&input),
                leader_for_controlled_shutdown(&input, &shutting_down),
                leader_for_reassignment(&assignment, &input),
                leader_for_new_partition(&assignment, &live),
            ];
            for e in results.into_iter().flatten() {
                prop_assert!(live.contains(&e.leader));
                prop_assert!(assignment.contains(&e.leader));
                prop_assert!(!e.isr.is_empty());
            }
            if let Some(e) = leader_for_controlled_shutdown(&input, &shutting_down) {
                prop_assert!(!shutting_down.contains(&e.leader));
                prop_assert!(e.isr.iter().all(|id| !shutting_down.contains(id)));
            }
        }

        #[test]
        fn removing_a_replica_keeps_the_isr_non_empty_and_ordered(
            (_assignment, isr, _live) in partition(),
            replica in 0..8i32,
        ) {
            let out = isr_without_replica(&isr, replica);
            if isr.is_empty() {
                prop_assert!(out.is_empty());
            } else {
                prop_assert!(!out.is_empty());
                prop_assert!(out.iter().all(|id| isr.contains(id)));
                if isr != vec![replica] {
                    prop_assert!(!out.contains(&replica));
                }
            }
        }
    }
}
