//! Kafka's `TopicDeletionManager`, as part of the controller's event loop: a topic marked in
//! `/admin/delete_topics/<t>` is deleted replica by replica.
//!
//! 1. Every live broker is told the topic's partitions have leader -2 (UpdateMetadata), which
//!    drops them from every metadata cache.
//! 2. Its live replicas go Offline (StopReplica, keeping the log: followers stop fetching), then
//!    DeletionStarted (StopReplica with deletion); replicas on dead brokers go
//!    DeletionIneligible and the topic waits for those brokers to return.
//! 3. Each broker's StopReplica answer moves its replicas to DeletionSuccessful (or back to
//!    DeletionIneligible on an error, to be retried).
//! 4. When every replica succeeded, the partitions and replicas are forgotten and the topic's
//!    znodes deleted, its mark last.

use std::collections::BTreeSet;

use crate::cluster::{BrokerId, TopicPartition};

use super::error::ControllerError;
use super::kafka_controller::KafkaController;
use super::partition_state_machine::{PartitionLeaderElectionStrategy, PartitionState};
use super::replica_state_machine::ReplicaState;

impl KafkaController {
    /// At failover: the marked topics that exist are queued (marks of missing topics, or all
    /// marks when deletion is disabled, are removed); those with a replica on a dead broker wait.
    pub(super) async fn initialize_topic_deletion(&mut self) -> Result<(), ControllerError> {
        let marked = self.zk.get_topic_deletions(true).await?;
        self.enqueue_marked(marked).await
    }

    async fn enqueue_marked(&mut self, marked: Vec<String>) -> Result<(), ControllerError> {
        let epoch = self.ctx.fencing_epoch();
        for topic in marked {
            if !self.config.delete_topic_enable || !self.ctx.topic_exists(&topic) {
                tracing::info!(%topic, "removing the deletion mark of a topic that will not be deleted");
                self.zk.delete_topic_deletion(epoch, &topic).await?;
                continue;
            }
            if self.ctx.topics_to_be_deleted.insert(topic.clone()) {
                tracing::info!(%topic, "topic queued for deletion");
            }
            let replicas_offline = self.ctx.partitions_of(&topic).iter().any(|tp| {
                self.ctx
                    .replicas(tp)
                    .iter()
                    .any(|r| !self.ctx.is_replica_online(*r, tp))
            });
            let reassigning = self
                .ctx
                .partitions_being_reassigned
                .iter()
                .any(|tp| tp.topic == topic);
            if replicas_offline || reassigning {
                self.ctx.topics_ineligible_for_deletion.insert(topic);
            }
        }
        Ok(())
    }

    /// The children of `/admin/delete_topics` changed.
    pub(super) async fn process_topic_deletion(&mut self) -> Result<(), ControllerError> {
        let marked = self.zk.get_topic_deletions(true).await?;
        self.enqueue_marked(marked).await?;
        self.resume_topic_deletion().await
    }

    /// Kafka's `resumeDeletions`: finishes topics whose replicas are all deleted, retries
    /// replicas that failed, and starts the topics that are eligible.
    pub(super) async fn resume_topic_deletion(&mut self) -> Result<(), ControllerError> {
        let queued: Vec<String> = self.ctx.topics_to_be_deleted.iter().cloned().collect();
        let mut eligible = Vec::new();
        for topic in queued {
            let states = self.replica_states_of(&topic);
            if !states.is_empty()
                && states
                    .iter()
                    .all(|(_, s)| *s == ReplicaState::DeletionSuccessful)
            {
                self.complete_delete_topic(&topic).await?;
                continue;
            }
            let in_progress = states
                .iter()
                .any(|(_, s)| *s == ReplicaState::DeletionStarted);
            if !in_progress {
                let ineligible: Vec<(TopicPartition, BrokerId)> = states
                    .iter()
                    .filter(|(_, s)| *s == ReplicaState::DeletionIneligible)
                    .map(|(k, _)| k.clone())
                    .collect();
                if !ineligible.is_empty() {
                    self.replica_state_machine()
                        .handle_state_changes(&ineligible, ReplicaState::Offline)
                        .await?;
                    self.send_batch();
                }
                if !self.ctx.topics_ineligible_for_deletion.contains(&topic) {
                    eligible.push(topic);
                }
            }
        }
        if !eligible.is_empty() {
            self.on_topic_deletion(&eligible).await?;
        }
        Ok(())
    }

    /// Kafka's `onTopicDeletion` and `onPartitionDeletion`.
    async fn on_topic_deletion(&mut self, topics: &[String]) -> Result<(), ControllerError> {
        tracing::info!(?topics, "deleting topics");
        let partitions: Vec<TopicPartition> = topics
            .iter()
            .flat_map(|t| self.ctx.partitions_of(t))
            .collect();
        let live: Vec<BrokerId> = self.ctx.live_broker_ids().into_iter().collect();
        self.batch
            .add_update_metadata_request_for_brokers(&live, &partitions);
        self.send_batch();
        let mut dead = Vec::new();
        let mut retry = Vec::new();
        for replica in self.ctx.replicas_of(&partitions) {
            if !self.ctx.is_replica_online(replica.1, &replica.0) {
                self.ctx
                    .topics_ineligible_for_deletion
                    .insert(replica.0.topic.clone());
                dead.push(replica);
            } else if self.ctx.replica_state(&replica.0, replica.1)
                != ReplicaState::DeletionSuccessful
            {
                retry.push(replica);
            }
        }
        self.replica_state_machine()
            .handle_state_changes(&dead, ReplicaState::DeletionIneligible)
            .await?;
        self.replica_state_machine()
            .handle_state_changes(&retry, ReplicaState::Offline)
            .await?;
        self.send_batch();
        self.replica_state_machine()
            .handle_state_changes(&retry, ReplicaState::DeletionStarted)
            .await?;
        self.send_batch();
        Ok(())
    }

    /// A broker answered a deleting StopReplica.
    pub(super) async fn process_deletion_stop_replica_response(
        &mut self,
        broker: BrokerId,
        errors: Vec<(TopicPartition, i16)>,
    ) -> Result<(), ControllerError> {
        let (ok, failed): (Vec<_>, Vec<_>) = errors
            .into_iter()
            .filter(|(tp, _)| self.ctx.is_topic_queued_for_deletion(&tp.topic))
            .partition(|(_, code)| *code == 0);
        let ok: Vec<(TopicPartition, BrokerId)> =
            ok.into_iter().map(|(tp, _)| (tp, broker)).collect();
        let failed: Vec<(TopicPartition, BrokerId)> =
            failed.into_iter().map(|(tp, _)| (tp, broker)).collect();
        if !failed.is_empty() {
            tracing::warn!(broker, ?failed, "replica deletion failed");
            self.fail_replica_deletion(&failed).await?;
        }
        self.replica_state_machine()
            .handle_state_changes(&ok, ReplicaState::DeletionSuccessful)
            .await?;
        self.resume_topic_deletion().await
    }

    /// Kafka's `failReplicaDeletion`: the replicas' topics wait.
    pub(super) async fn fail_replica_deletion(
        &mut self,
        replicas: &[(TopicPartition, BrokerId)],
    ) -> Result<(), ControllerError> {
        let topics: BTreeSet<String> = replicas.iter().map(|(tp, _)| tp.topic.clone()).collect();
        self.replica_state_machine()
            .handle_state_changes(replicas, ReplicaState::DeletionIneligible)
            .await?;
        self.ctx.topics_ineligible_for_deletion.extend(topics);
        self.resume_topic_deletion().await
    }

    /// Brokers came back: the topics waiting for their replicas may go on.
    pub(super) async fn on_brokers_returned_for_deletion(
        &mut self,
        brokers: &[BrokerId],
    ) -> Result<(), ControllerError> {
        let topics: BTreeSet<String> = brokers
            .iter()
            .flat_map(|b| self.ctx.replicas_on_broker(*b))
            .map(|(tp, _)| tp.topic)
            .filter(|t| self.ctx.is_topic_queued_for_deletion(t))
            .filter(|t| {
                !self
                    .ctx
                    .partitions_being_reassigned
                    .iter()
                    .any(|tp| tp.topic == *t)
            })
            .collect();
        if topics.is_empty() {
            return Ok(());
        }
        for topic in &topics {
            self.ctx.topics_ineligible_for_deletion.remove(topic);
        }
        self.resume_topic_deletion().await
    }

    /// Kafka's `completeDeleteTopic`.
    async fn complete_delete_topic(&mut self, topic: &str) -> Result<(), ControllerError> {
        let partitions = self.ctx.partitions_of(topic);
        let replicas = self.ctx.replicas_of(&partitions);
        self.replica_state_machine()
            .handle_state_changes(&replicas, ReplicaState::NonExistent)
            .await?;
        let strategy = PartitionLeaderElectionStrategy::Offline {
            allow_unclean: false,
        };
        self.partition_state_machine()
            .handle_state_changes(&partitions, PartitionState::Offline, &strategy)
            .await?;
        self.partition_state_machine()
            .handle_state_changes(&partitions, PartitionState::NonExistent, &strategy)
            .await?;
        self.zk
            .delete_topic_znodes(self.ctx.fencing_epoch(), topic)
            .await?;
        self.ctx.remove_topic(topic);
        tracing::info!(topic, "topic deleted");
        Ok(())
    }

    fn replica_states_of(&self, topic: &str) -> Vec<((TopicPartition, BrokerId), ReplicaState)> {
        self.ctx
            .replicas_of(&self.ctx.partitions_of(topic))
            .into_iter()
            .map(|r| {
                let state = self.ctx.replica_state(&r.0, r.1);
                (r, state)
            })
            .collect()
    }
}
