//! One cleaning of one log (Kafka's `Cleaner`): build the key → last offset map over the dirty
//! part, then rewrite the log from its start up to the end of what the map covers, group by
//! group, each group of segments into one cleaned segment swapped in for it.
//!
//! A record is kept when it is above the map's last offset (not deduplicated this round), or
//! when it is its key's latest record and has a value or is a tombstone whose batch's delete
//! horizon has not passed. Records without a key are dropped. Transactions as Kafka's cleaner
//! treats them (`cleaned_transactions`): aborted data never enters the offset map and is
//! dropped; a marker stays while data of its transaction does (an abort's `.txnindex` entry
//! moving to the cleaned segment with it), and once none does it gets a delete horizon and goes
//! after it. A producer's last batch keeps at least its header. Legacy (magic 0/1) entries are
//! copied as they are.
//!
//! The log's lock is taken twice per group at most: for the snapshot of its segments at the
//! start, and for the swap. Reading the sealed segments and writing the cleaned ones happen
//! without it; see `replace_segments` for why that is safe against appends, retention and
//! truncation.

use std::collections::HashMap;
use std::io::IoSlice;
use std::path::Path;
use std::sync::Arc;

use crate::cluster::sync::lock;
use crate::protocol::record::batch::{MAGIC_V2, RecordBatchHeader};
use crate::protocol::record::records::{batch_records, for_each_record};

use super::cleaned_batch::{BatchRetention, FilterParams, Filtered, RecordView, filter_batch};
use super::cleaned_transactions::{CleanedTransactionMetadata, collect_aborted_transactions};
use super::cleaner_manager::LogToClean;
use super::offset_map::SkimpyOffsetMap;
use super::throttler::Throttler;
use crate::storage::StorageError;
use crate::storage::file_names::{self, CLEANED_FILE_SUFFIX};
use crate::storage::log_config::LogConfig;
use crate::storage::log_segment::{LogSegment, MAX_DECOMPRESSED_BATCH_BYTES, delete_if_exists};
use crate::storage::replace_segments::{LogSnapshot, SegmentView};

/// What one cleaning did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanerStats {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub messages_read: u64,
    pub messages_written: u64,
    pub invalid_messages: u64,
    pub map_messages_read: u64,
    pub segments_swapped: u64,
}

/// The last batch of a producer, which cleaning must not remove entirely (its header keeps the
/// producer's last sequence and epoch): Kafka's `LastRecord`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LastRecord {
    last_data_offset: Option<i64>,
    producer_epoch: i16,
}

/// One cleaner thread's working state: its offset map, reused from one cleaning to the next.
#[derive(Debug)]
pub struct Cleaner {
    pub id: usize,
    offset_map: SkimpyOffsetMap,
    dup_buffer_load_factor: f64,
    io_buffer_size: usize,
    throttler: Arc<Throttler>,
}

/// Returns `CleaningAborted` when the cleaning must stop (shutdown, or the partition is being
/// deleted or truncated).
pub(crate) type CheckDone<'a> = &'a dyn Fn() -> Result<(), StorageError>;

impl Cleaner {
    /// Called for each batch a scan reads: an abort is noticed within 64 batches (checking
    /// costs a lock), and the reads go through the I/O throttle.
    fn pace_read(
        &self,
        batches: &mut u64,
        size: usize,
        check_done: CheckDone<'_>,
    ) -> Result<(), StorageError> {
        *batches += 1;
        if batches.is_multiple_of(64) {
            check_done()?;
        }
        self.throttler
            .maybe_throttle(size as u64, &|| check_done().is_err());
        Ok(())
    }

    /// `memory` bytes of offset map; `io_buffer_size` is the read chunk for scans.
    pub fn new(
        id: usize,
        memory: usize,
        dup_buffer_load_factor: f64,
        io_buffer_size: usize,
        throttler: Arc<Throttler>,
    ) -> Self {
        Cleaner {
            id,
            offset_map: SkimpyOffsetMap::new(memory),
            dup_buffer_load_factor,
            io_buffer_size: io_buffer_size.max(4096),
            throttler,
        }
    }

    pub fn offset_map(&self) -> &SkimpyOffsetMap {
        &self.offset_map
    }

    /// Cleans `cleanable` (Kafka's `doClean`); returns the first offset not cleaned, which
    /// becomes the partition's first dirty offset.
    pub fn clean(
        &mut self,
        cleanable: &LogToClean,
        now_ms: i64,
        check_done: CheckDone<'_>,
    ) -> Result<(i64, CleanerStats), StorageError> {
        let snapshot = lock(&cleanable.log).cleaner_snapshot()?;
        let mut stats = CleanerStats::default();
        self.build_offset_map(
            &snapshot,
            cleanable.first_dirty_offset,
            cleanable.first_uncleanable_offset,
            &mut stats,
            check_done,
        )?;
        let end_offset = (self.offset_map.latest_offset() + 1).max(cleanable.first_dirty_offset);
        let producers = last_records_of_producers(&snapshot)?;
        let groups = group_segments_by_size(
            snapshot.segments_in(0, end_offset),
            snapshot.config.segment_bytes,
            snapshot.config.segment_index_bytes,
            cleanable.first_uncleanable_offset,
        );
        for group in groups {
            check_done()?;
            self.clean_segments(
                cleanable, &snapshot, &group, &producers, now_ms, &mut stats, check_done,
            )?;
        }
        Ok((end_offset, stats))
    }

    /// Kafka's `buildOffsetMap`: the latest offset of every key in `[start, end)`, segment by
    /// segment until the map holds `slots * load factor` keys.
    fn build_offset_map(
        &mut self,
        log: &LogSnapshot,
        start: i64,
        end: i64,
        stats: &mut CleanerStats,
        check_done: CheckDone<'_>,
    ) -> Result<(), StorageError> {
        self.offset_map.clear();
        let max_desired = (self.offset_map.slots() as f64 * self.dup_buffer_load_factor) as usize;
        let mut transactions =
            CleanedTransactionMetadata::new(collect_aborted_transactions(log, start, end));
        for segment in log.segments_in(start, end) {
            check_done()?;
            let mut scanner = segment.records.scanner(0, self.io_buffer_size);
            let mut batches = 0u64;
            while let Some(entry) = scanner.next_entry(true)? {
                self.pace_read(&mut batches, entry.size, check_done)?;
                let last_offset = entry.last_offset();
                if entry.magic >= MAGIC_V2 {
                    let header = RecordBatchHeader::parse(entry.bytes)?;
                    let aborted = if header.is_control() {
                        transactions.on_control_batch_read(entry.bytes, &header)?;
                        true
                    } else {
                        // An aborted record must not make a committed one look outdated.
                        transactions.on_batch_read(&header)
                    };
                    if !aborted {
                        let records =
                            batch_records(entry.bytes, &header, MAX_DECOMPRESSED_BATCH_BYTES)?;
                        let mut full = false;
                        let map = &mut self.offset_map;
                        for_each_record(&records, header.records_count, |_, record| {
                            stats.map_messages_read += 1;
                            let offset = record.offset(header.base_offset);
                            if full || offset < start {
                                return;
                            }
                            if let Some(key) = record.key {
                                if map.size() < max_desired {
                                    full = !map.put(key, offset);
                                } else {
                                    full = true;
                                }
                            }
                        })?;
                        if full {
                            return Ok(());
                        }
                    }
                }
                if last_offset >= start {
                    self.offset_map.update_latest_offset(last_offset);
                }
            }
        }
        Ok(())
    }

    /// Kafka's `cleanSegments`: `group` rewritten into one `.cleaned` segment at its first base
    /// offset, then swapped in. Unfinished `.cleaned` files are deleted on an abort.
    #[allow(clippy::too_many_arguments)]
    fn clean_segments(
        &mut self,
        cleanable: &LogToClean,
        log: &LogSnapshot,
        group: &[&SegmentView],
        producers: &HashMap<i64, LastRecord>,
        now_ms: i64,
        stats: &mut CleanerStats,
        check_done: CheckDone<'_>,
    ) -> Result<(), StorageError> {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            return Ok(());
        };
        let mut created: Vec<LogSegment> = Vec::new();
        let outcome = (|| {
            created.push(new_cleaned_segment(
                &log.dir,
                &log.config,
                first.base_offset,
                now_ms,
            )?);
            let mut next_offset = first.base_offset;
            let upper = log
                .segments
                .iter()
                .find(|s| s.base_offset > last.base_offset)
                .map_or(log.log_end_offset, |s| s.base_offset);
            let mut transactions = CleanedTransactionMetadata::new(collect_aborted_transactions(
                log,
                first.base_offset,
                upper,
            ));
            for segment in group {
                check_done()?;
                let cleaned = &mut created[0];
                let into = CleanInto {
                    producers,
                    transactions: &mut transactions,
                    now_ms,
                };
                if let Some(n) = self.clean_into(log, segment, cleaned, into, stats, check_done)? {
                    next_offset = n;
                }
            }
            // The swap's recovery rule deletes old segments up to the cleaned data's end; an
            // empty segment at the last old base extends that end over every segment replaced.
            if group.len() > 1 && next_offset <= last.base_offset {
                created.push(new_cleaned_segment(
                    &log.dir,
                    &log.config,
                    last.base_offset,
                    now_ms,
                )?);
            }
            // The aborted transactions whose markers stay, with some of their data.
            for txn in transactions.take_cleaned_index() {
                created[0].txn_index_mut().append(txn)?;
            }
            for segment in &mut created {
                segment.on_become_inactive_segment()?;
                segment.flush()?;
                segment.log().set_last_modified_ms(last.last_modified_ms)?;
            }
            check_done()?;
            let paths: Vec<_> = created.iter().flat_map(LogSegment::file_paths).collect();
            match lock(&cleanable.log).replace_segments(std::mem::take(&mut created), group, now_ms)
            {
                Err(err @ StorageError::CleaningAborted { .. }) => {
                    delete_if_exists(&paths)?;
                    Err(err)
                }
                other => other,
            }
        })();
        if outcome.is_err() {
            for segment in created {
                segment.delete_files()?;
            }
        } else {
            stats.segments_swapped += group.len() as u64;
        }
        outcome
    }

    /// Kafka's `cleanInto`: the kept part of `source`, batch by batch, appended to `dest`.
    /// Returns the offset after the last batch written, if any.
    fn clean_into(
        &mut self,
        log: &LogSnapshot,
        source: &SegmentView,
        dest: &mut LogSegment,
        into: CleanInto<'_>,
        stats: &mut CleanerStats,
        check_done: CheckDone<'_>,
    ) -> Result<Option<i64>, StorageError> {
        let CleanInto {
            producers,
            transactions,
            now_ms,
        } = into;
        let mut scanner = source.records.scanner(0, self.io_buffer_size);
        let mut next_offset = None;
        let latest = self.offset_map.latest_offset();
        let mut batches = 0u64;
        while let Some(entry) = scanner.next_entry(true)? {
            self.pace_read(&mut batches, entry.size, check_done)?;
            stats.bytes_read += entry.size as u64;
            let out: Filtered<'_> = if entry.magic < MAGIC_V2 {
                Filtered::Original(entry.bytes)
            } else {
                let header = RecordBatchHeader::parse(entry.bytes)?;
                // Kafka's `checkBatchRetention`: markers piggy-back on the tombstones' delete
                // horizon, and none goes before all of its transaction's data has.
                let can_discard = if header.is_control() {
                    transactions.on_control_batch_read(entry.bytes, &header)?
                } else {
                    transactions.on_batch_read(&header)
                };
                let discard_records = if header.is_control() {
                    can_discard && header.has_delete_horizon() && header.base_timestamp <= now_ms
                } else {
                    can_discard
                };
                let retention =
                    if header.has_producer_id() && is_last_of_producer(&header, producers) {
                        BatchRetention::RetainEmpty
                    } else if discard_records {
                        BatchRetention::Delete
                    } else {
                        BatchRetention::DeleteEmpty
                    };
                let params = FilterParams {
                    retention,
                    now_ms,
                    delete_retention_ms: log.config.delete_retention_ms,
                    max_decompressed_bytes: MAX_DECOMPRESSED_BATCH_BYTES,
                    contains_marker_for_empty_txn: can_discard && header.is_control(),
                };
                let map = &mut self.offset_map;
                let mut invalid = 0u64;
                let (out, counts) = filter_batch(entry.bytes, &header, params, |record| {
                    !discard_records
                        && (header.is_control()
                            || should_retain_record(
                                map,
                                latest,
                                &header,
                                record,
                                now_ms,
                                &mut invalid,
                            ))
                })?;
                stats.invalid_messages += invalid;
                stats.messages_read += counts.records_read as u64;
                stats.messages_written += counts.records_retained as u64;
                out
            };
            let bytes: &[u8] = match &out {
                Filtered::Original(b) => b,
                Filtered::Rebuilt(b) | Filtered::EmptyHeader(b) => b,
                Filtered::Dropped => continue,
            };
            let (last_offset, max_timestamp) = match RecordBatchHeader::parse(bytes) {
                Ok(h) => (h.last_offset(), h.max_timestamp),
                Err(_) => {
                    let batch = crate::protocol::record::batch_iter::BatchRef {
                        position: 0,
                        bytes,
                        magic: entry.magic,
                    };
                    (batch.last_offset(), batch.max_timestamp())
                }
            };
            dest.append(
                last_offset,
                max_timestamp,
                last_offset,
                &[IoSlice::new(bytes)],
            )?;
            self.throttler
                .maybe_throttle(bytes.len() as u64, &|| check_done().is_err());
            stats.bytes_written += bytes.len() as u64;
            next_offset = Some(last_offset + 1);
        }
        Ok(next_offset)
    }
}

/// What `clean_into` decides with beside the offset map.
struct CleanInto<'a> {
    producers: &'a HashMap<i64, LastRecord>,
    transactions: &'a mut CleanedTransactionMetadata,
    now_ms: i64,
}

/// A fresh `<base>.log.cleaned` with its indexes, stale ones from an earlier attempt removed.
fn new_cleaned_segment(
    dir: &Path,
    config: &LogConfig,
    base_offset: i64,
    now_ms: i64,
) -> Result<LogSegment, StorageError> {
    let stale: Vec<_> = [
        file_names::log_file(dir, base_offset),
        file_names::offset_index_file(dir, base_offset),
        file_names::time_index_file(dir, base_offset),
    ]
    .iter()
    .map(|p| file_names::with_suffix(p, CLEANED_FILE_SUFFIX))
    .collect();
    delete_if_exists(&stale)?;
    LogSegment::open_with_suffix(
        dir,
        base_offset,
        config,
        true,
        0,
        now_ms,
        CLEANED_FILE_SUFFIX,
    )
}

/// Kafka's `shouldRetainRecord` for magic 2.
fn should_retain_record(
    map: &mut SkimpyOffsetMap,
    latest_offset: i64,
    header: &RecordBatchHeader,
    record: &RecordView<'_>,
    now_ms: i64,
    invalid: &mut u64,
) -> bool {
    if record.offset > latest_offset {
        return true;
    }
    let Some(key) = record.key else {
        *invalid += 1;
        return false;
    };
    let latest_for_key = record.offset >= map.get(key);
    let retain_deletes = !header.has_delete_horizon() || now_ms < header.base_timestamp;
    latest_for_key && (record.has_value || retain_deletes)
}

fn is_last_of_producer(header: &RecordBatchHeader, producers: &HashMap<i64, LastRecord>) -> bool {
    producers
        .get(&header.producer_id)
        .is_some_and(|last| match last.last_data_offset {
            Some(offset) => header.last_offset() == offset,
            None => header.is_control() && header.producer_epoch == last.producer_epoch,
        })
}

/// The last batch of each producer id in the whole log (kcli keeps no producer state, so every
/// producer id found counts as active, which errs on keeping a batch header). The active
/// segment may be truncated meanwhile: a read that fails there ends its scan.
fn last_records_of_producers(log: &LogSnapshot) -> Result<HashMap<i64, LastRecord>, StorageError> {
    let mut out: HashMap<i64, LastRecord> = HashMap::new();
    let active = log.active_base_offset();
    for segment in &log.segments {
        let mut scanner = segment.records.scanner(0, 64 * 1024);
        loop {
            let entry = match scanner.next_entry(false) {
                Ok(Some(entry)) => entry,
                Ok(None) => break,
                Err(_) if segment.base_offset == active => break,
                Err(err) => return Err(err),
            };
            let Some(header) = entry.batch().header() else {
                continue;
            };
            if !header.has_producer_id() {
                continue;
            }
            let last = out.entry(header.producer_id).or_insert(LastRecord {
                last_data_offset: None,
                producer_epoch: header.producer_epoch,
            });
            last.producer_epoch = header.producer_epoch;
            if !header.is_control() {
                last.last_data_offset = Some(header.last_offset());
            }
        }
    }
    Ok(out)
}

/// Kafka's `groupSegmentsBySize`: consecutive segments whose total log size stays within
/// `max_size`, whose index sizes stay within `max_index_size` each, and whose offsets fit one
/// segment's 32-bit relative offsets (a segment's last offset is bounded by the next one's base,
/// the last one's by `first_uncleanable_offset`). An empty segment always joins.
pub(crate) fn group_segments_by_size(
    segments: &[SegmentView],
    max_size: i32,
    max_index_size: i32,
    first_uncleanable_offset: i64,
) -> Vec<Vec<&SegmentView>> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segments.len() {
        let head = &segments[i];
        let mut group = vec![head];
        let mut log_size = head.size();
        let mut index_size = head.offset_index_bytes as u64;
        let mut time_index_size = head.time_index_bytes as u64;
        i += 1;
        while let Some(next) = segments.get(i) {
            let last_offset_of_next = match segments.get(i + 1) {
                Some(after) => after.base_offset - 1,
                None => first_uncleanable_offset - 1,
            };
            let fits = log_size + next.size() <= u64::try_from(max_size).unwrap_or(0)
                && index_size + next.offset_index_bytes as u64
                    <= u64::try_from(max_index_size).unwrap_or(0)
                && time_index_size + next.time_index_bytes as u64
                    <= u64::try_from(max_index_size).unwrap_or(0)
                && (next.size() == 0
                    || last_offset_of_next - head.base_offset <= i64::from(i32::MAX));
            if !fits {
                break;
            }
            log_size += next.size();
            index_size += next.offset_index_bytes as u64;
            time_index_size += next.time_index_bytes as u64;
            group.push(next);
            i += 1;
        }
        groups.push(group);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::file_records::FileRecords;

    /// Views of segments with the given (base offset, log size, offset index bytes); the
    /// files are sparse, their contents never read.
    fn views(dir: &Path, specs: &[(i64, u64, usize)]) -> Vec<SegmentView> {
        specs
            .iter()
            .map(|&(base, size, index)| {
                let path = file_names::log_file(dir, base);
                std::fs::File::create(&path).unwrap().set_len(size).unwrap();
                SegmentView {
                    base_offset: base,
                    records: FileRecords::open(path, false).unwrap(),
                    offset_index_bytes: index,
                    time_index_bytes: index / 8 * 12,
                    largest_timestamp: 0,
                    first_batch_timestamp: i64::MAX,
                    last_modified_ms: 0,
                    aborted_txns: Vec::new(),
                }
            })
            .collect()
    }

    fn bases(groups: &[Vec<&SegmentView>]) -> Vec<Vec<i64>> {
        groups
            .iter()
            .map(|g| g.iter().map(|s| s.base_offset).collect())
            .collect()
    }

    #[test]
    fn groups_fill_up_to_the_segment_and_index_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let segs = views(
            dir.path(),
            &[
                (0, 400, 8),
                (10, 400, 8),
                (20, 300, 8),
                (30, 500, 8),
                (40, 0, 0),
                (50, 100, 80),
            ],
        );
        // By log size: 400+400 fits 1000, +300 does not; 300+500 fits; the empty one joins.
        assert_eq!(
            bases(&group_segments_by_size(&segs, 1000, 1000, 60)),
            vec![vec![0, 10], vec![20, 30, 40, 50]]
        );
        // By index size: 8+8+8 fits 24 only so far; the timeindex (12 per 8) decides first.
        assert_eq!(
            bases(&group_segments_by_size(&segs, 10_000, 24, 60)),
            vec![vec![0, 10], vec![20, 30, 40], vec![50]]
        );
        assert!(group_segments_by_size(&[], 1000, 1000, 0).is_empty());
    }

    #[test]
    fn groups_keep_offsets_within_a_relative_int32() {
        let dir = tempfile::tempdir().unwrap();
        let max = i64::from(i32::MAX);
        let segs = views(
            dir.path(),
            &[(0, 10, 8), (max - 5, 10, 8), (max + 1, 10, 8)],
        );
        // The second segment's offsets may reach max (the third one's base - 1): it fits with
        // the first; the third's reach the first uncleanable offset, which does not.
        assert_eq!(
            bases(&group_segments_by_size(&segs, 10_000, 10_000, max + 100)),
            vec![vec![0, max - 5], vec![max + 1]]
        );
    }
}
