//! Kafka's `ReplicaFetcherManager` (`AbstractFetcherManager`): the replica fetchers of this
//! broker, `num.replica.fetchers` per leader broker, each a [`ReplicaFetcher`] task keyed by
//! (leader broker id, fetcher id) (Kafka's `BrokerIdAndFetcherId`).
//!
//! A partition goes to fetcher [`fetcher_id`]: `Utils.abs(31 * topic.hashCode + partition) %
//! num.replica.fetchers`, Java's `String.hashCode` and wrapping `int` arithmetic, so the same
//! partitions share a fetcher (and a connection to the leader) as on a Kafka broker with that
//! setting. The count is dynamic, as in Kafka ([`ReplicaFetcherManager::resize_thread_pool`],
//! Kafka's `resizeThreadPool`): on a change every partition is taken from its fetcher and added
//! again under the new count, and fetchers whose id is no longer below it stop.
//!
//! The replica manager adds a partition when this broker becomes its follower and removes it
//! when the broker becomes its leader, stops hosting it, or its log dir fails. A fetcher left
//! without partitions is stopped (Kafka's `shutdownIdleFetcherThreads`). Leaders are reached
//! through the [`LeaderEndPointFactory`] the server installs, one end point (one connection) per
//! fetcher; until it does, or when the leader is not known to be alive, a follower partition is
//! not fetched until the next LeaderAndIsr. When a leader's address changes, its fetcher is
//! restarted on the new one with the same partitions.
//!
//! Every fetcher stops when the broker begins shutting down; [`ReplicaFetcherManager::shutdown`]
//! waits for them, so no follower append runs once the logs are closed.
//!
//! Lock order: the fetchers map (with the fetcher count), then a fetcher's partition map (then,
//! inside the fetcher, a partition's state and log).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::sync::lock;
use crate::cluster::time::Time;
use crate::cluster::{BrokerId, TopicPartition};
use crate::storage::log_manager::LogManager;

use super::leader_end_point::{LeaderEndPoint, LeaderEndPointFactory};
use super::partition::Partition;
use super::replica_fetcher::{FetcherDeps, ReplicaFetcher, ReplicaFetcherConfig};
use super::replication_quota_manager::ReplicationQuotaManager;

/// Kafka's `BrokerIdAndFetcherId`: which fetcher of which leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BrokerIdAndFetcherId {
    pub broker_id: BrokerId,
    /// In `0..num.replica.fetchers`.
    pub fetcher_id: i32,
}

/// Java's `String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units, wrapping.
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Kafka's `AbstractFetcherManager.getFetcherId`: `Utils.abs(31 * topic.hashCode + partition) %
/// num_fetchers`, where `Utils.abs` maps `Integer.MIN_VALUE` to 0. `num_fetchers` below 1
/// counts as 1.
pub(crate) fn fetcher_id(tp: &TopicPartition, num_fetchers: i32) -> i32 {
    let h = java_string_hash(&tp.topic)
        .wrapping_mul(31)
        .wrapping_add(tp.partition);
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    abs % num_fetchers.max(1)
}

/// The fetchers and how many each leader gets, under one lock (Kafka's `lock`).
#[derive(Debug)]
struct Fetchers {
    /// `num.replica.fetchers`, at least 1.
    num_fetchers_per_broker: i32,
    map: HashMap<BrokerIdAndFetcherId, ReplicaFetcher>,
}

/// The fetchers, by leader and fetcher id.
#[derive(Debug)]
pub struct ReplicaFetcherManager {
    /// Settable once before any fetcher starts (`set_config`); read when one starts.
    config: Mutex<ReplicaFetcherConfig>,
    log_manager: Arc<LogManager>,
    time: Arc<dyn Time>,
    /// `follower.replication.throttled.rate`, which every fetcher honours.
    follower_quota: Arc<ReplicationQuotaManager>,
    local_broker_id: BrokerId,
    end_points: OnceLock<Arc<dyn LeaderEndPointFactory>>,
    fetchers: Mutex<Fetchers>,
    tracker: TaskTracker,
    /// A child of the replica manager's shutdown token: every fetcher's token is a child.
    shutting_down: CancellationToken,
}

impl ReplicaFetcherManager {
    pub(crate) fn new(
        config: ReplicaFetcherConfig,
        log_manager: Arc<LogManager>,
        time: Arc<dyn Time>,
        follower_quota: Arc<ReplicationQuotaManager>,
        local_broker_id: BrokerId,
        shutting_down: CancellationToken,
    ) -> Self {
        ReplicaFetcherManager {
            config: Mutex::new(config),
            log_manager,
            time,
            follower_quota,
            local_broker_id,
            end_points: OnceLock::new(),
            fetchers: Mutex::new(Fetchers {
                num_fetchers_per_broker: 1,
                map: HashMap::new(),
            }),
            tracker: TaskTracker::new(),
            shutting_down,
        }
    }

    /// The fetchers' settings (`replica.fetch.backoff.ms`), for the fetchers started from now on.
    pub fn set_config(&self, config: ReplicaFetcherConfig) {
        *lock(&self.config) = config;
    }

    /// Installs how leaders are reached; only the first call counts.
    pub fn set_end_point_factory(&self, factory: Arc<dyn LeaderEndPointFactory>) {
        if self.end_points.set(factory).is_err() {
            tracing::warn!("the replica fetchers' leader end points were already set");
        }
    }

    /// Whether `leader` can be fetched from: an end point is installed and knows it alive.
    pub fn is_reachable(&self, leader: BrokerId) -> bool {
        self.end_point(leader, 0).is_some()
    }

    fn end_point(&self, leader: BrokerId, fetcher_id: i32) -> Option<Arc<dyn LeaderEndPoint>> {
        self.end_points.get()?.end_point(leader, fetcher_id)
    }

    /// `num.replica.fetchers` in force.
    /// Kafka's `MaxLag`: the largest lag of any partition any fetcher fetches (0 with none).
    pub(crate) fn max_lag(&self) -> i64 {
        let fetchers = lock(&self.fetchers);
        fetchers
            .map
            .values()
            .map(ReplicaFetcher::max_lag)
            .max()
            .unwrap_or(0)
    }

    /// Kafka's `MinFetchRate`: the lowest one-minute rate of fetch rounds of any fetcher (0
    /// with none).
    pub(crate) fn min_fetch_rate(&self) -> f64 {
        let fetchers = lock(&self.fetchers);
        fetchers
            .map
            .values()
            .map(|f| f.request_rate().snapshot().one_minute_rate)
            .reduce(f64::min)
            .unwrap_or(0.0)
    }

    /// Moves the fetchers' rates; see [`crate::metrics::MetricsSource::tick`].
    pub(crate) fn tick_fetch_rates(&self) {
        for fetcher in lock(&self.fetchers).map.values() {
            fetcher.request_rate().tick();
        }
    }

    pub fn num_fetchers_per_broker(&self) -> i32 {
        lock(&self.fetchers).num_fetchers_per_broker
    }

    /// Kafka's `addFetcherForPartitions` for one partition: fetched from `leader` at
    /// `leader_epoch`, from the local log end, by the fetcher [`fetcher_id`] names. That fetcher
    /// is started, or restarted when its leader's address changed. False when the leader cannot
    /// be reached (or the broker is shutting down): the partition is not fetched.
    pub fn add_fetcher_for_partition(
        &self,
        leader: BrokerId,
        partition: Arc<Partition>,
        leader_epoch: i32,
    ) -> bool {
        let mut fetchers = lock(&self.fetchers);
        self.add_locked(&mut fetchers, leader, partition, leader_epoch)
    }

    fn add_locked(
        &self,
        fetchers: &mut Fetchers,
        leader: BrokerId,
        partition: Arc<Partition>,
        leader_epoch: i32,
    ) -> bool {
        if self.shutting_down.is_cancelled() {
            return false;
        }
        let key = BrokerIdAndFetcherId {
            broker_id: leader,
            fetcher_id: fetcher_id(
                partition.topic_partition(),
                fetchers.num_fetchers_per_broker,
            ),
        };
        let Some(end_point) = self.end_point(leader, key.fetcher_id) else {
            return false;
        };
        let mut carried = Vec::new();
        if let Some(existing) = fetchers.map.get(&key)
            && existing.end_point().address() != end_point.address()
        {
            tracing::info!(leader, fetcher_id = key.fetcher_id, old = %existing.end_point().address(),
                new = %end_point.address(), "the leader's address changed; restarting its fetcher");
            carried = existing.remove_all();
            existing.stop();
            fetchers.map.remove(&key);
        }
        let fetcher = match fetchers.map.entry(key) {
            std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::hash_map::Entry::Vacant(entry) => {
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    tracing::error!(leader, "no runtime to run a replica fetcher on");
                    return false;
                };
                tracing::info!(
                    leader,
                    fetcher_id = key.fetcher_id,
                    "starting a replica fetcher"
                );
                entry.insert(ReplicaFetcher::start(
                    end_point,
                    *lock(&self.config),
                    FetcherDeps {
                        log_manager: Arc::clone(&self.log_manager),
                        time: Arc::clone(&self.time),
                        follower_quota: Arc::clone(&self.follower_quota),
                        local_broker_id: self.local_broker_id,
                    },
                    &self.tracker,
                    &runtime,
                    self.shutting_down.child_token(),
                ))
            }
        };
        for (p, epoch) in carried {
            fetcher.add_partition(p, epoch);
        }
        fetcher.add_partition(partition, leader_epoch);
        true
    }

    /// Kafka's `resizeThreadPool`: `num.replica.fetchers` becomes `new_size` (at least 1). On a
    /// change every partition leaves its fetcher and is added again under the new count (so
    /// the hash spreads them as it would have from the start), fetchers whose id is not below
    /// `new_size` stop, and fetchers left idle stop.
    pub fn resize_thread_pool(&self, new_size: i32) {
        let new_size = new_size.max(1);
        let mut fetchers = lock(&self.fetchers);
        let current = fetchers.num_fetchers_per_broker;
        fetchers.num_fetchers_per_broker = new_size;
        if new_size != current {
            tracing::info!(
                from = current,
                to = new_size,
                "resizing the replica fetcher pool"
            );
            let mut moved = Vec::new();
            for (key, fetcher) in &fetchers.map {
                moved.extend(
                    fetcher
                        .remove_all()
                        .into_iter()
                        .map(|(p, epoch)| (key.broker_id, p, epoch)),
                );
                if key.fetcher_id >= new_size {
                    fetcher.stop();
                }
            }
            fetchers.map.retain(|key, _| key.fetcher_id < new_size);
            for (leader, partition, epoch) in moved {
                let tp = partition.topic_partition().clone();
                if !self.add_locked(&mut fetchers, leader, partition, epoch) {
                    tracing::warn!(topic_partition = %tp, leader,
                        "the leader is not reachable; not fetched until the next LeaderAndIsr");
                }
            }
        }
        Self::shutdown_idle_fetchers(&mut fetchers);
    }

    /// Kafka's `removeFetcherForPartitions`: none of `tps` is fetched once this returns (an
    /// answer being applied finishes first); fetchers left idle stop.
    pub fn remove_fetcher_for_partitions(&self, tps: &[TopicPartition]) {
        let mut fetchers = lock(&self.fetchers);
        for fetcher in fetchers.map.values() {
            fetcher.remove_partitions(tps);
        }
        Self::shutdown_idle_fetchers(&mut fetchers);
    }

    /// Kafka's `shutdownIdleFetcherThreads`.
    fn shutdown_idle_fetchers(fetchers: &mut Fetchers) {
        fetchers.map.retain(|_, fetcher| {
            let busy = fetcher.partition_count() > 0;
            if !busy {
                fetcher.stop();
            }
            busy
        });
    }

    /// The partitions fetched from `leader` by any of its fetchers, sorted.
    pub fn partitions_fetched_from(&self, leader: BrokerId) -> Vec<TopicPartition> {
        let mut tps: Vec<TopicPartition> = lock(&self.fetchers)
            .map
            .iter()
            .filter(|(key, _)| key.broker_id == leader)
            .flat_map(|(_, fetcher)| fetcher.topic_partitions())
            .collect();
        tps.sort();
        tps
    }

    /// The fetcher `tp` is fetched by, if any.
    pub fn fetcher_of(&self, tp: &TopicPartition) -> Option<BrokerIdAndFetcherId> {
        lock(&self.fetchers)
            .map
            .iter()
            .find(|(_, fetcher)| fetcher.topic_partitions().contains(tp))
            .map(|(key, _)| *key)
    }

    /// Every running fetcher, sorted.
    pub fn fetchers(&self) -> Vec<BrokerIdAndFetcherId> {
        let mut keys: Vec<_> = lock(&self.fetchers).map.keys().copied().collect();
        keys.sort_unstable();
        keys
    }

    /// The leaders with a fetcher.
    pub fn leaders(&self) -> Vec<BrokerId> {
        let mut leaders: Vec<_> = lock(&self.fetchers)
            .map
            .keys()
            .map(|k| k.broker_id)
            .collect();
        leaders.sort_unstable();
        leaders.dedup();
        leaders
    }

    /// How many fetcher tasks are still running (stopped ones finish their round first).
    pub fn running_tasks(&self) -> usize {
        self.tracker.len()
    }

    /// Stops every fetcher and waits for their tasks. Their partitions are removed first: a
    /// stopped task's answer may still be applied on a blocking thread, and removal waits for
    /// the partition it is appending to and turns the rest away, so no append follows.
    pub async fn shutdown(&self) {
        self.shutting_down.cancel();
        for (_, fetcher) in lock(&self.fetchers).map.drain() {
            fetcher.remove_all();
            fetcher.stop();
        }
        self.tracker.close();
        self.tracker.wait().await;
    }
}

#[cfg(test)]
mod tests;
