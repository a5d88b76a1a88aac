//! One replica fetcher: the task that keeps this broker's follower partitions of one leader up
//! to date (Kafka's `ReplicaFetcherThread` over `AbstractFetcherThread`).
//!
//! Each round fetches every partition not backing off, from its log end, as one fetch through
//! the [`LeaderEndPoint`] (which long-polls on the leader, in a fetch session where it can: a
//! partition with no news is then not answered, and simply fetched again), and hands each
//! partition's answer to [`Partition::append_records_to_follower`]: the leader's batches are
//! appended exactly as they arrived (no decoding past the batch headers, CRCs untouched), the
//! high watermark becomes the leader's capped at the local log end, the log start follows the
//! leader's. An answer is applied only when the partition is still fetched at the leader epoch
//! and from the offset the request was built with (Kafka's check in `processFetchRequest`), so
//! a leadership change during the round discards it.
//!
//! Truncation happens on fetch (Kafka's `Fetching` state with IBP 2.7-IV1 and later): each
//! partition is fetched with `LastFetchedEpoch`, the latest epoch of its leader-epoch cache;
//! the leader answers a follower whose log diverged from its own with a diverging epoch and no
//! records, and the follower truncates as [`truncation`] computes (Kafka's
//! `truncateOnFetchResponse`), its epoch cache and producer state with the log, then fetches
//! from its new log end with its new latest epoch, which the leader checks again (KIP-279's
//! loop, when the follower did not know the leader's epoch). The answer's offsets are not
//! taken: they are the next fetch's.
//!
//! Errors: a failed request waits `replica.fetch.backoff.ms` before the next round; a partition
//! answered with an error waits as long before it is fetched again, except FENCED_LEADER_EPOCH
//! (this broker's epoch is older than the leader's: the partition leaves the fetcher until the
//! next LeaderAndIsr) and OFFSET_OUT_OF_RANGE (Kafka's `handleOutOfRangeError`: truncated to the
//! leader's log end when ahead of it, else restarted at the leader's log start when behind it).
//!
//! Each answer is applied as the end point reads it ([`LeaderEndPoint::fetch_into`], on a
//! blocking thread): over a plain connection a partition's records are still in a pipe then,
//! and go from there into the log in place (one kernel copy; see `UnifiedLog::append_as_follower_from`).
//!
//! Locking: the partition map's mutex is held while an answer is applied, so once
//! [`ReplicaFetcher::remove_partitions`] returns no append of the removed partitions is in
//! progress or will follow (Kafka's `partitionMapLock`). It is not held while the end point
//! waits on the network. Lock order: this map, then the read-back buffer, then a partition's
//! state, then its log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cluster::sync::lock;
use crate::cluster::time::Time;
use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::storage::log_manager::LogManager;

use super::leader_end_point::{
    FetchAnswerHandler, FetchPartition, FetchPartitionResult, LeaderEndPoint,
};
use super::partition::{EpochEndOffset, FollowerRecords, Partition};
use super::replication_quota_manager::{ReplicationQuotaManager, throttled_replicas_include};
use crate::storage::records_source::RecordsSource;

pub(crate) mod truncation;

use truncation::offset_truncation_state;

const NONE: i16 = ErrorCode::None.code();
const OFFSET_OUT_OF_RANGE: i16 = ErrorCode::OffsetOutOfRange.code();
const FENCED_LEADER_EPOCH: i16 = ErrorCode::FencedLeaderEpoch.code();

/// A fetcher's settings (Kafka's `replica.fetch.*` keys the fetcher itself uses; the request's
/// sizes and wait belong to the [`LeaderEndPoint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaFetcherConfig {
    /// `replica.fetch.backoff.ms`: the wait after a failed request or a partition's error.
    pub fetch_backoff: Duration,
}

impl Default for ReplicaFetcherConfig {
    /// Kafka 3.9's defaults.
    fn default() -> Self {
        ReplicaFetcherConfig {
            fetch_backoff: Duration::from_millis(1000),
        }
    }
}

/// One partition's fetch state (Kafka's `PartitionFetchState`). The fetch offset is not kept:
/// it is always the local log's end, which only this fetcher moves while the partition follows.
#[derive(Debug, Clone)]
struct PartitionFetchState {
    partition: Arc<Partition>,
    /// The leader epoch of the LeaderAndIsr that made this broker a follower.
    current_leader_epoch: i32,
    /// Not fetched before this, after an error.
    delayed_until: Option<Instant>,
    /// The leader's high watermark less this replica's log end at the last answer (Kafka's
    /// `FetcherLagMetrics`, which the manager's MaxLag reads); 0 until one.
    lag: i64,
    /// Caught up to the leader's high watermark at the last answer (Kafka's
    /// `isReplicaInSync`: a lag known and 0); false until an answer. Such a partition is never
    /// held back by the follower's replication throttle.
    in_sync: bool,
}

/// The partitions a fetcher fetches, shared by its task and the manager.
#[derive(Debug, Default)]
struct FetcherPartitions {
    map: Mutex<HashMap<TopicPartition, PartitionFetchState>>,
    /// Wakes an idle task when partitions are added.
    added: Notify,
    /// A mark per fetch round (Kafka's `FetcherStats.requestRate`), for the manager's
    /// MinFetchRate.
    request_rate: crate::metrics::Meter,
}

/// The handle of a running fetcher task for one leader.
#[derive(Debug)]
pub(crate) struct ReplicaFetcher {
    end_point: Arc<dyn LeaderEndPoint>,
    partitions: Arc<FetcherPartitions>,
    stop: CancellationToken,
}

/// What every fetcher shares with its manager.
pub(crate) struct FetcherDeps {
    pub log_manager: Arc<LogManager>,
    pub time: Arc<dyn Time>,
    /// `follower.replication.throttled.rate`.
    pub follower_quota: Arc<ReplicationQuotaManager>,
    /// This broker, whose replicas the throttled-replica lists name.
    pub local_broker_id: BrokerId,
}

/// What the task needs besides its partitions.
struct FetcherContext {
    end_point: Arc<dyn LeaderEndPoint>,
    partitions: Arc<FetcherPartitions>,
    config: ReplicaFetcherConfig,
    log_manager: Arc<LogManager>,
    time: Arc<dyn Time>,
    follower_quota: Arc<ReplicationQuotaManager>,
    local_broker_id: BrokerId,
    stop: CancellationToken,
    /// The rounds' buffer for records read back (see [`RoundApplier`]).
    scratch: Arc<Mutex<Vec<u8>>>,
}

impl ReplicaFetcher {
    /// Starts the task on `runtime`, tracked by `tracker`; it ends when `stop` is cancelled.
    pub(crate) fn start(
        end_point: Arc<dyn LeaderEndPoint>,
        config: ReplicaFetcherConfig,
        deps: FetcherDeps,
        tracker: &tokio_util::task::TaskTracker,
        runtime: &tokio::runtime::Handle,
        stop: CancellationToken,
    ) -> ReplicaFetcher {
        let partitions = Arc::new(FetcherPartitions::default());
        let context = FetcherContext {
            end_point: Arc::clone(&end_point),
            partitions: Arc::clone(&partitions),
            config,
            log_manager: deps.log_manager,
            time: deps.time,
            follower_quota: deps.follower_quota,
            local_broker_id: deps.local_broker_id,
            stop: stop.clone(),
            scratch: Arc::default(),
        };
        tracker.spawn_on(context.run(), runtime);
        ReplicaFetcher {
            end_point,
            partitions,
            stop,
        }
    }

    pub(crate) fn end_point(&self) -> &Arc<dyn LeaderEndPoint> {
        &self.end_point
    }

    /// Fetches `partition` from now on at `leader_epoch` (replacing an earlier state of it).
    pub(crate) fn add_partition(&self, partition: Arc<Partition>, leader_epoch: i32) {
        let tp = partition.topic_partition().clone();
        lock(&self.partitions.map).insert(
            tp,
            PartitionFetchState {
                partition,
                current_leader_epoch: leader_epoch,
                delayed_until: None,
                lag: 0,
                in_sync: false,
            },
        );
        self.partitions.added.notify_one();
    }

    /// Stops fetching `tps`; waits for a round's answers being applied. Returns the removed
    /// partitions with their leader epochs, for a fetcher taking them over.
    pub(crate) fn remove_partitions(&self, tps: &[TopicPartition]) -> Vec<(Arc<Partition>, i32)> {
        let mut map = lock(&self.partitions.map);
        tps.iter()
            .filter_map(|tp| map.remove(tp))
            .map(|s| (s.partition, s.current_leader_epoch))
            .collect()
    }

    /// Every partition, for moving them to a fetcher of the leader's new address.
    pub(crate) fn remove_all(&self) -> Vec<(Arc<Partition>, i32)> {
        lock(&self.partitions.map)
            .drain()
            .map(|(_, s)| (s.partition, s.current_leader_epoch))
            .collect()
    }

    /// The largest lag of the partitions fetched (0 with none).
    pub(crate) fn max_lag(&self) -> i64 {
        lock(&self.partitions.map)
            .values()
            .map(|s| s.lag)
            .max()
            .unwrap_or(0)
    }

    /// The fetch rounds' meter.
    pub(crate) fn request_rate(&self) -> &crate::metrics::Meter {
        &self.partitions.request_rate
    }

    pub(crate) fn partition_count(&self) -> usize {
        lock(&self.partitions.map).len()
    }

    /// The partitions fetched, sorted.
    pub(crate) fn topic_partitions(&self) -> Vec<TopicPartition> {
        let mut tps: Vec<_> = lock(&self.partitions.map).keys().cloned().collect();
        tps.sort();
        tps
    }

    /// Ends the task (at its next await).
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }
}

/// A request's partitions, as built: what the answers are checked against.
type Round = Vec<(FetchPartition, Arc<Partition>)>;

impl FetcherContext {
    fn leader(&self) -> BrokerId {
        self.end_point.broker_id()
    }

    /// Kafka's `doWork`: fetch, apply, repeat until stopped.
    async fn run(self) {
        tracing::info!(leader = self.leader(), address = %self.end_point.address(), "replica fetcher started");
        while !self.stop.is_cancelled() {
            let round = match self.build_fetch() {
                Ok(round) => round,
                Err(wake_at) => {
                    self.idle(wake_at).await;
                    continue;
                }
            };
            let request: Vec<FetchPartition> = round.iter().map(|(r, _)| r.clone()).collect();
            let applier = self.applier(round);
            let out_of_range = Arc::clone(&applier.out_of_range);
            let answered = tokio::select! {
                _ = self.stop.cancelled() => break,
                answered = self.end_point.fetch_into(&request, Box::new(applier)) => answered,
            };
            // Every round answered or failed counts, as Kafka marks after the fetch.
            self.partitions.request_rate.mark(1);
            match answered {
                Ok(()) => {
                    let out_of_range = std::mem::take(&mut *lock(&out_of_range));
                    for (tp, epoch) in out_of_range {
                        self.handle_out_of_range(&tp, epoch).await;
                    }
                }
                Err(err) => {
                    tracing::warn!(leader = self.leader(), %err, "replica fetch failed; backing off");
                    tokio::select! {
                        _ = self.stop.cancelled() => break,
                        _ = tokio::time::sleep(self.config.fetch_backoff) => {}
                    }
                }
            }
        }
        tracing::info!(leader = self.leader(), "replica fetcher stopped");
    }

    /// Waits until partitions are added, the earliest backoff ends, or the fetcher stops.
    async fn idle(&self, wake_at: Option<Instant>) {
        let until = wake_at.unwrap_or_else(|| Instant::now() + self.config.fetch_backoff);
        tokio::select! {
            _ = self.stop.cancelled() => {}
            _ = self.partitions.added.notified() => {}
            _ = tokio::time::sleep_until(until) => {}
        }
    }

    /// Kafka's `buildFetch`: every partition not backing off, from its log end, but for those
    /// the follower's replication throttle holds back now (see [`should_follower_throttle`]).
    /// `Err` with the earliest end of a backoff (or `None`) when there is nothing to fetch now.
    fn build_fetch(&self) -> Result<Round, Option<Instant>> {
        let now = Instant::now();
        // Asked once per round, and only when a rate is set: the fetch path pays nothing
        // without a throttle.
        let quota_exceeded = self.follower_quota.is_configured()
            && self
                .follower_quota
                .is_quota_exceeded(self.time.milliseconds());
        let local_broker_id = self.local_broker_id;
        let mut map = lock(&self.partitions.map);
        let mut earliest: Option<Instant> = None;
        let mut round = Vec::with_capacity(map.len());
        for (tp, state) in map.iter_mut() {
            if let Some(until) = state.delayed_until {
                if until > now {
                    earliest = Some(earliest.map_or(until, |e| e.min(until)));
                    continue;
                }
                state.delayed_until = None;
            }
            if state.partition.is_offline() {
                continue;
            }
            if quota_exceeded && should_follower_throttle(state, local_broker_id) {
                // Fetched again once the rate is back within the throttle; Kafka waits
                // `replica.fetch.backoff.ms`, which leaves the move well under its rate.
                let within = self
                    .follower_quota
                    .time_until_within(self.time.milliseconds())
                    .map_or(now, |wait| now + wait);
                earliest = Some(earliest.map_or(within, |e| e.min(within)));
                continue;
            }
            let offsets = state.partition.offsets();
            round.push((
                FetchPartition {
                    topic_partition: tp.clone(),
                    topic_id: state.partition.topic_id(),
                    fetch_offset: offsets.log_end_offset,
                    log_start_offset: offsets.log_start_offset,
                    current_leader_epoch: state.current_leader_epoch,
                    last_fetched_epoch: state.partition.latest_epoch(),
                },
                Arc::clone(&state.partition),
            ));
        }
        if round.is_empty() {
            return Err(earliest);
        }
        round.sort_by(|a, b| a.0.topic_partition.cmp(&b.0.topic_partition));
        Ok(round)
    }

    /// What applies a round's answers as they are read (Kafka's `processFetchRequest`).
    fn applier(&self, round: Round) -> RoundApplier {
        RoundApplier {
            partitions: Arc::clone(&self.partitions),
            round,
            leader: self.leader(),
            log_manager: Arc::clone(&self.log_manager),
            time: Arc::clone(&self.time),
            follower_quota: Arc::clone(&self.follower_quota),
            local_broker_id: self.local_broker_id,
            backoff: self.config.fetch_backoff,
            out_of_range: Arc::default(),
            scratch: Arc::clone(&self.scratch),
        }
    }

    /// Kafka's `handleOutOfRangeError` (`fetchOffsetAndTruncate`): ahead of the leader's log end,
    /// truncate to it; behind the leader's log start, start over there.
    async fn handle_out_of_range(&self, tp: &TopicPartition, epoch: i32) {
        let latest = self.end_point.fetch_latest_offset(tp, epoch).await;
        let earliest = match &latest {
            Ok(_) => Some(self.end_point.fetch_earliest_offset(tp, epoch).await),
            Err(_) => None,
        };
        let (leader_end, leader_start) = match (latest, earliest) {
            (Ok(end), Some(Ok(start))) => (end, start),
            (Err(err), _) | (_, Some(Err(err))) => {
                tracing::warn!(topic_partition = %tp, %err, "cannot read the leader's offsets");
                self.delay(tp, epoch);
                return;
            }
            (Ok(_), None) => return,
        };
        let partitions = Arc::clone(&self.partitions);
        let log_manager = Arc::clone(&self.log_manager);
        let now = self.time.milliseconds();
        let tp_owned = tp.clone();
        let truncated = tokio::task::spawn_blocking(move || {
            let map = lock(&partitions.map);
            let Some(state) = map.get(&tp_owned) else {
                return Ok(());
            };
            if state.current_leader_epoch != epoch {
                return Ok(());
            }
            let local_end = state.partition.offsets().log_end_offset;
            if leader_end < local_end {
                tracing::warn!(topic_partition = %tp_owned, local_end, leader_end,
                    "the follower is ahead of its leader; truncating to the leader's log end");
                log_manager
                    .truncate_to(&tp_owned, leader_end, now)
                    .map(|_| ())
            } else if leader_start > local_end {
                tracing::warn!(topic_partition = %tp_owned, local_end, leader_start,
                    "the follower is behind the leader's log start; starting over there");
                log_manager
                    .truncate_fully_and_start_at(&tp_owned, leader_start, now)
                    .map(|_| ())
            } else {
                Ok(())
            }
        })
        .await;
        match truncated {
            Ok(Ok(())) => {}
            Ok(Err(err)) => {
                tracing::error!(topic_partition = %tp, %err, "cannot truncate the follower's log");
                self.log_manager.maybe_report_log_dir_failure(&err);
                self.delay(tp, epoch);
            }
            Err(err) => tracing::error!(topic_partition = %tp, %err, "truncation panicked"),
        }
    }

    fn delay(&self, tp: &TopicPartition, epoch: i32) {
        if let Some(state) = lock(&self.partitions.map).get_mut(tp)
            && state.current_leader_epoch == epoch
        {
            state.delayed_until = Some(Instant::now() + self.config.fetch_backoff);
        }
    }
}

/// Applies one round's answers, each as the end point reads it (on a blocking thread), with
/// the map locked while it is applied.
struct RoundApplier {
    partitions: Arc<FetcherPartitions>,
    round: Round,
    leader: BrokerId,
    log_manager: Arc<LogManager>,
    time: Arc<dyn Time>,
    follower_quota: Arc<ReplicationQuotaManager>,
    local_broker_id: BrokerId,
    backoff: Duration,
    /// The partitions whose fetch offset the leader called out of range, with the epoch they
    /// were fetched at, for the fetcher to resolve after the round.
    out_of_range: Arc<Mutex<Vec<(TopicPartition, i32)>>>,
    /// Where records written in place are read back for their checks; kept across rounds.
    scratch: Arc<Mutex<Vec<u8>>>,
}

impl FetchAnswerHandler for RoundApplier {
    /// Appends, or truncates where the leader answered a diverging epoch (with the map locked,
    /// as Kafka's `truncateOnFetchResponse` holds `partitionMapLock`).
    fn answer(
        &mut self,
        tp: TopicPartition,
        answer: FetchPartitionResult,
        records: Option<&mut dyn RecordsSource>,
    ) {
        let (leader, backoff) = (self.leader, self.backoff);
        let Some((request, partition)) = self.round.iter().find(|(r, _)| r.topic_partition == tp)
        else {
            return;
        };
        let mut map = lock(&self.partitions.map);
        let Some(state) = map.get_mut(&tp) else {
            return;
        };
        // Removed and added again, or at another epoch, since the request was built.
        if state.current_leader_epoch != request.current_leader_epoch
            || !Arc::ptr_eq(&state.partition, partition)
            || partition.offsets().log_end_offset != request.fetch_offset
        {
            return;
        }
        match answer.error_code {
            NONE if answer.diverging_epoch.is_some() => {
                if let Some(diverging) = answer.diverging_epoch
                    && !truncate_on_diverging_epoch(
                        leader,
                        &self.log_manager,
                        self.time.as_ref(),
                        &tp,
                        partition,
                        diverging,
                    )
                {
                    state.delayed_until = Some(Instant::now() + backoff);
                }
            }
            NONE => {
                // The read-back buffer, locked only for records still to be read.
                let mut scratch;
                let (records, bytes) = match records {
                    Some(source) => {
                        scratch = lock(&self.scratch);
                        let len = source.len();
                        let scratch = &mut *scratch;
                        (FollowerRecords::Source { source, scratch }, len)
                    }
                    None => (
                        FollowerRecords::Bytes(&answer.records),
                        answer.records.len(),
                    ),
                };
                let appended = partition.append_records_to_follower(
                    records,
                    answer.high_watermark,
                    answer.log_start_offset,
                    self.time.milliseconds(),
                );
                // Kafka records a throttled partition's bytes whether or not it is in sync.
                if self.follower_quota.is_configured()
                    && follower_throttled(partition, self.local_broker_id)
                {
                    self.follower_quota
                        .record(bytes as u64, self.time.milliseconds());
                }
                match appended {
                    Ok(done) => {
                        state.lag = (answer.high_watermark - done.log_end_offset).max(0);
                        state.in_sync = state.lag == 0;
                        tracing::trace!(topic_partition = %tp, leader,
                            log_end_offset = done.log_end_offset,
                            high_watermark = done.high_watermark, bytes, "replicated");
                    }
                    Err(err) => {
                        tracing::error!(topic_partition = %tp, leader, %err,
                            "cannot append the leader's records");
                        state.delayed_until = Some(Instant::now() + backoff);
                    }
                }
            }
            OFFSET_OUT_OF_RANGE => {
                lock(&self.out_of_range).push((tp, request.current_leader_epoch));
            }
            FENCED_LEADER_EPOCH => {
                tracing::info!(topic_partition = %tp, leader, epoch = request.current_leader_epoch,
                    "the leader has a newer epoch; not fetched until the next LeaderAndIsr");
                map.remove(&tp);
            }
            code => {
                tracing::debug!(topic_partition = %tp, leader, error_code = code,
                    "the leader answered with an error; backing off");
                state.delayed_until = Some(Instant::now() + backoff);
            }
        }
    }
}

/// Kafka's `shouldFollowerThrottle` (its quota already known to be exceeded): a partition not
/// in sync whose topic names it for this broker in `follower.replication.throttled.replicas`.
fn should_follower_throttle(state: &PartitionFetchState, local_broker_id: BrokerId) -> bool {
    !state.in_sync && follower_throttled(&state.partition, local_broker_id)
}

/// Whether the partition's topic throttles this broker's replica of it as a follower.
fn follower_throttled(partition: &Partition, local_broker_id: BrokerId) -> bool {
    let log = lock(partition.log());
    throttled_replicas_include(
        &log.config().follower_replication_throttled_replicas,
        partition.topic_partition().partition,
        local_broker_id,
    )
}

/// Kafka's `truncateOnFetchResponse` for one partition: truncates the log (and with it the
/// leader-epoch cache and the producer state) where [`offset_truncation_state`] says. `false`
/// when the truncation failed (the log dir's failure is reported; the partition backs off).
fn truncate_on_diverging_epoch(
    leader: BrokerId,
    log_manager: &LogManager,
    time: &dyn Time,
    tp: &TopicPartition,
    partition: &Partition,
    diverging: EpochEndOffset,
) -> bool {
    let offsets = partition.offsets();
    let local = partition.end_offset_for_epoch(diverging.leader_epoch);
    let target = offset_truncation_state(diverging, local, offsets.log_end_offset);
    if target.offset < offsets.high_watermark {
        tracing::warn!(topic_partition = %tp, offset = target.offset,
            high_watermark = offsets.high_watermark, "truncating below the high watermark");
    }
    tracing::info!(topic_partition = %tp, leader,
        diverging_epoch = diverging.leader_epoch, diverging_end_offset = diverging.end_offset,
        local_end_for_epoch = ?local, log_end_offset = offsets.log_end_offset,
        offset = target.offset, completed = target.truncation_completed,
        "truncating on a diverging epoch");
    match log_manager.truncate_to(tp, target.offset, time.milliseconds()) {
        Ok(_) => true,
        Err(err) => {
            tracing::error!(topic_partition = %tp, %err, "cannot truncate the follower's log");
            log_manager.maybe_report_log_dir_failure(&err);
            false
        }
    }
}
