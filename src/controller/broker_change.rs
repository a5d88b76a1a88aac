//! Brokers joining and leaving (Kafka's `processBrokerChange`, `onBrokerStartup`,
//! `onBrokerFailure`): the children of `/brokers/ids` compared with the live brokers the
//! controller knows, a channel per live broker, and the state changes a broker's arrival or
//! loss sets off.

use std::collections::BTreeSet;

use crate::cluster::{BrokerId, TopicPartition};

use super::channel_manager::BrokerNode;
use super::controller_context::LiveBroker;
use super::error::ControllerError;
use super::kafka_controller::KafkaController;
use super::replica_state_machine::ReplicaState;

impl KafkaController {
    pub(super) fn add_live_broker(&mut self, broker: LiveBroker) {
        if let Some(node) = broker_node(&broker, &self.config.batch.inter_broker_listener) {
            self.channels.add_broker(node);
        } else {
            tracing::error!(broker = broker.id, listener = %self.config.batch.inter_broker_listener,
                "broker registered without the inter-broker listener; the controller cannot reach it");
        }
        self.ctx.live_brokers.insert(broker.id, broker);
    }

    fn remove_live_broker(&mut self, id: BrokerId) {
        self.channels.remove_broker(id);
        self.ctx.live_brokers.remove(&id);
        self.ctx.shutting_down_broker_ids.remove(&id);
    }

    /// Kafka's `processBrokerChange`: new, dead and bounced (re-registered with a new epoch)
    /// brokers from the children of `/brokers/ids`.
    pub(super) async fn process_broker_change(&mut self) -> Result<(), ControllerError> {
        let current = self.zk.get_all_brokers_and_epochs(true).await?;
        let known = self.ctx.live_broker_ids();
        let now: BTreeSet<BrokerId> = current.keys().copied().collect();
        let new: Vec<BrokerId> = now.difference(&known).copied().collect();
        let dead: Vec<BrokerId> = known.difference(&now).copied().collect();
        let bounced: Vec<BrokerId> = now
            .intersection(&known)
            .copied()
            .filter(|id| self.ctx.broker_epoch(*id) != current.get(id).map(|(_, e)| *e))
            .collect();
        if new.is_empty() && dead.is_empty() && bounced.is_empty() {
            return Ok(());
        }
        tracing::info!(?new, ?dead, ?bounced, "broker change");
        for id in dead.iter().chain(&bounced) {
            self.remove_live_broker(*id);
        }
        if !dead.is_empty() {
            self.on_broker_failure(&dead).await?;
        }
        if !bounced.is_empty() {
            self.on_broker_failure(&bounced).await?;
        }
        for id in new.iter().chain(&bounced) {
            if let Some((registration, epoch)) = current.get(id) {
                self.add_live_broker(LiveBroker {
                    id: *id,
                    epoch: *epoch,
                    registration: registration.clone(),
                });
            }
        }
        let started: Vec<BrokerId> = new.iter().chain(&bounced).copied().collect();
        if !started.is_empty() {
            self.on_broker_startup(&started).await?;
        }
        Ok(())
    }

    /// Kafka's `onBrokerStartup`: brokers-only UpdateMetadata to the others, the whole cluster
    /// to the new ones, their replicas Online, and elections for what can now lead.
    async fn on_broker_startup(&mut self, new: &[BrokerId]) -> Result<(), ControllerError> {
        for id in new {
            self.ctx.replicas_on_offline_dirs.remove(id);
        }
        let existing: Vec<BrokerId> = self
            .ctx
            .live_broker_ids()
            .into_iter()
            .filter(|id| !new.contains(id))
            .collect();
        self.batch
            .add_update_metadata_request_for_brokers(&existing, &[]);
        self.send_batch();
        let with_leaders: Vec<TopicPartition> = self.ctx.leadership.keys().cloned().collect();
        self.batch
            .add_update_metadata_request_for_brokers(new, &with_leaders);
        self.send_batch();
        let replicas: Vec<(TopicPartition, BrokerId)> = new
            .iter()
            .flat_map(|id| self.ctx.replicas_on_broker(*id))
            .collect();
        self.replica_state_machine()
            .handle_state_changes(&replicas, ReplicaState::Online)
            .await?;
        self.send_batch();
        self.partition_state_machine()
            .trigger_online_partition_state_change()
            .await?;
        self.send_batch();
        // A reassignment waiting for one of these brokers can go on.
        self.maybe_resume_reassignments(|_, a| a.target_replicas().iter().any(|r| new.contains(r)))
            .await?;
        self.on_brokers_returned_for_deletion(new).await
    }

    /// Kafka's `onBrokerFailure`: every replica on the dead brokers goes offline.
    async fn on_broker_failure(&mut self, dead: &[BrokerId]) -> Result<(), ControllerError> {
        for id in dead {
            self.ctx.replicas_on_offline_dirs.remove(id);
        }
        let replicas: Vec<(TopicPartition, BrokerId)> = dead
            .iter()
            .flat_map(|id| self.ctx.replicas_on_broker(*id))
            .collect();
        self.on_replicas_become_offline(replicas).await
    }
}

/// A broker's address on the inter-broker listener.
fn broker_node(broker: &LiveBroker, listener: &str) -> Option<BrokerNode> {
    let endpoint = broker
        .registration
        .endpoints
        .iter()
        .find(|e| e.listener_name == listener)?;
    Some(BrokerNode {
        id: broker.id,
        host: endpoint.host.clone(),
        port: endpoint.port,
    })
}
