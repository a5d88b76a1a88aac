//! Kafka's `ZkReplicaStateMachine`: the life of one replica (a partition on one broker) as the
//! controller drives it.
//!
//! | target | from | what happens |
//! |---|---|---|
//! | New | NonExistent | the replica is assigned; it gets the partition's leadership if there is one |
//! | Online | New, Online, Offline, DeletionIneligible | LeaderAndIsr with the current leadership to its broker |
//! | Offline | New, Online, Offline, DeletionIneligible | StopReplica (keep the log) to its broker; it leaves every ISR (never emptying one), losing leadership if it led; LeaderAndIsr to the other replicas |
//! | DeletionStarted | Offline | StopReplica with deletion |
//! | DeletionSuccessful | DeletionStarted | the broker confirmed the deletion |
//! | DeletionIneligible | Offline, DeletionStarted | the deletion must wait (the broker is down, or failed it) |
//! | NonExistent | DeletionSuccessful | forgotten |

use crate::cluster::{BrokerId, TopicPartition};
use crate::zk::kafka_zk_client::KafkaZkClient;
use crate::zk::zk_data;

use super::controller_context::{ControllerContext, LeaderIsrAndControllerEpoch};
use super::controller_request_batch::ControllerBrokerRequestBatch;
use super::election;
use super::error::ControllerError;
use super::partition_state_update::update_partition_states;

/// A replica's state in the controller (Kafka's `ReplicaState`, with its state numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReplicaState {
    New,
    Online,
    Offline,
    DeletionStarted,
    DeletionSuccessful,
    DeletionIneligible,
    NonExistent,
}

impl ReplicaState {
    pub fn state_code(self) -> u8 {
        match self {
            ReplicaState::New => 1,
            ReplicaState::Online => 2,
            ReplicaState::Offline => 3,
            ReplicaState::DeletionStarted => 4,
            ReplicaState::DeletionSuccessful => 5,
            ReplicaState::DeletionIneligible => 6,
            ReplicaState::NonExistent => 7,
        }
    }

    /// The states a replica may enter this one from.
    pub fn valid_previous_states(self) -> &'static [ReplicaState] {
        use ReplicaState::*;
        match self {
            New => &[NonExistent],
            Online | Offline => &[New, Online, Offline, DeletionIneligible],
            DeletionStarted => &[Offline],
            DeletionSuccessful => &[DeletionStarted],
            DeletionIneligible => &[Offline, DeletionStarted],
            NonExistent => &[DeletionSuccessful],
        }
    }

    pub fn can_enter_from(self, from: ReplicaState) -> bool {
        self.valid_previous_states().contains(&from)
    }
}

/// The replica state machine over one decision.
#[derive(Debug)]
pub(crate) struct ReplicaStateMachine<'a> {
    pub ctx: &'a mut ControllerContext,
    pub zk: &'a KafkaZkClient,
    pub batch: &'a mut ControllerBrokerRequestBatch,
}

impl ReplicaStateMachine<'_> {
    /// Kafka's `initializeReplicaState`: a replica on a live broker is Online, else
    /// DeletionIneligible when its topic is being deleted, else Offline.
    pub(crate) fn initialize_replica_states(&mut self) {
        for tp in self.ctx.all_partitions() {
            for replica in self.ctx.replicas(&tp).to_vec() {
                let state = if self.ctx.is_replica_online(replica, &tp) {
                    ReplicaState::Online
                } else if self.ctx.is_topic_queued_for_deletion(&tp.topic) {
                    ReplicaState::DeletionIneligible
                } else {
                    ReplicaState::Offline
                };
                self.ctx.replica_states.insert((tp.clone(), replica), state);
            }
        }
    }

    /// Moves `replicas` to `target`; invalid transitions are logged and skipped.
    pub(crate) async fn handle_state_changes(
        &mut self,
        replicas: &[(TopicPartition, BrokerId)],
        target: ReplicaState,
    ) -> Result<(), ControllerError> {
        let mut valid = Vec::new();
        for (tp, replica) in replicas {
            let current = self.ctx.replica_state(tp, *replica);
            if target.can_enter_from(current) {
                valid.push((tp.clone(), *replica));
            } else {
                tracing::error!(partition = %tp, replica, from = ?current, to = ?target,
                    "invalid replica state transition");
            }
        }
        match target {
            ReplicaState::New => {
                let mut added = Vec::new();
                for (tp, replica) in valid {
                    match self.ctx.leadership.get(&tp).cloned() {
                        Some(l) if l.state.leader == replica => {
                            tracing::error!(partition = %tp, replica,
                                "a replica asked to lead cannot become New");
                            continue;
                        }
                        Some(leadership) => self.batch.add_leader_and_isr_request_for_brokers(
                            self.ctx,
                            &[replica],
                            &tp,
                            &leadership,
                            true,
                        ),
                        None => {}
                    }
                    added.push((tp, replica));
                }
                for key in added {
                    self.ctx.replica_states.insert(key, target);
                }
                return Ok(());
            }
            ReplicaState::Online => {
                for (tp, replica) in &valid {
                    // A New replica got its leadership with the partition's creation.
                    if self.ctx.replica_state(tp, *replica) == ReplicaState::New {
                        continue;
                    }
                    if let Some(leadership) = self.ctx.leadership.get(tp).cloned() {
                        self.batch.add_leader_and_isr_request_for_brokers(
                            self.ctx,
                            &[*replica],
                            tp,
                            &leadership,
                            false,
                        );
                    }
                }
            }
            ReplicaState::Offline => self.go_offline(&valid).await?,
            ReplicaState::DeletionStarted => {
                for (tp, replica) in &valid {
                    self.batch.add_stop_replica_request_for_brokers(
                        self.ctx,
                        &[*replica],
                        tp,
                        true,
                    );
                }
            }
            ReplicaState::DeletionSuccessful | ReplicaState::DeletionIneligible => {}
            ReplicaState::NonExistent => {
                for key in &valid {
                    self.ctx.replica_states.remove(key);
                }
                return Ok(());
            }
        }
        for key in valid {
            self.ctx.replica_states.insert(key, target);
        }
        Ok(())
    }

    /// The Offline transition: StopReplica (keeping the log) to each replica's broker, then the
    /// replica leaves the ISR of every partition it is in, and the other replicas are told.
    async fn go_offline(
        &mut self,
        replicas: &[(TopicPartition, BrokerId)],
    ) -> Result<(), ControllerError> {
        for (tp, replica) in replicas {
            self.batch
                .add_stop_replica_request_for_brokers(self.ctx, &[*replica], tp, false);
        }
        let removed = self.remove_replicas_from_isr(replicas).await?;
        for ((tp, replica), leadership) in replicas.iter().zip(removed) {
            let Some(leadership) = leadership else {
                // Out of the ISR already (a broker back with the replica's dir still failed):
                // no leadership changes, but every broker learns the replica is offline.
                let live: Vec<BrokerId> = self.ctx.live_broker_ids().into_iter().collect();
                self.batch
                    .add_update_metadata_request_for_brokers(&live, std::slice::from_ref(tp));
                continue;
            };
            if self.ctx.is_topic_queued_for_deletion(&tp.topic) {
                let live: Vec<BrokerId> = self.ctx.live_broker_ids().into_iter().collect();
                self.batch
                    .add_update_metadata_request_for_brokers(&live, std::slice::from_ref(tp));
            } else {
                let others: Vec<BrokerId> = self
                    .ctx
                    .replicas(tp)
                    .iter()
                    .copied()
                    .filter(|r| r != replica)
                    .collect();
                self.batch.add_leader_and_isr_request_for_brokers(
                    self.ctx,
                    &others,
                    tp,
                    &leadership,
                    false,
                );
            }
        }
        Ok(())
    }

    /// Kafka's `removeReplicasFromIsr`: for each (partition, replica) whose replica is in the
    /// ISR, it leaves it (unless it is the last member), its leadership goes if it led, and the
    /// leader epoch is bumped; pipelined, and a write that lost a race retried. `None` for a
    /// partition where nothing changed.
    async fn remove_replicas_from_isr(
        &mut self,
        replicas: &[(TopicPartition, BrokerId)],
    ) -> Result<Vec<Option<LeaderIsrAndControllerEpoch>>, ControllerError> {
        update_partition_states(self.zk, self.ctx, replicas, |&replica, current| {
            current
                .isr
                .contains(&replica)
                .then(|| zk_data::PartitionState {
                    leader: if current.leader == replica {
                        -1
                    } else {
                        current.leader
                    },
                    leader_epoch: current.leader_epoch + 1,
                    isr: election::isr_without_replica(&current.isr, replica),
                    ..current.clone()
                })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::ReplicaState::*;
    use super::*;

    #[test]
    fn transitions_are_kafkas() {
        assert!(New.can_enter_from(NonExistent));
        assert!(Online.can_enter_from(DeletionIneligible));
        assert!(!Online.can_enter_from(DeletionStarted));
        assert!(DeletionStarted.can_enter_from(Offline));
        assert!(!DeletionStarted.can_enter_from(Online));
        assert!(NonExistent.can_enter_from(DeletionSuccessful));
        assert!(!NonExistent.can_enter_from(Offline));
        assert_eq!(
            [
                New,
                Online,
                Offline,
                DeletionStarted,
                DeletionSuccessful,
                DeletionIneligible,
                NonExistent
            ]
            .map(ReplicaState::state_code),
            [1, 2, 3, 4, 5, 6, 7]
        );
    }
}
