//! The producer state's side of `UnifiedLog`: the leader's checks and duplicate answers, the
//! expiration pass, snapshot retention after recovery-point checkpoints, and the rebuild after
//! a truncation. Kept out of `unified_log.rs`, which only calls in here; the state itself is
//! `crate::storage::producer_state`.

use crate::protocol::record::batch::RecordBatchHeader;
use crate::protocol::record::control::EndTxnMarker;

use super::{LogAppendInfo, UnifiedLog};
use crate::storage::StorageError;
use crate::storage::log_segment::LogSegment;
use crate::storage::log_validator::AppendOrigin;
use crate::storage::producer_state::rebuild::rebuild_producer_state;
use crate::storage::producer_state::{
    BatchMetadata, LeaderBatchCheck, ProducerStateManager, VerificationGuard,
};

impl UnifiedLog {
    /// The partition's producer state.
    pub fn producer_state(&self) -> &ProducerStateManager {
        &self.producer_state
    }

    /// The leader's checks of a batch with a producer id, before it gets offsets.
    pub(super) fn check_producer_batch(
        &self,
        header: &RecordBatchHeader,
        origin: AppendOrigin,
        marker: Option<EndTxnMarker>,
        verification: Option<VerificationGuard>,
    ) -> Result<LeaderBatchCheck, StorageError> {
        Ok(self.producer_state.check_leader_batch(
            header,
            self.log_end_offset(),
            origin,
            marker,
            verification,
        )?)
    }

    /// Kafka's `maybeStartTransactionVerification`: the sentinel when the producer's
    /// transaction is already open here (its coordinator knows of this partition), else the
    /// guard of its verification, made now if none is in progress.
    pub fn maybe_start_transaction_verification(
        &mut self,
        producer_id: i64,
        sequence: i32,
        epoch: i16,
        now_ms: i64,
    ) -> VerificationGuard {
        let ongoing = self
            .producer_state
            .last_entry(producer_id)
            .is_some_and(|e| e.current_txn_first_offset.is_some());
        if ongoing {
            return VerificationGuard::SENTINEL;
        }
        self.producer_state.maybe_create_verification_state_entry(
            producer_id,
            sequence,
            epoch,
            now_ms,
        )
    }

    /// What a leader answers for a retried batch: its original offsets. Kafka 3.9 also reports
    /// the original batch's max timestamp as the log append time (`UnifiedLog.append` sets it
    /// from the duplicate's `BatchMetadata.timestamp`), whatever the topic's timestamp type.
    pub(super) fn duplicate_append_info(&self, duplicate: &BatchMetadata) -> LogAppendInfo {
        LogAppendInfo {
            first_offset: duplicate.first_offset(),
            last_offset: duplicate.last_offset,
            max_timestamp: duplicate.timestamp,
            shallow_offset_of_max_timestamp: duplicate.last_offset,
            log_append_time: duplicate.timestamp,
            log_start_offset: self.log_start_offset,
            records_count: 0,
            valid_bytes: 0,
        }
    }

    /// Sets `producer.id.expiration.ms` and drops the producers already expired by it (Kafka
    /// filters them while loading a snapshot; a log is opened before the broker's setting is
    /// applied, so this does it right after).
    pub fn set_producer_id_expiration_ms(&mut self, ms: i64, now_ms: i64) {
        self.producer_state.set_producer_id_expiration_ms(ms);
        self.producer_state.remove_expired_producers(now_ms);
    }

    /// The periodic `producer.id.expiration.check.interval.ms` pass. Returns how many producers
    /// were forgotten.
    pub fn remove_expired_producers(&mut self, now_ms: i64) -> usize {
        self.producer_state.remove_expired_producers(now_ms)
    }

    /// `minSnapshotsOffsetToRetain`: snapshots of the last two segments are kept (a truncation
    /// into them needs no full rebuild), and none at or after the segment before the recovery
    /// point is deleted (recovery starts there).
    pub fn min_snapshots_offset_to_retain(&self) -> i64 {
        let lower = |offset: i64| {
            self.local_log
                .segments()
                .lower_segment(offset)
                .map(LogSegment::base_offset)
        };
        let active_base = self
            .local_log
            .segments()
            .last_segment()
            .map_or(0, LogSegment::base_offset);
        let two_segments_min_offset = lower(active_base).unwrap_or(active_base);
        let recovery_point = self.recovery_point();
        let recovery_point_offset = lower(recovery_point).unwrap_or(recovery_point);
        recovery_point_offset.min(two_segments_min_offset)
    }

    /// `deleteSnapshotsAfterRecoveryPointCheckpoint`: deletes the snapshots below
    /// [`min_snapshots_offset_to_retain`](Self::min_snapshots_offset_to_retain), which it
    /// returns.
    pub fn delete_snapshots_after_recovery_point_checkpoint(
        &mut self,
    ) -> Result<i64, StorageError> {
        let min = self.min_snapshots_offset_to_retain();
        self.producer_state.delete_snapshots_before(min)?;
        Ok(min)
    }

    /// After a truncation to `log_end_offset`: snapshots above it go and the state is reloaded
    /// and replayed up to it.
    pub(super) fn rebuild_producer_state_after_truncation(
        &mut self,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        let end = self.log_end_offset();
        let start = self.log_start_offset;
        rebuild_producer_state(
            &mut self.producer_state,
            self.local_log.segments(),
            start,
            end,
            false,
            now_ms,
        )
    }
}
