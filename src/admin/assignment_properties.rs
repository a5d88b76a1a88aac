//! proptest invariants of Kafka's assignment as kcli reproduces it: distinct brokers per
//! partition; with racks, one replica per rack while the racks are at least the replication
//! factor (every rack otherwise); leaders and replicas within one of each other per broker when
//! the partitions divide evenly over the brokers, rack-unaware or with equal-sized racks.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::balance::Balance;
use super::replica_assignment::{AssignmentStart, BrokerMetadata, assign_replicas_to_brokers};
use crate::cluster::BrokerId;

/// `n` brokers with ids spread out (so list positions and ids differ), racked round-robin over
/// `racks` racks (0: none).
fn brokers(n: usize, racks: usize, id_step: i32) -> Vec<BrokerMetadata> {
    (0..n)
        .map(|i| {
            let i32_i = i32::try_from(i).unwrap_or(0);
            BrokerMetadata {
                id: 100 + i32_i * id_step,
                rack: (racks > 0).then(|| format!("rack-{}", i % racks)),
            }
        })
        .collect()
}

fn start() -> impl Strategy<Value = AssignmentStart> {
    (0usize..64, 0usize..64).prop_map(|(start_index, replica_shift)| AssignmentStart {
        start_index,
        replica_shift,
    })
}

proptest! {
    #[test]
    fn replicas_are_distinct_and_span_as_many_racks_as_they_can(
        n in 1usize..12,
        racks in 0usize..5,
        rf_seed in 0usize..100,
        partitions in 1i32..60,
        first in -1i32..30,
        id_step in 1i32..4,
        start in start(),
    ) {
        let list = brokers(n, racks.min(n), id_step);
        let rf = 1 + rf_seed % n;
        let got = assign_replicas_to_brokers(
            &list, partitions, i32::try_from(rf).unwrap_or(1), start, first,
        ).unwrap();
        prop_assert_eq!(got.len(), usize::try_from(partitions).unwrap_or(0));
        prop_assert_eq!(got.keys().next().copied(), Some(first.max(0)));
        let racks_used = racks.min(n);
        for replicas in got.values() {
            let distinct: BTreeSet<BrokerId> = replicas.iter().copied().collect();
            prop_assert_eq!(distinct.len(), rf);
            if racks_used > 0 {
                let spanned: BTreeSet<&Option<String>> = replicas
                    .iter()
                    .map(|b| &list.iter().find(|m| m.id == *b).unwrap().rack)
                    .collect();
                prop_assert_eq!(spanned.len(), rf.min(racks_used));
            }
        }
    }

    #[test]
    fn even_partitions_are_balanced_within_one_per_broker(
        n in 1usize..10,
        racks_seed in 0usize..4,
        rounds in 1usize..6,
        rf_seed in 0usize..100,
        start in start(),
    ) {
        // Equal-sized racks: the number of racks divides the brokers (0 = rack-unaware).
        let racks = if racks_seed == 0 {
            0
        } else {
            (1..=n).filter(|r| n % r == 0).nth(racks_seed % n.max(1)).unwrap_or(1)
        };
        let list = brokers(n, racks, 1);
        let rf = 1 + rf_seed % n;
        let partitions = i32::try_from(n * rounds).unwrap_or(1);
        let got = assign_replicas_to_brokers(
            &list, partitions, i32::try_from(rf).unwrap_or(1), start, 0,
        ).unwrap();
        let balance = Balance::of(got.values(), &list);
        prop_assert!(balance.leader_skew() <= 1, "{:?}", balance);
        prop_assert!(balance.replica_skew() <= 1, "{:?}", balance);
    }
}
