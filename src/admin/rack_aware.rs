//! The rack-aware half of Kafka's assignment (`AdminUtils.assignReplicasToBrokersRackAware`,
//! `getRackAlternatedBrokerList`) and `RackAwareMode`, which decides whether racks are used.
//!
//! The brokers are first interleaved across racks: racks sorted by name, each rack's brokers by
//! id, then one broker from each rack in turn until all are taken (racks r1: 0,5, r2: 3,4 and
//! r3: 1,2 give 0,3,1,5,4,2). Leaders walk that list round-robin from the start index; each
//! follower is looked for from `replica_index(first, shift * racks, k, n)` on, `k` counting every
//! candidate tried, and a candidate is skipped while its rack already holds a replica and some
//! rack holds none, or while it holds one itself and some broker holds none. So a partition
//! spans `min(rf, racks)` racks, and when rf equals the number of equal-sized racks the
//! replicas are spread evenly over brokers and racks.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::BrokerId;

use super::replica_assignment::{
    Assignment, AssignmentError, AssignmentStart, BrokerMetadata, PartitionRange, first_index,
    next_shift, replica_index,
};

/// How racks are used (Kafka's `kafka.admin.RackAwareMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RackAwareMode {
    /// Every broker has a rack or none has; racks on only some brokers are an error. The
    /// default of Kafka's command line tools and of CreatePartitions.
    #[default]
    Enforced,
    /// Racks are used when every broker has one, and ignored otherwise (Kafka's auto topic
    /// creation).
    Safe,
    /// Racks are ignored.
    Disabled,
}

impl RackAwareMode {
    /// Kafka's `AdminZkClient.getBrokerMetadatas`: the brokers with their racks as this mode
    /// allows, sorted by id.
    pub fn broker_metadatas(
        self,
        mut brokers: Vec<BrokerMetadata>,
    ) -> Result<Vec<BrokerMetadata>, AssignmentError> {
        let without_rack: Vec<BrokerId> = brokers
            .iter()
            .filter(|b| b.rack.is_none())
            .map(|b| b.id)
            .collect();
        let partial = !without_rack.is_empty() && without_rack.len() < brokers.len();
        if self == RackAwareMode::Enforced && partial {
            let mut without_rack = without_rack;
            without_rack.sort_unstable();
            return Err(AssignmentError::NotAllBrokersHaveRack { without_rack });
        }
        if self == RackAwareMode::Disabled || partial {
            for b in &mut brokers {
                b.rack = None;
            }
        }
        brokers.sort_by_key(|b| b.id);
        Ok(brokers)
    }
}

/// Kafka's `getRackAlternatedBrokerList`.
pub fn get_rack_alternated_broker_list(racks: &BTreeMap<BrokerId, String>) -> Vec<BrokerId> {
    // BTreeMap keys give racks in name order and, pushed in id order, each rack's brokers by id.
    let mut by_rack: BTreeMap<&str, Vec<BrokerId>> = BTreeMap::new();
    for (id, rack) in racks {
        by_rack.entry(rack.as_str()).or_default().push(*id);
    }
    let columns: Vec<Vec<BrokerId>> = by_rack.into_values().collect();
    let deepest = columns.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::with_capacity(racks.len());
    for row in 0..deepest {
        for column in &columns {
            if let Some(id) = column.get(row) {
                out.push(*id);
            }
        }
    }
    out
}

pub(super) fn assign_rack_aware(
    brokers: &[BrokerMetadata],
    rf: usize,
    start: AssignmentStart,
    partitions: PartitionRange,
) -> Result<Assignment, AssignmentError> {
    let mut rack_of: BTreeMap<BrokerId, String> = BTreeMap::new();
    let mut without_rack = Vec::new();
    for b in brokers {
        match &b.rack {
            Some(rack) => {
                rack_of.insert(b.id, rack.clone());
            }
            None => without_rack.push(b.id),
        }
    }
    if !without_rack.is_empty() {
        without_rack.sort_unstable();
        return Err(AssignmentError::RackMissingForRackAwareAssignment { without_rack });
    }
    let num_racks = rack_of.values().collect::<BTreeSet<_>>().len();
    let arranged = get_rack_alternated_broker_list(&rack_of);
    let n = arranged.len();
    let mut out = Assignment::new();
    let mut shift = start.replica_shift;
    for p in partitions.ids() {
        shift = next_shift(shift, p, n);
        let first = first_index(p, start, n);
        let leader = arranged[first];
        let mut replicas = Vec::with_capacity(rf);
        replicas.push(leader);
        let mut racks_used: BTreeSet<&str> = BTreeSet::new();
        racks_used.insert(rack_of[&leader].as_str());
        let mut k = 0usize;
        if rf > 1 {
            // `shift * racks` modulo n - 1, the only way replica_index uses it.
            let m = n - 1;
            let rack_shift = (shift % m) * (num_racks % m) % m;
            for _ in 1..rf {
                // Every other broker comes up within n - 1 candidates, and one of them is
                // acceptable while fewer than rf <= n brokers hold a replica: the loop ends.
                for _ in 0..n {
                    let candidate = arranged[replica_index(first, rack_shift, k, n)];
                    k += 1;
                    let rack = rack_of[&candidate].as_str();
                    let rack_ok = !racks_used.contains(rack) || racks_used.len() == num_racks;
                    let broker_ok = !replicas.contains(&candidate) || replicas.len() == n;
                    if rack_ok && broker_ok {
                        replicas.push(candidate);
                        racks_used.insert(rack);
                        break;
                    }
                }
            }
        }
        out.insert(p, replicas);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::replica_assignment::assign_replicas_to_brokers;
    use super::*;

    fn racked(pairs: &[(BrokerId, &str)]) -> Vec<BrokerMetadata> {
        pairs
            .iter()
            .map(|(id, rack)| BrokerMetadata::new(*id, Some(rack)))
            .collect()
    }

    fn rack_map(pairs: &[(BrokerId, &str)]) -> BTreeMap<BrokerId, String> {
        pairs.iter().map(|(id, r)| (*id, r.to_string())).collect()
    }

    const DOC_RACKS: &[(BrokerId, &str)] = &[
        (0, "rack1"),
        (1, "rack3"),
        (2, "rack3"),
        (3, "rack2"),
        (4, "rack2"),
        (5, "rack1"),
    ];

    #[test]
    fn the_documented_alternated_lists() {
        assert_eq!(
            get_rack_alternated_broker_list(&rack_map(DOC_RACKS)),
            [0, 3, 1, 5, 4, 2]
        );
        let three = rack_map(&[
            (0, "rack1"),
            (1, "rack1"),
            (2, "rack1"),
            (3, "rack2"),
            (4, "rack2"),
            (5, "rack2"),
            (6, "rack3"),
            (7, "rack3"),
            (8, "rack3"),
        ]);
        assert_eq!(
            get_rack_alternated_broker_list(&three),
            [0, 3, 6, 1, 4, 7, 2, 5, 8]
        );
        // Uneven racks: an exhausted rack is skipped.
        let uneven = rack_map(&[(5, "b"), (1, "a"), (2, "a"), (3, "a"), (9, "c")]);
        assert_eq!(get_rack_alternated_broker_list(&uneven), [1, 5, 9, 2, 3]);
    }

    #[test]
    fn the_documented_rack_aware_example() {
        // AdminUtils' Javadoc: start index 0 (as a fixed start, so shift 0), rf 3, partitions
        // 0-5 walk the alternated list, and partition 6 shifts its followers.
        let got =
            assign_replicas_to_brokers(&racked(DOC_RACKS), 7, 3, AssignmentStart::fixed(0), 0)
                .unwrap();
        let expected: Assignment = [
            (0, vec![0, 3, 1]),
            (1, vec![3, 1, 5]),
            (2, vec![1, 5, 4]),
            (3, vec![5, 4, 2]),
            (4, vec![4, 2, 0]),
            (5, vec![2, 0, 3]),
            (6, vec![0, 4, 2]),
        ]
        .into_iter()
        .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn kafkas_output_is_unbalanced_with_uneven_racks() {
        // Racks {0:a, 1:a, 2:b}, rf 2, 6 partitions: every partition needs rack b, which has
        // only broker 2, so it holds six replicas; broker 0 two and broker 1 four.
        let brokers = racked(&[(0, "a"), (1, "a"), (2, "b")]);
        let got = assign_replicas_to_brokers(&brokers, 6, 2, AssignmentStart::fixed(0), 0).unwrap();
        let count = |b: BrokerId| got.values().filter(|r| r.contains(&b)).count();
        assert_eq!((count(0), count(1), count(2)), (2, 4, 6));
    }

    #[test]
    fn rack_aware_modes_follow_get_broker_metadatas() {
        let partial = vec![
            BrokerMetadata::new(2, Some("r1")),
            BrokerMetadata::new(0, None),
            BrokerMetadata::new(1, Some("r2")),
        ];
        let err = RackAwareMode::Enforced
            .broker_metadatas(partial.clone())
            .unwrap_err();
        assert_eq!(
            err,
            AssignmentError::NotAllBrokersHaveRack {
                without_rack: vec![0]
            }
        );
        assert_eq!(
            err.to_string(),
            "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information."
        );
        let safe = RackAwareMode::Safe.broker_metadatas(partial).unwrap();
        assert_eq!(
            safe,
            [
                BrokerMetadata::new(0, None),
                BrokerMetadata::new(1, None),
                BrokerMetadata::new(2, None)
            ]
        );
        let full = racked(&[(1, "r1"), (0, "r2")]);
        assert_eq!(
            RackAwareMode::Safe.broker_metadatas(full.clone()).unwrap(),
            racked(&[(0, "r2"), (1, "r1")])
        );
        assert_eq!(
            RackAwareMode::Enforced
                .broker_metadatas(full.clone())
                .unwrap(),
            racked(&[(0, "r2"), (1, "r1")])
        );
        assert!(
            RackAwareMode::Disabled
                .broker_metadatas(full)
                .unwrap()
                .iter()
                .all(|b| b.rack.is_none())
        );
    }
}
