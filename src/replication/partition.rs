//! One partition hosted by this broker (Kafka's `kafka.cluster.Partition`): its replica
//! assignment and leadership ([`LeaderAndIsr`]) as the controller last set them, its log, and the
//! waiters of the purgatory, which are woken whenever the log end, the high watermark or the
//! leadership moves.
//!
//! An acks=-1 append is acknowledged only while this broker leads the partition at the append's
//! leader epoch ([`Partition::check_enough_replicas_reach_offset`]): a new leader may truncate
//! what an old one appended, so an acknowledgement after leadership moved could be a lie.
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

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use uuid::Uuid;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::batch::NO_TIMESTAMP;
use crate::storage::StorageError;
use crate::storage::file_records::FileSlice;
use crate::storage::log_dir_failure_channel::LogDirFailureChannel;
use crate::storage::log_manager::SharedLog;
use crate::storage::log_reads::{
    EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, FetchIsolation, LATEST_TIMESTAMP,
};
use crate::storage::log_segment::TimestampAndOffset;
use crate::storage::log_validator::AppendOrigin;
use crate::storage::unified_log::{LogAppendInfo, UnifiedLog};

use super::error::PartitionError;

/// A snapshot of a partition log's offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsets {
    pub log_start_offset: i64,
    pub high_watermark: i64,
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
}

/// What the controller last told this broker about the partition: the replica assignment
/// (Kafka's `Partition.assignmentState`) and the leadership. Invariant: `leader_and_isr.isr` ⊆
/// `assignment`. One mutex holds both, so a reader never sees an ISR of another assignment.
#[derive(Debug, Clone)]
struct PartitionState {
    assignment: Vec<BrokerId>,
    leader_and_isr: LeaderAndIsr,
    /// While this broker leads: each follower's log end offset as its last fetch reported it
    /// (Kafka's `Replica.logEndOffset`). A follower missing here has not fetched since this
    /// broker became leader (unknown, -1 in Kafka). Only assigned followers appear.
    follower_log_ends: HashMap<BrokerId, i64>,
}

/// What the follower side of a fetch response did to the local log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowerAppend {
    /// The log end after the append: the next fetch offset.
    pub log_end_offset: i64,
    pub high_watermark: i64,
}

/// The partition this broker led when an append was made, for an acks=all wait to check that
/// leadership did not move before the high watermark passed the append (Kafka's
/// `checkEnoughReplicasReachOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderAppend {
    pub leader_epoch: i32,
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
    topic_id: Option<Uuid>,
    local_broker_id: BrokerId,
    log: SharedLog,
    state: Mutex<PartitionState>,
    /// Set by StopReplica: the partition is no longer hosted, whoever still holds it.
    stopped: AtomicBool,
    /// Delayed operations (long-poll fetches, acks=all produces) watching this partition; each
    /// is notified once and removed when the log end or the high watermark moves.
    waiters: Mutex<Vec<Arc<Notify>>>,
    /// Where an I/O error of the log is reported.
    failure_channel: Arc<LogDirFailureChannel>,
    /// Set when the log's dir failed: nothing is read or written any more.
    offline: AtomicBool,
}

impl Partition {
    pub fn new(
        topic_partition: TopicPartition,
        topic_id: Option<Uuid>,
        local_broker_id: BrokerId,
        log: SharedLog,
        assignment: Vec<BrokerId>,
        leader_and_isr: LeaderAndIsr,
        failure_channel: Arc<LogDirFailureChannel>,
    ) -> Self {
        let partition = Partition {
            topic_partition,
            topic_id,
            local_broker_id,
            log,
            state: Mutex::new(PartitionState {
                assignment,
                leader_and_isr,
                follower_log_ends: HashMap::new(),
            }),
            stopped: AtomicBool::new(false),
            waiters: Mutex::new(Vec::new()),
            failure_channel,
            offline: AtomicBool::new(false),
        };
        partition.maybe_increment_leader_hw();
        partition
    }

    pub fn topic_partition(&self) -> &TopicPartition {
        &self.topic_partition
    }

    pub fn topic_id(&self) -> Option<Uuid> {
        self.topic_id
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
    /// The followers' log ends are forgotten when this broker becomes leader (Kafka's
    /// `resetReplicaState` for a new leader: unknown until they fetch), kept when it is
    /// re-elected at a new epoch, and dropped for replicas no longer assigned.
    pub fn update_leader_and_isr(
        &self,
        assignment: Vec<BrokerId>,
        leader_and_isr: LeaderAndIsr,
    ) -> bool {
        let leader_changed = {
            let mut state = lock(&self.state);
            let leader_changed = state.leader_and_isr.leader != leader_and_isr.leader;
            let mut follower_log_ends = std::mem::take(&mut state.follower_log_ends);
            if leader_changed || leader_and_isr.leader != self.local_broker_id {
                follower_log_ends.clear();
            }
            follower_log_ends.retain(|id, _| assignment.contains(id));
            *state = PartitionState {
                assignment,
                leader_and_isr,
                follower_log_ends,
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

    /// Kafka's `updateFollowerFetchState`: a follower fetched from `fetch_offset`, its log end.
    /// The high watermark may move; when it does, parked acks=all produces re-check. A replica
    /// not assigned to the partition is NOT_LEADER_OR_FOLLOWER, as Kafka refuses to record it.
    pub fn update_follower_fetch_state(
        &self,
        follower_id: BrokerId,
        fetch_offset: i64,
    ) -> Result<(), PartitionError> {
        let moved = {
            let mut state = lock(&self.state);
            if follower_id == self.local_broker_id || !state.assignment.contains(&follower_id) {
                return Err(PartitionError::NotLeaderOrFollower {
                    topic_partition: self.topic_partition.clone(),
                    broker_id: self.local_broker_id,
                });
            }
            state.follower_log_ends.insert(follower_id, fetch_offset);
            let mut log = lock(&self.log);
            self.maybe_increment_leader_hw_locked(&mut log, &state)
        };
        if moved {
            self.wake_waiters();
        }
        Ok(())
    }

    /// The followers' log ends as this leader knows them, for tests and tools.
    pub fn follower_log_end_offset(&self, follower_id: BrokerId) -> Option<i64> {
        lock(&self.state)
            .follower_log_ends
            .get(&follower_id)
            .copied()
    }

    /// Kafka's `appendRecordsToFollowerOrFutureReplica` and the rest of the fetcher's
    /// `processPartitionData`: appends the leader's batches as they are (offsets, epochs, CRCs
    /// untouched), then takes the leader's high watermark capped at the new log end, and the
    /// leader's log start offset where the high watermark allows it.
    pub fn append_records_to_follower(
        &self,
        records: &[u8],
        leader_high_watermark: i64,
        leader_log_start_offset: i64,
        now_ms: i64,
    ) -> Result<FollowerAppend, PartitionError> {
        if self.is_offline() {
            return Err(PartitionError::KafkaStorage {
                topic_partition: self.topic_partition.clone(),
            });
        }
        let outcome = {
            let mut log = lock(&self.log);
            if !records.is_empty() {
                let appended = log.append_as_follower(records, now_ms);
                self.checked(&log, appended)?;
            }
            let hw = leader_high_watermark.min(log.log_end_offset());
            if hw >= 0 && hw != log.high_watermark() {
                let updated = log.update_high_watermark(hw);
                self.checked(&log, updated)?;
            }
            if leader_log_start_offset > log.log_start_offset()
                && leader_log_start_offset <= log.high_watermark()
            {
                let moved = log.maybe_increment_log_start_offset(leader_log_start_offset);
                self.checked(&log, moved)?;
            }
            FollowerAppend {
                log_end_offset: log.log_end_offset(),
                high_watermark: log.high_watermark(),
            }
        };
        self.wake_waiters();
        Ok(outcome)
    }

    /// StopReplica: the partition is no longer hosted here; parked waits answer
    /// NOT_LEADER_OR_FOLLOWER at once.
    pub fn mark_stopped(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.wake_waiters();
    }

    /// Kafka's `effectiveMinIsr`: `min.insync.replicas`, capped at the replica count, so a
    /// topic with fewer replicas than the setting can still commit with all of them in sync.
    fn effective_min_isr(&self, log: &UnifiedLog, state: &PartitionState) -> usize {
        let configured = usize::try_from(log.config().min_insync_replicas).unwrap_or(1);
        configured.min(state.assignment.len().max(1))
    }

    /// Kafka's `checkEnoughReplicasReachOffset` for an acks=all append made by `append`'s leader
    /// epoch: done once the high watermark reaches the append's end with at least the
    /// effective min ISR in sync; failed when this broker no longer leads at that epoch (the
    /// append may be truncated away by the new leader, so it must never be acknowledged).
    pub fn check_enough_replicas_reach_offset(&self, append: LeaderAppend) -> ReplicationCheck {
        if self.is_offline() {
            return ReplicationCheck::Failed(ErrorCode::KafkaStorageError);
        }
        let state = lock(&self.state).clone();
        let leadership = &state.leader_and_isr;
        if self.stopped.load(Ordering::SeqCst)
            || leadership.leader != self.local_broker_id
            || leadership.leader_epoch != append.leader_epoch
        {
            return ReplicationCheck::Failed(ErrorCode::NotLeaderOrFollower);
        }
        let log = lock(&self.log);
        if log.high_watermark() < append.required_offset {
            return ReplicationCheck::Pending;
        }
        if leadership.isr.len() < self.effective_min_isr(&log, &state) {
            return ReplicationCheck::Failed(ErrorCode::NotEnoughReplicasAfterAppend);
        }
        ReplicationCheck::Done
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
            self.failure_channel.maybe_add_offline_log_dir(dir, err);
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
        if state.leader != self.local_broker_id {
            return Err(PartitionError::NotLeaderOrFollower {
                topic_partition: self.topic_partition.clone(),
                broker_id: self.local_broker_id,
            });
        }
        Ok(full)
    }

    /// Kafka's `appendRecordsToLeader`: validates and appends one produced batch with the
    /// current leader epoch. acks=all is refused when the ISR is smaller than the effective min
    /// ISR (`min.insync.replicas` capped at the replica count), before anything is written.
    pub fn append_records_to_leader(
        &self,
        records: &[u8],
        required_acks: i16,
        now_ms: i64,
    ) -> Result<(LogAppendInfo, LeaderAppend), PartitionError> {
        let state = self.leader_state(-1)?;
        let leadership = &state.leader_and_isr;
        let info = {
            let mut log = lock(&self.log);
            let min_isr = self.effective_min_isr(&log, &state);
            if required_acks == -1 && leadership.isr.len() < min_isr {
                return Err(PartitionError::NotEnoughReplicas {
                    topic_partition: self.topic_partition.clone(),
                    isr_size: leadership.isr.len(),
                    min_isr,
                });
            }
            let appended = log.append_as_leader(
                records,
                leadership.leader_epoch,
                AppendOrigin::Client,
                now_ms,
            );
            self.checked(&log, appended)?
        };
        // With the log's lock released: the state's lock comes first.
        self.maybe_increment_leader_hw();
        self.wake_waiters();
        let append = LeaderAppend {
            leader_epoch: leadership.leader_epoch,
            required_offset: info.last_offset + 1,
        };
        Ok((info, append))
    }

    /// Kafka's `readRecords` for a consumer (up to the high watermark) or a follower (up to the
    /// log end).
    pub fn read_records(
        &self,
        fetch_offset: i64,
        current_leader_epoch: i32,
        max_bytes: usize,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<LogReadResult, PartitionError> {
        self.leader_state(current_leader_epoch)?;
        let log = lock(&self.log);
        let read = log.read(fetch_offset, max_bytes, isolation, min_one_message);
        let info = self.checked(&log, read)?;
        Ok(LogReadResult {
            records: info.records,
            offsets: offsets_of(&log),
            first_entry_incomplete: info.first_entry_incomplete,
        })
    }

    /// ListOffsets on the leader. Consumers (`isolation` = high watermark) see the high
    /// watermark as the latest offset and never an offset above it.
    pub fn fetch_offset_for_timestamp(
        &self,
        timestamp: i64,
        isolation: FetchIsolation,
        current_leader_epoch: i32,
    ) -> Result<Option<TimestampAndOffset>, PartitionError> {
        let state = self.leader_state(current_leader_epoch)?;
        let mut log = lock(&self.log);
        let last_fetchable = match isolation {
            FetchIsolation::HighWatermark => log.high_watermark(),
            FetchIsolation::LogEnd => log.log_end_offset(),
        };
        match timestamp {
            // Kafka answers "latest" with the current leader epoch, not the epoch of the record.
            LATEST_TIMESTAMP => Ok(Some(TimestampAndOffset {
                timestamp: NO_TIMESTAMP,
                offset: last_fetchable,
                leader_epoch: Some(state.leader_and_isr.leader_epoch),
            })),
            EARLIEST_TIMESTAMP | EARLIEST_LOCAL_TIMESTAMP => {
                Ok(log.fetch_offset_by_timestamp(timestamp)?)
            }
            // Records a consumer may not read yet are not found by a search.
            _ => Ok(log
                .fetch_offset_by_timestamp(timestamp)?
                .filter(|t| t.offset < last_fetchable)),
        }
    }

    /// DeleteRecords: raises the log start offset to `offset` (-1: the high watermark) and
    /// returns the new low watermark. Refused on a topic whose cleanup policy lacks `delete`.
    pub fn delete_records_on_leader(&self, offset: i64) -> Result<i64, PartitionError> {
        self.leader_state(-1)?;
        let low_watermark = {
            let mut log = lock(&self.log);
            if !log.config().cleanup_policy.delete {
                return Err(PartitionError::PolicyViolation(format!(
                    "Records of partition {} can not be deleted due to the configured policy",
                    self.topic_partition
                )));
            }
            let target = if offset == -1 {
                log.high_watermark()
            } else {
                offset
            };
            if target < 0 || target > log.high_watermark() {
                return Err(PartitionError::OffsetOutOfRange(format!(
                    "cannot increment the log start offset of {} to {target}: it is outside [0, {}] (the high watermark)",
                    self.topic_partition,
                    log.high_watermark()
                )));
            }
            log.maybe_increment_log_start_offset(target)?;
            log.log_start_offset()
        };
        self.wake_waiters();
        Ok(low_watermark)
    }

    /// OffsetForLeaderEpoch: the end offset of `leader_epoch` on this leader, as
    /// `(epoch, end_offset)`; `(-1, -1)` when the epoch is unknown.
    pub fn last_offset_for_leader_epoch(
        &self,
        current_leader_epoch: i32,
        leader_epoch: i32,
    ) -> Result<(i32, i64), PartitionError> {
        self.leader_state(current_leader_epoch)?;
        let log = lock(&self.log);
        Ok(log
            .leader_epoch_cache()
            .end_offset_for(leader_epoch, log.log_end_offset()))
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

    fn maybe_increment_leader_hw(&self) {
        let state = lock(&self.state);
        let mut log = lock(&self.log);
        self.maybe_increment_leader_hw_locked(&mut log, &state);
    }

    /// Kafka's `maybeIncrementLeaderHW`: the high watermark is the smallest log end among the
    /// ISR, the leader's included. A follower of the ISR that has not fetched since this broker
    /// became leader holds it where it is. It only moves up; `true` when it moved.
    fn maybe_increment_leader_hw_locked(
        &self,
        log: &mut UnifiedLog,
        state: &PartitionState,
    ) -> bool {
        let leadership = &state.leader_and_isr;
        if leadership.leader != self.local_broker_id {
            return false;
        }
        let leo = log.log_end_offset();
        let mut new_hw = leo;
        for id in &leadership.isr {
            if *id == self.local_broker_id {
                continue;
            }
            match state.follower_log_ends.get(id) {
                Some(follower_leo) => new_hw = new_hw.min(*follower_leo),
                None => return false,
            }
        }
        if new_hw <= log.high_watermark() {
            return false;
        }
        match log.update_high_watermark(new_hw) {
            Ok(_) => true,
            Err(err) => {
                tracing::error!(topic_partition = %self.topic_partition, %err, "cannot move the high watermark");
                false
            }
        }
    }
}

fn offsets_of(log: &UnifiedLog) -> LogOffsets {
    LogOffsets {
        log_start_offset: log.log_start_offset(),
        high_watermark: log.high_watermark(),
        log_end_offset: log.log_end_offset(),
    }
}
