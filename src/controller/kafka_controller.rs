//! `KafkaController`: the controller of a ZooKeeper-mode cluster, one per broker, active on the
//! broker that holds `/controller`.
//!
//! Everything it does is an event on one queue, processed one at a time by one task that owns
//! the [`ControllerContext`] (Kafka's `ControllerEventManager`): ZooKeeper watches, broker
//! responses and the broker's own calls all become [`ControllerEvent`]s, so no state is shared
//! and no lock is needed. Each decision collects its requests in a
//! [`ControllerBrokerRequestBatch`] and hands them to the [`ControllerChannelManager`] when the
//! state machine step is done, in Kafka's batches.
//!
//! Election and failover follow `KafkaController.elect` and `onControllerFailover`; brokers
//! coming and going follow `onBrokerStartup` and `onBrokerFailure`; topics follow
//! `onNewPartitionCreation`; deletion is in `topic_deletion.rs`, controlled shutdown in
//! `controlled_shutdown.rs`, preferred and unclean elections in `replica_leader_election.rs`,
//! reassignment in `reassignment.rs`. Any fenced write that finds
//! the controller epoch moved makes it resign (`maybeResign`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use crate::cluster::{BrokerId, TopicPartition};
use crate::zk::kafka_zk_client::{KafkaZkClient, KafkaZkError};

use super::channel_manager::{BrokerChannel, ControllerChannelManager, ControllerResponse};
use super::controller_context::{
    ControllerContext, LeaderIsrAndControllerEpoch, LiveBroker, ReplicaAssignment,
};
use super::controller_event_manager::{ControllerEvent, ControllerHandle};
use super::controller_request_batch::{
    BatchConfig, ControllerBrokerRequestBatch, ControllerRequest,
};
use super::error::ControllerError;
use super::log_dir_failure::leader_and_isr_partition_errors;
use super::metrics::ControllerMetrics;
use super::partition_state_machine::{
    PartitionLeaderElectionStrategy, PartitionState, PartitionStateMachine,
};
use super::replica_leader_election::{FIRST_REBALANCE_CHECK_DELAY, auto_rebalance_due};
use super::replica_state_machine::{ReplicaState, ReplicaStateMachine};

/// The controller's settings.
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    pub batch: BatchConfig,
    /// `unclean.leader.election.enable`, which a topic's config overrides.
    pub unclean_leader_election_enable: bool,
    /// `delete.topic.enable`: with it off, marks in `/admin/delete_topics` are removed unserved.
    pub delete_topic_enable: bool,
    /// `auto.leader.rebalance.enable`, `leader.imbalance.check.interval.seconds` and
    /// `leader.imbalance.per.broker.percentage`.
    pub auto_leader_rebalance_enable: bool,
    pub leader_imbalance_check_interval: std::time::Duration,
    pub leader_imbalance_per_broker_percentage: i32,
    /// `zookeeper.max.in.flight.requests`: how many ZooKeeper requests the controller's batches
    /// (creating, reading and electing thousands of partitions) pipeline.
    pub zookeeper_max_in_flight_requests: i32,
}

/// The controller task's state.
pub struct KafkaController {
    pub(super) config: ControllerConfig,
    pub(super) zk: KafkaZkClient,
    pub(super) ctx: ControllerContext,
    pub(super) channels: ControllerChannelManager,
    pub(super) batch: ControllerBrokerRequestBatch,
    active_controller_id: Arc<AtomicI32>,
    /// What a scrape reads, published after each event.
    pub(super) metrics: Arc<ControllerMetrics>,
    events: UnboundedReceiver<ControllerEvent>,
    /// The queue's sending end, for events the controller puts itself.
    self_events: UnboundedSender<ControllerEvent>,
    clock: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// When the next leader imbalance check is due; `None` while not the active controller or
    /// with `auto.leader.rebalance.enable` off.
    pub(super) auto_rebalance_at: Option<tokio::time::Instant>,
}

impl std::fmt::Debug for KafkaController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaController")
            .field("broker_id", &self.config.batch.controller_id)
            .field("epoch", &self.ctx.epoch)
            .finish()
    }
}

impl KafkaController {
    /// A controller over `zk`, sending through `channel`; `clock` gives epoch ms for the
    /// `/controller` timestamp. Returns it with its handle; run it with [`KafkaController::run`].
    pub fn new(
        config: ControllerConfig,
        zk: KafkaZkClient,
        channel: Arc<dyn BrokerChannel>,
        clock: Arc<dyn Fn() -> i64 + Send + Sync>,
    ) -> (KafkaController, ControllerHandle) {
        let (tx, rx) = unbounded_channel();
        let active_controller_id = Arc::new(AtomicI32::new(-1));
        let responses = tx.clone();
        let self_events = tx.clone();
        let on_response = Arc::new(
            move |broker: BrokerId, request: &ControllerRequest, response: ControllerResponse| {
                match (request, response) {
                    (
                        ControllerRequest::StopReplica { request, .. },
                        ControllerResponse::StopReplica(response),
                    ) => {
                        if let Some(errors) = deletion_results(request, &response) {
                            let _ = responses.send(
                                ControllerEvent::TopicDeletionStopReplicaResponseReceived {
                                    broker,
                                    errors,
                                },
                            );
                        }
                    }
                    (
                        ControllerRequest::LeaderAndIsr { request, .. },
                        ControllerResponse::LeaderAndIsr(response),
                    ) => {
                        let _ = responses.send(ControllerEvent::LeaderAndIsrResponseReceived {
                            broker,
                            error_code: response.error_code,
                            partition_errors: leader_and_isr_partition_errors(request, &response),
                        });
                    }
                    _ => {}
                }
            },
        );
        let handle = ControllerHandle::new(
            tx,
            Arc::clone(&active_controller_id),
            config.batch.controller_id,
        );
        let metrics = Arc::new(ControllerMetrics::new(
            config.batch.controller_id,
            Arc::clone(&active_controller_id),
        ));
        let zk = zk.with_max_in_flight(config.zookeeper_max_in_flight_requests);
        let controller = KafkaController {
            config,
            zk,
            ctx: ControllerContext::default(),
            channels: ControllerChannelManager::new(channel, on_response),
            batch: ControllerBrokerRequestBatch::default(),
            active_controller_id,
            metrics,
            events: rx,
            self_events,
            clock,
            auto_rebalance_at: None,
        };
        (controller, handle)
    }

    fn broker_id(&self) -> BrokerId {
        self.config.batch.controller_id
    }

    /// The controller's metrics source (KafkaController and ControllerStats), for the server
    /// to register.
    pub fn metrics(&self) -> Arc<dyn crate::metrics::MetricsSource> {
        Arc::clone(&self.metrics) as Arc<dyn crate::metrics::MetricsSource>
    }

    /// Queues an event behind the ones already waiting.
    pub(super) fn put_event(&self, event: ControllerEvent) {
        let _ = self.self_events.send(event);
    }

    pub(super) fn is_active(&self) -> bool {
        self.active_controller_id.load(Ordering::Acquire) == self.broker_id()
    }

    /// Processes events until `stop`; then resigns (the caller closes the session, which
    /// deletes `/controller`). The imbalance check's timer is one more source of events.
    pub async fn run(mut self, stop: CancellationToken) {
        loop {
            // Only the active controller's timer runs (an inactive one would drop the event).
            let rebalance_at = self.auto_rebalance_at.filter(|_| self.is_active());
            let event = tokio::select! {
                _ = stop.cancelled() => break,
                _ = auto_rebalance_due(rebalance_at) => {
                    ControllerEvent::AutoPreferredReplicaLeaderElection
                }
                event = self.events.recv() => match event {
                    Some(event) => event,
                    None => break,
                },
            };
            self.process(event).await;
        }
        self.on_controller_resignation().await;
        self.metrics.update(&self.ctx);
    }

    /// One event, then the metrics published (Kafka's `updateMetrics`); a broker change is
    /// timed as LeaderElectionRateAndTimeMs, as Kafka times its `BrokerChange` state.
    pub async fn process(&mut self, event: ControllerEvent) {
        let broker_change = matches!(event, ControllerEvent::BrokerChange);
        let started = std::time::Instant::now();
        self.process_event(event).await;
        if broker_change {
            self.metrics.stats.record_leader_election(started.elapsed());
        }
        self.metrics.update(&self.ctx);
    }

    /// One event; a fencing failure resigns, any other failure is logged (the next watch or
    /// event brings the context back in line).
    async fn process_event(&mut self, event: ControllerEvent) {
        let name = event.name();
        tracing::debug!(event = name, "controller event");
        let result = match event {
            ControllerEvent::Startup => self.elect().await,
            ControllerEvent::ControllerChange => self.maybe_resign().await,
            ControllerEvent::Reelect => match self.maybe_resign().await {
                Ok(()) => self.elect().await,
                Err(e) => Err(e),
            },
            ControllerEvent::Expire => {
                self.on_controller_resignation().await;
                self.active_controller_id.store(-1, Ordering::Release);
                Ok(())
            }
            // Dropping a request's reply sender answers NOT_CONTROLLER (the handle's fallback).
            _ if !self.is_active() => Ok(()),
            ControllerEvent::BrokerChange => self.process_broker_change().await,
            ControllerEvent::TopicChange => self.process_topic_change().await,
            ControllerEvent::PartitionModifications { topic } => {
                self.process_partition_modifications(&topic).await
            }
            ControllerEvent::TopicDeletion => self.process_topic_deletion().await,
            ControllerEvent::TopicDeletionStopReplicaResponseReceived { broker, errors } => {
                self.process_deletion_stop_replica_response(broker, errors)
                    .await
            }
            ControllerEvent::LogDirEventNotification => {
                self.process_log_dir_event_notification().await
            }
            ControllerEvent::LeaderAndIsrResponseReceived {
                broker,
                error_code,
                partition_errors,
            } => {
                self.process_leader_and_isr_response_received(broker, error_code, partition_errors)
                    .await
            }
            ControllerEvent::AlterPartitionReceived {
                request,
                version,
                reply,
            } => {
                let (response, updated, result) =
                    self.process_alter_partition(request, version).await;
                // The leader may have given up waiting; its retry gets the same answer.
                let _ = reply.send(response);
                match result {
                    // An ISR that grew may complete a reassignment.
                    Ok(()) => self.maybe_complete_reassignments(&updated).await,
                    Err(e) => Err(e),
                }
            }
            ControllerEvent::ControlledShutdown {
                broker_id,
                broker_epoch,
                reply,
            } => {
                let (response, result) = self
                    .process_controlled_shutdown(broker_id, broker_epoch)
                    .await;
                let _ = reply.send(response);
                result
            }
            ControllerEvent::ReplicaLeaderElection {
                partitions: Some(partitions),
                election_type,
                reply,
            } => {
                let (results, result) = self
                    .process_admin_replica_leader_election(partitions, election_type)
                    .await;
                if let Some(reply) = reply {
                    let _ = reply.send(results);
                }
                result
            }
            ControllerEvent::ReplicaLeaderElection {
                partitions: None, ..
            } => self.process_zk_preferred_replica_election().await,
            ControllerEvent::AutoPreferredReplicaLeaderElection => {
                self.process_auto_preferred_replica_leader_election().await
            }
            ControllerEvent::TopicUncleanLeaderElectionEnable { topic } => {
                self.process_topic_unclean_leader_election_enable(&topic)
                    .await
            }
            ControllerEvent::ZkPartitionReassignment => {
                self.process_zk_partition_reassignment().await.map(|_| ())
            }
            ControllerEvent::ApiPartitionReassignment {
                reassignments,
                reply,
            } => {
                let (results, result) =
                    self.process_api_partition_reassignment(reassignments).await;
                let _ = reply.send(results);
                result
            }
            ControllerEvent::ListPartitionReassignments { partitions, reply } => {
                let _ = reply.send(self.process_list_partition_reassignments(partitions));
                Ok(())
            }
        };
        match result {
            Ok(()) => {}
            Err(ControllerError::ControllerMoved { .. }) => {
                tracing::warn!(event = name, "controller moved while processing; resigning");
                self.on_controller_resignation().await;
                if let Err(e) = self.read_active_controller().await {
                    tracing::error!(%e, "cannot read /controller after resigning");
                }
            }
            Err(e) => tracing::error!(event = name, %e, "controller event failed"),
        }
    }

    // ---- election and failover ---------------------------------------------------------

    async fn read_active_controller(&mut self) -> Result<Option<BrokerId>, ControllerError> {
        let id = self.zk.get_controller_id(true).await?;
        self.active_controller_id
            .store(id.unwrap_or(-1), Ordering::Release);
        Ok(id)
    }

    /// Kafka's `elect`: nothing to do while `/controller` names a broker; otherwise one multi
    /// creates it and bumps the epoch, and the winner fails over.
    async fn elect(&mut self) -> Result<(), ControllerError> {
        if let Some(id) = self.read_active_controller().await? {
            tracing::debug!(controller = id, "a controller is active");
            return Ok(());
        }
        let now = (self.clock)();
        match self
            .zk
            .register_controller_and_increment_controller_epoch(self.broker_id(), now)
            .await
        {
            Ok(epoch) => {
                self.active_controller_id
                    .store(self.broker_id(), Ordering::Release);
                self.ctx.reset();
                self.ctx.epoch = epoch.epoch;
                self.ctx.epoch_zk_version = epoch.zk_version;
                tracing::info!(
                    broker_id = self.broker_id(),
                    epoch = epoch.epoch,
                    epoch_zk_version = epoch.zk_version,
                    "elected as the controller"
                );
                // Watch /controller from now on too, so a takeover is seen.
                self.zk.get_controller_id(true).await?;
                self.on_controller_failover().await
            }
            Err(KafkaZkError::ControllerMoved { .. }) => {
                self.maybe_resign().await?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Kafka's `maybeResign`: re-reads `/controller`; a controller that is no longer named
    /// there resigns.
    async fn maybe_resign(&mut self) -> Result<(), ControllerError> {
        let was_active = self.is_active();
        let now = self.read_active_controller().await?;
        if was_active && now != Some(self.broker_id()) {
            self.on_controller_resignation().await;
        }
        Ok(())
    }

    /// Kafka's `onControllerResignation`: the queues to brokers stop and the context goes.
    async fn on_controller_resignation(&mut self) {
        if self.ctx.epoch != 0 {
            tracing::info!(
                broker_id = self.broker_id(),
                epoch = self.ctx.epoch,
                "resigning"
            );
        }
        self.channels.shutdown().await;
        self.batch = ControllerBrokerRequestBatch::default();
        self.ctx.reset();
        self.auto_rebalance_at = None;
        if self.is_active() {
            self.active_controller_id.store(-1, Ordering::Release);
        }
    }

    /// Kafka's `onControllerFailover`: watches, the context from ZooKeeper, UpdateMetadata to
    /// every live broker, the replica and then the partition state machine, topic deletions.
    async fn on_controller_failover(&mut self) -> Result<(), ControllerError> {
        // Log dir events from before are dropped (Kafka too): this failover's LeaderAndIsr asks
        // every broker about every replica, and the answers name the offline ones.
        let stale = self.zk.get_all_log_dir_event_notifications(true).await?;
        self.zk
            .delete_log_dir_event_notifications(self.ctx.fencing_epoch(), &stale)
            .await?;
        self.initialize_controller_context().await?;
        self.initialize_topic_deletion().await?;
        let live: Vec<BrokerId> = self.ctx.live_broker_ids().into_iter().collect();
        self.batch
            .add_update_metadata_request_for_brokers(&live, &[]);
        self.send_batch();
        self.replica_state_machine().initialize_replica_states();
        let mut online: Vec<(TopicPartition, BrokerId)> = Vec::new();
        let mut offline: Vec<(TopicPartition, BrokerId)> = Vec::new();
        for (replica, state) in &self.ctx.replica_states {
            match state {
                ReplicaState::Online => online.push(replica.clone()),
                _ => offline.push(replica.clone()),
            }
        }
        self.replica_state_machine()
            .handle_state_changes(&online, ReplicaState::Online)
            .await?;
        self.send_batch();
        // A broker that died with the previous controller (or while there was none) is still in
        // the ISRs it held: no broker change will ever report it, and a leader whose follower
        // had caught up before dying sees nothing to shrink. So its replicas go Offline now.
        self.replica_state_machine()
            .handle_state_changes(&offline, ReplicaState::Offline)
            .await?;
        self.send_batch();
        self.partition_state_machine().initialize_partition_states();
        self.partition_state_machine()
            .trigger_online_partition_state_change()
            .await?;
        self.send_batch();
        self.initialize_partition_reassignments().await?;
        self.resume_topic_deletion().await?;
        self.process_zk_preferred_replica_election().await?;
        if self.config.auto_leader_rebalance_enable {
            self.auto_rebalance_at =
                Some(tokio::time::Instant::now() + FIRST_REBALANCE_CHECK_DELAY);
        }
        tracing::info!(epoch = self.ctx.epoch, brokers = ?live,
            topics = self.ctx.assignments.len(), "controller failover done");
        Ok(())
    }

    /// Reads the live brokers, topics, assignments and leaderships, setting the watches.
    async fn initialize_controller_context(&mut self) -> Result<(), ControllerError> {
        let brokers = self.zk.get_all_brokers_and_epochs(true).await?;
        for (id, (registration, epoch)) in brokers {
            self.add_live_broker(LiveBroker {
                id,
                epoch,
                registration,
            });
        }
        let topics = self.zk.get_all_topics(true).await?;
        self.zk.get_topic_deletions(true).await?;
        let mut partitions = Vec::new();
        for topic in topics {
            self.load_topic(&topic).await?;
            partitions.extend(self.ctx.partitions_of(&topic));
        }
        // One pipelined read of every state znode: a failover's cost at many partitions.
        let states = self.zk.get_topic_partition_states(&partitions).await?;
        for (tp, state) in partitions.into_iter().zip(states) {
            if let Some((state, partition_epoch)) = state {
                self.ctx.leadership.insert(
                    tp,
                    LeaderIsrAndControllerEpoch {
                        state,
                        partition_epoch,
                    },
                );
            }
        }
        Ok(())
    }

    /// Reads `/brokers/topics/<t>` (watching it) into the context, adding a topic id if it has
    /// none; returns the partitions new to the context.
    async fn load_topic(&mut self, topic: &str) -> Result<Vec<TopicPartition>, ControllerError> {
        let Some(znode) = self.zk.get_topic(topic, true).await? else {
            return Ok(Vec::new());
        };
        let topic_id = match znode.assignment.topic_id {
            Some(id) => id,
            None => {
                self.zk
                    .add_topic_id(self.ctx.fencing_epoch(), &znode)
                    .await?
            }
        };
        self.ctx.topic_ids.insert(topic.to_string(), topic_id);
        let assignment: BTreeMap<i32, ReplicaAssignment> = znode
            .assignment
            .partitions
            .iter()
            .map(|(p, replicas)| {
                (
                    *p,
                    ReplicaAssignment {
                        replicas: replicas.clone(),
                        adding: znode
                            .assignment
                            .adding_replicas
                            .get(p)
                            .cloned()
                            .unwrap_or_default(),
                        removing: znode
                            .assignment
                            .removing_replicas
                            .get(p)
                            .cloned()
                            .unwrap_or_default(),
                    },
                )
            })
            .collect();
        for (p, a) in &assignment {
            if a.is_being_reassigned() {
                self.ctx
                    .partitions_being_reassigned
                    .insert(TopicPartition::new(topic, *p));
            }
        }
        Ok(self.ctx.update_assignment(topic, assignment))
    }

    // ---- topics -------------------------------------------------------------------------------

    /// Kafka's `processTopicChange`: topics new in `/brokers/topics` get their partitions
    /// created; topics gone from it are forgotten.
    async fn process_topic_change(&mut self) -> Result<(), ControllerError> {
        let topics: BTreeSet<String> = self.zk.get_all_topics(true).await?.into_iter().collect();
        let known: BTreeSet<String> = self.ctx.all_topics().cloned().collect();
        for gone in known.difference(&topics) {
            self.ctx.remove_topic(gone);
        }
        let mut new_partitions = Vec::new();
        for topic in topics.difference(&known) {
            new_partitions.extend(self.load_topic(topic).await?);
        }
        if !new_partitions.is_empty() {
            tracing::info!(partitions = new_partitions.len(), "new partitions");
            self.on_new_partition_creation(&new_partitions).await?;
        }
        Ok(())
    }

    /// Kafka's `processPartitionModifications`: partitions added to an existing topic.
    async fn process_partition_modifications(
        &mut self,
        topic: &str,
    ) -> Result<(), ControllerError> {
        if !self.ctx.topic_exists(topic) || self.ctx.is_topic_queued_for_deletion(topic) {
            // Re-arm the watch; a topic being deleted does not grow.
            self.zk.get_topic(topic, true).await?;
            return Ok(());
        }
        // Only new partitions are taken from the znode (Kafka's `partitionsToBeAdded`): the
        // existing ones stay as the controller has them, reassignments in progress included,
        // even if an admin's write raced with the controller's.
        let known = self.ctx.assignments.get(topic).cloned().unwrap_or_default();
        let added = self.load_topic(topic).await?;
        for (p, assignment) in known {
            self.ctx
                .update_partition_assignment(&TopicPartition::new(topic, p), assignment);
        }
        if !added.is_empty() {
            self.on_new_partition_creation(&added).await?;
        }
        Ok(())
    }

    /// Kafka's `onNewPartitionCreation`: partitions and replicas New, then Online.
    async fn on_new_partition_creation(
        &mut self,
        partitions: &[TopicPartition],
    ) -> Result<(), ControllerError> {
        let strategy = PartitionLeaderElectionStrategy::Offline {
            allow_unclean: false,
        };
        let replicas = self.ctx.replicas_of(partitions);
        self.partition_state_machine()
            .handle_state_changes(partitions, PartitionState::New, &strategy)
            .await?;
        self.replica_state_machine()
            .handle_state_changes(&replicas, ReplicaState::New)
            .await?;
        self.send_batch();
        self.partition_state_machine()
            .handle_state_changes(partitions, PartitionState::Online, &strategy)
            .await?;
        self.send_batch();
        self.replica_state_machine()
            .handle_state_changes(&replicas, ReplicaState::Online)
            .await?;
        self.send_batch();
        Ok(())
    }

    /// After an AlterPartition: the updated partitions being reassigned may be complete.
    async fn maybe_complete_reassignments(
        &mut self,
        updated: &[TopicPartition],
    ) -> Result<(), ControllerError> {
        for tp in updated {
            self.maybe_complete_reassignment(tp).await?;
        }
        Ok(())
    }

    /// Processes the events that arrive within 200 ms of each other (the brokers' answers).
    #[cfg(test)]
    pub(super) async fn process_pending_for_test(&mut self) {
        let wait = std::time::Duration::from_millis(200);
        while let Ok(Some(event)) = tokio::time::timeout(wait, self.events.recv()).await {
            self.process(event).await;
        }
    }

    // ---- plumbing -----------------------------------------------------------------------------

    pub(super) fn partition_state_machine(&mut self) -> PartitionStateMachine<'_> {
        PartitionStateMachine {
            ctx: &mut self.ctx,
            zk: &self.zk,
            batch: &mut self.batch,
            unclean_leader_election_default: self.config.unclean_leader_election_enable,
            stats: &self.metrics.stats,
        }
    }

    pub(super) fn replica_state_machine(&mut self) -> ReplicaStateMachine<'_> {
        ReplicaStateMachine {
            ctx: &mut self.ctx,
            zk: &self.zk,
            batch: &mut self.batch,
        }
    }

    /// Hands the batch's requests to the brokers' queues (`sendRequestsToBrokers`).
    pub(super) fn send_batch(&mut self) {
        for (broker, request) in self.batch.build(&self.ctx, &self.config.batch) {
            if !self.channels.send(broker, request) {
                tracing::warn!(broker, "no channel to broker; request dropped");
            }
        }
    }
}

/// The per-partition results of a StopReplica that deleted, `None` for one that did not.
fn deletion_results(
    request: &crate::protocol::messages::stop_replica_request::StopReplicaRequest,
    response: &crate::protocol::messages::stop_replica_response::StopReplicaResponse,
) -> Option<Vec<(TopicPartition, i16)>> {
    let deleting: BTreeSet<TopicPartition> = if request.topic_states.is_empty() {
        if !request.delete_partitions {
            return None;
        }
        request
            .topics
            .iter()
            .flat_map(|t| {
                t.partition_indexes
                    .iter()
                    .map(|p| TopicPartition::new(t.name.to_string(), *p))
            })
            .chain(
                request
                    .ungrouped_partitions
                    .iter()
                    .map(|p| TopicPartition::new(p.topic_name.to_string(), p.partition_index)),
            )
            .collect()
    } else {
        request
            .topic_states
            .iter()
            .flat_map(|t| {
                t.partition_states
                    .iter()
                    .filter(|p| p.delete_partition)
                    .map(|p| TopicPartition::new(t.topic_name.to_string(), p.partition_index))
            })
            .collect()
    };
    if deleting.is_empty() {
        return None;
    }
    let mut results: BTreeMap<TopicPartition, i16> = deleting
        .iter()
        .map(|tp| (tp.clone(), response.error_code))
        .collect();
    for e in &response.partition_errors {
        let tp = TopicPartition::new(e.topic_name.to_string(), e.partition_index);
        if let Some(slot) = results.get_mut(&tp)
            && response.error_code == 0
        {
            *slot = e.error_code;
        }
    }
    Some(results.into_iter().collect())
}
