//! Kafka's `ReplicaManager`: every partition this broker hosts, created or updated when the
//! controller (or, in single-node mode, the broker itself) makes this broker a partition's
//! leader or follower, and removed by StopReplica.
//!
//! It owns the two request paths, one file each: [`append`] (`append_records`, with the
//! acks=-1 wait) and [`fetch`] (`fetch_messages`, with the long poll). The Produce and Fetch
//! handlers only translate between the wire and these calls.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::cluster::sync::{lock, read, write};
use crate::cluster::time::{self, Time};
use crate::cluster::{BrokerId, LeaderAndIsr, TopicPartition};
use crate::storage::log_config::LogConfig;
use crate::storage::log_manager::{LogManager, OfflineLogs};
use crate::storage::partition_metadata::TopicId;

pub mod append;
pub mod fetch;

pub use append::{AppendEntry, DelayedProduce, PartitionResponse, ProduceResult};
pub use fetch::{DelayedFetch, FetchParams, FetchPartitionData, FetchPartitionInfo, FetchResult};

use super::alter_log_dirs::ReplicaAlterLogDirsManager;
use super::error::PartitionError;
use super::partition::Partition;

/// The broker's hosted partitions over its log manager.
#[derive(Debug)]
pub struct ReplicaManager {
    local_broker_id: BrokerId,
    log_manager: Arc<LogManager>,
    partitions: RwLock<HashMap<TopicPartition, Arc<Partition>>>,
    /// Cancelled when the broker starts shutting down: delayed operations stop waiting.
    shutting_down: CancellationToken,
    /// Partitions being moved between log dirs.
    alter_log_dirs: ReplicaAlterLogDirsManager,
    /// The clock of record timestamps and new logs.
    time: Arc<dyn Time>,
}

impl ReplicaManager {
    /// A replica manager on the system clock.
    pub fn new(local_broker_id: BrokerId, log_manager: Arc<LogManager>) -> Self {
        Self::with_time(local_broker_id, log_manager, time::system())
    }

    /// A replica manager on `time` (a [`MockTime`](crate::cluster::time::MockTime) in tests).
    pub fn with_time(
        local_broker_id: BrokerId,
        log_manager: Arc<LogManager>,
        time: Arc<dyn Time>,
    ) -> Self {
        ReplicaManager {
            local_broker_id,
            log_manager,
            partitions: RwLock::new(HashMap::new()),
            shutting_down: CancellationToken::new(),
            alter_log_dirs: ReplicaAlterLogDirsManager::default(),
            time,
        }
    }

    /// The broker's clock.
    pub fn time(&self) -> &Arc<dyn Time> {
        &self.time
    }

    /// The movers of partitions between log dirs.
    pub fn alter_log_dirs(&self) -> &ReplicaAlterLogDirsManager {
        &self.alter_log_dirs
    }

    /// Kafka's `handleLogDirFailure`: the partitions whose log was in `dir` go offline (they
    /// answer KAFKA_STORAGE_ERROR from now on), moves from or to it stop. Returns what went
    /// offline; with no live dir left the caller halts the broker.
    pub fn handle_log_dir_failure(&self, dir: &std::path::Path) -> OfflineLogs {
        let offline = self.log_manager.handle_log_dir_failure(dir);
        for tp in offline.current.iter().chain(&offline.future) {
            self.alter_log_dirs.remove_fetcher_for_partition(tp);
        }
        for tp in &offline.current {
            if let Some(partition) = self.get_partition(tp) {
                partition.mark_offline();
            }
        }
        tracing::warn!(log_dir = %dir.display(), offline_partitions = ?offline.current,
            stopped_moves = ?offline.future, "partitions in the failed log dir are offline");
        offline
    }

    pub fn local_broker_id(&self) -> BrokerId {
        self.local_broker_id
    }

    /// The token delayed operations watch: cancelled by [`ReplicaManager::begin_shutdown`].
    pub fn shutting_down(&self) -> &CancellationToken {
        &self.shutting_down
    }

    /// Ends every wait of the purgatory: parked fetches answer with what they have, parked
    /// acks=all produces with what the ISR reached.
    pub fn begin_shutdown(&self) {
        self.shutting_down.cancel();
    }

    pub fn log_manager(&self) -> &Arc<LogManager> {
        &self.log_manager
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<TopicPartition, Arc<Partition>>> {
        read(&self.partitions)
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<TopicPartition, Arc<Partition>>> {
        write(&self.partitions)
    }

    /// The hosted partition, if any.
    pub fn get_partition(&self, tp: &TopicPartition) -> Option<Arc<Partition>> {
        self.read().get(tp).cloned()
    }

    /// The hosted partition, or `UNKNOWN_TOPIC_OR_PARTITION`.
    pub fn get_partition_or_error(
        &self,
        tp: &TopicPartition,
    ) -> Result<Arc<Partition>, PartitionError> {
        self.get_partition(tp)
            .ok_or_else(|| PartitionError::UnknownTopicOrPartition {
                topic_partition: tp.clone(),
            })
    }

    /// Every hosted partition of `topic`.
    pub fn partitions_of(&self, topic: &str) -> Vec<Arc<Partition>> {
        let mut out: Vec<Arc<Partition>> = self
            .read()
            .values()
            .filter(|p| p.topic_partition().topic == topic)
            .cloned()
            .collect();
        out.sort_by_key(|p| p.topic_partition().partition);
        out
    }

    /// Kafka's `becomeLeaderOrFollower` for one partition: opens (or creates) its log with the
    /// topic's config and id, and installs the assignment (`replicas`, in the controller's
    /// order) and the leadership state. An existing partition keeps its log and only takes the
    /// new state.
    pub fn become_leader_or_follower(
        &self,
        tp: &TopicPartition,
        topic_id: Option<Uuid>,
        replicas: Vec<BrokerId>,
        state: LeaderAndIsr,
        log_config: LogConfig,
    ) -> Result<Arc<Partition>, PartitionError> {
        if let Some(existing) = self.get_partition(tp) {
            existing.update_leader_and_isr(replicas, state);
            return Ok(existing);
        }
        let log = self.log_manager.get_or_create_log(
            tp,
            topic_id.map(|id| TopicId(id.as_u128())),
            log_config,
            self.time.milliseconds(),
        )?;
        let partition = Arc::new(Partition::new(
            tp.clone(),
            topic_id,
            self.local_broker_id,
            log,
            replicas,
            state,
            Arc::clone(self.log_manager.failure_channel()),
        ));
        let mut partitions = self.write();
        let entry = partitions
            .entry(tp.clone())
            .or_insert_with(|| Arc::clone(&partition));
        Ok(Arc::clone(entry))
    }

    /// Whether the partition's topic allows down-conversion for old fetch versions
    /// (`message.downconversion.enable`); true for a partition not hosted.
    pub fn message_downconversion_enable(&self, tp: &TopicPartition) -> bool {
        self.get_partition(tp)
            .is_none_or(|p| lock(p.log()).config().message_downconversion_enable)
    }

    /// Applies a topic's new log config to its hosted partitions.
    pub fn update_log_config(&self, topic: &str, config: &LogConfig) {
        for p in self.partitions_of(topic) {
            lock(p.log()).update_config(config.clone());
        }
    }

    /// Kafka's `stopReplicas`: stops hosting `tp`, deleting its log when `delete`.
    pub fn stop_replica(&self, tp: &TopicPartition, delete: bool) -> Result<(), PartitionError> {
        if let Some(stopped) = self.write().remove(tp) {
            stopped.mark_stopped();
        }
        self.alter_log_dirs.remove_fetcher_for_partition(tp);
        if delete {
            self.log_manager.delete_log(tp)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
