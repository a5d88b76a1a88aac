//! A partition's log (Kafka's `UnifiedLog` over `LocalLog`): its segments, the last one active,
//! and the offsets that describe it.
//!
//! Offsets, in increasing order: `log_start_offset` (the first offset a consumer may read;
//! raised by retention and DeleteRecords) ≤ `recovery_point` (everything below is fsynced) and
//! `high_watermark` (replicated to the ISR; consumers read below it) ≤ `log_end_offset` (the
//! next offset to assign).
//!
//! The files (the segments, the roll, the recovery point, flushes) are `super::local_log`'s;
//! `UnifiedLog` adds the high watermark, the log start offset, the leader-epoch cache and the
//! producer state over them, and is the API the rest of the crate calls.
//!
//! `UnifiedLog` is not synchronised: the partition that owns it puts it behind a lock. Methods
//! that depend on the clock take `now_ms`, so tests drive time explicitly. Truncation (from the
//! end and from the start) is in `truncation`; reads in `reads`; retention, the
//! cleaner's swap and the producer state's side in `retention`, `replace_segments` and
//! `producer_state_ops`.

use std::io::IoSlice;
use std::path::{Path, PathBuf};

pub use super::local_log::PendingFlush;

use crate::cluster::TopicPartition;
use crate::protocol::record::batch::{self, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, TimestampType};

use super::StorageError;
use super::leader_epoch_cache::LeaderEpochFileCache;
use super::local_log::LocalLog;
use super::log_config::LogConfig;
use super::log_loader::{self, LoadParams};
use super::log_segment::{LogOffsetMetadata, LogSegment, RollParams};
use super::log_validator::{self, AppendOrigin, ValidationContext};
use super::producer_state::{
    self, DEFAULT_PRODUCER_ID_EXPIRATION_MS, LeaderBatchCheck, ProducerStateManager,
};
use super::producer_state::{CompletedTxn, VerificationGuard};

mod follower_append;
mod producer_state_ops;
mod reads;
mod replace_segments;
mod retention;
mod truncation;

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogAppendInfo {
    pub first_offset: i64,
    pub last_offset: i64,
    pub max_timestamp: i64,
    pub shallow_offset_of_max_timestamp: i64,
    /// The broker time stamped into the batches under `LogAppendTime`, else `NO_TIMESTAMP`.
    pub log_append_time: i64,
    pub log_start_offset: i64,
    pub records_count: usize,
    pub valid_bytes: usize,
}

/// One partition's log over its `LocalLog`. Invariants (besides `LocalLog`'s):
/// `log_start_offset ≤ high_watermark ≤ log_end_offset`; the leader-epoch cache holds no entry
/// at or above the log end; the producer state is built up to the log end.
#[derive(Debug)]
pub struct UnifiedLog {
    /// The segments and their files.
    local_log: LocalLog,
    log_start_offset: i64,
    high_watermark: LogOffsetMetadata,
    leader_epoch_cache: LeaderEpochFileCache,
    /// The idempotent producers of this partition (`producer_state`).
    producer_state: ProducerStateManager,
}

impl UnifiedLog {
    /// Opens the partition directory `dir` (creating it when missing), recovering it when
    /// `had_clean_shutdown` is false; see `log_loader`.
    pub fn open(
        dir: PathBuf,
        topic_partition: TopicPartition,
        config: LogConfig,
        recovery_point: i64,
        log_start_offset: i64,
        had_clean_shutdown: bool,
        now_ms: i64,
    ) -> Result<Self, StorageError> {
        std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
        let mut leader_epoch_cache =
            LeaderEpochFileCache::open(dir.join(super::file_names::LEADER_EPOCH_CHECKPOINT_FILE))?;
        let mut producer_state = ProducerStateManager::new(
            &dir,
            topic_partition.to_string(),
            DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        )?;
        let loaded = log_loader::load(LoadParams {
            dir: &dir,
            config: &config,
            recovery_point,
            log_start_offset,
            had_clean_shutdown,
            leader_epoch_cache: &mut leader_epoch_cache,
            producer_state: &mut producer_state,
            now_ms,
        })?;
        let local_log = LocalLog::new(
            dir,
            topic_partition,
            config,
            loaded.segments,
            loaded.recovery_point,
            loaded.next_offset,
            now_ms,
        );
        let mut log = UnifiedLog {
            local_log,
            log_start_offset: loaded.log_start_offset,
            high_watermark: LogOffsetMetadata {
                message_offset: 0,
                segment_base_offset: 0,
                relative_position_in_segment: 0,
            },
            leader_epoch_cache,
            producer_state,
        };
        log.update_log_end_offset(loaded.next_offset);
        log.leader_epoch_cache
            .truncate_from_end(loaded.next_offset)?;
        log.leader_epoch_cache
            .truncate_from_start(log.log_start_offset)?;
        let start = log.log_start_offset;
        log.high_watermark = log.convert_to_offset_metadata(start)?;
        Ok(log)
    }

    pub fn dir(&self) -> &Path {
        self.local_log.dir()
    }

    /// Renames the log's directory to `new_dir`, its segments' files following (Kafka's
    /// `renameDir` without reinitializing: for a log being deleted).
    pub fn rename_dir(&mut self, new_dir: PathBuf) -> Result<(), StorageError> {
        self.local_log.rename_dir(new_dir)
    }

    pub fn topic_partition(&self) -> &TopicPartition {
        self.local_log.topic_partition()
    }

    pub fn config(&self) -> &LogConfig {
        self.local_log.config()
    }

    /// Replaces the config (an AlterConfigs); takes effect from the next append or roll check.
    pub fn update_config(&mut self, config: LogConfig) {
        self.local_log.update_config(config);
    }

    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    pub fn log_end_offset(&self) -> i64 {
        self.local_log.log_end_offset()
    }

    pub fn high_watermark(&self) -> i64 {
        self.high_watermark.message_offset
    }

    pub fn recovery_point(&self) -> i64 {
        self.local_log.recovery_point()
    }

    /// Kafka's `maybeAssignEpochStartOffset`: records that `epoch` starts at `start_offset`
    /// (a leader's new epoch at its log end), writing `leader-epoch-checkpoint` when it changed.
    pub fn maybe_assign_epoch_start_offset(
        &mut self,
        epoch: i32,
        start_offset: i64,
    ) -> Result<(), StorageError> {
        self.leader_epoch_cache.assign(epoch, start_offset)
    }

    pub fn leader_epoch_cache(&self) -> &LeaderEpochFileCache {
        &self.leader_epoch_cache
    }

    /// The log's size: the sum of its segments' sizes.
    pub fn size(&self) -> u64 {
        self.local_log.segments().size_in_bytes()
    }

    pub fn number_of_segments(&self) -> usize {
        self.local_log.segments().number_of_segments()
    }

    pub fn segment_base_offsets(&self) -> Vec<i64> {
        self.local_log.segments().base_offsets().collect()
    }

    fn active_segment(&self) -> Result<&LogSegment, StorageError> {
        self.local_log.active_segment()
    }

    fn active_segment_mut(&mut self) -> Result<&mut LogSegment, StorageError> {
        self.local_log.active_segment_mut()
    }

    /// The log end moves to `offset` (see [`LocalLog::update_log_end_offset`]), and the high
    /// watermark never stays above it.
    fn update_log_end_offset(&mut self, offset: i64) {
        self.local_log.update_log_end_offset(offset);
        if self.high_watermark.message_offset > offset {
            self.high_watermark = self.local_log.log_end_offset_metadata();
        }
    }

    /// Validates a produced batch (Kafka's `LogValidator`), assigns it offsets from the log end,
    /// stamps `leader_epoch` into it and appends it. The input is never modified: the batch (or
    /// the validator's rebuild for another codec) goes to the file as a patched copy of its
    /// 61-byte header and its records, in one gathering write, with no allocation on the way.
    pub fn append_as_leader(
        &mut self,
        records: &[u8],
        leader_epoch: i32,
        origin: AppendOrigin,
        now_ms: i64,
    ) -> Result<LogAppendInfo, StorageError> {
        self.append_as_leader_verified(records, leader_epoch, origin, None, now_ms)
    }

    /// [`append_as_leader`](Self::append_as_leader) with transaction verification on
    /// (KIP-890): with `verification` set, a transactional batch that opens its producer's
    /// transaction here is refused (INVALID_TXN_STATE) unless it is the producer's current
    /// guard (see [`maybe_start_transaction_verification`](Self::maybe_start_transaction_verification)).
    pub fn append_as_leader_verified(
        &mut self,
        records: &[u8],
        leader_epoch: i32,
        origin: AppendOrigin,
        verification: Option<VerificationGuard>,
        now_ms: i64,
    ) -> Result<LogAppendInfo, StorageError> {
        let ctx = ValidationContext {
            origin,
            compacted: self.config().cleanup_policy.compact,
            timestamp_type: self.config().message_timestamp_type,
            now_ms,
            timestamp_before_max_ms: self.config().timestamp_before_max_ms(),
            timestamp_after_max_ms: self.config().timestamp_after_max_ms(),
            max_message_bytes: usize::try_from(self.config().max_message_bytes).unwrap_or(0),
            max_decompressed_bytes: super::log_segment::MAX_DECOMPRESSED_BATCH_BYTES,
            target_compression: self.config().target_compression(),
        };
        let validated = log_validator::validate_records(records, &ctx)?;
        // The leader's validation admits exactly one batch (Kafka's LogValidator); followers
        // append through `append_as_follower`.
        let b = match validated.batches.as_slice() {
            [] => return Ok(self.nothing_appended()),
            [b] => b,
            _ => {
                return Err(StorageError::InvalidArgument {
                    reason: format!(
                        "a leader append takes one batch, not {}",
                        validated.batches.len()
                    ),
                });
            }
        };
        self.check_batch_fits_segment(b.size)?;
        // Idempotent batches only: the plain path (producer id -1) costs one comparison here.
        let has_producer_id = b.header.has_producer_id();
        let marker = if has_producer_id {
            producer_state::end_txn_marker(b.bytes(records), &b.header)?
        } else {
            None
        };
        if has_producer_id
            && let LeaderBatchCheck::Duplicate(duplicate) =
                self.check_producer_batch(&b.header, origin, marker, verification)?
        {
            return Ok(self.duplicate_append_info(&duplicate));
        }
        let log_append_time = self.config().message_timestamp_type == TimestampType::LogAppendTime;
        let first_offset = self.log_end_offset();
        let bytes = b.bytes(records);
        let (header_bytes, body) = bytes.split_at(RECORD_BATCH_OVERHEAD);
        let mut header = [0u8; RECORD_BATCH_OVERHEAD];
        header.copy_from_slice(header_bytes);
        batch::set_base_offset(&mut header, first_offset);
        batch::set_partition_leader_epoch(&mut header, leader_epoch);
        // Kafka's `setMaxTimestamp`: the stored max timestamp is the validator's (the broker's
        // clock under LogAppendTime); the CRC is recomputed only if it changes.
        let max_timestamp = b.max_timestamp;
        batch::set_max_timestamp(
            &mut header,
            body,
            self.config().message_timestamp_type,
            max_timestamp,
        );
        let last_offset = first_offset + i64::from(b.header.last_offset_delta);
        let shallow_offset_of_max_timestamp = last_offset;
        let next_offset = last_offset + 1;
        let slices = [IoSlice::new(&header), IoSlice::new(body)];
        self.maybe_roll(b.size, max_timestamp, first_offset, last_offset, now_ms)?;
        self.active_segment_mut()?.append(
            last_offset,
            max_timestamp,
            shallow_offset_of_max_timestamp,
            &slices,
        )?;
        if leader_epoch >= 0 {
            self.leader_epoch_cache.assign(leader_epoch, first_offset)?;
        }
        if has_producer_id {
            let mut header = b.header;
            header.max_timestamp = max_timestamp;
            if let Some(completed) =
                self.producer_state
                    .apply_batch(&header, first_offset, last_offset, marker)
            {
                self.complete_txn(&completed)?;
            }
        }
        self.producer_state.update_map_end_offset(next_offset);
        self.update_log_end_offset(next_offset);
        self.after_append(validated.records_count, now_ms)?;
        Ok(LogAppendInfo {
            first_offset,
            last_offset,
            max_timestamp,
            shallow_offset_of_max_timestamp,
            log_append_time: if log_append_time {
                now_ms
            } else {
                NO_TIMESTAMP
            },
            log_start_offset: self.log_start_offset,
            records_count: validated.records_count,
            valid_bytes: validated.total_size,
        })
    }

    /// The outcome of an append with no batch in it.
    fn nothing_appended(&self) -> LogAppendInfo {
        let next = self.log_end_offset();
        LogAppendInfo {
            first_offset: next,
            last_offset: next - 1,
            max_timestamp: NO_TIMESTAMP,
            shallow_offset_of_max_timestamp: next - 1,
            log_append_time: NO_TIMESTAMP,
            log_start_offset: self.log_start_offset,
            records_count: 0,
            valid_bytes: 0,
        }
    }

    fn check_batch_fits_segment(&self, size: usize) -> Result<(), StorageError> {
        if size > usize::try_from(self.config().segment_bytes).unwrap_or(0) {
            return Err(StorageError::RecordBatchTooLarge {
                topic_partition: self.topic_partition().clone(),
                size,
                segment_bytes: self.config().segment_bytes,
            });
        }
        Ok(())
    }

    /// `flush.messages`: fsync once that many messages are unflushed (never, by default). As in
    /// Kafka's `UnifiedLog.append`, `flush.ms` is not checked here but by the log manager's
    /// `kafka-log-flusher` task ([`time_flush`](Self::time_flush)).
    fn after_append(&mut self, records: usize, now_ms: i64) -> Result<(), StorageError> {
        if self.local_log.add_unflushed_messages(records) >= self.config().flush_messages {
            let end = self.log_end_offset();
            self.flush(end, now_ms)?;
        }
        Ok(())
    }

    fn maybe_roll(
        &mut self,
        messages_size: usize,
        max_timestamp_in_messages: i64,
        first_offset: i64,
        max_offset_in_messages: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        let params = self.roll_params(
            messages_size,
            max_timestamp_in_messages,
            max_offset_in_messages,
            now_ms,
        );
        if self.active_segment_mut()?.should_roll(&params)? {
            self.roll(Some(first_offset), now_ms)?;
        }
        Ok(())
    }

    /// What decides whether an append of `messages_size` bytes rolls the active segment.
    fn roll_params(
        &self,
        messages_size: usize,
        max_timestamp_in_messages: i64,
        max_offset_in_messages: i64,
        now_ms: i64,
    ) -> RollParams {
        RollParams {
            max_segment_ms: self.config().segment_ms,
            max_segment_bytes: self.config().segment_bytes,
            max_timestamp_in_messages,
            max_offset_in_messages,
            messages_size,
            now_ms,
        }
    }

    /// Starts a new active segment at `max(expected_next_offset, log_end_offset)` (see
    /// `LocalLog::roll`), with a producer snapshot at its base, and leaves the segments below
    /// it for a background fsync.
    pub fn roll(
        &mut self,
        expected_next_offset: Option<i64>,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        let new_offset = self.local_log.roll(expected_next_offset, now_ms)?;
        // A snapshot at the new base lets recovery start from this segment (Kafka's roll);
        // it is fsynced with the rolled segments, outside the log's lock.
        self.producer_state.update_map_end_offset(new_offset);
        self.producer_state.take_snapshot(false)?;
        self.local_log.set_pending_flush_offset(new_offset);
        let end = self.log_end_offset();
        self.update_log_end_offset(end);
        Ok(())
    }

    /// fsyncs every segment that holds offsets below `offset` and moves the recovery point
    /// there.
    pub fn flush(&mut self, offset: i64, now_ms: i64) -> Result<(), StorageError> {
        self.local_log.flush(offset, now_ms)
    }

    /// What a background flush after a roll must fsync: the segments from the recovery point up
    /// to the newest roll. `None` when nothing is pending.
    pub fn pending_flush(&self) -> Option<PendingFlush> {
        self.local_log
            .pending_flush_offset()
            .map(|up_to| self.flush_up_to(up_to))
    }

    /// Kafka's `flushDirtyLogs` check of this log: when `flush.ms` has passed since the last
    /// flush, what fsyncs it up to its end (the active segment too). `None` when not due.
    pub fn time_flush(&self, now_ms: i64) -> Option<PendingFlush> {
        self.local_log
            .flush_due(now_ms)
            .then(|| self.flush_up_to(self.log_end_offset()))
    }

    /// The files holding offsets from the recovery point up to `up_to`, and the producer
    /// snapshot at `up_to` if there is one (a roll's).
    fn flush_up_to(&self, up_to: i64) -> PendingFlush {
        let mut flush = self.local_log.flush_up_to(up_to);
        if let Some(snapshot) = self.producer_state.snapshot_file(up_to) {
            flush.push_path(snapshot.to_path_buf());
        }
        flush
    }

    /// Records that `flush` was executed at `now_ms` (Kafka's `markFlushed`): the recovery
    /// point moves up to it (never past the log end, which a truncation meanwhile may have
    /// lowered), and `flush.ms` counts from now.
    pub fn complete_flush(&mut self, flush: &PendingFlush, now_ms: i64) {
        self.local_log.mark_flushed(flush, now_ms);
    }

    /// Where `offset` is in the log; the log end maps to the active segment's end.
    pub fn convert_to_offset_metadata(
        &self,
        offset: i64,
    ) -> Result<LogOffsetMetadata, StorageError> {
        self.local_log.convert_to_offset_metadata(offset)
    }

    /// Moves the high watermark to `offset`, clamped to `[log_start_offset, log_end_offset]`.
    pub fn update_high_watermark(&mut self, offset: i64) -> Result<i64, StorageError> {
        let clamped = offset.clamp(self.log_start_offset, self.log_end_offset());
        self.high_watermark = self.convert_to_offset_metadata(clamped)?;
        self.producer_state.on_high_watermark_updated(clamped);
        Ok(clamped)
    }

    /// Kafka's `lastStableOffset`: the first offset of the earliest transaction still open or
    /// not yet replicated, if it is below the high watermark; else the high watermark. A
    /// read_committed consumer reads below it.
    pub fn last_stable_offset(&self) -> i64 {
        let high_watermark = self.high_watermark();
        self.producer_state
            .first_unstable_offset()
            .filter(|first| *first < high_watermark)
            .unwrap_or(high_watermark)
    }

    /// A marker in the active segment ended a transaction: an aborted one is indexed with the
    /// partition's last stable offset, then it waits for the high watermark.
    fn complete_txn(&mut self, completed: &CompletedTxn) -> Result<(), StorageError> {
        let last_stable_offset = self.producer_state.last_stable_offset(completed);
        self.active_segment_mut()?
            .update_txn_index(completed, last_stable_offset)?;
        self.producer_state.complete_txn(completed);
        Ok(())
    }

    /// Removes the `.deleted` files whose delay has passed.
    pub fn delete_due_files(&mut self, now_ms: i64) -> Result<usize, StorageError> {
        self.local_log.delete_due_files(now_ms)
    }

    /// Closes the log cleanly: every segment's final time-index entry and trimmed indexes,
    /// pending `.deleted` files removed, data fsynced. The log takes no more calls after it.
    pub fn close(&mut self, now_ms: i64) -> Result<(), StorageError> {
        let end = self.log_end_offset();
        self.flush(end, now_ms)?;
        // A snapshot at the log end: the next start loads it instead of scanning the log.
        self.producer_state.take_snapshot(true)?;
        self.delete_due_files(i64::MAX)?;
        self.local_log.close()
    }
}
