//! One partition hosted by this broker (Kafka's `kafka.cluster.Partition`): its replica
//! assignment and leadership ([`LeaderAndIsr`]) as the controller last set them, its log, and the
//! waiters of the purgatory, which are woken whenever the log end, the high watermark or the
//! leadership moves.
//!
//! An acks=-1 append is acknowledged only while this broker has led the partition without a
//! break since the append ([`Partition::check_enough_replicas_reach_offset`]): a new leader may
//! truncate what an old one appended, so an acknowledgement after leadership moved could be a
//! lie. A re-election of this leader at a new epoch (the controller shrinking the ISR) is no
//! break: its log was not truncated, and the wait goes on, as Kafka's `DelayedProduce` does.
//!
//! The high watermark is the smallest log end offset among the ISR (Kafka's
//! `maybeIncrementLeaderHW`), the leader's own included; a follower's log end is what its last
//! fetch asked for (`updateFollowerFetchState`: a follower fetches from its log end), unknown
//! (holding the high watermark back) until it fetches from this leader. Followers outside the
//! ISR do not hold it back. With the leader alone in the ISR (a single-node broker, or
//! replication factor 1) it follows the log end at once. The ISR is what the controller set;
//! shrinking and expanding it is not done here yet.
//!
//! As a follower, the partition takes the leader's batches unchanged
//! ([`Partition::append_records_to_follower`]) and its high watermark is the leader's, capped at
//! its own log end.
//!
//! An I/O error from the log is reported to the log dir failure channel (the dir goes offline);
//! once the broker has taken the partition offline (Kafka's `HostedPartition.Offline`) every
//! operation answers KAFKA_STORAGE_ERROR.
//!
//! As a follower it serves consumers that send their rack (Fetch v11+) up to its own high
//! watermark (KIP-392); everything else a client reads is the leader's.
//!
//! The methods are grouped by job: `appends` (leader and follower writes, the acks=all check),
//! `reads` (the leader's reads, a follower's consumer fetches), `preferred_replica` (which
//! replica a leader points a consumer at), `isr` (the followers' progress and the high
//! watermark).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::Notify;
use uuid::Uuid;

use crate::cluster::sync::lock;
use crate::cluster::time::Time;
use crate::cluster::{BrokerId, LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::replication::alter_partition::{AlterPartitionManager, ReplicaEligibility};
use crate::storage::StorageError;
use crate::storage::file_records::FileSlice;
use crate::storage::log_dir_failure_channel::LogDirFailureChannel;
use crate::storage::log_manager::SharedLog;

use super::broker_topic_stats::{BrokerTopicMetrics, BrokerTopicStats};
use super::metrics::IsrChangeMeters;
use crate::storage::partition_metadata::{PartitionMetadataFile, TopicId};
use crate::storage::transaction_index::AbortedTxn;
use crate::storage::unified_log::UnifiedLog;

use super::error::PartitionError;

mod appends;
mod isr;
mod preferred_replica;
mod reads;
pub(crate) mod replica;

pub(crate) use appends::FollowerRecords;
pub(crate) use isr::PendingIsrChange;
use replica::Replica;

/// What every partition of a broker shares: the clock and settings its ISR is managed with,
/// the channel ISR changes go to the controller by, and where its log's I/O errors go.
#[derive(Debug, Clone)]
pub struct PartitionContext {
    pub time: Arc<dyn Time>,
    /// `replica.lag.time.max.ms`.
    pub replica_lag_time_max_ms: i64,
    pub alter_partition: Arc<dyn AlterPartitionManager>,
    /// Which followers may join the ISR (alive brokers).
    pub eligibility: Arc<dyn ReplicaEligibility>,
    pub failure_channel: Arc<LogDirFailureChannel>,
    /// The broker's `BrokerTopicMetrics`; each partition holds its topic's from creation.
    pub(crate) topic_stats: Arc<BrokerTopicStats>,
    /// The replica manager's IsrExpandsPerSec, IsrShrinksPerSec and FailedIsrUpdatesPerSec.
    pub(crate) isr_meters: Arc<IsrChangeMeters>,
}

/// A snapshot of a partition log's offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsets {
    pub log_start_offset: i64,
    pub high_watermark: i64,
    /// Below it, every transaction is decided (read_committed consumers read to here).
    pub last_stable_offset: i64,
    pub log_end_offset: i64,
}

/// What a read returned: whole batches as a slice of a segment file (for `sendfile`), and the
/// partition's offsets at the time of the read.
#[derive(Debug, Clone)]
pub struct LogReadResult {
    pub records: FileSlice,
    pub offsets: LogOffsets,
    /// The first batch was larger than the limit and `min_one_message` was off, so nothing
    /// was returned although data exists.
    pub first_entry_incomplete: bool,
    /// Set when the fetcher's `LastFetchedEpoch` shows its log diverged from this leader's
    /// (then `records` is empty): the largest epoch both logs may share and where it ends on
    /// this leader (truncation on fetch, IBP 2.7-IV1; Kafka's `LogReadInfo.divergingEpoch`).
    pub diverging_epoch: Option<EpochEndOffset>,
    /// A read_committed read: the aborted transactions its records may hold (the fetch's
    /// `AbortedTransactions`).
    pub aborted_transactions: Option<Vec<AbortedTxn>>,
}

/// A leader epoch and where it ends in a log (Kafka's `EpochEndOffset`, as the Fetch
/// response's `DivergingEpoch` and OffsetForLeaderEpoch carry it): the offsets of `leader_epoch`
/// are below `end_offset`, the start offset of the next higher epoch (or the log end for the
/// latest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEndOffset {
    pub leader_epoch: i32,
    pub end_offset: i64,
}

/// What the controller last told this broker about the partition: the replica assignment
/// (Kafka's `Partition.assignmentState`) and the leadership, with this leader's proposal of a new
/// ISR while one is in flight. Invariant: `leader_and_isr.isr` ⊆ `assignment`. One mutex holds
/// it all, so a reader never sees an ISR of another assignment.
#[derive(Debug, Clone)]
struct PartitionState {
    assignment: Vec<BrokerId>,
    /// The committed leadership: the ISR as ZooKeeper has it (Kafka's `CommittedPartitionState`).
    leader_and_isr: LeaderAndIsr,
    /// While this broker leads: its followers' fetch state (Kafka's `remoteReplicasMap`), one
    /// per assigned replica other than this broker.
    followers: HashMap<BrokerId, Replica>,
    /// An AlterPartition sent and not answered yet (Kafka's `PendingExpandIsr` /
    /// `PendingShrinkIsr`); no other is sent meanwhile.
    pending_isr: Option<PendingIsrChange>,
    /// This leader's log end when it took the current leader epoch; a follower joins the ISR
    /// only once it has reached it (it then has every record of earlier epochs this leader has).
    leader_epoch_start_offset: Option<i64>,
    /// Counts the leaderships of this broker: it moves whenever a LeaderAndIsr makes this broker
    /// anything but the leader it already was. Unchanged across re-elections at new epochs, so an
    /// acks=all wait whose term still holds appended to a log no one truncated since.
    leader_term: u64,
}

/// What the follower side of a fetch response did to the local log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowerAppend {
    /// The log end after the append: the next fetch offset.
    pub log_end_offset: i64,
    pub high_watermark: i64,
}

/// The leadership an append was made under, for an acks=all wait to check that leadership did
/// not move before the high watermark passed the append (Kafka's
/// `checkEnoughReplicasReachOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderAppend {
    /// The partition's `leader_term` at the append.
    pub leader_term: u64,
    /// The offset after the append's last record: acknowledged once the high watermark reaches it.
    pub required_offset: i64,
}

/// Where an acks=all wait stands (Kafka's `checkEnoughReplicasReachOffset` result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicationCheck {
    /// The high watermark has not reached the offset yet; keep waiting.
    Pending,
    /// The high watermark passed the offset with enough replicas in sync.
    Done,
    /// The wait ends with this error (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    /// KAFKA_STORAGE_ERROR).
    Failed(ErrorCode),
}

/// A hosted partition. Cheap to share (`Arc<Partition>`); all methods take `&self`.
#[derive(Debug)]
pub struct Partition {
    topic_partition: TopicPartition,
    /// Set at most once: from the LeaderAndIsr that made the partition, or later from one at the
    /// same leader epoch when the topic gets an id (`assign_topic_id`); never changed after.
    topic_id: OnceLock<Uuid>,
    local_broker_id: BrokerId,
    log: SharedLog,
    state: Mutex<PartitionState>,
    /// What every partition of the broker shares: the clock, the lag setting, the controller
    /// channel the ISR is managed with, and where I/O errors of the log are reported.
    partition_context: PartitionContext,
    /// The broker epoch of the registration the controller granted the current leadership to
    /// (-1: not known; the AlterPartition manager then uses the broker's current epoch).
    granted_broker_epoch: AtomicI64,
    /// Set by StopReplica: the partition is no longer hosted, whoever still holds it.
    stopped: AtomicBool,
    /// Delayed operations (long-poll fetches, acks=all produces) watching this partition; each
    /// is notified once and removed when the log end or the high watermark moves.
    waiters: Mutex<Vec<Arc<Notify>>>,
    /// Set when the log's dir failed: nothing is read or written any more.
    offline: AtomicBool,
    /// This partition's topic's meters, marked without a lock on the produce and fetch paths.
    topic_metrics: Arc<BrokerTopicMetrics>,
}

impl Partition {
    pub fn new(
        topic_partition: TopicPartition,
        topic_id: Option<Uuid>,
        local_broker_id: BrokerId,
        log: SharedLog,
        assignment: Vec<BrokerId>,
        leader_and_isr: LeaderAndIsr,
        partition_context: PartitionContext,
    ) -> Self {
        let now_ms = partition_context.time.milliseconds();
        let leader_epoch_start_offset =
            (leader_and_isr.leader == local_broker_id).then(|| lock(&log).log_end_offset());
        let followers = followers_of(&assignment, local_broker_id, &leader_and_isr, now_ms);
        let topic_metrics = partition_context.topic_stats.topic(&topic_partition.topic);
        let partition = Partition {
            topic_partition,
            topic_id: topic_id.map(OnceLock::from).unwrap_or_default(),
            local_broker_id,
            log,
            state: Mutex::new(PartitionState {
                assignment,
                leader_and_isr,
                followers,
                pending_isr: None,
                leader_epoch_start_offset,
                leader_term: 0,
            }),
            partition_context,
            granted_broker_epoch: AtomicI64::new(-1),
            stopped: AtomicBool::new(false),
            waiters: Mutex::new(Vec::new()),
            offline: AtomicBool::new(false),
            topic_metrics,
        };
        partition.maybe_increment_leader_hw();
        partition
    }

    pub fn topic_partition(&self) -> &TopicPartition {
        &self.topic_partition
    }

    /// This partition's topic's `BrokerTopicMetrics`.
    pub(crate) fn topic_metrics(&self) -> &BrokerTopicMetrics {
        &self.topic_metrics
    }

    /// The broker's `BrokerTopicMetrics`, every topic's and all together.
    pub(crate) fn topic_stats(&self) -> &BrokerTopicStats {
        &self.partition_context.topic_stats
    }

    pub fn topic_id(&self) -> Option<Uuid> {
        self.topic_id.get().copied()
    }

    /// Gives a partition whose topic had no id one (Kafka's `UnifiedLog.assignTopicId`, for a
    /// LeaderAndIsr at an unchanged leader epoch after the controller assigned the topic an id):
    /// `partition.metadata` is written first, so the id survives a restart. Returns the id the
    /// partition has afterwards: the one it or its log's `partition.metadata` already had, if
    /// any, and the caller compares.
    pub fn assign_topic_id(&self, topic_id: Uuid) -> Result<Uuid, StorageError> {
        if let Some(existing) = self.topic_id() {
            return Ok(existing);
        }
        let file = PartitionMetadataFile::new(lock(&self.log).dir());
        let id = match file.read()? {
            Some(TopicId(recorded)) => Uuid::from_u128(recorded),
            None => {
                file.write(TopicId(topic_id.as_u128()))?;
                topic_id
            }
        };
        Ok(*self.topic_id.get_or_init(|| id))
    }

    /// The partition's log, for callers outside the request path (retention, tools).
    pub fn log(&self) -> &SharedLog {
        &self.log
    }

    /// The current leadership state.
    pub fn leader_and_isr(&self) -> LeaderAndIsr {
        lock(&self.state).leader_and_isr.clone()
    }

    /// The replica assignment, in the controller's order.
    pub fn assignment(&self) -> Vec<BrokerId> {
        lock(&self.state).assignment.clone()
    }

    /// Replaces the assignment and leadership (a LeaderAndIsr from the controller, or the
    /// single-node broker electing itself) and recomputes the high watermark. Parked waits
    /// re-check: an acks=all produce whose leadership moved answers NOT_LEADER_OR_FOLLOWER.
    /// Returns whether the leader changed (another broker, or this one newly).
    ///
    /// A state at this leader epoch with an older partition epoch than the one this leader
    /// committed through AlterPartition is stale and ignored (Kafka's `makeLeader` check). Any
    /// proposal in flight is dropped: the controller's state replaces it. The followers' fetch
    /// state is reset as Kafka's `resetReplicaState` does when this broker becomes leader or is
    /// re-elected at a new epoch; replicas no longer assigned are dropped.
    pub fn update_leader_and_isr(
        &self,
        assignment: Vec<BrokerId>,
        leader_and_isr: LeaderAndIsr,
    ) -> bool {
        let now_ms = self.partition_context.time.milliseconds();
        let leader_changed = {
            let mut state = lock(&self.state);
            let current = &state.leader_and_isr;
            if leader_and_isr.leader_epoch == current.leader_epoch
                && leader_and_isr.leader == current.leader
                && leader_and_isr.partition_epoch < current.partition_epoch
            {
                tracing::info!(topic_partition = %self.topic_partition,
                    partition_epoch = leader_and_isr.partition_epoch,
                    current = current.partition_epoch, "ignoring a stale partition state");
                return false;
            }
            let leader_changed = current.leader != leader_and_isr.leader;
            let leads = leader_and_isr.leader == self.local_broker_id;
            let new_epoch = leader_changed || current.leader_epoch != leader_and_isr.leader_epoch;
            let log_end = lock(&self.log).log_end_offset();
            let mut followers = std::mem::take(&mut state.followers);
            if leads && !leader_changed {
                followers.retain(|id, _| assignment.contains(id));
                for (id, replica) in followers.iter_mut() {
                    if new_epoch {
                        replica.reset(now_ms, log_end, false, leader_and_isr.isr.contains(id));
                    }
                }
                for (id, replica) in
                    followers_of(&assignment, self.local_broker_id, &leader_and_isr, now_ms)
                {
                    followers.entry(id).or_insert(replica);
                }
            } else {
                followers =
                    followers_of(&assignment, self.local_broker_id, &leader_and_isr, now_ms);
            }
            let leader_epoch_start_offset = if !leads {
                None
            } else if new_epoch {
                Some(log_end)
            } else {
                state.leader_epoch_start_offset
            };
            let leader_term = if leads && !leader_changed {
                state.leader_term
            } else {
                state.leader_term + 1
            };
            *state = PartitionState {
                assignment,
                leader_and_isr,
                followers,
                pending_isr: None,
                leader_epoch_start_offset,
                leader_term,
            };
            leader_changed
        };
        self.maybe_increment_leader_hw();
        self.wake_waiters();
        leader_changed
    }

    /// Kafka's `makeLeader` bookkeeping of the epoch: `leader_epoch` starts at the log end, so
    /// a follower asking OffsetForLeaderEpoch about the previous epoch learns where it ended.
    /// Idempotent for an epoch already recorded.
    pub fn assign_leader_epoch_start_offset(&self, leader_epoch: i32) {
        let mut log = lock(&self.log);
        let end = log.log_end_offset();
        let assigned = log.maybe_assign_epoch_start_offset(leader_epoch, end);
        if let Err(e) = self.checked(&log, assigned) {
            tracing::error!(topic_partition = %self.topic_partition, %e,
                "cannot record the new leader epoch's start offset");
        }
    }

    /// Records the broker epoch the controller granted the next leadership under (`None`: not
    /// known, as from a controller older than LeaderAndIsr v2 or the single-node broker).
    pub fn set_granted_broker_epoch(&self, broker_epoch: Option<i64>) {
        self.granted_broker_epoch
            .store(broker_epoch.unwrap_or(-1), Ordering::SeqCst);
    }

    /// StopReplica: the partition is no longer hosted here; parked waits answer
    /// NOT_LEADER_OR_FOLLOWER at once.
    pub fn mark_stopped(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.wake_waiters();
    }

    /// Takes the partition offline (its log dir failed); parked waits answer at once.
    pub fn mark_offline(&self) {
        self.offline.store(true, Ordering::SeqCst);
        self.wake_waiters();
    }

    pub fn is_offline(&self) -> bool {
        self.offline.load(Ordering::SeqCst)
    }

    /// The log dir holding the partition's log.
    pub fn log_dir(&self) -> Option<std::path::PathBuf> {
        lock(&self.log)
            .dir()
            .parent()
            .map(std::path::Path::to_path_buf)
    }

    /// Passes a storage failure on, reporting an I/O error as its log dir's failure (Kafka's
    /// `maybeHandleIOException`).
    fn checked<T>(
        &self,
        log: &UnifiedLog,
        outcome: Result<T, StorageError>,
    ) -> Result<T, PartitionError> {
        if let Err(err @ StorageError::Io { .. }) = &outcome
            && let Some(dir) = log.dir().parent()
        {
            self.partition_context
                .failure_channel
                .maybe_add_offline_log_dir(dir, err);
        }
        Ok(outcome?)
    }

    /// Whether this broker leads the partition.
    pub fn is_leader(&self) -> bool {
        lock(&self.state).leader_and_isr.leader == self.local_broker_id
    }

    pub fn offsets(&self) -> LogOffsets {
        offsets_of(&lock(&self.log))
    }

    /// Checks the client's view of the leader epoch (-1: no check) and that this broker leads;
    /// returns the state it checked.
    fn leader_state(&self, current_leader_epoch: i32) -> Result<PartitionState, PartitionError> {
        self.local_state(current_leader_epoch, true)
    }

    /// Kafka's `getLocalLog`: checks the client's view of the leader epoch (-1: no check) and,
    /// with `require_leader`, that this broker leads; a follower's replica passes otherwise
    /// (a consumer fetching from a follower, KIP-392). Returns the state it checked.
    fn local_state(
        &self,
        current_leader_epoch: i32,
        require_leader: bool,
    ) -> Result<PartitionState, PartitionError> {
        if self.is_offline() {
            return Err(PartitionError::KafkaStorage {
                topic_partition: self.topic_partition.clone(),
            });
        }
        if self.stopped.load(Ordering::SeqCst) {
            return Err(PartitionError::NotLeaderOrFollower {
                topic_partition: self.topic_partition.clone(),
                broker_id: self.local_broker_id,
            });
        }
        let full = lock(&self.state).clone();
        let state = &full.leader_and_isr;
        if current_leader_epoch >= 0 {
            if current_leader_epoch < state.leader_epoch {
                return Err(PartitionError::FencedLeaderEpoch {
                    topic_partition: self.topic_partition.clone(),
                    request_epoch: current_leader_epoch,
                    leader_epoch: state.leader_epoch,
                });
            }
            if current_leader_epoch > state.leader_epoch {
                return Err(PartitionError::UnknownLeaderEpoch {
                    topic_partition: self.topic_partition.clone(),
                    request_epoch: current_leader_epoch,
                    leader_epoch: state.leader_epoch,
                });
            }
        }
        if require_leader && state.leader != self.local_broker_id {
            return Err(PartitionError::NotLeaderOrFollower {
                topic_partition: self.topic_partition.clone(),
                broker_id: self.local_broker_id,
            });
        }
        Ok(full)
    }

    /// Registers `waiter` to be notified at the next change of the log end or high watermark.
    /// `Notify::notify_one` stores a permit, so a change between registering and waiting is
    /// not lost.
    pub fn register_waiter(&self, waiter: &Arc<Notify>) {
        let mut waiters = lock(&self.waiters);
        // Drop waiters that gave up (timed out): only this list still holds them.
        waiters.retain(|w| Arc::strong_count(w) > 1);
        // A waiter registering again before it was woken (the log dir mover, at every step)
        // is listed once.
        if !waiters.iter().any(|w| Arc::ptr_eq(w, waiter)) {
            waiters.push(Arc::clone(waiter));
        }
    }

    fn wake_waiters(&self) {
        let waiters = std::mem::take(&mut *lock(&self.waiters));
        for w in waiters {
            w.notify_one();
        }
    }
}

/// The followers of a leadership this broker holds, not heard from yet (ISR members caught up as
/// of `now_ms`); none when another broker leads.
fn followers_of(
    assignment: &[BrokerId],
    local_broker_id: BrokerId,
    leader_and_isr: &LeaderAndIsr,
    now_ms: i64,
) -> HashMap<BrokerId, Replica> {
    if leader_and_isr.leader != local_broker_id {
        return HashMap::new();
    }
    assignment
        .iter()
        .filter(|id| **id != local_broker_id)
        .map(|id| {
            let in_sync = leader_and_isr.isr.contains(id);
            (*id, Replica::new(*id, now_ms, in_sync))
        })
        .collect()
}

fn offsets_of(log: &UnifiedLog) -> LogOffsets {
    LogOffsets {
        log_start_offset: log.log_start_offset(),
        high_watermark: log.high_watermark(),
        last_stable_offset: log.last_stable_offset(),
        log_end_offset: log.log_end_offset(),
    }
}
