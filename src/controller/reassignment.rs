//! Partition reassignment as the controller carries it out (Kafka's `onPartitionReassignment` and
//! its helpers in `KafkaController.scala`): moving a partition from its current replicas to a
//! target set without losing what was acknowledged.
//!
//! With RS the replica set, ORS the original, TRS the target, AR = TRS − ORS the replicas being
//! added and RR = ORS − TRS those being removed:
//!
//! - **U** (every trigger): ZooKeeper first, then the context, get RS = TRS + ORS (target first,
//!   so its head becomes the preferred leader), AR and RR. A reassignment replacing one in
//!   progress stops the replicas it no longer needs.
//! - **A** (TRS not yet all in the ISR): the leader epoch is bumped and LeaderAndIsr goes to RS
//!   (`is_new` for AR), so the leader serves the new replicas' fetches and their brokers start
//!   them; the leader adds them to the ISR through AlterPartition once they catch up.
//! - **B** (TRS ⊆ ISR, seen when the controller accepts that AlterPartition, when a broker of
//!   TRS starts, or at failover): RS = TRS in memory; leadership moves into TRS if needed (else
//!   the epoch is bumped); RR go Offline (out of the ISR) and are deleted with StopReplica; then
//!   ZooKeeper gets RS = TRS — last, since until then it is the only durable record of ORS —
//!   and the partition leaves `/admin/reassign_partitions`.
//!
//! Reassignments arrive through AlterPartitionReassignments (a `None` target cancels: back to
//! ORS) or the legacy `/admin/reassign_partitions` znode; an API reassignment supersedes the
//! znode's entry for the same partition. ListPartitionReassignments reads the context. While a
//! topic has a partition being reassigned, its deletion waits.
//!
//! Unlike Kafka, the znode's targets are validated as the API's are (no empty list, no duplicate
//! or negative id, added replicas live): an invalid entry is dropped from the znode with a
//! warning instead of sitting there unfinishable and blocking every later znode reassignment.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::zk::kafka_zk_client::KafkaZkError;
use crate::zk::zk_data::{self, TopicAssignment};

use super::controller_context::{LeaderIsrAndControllerEpoch, ReplicaAssignment};
use super::error::ControllerError;
use super::kafka_controller::KafkaController;
use super::partition_state_machine::{PartitionLeaderElectionStrategy, PartitionState};
use super::partition_state_update::update_partition_state;
use super::replica_state_machine::ReplicaState;

/// One partition's answer to a reassignment request: started (or cancelled), or an error code
/// with an optional message.
pub(crate) type ReassignmentResult = Result<(), (ErrorCode, Option<String>)>;

/// The answer per partition.
pub(crate) type ReassignmentResults = BTreeMap<TopicPartition, ReassignmentResult>;

/// A partition being reassigned, as ListPartitionReassignments reports it.
pub(crate) type OngoingReassignments = Vec<(TopicPartition, ReplicaAssignment)>;

fn no_such_partition() -> (ErrorCode, Option<String>) {
    (
        ErrorCode::UnknownTopicOrPartition,
        Some("The partition does not exist.".to_string()),
    )
}

impl KafkaController {
    /// AlterPartitionReassignments (`processApiPartitionReassignment`): each partition's target
    /// (`None` cancels) is validated, replaces any znode entry for it, and starts.
    pub(super) async fn process_api_partition_reassignment(
        &mut self,
        reassignments: Vec<(TopicPartition, Option<Vec<BrokerId>>)>,
    ) -> (ReassignmentResults, Result<(), ControllerError>) {
        let mut results = ReassignmentResults::new();
        let mut to_reassign = Vec::new();
        for (tp, target) in reassignments {
            if let Some(target) = &target
                && let Err(e) = self.validate_replicas(&tp, target)
            {
                results.insert(tp, Err(e));
                continue;
            }
            match self.maybe_build_reassignment(&tp, target.as_deref()) {
                Some(reassignment) => to_reassign.push((tp, reassignment)),
                None => {
                    results.insert(tp, Err((ErrorCode::NoReassignmentInProgress, None)));
                }
            }
        }
        let named: BTreeSet<TopicPartition> =
            to_reassign.iter().map(|(tp, _)| tp.clone()).collect();
        if let Err(e) = self
            .maybe_remove_from_zk_reassignment(|tp, _| named.contains(tp))
            .await
        {
            for (tp, _) in to_reassign {
                results.insert(tp, Err((ErrorCode::NotController, None)));
            }
            return (results, Err(e));
        }
        let (started, result) = self.maybe_trigger_partition_reassignment(to_reassign).await;
        results.extend(started);
        (results, result)
    }

    /// ListPartitionReassignments: the named partitions (`None`: all) that are being reassigned.
    pub(super) fn process_list_partition_reassignments(
        &self,
        partitions: Option<Vec<TopicPartition>>,
    ) -> OngoingReassignments {
        let partitions = partitions.unwrap_or_else(|| {
            self.ctx
                .partitions_being_reassigned
                .iter()
                .cloned()
                .collect()
        });
        partitions
            .into_iter()
            .filter_map(|tp| {
                let assignment = self.ctx.assignment(&tp)?.clone();
                assignment.is_being_reassigned().then_some((tp, assignment))
            })
            .collect()
    }

    /// `/admin/reassign_partitions` was created, or is there at failover
    /// (`processZkPartitionReassignment`): its partitions start; the ones that cannot are
    /// removed from it. The read re-arms the watch. Returns the partitions started.
    pub(super) async fn process_zk_partition_reassignment(
        &mut self,
    ) -> Result<BTreeSet<TopicPartition>, ControllerError> {
        let requested = match self.zk.get_partition_reassignment(true).await {
            Ok(Some(requested)) => requested,
            Ok(None) => return Ok(BTreeSet::new()),
            Err(KafkaZkError::Malformed { path, source }) => {
                tracing::warn!(%path, %source, "removing a malformed reassignment request");
                self.zk
                    .delete_partition_reassignment(self.ctx.fencing_epoch())
                    .await?;
                self.zk.get_partition_reassignment(true).await?;
                return Ok(BTreeSet::new());
            }
            Err(e) => return Err(e.into()),
        };
        let mut results = ReassignmentResults::new();
        let mut to_reassign = Vec::new();
        for (tp, target) in requested {
            if let Err(e) = self.validate_replicas(&tp, &target) {
                results.insert(tp, Err(e));
                continue;
            }
            match self.maybe_build_reassignment(&tp, Some(&target)) {
                Some(reassignment) => to_reassign.push((tp, reassignment)),
                None => {
                    results.insert(tp, Err((ErrorCode::NoReassignmentInProgress, None)));
                }
            }
        }
        let (started, result) = self.maybe_trigger_partition_reassignment(to_reassign).await;
        results.extend(started);
        result?;
        let failed: BTreeSet<TopicPartition> = results
            .iter()
            .filter(|(_, r)| r.is_err())
            .map(|(tp, _)| tp.clone())
            .collect();
        if !failed.is_empty() {
            tracing::warn!(?results, "reassignments through ZooKeeper failed");
            self.maybe_remove_from_zk_reassignment(|tp, _| failed.contains(tp))
                .await?;
        }
        Ok(results
            .into_iter()
            .filter(|(_, r)| r.is_ok())
            .map(|(tp, _)| tp)
            .collect())
    }

    /// At failover (`initializePartitionReassignments`): the znode's reassignments, which
    /// supersede API ones for the same partitions, then the API ones found in ZooKeeper.
    pub(super) async fn initialize_partition_reassignments(
        &mut self,
    ) -> Result<(), ControllerError> {
        let from_znode = self.process_zk_partition_reassignment().await?;
        self.maybe_resume_reassignments(|tp, _| !from_znode.contains(tp))
            .await
    }

    /// Goes on with the reassignments `should_resume` picks (a broker of their target started,
    /// or failover).
    pub(super) async fn maybe_resume_reassignments(
        &mut self,
        should_resume: impl Fn(&TopicPartition, &ReplicaAssignment) -> bool,
    ) -> Result<(), ControllerError> {
        let partitions: Vec<TopicPartition> = self
            .ctx
            .partitions_being_reassigned
            .iter()
            .cloned()
            .collect();
        for tp in partitions {
            let Some(assignment) = self.ctx.assignment(&tp).cloned() else {
                continue;
            };
            if should_resume(&tp, &assignment) {
                self.on_partition_reassignment(&tp, assignment).await?;
            }
        }
        Ok(())
    }

    /// The ISR of a partition being reassigned grew (`maybeCompleteReassignment`): once it holds
    /// every target replica, phase B runs.
    pub(super) async fn maybe_complete_reassignment(
        &mut self,
        tp: &TopicPartition,
    ) -> Result<(), ControllerError> {
        if !self.ctx.partitions_being_reassigned.contains(tp) {
            return Ok(());
        }
        let Some(assignment) = self.ctx.assignment(tp).cloned() else {
            return Ok(());
        };
        if self.is_reassignment_complete(tp, &assignment).await? {
            tracing::info!(partition = %tp, target = ?assignment.target_replicas(),
                "target replicas caught up; completing the reassignment");
            self.on_partition_reassignment(tp, assignment).await?;
        }
        Ok(())
    }

    /// Starts each reassignment of a partition that exists and whose topic is not being
    /// deleted (`maybeTriggerPartitionReassignment`). Once this controller is fenced the rest
    /// get NOT_CONTROLLER.
    async fn maybe_trigger_partition_reassignment(
        &mut self,
        reassignments: Vec<(TopicPartition, ReplicaAssignment)>,
    ) -> (ReassignmentResults, Result<(), ControllerError>) {
        let mut results = ReassignmentResults::new();
        let mut fenced = Ok(());
        for (tp, reassignment) in reassignments {
            let result = if fenced.is_err() {
                Err((ErrorCode::NotController, None))
            } else if self.ctx.is_topic_queued_for_deletion(&tp.topic) {
                tracing::info!(partition = %tp, "not reassigning a partition of a topic being deleted");
                Err(no_such_partition())
            } else if self.ctx.replicas(&tp).is_empty() {
                Err(no_such_partition())
            } else {
                match self.on_partition_reassignment(&tp, reassignment).await {
                    Ok(()) => Ok(()),
                    Err(e @ ControllerError::ControllerMoved { .. }) => {
                        fenced = Err(e);
                        Err((ErrorCode::NotController, None))
                    }
                    Err(e) => {
                        tracing::error!(partition = %tp, %e, "reassignment failed");
                        Err((ErrorCode::UnknownServerError, None))
                    }
                }
            };
            results.insert(tp, result);
        }
        (results, fenced)
    }

    /// Kafka's `validateReplicas`: a non-empty list of distinct, non-negative ids whose added
    /// replicas are on live brokers (not shutting down).
    fn validate_replicas(
        &self,
        tp: &TopicPartition,
        replicas: &[BrokerId],
    ) -> Result<(), (ErrorCode, Option<String>)> {
        let invalid = |message: String| Err((ErrorCode::InvalidReplicaAssignment, Some(message)));
        let distinct: BTreeSet<BrokerId> = replicas.iter().copied().collect();
        if replicas.is_empty() {
            return invalid("Empty replica list specified in partition reassignment.".into());
        }
        if distinct.len() != replicas.len() {
            return invalid(format!(
                "Duplicate replica ids in partition reassignment replica list: {replicas:?}"
            ));
        }
        if replicas.iter().any(|id| *id < 0) {
            return invalid(format!("Invalid broker id in replica list: {replicas:?}"));
        }
        let current = self.ctx.assignment(tp).cloned().unwrap_or_default();
        let adding = current.reassign_to(replicas).adding;
        let live = self.ctx.live_broker_ids_not_shutting_down();
        if !adding.iter().all(|id| live.contains(id)) {
            return invalid(format!(
                "Replica assignment has brokers that are not alive. Replica list: {adding:?}, live broker list: {live:?}"
            ));
        }
        Ok(())
    }

    /// Kafka's `maybeBuildReassignment`: the assignment a target gives, measured from the
    /// original replicas; cancelling (`None`) a partition in reassignment targets them, and
    /// cancelling one that is not gives nothing to do.
    fn maybe_build_reassignment(
        &self,
        tp: &TopicPartition,
        target: Option<&[BrokerId]>,
    ) -> Option<ReplicaAssignment> {
        let current = self.ctx.assignment(tp).cloned().unwrap_or_default();
        if current.is_being_reassigned() {
            let origin = current.origin_replicas();
            Some(current.reassign_to(target.unwrap_or(&origin)))
        } else {
            target.map(|t| current.reassign_to(t))
        }
    }

    /// Kafka's `onPartitionReassignment`: phase U, then A or B (see the module doc).
    async fn on_partition_reassignment(
        &mut self,
        tp: &TopicPartition,
        reassignment: ReplicaAssignment,
    ) -> Result<(), ControllerError> {
        self.mark_topic_ineligible_for_deletion(&tp.topic);
        self.update_current_reassignment(tp, &reassignment).await?;
        let adding: Vec<(TopicPartition, BrokerId)> = reassignment
            .adding
            .iter()
            .map(|r| (tp.clone(), *r))
            .collect();
        if !self.is_reassignment_complete(tp, &reassignment).await? {
            // A1: the new replicas learn the partition, the old ones the new replica set.
            self.update_leader_epoch_and_send_request(tp, &reassignment)
                .await?;
            // A2.
            self.replica_state_machine()
                .handle_state_changes(&adding, ReplicaState::New)
                .await?;
            self.send_batch();
            return Ok(());
        }
        // B1.
        self.replica_state_machine()
            .handle_state_changes(&adding, ReplicaState::Online)
            .await?;
        // B2.
        let completed = ReplicaAssignment::new(reassignment.target_replicas());
        self.ctx.update_partition_assignment(tp, completed.clone());
        // B3.
        self.move_reassigned_partition_leader_if_required(tp, &completed)
            .await?;
        // B4, B5.
        self.stop_removed_replicas_of_reassigned_partition(tp, &reassignment.removing)
            .await?;
        // B6: ZooKeeper last, so a controller failing before here still knows ORS.
        self.update_replica_assignment_for_partition(tp, &completed)
            .await?;
        // B7.
        self.remove_partition_from_reassigning_partitions(tp, &completed)
            .await?;
        // B8.
        let live: Vec<BrokerId> = self.ctx.live_broker_ids().into_iter().collect();
        self.batch
            .add_update_metadata_request_for_brokers(&live, std::slice::from_ref(tp));
        self.send_batch();
        tracing::info!(partition = %tp, replicas = ?completed.replicas, "reassignment completed");
        self.resume_deletion_after_reassignment(&tp.topic).await
    }

    /// Phase U (`updateCurrentReassignment`).
    async fn update_current_reassignment(
        &mut self,
        tp: &TopicPartition,
        reassignment: &ReplicaAssignment,
    ) -> Result<(), ControllerError> {
        let current = self.ctx.assignment(tp).cloned().unwrap_or_default();
        if current != *reassignment {
            tracing::info!(partition = %tp, from = ?current, to = ?reassignment,
                "updating the assignment of a partition being reassigned");
            self.update_replica_assignment_for_partition(tp, reassignment)
                .await?;
            self.ctx
                .update_partition_assignment(tp, reassignment.clone());
            // Replicas added by a reassignment this one replaces may no longer be wanted.
            let unneeded: Vec<BrokerId> = current
                .replicas
                .iter()
                .copied()
                .filter(|r| !reassignment.replicas.contains(r))
                .collect();
            if !unneeded.is_empty() {
                self.stop_removed_replicas_of_reassigned_partition(tp, &unneeded)
                    .await?;
            }
        }
        self.ctx.partitions_being_reassigned.insert(tp.clone());
        Ok(())
    }

    /// Kafka's `isReassignmentComplete`: nothing to reassign, or the ISR in ZooKeeper holds
    /// every target replica.
    async fn is_reassignment_complete(
        &self,
        tp: &TopicPartition,
        assignment: &ReplicaAssignment,
    ) -> Result<bool, ControllerError> {
        if !assignment.is_being_reassigned() {
            return Ok(true);
        }
        Ok(self
            .zk
            .get_topic_partition_state(tp)
            .await?
            .is_some_and(|(state, _)| {
                assignment
                    .target_replicas()
                    .iter()
                    .all(|r| state.isr.contains(r))
            }))
    }

    /// B3 (`moveReassignedPartitionLeaderIfRequired`): a leader outside the target, or dead,
    /// is replaced by the first live in-sync target replica; a live one in the target keeps
    /// leading at a new epoch, so the new replica set reaches every replica.
    async fn move_reassigned_partition_leader_if_required(
        &mut self,
        tp: &TopicPartition,
        completed: &ReplicaAssignment,
    ) -> Result<(), ControllerError> {
        let Some(leader) = self.ctx.leadership.get(tp).map(|l| l.state.leader) else {
            return Ok(());
        };
        let leader_live = self
            .ctx
            .live_broker_ids_not_shutting_down()
            .contains(&leader)
            && !self.ctx.is_replica_on_offline_dir(leader, tp);
        if completed.replicas.contains(&leader) && leader_live {
            return self
                .update_leader_epoch_and_send_request(tp, completed)
                .await;
        }
        tracing::info!(partition = %tp, leader, target = ?completed.replicas,
            "moving leadership into the reassigned replicas");
        self.partition_state_machine()
            .handle_state_changes(
                std::slice::from_ref(tp),
                PartitionState::Online,
                &PartitionLeaderElectionStrategy::Reassign,
            )
            .await?;
        self.send_batch();
        Ok(())
    }

    /// B4 and B5 (`stopRemovedReplicasOfReassignedPartition`): the replicas leave the ISR and
    /// are deleted from their brokers.
    async fn stop_removed_replicas_of_reassigned_partition(
        &mut self,
        tp: &TopicPartition,
        removed: &[BrokerId],
    ) -> Result<(), ControllerError> {
        let replicas: Vec<(TopicPartition, BrokerId)> =
            removed.iter().map(|r| (tp.clone(), *r)).collect();
        if replicas.is_empty() {
            return Ok(());
        }
        self.replica_state_machine()
            .handle_state_changes(&replicas, ReplicaState::Offline)
            .await?;
        self.send_batch();
        for state in [
            ReplicaState::DeletionStarted,
            ReplicaState::DeletionSuccessful,
            ReplicaState::NonExistent,
        ] {
            self.replica_state_machine()
                .handle_state_changes(&replicas, state)
                .await?;
        }
        self.send_batch();
        Ok(())
    }

    /// Writes the topic's assignment with `tp` at `assignment`, the other partitions as the
    /// context has them (`updateReplicaAssignmentForPartition`).
    async fn update_replica_assignment_for_partition(
        &mut self,
        tp: &TopicPartition,
        assignment: &ReplicaAssignment,
    ) -> Result<(), ControllerError> {
        let mut partitions = self
            .ctx
            .assignments
            .get(&tp.topic)
            .cloned()
            .unwrap_or_default();
        partitions.insert(tp.partition, assignment.clone());
        let znode = TopicAssignment {
            topic_id: self.ctx.topic_ids.get(&tp.topic).copied(),
            partitions: partitions
                .iter()
                .map(|(p, a)| (*p, a.replicas.clone()))
                .collect(),
            adding_replicas: partitions
                .iter()
                .filter(|(_, a)| !a.adding.is_empty())
                .map(|(p, a)| (*p, a.adding.clone()))
                .collect(),
            removing_replicas: partitions
                .iter()
                .filter(|(_, a)| !a.removing.is_empty())
                .map(|(p, a)| (*p, a.removing.clone()))
                .collect(),
        };
        self.zk
            .set_topic_assignment(self.ctx.fencing_epoch(), &tp.topic, &znode, -1)
            .await?;
        Ok(())
    }

    /// Kafka's `updateLeaderEpochAndSendRequest`: a new leader epoch, then LeaderAndIsr to the
    /// original replicas and (as new) to the added ones.
    async fn update_leader_epoch_and_send_request(
        &mut self,
        tp: &TopicPartition,
        assignment: &ReplicaAssignment,
    ) -> Result<(), ControllerError> {
        let Some(leadership) = self.update_leader_epoch(tp).await? else {
            tracing::error!(partition = %tp, "no partition state to bump for a reassignment");
            return Ok(());
        };
        let origin = assignment.origin_replicas();
        self.batch.add_leader_and_isr_request_for_brokers(
            &self.ctx,
            &origin,
            tp,
            &leadership,
            false,
        );
        self.batch.add_leader_and_isr_request_for_brokers(
            &self.ctx,
            &assignment.adding,
            tp,
            &leadership,
            true,
        );
        self.send_batch();
        Ok(())
    }

    /// Kafka's `updateLeaderEpoch`: the state znode re-read and written back with the leader
    /// epoch bumped, retried when a leader's ISR change won the race. `None` when there is no
    /// state znode.
    async fn update_leader_epoch(
        &mut self,
        tp: &TopicPartition,
    ) -> Result<Option<LeaderIsrAndControllerEpoch>, ControllerError> {
        update_partition_state(&self.zk, &mut self.ctx, tp, |current| {
            Some(zk_data::PartitionState {
                leader_epoch: current.leader_epoch + 1,
                ..current.clone()
            })
        })
        .await
    }

    /// B7 (`removePartitionFromReassigningPartitions`).
    async fn remove_partition_from_reassigning_partitions(
        &mut self,
        tp: &TopicPartition,
        completed: &ReplicaAssignment,
    ) -> Result<(), ControllerError> {
        if self.ctx.partitions_being_reassigned.contains(tp) {
            self.maybe_remove_from_zk_reassignment(|t, replicas| {
                t == tp && replicas == completed.replicas.as_slice()
            })
            .await?;
            self.ctx.partitions_being_reassigned.remove(tp);
        }
        Ok(())
    }

    /// Drops the entries `remove` picks from `/admin/reassign_partitions`, deleting it when none
    /// is left (`maybeRemoveFromZkReassignment`); the controller then looks for the next one.
    async fn maybe_remove_from_zk_reassignment(
        &mut self,
        remove: impl Fn(&TopicPartition, &[BrokerId]) -> bool,
    ) -> Result<(), ControllerError> {
        let Some(requested) = self.zk.get_partition_reassignment(false).await? else {
            return Ok(());
        };
        let before = requested.len();
        let keep: Vec<(TopicPartition, Vec<BrokerId>)> = requested
            .into_iter()
            .filter(|(tp, replicas)| !remove(tp, replicas))
            .collect();
        let epoch = self.ctx.fencing_epoch();
        if keep.is_empty() {
            tracing::info!("no partitions left to reassign; deleting /admin/reassign_partitions");
            self.zk.delete_partition_reassignment(epoch).await?;
            // A request written between the delete and a new watch must not go unseen.
            self.put_event(
                super::controller_event_manager::ControllerEvent::ZkPartitionReassignment,
            );
        } else if keep.len() != before {
            self.zk
                .set_or_create_partition_reassignment(epoch, &keep)
                .await?;
        }
        Ok(())
    }

    /// Kafka's `markTopicIneligibleForDeletion` for a reassignment: a queued deletion waits.
    fn mark_topic_ineligible_for_deletion(&mut self, topic: &str) {
        if self.ctx.is_topic_queued_for_deletion(topic) {
            self.ctx
                .topics_ineligible_for_deletion
                .insert(topic.to_string());
        }
    }

    /// A completed reassignment lets a queued deletion of its topic go on, once no other
    /// partition of it is being reassigned.
    async fn resume_deletion_after_reassignment(
        &mut self,
        topic: &str,
    ) -> Result<(), ControllerError> {
        let reassigning = self
            .ctx
            .partitions_being_reassigned
            .iter()
            .any(|tp| tp.topic == topic);
        if self.ctx.is_topic_queued_for_deletion(topic) && !reassigning {
            self.ctx.topics_ineligible_for_deletion.remove(topic);
            self.resume_topic_deletion().await?;
        }
        Ok(())
    }
}
