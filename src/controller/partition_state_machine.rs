//! Kafka's `ZkPartitionStateMachine`: the life of a partition as the controller drives it.
//!
//! States and the transitions into them, as data ([`PartitionState::valid_previous_states`]):
//!
//! | target | from | what happens |
//! |---|---|---|
//! | New | NonExistent | the assignment is known; nothing is written |
//! | Online | New | leader and ISR initialised from the live replicas; the state znode is created; LeaderAndIsr (is_new) to them |
//! | Online | Online, Offline | a leader elected by the strategy; the state znode rewritten with the epoch bumped; LeaderAndIsr to the live replicas |
//! | Offline | New, Online, Offline | marked only: the leader is gone |
//! | NonExistent | Offline | forgotten (topic deleted) |
//!
//! Every znode write is fenced by the controller epoch; a partition's state in the context
//! changes only after its znode did.

use std::collections::BTreeSet;

use crate::cluster::{BrokerId, TopicPartition};
use crate::zk::kafka_zk_client::{KafkaZkClient, StateWrite};
use crate::zk::zk_data;

use super::controller_context::{ControllerContext, LeaderIsrAndControllerEpoch};
use super::controller_request_batch::ControllerBrokerRequestBatch;
use super::election::{self, ElectedLeader, ElectionInput};
use super::error::ControllerError;
use super::metrics::ControllerStats;

/// A partition's state in the controller (`PartitionState` in Kafka; the numbers are its
/// `state` bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartitionState {
    New,
    Online,
    Offline,
    NonExistent,
}

impl PartitionState {
    pub fn state_code(self) -> u8 {
        match self {
            PartitionState::New => 0,
            PartitionState::Online => 1,
            PartitionState::Offline => 2,
            PartitionState::NonExistent => 3,
        }
    }

    /// The states a partition may enter this one from.
    pub fn valid_previous_states(self) -> &'static [PartitionState] {
        use PartitionState::*;
        match self {
            New => &[NonExistent],
            Online | Offline => &[New, Online, Offline],
            NonExistent => &[Offline],
        }
    }

    pub fn can_enter_from(self, from: PartitionState) -> bool {
        self.valid_previous_states().contains(&from)
    }
}

/// How an Online transition of an existing partition picks its leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PartitionLeaderElectionStrategy {
    /// The leader is gone: the first live ISR member in assignment order; unclean when the
    /// strategy or the topic's `unclean.leader.election.enable` allows it.
    Offline { allow_unclean: bool },
    /// The head of the assignment (preferred replica election, auto rebalance).
    Preferred,
    /// Away from the brokers in controlled shutdown.
    ControlledShutdown,
    /// Into the target replicas of a completing reassignment (`ReassignPartitionLeaderElectionStrategy`).
    Reassign,
}

/// The partition state machine over one decision: the context, the fenced ZooKeeper client and
/// the batch the decision's requests collect in.
#[derive(Debug)]
pub(crate) struct PartitionStateMachine<'a> {
    pub ctx: &'a mut ControllerContext,
    pub zk: &'a KafkaZkClient,
    pub batch: &'a mut ControllerBrokerRequestBatch,
    /// The broker's `unclean.leader.election.enable`, which a topic's config overrides.
    pub unclean_leader_election_default: bool,
    /// Where an unclean election is counted.
    pub stats: &'a ControllerStats,
}

impl PartitionStateMachine<'_> {
    /// Kafka's `initializePartitionState`: the state of every known partition from its
    /// leadership: none yet → New, a live leader → Online, else Offline.
    pub(crate) fn initialize_partition_states(&mut self) {
        for tp in self.ctx.all_partitions() {
            let state = match self.ctx.leadership.get(&tp) {
                None => PartitionState::New,
                Some(l) if self.ctx.is_replica_online(l.state.leader, &tp) => {
                    PartitionState::Online
                }
                Some(_) => PartitionState::Offline,
            };
            self.ctx.partition_states.insert(tp, state);
        }
    }

    /// Kafka's `triggerOnlinePartitionStateChange`: every New or Offline partition of a topic not
    /// being deleted goes Online if a leader can be found. Returns the partitions that did.
    pub(crate) async fn trigger_online_partition_state_change(
        &mut self,
    ) -> Result<Vec<TopicPartition>, ControllerError> {
        let partitions: Vec<TopicPartition> = self
            .ctx
            .partition_states
            .iter()
            .filter(|(tp, s)| {
                matches!(s, PartitionState::New | PartitionState::Offline)
                    && !self.ctx.is_topic_queued_for_deletion(&tp.topic)
            })
            .map(|(tp, _)| tp.clone())
            .collect();
        self.handle_state_changes(
            &partitions,
            PartitionState::Online,
            &PartitionLeaderElectionStrategy::Offline {
                allow_unclean: false,
            },
        )
        .await
    }

    /// Moves `partitions` to `target`; returns those that got there. Invalid transitions are
    /// logged and skipped, as Kafka does.
    pub(crate) async fn handle_state_changes(
        &mut self,
        partitions: &[TopicPartition],
        target: PartitionState,
        strategy: &PartitionLeaderElectionStrategy,
    ) -> Result<Vec<TopicPartition>, ControllerError> {
        let mut valid = Vec::new();
        for tp in partitions {
            let current = self.ctx.partition_state(tp);
            if target.can_enter_from(current) {
                valid.push((tp.clone(), current));
            } else {
                tracing::error!(partition = %tp, from = ?current, to = ?target,
                    "invalid partition state transition");
            }
        }
        match target {
            PartitionState::New | PartitionState::Offline => {
                for (tp, _) in &valid {
                    self.ctx.partition_states.insert(tp.clone(), target);
                }
                Ok(valid.into_iter().map(|(tp, _)| tp).collect())
            }
            PartitionState::NonExistent => {
                for (tp, _) in &valid {
                    self.ctx.partition_states.remove(tp);
                }
                Ok(valid.into_iter().map(|(tp, _)| tp).collect())
            }
            PartitionState::Online => {
                let (new, existing): (Vec<_>, Vec<_>) = valid
                    .into_iter()
                    .partition(|(_, s)| *s == PartitionState::New);
                let mut done = self
                    .initialize_leader_and_isr(new.into_iter().map(|(tp, _)| tp).collect())
                    .await?;
                done.extend(
                    self.elect_leaders(existing.into_iter().map(|(tp, _)| tp).collect(), strategy)
                        .await?,
                );
                for tp in &done {
                    self.ctx
                        .partition_states
                        .insert(tp.clone(), PartitionState::Online);
                }
                Ok(done)
            }
        }
    }

    /// `initializeLeaderAndIsrForPartitions`: the live replicas become the ISR and the first of
    /// them the leader, written as a new state znode. A partition with no live replica stays
    /// New; one whose state znode already exists (written by an earlier controller) is left to
    /// the failover that loads it.
    async fn initialize_leader_and_isr(
        &mut self,
        partitions: Vec<TopicPartition>,
    ) -> Result<Vec<TopicPartition>, ControllerError> {
        let live = self.ctx.live_broker_ids_not_shutting_down();
        let mut creates = Vec::new();
        for tp in partitions {
            let Some(leader) = election::leader_for_new_partition(self.ctx.replicas(&tp), &live)
            else {
                tracing::error!(partition = %tp, replicas = ?self.ctx.replicas(&tp),
                    "no live replica to lead a new partition");
                continue;
            };
            let state = self.new_state(&leader, 0);
            creates.push((tp, state));
        }
        let created = self
            .zk
            .create_topic_partition_states(self.ctx.fencing_epoch(), &creates)
            .await?;
        let mut done = Vec::new();
        for ((tp, state), created) in creates.into_iter().zip(created) {
            let Some(partition_epoch) = created else {
                tracing::error!(partition = %tp, "state znode of a new partition exists");
                continue;
            };
            let leadership = LeaderIsrAndControllerEpoch {
                state,
                partition_epoch,
            };
            // The new ISR is the live replicas: each hears of its partition.
            let isr = leadership.state.isr.clone();
            self.batch.add_leader_and_isr_request_for_brokers(
                self.ctx,
                &isr,
                &tp,
                &leadership,
                true,
            );
            self.ctx.leadership.insert(tp.clone(), leadership);
            done.push(tp);
        }
        Ok(done)
    }

    /// `electLeaderForPartitions`: reads the state znodes, elects, and writes each result at
    /// the zkVersion read, every read and every write of a round pipelined; a write that lost a
    /// race (the leader changed the ISR meanwhile) is read and elected again in the next round.
    async fn elect_leaders(
        &mut self,
        mut partitions: Vec<TopicPartition>,
        strategy: &PartitionLeaderElectionStrategy,
    ) -> Result<Vec<TopicPartition>, ControllerError> {
        let mut done = Vec::new();
        while !partitions.is_empty() {
            let states = self.zk.get_topic_partition_states(&partitions).await?;
            let mut writes = Vec::new();
            for (tp, current) in partitions.into_iter().zip(states) {
                let Some((current, partition_epoch)) = current else {
                    tracing::error!(partition = %tp, "no state znode to elect a leader in");
                    continue;
                };
                if let Some(state) = self.elect_leader(&tp, &current, strategy).await? {
                    writes.push((tp, state, partition_epoch));
                }
            }
            let outcomes = self
                .zk
                .update_leader_and_isrs(self.ctx.fencing_epoch(), &writes)
                .await?;
            let mut retry = Vec::new();
            for ((tp, state, _), outcome) in writes.into_iter().zip(outcomes) {
                match outcome {
                    StateWrite::Stale => retry.push(tp),
                    StateWrite::Written { partition_epoch } => {
                        self.elected(&tp, state, partition_epoch);
                        done.push(tp);
                    }
                }
            }
            partitions = retry;
        }
        Ok(done)
    }

    /// One election over the state read: the new state to write, or `None` for no leader.
    async fn elect_leader(
        &mut self,
        tp: &TopicPartition,
        current: &zk_data::PartitionState,
        strategy: &PartitionLeaderElectionStrategy,
    ) -> Result<Option<zk_data::PartitionState>, ControllerError> {
        if current.controller_epoch > self.ctx.epoch {
            return Err(ControllerError::ControllerMoved {
                controller_epoch: self.ctx.epoch,
            });
        }
        // A broker in controlled shutdown is live but may neither lead nor stay in the ISR
        // (Kafka's `isReplicaOnline` without `includeShuttingDownBrokers`); it still hears of
        // the result, so it can follow.
        // A replica on a failed log dir may not lead either.
        let live = self
            .ctx
            .without_offline_dirs(self.ctx.live_broker_ids_not_shutting_down(), tp);
        let replicas = self.ctx.replicas(tp).to_vec();
        let input = ElectionInput {
            assignment: &replicas,
            isr: &current.isr,
            live: &live,
        };
        let elected = match strategy {
            PartitionLeaderElectionStrategy::Offline { allow_unclean } => {
                match election::leader_for_offline(&input, false) {
                    Some(clean) => Some(clean),
                    None if *allow_unclean || self.unclean_allowed(&tp.topic).await? => {
                        election::leader_for_offline(&input, true)
                    }
                    None => None,
                }
            }
            PartitionLeaderElectionStrategy::Preferred => {
                election::leader_for_preferred_replica(&input)
            }
            PartitionLeaderElectionStrategy::ControlledShutdown => {
                let down = self.ctx.shutting_down_broker_ids.clone();
                election::leader_for_controlled_shutdown(&input, &down)
            }
            PartitionLeaderElectionStrategy::Reassign => {
                let target = self
                    .ctx
                    .assignment(tp)
                    .map(|a| a.target_replicas())
                    .unwrap_or_default();
                election::leader_for_reassignment(&target, &input)
            }
        };
        let Some(elected) = elected else {
            tracing::warn!(partition = %tp, isr = ?current.isr, live = ?live,
                "no eligible leader; the partition stays offline");
            return Ok(None);
        };
        if elected.leader_recovery_state == election::LeaderRecoveryState::Recovering {
            // Counted when elected, before the write, as Kafka's `offlinePartitionLeaderElection`.
            self.stats.unclean_leader_elections.mark(1);
            tracing::warn!(partition = %tp, leader = elected.leader,
                "unclean leader election: records not on the new leader are lost");
        }
        Ok(Some(self.new_state(&elected, current.leader_epoch + 1)))
    }

    /// Records an election written at `partition_epoch` and queues its LeaderAndIsr.
    fn elected(
        &mut self,
        tp: &TopicPartition,
        state: zk_data::PartitionState,
        partition_epoch: i32,
    ) {
        let leadership = LeaderIsrAndControllerEpoch {
            state,
            partition_epoch,
        };
        // Kafka's `liveReplicas`: a replica on a failed log dir (or refused for want of
        // descriptors) is not told; it answered KAFKA_STORAGE_ERROR once, and asking again at
        // every election would only refuse again.
        let live_or_shutting_down = self.ctx.live_broker_ids();
        let recipients: Vec<BrokerId> = self
            .ctx
            .replicas(tp)
            .iter()
            .copied()
            .filter(|r| {
                live_or_shutting_down.contains(r) && !self.ctx.is_replica_on_offline_dir(*r, tp)
            })
            .collect();
        self.batch.add_leader_and_isr_request_for_brokers(
            self.ctx,
            &recipients,
            tp,
            &leadership,
            false,
        );
        self.ctx.leadership.insert(tp.clone(), leadership);
    }

    fn new_state(&self, elected: &ElectedLeader, leader_epoch: i32) -> zk_data::PartitionState {
        zk_data::PartitionState {
            leader: elected.leader,
            leader_epoch,
            isr: elected.isr.clone(),
            controller_epoch: self.ctx.epoch,
            leader_recovery_state: elected.leader_recovery_state.value(),
        }
    }

    /// The topic's `unclean.leader.election.enable`, else the broker's.
    async fn unclean_allowed(&self, topic: &str) -> Result<bool, ControllerError> {
        let overrides = self.zk.get_topic_config(topic).await?;
        Ok(overrides
            .get("unclean.leader.election.enable")
            .map_or(self.unclean_leader_election_default, |v| {
                v.eq_ignore_ascii_case("true")
            }))
    }
}

/// The partitions whose leader is not live (`partitionsWithOfflineLeader`; a broker in
/// controlled shutdown counts as gone, and so does a leader whose replica is on a failed log
/// dir), topics being deleted excepted.
pub(crate) fn partitions_with_offline_leader(ctx: &ControllerContext) -> Vec<TopicPartition> {
    let live: BTreeSet<BrokerId> = ctx.live_broker_ids_not_shutting_down();
    ctx.leadership
        .iter()
        .filter(|(tp, l)| {
            (!live.contains(&l.state.leader) || ctx.is_replica_on_offline_dir(l.state.leader, tp))
                && !ctx.is_topic_queued_for_deletion(&tp.topic)
        })
        .map(|(tp, _)| tp.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::PartitionState::*;
    use super::*;

    #[test]
    fn transitions_are_kafkas() {
        assert!(New.can_enter_from(NonExistent));
        assert!(!New.can_enter_from(Online));
        assert!(Online.can_enter_from(New));
        assert!(Online.can_enter_from(Offline));
        assert!(!Online.can_enter_from(NonExistent));
        assert!(NonExistent.can_enter_from(Offline));
        assert!(!NonExistent.can_enter_from(Online));
        assert_eq!(
            [New, Online, Offline, NonExistent].map(PartitionState::state_code),
            [0, 1, 2, 3]
        );
    }
}
