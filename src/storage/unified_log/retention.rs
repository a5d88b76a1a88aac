//! Deletion of old segments (Kafka's `UnifiedLog.deleteOldSegments`): by `retention.ms`, by
//! `retention.bytes` and below the log start offset.
//!
//! Segments are considered oldest first and the scan stops at the first one that does not
//! qualify, so retention only ever removes a prefix of the log. A segment qualifies only when
//! all of it is below the high watermark, so nothing a consumer has not been allowed to read
//! is deleted. The active segment can be deleted too; only an empty last segment is exempt,
//! and when every segment goes, a new empty one is rolled first so that the log keeps its end.

use super::UnifiedLog;
use crate::storage::StorageError;
use crate::storage::log_segment::LogSegment;

/// Why a segment was deleted; logged with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeletionReason {
    RetentionMs,
    RetentionBytes,
    LogStartOffsetBreach,
}

impl UnifiedLog {
    /// Applies every retention rule of the log's config; returns how many segments went. Their
    /// files are renamed `.deleted` and removed after `file.delete.delay.ms`.
    pub fn delete_old_segments(&mut self, now_ms: i64) -> Result<usize, StorageError> {
        let mut deleted = self.delete_log_start_offset_breached_segments(now_ms)?;
        if self.config().cleanup_policy.delete {
            deleted += self.delete_retention_size_breached_segments(now_ms)?;
            deleted += self.delete_retention_ms_breached_segments(now_ms)?;
        }
        Ok(deleted)
    }

    fn delete_retention_ms_breached_segments(
        &mut self,
        now_ms: i64,
    ) -> Result<usize, StorageError> {
        let retention_ms = self.config().retention_ms;
        if retention_ms < 0 {
            return Ok(0);
        }
        self.delete_while(DeletionReason::RetentionMs, now_ms, |segment, _| {
            Ok(now_ms.saturating_sub(segment.largest_timestamp()?) > retention_ms)
        })
    }

    fn delete_retention_size_breached_segments(
        &mut self,
        now_ms: i64,
    ) -> Result<usize, StorageError> {
        let retention_bytes = self.config().retention_bytes;
        let size = i64::try_from(self.size()).unwrap_or(i64::MAX);
        if retention_bytes < 0 || size < retention_bytes {
            return Ok(0);
        }
        let mut diff = size - retention_bytes;
        self.delete_while(DeletionReason::RetentionBytes, now_ms, |segment, _| {
            let segment_size = i64::try_from(segment.size()).unwrap_or(i64::MAX);
            if diff - segment_size >= 0 {
                diff -= segment_size;
                Ok(true)
            } else {
                Ok(false)
            }
        })
    }

    fn delete_log_start_offset_breached_segments(
        &mut self,
        now_ms: i64,
    ) -> Result<usize, StorageError> {
        let log_start_offset = self.log_start_offset;
        self.delete_while(
            DeletionReason::LogStartOffsetBreach,
            now_ms,
            |_, next_base| Ok(next_base.is_some_and(|next| next <= log_start_offset)),
        )
    }

    /// Deletes the longest prefix of segments that are wholly below the high watermark and
    /// satisfy `predicate(segment, next segment's base)`.
    fn delete_while(
        &mut self,
        reason: DeletionReason,
        now_ms: i64,
        mut predicate: impl FnMut(&mut LogSegment, Option<i64>) -> Result<bool, StorageError>,
    ) -> Result<usize, StorageError> {
        let high_watermark = self.high_watermark();
        let log_end_offset = self.log_end_offset();
        let bases: Vec<i64> = self.local_log.segments().base_offsets().collect();
        let mut deletable = Vec::new();
        for (i, base) in bases.iter().enumerate() {
            let next_base = bases.get(i + 1).copied();
            let Some(segment) = self.local_log.segments_mut().get_mut(*base) else {
                break;
            };
            let (upper_bound, is_last_and_empty) = match next_base {
                Some(next) => (next, false),
                None => (log_end_offset, segment.size() == 0),
            };
            if high_watermark >= upper_bound && !is_last_and_empty && predicate(segment, next_base)?
            {
                deletable.push(*base);
            } else {
                break;
            }
        }
        if deletable.is_empty() {
            return Ok(0);
        }
        if deletable.len() == self.local_log.segments().number_of_segments() {
            // Keep the log's end: a fresh empty active segment takes over.
            self.roll(None, now_ms)?;
        }
        for base in &deletable {
            if let Some(segment) = self.local_log.segments_mut().remove(*base) {
                tracing::info!(
                    topic_partition = %self.topic_partition(),
                    base_offset = base,
                    size = segment.size(),
                    ?reason,
                    "deleting segment"
                );
                self.local_log.schedule_segment_deletion(segment, now_ms)?;
                // Kafka's `deleteProducerSnapshots`: the snapshot at the segment's base goes
                // with it.
                self.producer_state.remove_and_delete_snapshot(*base)?;
            }
        }
        let first_base = self
            .local_log
            .segments()
            .first_segment_base_offset()
            .unwrap_or(log_end_offset);
        if first_base > self.log_start_offset {
            self.log_start_offset = first_base;
            self.leader_epoch_cache.truncate_from_start(first_base)?;
            self.producer_state
                .on_log_start_offset_incremented(first_base);
        }
        Ok(deletable.len())
    }
}
