//! Kafka's `ReplicaManager`: every partition this broker hosts, created or updated when the
//! controller (or, in single-node mode, the broker itself) makes this broker a partition's
//! leader or follower, and removed by StopReplica.
//!
//! It owns the two request paths, one file each: [`append`] (`append_records`, with the
//! acks=-1 wait) and [`fetch`] (`fetch_messages`, with the long poll). The Produce and Fetch
//! handlers only translate between the wire and these calls.
//!
//! It also owns the replica fetchers ([`ReplicaFetcherManager`]): a partition this broker
//! follows is fetched from the leader, which tells the fetcher where its log diverged
//! (truncation on fetch, Kafka 3.9's behaviour); only a log without leader epochs is truncated
//! to its high watermark when it starts following a new leader epoch. A partition it leads,
//! stops hosting or loses with its log dir is not fetched.

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

pub(crate) mod append;
pub(crate) mod fetch;
pub(crate) mod leadership;
mod new_logs;

pub use append::{
    AppendEntry, AppendOrigin, AppendParams, DelayedProduce, PartitionResponse, ProduceResult,
};
pub use fetch::{DelayedFetch, FetchParams, FetchPartitionData, FetchPartitionInfo, FetchResult};
pub(crate) use leadership::{
    LeadershipChange, LeadershipListener, LogConfigFuture, PartitionLeadership, StopPartition,
    TopicConfigRepository,
};

use super::alter_log_dirs::ReplicaAlterLogDirsManager;
use super::alter_partition::{
    AllEligible, AlterPartitionManager, NoAlterPartitionManager, ReplicaEligibility,
};
use super::broker_topic_stats::BrokerTopicStats;
use super::delayed::PurgatorySize;
use super::error::PartitionError;
use super::leader_end_point::LeaderEndPointFactory;
use super::metrics::IsrChangeMeters;
use super::partition::{Partition, PartitionContext};
use super::replica_fetcher::ReplicaFetcherConfig;
use super::replica_fetcher_manager::ReplicaFetcherManager;
use super::replica_selector::{ReplicaEndpoints, ReplicaSelector};
use super::replication_quota_manager::ReplicationQuotas;

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
    /// The fetchers of the partitions this broker follows.
    replica_fetcher_manager: ReplicaFetcherManager,
    /// The replication throttles (`*.replication.throttled.rate`); the follower's is the
    /// fetchers'.
    replication_quotas: ReplicationQuotas,
    /// What the delayed produces (acks=all) and long-poll fetches waiting now watch.
    produce_purgatory: Arc<PurgatorySize>,
    fetch_purgatory: Arc<PurgatorySize>,
    /// The clock of record timestamps and new logs.
    time: Arc<dyn Time>,
    /// Who hears of leadership changes (the coordinators); none until the broker wires it.
    leadership_listener: std::sync::Mutex<Option<Arc<dyn LeadershipListener>>>,
    /// What new partitions manage their ISR with (`replica.lag.time.max.ms`, the controller
    /// channel); set before the first partition is created.
    partition_context: std::sync::Mutex<PartitionContext>,
    /// `replica.selector.class` and where replicas are (KIP-392); `None` (Kafka's default) keeps
    /// every consumer on the leader.
    replica_selector: std::sync::Mutex<Option<(ReplicaSelector, Arc<dyn ReplicaEndpoints>)>>,
}

/// `replica.lag.time.max.ms`'s default (Kafka 2.5+).
pub(crate) const DEFAULT_REPLICA_LAG_TIME_MAX_MS: i64 = 30_000;

impl ReplicaManager {
    /// A replica manager on the system clock.
    pub fn new(local_broker_id: BrokerId, log_manager: Arc<LogManager>) -> Self {
        Self::with_time(local_broker_id, log_manager, time::system())
    }

    /// A replica manager on `time` (a `MockTime` in tests).
    pub fn with_time(
        local_broker_id: BrokerId,
        log_manager: Arc<LogManager>,
        time: Arc<dyn Time>,
    ) -> Self {
        let shutting_down = CancellationToken::new();
        let replication_quotas = ReplicationQuotas::default();
        let replica_fetcher_manager = ReplicaFetcherManager::new(
            ReplicaFetcherConfig::default(),
            Arc::clone(&log_manager),
            Arc::clone(&time),
            Arc::clone(&replication_quotas.follower),
            local_broker_id,
            shutting_down.child_token(),
        );
        let failure_channel = Arc::clone(log_manager.failure_channel());
        ReplicaManager {
            local_broker_id,
            log_manager,
            partitions: RwLock::new(HashMap::new()),
            shutting_down,
            alter_log_dirs: ReplicaAlterLogDirsManager::default(),
            replica_fetcher_manager,
            replication_quotas,
            produce_purgatory: Arc::default(),
            fetch_purgatory: Arc::default(),
            partition_context: std::sync::Mutex::new(PartitionContext {
                time: Arc::clone(&time),
                replica_lag_time_max_ms: DEFAULT_REPLICA_LAG_TIME_MAX_MS,
                alter_partition: Arc::new(NoAlterPartitionManager),
                eligibility: Arc::new(AllEligible),
                failure_channel,
                topic_stats: Arc::new(BrokerTopicStats::default()),
                isr_meters: Arc::new(IsrChangeMeters::default()),
            }),
            time,
            leadership_listener: std::sync::Mutex::new(None),
            replica_selector: std::sync::Mutex::new(None),
        }
    }

    /// Installs `replica.selector.class` (KIP-392): leaders point consumers that send their
    /// rack at a follower `selector` picks, among the replicas `endpoints` knows. The
    /// leader-only selector installs nothing.
    pub fn set_replica_selector(
        &self,
        selector: ReplicaSelector,
        endpoints: Arc<dyn ReplicaEndpoints>,
    ) {
        *lock(&self.replica_selector) =
            (selector != ReplicaSelector::Leader).then_some((selector, endpoints));
    }

    /// The replica selector, when one other than the leader-only default is installed.
    pub(crate) fn replica_selector(&self) -> Option<(ReplicaSelector, Arc<dyn ReplicaEndpoints>)> {
        lock(&self.replica_selector).clone()
    }

    /// Installs how leaders propose ISR changes (the server's AlterPartition manager) and
    /// `replica.lag.time.max.ms`; partitions created before keep what they had.
    pub fn set_isr_management(
        &self,
        alter_partition: Arc<dyn AlterPartitionManager>,
        eligibility: Arc<dyn ReplicaEligibility>,
        replica_lag_time_max_ms: i64,
    ) {
        let mut context = lock(&self.partition_context);
        context.alter_partition = alter_partition;
        context.eligibility = eligibility;
        context.replica_lag_time_max_ms = replica_lag_time_max_ms;
    }

    /// Kafka's `isr-expiration` task: every half `replica.lag.time.max.ms`, each partition this
    /// broker leads drops the followers that fell behind (see `Partition::maybe_shrink_isr`).
    /// Runs until `stop`.
    pub async fn run_isr_expiration(self: Arc<Self>, stop: CancellationToken) {
        let lag = lock(&self.partition_context).replica_lag_time_max_ms;
        let period = std::time::Duration::from_millis(u64::try_from(lag / 2).unwrap_or(0).max(1));
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let leading: Vec<Arc<Partition>> = self
                .read()
                .values()
                .filter(|p| p.is_leader())
                .cloned()
                .collect();
            for partition in leading {
                partition.maybe_shrink_isr();
            }
        }
    }

    /// Installs how this broker reaches partition leaders (the server's inter-broker client);
    /// until then followed partitions are not fetched.
    pub fn set_leader_end_points(&self, factory: Arc<dyn LeaderEndPointFactory>) {
        self.replica_fetcher_manager.set_end_point_factory(factory);
    }

    /// The replica fetchers (stopped at shutdown with `ReplicaFetcherManager::shutdown`).
    /// The leader and follower replication throttles.
    pub(crate) fn replication_quotas(&self) -> &ReplicationQuotas {
        &self.replication_quotas
    }

    pub fn replica_fetcher_manager(&self) -> &ReplicaFetcherManager {
        &self.replica_fetcher_manager
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
        self.replica_fetcher_manager
            .remove_fetcher_for_partitions(&offline.current);
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

    /// The broker's `BrokerTopicMetrics`, for the metrics registry.
    pub(crate) fn topic_stats(&self) -> Arc<BrokerTopicStats> {
        Arc::clone(&lock(&self.partition_context).topic_stats)
    }

    /// The Produce and Fetch purgatories' sizes.
    pub(crate) fn purgatories(&self) -> [(&'static str, &PurgatorySize); 2] {
        [
            ("Produce", &self.produce_purgatory),
            ("Fetch", &self.fetch_purgatory),
        ]
    }

    /// The meters the hosted partitions mark when their ISR changes or fails to.
    pub(crate) fn isr_meters(&self) -> Arc<IsrChangeMeters> {
        Arc::clone(&lock(&self.partition_context).isr_meters)
    }

    /// Every hosted partition, in no order.
    pub(crate) fn all_partitions(&self) -> Vec<Arc<Partition>> {
        self.read().values().cloned().collect()
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
    ///
    /// Leading (`makeLeaders`): the partition's fetching stops before it leads, so no
    /// follower append lands after its first leader append. Following (`makeFollowers`): see
    /// `ReplicaManager::make_follower`.
    pub fn become_leader_or_follower(
        &self,
        tp: &TopicPartition,
        topic_id: Option<Uuid>,
        replicas: Vec<BrokerId>,
        state: LeaderAndIsr,
        log_config: LogConfig,
    ) -> Result<Arc<Partition>, PartitionError> {
        self.become_leader_or_follower_at(tp, topic_id, replicas, state, log_config, None)
    }

    /// [`ReplicaManager::become_leader_or_follower`] for a state the controller granted to
    /// this broker's registration of epoch `broker_epoch` (LeaderAndIsr v2+): the partition's
    /// ISR proposals carry that epoch, so a leadership granted to an earlier registration can
    /// never change an ISR (the controller answers STALE_BROKER_EPOCH).
    pub fn become_leader_or_follower_at(
        &self,
        tp: &TopicPartition,
        topic_id: Option<Uuid>,
        replicas: Vec<BrokerId>,
        state: LeaderAndIsr,
        log_config: LogConfig,
        broker_epoch: Option<i64>,
    ) -> Result<Arc<Partition>, PartitionError> {
        let (leader, leader_epoch) = (state.leader, state.leader_epoch);
        if let Some(existing) = self.get_partition(tp) {
            existing.set_granted_broker_epoch(broker_epoch);
        }
        if leader == self.local_broker_id {
            self.replica_fetcher_manager
                .remove_fetcher_for_partitions(std::slice::from_ref(tp));
        }
        let (partition, leader_changed) = match self.get_partition(tp) {
            Some(existing) => {
                // Kafka's `makeFollower` result: a new leader epoch restarts the fetch.
                let new_epoch = leader_epoch > existing.leader_and_isr().leader_epoch;
                let changed = existing.update_leader_and_isr(replicas, state);
                (existing, changed || new_epoch)
            }
            None => (
                self.create_partition(tp, topic_id, replicas, state, log_config)?,
                true,
            ),
        };
        partition.set_granted_broker_epoch(broker_epoch);
        if leader == self.local_broker_id {
            partition.assign_leader_epoch_start_offset(leader_epoch);
        } else {
            self.make_follower(&partition, leader, leader_epoch, leader_changed);
        }
        Ok(partition)
    }

    /// Kafka's `makeFollowers` for one partition (leadership already installed): stops its
    /// fetching, then, when the leader is reachable, fetches from it at `leader_epoch` from the
    /// log end. A partition without a reachable leader waits for the next LeaderAndIsr.
    ///
    /// Nothing is truncated here when the log has a leader epoch: the first fetch carries it,
    /// and the leader answers where the logs diverge (Kafka's `initialFetchOffset` is the log
    /// end, the fetch state `Fetching`). A log without epochs cannot be checked that way, so
    /// on a new leader epoch (`new_leader_epoch`) it is truncated to its high watermark first,
    /// as Kafka's `Truncating` state does (`truncateToHighWatermark`): what is above it was
    /// never committed, and the new leader may not have it.
    fn make_follower(
        &self,
        partition: &Arc<Partition>,
        leader: BrokerId,
        leader_epoch: i32,
        new_leader_epoch: bool,
    ) {
        let tp = partition.topic_partition();
        self.replica_fetcher_manager
            .remove_fetcher_for_partitions(std::slice::from_ref(tp));
        if leader < 0 || !self.replica_fetcher_manager.is_reachable(leader) {
            tracing::info!(topic_partition = %tp, leader, leader_epoch,
                "following a leader that is not available; not fetching until the next LeaderAndIsr");
            return;
        }
        if new_leader_epoch && partition.latest_epoch().is_none() {
            let high_watermark = partition.offsets().high_watermark;
            if let Err(err) =
                self.log_manager
                    .truncate_to(tp, high_watermark, self.time.milliseconds())
            {
                tracing::error!(topic_partition = %tp, %err, "cannot truncate to the high watermark");
                self.log_manager.maybe_report_log_dir_failure(&err);
                return;
            }
        }
        tracing::info!(topic_partition = %tp, leader, leader_epoch,
            log_end_offset = partition.offsets().log_end_offset, "following");
        if !self.replica_fetcher_manager.add_fetcher_for_partition(
            leader,
            Arc::clone(partition),
            leader_epoch,
        ) {
            tracing::info!(topic_partition = %tp, leader, leader_epoch,
                "the leader went away; not fetching until the next LeaderAndIsr");
        }
    }

    fn create_partition(
        &self,
        tp: &TopicPartition,
        topic_id: Option<Uuid>,
        replicas: Vec<BrokerId>,
        state: LeaderAndIsr,
        log_config: LogConfig,
    ) -> Result<Arc<Partition>, PartitionError> {
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
            lock(&self.partition_context).clone(),
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
        self.replica_fetcher_manager
            .remove_fetcher_for_partitions(std::slice::from_ref(tp));
        let stopped = {
            let mut partitions = self.write();
            let stopped = partitions.remove(tp);
            // Kafka drops a deleted topic's meters with its last partition here.
            if delete && !partitions.keys().any(|other| other.topic == tp.topic) {
                self.topic_stats().remove_topic(&tp.topic);
            }
            stopped
        };
        if let Some(stopped) = stopped {
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

/// A replica manager over a temp log dir for unit tests: kept with the dir it lives in and the
/// clock it runs on.
#[cfg(test)]
pub(crate) struct TempReplicaManager {
    pub dir: tempfile::TempDir,
    pub rm: Arc<ReplicaManager>,
    pub time: Arc<crate::cluster::time::MockTime>,
}

#[cfg(test)]
impl TempReplicaManager {
    /// Broker `id`'s replica manager, its clock at `now_ms`.
    pub(crate) fn new(id: BrokerId, now_ms: i64) -> Self {
        use crate::storage::log_manager::LogManagerConfig;
        let dir = tempfile::tempdir().unwrap();
        let log_manager = Arc::new(
            LogManager::startup(
                LogManagerConfig::new(vec![dir.path().join("data")], id, "cluster"),
                1_000,
            )
            .unwrap(),
        );
        let time = Arc::new(crate::cluster::time::MockTime::new(now_ms));
        let rm = Arc::new(ReplicaManager::with_time(id, log_manager, time.clone()));
        TempReplicaManager { dir, rm, time }
    }
}

/// Broker `id`'s replica manager over `dir/data` on the system clock: the coordinators' tests
/// run it under tokio's paused clock, with their internal topics' partitions made leader or
/// follower through [`become_compacted_replica`].
#[cfg(test)]
pub(crate) fn system_clock_replica_manager(
    id: BrokerId,
    dir: &std::path::Path,
) -> Arc<ReplicaManager> {
    use crate::storage::log_manager::{LogManagerConfig, now_ms};
    let log_manager = Arc::new(
        LogManager::startup(
            LogManagerConfig::new(vec![dir.join("data")], id, "cluster"),
            now_ms(),
        )
        .unwrap(),
    );
    Arc::new(ReplicaManager::new(id, log_manager))
}

/// Makes `rm`'s broker a replica of `tp` (compacted, as internal topics are) with `replicas`
/// and `leadership`.
#[cfg(test)]
pub(crate) fn become_compacted_replica(
    rm: &ReplicaManager,
    tp: &TopicPartition,
    replicas: Vec<BrokerId>,
    leadership: LeaderAndIsr,
) {
    let mut config = crate::storage::log_config::LogConfig::default();
    config.cleanup_policy.compact = true;
    config.cleanup_policy.delete = false;
    rm.become_leader_or_follower(tp, None, replicas, leadership, config)
        .unwrap();
}

/// Appends one single-record batch (value `[seed]`) to `tp`, which `rm` leads, with acks=1.
#[cfg(test)]
pub(crate) fn produce_one(rm: &ReplicaManager, tp: &TopicPartition, seed: u8) {
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use crate::protocol::record::compression::CompressionType;
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.records
        .push(SimpleRecord::new(1_700_000_000_000, None, Some(vec![seed])));
    let ProduceResult::Ready(answers) = rm.append_records(
        AppendParams::client(1_000, 1),
        vec![AppendEntry {
            topic_partition: tp.clone(),
            records: bytes::Bytes::from(b.build().unwrap()),
            verification_guard: None,
        }],
    ) else {
        panic!("acks=1 answers at once");
    };
    assert_eq!(
        answers[0].error_code,
        crate::protocol::errors::ErrorCode::None
    );
}
