//! `--minimize-movement` (beyond Kafka, KAFKA-1792): for an existing topic, an assignment that
//! meets the rack and balance [`Constraints`] Kafka's own proposal meets, moving as few replicas
//! as possible from where they are.
//!
//! Kafka's `--generate` computes a fresh assignment from random draws and ignores the current
//! one, so even a topic that is already balanced gets most of its replicas moved. Here Kafka's
//! assignment `K` for the same brokers and draws is computed first and sets the bar; then:
//!
//! 1. a current assignment that already meets the constraints is kept as it is (0 moves);
//! 2. otherwise the replica sets are chosen by a min-cost flow (partition → rack → broker, a
//!    replica that stays costs 0 and one that moves 1; the rack rule and the per-broker replica
//!    bounds are capacities, the lower bounds penalties larger than any number of moves), and
//!    the leaders by a second one (keeping a partition's preferred leader costs 0), so the
//!    replicas moved are the fewest any assignment meeting the replica constraints needs, `K`
//!    being one such assignment;
//! 3. if the leaders cannot be balanced within those sets, or the result would move more than
//!    `K` (neither can happen on the inputs tested, and each is checked), `K` is proposed.
//!
//! A replica "moves" when a partition gets a broker it did not have: that broker copies the
//! partition. Reordering replicas (a new preferred leader) copies nothing and is not counted.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::BrokerId;

use super::balance::Balance;
use super::movement_flows;
use super::replica_assignment::{
    Assignment, AssignmentError, AssignmentStart, BrokerMetadata, assign_replicas_to_brokers,
};

/// What a proposal for one topic must meet, derived from Kafka's assignment `K` of the same
/// partitions over the same target brokers with the same draws:
///
/// 1. every partition `0..n` has exactly `replication_factor` replicas, on distinct target
///    brokers (no other partition ids);
/// 2. Kafka's rack rule, when the brokers have racks: each partition's replicas span
///    `min(replication_factor, racks)` racks, that is one replica per rack while the racks are
///    at least the replication factor, and every rack otherwise (Kafka never puts a second
///    replica on a rack while a rack has none);
/// 3. each target broker holds a number of replicas within `replicas_per_broker`, the least and
///    most `K` puts on one target broker (0 included, for a broker `K` leaves empty);
/// 4. each target broker is the first replica (preferred leader) of a number of partitions
///    within `leaders_per_broker`, likewise from `K`.
///
/// `K` meets them by construction, so a proposal meeting them is balanced at least as well as
/// Kafka's, broker by broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraints {
    pub replication_factor: usize,
    pub partitions: Vec<i32>,
    pub brokers: Vec<BrokerMetadata>,
    /// Each target broker's rack; empty when the assignment is rack-unaware.
    pub rack_of: BTreeMap<BrokerId, String>,
    /// Distinct racks among the target brokers (0 when rack-unaware).
    pub num_racks: usize,
    pub replicas_per_broker: (usize, usize),
    pub leaders_per_broker: (usize, usize),
}

/// The first way an assignment fails the constraints, as a user reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("partition {partition} is missing")]
    MissingPartition { partition: i32 },
    #[error("partition {partition} is not one of the topic's")]
    UnexpectedPartition { partition: i32 },
    #[error("partition {partition} has {replicas} replicas, not {expected}")]
    ReplicaCount {
        partition: i32,
        replicas: usize,
        expected: usize,
    },
    #[error("partition {partition} has broker {broker} twice")]
    DuplicateBroker { partition: i32, broker: BrokerId },
    #[error("partition {partition} has a replica on broker {broker}, which is not a target broker")]
    NotATarget { partition: i32, broker: BrokerId },
    #[error("partition {partition} spans {racks} racks, not {expected}")]
    RackRule {
        partition: i32,
        racks: usize,
        expected: usize,
    },
    #[error("broker {broker} has {count} replicas, outside Kafka's {min}..={max}")]
    ReplicaBalance {
        broker: BrokerId,
        count: usize,
        min: usize,
        max: usize,
    },
    #[error("broker {broker} leads {count} partitions, outside Kafka's {min}..={max}")]
    LeaderBalance {
        broker: BrokerId,
        count: usize,
        min: usize,
        max: usize,
    },
}

impl Constraints {
    /// The constraints `kafka` (Kafka's assignment over `brokers`) sets.
    pub fn new(brokers: &[BrokerMetadata], kafka: &Assignment, replication_factor: usize) -> Self {
        let rack_aware = !brokers.is_empty() && brokers.iter().all(|b| b.rack.is_some());
        let rack_of: BTreeMap<BrokerId, String> = if rack_aware {
            brokers
                .iter()
                .filter_map(|b| b.rack.clone().map(|r| (b.id, r)))
                .collect()
        } else {
            BTreeMap::new()
        };
        let num_racks = rack_of.values().collect::<BTreeSet<_>>().len();
        let balance = Balance::of(kafka.values(), brokers);
        Constraints {
            replication_factor,
            partitions: kafka.keys().copied().collect(),
            brokers: brokers.to_vec(),
            rack_of,
            num_racks,
            replicas_per_broker: balance.replica_range(),
            leaders_per_broker: balance.leader_range(),
        }
    }

    /// Racks each partition must span (0 when rack-unaware).
    pub fn racks_per_partition(&self) -> usize {
        self.replication_factor.min(self.num_racks)
    }

    /// Whether `assignment` meets every constraint; the first violation found otherwise.
    pub fn check(&self, assignment: &Assignment) -> Result<(), Violation> {
        let targets: BTreeSet<BrokerId> = self.brokers.iter().map(|b| b.id).collect();
        for p in &self.partitions {
            if !assignment.contains_key(p) {
                return Err(Violation::MissingPartition { partition: *p });
            }
        }
        for (p, replicas) in assignment {
            if self.partitions.binary_search(p).is_err() {
                return Err(Violation::UnexpectedPartition { partition: *p });
            }
            if replicas.len() != self.replication_factor {
                return Err(Violation::ReplicaCount {
                    partition: *p,
                    replicas: replicas.len(),
                    expected: self.replication_factor,
                });
            }
            let mut seen = BTreeSet::new();
            for b in replicas {
                if !targets.contains(b) {
                    return Err(Violation::NotATarget {
                        partition: *p,
                        broker: *b,
                    });
                }
                if !seen.insert(*b) {
                    return Err(Violation::DuplicateBroker {
                        partition: *p,
                        broker: *b,
                    });
                }
            }
            if !self.rack_of.is_empty() {
                let racks: BTreeSet<&String> = replicas
                    .iter()
                    .filter_map(|b| self.rack_of.get(b))
                    .collect();
                if racks.len() < self.racks_per_partition() {
                    return Err(Violation::RackRule {
                        partition: *p,
                        racks: racks.len(),
                        expected: self.racks_per_partition(),
                    });
                }
            }
        }
        let balance = Balance::of(assignment.values(), &self.brokers);
        let (rmin, rmax) = self.replicas_per_broker;
        let (lmin, lmax) = self.leaders_per_broker;
        for load in balance.brokers.iter().filter(|l| l.known) {
            if load.replicas < rmin || load.replicas > rmax {
                return Err(Violation::ReplicaBalance {
                    broker: load.id,
                    count: load.replicas,
                    min: rmin,
                    max: rmax,
                });
            }
            if load.leaders < lmin || load.leaders > lmax {
                return Err(Violation::LeaderBalance {
                    broker: load.id,
                    count: load.leaders,
                    min: lmin,
                    max: lmax,
                });
            }
        }
        Ok(())
    }
}

/// Replicas `proposed` places on brokers that did not hold them in `current`.
pub fn replicas_moved(current: &Assignment, proposed: &Assignment) -> usize {
    proposed
        .iter()
        .map(|(p, replicas)| {
            let had = current.get(p).map(Vec::as_slice).unwrap_or(&[]);
            replicas.iter().filter(|b| !had.contains(b)).count()
        })
        .sum()
}

/// The replication factor Kafka's `--generate` uses for a topic: its first partition's.
pub fn replication_factor_of(current: &Assignment) -> usize {
    current.values().next().map_or(0, Vec::len)
}

/// Where a proposal came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposalSource {
    /// The current assignment already met the constraints.
    Current,
    /// The min-cost solution.
    Minimized,
    /// Kafka's own assignment (the fallback).
    Kafka,
}

/// A proposal for one topic, with Kafka's for comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub assignment: Assignment,
    pub source: ProposalSource,
    pub replicas_moved: usize,
    /// Kafka's assignment with the same draws, and what it would move.
    pub kafka: Assignment,
    pub kafka_replicas_moved: usize,
    pub constraints: Constraints,
    /// Why the current assignment did not do (`None` when it did).
    pub current_violation: Option<Violation>,
}

/// Proposes an assignment of `current`'s partitions (numbered `0..n`) with `replication_factor`
/// replicas over `brokers` (in Kafka's order, racks as `RackAwareMode` left them), meeting the
/// [`Constraints`] of Kafka's assignment with the draws `start`, moving as few replicas as
/// possible.
pub fn minimize_movement(
    current: &Assignment,
    brokers: &[BrokerMetadata],
    replication_factor: usize,
    start: AssignmentStart,
) -> Result<Proposal, AssignmentError> {
    let n = i32::try_from(current.len()).unwrap_or(i32::MAX);
    let rf = i32::try_from(replication_factor).unwrap_or(i32::MAX);
    let kafka = assign_replicas_to_brokers(brokers, n, rf, start, 0)?;
    let constraints = Constraints::new(brokers, &kafka, replication_factor);
    let kafka_replicas_moved = replicas_moved(current, &kafka);
    let proposal = |assignment: Assignment, source, violation| {
        let moved = replicas_moved(current, &assignment);
        Proposal {
            assignment,
            source,
            replicas_moved: moved,
            kafka: kafka.clone(),
            kafka_replicas_moved,
            constraints: constraints.clone(),
            current_violation: violation,
        }
    };
    let violation = match constraints.check(current) {
        Ok(()) => return Ok(proposal(current.clone(), ProposalSource::Current, None)),
        Err(v) => v,
    };
    // Two orders of the two flows; each may fail on inputs where the other succeeds.
    let sets_first = movement_flows::replica_sets(current, &constraints, None).and_then(|sets| {
        let leaders = movement_flows::leaders(current, &constraints, &sets)?;
        Some(movement_flows::ordered(current, &sets, &leaders))
    });
    let leaders_first = {
        let anywhere: BTreeMap<i32, Vec<BrokerId>> = constraints
            .partitions
            .iter()
            .map(|p| (*p, constraints.brokers.iter().map(|b| b.id).collect()))
            .collect();
        movement_flows::leaders(current, &constraints, &anywhere).and_then(|leaders| {
            let sets = movement_flows::replica_sets(current, &constraints, Some(&leaders))?;
            Some(movement_flows::ordered(current, &sets, &leaders))
        })
    };
    let best = [sets_first, leaders_first]
        .into_iter()
        .flatten()
        .filter(|a| constraints.check(a).is_ok())
        .min_by_key(|a| replicas_moved(current, a));
    if let Some(assignment) = best
        && replicas_moved(current, &assignment) <= kafka_replicas_moved
    {
        return Ok(proposal(
            assignment,
            ProposalSource::Minimized,
            Some(violation),
        ));
    }
    Ok(proposal(
        kafka.clone(),
        ProposalSource::Kafka,
        Some(violation),
    ))
}

#[cfg(test)]
#[path = "minimize_movement_tests.rs"]
mod tests;
