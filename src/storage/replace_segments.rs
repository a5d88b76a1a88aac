//! The read-only views of a log's segments the log cleaner works from without holding the
//! log's lock, and the protocol of swapping cleaned segments into a log (Kafka's
//! `UnifiedLog.replaceSegments` and `LocalLog.replaceSegments`), which
//! `unified_log/replace_segments.rs` carries out.
//!
//! The swap protocol, one file rename at a time:
//!
//! 1. The cleaner writes the new segments as `<base>.log.cleaned`, `.index.cleaned` and
//!    `.timeindex.cleaned` and fsyncs them (outside the log's lock).
//! 2. Under the lock, every file of every new segment is renamed `.cleaned` → `.swap`, the
//!    newest segment first. The replacement is committed once the last of them is `.swap`:
//!    before that, recovery deletes the `.cleaned` files and every `.swap` file at or above the
//!    lowest `.cleaned` offset, which leaves the old segments as they were.
//! 3. The old segments' files are renamed `.deleted` (removed after `file.delete.delay.ms`).
//! 4. The `.swap` files are renamed to their final names; the directory is fsynced.
//!
//! Recovery after a crash from step 2 on (`log_loader`) deletes every segment file whose offset
//! lies in `[lowest .swap base, highest .swap end)` and renames the `.swap` files, where a swap
//! segment's end is `max(next offset, base + 1)`. The cleaner makes that range cover every old
//! segment it replaces: when the cleaned data ends below the base of the last old segment, it
//! adds an empty segment at that base (see `log_cleaner::cleaner`). So at any crash point the
//! log is either wholly the old segments or wholly the new ones.
//!
//! Concurrency: the swap is refused (`CleaningAborted`) when any old segment is no longer the
//! one the cleaner read (deleted, truncated, or replaced by another file at the same base) or
//! has become the active segment. Appends only touch the active segment, which is never
//! cleaned; readers holding slices of an old segment keep reading its (renamed) file.

use std::path::PathBuf;

use crate::cluster::TopicPartition;

use super::file_records::FileRecords;
use super::log_config::LogConfig;
use super::transaction_index::AbortedTxn;

/// A segment as the cleaner sees it: a frozen view of its `.log` and the figures the cleaner
/// decides by. Valid as long as the segment is sealed (not the active one).
#[derive(Debug)]
pub struct SegmentView {
    pub base_offset: i64,
    /// The `.log` file, size frozen when the view was taken.
    pub records: FileRecords,
    /// Bytes of offset-index and time-index entries (Kafka's `sizeInBytes`), for grouping.
    pub offset_index_bytes: usize,
    pub time_index_bytes: usize,
    /// The largest record timestamp, or the file's mtime when it has none.
    pub largest_timestamp: i64,
    /// The first batch's max timestamp, `i64::MAX` when none.
    pub first_batch_timestamp: i64,
    pub last_modified_ms: i64,
    /// The segment's `.txnindex` entries: where the cleaner finds the aborted transactions of
    /// what it cleans.
    pub aborted_txns: Vec<AbortedTxn>,
}

impl SegmentView {
    pub fn size(&self) -> u64 {
        self.records.size_in_bytes()
    }
}

/// A log as the cleaner sees it at one moment: its offsets and every segment, the active one
/// last.
#[derive(Debug)]
pub struct LogSnapshot {
    pub topic_partition: TopicPartition,
    pub dir: PathBuf,
    pub config: LogConfig,
    pub log_start_offset: i64,
    pub log_end_offset: i64,
    /// Nothing at or above it is cleaned: an open transaction may still abort (Kafka cleans
    /// below the last stable offset, which is the high watermark when none is open).
    pub last_stable_offset: i64,
    pub segments: Vec<SegmentView>,
}

impl LogSnapshot {
    pub fn active_base_offset(&self) -> i64 {
        self.segments
            .last()
            .map_or(self.log_end_offset, |s| s.base_offset)
    }

    /// The segments holding offsets in `[from, to)`: from the one containing `from` (or the
    /// first) to the last whose base is below `to` (Kafka's `logSegments(from, to)`); none when
    /// `to <= from`.
    pub fn segments_in(&self, from: i64, to: i64) -> &[SegmentView] {
        if to <= from {
            return &[];
        }
        let start = self
            .segments
            .iter()
            .rposition(|s| s.base_offset <= from)
            .unwrap_or(0);
        let end = self
            .segments
            .iter()
            .position(|s| s.base_offset >= to)
            .unwrap_or(self.segments.len());
        self.segments.get(start..end.max(start)).unwrap_or(&[])
    }

    /// The sealed segments from the one holding `from` on (Kafka's `nonActiveLogSegmentsFrom`).
    pub fn non_active_segments_from(&self, from: i64) -> &[SegmentView] {
        self.segments_in(from, self.active_base_offset())
    }

    pub fn size(&self) -> u64 {
        self.segments.iter().map(SegmentView::size).sum()
    }
}
