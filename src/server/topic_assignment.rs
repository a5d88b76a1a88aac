//! Kafka's checks of the replica assignments clients give: a new topic's
//! (`AdminZkClient.validateTopicCreate`, which, unlike CreatePartitions, lets unknown brokers
//! through, as `kafka-topics` always did) and new partitions' (`ZkAdminManager.createPartitions`
//! with `AdminZkClient.validateReplicaAssignment`), with Kafka's messages and check order.

use std::collections::BTreeMap;

use crate::cluster::BrokerId;

use super::topic_manager::TopicError;

/// The checks `validateTopicCreate` makes of a new topic's assignment: one replication factor,
/// no broker twice in a partition, partition ids `0..n` (Kafka checks that the non-negative ids
/// sum to `n(n-1)/2`, ids being unique).
pub(crate) fn validate_create_assignment(
    assignment: &BTreeMap<i32, Vec<BrokerId>>,
) -> Result<(), TopicError> {
    let mut factors: Vec<usize> = assignment.values().map(Vec::len).collect();
    factors.sort_unstable();
    factors.dedup();
    if factors.len() != 1 {
        return Err(TopicError::InvalidReplicaAssignment(
            "All partitions should have the same number of replicas".into(),
        ));
    }
    if assignment.values().any(|r| has_duplicates(r)) {
        return Err(TopicError::InvalidReplicaAssignment(format!(
            "Duplicate replica assignment found: {}",
            scala_map(assignment)
        )));
    }
    let n = i64::try_from(assignment.len()).unwrap_or(i64::MAX);
    let sum: i64 = assignment
        .keys()
        .filter(|p| **p >= 0)
        .map(|p| i64::from(*p))
        .sum();
    if sum != n.saturating_mul(n - 1) / 2 {
        return Err(TopicError::InvalidReplicaAssignment(
            "partitions should be a consecutive 0-based integer sequence".into(),
        ));
    }
    Ok(())
}

/// CreatePartitions' checks of the assignment of `increment` new partitions numbered from
/// `first`: known brokers, one entry per new partition, then per partition a replica at
/// least, no broker twice, and partition 0's replication factor `rf`. Returns the new
/// partitions by id.
pub(crate) fn validate_new_partitions(
    assignments: &[Vec<BrokerId>],
    increment: i64,
    first: i32,
    rf: usize,
    brokers: &[BrokerId],
) -> Result<BTreeMap<i32, Vec<BrokerId>>, TopicError> {
    let mut unknown: Vec<BrokerId> = Vec::new();
    for b in assignments.iter().flatten() {
        if !brokers.contains(b) && !unknown.contains(b) {
            unknown.push(*b);
        }
    }
    if !unknown.is_empty() {
        return Err(TopicError::InvalidReplicaAssignment(format!(
            "Unknown broker(s) in replica assignment: {}.",
            join(&unknown)
        )));
    }
    if i64::try_from(assignments.len()).unwrap_or(i64::MAX) != increment {
        return Err(TopicError::InvalidReplicaAssignment(format!(
            "Increasing the number of partitions by {increment} but {} assignments provided.",
            assignments.len()
        )));
    }
    let map: BTreeMap<i32, Vec<BrokerId>> = assignments
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let offset = i32::try_from(i).unwrap_or(i32::MAX);
            (first.saturating_add(offset), r.clone())
        })
        .collect();
    for (p, replicas) in &map {
        if replicas.is_empty() {
            return Err(TopicError::InvalidReplicaAssignment(format!(
                "Cannot have replication factor of 0 for partition id {p}."
            )));
        }
        if has_duplicates(replicas) {
            return Err(TopicError::InvalidReplicaAssignment(format!(
                "Duplicate brokers not allowed in replica assignment: {} for partition id {p}.",
                join(replicas)
            )));
        }
    }
    let bad: Vec<(i32, usize)> = map
        .iter()
        .filter(|(_, r)| r.len() != rf)
        .map(|(p, r)| (*p, r.len()))
        .collect();
    if !bad.is_empty() {
        let partitions: Vec<String> = bad.iter().map(|(p, _)| p.to_string()).collect();
        let factors: Vec<String> = bad.iter().map(|(_, n)| n.to_string()).collect();
        return Err(TopicError::InvalidReplicaAssignment(format!(
            "Inconsistent replication factor between partitions, partition 0 has {rf} while \
             partitions [{}] have replication factors [{}], respectively.",
            partitions.join(", "),
            factors.join(", ")
        )));
    }
    Ok(map)
}

fn has_duplicates(replicas: &[BrokerId]) -> bool {
    let mut sorted = replicas.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

fn join(ids: &[BrokerId]) -> String {
    ids.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The assignment as Kafka's message prints its Scala map: `HashMap(0 -> ArrayBuffer(1, 1))`.
fn scala_map(assignment: &BTreeMap<i32, Vec<BrokerId>>) -> String {
    let entries: Vec<String> = assignment
        .iter()
        .map(|(p, r)| format!("{p} -> ArrayBuffer({})", join(r)))
        .collect();
    format!("HashMap({})", entries.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(i32, &[i32])]) -> BTreeMap<i32, Vec<BrokerId>> {
        entries.iter().map(|(p, r)| (*p, r.to_vec())).collect()
    }

    fn message(r: Result<impl std::fmt::Debug, TopicError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn new_topic_assignments_follow_validate_topic_create() {
        assert!(validate_create_assignment(&map(&[(0, &[1]), (1, &[2]), (2, &[1])])).is_ok());
        // Unknown brokers pass, as in Kafka.
        assert!(validate_create_assignment(&map(&[(0, &[7, 8])])).is_ok());
        assert_eq!(
            message(validate_create_assignment(&map(&[(0, &[1]), (1, &[1, 2])]))),
            "All partitions should have the same number of replicas"
        );
        assert_eq!(
            message(validate_create_assignment(&map(&[(0, &[1, 1])]))),
            "Duplicate replica assignment found: HashMap(0 -> ArrayBuffer(1, 1))"
        );
        assert_eq!(
            message(validate_create_assignment(&map(&[(0, &[1]), (2, &[1])]))),
            "partitions should be a consecutive 0-based integer sequence"
        );
        assert!(validate_create_assignment(&map(&[(1, &[1])])).is_err());
    }

    #[test]
    fn new_partition_assignments_follow_create_partitions() {
        let brokers = [1, 2, 3];
        let ok = validate_new_partitions(&[vec![1, 2], vec![2, 3]], 2, 3, 2, &brokers).unwrap();
        assert_eq!(ok, map(&[(3, &[1, 2]), (4, &[2, 3])]));
        assert_eq!(
            message(validate_new_partitions(
                &[vec![1, 9], vec![8, 9]],
                1,
                3,
                2,
                &brokers
            )),
            "Unknown broker(s) in replica assignment: 9, 8."
        );
        assert_eq!(
            message(validate_new_partitions(&[vec![1, 2]], 2, 3, 2, &brokers)),
            "Increasing the number of partitions by 2 but 1 assignments provided."
        );
        assert_eq!(
            message(validate_new_partitions(&[vec![]], 1, 3, 2, &brokers)),
            "Cannot have replication factor of 0 for partition id 3."
        );
        assert_eq!(
            message(validate_new_partitions(&[vec![2, 2]], 1, 3, 2, &brokers)),
            "Duplicate brokers not allowed in replica assignment: 2, 2 for partition id 3."
        );
        assert_eq!(
            message(validate_new_partitions(
                &[vec![1], vec![1, 2], vec![3]],
                3,
                1,
                2,
                &brokers
            )),
            "Inconsistent replication factor between partitions, partition 0 has 2 while \
             partitions [1, 3] have replication factors [1, 1], respectively."
        );
    }
}
