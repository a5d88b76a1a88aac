//! Kafka's rack-unaware replica assignment (`AdminUtils.assignReplicasToBrokersRackUnaware`):
//! the first replica of partition `p` goes to broker `(p + start) % n` of the sorted broker
//! list; the others follow at a shift that grows by one every `n` partitions, so replicas
//! spread evenly and no two partitions share the same follower pattern more than needed.

use std::collections::BTreeMap;

use crate::cluster::BrokerId;

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
}

/// Where to start: Kafka draws both at random; fixed values make the result reproducible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssignmentStart {
    /// Index in the sorted broker list of partition `start_partition_id`'s first replica.
    pub start_index: usize,
    /// The initial shift of the second replica from the first.
    pub replica_shift: usize,
}

impl AssignmentStart {
    /// Kafka's random choice of both.
    pub fn random(brokers: usize) -> Self {
        use rand::Rng;
        let n = brokers.max(1);
        let mut rng = rand::rng();
        AssignmentStart {
            start_index: rng.random_range(0..n),
            replica_shift: rng.random_range(0..n),
        }
    }
}

/// Assigns `n_partitions` partitions, numbered from `start_partition_id`, each with
/// `replication_factor` replicas on distinct brokers of `brokers`.
pub fn assign_replicas_to_brokers(
    n_partitions: i32,
    replication_factor: i32,
    brokers: &[BrokerId],
    start_partition_id: i32,
    start: AssignmentStart,
) -> Result<BTreeMap<i32, Vec<BrokerId>>, AssignmentError> {
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
    let mut sorted = brokers.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let mut shift = start.replica_shift;
    let mut out = BTreeMap::new();
    let first_id = start_partition_id.max(0);
    for partition in first_id..first_id.saturating_add(n_partitions) {
        let p = usize::try_from(partition).unwrap_or(0);
        if p > 0 && p % n == 0 {
            shift += 1;
        }
        let first = (p + start.start_index) % n;
        let mut replicas = Vec::with_capacity(rf);
        replicas.push(sorted[first]);
        for j in 0..rf - 1 {
            let step = 1 + (shift + j) % (n - 1);
            replicas.push(sorted[(first + step) % n]);
        }
        out.insert(partition, replicas);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_kafkas_fixed_start_example() {
        // AdminZkClientTest / AdminRackAwareTest's expected map for 10 partitions, rf 3,
        // brokers 0..5, fixed start index 0.
        let got = assign_replicas_to_brokers(
            10,
            3,
            &[0, 1, 2, 3, 4],
            -1,
            AssignmentStart {
                start_index: 0,
                replica_shift: 0,
            },
        )
        .unwrap();
        let expected: BTreeMap<i32, Vec<i32>> = [
            (0, vec![0, 1, 2]),
            (1, vec![1, 2, 3]),
            (2, vec![2, 3, 4]),
            (3, vec![3, 4, 0]),
            (4, vec![4, 0, 1]),
            (5, vec![0, 2, 3]),
            (6, vec![1, 3, 4]),
            (7, vec![2, 4, 0]),
            (8, vec![3, 0, 1]),
            (9, vec![4, 1, 2]),
        ]
        .into_iter()
        .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn refuses_what_kafka_refuses() {
        let start = AssignmentStart::random(1);
        assert_eq!(
            assign_replicas_to_brokers(0, 1, &[0], 0, start),
            Err(AssignmentError::InvalidPartitions)
        );
        assert_eq!(
            assign_replicas_to_brokers(1, 0, &[0], 0, start),
            Err(AssignmentError::ReplicationFactorNotPositive)
        );
        assert_eq!(
            assign_replicas_to_brokers(1, 3, &[0], 0, start)
                .unwrap_err()
                .to_string(),
            "Replication factor: 3 larger than available brokers: 1."
        );
        assert_eq!(
            assign_replicas_to_brokers(3, 1, &[7], 0, start).unwrap(),
            [(0, vec![7]), (1, vec![7]), (2, vec![7])]
                .into_iter()
                .collect()
        );
    }
}
