//! Truncation of a partition log: a follower cutting its log back to the leader's
//! (`truncate_to`), a replica starting over at a new offset (`truncate_fully_and_start_at`),
//! and moving the log start offset forward (DeleteRecords, retention).

use super::UnifiedLog;
use crate::storage::StorageError;
use crate::storage::log_segment::LogSegment;

impl UnifiedLog {
    /// Removes everything at and above `target_offset` (a follower truncating to the leader).
    /// Returns whether anything was removed.
    pub fn truncate_to(&mut self, target_offset: i64, now_ms: i64) -> Result<bool, StorageError> {
        if target_offset < 0 {
            return Err(StorageError::InvalidTruncation {
                offset: target_offset,
            });
        }
        if target_offset >= self.log_end_offset() {
            return Ok(false);
        }
        let first_base = self.segments.keys().next().copied().unwrap_or(0);
        if first_base > target_offset {
            self.truncate_fully_and_start_at(target_offset, now_ms)?;
            return Ok(true);
        }
        let doomed: Vec<i64> = self
            .segments
            .range(target_offset + 1..)
            .map(|(b, _)| *b)
            .collect();
        for base in doomed {
            if let Some(segment) = self.segments.remove(&base) {
                segment.delete_files()?;
            }
        }
        let active = self.active_segment_mut()?;
        active.truncate_to(target_offset, now_ms)?;
        active.resize_indexes()?;
        let next = active.read_next_offset()?;
        self.leader_epoch_cache.truncate_from_end(next)?;
        self.log_start_offset = self.log_start_offset.min(next);
        self.update_log_end_offset(next);
        self.rebuild_producer_state_after_truncation(now_ms)?;
        Ok(true)
    }

    /// Deletes every segment and starts an empty log at `new_offset`.
    pub fn truncate_fully_and_start_at(
        &mut self,
        new_offset: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        for (_, segment) in std::mem::take(&mut self.segments) {
            segment.delete_files()?;
        }
        let segment = LogSegment::open(
            &self.dir,
            new_offset,
            &self.config,
            true,
            self.roll_jitter_ms(),
            now_ms,
        )?;
        self.segments.insert(new_offset, segment);
        self.leader_epoch_cache.clear_and_flush()?;
        self.producer_state
            .truncate_fully_and_start_at(new_offset)?;
        self.log_start_offset = new_offset;
        self.recovery_point = new_offset;
        self.update_log_end_offset(new_offset);
        self.high_watermark = self.log_end_offset;
        Ok(())
    }

    /// Raises the log start offset (DeleteRecords, or retention having deleted segments);
    /// never above the high watermark.
    pub fn maybe_increment_log_start_offset(
        &mut self,
        new_log_start_offset: i64,
    ) -> Result<bool, StorageError> {
        if new_log_start_offset > self.high_watermark() {
            return Err(StorageError::OffsetOutOfRange {
                topic_partition: self.topic_partition.clone(),
                offset: new_log_start_offset,
                log_start_offset: self.log_start_offset,
                log_end_offset: self.log_end_offset(),
            });
        }
        if new_log_start_offset <= self.log_start_offset {
            return Ok(false);
        }
        self.log_start_offset = new_log_start_offset;
        self.leader_epoch_cache
            .truncate_from_start(new_log_start_offset)?;
        self.producer_state
            .on_log_start_offset_incremented(new_log_start_offset);
        Ok(true)
    }
}
