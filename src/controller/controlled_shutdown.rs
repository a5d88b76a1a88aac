//! The controller's half of a broker's controlled shutdown (Kafka's
//! `KafkaController.doControlledShutdown`): before a broker stops, it asks the controller to move
//! its leaderships away, so clients fail over before its registration disappears rather than
//! after the session timeout.
//!
//! The steps, in Kafka's order: the requester's broker epoch (an older one than the controller
//! knows is STALE_BROKER_EPOCH; -1, "unknown", is accepted as Kafka does for pre-KIP-380
//! brokers); a broker that is not registered is BROKER_NOT_AVAILABLE. The broker is then marked
//! shutting down, which makes it ineligible to lead or join an ISR until it deregisters. Of the
//! partitions it hosts with more than one replica (topics being deleted excepted), those it
//! leads get a leader by the controlled-shutdown strategy (the first assigned replica that is
//! live, in the ISR and not shutting down; the new ISR drops the brokers shutting down), and
//! those it follows see its replica go Offline (StopReplica without deletion, out of the ISR).
//! The answer lists the partitions it still leads, which the broker retries for.

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::controlled_shutdown_response::{
    ControlledShutdownResponse, RemainingPartition,
};

use super::error::ControllerError;
use super::kafka_controller::KafkaController;
use super::partition_state_machine::{PartitionLeaderElectionStrategy, PartitionState};
use super::replica_state_machine::ReplicaState;

/// The broker epoch a request carries when its sender predates KIP-380.
const UNKNOWN_BROKER_EPOCH: i64 = -1;

impl KafkaController {
    /// Answers a ControlledShutdown of `broker_id` at `broker_epoch`; an error that fences this
    /// controller is returned after answering NOT_CONTROLLER, so the event loop resigns.
    pub(super) async fn process_controlled_shutdown(
        &mut self,
        broker_id: BrokerId,
        broker_epoch: i64,
    ) -> (ControlledShutdownResponse, Result<(), ControllerError>) {
        let error = |code: ErrorCode| ControlledShutdownResponse {
            error_code: code.code(),
            ..ControlledShutdownResponse::default()
        };
        let Some(known_epoch) = self.ctx.broker_epoch(broker_id) else {
            tracing::info!(
                broker = broker_id,
                "controlled shutdown of an unregistered broker"
            );
            return (error(ErrorCode::BrokerNotAvailable), Ok(()));
        };
        if broker_epoch != UNKNOWN_BROKER_EPOCH && broker_epoch < known_epoch {
            tracing::info!(
                broker = broker_id,
                request_epoch = broker_epoch,
                known_epoch,
                "ignoring controlled shutdown from an old broker epoch"
            );
            return (error(ErrorCode::StaleBrokerEpoch), Ok(()));
        }
        tracing::info!(broker = broker_id, "shutting down broker");
        self.ctx.shutting_down_broker_ids.insert(broker_id);
        match self.do_controlled_shutdown(broker_id).await {
            Ok(remaining) => {
                if !remaining.is_empty() {
                    tracing::info!(
                        broker = broker_id,
                        remaining = remaining.len(),
                        "controlled shutdown leaves partitions led by the broker"
                    );
                }
                let response = ControlledShutdownResponse {
                    remaining_partitions: remaining
                        .into_iter()
                        .map(|tp| RemainingPartition {
                            topic_name: tp.topic.into(),
                            partition_index: tp.partition,
                            ..RemainingPartition::default()
                        })
                        .collect(),
                    ..ControlledShutdownResponse::default()
                };
                (response, Ok(()))
            }
            Err(e) => (error(ErrorCode::NotController), Err(e)),
        }
    }

    /// Moves the leaderships and follower replicas of a broker already marked shutting down;
    /// returns the partitions it still leads.
    async fn do_controlled_shutdown(
        &mut self,
        broker_id: BrokerId,
    ) -> Result<Vec<TopicPartition>, ControllerError> {
        let (led, followed): (Vec<TopicPartition>, Vec<TopicPartition>) = self
            .ctx
            .replicas_on_broker(broker_id)
            .into_iter()
            .map(|(tp, _)| tp)
            .filter(|tp| self.acts_on(tp))
            .partition(|tp| {
                self.ctx
                    .leadership
                    .get(tp)
                    .is_some_and(|l| l.state.leader == broker_id)
            });
        self.partition_state_machine()
            .handle_state_changes(
                &led,
                PartitionState::Online,
                &PartitionLeaderElectionStrategy::ControlledShutdown,
            )
            .await?;
        self.send_batch();
        // A follower's replica goes Offline: StopReplica (keeping the log) to it, and it leaves
        // the ISR, the leader told with LeaderAndIsr.
        let replicas: Vec<(TopicPartition, BrokerId)> =
            followed.into_iter().map(|tp| (tp, broker_id)).collect();
        self.replica_state_machine()
            .handle_state_changes(&replicas, ReplicaState::Offline)
            .await?;
        self.send_batch();
        Ok(self
            .ctx
            .partitions_led_by(broker_id)
            .into_iter()
            .filter(|tp| self.acts_on(tp))
            .collect())
    }

    /// Kafka's filter of the partitions a controlled shutdown acts on (and reports): more than
    /// one replica, a known leadership, and a topic not being deleted.
    fn acts_on(&self, tp: &TopicPartition) -> bool {
        self.ctx.replicas(tp).len() > 1
            && self.ctx.leadership.contains_key(tp)
            && !self.ctx.is_topic_queued_for_deletion(&tp.topic)
    }
}
