//! The controller's leadership decisions applied to the hosted partitions: Kafka's
//! `ReplicaManager.becomeLeaderOrFollower` (LeaderAndIsr) and `stopReplicas` (StopReplica), over
//! typed inputs. The handlers only check authorization and the request's broker and controller
//! epochs, and translate to and from the wire.
//!
//! Each partition of a LeaderAndIsr follows Kafka's checks in order: a partition whose log dir
//! failed is KAFKA_STORAGE_ERROR; a topic id other than the log's is INCONSISTENT_TOPIC_ID; a
//! leader epoch newer than the partition's is applied if this broker is a replica (else
//! UNKNOWN_TOPIC_OR_PARTITION); an older one is STALE_CONTROLLER_EPOCH and changes nothing; an
//! equal one only gives a topic without an id the request's (`ReplicaManager::at_same_epoch`).
//! New logs that do not fit in the descriptors left are refused with KAFKA_STORAGE_ERROR before
//! anything is opened, and the log dir stays online (`new_logs`).
//!
//! A StopReplica partition's leader epoch must be -2 (its topic is being deleted), -1 (none
//! sent) or not older than the partition's, else FENCED_LEADER_EPOCH and the partition stays.
//!
//! The [`LeadershipListener`] (the coordinators, Kafka's `onLeadershipChange`) hears, once per
//! request, of every partition this broker came to lead and every one it now follows under
//! another leader or stopped hosting, with the leader epochs: a coordinator loads the first and
//! unloads the others. A new leader epoch under the same leader is not heard of, as in Kafka.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use uuid::Uuid;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::storage::log_config::LogConfig;

use super::super::error::PartitionError;
use super::super::partition::Partition;
use super::ReplicaManager;
use super::new_logs::{NewLogAdmission, needs_new_log};

/// How many threads apply one LeaderAndIsr's partitions at once (see
/// [`ReplicaManager::become_leader_or_follower_all`]).
const APPLY_THREADS: usize = 8;

/// One partition's change as applied: `None` when not tried.
type Applied = Option<Result<Arc<Partition>, PartitionError>>;

/// StopReplica's leader epoch of a topic being deleted.
const EPOCH_DURING_DELETE: i32 = -2;
/// StopReplica's leader epoch when the controller sent none (v0-2).
const NO_EPOCH: i32 = -1;

/// One partition of a LeaderAndIsr as the controller decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionLeadership {
    pub topic_partition: TopicPartition,
    /// The request's topic id (v5+); `None` when it carries none.
    pub topic_id: Option<Uuid>,
    /// The id this broker's metadata knows for the topic, given to a new log when the request
    /// carries none.
    pub known_topic_id: Option<Uuid>,
    /// The assignment, in the controller's order.
    pub replicas: Vec<BrokerId>,
    pub leader_and_isr: LeaderAndIsr,
    /// The controller created the partition just now: a log is created even in a log dir
    /// that must not get new ones (Kafka's `isNew`).
    pub is_new: bool,
}

/// One partition of a StopReplica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopPartition {
    pub topic_partition: TopicPartition,
    /// The partition's leader epoch as the controller knows it; -2 while its topic is deleted,
    /// -1 when the request carries none.
    pub leader_epoch: i32,
    /// Whether the log goes too.
    pub delete: bool,
}

/// The partitions whose leadership changed here in one request, with their leader epochs
/// (`None`: a StopReplica that carried none). Kafka's `onLeadershipChange` arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeadershipChange {
    /// Partitions this broker now leads.
    pub leaders: Vec<(TopicPartition, i32)>,
    /// Partitions it now follows, or stopped hosting.
    pub resigned: Vec<(TopicPartition, Option<i32>)>,
}

/// Who hears of leadership changes: the coordinators, which load and unload the partitions of
/// their internal topics. Called once per request, after every partition of it was applied.
pub trait LeadershipListener: Send + Sync + std::fmt::Debug {
    fn on_leadership_change(&self, change: &LeadershipChange);
}

/// A boxed future of a topic's log config.
pub(crate) type LogConfigFuture<'a> =
    Pin<Box<dyn Future<Output = Result<LogConfig, ErrorCode>> + Send + 'a>>;

/// Where the replica manager reads a topic's log config when it opens the topic's logs
/// (Kafka's `ConfigRepository`: the broker's defaults under the topic's overrides).
pub trait TopicConfigRepository: Send + Sync {
    fn topic_log_config<'a>(&'a self, topic: &'a str) -> LogConfigFuture<'a>;
}

impl ReplicaManager {
    /// Hears of the leadership changes from now on.
    pub fn set_leadership_listener(&self, listener: Arc<dyn LeadershipListener>) {
        *lock(&self.leadership_listener) = Some(listener);
    }

    /// Kafka's `becomeLeaderOrFollower` for the partitions of one LeaderAndIsr granted to this
    /// broker's registration of epoch `broker_epoch` (-1 before v2): each partition's error, in
    /// order. `controller_id` only names the request in the log.
    ///
    /// Each partition is checked in request order, then the changes are applied on up to eight
    /// threads at once: a new log's `partition.metadata` and a new leader's
    /// epoch checkpoint are each written and fsynced (file and directory) before the answer,
    /// and syncs issued together are committed together by the file system, where one after
    /// another each waits for its own (a controller creating thousands of partitions).
    pub async fn become_leader_or_follower_all(
        &self,
        controller_id: BrokerId,
        broker_epoch: i64,
        states: &[PartitionLeadership],
        configs: &dyn TopicConfigRepository,
    ) -> Vec<ErrorCode> {
        let mut admission = NewLogAdmission::admit(self, states);
        let mut previous_leaders = Vec::with_capacity(states.len());
        let mut prepared = Vec::with_capacity(states.len());
        for state in states {
            previous_leaders.push(
                self.get_partition(&state.topic_partition)
                    .map(|p| p.leader_and_isr().leader),
            );
            prepared.push(if admission.refuses(self, state) {
                Err(ErrorCode::KafkaStorageError)
            } else {
                self.prepare_new_epoch(state, configs).await
            });
        }
        let broker_epoch = (broker_epoch >= 0).then_some(broker_epoch);
        let applied = self.apply_new_epochs(states, &prepared, broker_epoch);
        // A full descriptor table first, so that the partitions it made the workers skip are
        // counted as refused whatever their place in the request.
        for result in applied.iter().flatten() {
            if let Err(err) = result {
                admission.record_failure(err);
            }
        }
        let mut change = LeadershipChange::default();
        let mut errors = Vec::with_capacity(states.len());
        for (((state, previous_leader), prepared), applied) in states
            .iter()
            .zip(previous_leaders)
            .zip(prepared)
            .zip(applied)
        {
            let tp = &state.topic_partition;
            let leadership = &state.leader_and_isr;
            let error = match (prepared, applied) {
                (Err(code), _) => code,
                (Ok(_), None) => {
                    admission.refuses(self, state);
                    ErrorCode::KafkaStorageError
                }
                (Ok(log_config), Some(Ok(partition))) => {
                    // A log opened at startup has the broker's defaults until its topic's
                    // config is known, which is now.
                    lock(partition.log()).update_config(log_config);
                    tracing::info!(partition = %tp, leader = leadership.leader,
                        leader_epoch = leadership.leader_epoch, isr = ?leadership.isr,
                        "applied LeaderAndIsr");
                    ErrorCode::None
                }
                (Ok(_), Some(Err(err))) => {
                    if admission.is_exhaustion(&err) {
                        // Counted in the request's one line; a line per partition would flood
                        // the log.
                        tracing::debug!(partition = %tp, %err, "cannot host the partition");
                    } else {
                        tracing::error!(partition = %tp, %err, "cannot host the partition");
                    }
                    err.error_code()
                }
            };
            // Only a new leader changes leadership, as Kafka's `makeLeader`/`makeFollower`
            // report it: a new leader epoch with the same leader (the controller took a dead
            // replica out of the ISR) is no election, so a coordinator keeps its epoch and what
            // it is doing; an answer of NONE at the partition's own epoch tells nothing either.
            let leader = leadership.leader;
            if error == ErrorCode::None && previous_leader != Some(leader) {
                let epoch = leadership.leader_epoch;
                if leader == self.local_broker_id {
                    change.leaders.push((tp.clone(), epoch));
                } else {
                    change.resigned.push((tp.clone(), Some(epoch)));
                }
            }
            errors.push(error);
        }
        admission.log_summary(controller_id, states.len());
        self.tell_listener(&change);
        errors
    }

    /// The changes of the partitions `prepared` admitted, on up to [`APPLY_THREADS`] threads;
    /// per partition, in order: `None` when not tried (refused earlier, or a new log skipped
    /// once the descriptor table was found full), else what applying it gave.
    fn apply_new_epochs(
        &self,
        states: &[PartitionLeadership],
        prepared: &[Result<LogConfig, ErrorCode>],
        broker_epoch: Option<i64>,
    ) -> Vec<Applied> {
        let exhausted = AtomicBool::new(false);
        let apply = |i: usize| {
            let (state, Ok(log_config)) = (&states[i], &prepared[i]) else {
                return None;
            };
            if exhausted.load(Ordering::Relaxed) && needs_new_log(self, state) {
                return None;
            }
            let result = self.become_leader_or_follower_at(
                &state.topic_partition,
                state.topic_id.or(state.known_topic_id),
                state.replicas.clone(),
                state.leader_and_isr.clone(),
                log_config.clone(),
                broker_epoch,
            );
            if let Err(PartitionError::Storage(err)) = &result
                && err.is_resource_exhaustion()
            {
                exhausted.store(true, Ordering::Relaxed);
            }
            Some(result)
        };
        let to_apply = prepared.iter().filter(|p| p.is_ok()).count();
        let threads = APPLY_THREADS.min(to_apply);
        if threads <= 1 {
            return (0..states.len()).map(apply).collect();
        }
        // The workers start followers' fetcher tasks on the caller's runtime.
        let runtime = tokio::runtime::Handle::try_current().ok();
        let next = AtomicUsize::new(0);
        let mut results: Vec<Applied> = (0..states.len()).map(|_| None).collect();
        let done: Vec<Vec<(usize, Applied)>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let _runtime = runtime.as_ref().map(|r| r.enter());
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= states.len() {
                                return mine;
                            }
                            mine.push((i, apply(i)));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_default())
                .collect()
        });
        for (i, result) in done.into_iter().flatten() {
            results[i] = result;
        }
        results
    }

    /// Kafka's `stopReplicas`: each partition's error, in order.
    pub fn stop_replicas(&self, partitions: &[StopPartition]) -> Vec<ErrorCode> {
        let mut change = LeadershipChange::default();
        let errors = partitions
            .iter()
            .map(|p| {
                let error = self.stop_one(p);
                if error == ErrorCode::None {
                    // Kafka resigns only when the partition is deleted; kcli whenever it stops
                    // hosting it, as a coordinator without its partition cannot write.
                    let epoch = (p.leader_epoch >= 0).then_some(p.leader_epoch);
                    change.resigned.push((p.topic_partition.clone(), epoch));
                }
                error
            })
            .collect();
        self.tell_listener(&change);
        errors
    }

    fn tell_listener(&self, change: &LeadershipChange) {
        if change.leaders.is_empty() && change.resigned.is_empty() {
            return;
        }
        let listener = lock(&self.leadership_listener).clone();
        if let Some(listener) = listener {
            listener.on_leadership_change(change);
        }
    }

    fn stop_one(&self, p: &StopPartition) -> ErrorCode {
        let tp = &p.topic_partition;
        if let Some(partition) = self.get_partition(tp) {
            if partition.is_offline() {
                return ErrorCode::KafkaStorageError;
            }
            let current = partition.leader_and_isr().leader_epoch;
            if p.leader_epoch != EPOCH_DURING_DELETE
                && p.leader_epoch != NO_EPOCH
                && p.leader_epoch < current
            {
                tracing::info!(partition = %tp, leader_epoch = p.leader_epoch, current,
                    "ignoring StopReplica: its leader epoch is older than the partition's");
                return ErrorCode::FencedLeaderEpoch;
            }
        }
        match self.stop_replica(tp, p.delete) {
            Ok(()) => {
                tracing::info!(partition = %tp, delete = p.delete, "stopped replica");
                ErrorCode::None
            }
            Err(err) => {
                tracing::error!(partition = %tp, %err, "cannot stop the replica");
                err.error_code()
            }
        }
    }

    /// One partition of a LeaderAndIsr checked in order (Kafka's checks, see the module doc):
    /// the topic's log config to apply it with, or the error code of its answer (NONE for an
    /// answer of NONE that changes no leadership).
    async fn prepare_new_epoch(
        &self,
        state: &PartitionLeadership,
        configs: &dyn TopicConfigRepository,
    ) -> Result<LogConfig, ErrorCode> {
        let tp = &state.topic_partition;
        let leadership = &state.leader_and_isr;
        let existing = self.get_partition(tp);
        if let Some(partition) = &existing {
            if partition.is_offline() {
                return Err(ErrorCode::KafkaStorageError);
            }
            if let (Some(ours), Some(theirs)) = (partition.topic_id(), state.topic_id)
                && ours != theirs
            {
                tracing::error!(partition = %tp, log_topic_id = %ours, request_topic_id = %theirs,
                    "LeaderAndIsr topic id does not match the log's");
                return Err(ErrorCode::InconsistentTopicId);
            }
            let current = partition.leader_and_isr().leader_epoch;
            if leadership.leader_epoch < current {
                tracing::debug!(partition = %tp, request_epoch = leadership.leader_epoch, current,
                    "ignoring LeaderAndIsr: its leader epoch is older");
                return Err(ErrorCode::StaleControllerEpoch);
            }
            if leadership.leader_epoch == current {
                return Err(self.at_same_epoch(partition, state));
            }
        }
        if !state.replicas.contains(&self.local_broker_id) {
            return Err(ErrorCode::UnknownTopicOrPartition);
        }
        if existing.is_none()
            && let Err(err) = self.log_manager.check_log_creatable(tp, state.is_new)
        {
            tracing::error!(partition = %tp, %err, "cannot host the partition");
            return Err(ErrorCode::KafkaStorageError);
        }
        configs.topic_log_config(&tp.topic).await.inspect_err(
            |code| tracing::error!(partition = %tp, ?code, "cannot read the topic's config"),
        )
    }

    /// A LeaderAndIsr at the partition's own leader epoch (Kafka's equal-epoch branch): it
    /// changes nothing, except that a topic that had no id gets the one the request carries
    /// (the controller sends the id a topic was given without bumping the epoch). A follower
    /// told of no id while its partition has one (the cluster going back to an older
    /// `inter.broker.protocol.version`) is answered NONE too: its fetcher already names topics
    /// as that version's Fetch does. Anything else is STALE_CONTROLLER_EPOCH.
    fn at_same_epoch(&self, partition: &Partition, state: &PartitionLeadership) -> ErrorCode {
        let tp = partition.topic_partition();
        match (state.topic_id, partition.topic_id()) {
            (Some(topic_id), None) => match partition.assign_topic_id(topic_id) {
                Ok(assigned) if assigned != topic_id => {
                    tracing::error!(partition = %tp, log_topic_id = %assigned,
                        request_topic_id = %topic_id,
                        "LeaderAndIsr topic id does not match the log's");
                    ErrorCode::InconsistentTopicId
                }
                Ok(_) => {
                    tracing::info!(partition = %tp, %topic_id,
                        "assigned the topic id of a LeaderAndIsr at the current leader epoch");
                    ErrorCode::None
                }
                Err(err) => {
                    tracing::error!(partition = %tp, %err, "cannot record the topic id");
                    ErrorCode::KafkaStorageError
                }
            },
            (None, Some(_)) if state.leader_and_isr.leader != self.local_broker_id => {
                ErrorCode::None
            }
            _ => {
                tracing::debug!(partition = %tp, leader_epoch = state.leader_and_isr.leader_epoch,
                    "ignoring LeaderAndIsr: its leader epoch is the partition's");
                ErrorCode::StaleControllerEpoch
            }
        }
    }
}
