//! Kafka's replica assignment (`AdminUtils.assignReplicasToBrokers`), both halves.
//!
//! Rack-unaware: the leader of partition `p` is broker `(p + start) % n` of the broker list as
//! given; follower `j` sits at `replica_index(first, shift, j, n)`, a distance from the leader
//! that grows by one every `n` partitions, so replicas spread evenly and no two partitions share
//! a follower pattern more than needed. Rack-aware ([`super::rack_aware`]): the same walk over the
//! rack-alternated list, skipping brokers on racks already used while a rack is unused.
//!
//! The list order is the caller's, as in Kafka: `AdminZkClient.getBrokerMetadatas` (the CLI's
//! and CreatePartitions' source) sorts by id, and so do kcli's other callers.

use std::collections::BTreeMap;

use crate::cluster::BrokerId;

use super::rack_aware;
pub use super::random::AssignmentStart;

/// Partition id → replicas, the first being the preferred leader.
pub type Assignment = BTreeMap<i32, Vec<BrokerId>>;

/// Why no assignment exists for the request, worded as Kafka words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignmentError {
    /// `INVALID_PARTITIONS`.
    #[error("Number of partitions must be larger than 0.")]
    InvalidPartitions,
    /// `INVALID_REPLICATION_FACTOR`.
    #[error("Replication factor must be larger than 0.")]
    ReplicationFactorNotPositive,
    /// `INVALID_REPLICATION_FACTOR`.
    #[error("Replication factor: {replication_factor} larger than available brokers: {brokers}.")]
    ReplicationFactorTooLarge {
        replication_factor: i32,
        brokers: usize,
    },
    /// AdminUtils' `AdminOperationException` when some brokers have a rack and some do not
    /// (CreateTopics on the controller gets this; the CLI and CreatePartitions check first,
    /// with [`RackAwareMode`](super::rack_aware::RackAwareMode)).
    #[error("Not all brokers have rack information for replica rack aware assignment.")]
    RackMissingForRackAwareAssignment { without_rack: Vec<BrokerId> },
    /// `RackAwareMode::Enforced` (`AdminZkClient.getBrokerMetadatas`): racks on only some of
    /// the brokers.
    #[error(
        "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information."
    )]
    NotAllBrokersHaveRack { without_rack: Vec<BrokerId> },
    /// A broker listed twice. Kafka's inputs come from id-keyed maps and never repeat one; an
    /// assignment from a repeated id would place two replicas on one broker.
    #[error("Broker {broker} is listed more than once.")]
    DuplicateBroker { broker: BrokerId },
}

/// A broker as the assignment sees it (Kafka's `org.apache.kafka.admin.BrokerMetadata`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BrokerMetadata {
    pub id: BrokerId,
    pub rack: Option<String>,
}

impl BrokerMetadata {
    pub fn new(id: BrokerId, rack: Option<&str>) -> Self {
        BrokerMetadata {
            id,
            rack: rack.map(str::to_string),
        }
    }
}

/// Assigns `n_partitions` partitions numbered from `max(0, start_partition_id)`, each with
/// `replication_factor` replicas on distinct brokers of `brokers`: rack-unaware when no broker
/// has a rack, rack-aware otherwise (every broker must then have one).
pub fn assign_replicas_to_brokers(
    brokers: &[BrokerMetadata],
    n_partitions: i32,
    replication_factor: i32,
    start: AssignmentStart,
    start_partition_id: i32,
) -> Result<Assignment, AssignmentError> {
    if n_partitions <= 0 {
        return Err(AssignmentError::InvalidPartitions);
    }
    if replication_factor <= 0 {
        return Err(AssignmentError::ReplicationFactorNotPositive);
    }
    let rf = usize::try_from(replication_factor).unwrap_or(usize::MAX);
    if rf > brokers.len() {
        return Err(AssignmentError::ReplicationFactorTooLarge {
            replication_factor,
            brokers: brokers.len(),
        });
    }
    let mut ids: Vec<BrokerId> = brokers.iter().map(|b| b.id).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(AssignmentError::DuplicateBroker { broker: w[0] });
    }
    let partitions = PartitionRange::new(start_partition_id, n_partitions);
    if brokers.iter().all(|b| b.rack.is_none()) {
        let list: Vec<BrokerId> = brokers.iter().map(|b| b.id).collect();
        return Ok(assign_rack_unaware(&list, rf, start, partitions));
    }
    rack_aware::assign_rack_aware(brokers, rf, start, partitions)
}

/// The partition ids to assign: `first..first + count`, `first = max(0, start_partition_id)`.
#[derive(Debug, Clone, Copy)]
pub(super) struct PartitionRange {
    first: i32,
    count: i32,
}

impl PartitionRange {
    fn new(start_partition_id: i32, count: i32) -> Self {
        PartitionRange {
            first: start_partition_id.max(0),
            count,
        }
    }

    pub(super) fn ids(self) -> impl Iterator<Item = i32> {
        self.first..self.first.saturating_add(self.count)
    }
}

/// Kafka's shift step: one more whenever `p > 0 && p % n == 0`, checked for every partition
/// assigned, the first included (so numbering from an existing count continues the rounds).
pub(super) fn next_shift(shift: usize, p: i32, n: usize) -> usize {
    let p = usize::try_from(p).unwrap_or(0);
    if p > 0 && p % n == 0 {
        shift.wrapping_add(1)
    } else {
        shift
    }
}

/// Partition `p`'s leader index: `(p + start) % n`.
pub(super) fn first_index(p: i32, start: AssignmentStart, n: usize) -> usize {
    (usize::try_from(p).unwrap_or(0) % n + start.start_index % n) % n
}

/// Kafka's `replicaIndex`: `(first + 1 + (shift + j) % (n - 1)) % n`, `n > 1`. Computed modulo
/// `n - 1` first, so a large fixed shift cannot overflow.
pub(super) fn replica_index(first: usize, shift: usize, j: usize, n: usize) -> usize {
    let m = n - 1;
    let step = 1 + (shift % m + j % m) % m;
    (first + step) % n
}

fn assign_rack_unaware(
    brokers: &[BrokerId],
    rf: usize,
    start: AssignmentStart,
    partitions: PartitionRange,
) -> Assignment {
    let n = brokers.len();
    let mut out = Assignment::new();
    let mut shift = start.replica_shift;
    for p in partitions.ids() {
        shift = next_shift(shift, p, n);
        let first = first_index(p, start, n);
        let mut replicas = Vec::with_capacity(rf);
        replicas.push(brokers[first]);
        for j in 0..rf - 1 {
            replicas.push(brokers[replica_index(first, shift, j, n)]);
        }
        out.insert(p, replicas);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn unracked(ids: &[BrokerId]) -> Vec<BrokerMetadata> {
        ids.iter()
            .map(|id| BrokerMetadata::new(*id, None))
            .collect()
    }

    fn expected(rows: &[(i32, &[i32])]) -> Assignment {
        rows.iter().map(|(p, r)| (*p, r.to_vec())).collect()
    }

    #[test]
    fn matches_kafkas_fixed_start_example() {
        // AdminUtils' documented table: five brokers, 10 partitions, rf 3, start index 0
        // (AdminZkClientTest / AdminRackAwareTest expect the same map).
        let got = assign_replicas_to_brokers(
            &unracked(&[0, 1, 2, 3, 4]),
            10,
            3,
            AssignmentStart::fixed(0),
            -1,
        )
        .unwrap();
        assert_eq!(
            got,
            expected(&[
                (0, &[0, 1, 2]),
                (1, &[1, 2, 3]),
                (2, &[2, 3, 4]),
                (3, &[3, 4, 0]),
                (4, &[4, 0, 1]),
                (5, &[0, 2, 3]),
                (6, &[1, 3, 4]),
                (7, &[2, 4, 0]),
                (8, &[3, 0, 1]),
                (9, &[4, 1, 2]),
            ])
        );
    }

    #[test]
    fn numbering_from_an_existing_count_counts_rounds_from_there() {
        // CreatePartitions from 5 existing partitions on 5 brokers: partition 5 starts a new
        // round, so its shift is the fixed start plus one, as if numbered from 0.
        let brokers = unracked(&[0, 1, 2, 3, 4]);
        let all =
            assign_replicas_to_brokers(&brokers, 10, 3, AssignmentStart::fixed(0), 0).unwrap();
        let tail =
            assign_replicas_to_brokers(&brokers, 5, 3, AssignmentStart::fixed(0), 5).unwrap();
        assert_eq!(tail, all.range(5..).map(|(p, r)| (*p, r.clone())).collect());
        // From 7 the shift stays at the start's until partition 10 (Kafka counts the rounds
        // from the first id assigned, not from 0).
        let mid = assign_replicas_to_brokers(&brokers, 5, 3, AssignmentStart::fixed(0), 7).unwrap();
        assert_eq!(
            mid,
            expected(&[
                (7, &[2, 3, 4]),
                (8, &[3, 4, 0]),
                (9, &[4, 0, 1]),
                (10, &[0, 2, 3]),
                (11, &[1, 3, 4]),
            ])
        );
    }

    #[test]
    fn the_given_order_is_kept_as_kafka_keeps_it() {
        let got =
            assign_replicas_to_brokers(&unracked(&[3, 1, 2]), 3, 2, AssignmentStart::fixed(0), 0)
                .unwrap();
        assert_eq!(got, expected(&[(0, &[3, 1]), (1, &[1, 2]), (2, &[2, 3])]));
    }

    #[test]
    fn refuses_what_kafka_refuses() {
        let start = AssignmentStart::random(1);
        let one = unracked(&[0]);
        assert_eq!(
            assign_replicas_to_brokers(&one, 0, 1, start, 0),
            Err(AssignmentError::InvalidPartitions)
        );
        assert_eq!(
            assign_replicas_to_brokers(&one, 1, 0, start, 0),
            Err(AssignmentError::ReplicationFactorNotPositive)
        );
        assert_eq!(
            assign_replicas_to_brokers(&one, 1, 3, start, 0)
                .unwrap_err()
                .to_string(),
            "Replication factor: 3 larger than available brokers: 1."
        );
        assert_eq!(
            assign_replicas_to_brokers(&unracked(&[7]), 3, 1, start, 0).unwrap(),
            expected(&[(0, &[7]), (1, &[7]), (2, &[7])])
        );
        assert_eq!(
            assign_replicas_to_brokers(&unracked(&[1, 2, 1]), 1, 1, start, 0),
            Err(AssignmentError::DuplicateBroker { broker: 1 })
        );
        let partial = vec![
            BrokerMetadata::new(0, Some("a")),
            BrokerMetadata::new(1, None),
        ];
        assert_eq!(
            assign_replicas_to_brokers(&partial, 1, 1, start, 0)
                .unwrap_err()
                .to_string(),
            "Not all brokers have rack information for replica rack aware assignment."
        );
    }

    #[test]
    fn a_huge_fixed_shift_wraps_instead_of_overflowing() {
        let brokers = unracked(&[0, 1, 2, 3]);
        let huge = AssignmentStart {
            start_index: usize::MAX,
            replica_shift: usize::MAX,
        };
        let got = assign_replicas_to_brokers(&brokers, 8, 3, huge, 0).unwrap();
        for replicas in got.values() {
            let mut sorted = replicas.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 3);
        }
    }
}
