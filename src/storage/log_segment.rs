//! One segment of a partition's log: its `.log` file of record batches and the two sparse
//! indexes over it (renaming and deleting the three files: `segment_files`).
//!
//! A segment with base offset `b` holds the batches whose offsets start at `b` and end below the
//! next segment's base. Offsets are stored in the indexes relative to `b`, so every offset in
//! the segment must lie in `[b, b + i32::MAX]`; an append that would break that rolls a new
//! segment first (offset overflow).
//!
//! Index entries are sparse: one whenever more than `index.interval.bytes` were appended since
//! the last one, counted per append (`LogSegment.append`) online and per batch from the segment
//! start on recovery (`LogSegment.recover`). For a segment written by single-batch appends the
//! two rules produce the same entries, so an index rebuilt by recovery is byte-identical to the
//! one written online.
//!
//! The time index gets `(max timestamp so far, last offset of the batch holding it)` at the
//! same points, and one final entry when the segment stops being active or is closed; its last
//! slot is reserved for that entry.

use std::fs::File;
use std::io::IoSlice;
use std::path::{Path, PathBuf};

use crate::protocol::record::batch::{NO_TIMESTAMP, RecordBatchHeader};
use std::ops::ControlFlow;

use crate::protocol::record::RecordError;
use crate::protocol::record::record_stream::for_each_batch_record;

use super::StorageError;
use super::file_names;
use super::file_records::{FileRecords, FileSlice, LogOffsetPosition};
use super::leader_epoch_cache::LeaderEpochFileCache;
use super::log_config::LogConfig;
use super::offset_index::OffsetIndex;
use super::producer_state::CompletedTxn;
use super::segment_scan::{scan_segment, write_indexes};
use super::time_index::{TimeIndex, TimestampOffset};
use super::transaction_index::TransactionIndex;

mod segment_files;
pub use segment_files::{SegmentFile, delete_if_exists};

/// The most bytes a batch may inflate to, for validation and timestamp searches (a batch is at
/// most `max.message.bytes` compressed; this bounds the time a hostile ratio can cost: the
/// records are walked as they inflate, so memory does not grow with it).
pub const MAX_DECOMPRESSED_BATCH_BYTES: usize = 256 * 1024 * 1024;

/// A position in the log: an offset, the segment holding it and its byte position there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetMetadata {
    pub message_offset: i64,
    pub segment_base_offset: i64,
    pub relative_position_in_segment: u64,
}

/// What a read found: where it started and the file range to send.
#[derive(Debug, Clone)]
pub struct FetchDataInfo {
    pub fetch_offset_metadata: LogOffsetMetadata,
    pub records: FileSlice,
    /// The first batch did not fit in the size limit (and `min_one_message` was off).
    pub first_entry_incomplete: bool,
}

/// The record a timestamp search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampAndOffset {
    pub timestamp: i64,
    pub offset: i64,
    pub leader_epoch: Option<i32>,
}

/// The inputs of `should_roll` (Kafka's `RollParams`).
#[derive(Debug, Clone, Copy)]
pub struct RollParams {
    pub max_segment_ms: i64,
    pub max_segment_bytes: i32,
    pub max_timestamp_in_messages: i64,
    pub max_offset_in_messages: i64,
    pub messages_size: usize,
    pub now_ms: i64,
}

/// One segment. Invariants: the `.log` ends on a batch boundary; every offset-index entry
/// points at the start of a batch whose last offset is the entry's offset; time-index
/// timestamps never decrease.
#[derive(Debug)]
pub struct LogSegment {
    log: FileRecords,
    offset_index: OffsetIndex,
    time_index: TimeIndex,
    /// The aborted transactions whose markers are in this segment (no file until one is).
    txn_index: TransactionIndex,
    base_offset: i64,
    index_interval_bytes: u64,
    /// `segment.index.bytes`: what the indexes are preallocated to while active.
    max_index_size: usize,
    roll_jitter_ms: i64,
    created_ms: i64,
    bytes_since_last_index_entry: u64,
    /// The first batch's max timestamp: what `segment.ms` is measured from.
    rolling_based_timestamp: Option<i64>,
    /// The largest timestamp in the segment and the last offset of its batch; `None` until
    /// first needed, then taken from the time index.
    max_timestamp_and_offset_so_far: Option<TimestampOffset>,
}

impl LogSegment {
    /// Opens the segment with base offset `base_offset` in `dir`, creating its files when
    /// `create` (Kafka's `LogSegment.open`).
    pub fn open(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        create: bool,
        roll_jitter_ms: i64,
        now_ms: i64,
    ) -> Result<Self, StorageError> {
        Self::open_with_suffix(dir, base_offset, config, create, roll_jitter_ms, now_ms, "")
    }

    /// [`open`](Self::open) for files carrying one more suffix (`.cleaned`, `.swap`), as
    /// Kafka's `LogSegment.open(.., fileSuffix)`.
    pub fn open_with_suffix(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        create: bool,
        roll_jitter_ms: i64,
        now_ms: i64,
        suffix: &str,
    ) -> Result<Self, StorageError> {
        let path = |p: PathBuf| file_names::with_suffix(&p, suffix);
        let mut log = FileRecords::open(path(file_names::log_file(dir, base_offset)), create)?;
        if config.preallocate && log.size_in_bytes() == 0 {
            log.preallocate(u64::try_from(config.segment_bytes).unwrap_or(0));
        }
        let index_size = usize::try_from(config.segment_index_bytes).unwrap_or(0);
        let offset_index = OffsetIndex::open(
            path(file_names::offset_index_file(dir, base_offset)),
            base_offset,
            index_size,
        )?;
        let time_index = TimeIndex::open(
            path(file_names::time_index_file(dir, base_offset)),
            base_offset,
            index_size,
        )?;
        let txn_index =
            TransactionIndex::open(&path(file_names::txn_index_file(dir, base_offset)))?;
        Ok(LogSegment {
            log,
            offset_index,
            time_index,
            txn_index,
            base_offset,
            index_interval_bytes: u64::try_from(config.index_interval_bytes).unwrap_or(0),
            max_index_size: index_size,
            roll_jitter_ms,
            created_ms: now_ms,
            bytes_since_last_index_entry: 0,
            rolling_based_timestamp: None,
            max_timestamp_and_offset_so_far: None,
        })
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub fn size(&self) -> u64 {
        self.log.size_in_bytes()
    }

    pub fn log(&self) -> &FileRecords {
        &self.log
    }

    pub fn offset_index(&self) -> &OffsetIndex {
        &self.offset_index
    }

    pub fn txn_index(&self) -> &TransactionIndex {
        &self.txn_index
    }

    pub fn txn_index_mut(&mut self) -> &mut TransactionIndex {
        &mut self.txn_index
    }

    /// Kafka's `updateTxnIndex`: an aborted transaction whose marker this segment holds is
    /// indexed with the partition's last stable offset at its marker.
    pub fn update_txn_index(
        &mut self,
        completed: &CompletedTxn,
        last_stable_offset: i64,
    ) -> Result<(), StorageError> {
        if completed.is_aborted {
            self.txn_index
                .append(completed.aborted_txn(last_stable_offset))?;
        }
        Ok(())
    }

    pub fn time_index(&self) -> &TimeIndex {
        &self.time_index
    }

    /// Points every file of the segment at `parent_dir` after its directory was renamed
    /// (Kafka's `updateParentDir`).
    pub fn update_parent_dir(&mut self, parent_dir: &Path) {
        self.log.update_parent_dir(parent_dir);
        self.offset_index.update_parent_dir(parent_dir);
        self.time_index.update_parent_dir(parent_dir);
        self.txn_index.update_parent_dir(parent_dir);
    }

    /// Whether `offset` can be stored relative to the base offset in the indexes.
    pub fn can_convert_to_relative_offset(&self, offset: i64) -> bool {
        offset
            .checked_sub(self.base_offset)
            .is_some_and(|delta| (0..=i64::from(i32::MAX)).contains(&delta))
    }

    /// Appends batches already validated and given offsets. `largest_offset` is the last
    /// offset appended, `largest_timestamp` the largest timestamp and
    /// `shallow_offset_of_max_timestamp` the last offset of the batch holding it.
    pub fn append(
        &mut self,
        largest_offset: i64,
        largest_timestamp: i64,
        shallow_offset_of_max_timestamp: i64,
        bufs: &[IoSlice<'_>],
    ) -> Result<(), StorageError> {
        let size: usize = bufs.iter().map(|b| b.len()).sum();
        self.append_with(
            largest_offset,
            largest_timestamp,
            shallow_offset_of_max_timestamp,
            size,
            |log| log.append(bufs).map(|_| ()),
        )
    }

    /// Lets `write` put bytes into the `.log` file just past the segment's end (a splice from a
    /// pipe) without appending them; see `FileRecords::write_past_end`.
    pub fn write_past_end(
        &mut self,
        len: u64,
        write: impl FnOnce(&File, u64) -> std::io::Result<()>,
    ) -> Result<(), StorageError> {
        self.log.write_past_end(len, write)
    }

    /// Reads `buf.len()` bytes written past the segment's end.
    pub fn read_past_end(&self, buf: &mut [u8]) -> Result<(), StorageError> {
        self.log.read_at(buf, self.log.size_in_bytes())
    }

    /// Cuts off whatever was written past the segment's end.
    pub fn discard_written(&mut self) -> Result<(), StorageError> {
        self.log.discard_written()
    }

    /// [`append`](Self::append) for the first `size` of `written` bytes already written past
    /// the end with [`write_past_end`](Self::write_past_end); the rest is cut off.
    pub fn append_written(
        &mut self,
        largest_offset: i64,
        largest_timestamp: i64,
        shallow_offset_of_max_timestamp: i64,
        size: usize,
        written: usize,
    ) -> Result<(), StorageError> {
        if size == 0 {
            return self.discard_written();
        }
        self.append_with(
            largest_offset,
            largest_timestamp,
            shallow_offset_of_max_timestamp,
            size,
            |log| log.keep_written(size as u64, written as u64),
        )
    }

    /// An append of `size` bytes that `put` adds to the `.log` file: the rolling timestamp and
    /// the offset check before, the largest timestamp and the index entries after.
    fn append_with(
        &mut self,
        largest_offset: i64,
        largest_timestamp: i64,
        shallow_offset_of_max_timestamp: i64,
        size: usize,
        put: impl FnOnce(&mut FileRecords) -> Result<(), StorageError>,
    ) -> Result<(), StorageError> {
        if size == 0 {
            return Ok(());
        }
        let physical_position = self.log.size_in_bytes();
        if physical_position == 0 {
            self.rolling_based_timestamp = Some(largest_timestamp);
        }
        if !self.can_convert_to_relative_offset(largest_offset) {
            return Err(StorageError::OffsetOverflow {
                segment_base_offset: self.base_offset,
                offset: largest_offset,
            });
        }
        put(&mut self.log)?;
        let so_far = self.max_timestamp_and_offset_so_far();
        if largest_timestamp > so_far.timestamp {
            self.max_timestamp_and_offset_so_far = Some(TimestampOffset {
                timestamp: largest_timestamp,
                offset: shallow_offset_of_max_timestamp,
            });
        }
        if self.bytes_since_last_index_entry > self.index_interval_bytes {
            self.offset_index
                .append(largest_offset, position_u32(physical_position)?)?;
            let so_far = self.max_timestamp_and_offset_so_far();
            self.time_index
                .maybe_append(so_far.timestamp, so_far.offset, false)?;
            self.bytes_since_last_index_entry = 0;
        }
        self.bytes_since_last_index_entry += size as u64;
        Ok(())
    }

    /// The largest timestamp and its batch's last offset; loaded from the time index the first
    /// time it is needed.
    pub fn max_timestamp_and_offset_so_far(&mut self) -> TimestampOffset {
        *self
            .max_timestamp_and_offset_so_far
            .get_or_insert_with(|| self.time_index.last_entry())
    }

    /// The largest record timestamp, or `NO_TIMESTAMP` when the segment has none.
    pub fn max_timestamp_so_far(&mut self) -> i64 {
        self.max_timestamp_and_offset_so_far().timestamp
    }

    /// What retention measures a segment's age by: its largest record timestamp, or the file's
    /// modification time when it has none.
    pub fn largest_timestamp(&mut self) -> Result<i64, StorageError> {
        let max = self.max_timestamp_so_far();
        if max >= 0 {
            Ok(max)
        } else {
            self.log.last_modified_ms()
        }
    }

    /// Where `offset` is: the first batch at or after the offset index's hint whose last offset
    /// reaches it.
    pub fn translate_offset(
        &self,
        offset: i64,
        starting_position: u64,
    ) -> Result<Option<LogOffsetPosition>, StorageError> {
        let mapping = self.offset_index.lookup(offset);
        self.log
            .search_for_offset_with_size(offset, u64::from(mapping.position).max(starting_position))
    }

    /// Up to `max_size` bytes of whole batches from the batch holding `start_offset`, not past
    /// `max_position`. With `min_one_message` the first batch is returned whole even when it is
    /// larger than `max_size` (KIP-74). `None` when the offset is past this segment's end.
    pub fn read(
        &self,
        start_offset: i64,
        max_size: usize,
        max_position: u64,
        min_one_message: bool,
    ) -> Result<Option<FetchDataInfo>, StorageError> {
        let Some(start) = self.translate_offset(start_offset, 0)? else {
            return Ok(None);
        };
        let fetch_offset_metadata = LogOffsetMetadata {
            message_offset: start_offset,
            segment_base_offset: self.base_offset,
            relative_position_in_segment: start.position,
        };
        let adjusted_max_size = if min_one_message {
            max_size.max(start.size)
        } else {
            max_size
        };
        let fetch_size = if adjusted_max_size == 0 {
            0
        } else {
            max_position
                .saturating_sub(start.position)
                .min(adjusted_max_size as u64)
        };
        Ok(Some(FetchDataInfo {
            fetch_offset_metadata,
            records: self.log.slice(start.position, fetch_size)?,
            first_entry_incomplete: adjusted_max_size < start.size,
        }))
    }

    /// The offset after the last batch: scans from the last offset-index entry to the end.
    pub fn read_next_offset(&self) -> Result<i64, StorageError> {
        let hint = self.offset_index.lookup(self.offset_index.last_offset());
        let mut scanner = self.log.scanner(u64::from(hint.position), 64 * 1024);
        let mut next = self.base_offset;
        while let Some(entry) = scanner.next_entry(false)? {
            next = entry.last_offset() + 1;
        }
        Ok(next)
    }

    /// Rebuilds the indexes from the `.log` (Kafka's `LogSegment.recover`): every batch is
    /// validated (size, CRC, offsets within the segment); at the first invalid byte the file is
    /// truncated. Batches' leader epochs go into `leader_epoch_cache`. Returns the number of
    /// bytes truncated.
    pub fn recover(
        &mut self,
        leader_epoch_cache: Option<&mut LeaderEpochFileCache>,
    ) -> Result<u64, StorageError> {
        let scan = scan_segment(
            &self.log,
            self.base_offset,
            self.index_interval_bytes,
            &mut |_| {},
        )?;
        if let Some(invalid) = &scan.invalid {
            tracing::warn!(
                segment = %self.log.path().display(),
                position = invalid.position,
                next_offset = invalid.next_offset,
                reason = %invalid.reason,
                "invalid data in segment, truncating"
            );
        }
        let truncated = self.log.truncate_to(scan.valid_bytes)?;
        self.offset_index.reset()?;
        self.time_index.reset()?;
        write_indexes(&scan, &mut self.offset_index, &mut self.time_index)?;
        self.offset_index.trim_to_valid_size()?;
        self.time_index.trim_to_valid_size()?;
        if let Some(cache) = leader_epoch_cache {
            for (epoch, base_offset) in &scan.epochs {
                if cache.latest_epoch().is_none_or(|latest| *epoch > latest) {
                    cache.assign(*epoch, *base_offset)?;
                }
            }
        }
        let last_index_entry = scan
            .index_points
            .last()
            .map_or(0, |p| u64::from(p.position));
        self.max_timestamp_and_offset_so_far = Some(scan.max_timestamp);
        self.bytes_since_last_index_entry = scan.valid_bytes - last_index_entry;
        self.rolling_based_timestamp = None;
        Ok(truncated)
    }

    /// Kafka's `LogSegment.shouldRoll`: by size, by time (record timestamps, falling back to
    /// the segment's creation time), by a full index, or because the incoming offsets cannot be
    /// stored relative to this segment's base.
    pub fn should_roll(&mut self, params: &RollParams) -> Result<bool, StorageError> {
        let reached_roll_ms = self
            .time_waited_for_roll(params.now_ms, params.max_timestamp_in_messages)?
            > params.max_segment_ms - self.roll_jitter_ms;
        let size = self.size() as i64;
        Ok(
            size > i64::from(params.max_segment_bytes) - params.messages_size as i64
                || (size > 0 && reached_roll_ms)
                || self.offset_index.is_full()
                || self.time_index.is_full()
                || !self.can_convert_to_relative_offset(params.max_offset_in_messages),
        )
    }

    fn time_waited_for_roll(
        &mut self,
        now_ms: i64,
        message_timestamp: i64,
    ) -> Result<i64, StorageError> {
        Ok(match self.first_batch_timestamp()? {
            i64::MAX => now_ms - self.created_ms,
            first => message_timestamp - first,
        })
    }

    /// Removes every batch from the one holding `offset` on, and the index entries at or above
    /// it. Returns the number of bytes removed.
    pub fn truncate_to(&mut self, offset: i64, now_ms: i64) -> Result<u64, StorageError> {
        let mapping = self.translate_offset(offset, 0)?;
        self.offset_index.truncate_to(offset)?;
        self.time_index.truncate_to(offset)?;
        self.txn_index.truncate_to(offset)?;
        self.offset_index.resize(self.max_index_size)?;
        self.time_index.resize(self.max_index_size)?;
        let truncated = match mapping {
            Some(m) => self.log.truncate_to(m.position)?,
            None => 0,
        };
        if self.log.size_in_bytes() == 0 {
            self.created_ms = now_ms;
            self.rolling_based_timestamp = None;
        }
        self.bytes_since_last_index_entry = 0;
        self.max_timestamp_and_offset_so_far = Some(self.read_largest_timestamp()?);
        Ok(truncated)
    }

    /// The largest timestamp after a truncation: the time index's last entry, or a later batch
    /// found by scanning from it.
    fn read_largest_timestamp(&self) -> Result<TimestampOffset, StorageError> {
        let mut max = self.time_index.last_entry();
        let start = self.offset_index.lookup(max.offset).position;
        let mut scanner = self.log.scanner(u64::from(start), 64 * 1024);
        while let Some(entry) = scanner.next_entry(false)? {
            let batch = entry.batch();
            let ts = batch.max_timestamp();
            if ts > max.timestamp {
                max = TimestampOffset {
                    timestamp: ts,
                    offset: batch.last_offset(),
                };
            }
        }
        Ok(max)
    }

    /// The first record with a timestamp at or above `timestamp` and an offset at or above
    /// `starting_offset` (Kafka's `findOffsetByTimestamp`).
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>, StorageError> {
        let hint = self.time_index.lookup(timestamp);
        let position = self
            .offset_index
            .lookup(hint.offset.max(starting_offset))
            .position;
        let mut scanner = self.log.scanner(u64::from(position), 64 * 1024);
        while let Some(entry) = scanner.next_entry(true)? {
            let batch = entry.batch();
            if batch.max_timestamp() < timestamp {
                continue;
            }
            let Some(header) = batch.header() else {
                // A legacy message: its own timestamp and offset.
                if batch.last_offset() >= starting_offset {
                    return Ok(Some(TimestampAndOffset {
                        timestamp: batch.max_timestamp(),
                        offset: batch.last_offset(),
                        leader_epoch: None,
                    }));
                }
                continue;
            };
            if let Some(found) =
                first_record_at_or_after(entry.bytes, &header, timestamp, starting_offset)?
            {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Writes the final time-index entry, trims the indexes and gives back the blocks reserved
    /// past the `.log`'s data: the segment will take no more appends.
    pub fn on_become_inactive_segment(&mut self) -> Result<(), StorageError> {
        let so_far = self.max_timestamp_and_offset_so_far();
        self.time_index
            .maybe_append(so_far.timestamp, so_far.offset, true)?;
        self.offset_index.trim_to_valid_size()?;
        self.time_index.trim_to_valid_size()?;
        self.log.release_reserved()
    }

    /// Grows the indexes back to their preallocated size so the segment can take appends again.
    pub fn resize_indexes(&mut self) -> Result<(), StorageError> {
        self.offset_index.resize(self.max_index_size)?;
        self.time_index.resize(self.max_index_size)?;
        Ok(())
    }

    /// Checks the indexes against Kafka's sanity rules.
    pub fn sanity_check(&self) -> Result<(), StorageError> {
        self.offset_index.sanity_check()?;
        self.time_index.sanity_check()
    }

    /// fsyncs the log and the indexes.
    pub fn flush(&self) -> Result<(), StorageError> {
        self.log.flush()?;
        self.offset_index.flush()?;
        self.time_index.flush()?;
        self.txn_index.flush()
    }

    /// Closes cleanly: the final time-index entry, trimmed indexes, no blocks reserved past the
    /// data.
    pub fn close(mut self) -> Result<(), StorageError> {
        self.log.release_reserved()?;
        if self.max_timestamp_and_offset_so_far().timestamp != NO_TIMESTAMP || self.size() > 0 {
            let so_far = self.max_timestamp_and_offset_so_far();
            self.time_index
                .maybe_append(so_far.timestamp, so_far.offset, true)?;
        }
        self.offset_index.close()?;
        self.time_index.close()
    }

    /// The first batch's max timestamp, or `i64::MAX` when the segment has none (Kafka's
    /// `getFirstBatchTimestamp`, what `max.compaction.lag.ms` is measured from).
    pub fn first_batch_timestamp(&mut self) -> Result<i64, StorageError> {
        if self.rolling_based_timestamp.is_none() {
            let mut scanner = self.log.scanner(0, 4096);
            if let Some(entry) = scanner.next_entry(false)? {
                self.rolling_based_timestamp = Some(entry.batch().max_timestamp());
            }
        }
        Ok(match self.rolling_based_timestamp {
            Some(t) if t >= 0 => t,
            _ => i64::MAX,
        })
    }

    /// The `.log` file's modification time in ms since the epoch.
    pub fn last_modified_ms(&self) -> Result<i64, StorageError> {
        self.log.last_modified_ms()
    }
}

fn position_u32(position: u64) -> Result<u32, StorageError> {
    u32::try_from(position).map_err(|_| StorageError::SegmentTooLarge { position })
}

/// The first record of a v2 batch with `timestamp >= target` and `offset >= starting_offset`.
fn first_record_at_or_after(
    batch: &[u8],
    header: &RecordBatchHeader,
    target: i64,
    starting_offset: i64,
) -> Result<Option<TimestampAndOffset>, StorageError> {
    let log_append_time =
        header.timestamp_type() == crate::protocol::record::batch::TimestampType::LogAppendTime;
    let mut found = None;
    for_each_batch_record(batch, header, MAX_DECOMPRESSED_BATCH_BYTES, |_, record| {
        let offset = record.offset(header.base_offset);
        let timestamp = if log_append_time {
            header.max_timestamp
        } else {
            record.timestamp(header.base_timestamp)
        };
        if timestamp >= target && offset >= starting_offset {
            let epoch = header.partition_leader_epoch;
            found = Some(TimestampAndOffset {
                timestamp,
                offset,
                leader_epoch: (epoch >= 0).then_some(epoch),
            });
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })
    .map_err(RecordError::from)?;
    Ok(found)
}

#[cfg(test)]
mod tests;
