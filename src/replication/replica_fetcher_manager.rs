//! Kafka's `ReplicaFetcherManager` (`AbstractFetcherManager`): the replica fetchers of this
//! broker, one per leader broker (`num.replica.fetchers` = 1), each a [`ReplicaFetcher`] task.
//!
//! The replica manager adds a partition when this broker becomes its follower and removes it
//! when the broker becomes its leader, stops hosting it, or its log dir fails. A fetcher left
//! without partitions is stopped (Kafka's `shutdownIdleFetcherThreads`). Leaders are reached
//! through the [`LeaderEndPointFactory`] the server installs; until it does, or when the
//! leader is not known to be alive, a follower partition is not fetched until the next
//! LeaderAndIsr. When a leader's address changes, its fetcher is restarted on the new one with
//! the same partitions.
//!
//! Every fetcher stops when the broker begins shutting down; [`ReplicaFetcherManager::shutdown`]
//! waits for them, so no follower append runs once the logs are closed.
//!
//! Lock order: the fetchers map, then a fetcher's partition map (then, inside the fetcher, a
//! partition's state and log).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, OnceLock};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::sync::lock;
use crate::cluster::time::Time;
use crate::cluster::{BrokerId, TopicPartition};
use crate::storage::log_manager::LogManager;

use super::leader_end_point::{LeaderEndPoint, LeaderEndPointFactory};
use super::partition::Partition;
use super::replica_fetcher::{ReplicaFetcher, ReplicaFetcherConfig};

/// The fetchers, by leader.
#[derive(Debug)]
pub struct ReplicaFetcherManager {
    /// Settable once before any fetcher starts (`set_config`); read when one starts.
    config: Mutex<ReplicaFetcherConfig>,
    log_manager: Arc<LogManager>,
    time: Arc<dyn Time>,
    end_points: OnceLock<Arc<dyn LeaderEndPointFactory>>,
    fetchers: Mutex<HashMap<BrokerId, ReplicaFetcher>>,
    tracker: TaskTracker,
    /// A child of the replica manager's shutdown token: every fetcher's token is a child.
    shutting_down: CancellationToken,
}

impl ReplicaFetcherManager {
    pub fn new(
        config: ReplicaFetcherConfig,
        log_manager: Arc<LogManager>,
        time: Arc<dyn Time>,
        shutting_down: CancellationToken,
    ) -> Self {
        ReplicaFetcherManager {
            config: Mutex::new(config),
            log_manager,
            time,
            end_points: OnceLock::new(),
            fetchers: Mutex::new(HashMap::new()),
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

    /// The end point of `leader`, when it is known to be alive.
    pub fn end_point(&self, leader: BrokerId) -> Option<Arc<dyn LeaderEndPoint>> {
        self.end_points.get()?.end_point(leader)
    }

    /// Kafka's `addFetcherForPartitions` for one partition: fetched from `end_point`'s broker
    /// at `leader_epoch`, from the local log end. A fetcher for that broker is started, or
    /// restarted when its address changed.
    pub fn add_fetcher_for_partition(
        &self,
        end_point: Arc<dyn LeaderEndPoint>,
        partition: Arc<Partition>,
        leader_epoch: i32,
    ) {
        if self.shutting_down.is_cancelled() {
            return;
        }
        let leader = end_point.broker_id();
        let mut fetchers = lock(&self.fetchers);
        let mut carried = Vec::new();
        if let Some(existing) = fetchers.get(&leader)
            && existing.end_point().address() != end_point.address()
        {
            tracing::info!(leader, old = %existing.end_point().address(), new = %end_point.address(),
                "the leader's address changed; restarting its fetcher");
            carried = existing.remove_all();
            existing.stop();
            fetchers.remove(&leader);
        }
        let fetcher = match fetchers.entry(leader) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => {
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    tracing::error!(leader, "no runtime to run a replica fetcher on");
                    return;
                };
                entry.insert(ReplicaFetcher::start(
                    end_point,
                    *lock(&self.config),
                    Arc::clone(&self.log_manager),
                    Arc::clone(&self.time),
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
    }

    /// Kafka's `removeFetcherForPartitions`: none of `tps` is fetched once this returns (an
    /// answer being applied finishes first); fetchers left idle stop.
    pub fn remove_fetcher_for_partitions(&self, tps: &[TopicPartition]) {
        let mut fetchers = lock(&self.fetchers);
        for fetcher in fetchers.values() {
            fetcher.remove_partitions(tps);
        }
        fetchers.retain(|_, fetcher| {
            let busy = fetcher.partition_count() > 0;
            if !busy {
                fetcher.stop();
            }
            busy
        });
    }

    /// The partitions fetched from `leader`, sorted.
    pub fn partitions_fetched_from(&self, leader: BrokerId) -> Vec<TopicPartition> {
        lock(&self.fetchers)
            .get(&leader)
            .map(ReplicaFetcher::topic_partitions)
            .unwrap_or_default()
    }

    /// The leaders with a fetcher.
    pub fn leaders(&self) -> Vec<BrokerId> {
        let mut leaders: Vec<_> = lock(&self.fetchers).keys().copied().collect();
        leaders.sort_unstable();
        leaders
    }

    /// How many fetcher tasks are still running (stopped ones finish their round first).
    pub fn running_tasks(&self) -> usize {
        self.tracker.len()
    }

    /// Stops every fetcher and waits for their tasks.
    pub async fn shutdown(&self) {
        self.shutting_down.cancel();
        for (_, fetcher) in lock(&self.fetchers).drain() {
            fetcher.stop();
        }
        self.tracker.close();
        self.tracker.wait().await;
    }
}

#[cfg(test)]
mod tests;
