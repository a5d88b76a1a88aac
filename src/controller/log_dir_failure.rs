//! Replicas that go offline with a failed log dir while their broker lives on (Kafka's
//! `LogDirEventNotificationHandler`, `processLogDirEventNotification`,
//! `processLeaderAndIsrResponseReceived` and `onReplicasBecomeOffline`).
//!
//! A broker whose log dir fails writes a `/log_dir_event_notification` child naming only
//! itself. The controller answers with a LeaderAndIsr for every replica on that broker (their
//! transition to Online); the broker answers KAFKA_STORAGE_ERROR for each replica it lost. Any
//! LeaderAndIsr answer is read that way, so a new controller learns the offline replicas from
//! the LeaderAndIsr of its failover. An offline replica may neither lead nor stay in an ISR: the
//! partitions it led are elected again and it leaves every ISR, as if its broker had died. Only
//! the broker's next registration brings those replicas back.

use std::collections::BTreeSet;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::leader_and_isr_request::LeaderAndIsrRequest;
use crate::protocol::messages::leader_and_isr_response::LeaderAndIsrResponse;

use super::error::ControllerError;
use super::kafka_controller::KafkaController;
use super::partition_state_machine::{
    PartitionLeaderElectionStrategy, PartitionState, partitions_with_offline_leader,
};
use super::replica_state_machine::ReplicaState;

impl KafkaController {
    /// `processLogDirEventNotification`: the brokers named by the notifications get a
    /// LeaderAndIsr for all their replicas; the notifications are deleted either way.
    pub(super) async fn process_log_dir_event_notification(
        &mut self,
    ) -> Result<(), ControllerError> {
        let names = self.zk.get_all_log_dir_event_notifications(true).await?;
        if names.is_empty() {
            return Ok(());
        }
        let handled = match self.zk.get_broker_ids_from_log_dir_events(&names).await {
            Ok(brokers) => self.on_broker_log_dir_failure(&brokers).await,
            Err(e) => Err(e.into()),
        };
        let deleted = self
            .zk
            .delete_log_dir_event_notifications(self.ctx.fencing_epoch(), &names)
            .await;
        handled?;
        Ok(deleted?)
    }

    /// `onBrokerLogDirFailure`: asks each broker about every replica it hosts.
    async fn on_broker_log_dir_failure(
        &mut self,
        brokers: &[BrokerId],
    ) -> Result<(), ControllerError> {
        let brokers: BTreeSet<BrokerId> = brokers.iter().copied().collect();
        tracing::info!(?brokers, "handling log dir failure");
        let replicas: Vec<(TopicPartition, BrokerId)> = brokers
            .iter()
            .flat_map(|b| self.ctx.replicas_on_broker(*b))
            .collect();
        self.replica_state_machine()
            .handle_state_changes(&replicas, ReplicaState::Online)
            .await?;
        self.send_batch();
        Ok(())
    }

    /// `processLeaderAndIsrResponseReceived`: replicas answered KAFKA_STORAGE_ERROR are offline,
    /// those answered without an error online again; the newly offline ones are handled as
    /// replicas of a dead broker.
    pub(super) async fn process_leader_and_isr_response_received(
        &mut self,
        broker: BrokerId,
        error_code: i16,
        partition_errors: Vec<(TopicPartition, i16)>,
    ) -> Result<(), ControllerError> {
        if error_code != ErrorCode::None.code() {
            tracing::error!(
                broker,
                error_code,
                "LeaderAndIsr answered with a top-level error"
            );
            return Ok(());
        }
        let previous = self
            .ctx
            .replicas_on_offline_dirs
            .get(&broker)
            .cloned()
            .unwrap_or_default();
        let mut current = previous.clone();
        for (tp, code) in partition_errors {
            if code == ErrorCode::KafkaStorageError.code() {
                current.insert(tp);
            } else if code == ErrorCode::None.code() {
                current.remove(&tp);
            }
        }
        let new_offline: Vec<(TopicPartition, BrokerId)> = current
            .difference(&previous)
            .map(|tp| (tp.clone(), broker))
            .collect();
        if current.is_empty() {
            self.ctx.replicas_on_offline_dirs.remove(&broker);
        } else {
            self.ctx.replicas_on_offline_dirs.insert(broker, current);
        }
        if new_offline.is_empty() {
            return Ok(());
        }
        tracing::info!(broker, replicas = ?new_offline.iter().map(|(tp, _)| tp.to_string()).collect::<Vec<_>>(),
            "marking replicas on a failed log dir offline");
        self.on_replicas_become_offline(new_offline).await
    }

    /// Kafka's `onReplicasBecomeOffline`: the partitions whose leader went offline get new
    /// leaders, then the replicas go Offline (leaving every ISR); replicas of topics being
    /// deleted fail their deletion instead. When nothing changed a leader or an ISR, an
    /// UpdateMetadata still tells every broker which replicas are offline.
    pub(super) async fn on_replicas_become_offline(
        &mut self,
        replicas: Vec<(TopicPartition, BrokerId)>,
    ) -> Result<(), ControllerError> {
        let (for_deletion, not_for_deletion): (Vec<_>, Vec<_>) = replicas
            .into_iter()
            .partition(|(tp, _)| self.ctx.is_topic_queued_for_deletion(&tp.topic));
        let offline_leader = partitions_with_offline_leader(&self.ctx);
        let strategy = PartitionLeaderElectionStrategy::Offline {
            allow_unclean: false,
        };
        self.partition_state_machine()
            .handle_state_changes(&offline_leader, PartitionState::Offline, &strategy)
            .await?;
        let elected = self
            .partition_state_machine()
            .trigger_online_partition_state_change()
            .await?;
        self.send_batch();
        self.replica_state_machine()
            .handle_state_changes(&not_for_deletion, ReplicaState::Offline)
            .await?;
        self.send_batch();
        if !for_deletion.is_empty() {
            self.fail_replica_deletion(&for_deletion).await?;
        }
        if not_for_deletion.is_empty() && elected.is_empty() {
            // Nothing changed a leader or an ISR, so nothing told the brokers.
            let live: Vec<BrokerId> = self.ctx.live_broker_ids().into_iter().collect();
            self.batch
                .add_update_metadata_request_for_brokers(&live, &[]);
            self.send_batch();
        }
        Ok(())
    }
}

/// The per-partition error codes of a LeaderAndIsr answer, named by topic: v5+ answers name
/// topics by id, which the request maps back to names (ids it does not know are dropped).
pub(super) fn leader_and_isr_partition_errors(
    request: &LeaderAndIsrRequest,
    response: &LeaderAndIsrResponse,
) -> Vec<(TopicPartition, i16)> {
    let by_name = response.partition_errors.iter().map(|p| {
        (
            TopicPartition::new(p.topic_name.to_string(), p.partition_index),
            p.error_code,
        )
    });
    let by_id = response.topics.iter().flat_map(|t| {
        let name = request
            .topic_states
            .iter()
            .find(|s| s.topic_id == t.topic_id)
            .map(|s| s.topic_name.to_string());
        t.partition_errors.iter().filter_map(move |p| {
            name.as_ref().map(|n| {
                (
                    TopicPartition::new(n.clone(), p.partition_index),
                    p.error_code,
                )
            })
        })
    });
    by_name.chain(by_id).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::protocol::messages::leader_and_isr_request::LeaderAndIsrTopicState;
    use crate::zk::ZkClient;
    use crate::zk::kafka_zk_client::KafkaZkClient;

    use super::super::controller_event_manager::ControllerEvent;
    use super::super::controller_request_batch::ControllerRequest;
    use super::super::controller_tests::Harness;
    use super::super::leadership_tests::{CONTROLLER, active, settle};
    use crate::protocol::messages::leader_and_isr_response::{
        LeaderAndIsrPartitionError, LeaderAndIsrTopicError,
    };

    use super::*;

    fn error(topic: &str, partition: i32, code: i16) -> LeaderAndIsrPartitionError {
        LeaderAndIsrPartitionError {
            topic_name: topic.to_string().into(),
            partition_index: partition,
            error_code: code,
            ..LeaderAndIsrPartitionError::default()
        }
    }

    #[test]
    fn answers_by_name_and_by_topic_id_are_named() {
        let id = uuid::Uuid::from_u128(7);
        let request = LeaderAndIsrRequest {
            topic_states: vec![LeaderAndIsrTopicState {
                topic_name: "t".to_string().into(),
                topic_id: id,
                ..LeaderAndIsrTopicState::default()
            }],
            ..LeaderAndIsrRequest::default()
        };
        let v4 = LeaderAndIsrResponse {
            partition_errors: vec![error("t", 0, 56), error("u", 1, 0)],
            ..LeaderAndIsrResponse::default()
        };
        assert_eq!(
            leader_and_isr_partition_errors(&request, &v4),
            [
                (TopicPartition::new("t", 0), 56),
                (TopicPartition::new("u", 1), 0)
            ]
        );
        let v5 = LeaderAndIsrResponse {
            topics: vec![
                LeaderAndIsrTopicError {
                    topic_id: id,
                    partition_errors: vec![error("", 2, 56)],
                    ..LeaderAndIsrTopicError::default()
                },
                LeaderAndIsrTopicError {
                    topic_id: uuid::Uuid::from_u128(8),
                    partition_errors: vec![error("", 0, 56)],
                    ..LeaderAndIsrTopicError::default()
                },
            ],
            ..LeaderAndIsrResponse::default()
        };
        assert_eq!(
            leader_and_isr_partition_errors(&request, &v5),
            [(TopicPartition::new("t", 2), 56)]
        );
    }

    /// The offline replicas an UpdateMetadata lists for `tp`.
    fn offline_in_update_metadata(
        sent: &[(BrokerId, ControllerRequest)],
        tp: &TopicPartition,
    ) -> Option<Vec<BrokerId>> {
        sent.iter().rev().find_map(|(_, r)| match r {
            ControllerRequest::UpdateMetadata { request, .. } => request
                .topic_states
                .iter()
                .filter(|t| t.topic_name.to_string() == tp.topic)
                .flat_map(|t| t.partition_states.iter())
                .find(|p| p.partition_index == tp.partition)
                .map(|p| p.offline_replicas.clone()),
            _ => None,
        })
    }

    /// `broker` answers KAFKA_STORAGE_ERROR for its replica of `tp` from now on and writes its
    /// log dir event; the client it wrote with.
    async fn fail_dir(h: &Harness, broker: BrokerId, tp: &TopicPartition) -> KafkaZkClient {
        h.channel
            .offline_dirs
            .lock()
            .unwrap()
            .insert((broker, tp.clone()));
        let zk: Arc<dyn ZkClient> = Arc::new(h.store.session());
        let zk = KafkaZkClient::new(zk);
        zk.propagate_log_dir_event(broker).await.unwrap();
        zk
    }

    #[tokio::test]
    async fn a_replica_on_a_failed_log_dir_loses_its_leadership_and_leaves_the_isr() {
        let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
        let mut c = active(&h, &[("t", &[&[1, 2, 3], &[2, 1, 3]])]).await;
        let (t0, t1) = (TopicPartition::new("t", 0), TopicPartition::new("t", 1));
        let (before, _) = h.state(&t0).await;
        assert_eq!(before.leader, 1);

        // Broker 1 lost the dir of its replica of t-0 only, and says so.
        let zk = fail_dir(&h, 1, &t0).await;
        c.process(ControllerEvent::LogDirEventNotification).await;
        // The LeaderAndIsr for each replica on broker 1 went out; its answer comes back as an
        // event.
        c.process_pending_for_test().await;
        let sent = settle(&h).await;

        let (after, _) = h.state(&t0).await;
        assert_eq!(after.leader, 2, "the next live replica in the ISR leads");
        assert_eq!(after.isr, [2, 3], "the offline replica left the ISR");
        assert!(after.leader_epoch > before.leader_epoch);
        let (other, _) = h.state(&t1).await;
        assert_eq!(
            (other.leader, other.isr),
            (2, vec![2, 1, 3]),
            "t-1 is untouched"
        );
        assert_eq!(offline_in_update_metadata(&sent, &t0), Some(vec![1]));
        assert!(
            zk.get_all_log_dir_event_notifications(false)
                .await
                .unwrap()
                .is_empty(),
            "the notification is deleted once handled"
        );
        // An offline replica may not lead: a preferred election leaves t-0 with broker 2.
        c.process(ControllerEvent::AutoPreferredReplicaLeaderElection)
            .await;
        c.process_pending_for_test().await;
        assert_eq!(h.state(&t0).await.0.leader, 2);

        // Registered again (a restart with the dir repaired), its replicas are online.
        h.channel.offline_dirs.lock().unwrap().clear();
        h.kill_broker(1).await;
        c.process(ControllerEvent::BrokerChange).await;
        h.start_broker(1).await;
        c.process(ControllerEvent::BrokerChange).await;
        c.process_pending_for_test().await;
        let sent = settle(&h).await;
        assert_eq!(offline_in_update_metadata(&sent, &t0), Some(vec![]));
    }

    #[tokio::test]
    async fn a_new_controller_learns_offline_replicas_from_its_failover_leader_and_isr() {
        let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
        let c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
        let t0 = TopicPartition::new("t", 0);
        // A notification left by the old controller is dropped by the new one.
        let zk = fail_dir(&h, 1, &t0).await;
        drop(c);
        h.kill_broker(CONTROLLER).await;
        h.start_broker(CONTROLLER).await;
        let mut c = h.controller(CONTROLLER);
        c.process(ControllerEvent::Startup).await;
        assert!(c.is_active());
        c.process_pending_for_test().await;
        settle(&h).await;
        let (state, _) = h.state(&t0).await;
        assert_eq!((state.leader, state.isr), (2, vec![2, 3]));
        assert!(
            zk.get_all_log_dir_event_notifications(false)
                .await
                .unwrap()
                .is_empty()
        );
    }
}
