//! The fetch path of the replica manager (Kafka's `ReplicaManager.fetchMessages`, `readFromLog`
//! and `DelayedFetch`): each partition is read as a range of a segment file (sent with
//! `sendfile(2)` by the network layer, never copied), up to the high watermark for consumers and
//! to the log end for followers, starting at the whole batch that holds the fetch offset.
//!
//! Limits follow KIP-74: partitions are read in request order under the request's `max_bytes`,
//! each under its `partition_max_bytes`, and the first partition with data returns its first
//! batch even when it is larger (unless `min_one_message` is off: fetch v0-2's limits are hard).
//!
//! A follower's fetch (`replica_id` >= 0) also reports its log end to the leader's partition
//! (the fetch offset), which moves the high watermark and so completes acks=all produces.
//!
//! A partition fetched with a `last_fetched_epoch` (Fetch v12+) whose fetcher's log diverged
//! from this leader's is answered with no records and a diverging epoch (see
//! `Partition::read_records`); such a fetch does not report the follower's log end (its fetch
//! offset is not a log end this leader agrees with), and it is answered at once, from the
//! purgatory too, so the follower truncates without waiting.
//!
//! When less than `min_bytes` is available the fetch waits in the purgatory until one of its
//! partitions moves or `max_wait_ms` passes, then reads again. A read error answers at once.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cluster::time::Time;
use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::storage::file_records::FileSlice;
use crate::storage::log_reads::FetchIsolation;
use crate::storage::transaction_index::AbortedTxn;

use super::super::delayed::{PartitionWatch, PurgatorySize};
use super::super::partition::{EpochEndOffset, Partition};
use super::super::replica_selector::{ClientMetadata, ReplicaEndpoints, ReplicaSelector};
use super::super::replication_quota_manager::{
    ReplicationQuotaManager, throttled_replicas_include,
};
use super::ReplicaManager;

/// The request-level parameters of a fetch (Kafka's `FetchParams`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchParams {
    /// -1 for a consumer; a broker id for a follower, which reads to the log end.
    pub replica_id: i32,
    pub max_wait_ms: i32,
    pub min_bytes: i32,
    /// The whole response's limit (`usize::MAX` for fetch v0-2, which have none).
    pub max_bytes: usize,
    /// 0 read_uncommitted (to the high watermark), 1 read_committed (to the last stable
    /// offset, with the aborted transactions).
    pub isolation_level: i8,
    /// Whether the first batch with data is returned even when over the limits (KIP-74).
    pub min_one_message: bool,
    /// Whether a read that the size limits cut mid-batch ends at its last whole batch instead
    /// (a consumer paced by its fetch quota, which pays for every byte sent: a partial batch it
    /// would discard and fetch again would cost it a large share of a small quota).
    pub whole_batches: bool,
    /// Fetch v11+ (Kafka's `clientMetadata`): the consumer's rack and listener. A consumer
    /// that sends it may read from a follower, and its leader may point it at one
    /// (KIP-392); without it a consumer reads from the leader only.
    pub client_metadata: Option<ClientMetadata>,
}

impl FetchParams {
    /// Kafka's `FetchIsolation.of`: followers read to the log end, consumers to the high
    /// watermark, read_committed ones to the last stable offset.
    fn isolation(&self) -> FetchIsolation {
        if self.replica_id >= 0 {
            FetchIsolation::LogEnd
        } else if self.isolation_level == 1 {
            FetchIsolation::TxnCommitted
        } else {
            FetchIsolation::HighWatermark
        }
    }

    /// Kafka's `fetchOnlyLeader`: a follower's fetch, or a consumer's before v11.
    fn fetch_only_leader(&self) -> bool {
        self.replica_id >= 0 || self.client_metadata.is_none()
    }
}

/// One partition to read (Kafka's `FetchRequest.PartitionData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPartitionInfo {
    pub topic_partition: TopicPartition,
    pub fetch_offset: i64,
    /// The client's view of the leader epoch; -1 skips the check.
    pub current_leader_epoch: i32,
    /// The epoch of the last batch the fetcher holds (Fetch v12+; `None` when it sent -1): the
    /// leader checks the fetcher's log against its own epochs.
    pub last_fetched_epoch: Option<i32>,
    /// The fetcher's log start (a follower's; -1 from a consumer).
    pub log_start_offset: i64,
    pub partition_max_bytes: i32,
}

/// One partition's read (Kafka's `FetchPartitionData`). On an error the offsets are -1 and
/// there are no records, as Kafka's `createLogReadResult` answers.
#[derive(Debug, Clone)]
pub struct FetchPartitionData {
    pub error_code: ErrorCode,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
    pub log_start_offset: i64,
    /// Whole batches as a range of a segment file; `None` when nothing was read.
    pub records: Option<FileSlice>,
    /// The fetcher's log diverged from this leader's: truncate to this, then fetch again.
    pub diverging_epoch: Option<EpochEndOffset>,
    /// A read_committed read's aborted transactions.
    pub aborted_transactions: Option<Vec<AbortedTxn>>,
    /// The follower this leader points the consumer at (KIP-392); then there are no records.
    pub preferred_read_replica: Option<BrokerId>,
}

impl FetchPartitionData {
    fn error(error_code: ErrorCode) -> Self {
        FetchPartitionData {
            error_code,
            high_watermark: -1,
            last_stable_offset: -1,
            log_start_offset: -1,
            records: None,
            diverging_epoch: None,
            aborted_transactions: None,
            preferred_read_replica: None,
        }
    }

    /// The bytes read.
    pub fn size(&self) -> usize {
        self.records
            .as_ref()
            .map_or(0, |r| usize::try_from(r.size).unwrap_or(0))
    }
}

/// What `fetch_messages` gives: the reads now, or a long poll.
#[derive(Debug)]
pub enum FetchResult {
    Ready(Vec<FetchPartitionData>),
    Delayed(DelayedFetch),
}

/// A fetch waiting for `min_bytes` (Kafka's `DelayedFetch`), answered by
/// [`DelayedFetch::complete`].
#[derive(Debug)]
pub struct DelayedFetch {
    plan: FetchPlan,
    deadline: Instant,
    shutting_down: CancellationToken,
    /// Where its waits count (the Fetch purgatory).
    purgatory: Arc<PurgatorySize>,
}

/// The request, resolved once against the hosted partitions and read again after each wait.
#[derive(Debug)]
struct FetchPlan {
    params: FetchParams,
    partitions: Vec<(FetchPartitionInfo, Result<Arc<Partition>, ErrorCode>)>,
    /// A follower's fetch: the leader's replication throttle, this broker's id (which the
    /// throttled-replica lists name) and the throttle's clock. `None` for a consumer.
    leader_throttle: Option<LeaderThrottle>,
    /// A consumer's fetch with client metadata on a broker with a replica selector: the
    /// selector and where replicas are. `None` otherwise (no preferred read replica).
    selector: Option<(ReplicaSelector, Arc<dyn ReplicaEndpoints>)>,
    /// The clock the followers' last caught-up times are on.
    time: Arc<dyn Time>,
}

/// What a leader needs to throttle a follower's fetch (see [`FetchPlan::read`]).
#[derive(Debug)]
struct LeaderThrottle {
    quota: Arc<ReplicationQuotaManager>,
    local_broker_id: BrokerId,
    time: Arc<dyn Time>,
}

/// One read of every partition, and whether it is enough to answer.
struct Read {
    data: Vec<FetchPartitionData>,
    bytes: usize,
    has_error: bool,
    has_diverging_epoch: bool,
    /// A partition's leader pointed the consumer at a follower: answered at once, as Kafka.
    has_preferred_read_replica: bool,
    /// When the leader's replication throttle, which held records back, is within its rate
    /// again: a waiting fetch reads again then rather than at `max_wait_ms`.
    throttled_until: Option<Instant>,
}

impl ReplicaManager {
    /// Kafka's `fetchMessages`: reads every partition in order; answers now when `max_wait_ms`
    /// is 0, there is nothing to read, a read failed, a partition diverged, a partition has a
    /// preferred read replica or `min_bytes` are available, and otherwise waits (the caller
    /// awaits [`DelayedFetch::complete`]).
    pub fn fetch_messages(
        &self,
        params: FetchParams,
        partitions: Vec<FetchPartitionInfo>,
    ) -> FetchResult {
        let partitions = partitions
            .into_iter()
            .map(|info| {
                let partition = self
                    .get_partition_or_error(&info.topic_partition)
                    .map_err(|e| e.error_code());
                (info, partition)
            })
            .collect();
        let leader_throttle = (params.replica_id >= 0).then(|| LeaderThrottle {
            quota: Arc::clone(&self.replication_quotas().leader),
            local_broker_id: self.local_broker_id(),
            time: Arc::clone(self.time()),
        });
        let selector = if params.replica_id < 0 && params.client_metadata.is_some() {
            self.replica_selector()
        } else {
            None
        };
        let max_wait_ms = params.max_wait_ms;
        let min_bytes = usize::try_from(params.min_bytes).unwrap_or(0);
        let plan = FetchPlan {
            params,
            partitions,
            leader_throttle,
            selector,
            time: Arc::clone(self.time()),
        };
        let read = plan.read();
        if max_wait_ms <= 0
            || plan.partitions.is_empty()
            || read.has_error
            || read.has_diverging_epoch
            || read.has_preferred_read_replica
            || read.bytes >= min_bytes
        {
            return FetchResult::Ready(plan.answer(read));
        }
        FetchResult::Delayed(DelayedFetch {
            plan,
            deadline: Instant::now()
                + Duration::from_millis(u64::try_from(max_wait_ms).unwrap_or(0)),
            shutting_down: self.shutting_down().clone(),
            purgatory: Arc::clone(&self.fetch_purgatory),
        })
    }
}

impl DelayedFetch {
    /// Waits until `min_bytes` are available, a read fails, a partition diverges (a truncation
    /// of this leader's log while the fetch waited: Kafka's case H), `max_wait_ms` passes or the
    /// broker shuts down, then answers with a fresh read.
    pub async fn complete(self) -> Vec<FetchPartitionData> {
        let min_bytes = usize::try_from(self.plan.params.min_bytes).unwrap_or(0);
        loop {
            let watch = PartitionWatch::register(&self.purgatory, self.plan.hosted());
            let read = self.plan.read();
            if read.bytes >= min_bytes
                || read.has_error
                || read.has_diverging_epoch
                || read.has_preferred_read_replica
            {
                return self.plan.answer(read);
            }
            let wake = read
                .throttled_until
                .map_or(self.deadline, |t| t.min(self.deadline));
            if !watch.wait(wake, &self.shutting_down).await
                && (wake >= self.deadline || self.shutting_down.is_cancelled())
            {
                return self.plan.answer(self.plan.read());
            }
        }
    }
}

impl FetchPlan {
    fn hosted(&self) -> impl Iterator<Item = &Arc<Partition>> {
        self.partitions.iter().filter_map(|(_, p)| p.as_ref().ok())
    }

    /// The read that answers the fetch, its `BrokerTopicMetrics` marked: a fetch request and
    /// (for a failure Kafka counts) a failed one per partition, and the bytes sent, to each
    /// topic's meters for a consumer and to the replication meter for a follower.
    fn answer(&self, read: Read) -> Vec<FetchPartitionData> {
        let from_follower = self.params.replica_id >= 0;
        for ((_, partition), data) in self.partitions.iter().zip(&read.data) {
            let Ok(partition) = partition else { continue };
            let (topic, stats) = (partition.topic_metrics(), partition.topic_stats());
            let all = stats.all_topics();
            topic.total_fetch_requests.mark(1);
            all.total_fetch_requests.mark(1);
            if !matches!(
                data.error_code,
                ErrorCode::None
                    | ErrorCode::NotLeaderOrFollower
                    | ErrorCode::UnknownTopicOrPartition
                    | ErrorCode::UnknownLeaderEpoch
                    | ErrorCode::FencedLeaderEpoch
                    | ErrorCode::ReplicaNotAvailable
                    | ErrorCode::KafkaStorageError
                    | ErrorCode::InconsistentTopicId
                    | ErrorCode::OffsetOutOfRange
            ) {
                topic.failed_fetch_requests.mark(1);
                all.failed_fetch_requests.mark(1);
            }
            let bytes = data.records.as_ref().map_or(0, |r| r.size);
            if bytes > 0 {
                if from_follower {
                    stats.replication_bytes_out().mark(bytes);
                    // Kafka records the throttled partitions' bytes as the response is sent
                    // (`sizeOfThrottledPartitions`).
                    if let Some(throttle) = &self.leader_throttle
                        && throttle.quota.is_configured()
                        && leader_throttled(partition, throttle.local_broker_id)
                    {
                        throttle.quota.record(bytes, throttle.time.milliseconds());
                    }
                } else {
                    topic.bytes_out.mark(bytes);
                    all.bytes_out.mark(bytes);
                }
            }
        }
        read.data
    }

    /// Kafka's `readFromLog`: every partition in order under the request's byte budget. While
    /// the leader's replication throttle is over its rate, a follower not in the ISR gets no
    /// records of the partitions its topic throttles on this broker (Kafka's
    /// `shouldLeaderThrottle`); its fetch state still moves, and the bytes do not count
    /// towards `min_bytes`.
    fn read(&self) -> Read {
        let throttle_exceeded = self.leader_throttle.as_ref().is_some_and(|t| {
            t.quota.is_configured() && t.quota.is_quota_exceeded(t.time.milliseconds())
        });
        let mut throttled = false;
        let mut limit = self.params.max_bytes;
        let mut min_one_message = self.params.min_one_message;
        let mut bytes = 0usize;
        let mut has_error = false;
        let mut has_diverging_epoch = false;
        let mut has_preferred_read_replica = false;
        let mut data = Vec::with_capacity(self.partitions.len());
        for (info, partition) in &self.partitions {
            if let Some(preferred) = partition
                .as_ref()
                .ok()
                .and_then(|p| self.preferred_read_replica(p, info))
            {
                has_preferred_read_replica = true;
                data.push(preferred);
                continue;
            }
            let max = usize::try_from(info.partition_max_bytes)
                .unwrap_or(0)
                .min(limit);
            let read = partition.as_ref().map_err(|c| *c).and_then(|partition| {
                let from_follower = self.params.replica_id >= 0;
                let checked = if from_follower {
                    partition.check_follower_replica(self.params.replica_id)
                } else {
                    Ok(())
                };
                checked
                    .and_then(|()| {
                        partition.read_records(
                            info.fetch_offset,
                            info.current_leader_epoch,
                            info.last_fetched_epoch,
                            max,
                            self.params.isolation(),
                            min_one_message,
                            self.params.fetch_only_leader(),
                        )
                    })
                    .and_then(|read| {
                        // Kafka's `updateFollowerFetchState`, after the read as in Kafka: the
                        // follower's log end is its fetch offset, and the high watermark may
                        // move (the follower learns it at its next fetch). Not for a diverged
                        // follower, whose fetch offset is no log end this leader agrees with.
                        if from_follower && read.diverging_epoch.is_none() {
                            partition.update_follower_fetch_state(
                                self.params.replica_id,
                                info.fetch_offset,
                                read.offsets.log_end_offset,
                                info.log_start_offset,
                            )?;
                        }
                        Ok(read)
                    })
                    .map(|mut read| {
                        if throttle_exceeded
                            && let Some(t) = &self.leader_throttle
                            && !partition.is_in_sync_replica(self.params.replica_id)
                            && leader_throttled(partition, t.local_broker_id)
                        {
                            throttled |= read.records.size > 0;
                            read.records.size = 0;
                        }
                        if self.params.whole_batches
                            && usize::try_from(read.records.size).unwrap_or(usize::MAX) >= max
                        {
                            // Best effort: a header that cannot be read leaves the cut as is.
                            if let Ok(whole) = read.records.whole_entries() {
                                read.records = whole;
                            }
                        }
                        read
                    })
                    // An out-of-range consumer resets through ListOffsets.
                    .map_err(|e| e.error_code())
            });
            match read {
                Ok(result) => {
                    let size = usize::try_from(result.records.size).unwrap_or(0);
                    if size > 0 {
                        min_one_message = false;
                        limit = limit.saturating_sub(size);
                        bytes += size;
                    }
                    let o = result.offsets;
                    has_diverging_epoch |= result.diverging_epoch.is_some();
                    data.push(FetchPartitionData {
                        error_code: ErrorCode::None,
                        high_watermark: o.high_watermark,
                        last_stable_offset: o.last_stable_offset,
                        log_start_offset: o.log_start_offset,
                        records: (size > 0).then_some(result.records),
                        diverging_epoch: result.diverging_epoch,
                        aborted_transactions: result.aborted_transactions,
                        preferred_read_replica: None,
                    });
                }
                Err(code) => {
                    has_error = true;
                    data.push(FetchPartitionData::error(code));
                }
            }
        }
        let throttled_until = if throttled {
            self.leader_throttle.as_ref().and_then(|t| {
                t.quota
                    .time_until_within(t.time.milliseconds())
                    .map(|wait| Instant::now() + wait)
            })
        } else {
            None
        };
        Read {
            data,
            bytes,
            has_error,
            has_diverging_epoch,
            has_preferred_read_replica,
            throttled_until,
        }
    }

    /// Kafka's `readFromLog` with a preferred read replica: when this leader points the
    /// consumer at a follower, the answer carries the partition's offsets and no records.
    /// An epoch the consumer has wrong is answered as an error; a partition this broker does
    /// not lead has no preferred read replica (and is read as usual).
    fn preferred_read_replica(
        &self,
        partition: &Partition,
        info: &FetchPartitionInfo,
    ) -> Option<FetchPartitionData> {
        let (selector, endpoints) = self.selector.as_ref()?;
        let client = self.params.client_metadata.as_ref()?;
        let preferred = partition.find_preferred_read_replica(
            *selector,
            client,
            endpoints.as_ref(),
            info.fetch_offset,
            self.time.milliseconds(),
        )?;
        Some(
            match partition.fetch_offset_snapshot(info.current_leader_epoch) {
                Ok(o) => FetchPartitionData {
                    error_code: ErrorCode::None,
                    high_watermark: o.high_watermark,
                    last_stable_offset: o.last_stable_offset,
                    log_start_offset: o.log_start_offset,
                    records: None,
                    diverging_epoch: None,
                    aborted_transactions: None,
                    preferred_read_replica: Some(preferred),
                },
                Err(e) => FetchPartitionData::error(e.error_code()),
            },
        )
    }
}

/// Whether the partition's topic throttles this broker's replica of it as a leader
/// (`leader.replication.throttled.replicas`).
fn leader_throttled(partition: &Partition, local_broker_id: BrokerId) -> bool {
    let log = crate::cluster::sync::lock(partition.log());
    throttled_replicas_include(
        &log.config().leader_replication_throttled_replicas,
        partition.topic_partition().partition,
        local_broker_id,
    )
}
