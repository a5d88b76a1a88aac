//! A partition's local files (Kafka 3.9's `LocalLog`): the partition directory, its segments
//! ([`LogSegments`]), the roll to a new active segment, the recovery point and the flushes that
//! move it, the log end offset, truncation of the segment files, and the `.deleted` files
//! waiting for `file.delete.delay.ms`.
//!
//! It knows nothing of replication or producers: the high watermark, the log start offset, the
//! leader-epoch cache and the producer state are [`UnifiedLog`](super::unified_log::UnifiedLog)'s,
//! which owns a `LocalLog` and calls in here for file work. Like `UnifiedLog`, it is not
//! synchronised; the partition's lock covers both.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cluster::TopicPartition;

use super::StorageError;
use super::log_config::LogConfig;
use super::log_file_cache::{LOG_FILES, LogFile};
use super::log_segment::{LogOffsetMetadata, LogSegment};
use super::log_segments::LogSegments;

/// A segment renamed `.deleted`, to be removed once `due_ms` passes.
#[derive(Debug)]
struct PendingDelete {
    due_ms: i64,
    segment: LogSegment,
}

/// Segments to fsync outside the log's lock, and the recovery point that fsync earns.
#[derive(Debug)]
pub struct PendingFlush {
    pub up_to: i64,
    log_files: Vec<Arc<LogFile>>,
    index_paths: Vec<PathBuf>,
}

impl PendingFlush {
    /// fsyncs the segments' files. Files deleted meanwhile are skipped: a `.log` whose
    /// descriptor the cache had closed cannot be opened again, and needs no flush.
    pub fn execute(&self) -> Result<(), StorageError> {
        for handle in &self.log_files {
            match handle.file() {
                Ok(file) => file
                    .sync_data()
                    .map_err(|e| StorageError::io("segment being flushed", e))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(StorageError::io("segment being flushed", e)),
            }
        }
        for path in &self.index_paths {
            match LOG_FILES.open_with_room(|| std::fs::File::open(path)) {
                Ok(file) => file.sync_data().map_err(|e| StorageError::io(path, e))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(StorageError::io(path, e)),
            }
        }
        Ok(())
    }

    /// Adds a file beside the segments' (a producer snapshot) to fsync by path.
    pub(crate) fn push_path(&mut self, path: PathBuf) {
        self.index_paths.push(path);
    }
}

/// One partition's local files.
///
/// Invariants, between calls: `segments` is never empty (until [`close`](Self::close)); the
/// last segment is the active one; `log_end_offset` is the next offset to assign and points
/// into the active segment at its size; `recovery_point ≤ log_end_offset`, and every segment
/// below the recovery point is fsynced.
#[derive(Debug)]
pub(crate) struct LocalLog {
    dir: PathBuf,
    topic_partition: TopicPartition,
    config: LogConfig,
    segments: LogSegments,
    recovery_point: i64,
    /// Kafka's `nextOffsetMetadata`.
    log_end_offset: LogOffsetMetadata,
    pending_deletes: Vec<PendingDelete>,
    unflushed_messages: i64,
    last_flush_ms: i64,
    /// Set at roll to the new segment's base: the segments below it are complete and are
    /// fsynced in the background (Kafka's `flushUptoOffsetExclusive` after a roll).
    pending_flush_offset: Option<i64>,
}

impl LocalLog {
    /// A log over `segments` (loaded by `log_loader`, at least one), ending at `next_offset`.
    pub(crate) fn new(
        dir: PathBuf,
        topic_partition: TopicPartition,
        config: LogConfig,
        segments: LogSegments,
        recovery_point: i64,
        next_offset: i64,
        now_ms: i64,
    ) -> Self {
        let mut log = LocalLog {
            dir,
            topic_partition,
            config,
            segments,
            recovery_point,
            log_end_offset: LogOffsetMetadata {
                message_offset: 0,
                segment_base_offset: 0,
                relative_position_in_segment: 0,
            },
            pending_deletes: Vec::new(),
            unflushed_messages: 0,
            last_flush_ms: now_ms,
            pending_flush_offset: None,
        };
        log.update_log_end_offset(next_offset);
        log
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn topic_partition(&self) -> &TopicPartition {
        &self.topic_partition
    }

    pub(crate) fn config(&self) -> &LogConfig {
        &self.config
    }

    pub(crate) fn update_config(&mut self, config: LogConfig) {
        self.config = config;
    }

    /// Renames the partition's directory to `new_dir` and points every segment's files there
    /// (Kafka's `LocalLog.renameDir`), so that a read of a file the cache closed, by a fetch
    /// racing the log's deletion say, opens it under its new name.
    pub(crate) fn rename_dir(&mut self, new_dir: PathBuf) -> Result<(), StorageError> {
        std::fs::rename(&self.dir, &new_dir).map_err(|e| StorageError::io(&self.dir, e))?;
        for segment in self.segments.values_mut() {
            segment.update_parent_dir(&new_dir);
        }
        self.dir = new_dir;
        Ok(())
    }

    pub(crate) fn segments(&self) -> &LogSegments {
        &self.segments
    }

    /// The segments, for work on them in place (timestamp lookups, the cleaner's swap). A
    /// caller that takes segments out leaves at least the active one.
    pub(crate) fn segments_mut(&mut self) -> &mut LogSegments {
        &mut self.segments
    }

    pub(crate) fn recovery_point(&self) -> i64 {
        self.recovery_point
    }

    pub(crate) fn log_end_offset(&self) -> i64 {
        self.log_end_offset.message_offset
    }

    /// Kafka's `logEndOffsetMetadata`: where the next offset goes.
    pub(crate) fn log_end_offset_metadata(&self) -> LogOffsetMetadata {
        self.log_end_offset
    }

    pub(crate) fn active_segment(&self) -> Result<&LogSegment, StorageError> {
        self.segments
            .last_segment()
            .ok_or_else(|| StorageError::NoSegments {
                dir: self.dir.clone(),
            })
    }

    pub(crate) fn active_segment_mut(&mut self) -> Result<&mut LogSegment, StorageError> {
        let dir = &self.dir;
        self.segments
            .last_segment_mut()
            .ok_or_else(|| StorageError::NoSegments { dir: dir.clone() })
    }

    /// Kafka's `updateLogEndOffset`: the log end moves to `offset` in the active segment, and
    /// the recovery point never stays above it.
    pub(crate) fn update_log_end_offset(&mut self, offset: i64) {
        if let Some(active) = self.segments.last_segment() {
            self.log_end_offset = LogOffsetMetadata {
                message_offset: offset,
                segment_base_offset: active.base_offset(),
                relative_position_in_segment: active.size(),
            };
        }
        if self.recovery_point > offset {
            self.recovery_point = offset;
        }
    }

    /// Counts `records` appended and not yet fsynced; returns how many are unflushed now.
    pub(crate) fn add_unflushed_messages(&mut self, records: usize) -> i64 {
        self.unflushed_messages = self.unflushed_messages.saturating_add(records as i64);
        self.unflushed_messages
    }

    /// Starts a new active segment at `max(expected_next_offset, log_end_offset)` and returns
    /// its base. The old one gets its final time-index entry and trimmed indexes. An empty
    /// active segment at the same base offset is replaced rather than duplicated.
    pub(crate) fn roll(
        &mut self,
        expected_next_offset: Option<i64>,
        now_ms: i64,
    ) -> Result<i64, StorageError> {
        let new_offset = expected_next_offset.unwrap_or(0).max(self.log_end_offset());
        if let Some(existing) = self.segments.get(new_offset) {
            if existing.size() == 0 && self.segments.base_offsets().next_back() == Some(new_offset)
            {
                if let Some(empty) = self.segments.remove(new_offset) {
                    empty.delete_files()?;
                }
            } else {
                return Err(StorageError::SegmentExists {
                    dir: self.dir.clone(),
                    base_offset: new_offset,
                });
            }
        } else if let Some(active) = self.segments.last_segment_mut() {
            active.on_become_inactive_segment()?;
        }
        // Leftover files at the new base (from a crash between create and use) are stale.
        super::log_segment::delete_if_exists(&[
            super::file_names::log_file(&self.dir, new_offset),
            super::file_names::offset_index_file(&self.dir, new_offset),
            super::file_names::time_index_file(&self.dir, new_offset),
        ])?;
        let jitter = self.roll_jitter_ms();
        let segment = LogSegment::open(&self.dir, new_offset, &self.config, true, jitter, now_ms)?;
        self.segments.add(segment);
        Ok(new_offset)
    }

    /// Records that the segments below `offset` (a roll's new base) await a background fsync.
    pub(crate) fn set_pending_flush_offset(&mut self, offset: i64) {
        self.pending_flush_offset = Some(offset);
    }

    fn roll_jitter_ms(&self) -> i64 {
        let max = self.config.segment_jitter_ms.min(self.config.segment_ms);
        if max <= 0 {
            0
        } else {
            rand::random_range(0..max)
        }
    }

    /// fsyncs every segment that holds offsets below `offset` and moves the recovery point
    /// there.
    pub(crate) fn flush(&mut self, offset: i64, now_ms: i64) -> Result<(), StorageError> {
        if offset <= self.recovery_point {
            return Ok(());
        }
        for segment in self.segments.values_in(self.recovery_point, offset) {
            segment.flush()?;
        }
        self.recovery_point = offset.min(self.log_end_offset());
        self.unflushed_messages = 0;
        self.last_flush_ms = now_ms;
        Ok(())
    }

    /// The offset up to which a roll left segments to fsync in the background, if any.
    pub(crate) fn pending_flush_offset(&self) -> Option<i64> {
        self.pending_flush_offset
    }

    /// Whether `flush.ms` has passed since the last flush.
    pub(crate) fn flush_due(&self, now_ms: i64) -> bool {
        now_ms.saturating_sub(self.last_flush_ms) >= self.config.flush_ms
    }

    /// The files holding offsets from the recovery point up to `up_to`.
    pub(crate) fn flush_up_to(&self, up_to: i64) -> PendingFlush {
        let mut flush = PendingFlush {
            up_to,
            log_files: Vec::new(),
            index_paths: Vec::new(),
        };
        for segment in self.segments.values_in(self.recovery_point, up_to) {
            flush.log_files.push(segment.log().file_handle());
            flush
                .index_paths
                .push(segment.offset_index().path().to_path_buf());
            flush
                .index_paths
                .push(segment.time_index().path().to_path_buf());
        }
        flush
    }

    /// Kafka's `markFlushed`: `flush` was executed at `now_ms`, so the recovery point moves up
    /// to it (never past the log end, which a truncation meanwhile may have lowered), and
    /// `flush.ms` counts from now.
    pub(crate) fn mark_flushed(&mut self, flush: &PendingFlush, now_ms: i64) {
        let up_to = flush.up_to.min(self.log_end_offset());
        if up_to > self.recovery_point {
            self.recovery_point = up_to;
        }
        if self.recovery_point == self.log_end_offset() {
            self.unflushed_messages = 0;
        }
        self.last_flush_ms = self.last_flush_ms.max(now_ms);
        if self
            .pending_flush_offset
            .is_some_and(|pending| pending <= flush.up_to)
        {
            self.pending_flush_offset = None;
        }
    }

    /// Kafka's `convertToOffsetMetadataOrThrow`: where `offset` is in the log; the log end maps
    /// to the active segment's end.
    pub(crate) fn convert_to_offset_metadata(
        &self,
        offset: i64,
    ) -> Result<LogOffsetMetadata, StorageError> {
        if offset >= self.log_end_offset() {
            return Ok(self.log_end_offset);
        }
        let segment =
            self.segments
                .values_from(offset)
                .next()
                .ok_or_else(|| StorageError::NoSegments {
                    dir: self.dir.clone(),
                })?;
        let position = segment
            .translate_offset(offset, 0)?
            .map_or(segment.size(), |p| p.position);
        Ok(LogOffsetMetadata {
            message_offset: offset,
            segment_base_offset: segment.base_offset(),
            relative_position_in_segment: position,
        })
    }

    /// Kafka's `truncateTo` of the files: deletes the segments above `target_offset`, cuts the
    /// one holding it, and moves the log end to the offset after what is left, which it
    /// returns. The caller checked that `target_offset` lies in the log.
    pub(crate) fn truncate_to(
        &mut self,
        target_offset: i64,
        now_ms: i64,
    ) -> Result<i64, StorageError> {
        let doomed: Vec<i64> = self
            .segments
            .higher_segments(target_offset)
            .map(LogSegment::base_offset)
            .collect();
        for base in doomed {
            if let Some(segment) = self.segments.remove(base) {
                segment.delete_files()?;
            }
        }
        let active = self.active_segment_mut()?;
        active.truncate_to(target_offset, now_ms)?;
        active.resize_indexes()?;
        let next = active.read_next_offset()?;
        self.update_log_end_offset(next);
        Ok(next)
    }

    /// Kafka's `truncateFullyAndStartAt` of the files: deletes every segment and starts an
    /// empty one at `new_offset`, which becomes the recovery point and the log end.
    pub(crate) fn truncate_fully_and_start_at(
        &mut self,
        new_offset: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        for segment in self.segments.clear() {
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
        self.segments.add(segment);
        self.recovery_point = new_offset;
        self.update_log_end_offset(new_offset);
        Ok(())
    }

    /// Schedules a segment's files for deletion: renamed `.deleted` now, removed after
    /// `file.delete.delay.ms` by [`delete_due_files`](Self::delete_due_files).
    pub(crate) fn schedule_segment_deletion(
        &mut self,
        mut segment: LogSegment,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        segment.rename_to_deleted()?;
        self.push_pending_delete(segment, now_ms);
        Ok(())
    }

    /// Queues a segment whose files are already renamed `.deleted` for removal after
    /// `file.delete.delay.ms` (the cleaner's swap renames them one by one).
    pub(crate) fn push_pending_delete(&mut self, segment: LogSegment, now_ms: i64) {
        self.pending_deletes.push(PendingDelete {
            due_ms: now_ms.saturating_add(self.config.file_delete_delay_ms),
            segment,
        });
    }

    /// Removes the `.deleted` files whose delay has passed.
    pub(crate) fn delete_due_files(&mut self, now_ms: i64) -> Result<usize, StorageError> {
        let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending_deletes)
            .into_iter()
            .partition(|p| p.due_ms <= now_ms);
        self.pending_deletes = waiting;
        let count = due.len();
        for pending in due {
            pending.segment.delete_files()?;
        }
        Ok(count)
    }

    /// Closes every segment (final time-index entries, trimmed indexes). Closed segments leave
    /// the log: any later call answers NoSegments rather than appending to a trimmed index.
    pub(crate) fn close(&mut self) -> Result<(), StorageError> {
        for segment in self.segments.clear() {
            segment.close()?;
        }
        Ok(())
    }
}
