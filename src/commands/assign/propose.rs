//! The proposals: Kafka's assignment of a new topic, or of existing topics (Kafka's
//! `--generate`: the first partition's replication factor, partitions numbered from 0, each topic
//! its own draws, taken in topic-name order), or with `--minimize-movement` the proposal that
//! meets the same constraints moving the fewest replicas.

use std::collections::BTreeMap;

use crate::admin::balance::Balance;
use crate::admin::minimize_movement::{
    Proposal, minimize_movement, replicas_moved, replication_factor_of,
};
use crate::admin::random::AssignmentStart;
use crate::admin::replica_assignment::{Assignment, BrokerMetadata, assign_replicas_to_brokers};
use crate::cluster::{BrokerId, TopicPartition};

use super::inputs::{Draws, InputError};

/// One topic's proposal.
#[derive(Debug, Clone)]
pub(super) struct TopicProposal {
    pub topic: String,
    pub start: AssignmentStart,
    /// `None` for a new topic.
    pub current: Option<Assignment>,
    pub proposed: Assignment,
    /// With `--minimize-movement`: how the proposal compares with Kafka's.
    pub minimized: Option<Proposal>,
}

impl TopicProposal {
    /// Replicas the proposal places on brokers that do not hold them (existing topics).
    pub(super) fn replicas_moved(&self) -> Option<usize> {
        self.current
            .as_ref()
            .map(|current| replicas_moved(current, &self.proposed))
    }
}

/// Everything a run proposes.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// The target brokers, as the assignment saw them (racks per the rack-aware mode).
    pub brokers: Vec<BrokerMetadata>,
    /// By topic name.
    pub topics: Vec<TopicProposal>,
    /// The seed of the random draws, when a draw was random.
    pub seed: Option<i64>,
    /// Partition sizes in bytes (DescribeLogDirs), when a broker was given.
    pub sizes: Option<BTreeMap<TopicPartition, i64>>,
}

impl Plan {
    /// Every proposed partition, for Kafka's JSON.
    pub(super) fn proposed(&self) -> BTreeMap<TopicPartition, Vec<BrokerId>> {
        self.all(|t| Some(&t.proposed))
    }

    /// Every current partition of the existing topics.
    pub(super) fn current(&self) -> BTreeMap<TopicPartition, Vec<BrokerId>> {
        self.all(|t| t.current.as_ref())
    }

    fn all(
        &self,
        pick: impl Fn(&TopicProposal) -> Option<&Assignment>,
    ) -> BTreeMap<TopicPartition, Vec<BrokerId>> {
        self.topics
            .iter()
            .filter_map(|t| pick(t).map(|a| (t, a)))
            .flat_map(|(t, a)| {
                a.iter()
                    .map(|(p, r)| (TopicPartition::new(&t.topic, *p), r.clone()))
            })
            .collect()
    }

    /// Whether the topics existed (a move is proposed) rather than being new.
    pub(super) fn existing(&self) -> bool {
        self.topics.iter().any(|t| t.current.is_some())
    }

    /// The load of the proposal, and of the current assignment, over the target brokers.
    pub(super) fn balance(&self) -> (Balance, Option<Balance>) {
        let proposed = Balance::of(
            self.topics.iter().flat_map(|t| t.proposed.values()),
            &self.brokers,
        );
        let current = self.existing().then(|| {
            Balance::of(
                self.topics
                    .iter()
                    .filter_map(|t| t.current.as_ref())
                    .flat_map(|a| a.values()),
                &self.brokers,
            )
        });
        (proposed, current)
    }

    /// Bytes the moved replicas copy, when the sizes are known.
    pub(super) fn bytes_moved(&self) -> Option<i64> {
        let sizes = self.sizes.as_ref()?;
        let mut total = 0i64;
        for t in &self.topics {
            let Some(current) = &t.current else { continue };
            for (p, replicas) in &t.proposed {
                let had = current.get(p).map(Vec::as_slice).unwrap_or(&[]);
                let new = replicas.iter().filter(|b| !had.contains(b)).count();
                let size = sizes
                    .get(&TopicPartition::new(&t.topic, *p))
                    .copied()
                    .unwrap_or(0);
                total = total.saturating_add(size.saturating_mul(i64::try_from(new).unwrap_or(0)));
            }
        }
        Some(total)
    }
}

/// Kafka's assignment of a new topic.
pub(super) fn new_topic(
    brokers: &[BrokerMetadata],
    topic: &str,
    partitions: i32,
    replication_factor: i32,
    draws: &mut Draws,
) -> Result<TopicProposal, InputError> {
    let start = draws.draw(brokers.len());
    let proposed = assign_replicas_to_brokers(brokers, partitions, replication_factor, start, 0)?;
    Ok(TopicProposal {
        topic: topic.to_string(),
        start,
        current: None,
        proposed,
        minimized: None,
    })
}

/// A new assignment of an existing topic: Kafka's, or the minimal-movement one.
pub(super) fn existing_topic(
    brokers: &[BrokerMetadata],
    topic: &str,
    current: Assignment,
    draws: &mut Draws,
    minimize: bool,
) -> Result<TopicProposal, InputError> {
    let start = draws.draw(brokers.len());
    let rf = replication_factor_of(&current);
    let (proposed, minimized) = if minimize {
        let p = minimize_movement(&current, brokers, rf, start)?;
        (p.assignment.clone(), Some(p))
    } else {
        let n = i32::try_from(current.len()).unwrap_or(i32::MAX);
        let rf = i32::try_from(rf).unwrap_or(i32::MAX);
        (assign_replicas_to_brokers(brokers, n, rf, start, 0)?, None)
    };
    Ok(TopicProposal {
        topic: topic.to_string(),
        start,
        current: Some(current),
        proposed,
        minimized,
    })
}
