//! One validating pass over a segment's `.log`: every batch's size, CRC and offsets are checked
//! and the index entries Kafka's `LogSegment.recover` derives from the batches are computed. It
//! is shared by recovery (which writes the entries into the live indexes) and by
//! `kcli rebuild-index` (which writes them to new files, or compares them with the old ones).
//!
//! The rule: walking the batches from the start of the file, a batch that begins more than
//! `index.interval.bytes` after the last indexed batch gets an offset-index entry `(its last
//! offset, its position)` and a time-index entry `(max timestamp so far, last offset of the
//! batch holding it)`; the time index gets one more entry for the segment's maximum at the end.

use super::StorageError;
use super::file_records::FileRecords;
use super::offset_index::OffsetIndex;
use super::time_index::{TimeIndex, TimestampOffset};
use crate::protocol::record::batch::{MAGIC_V2, NO_TIMESTAMP};

/// Read size of the scan: large reads keep it near page-cache speed.
const SCAN_CHUNK: usize = 1024 * 1024;

/// Where an index entry goes: the batch's last offset and position, and the segment's maximum
/// timestamp up to and including the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexPoint {
    pub offset: i64,
    pub position: u32,
    pub max_timestamp_so_far: TimestampOffset,
}

/// Where and why the valid data of a segment ends before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidData {
    /// Byte position of the first invalid byte.
    pub position: u64,
    /// The offset after the last valid batch (the segment's base when none is valid).
    pub next_offset: i64,
    pub reason: String,
}

/// What a scan found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegmentScan {
    pub index_points: Vec<IndexPoint>,
    /// The segment's largest timestamp and the last offset of its batch (`NO_TIMESTAMP` and
    /// the base offset when it has none).
    pub max_timestamp: TimestampOffset,
    /// Bytes of whole, valid batches from the start.
    pub valid_bytes: u64,
    pub batches: u64,
    /// The offset after the last valid batch.
    pub next_offset: i64,
    /// Set when the file holds bytes after the valid batches: a torn tail or corruption.
    pub invalid: Option<InvalidData>,
    /// `(leader epoch, base offset)` of each magic-2 batch that starts a higher epoch.
    pub epochs: Vec<(i32, i64)>,
}

/// One valid batch as the scan passed it: what an index entry may point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScannedBatch {
    pub position: u64,
    /// Bytes, log overhead included.
    pub size: usize,
    pub last_offset: i64,
    pub max_timestamp: i64,
}

/// Scans `log`, a segment with base offset `base_offset`. `progress` is told the bytes scanned
/// so far after each chunk's worth of batches.
pub(crate) fn scan_segment(
    log: &FileRecords,
    base_offset: i64,
    index_interval_bytes: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<SegmentScan, StorageError> {
    scan_segment_visiting(
        log,
        base_offset,
        index_interval_bytes,
        &mut |_| {},
        progress,
    )
}

/// [`scan_segment`], also showing `visit` every valid batch in file order (for checking
/// existing indexes against the batches in the same pass).
pub(crate) fn scan_segment_visiting(
    log: &FileRecords,
    base_offset: i64,
    index_interval_bytes: u64,
    visit: &mut dyn FnMut(&ScannedBatch),
    progress: &mut dyn FnMut(u64),
) -> Result<SegmentScan, StorageError> {
    let mut scan = SegmentScan {
        index_points: Vec::new(),
        max_timestamp: TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: base_offset,
        },
        valid_bytes: 0,
        batches: 0,
        next_offset: base_offset,
        invalid: None,
        epochs: Vec::new(),
    };
    let mut last_index_entry = 0u64;
    let mut last_progress = 0u64;
    let mut scanner = log.scanner(0, SCAN_CHUNK);
    let stop = loop {
        let entry = match scanner.next_entry(true) {
            Ok(Some(entry)) => entry,
            Ok(None) => break None,
            Err(StorageError::Record(err)) => break Some(err.to_string()),
            Err(err) => return Err(err),
        };
        let batch = entry.batch();
        if !batch.is_valid() {
            break Some(format!(
                "record batch at position {} fails its CRC check",
                entry.position
            ));
        }
        let last_offset = batch.last_offset();
        let relative = last_offset - base_offset;
        if !(0..=i64::from(i32::MAX)).contains(&relative) || batch.base_offset() < base_offset {
            break Some(format!(
                "batch offsets up to {last_offset} lie outside the segment based at {base_offset}"
            ));
        }
        // Offsets only grow within a log; Kafka's recovery fails on the index append of a
        // batch that goes back (the base offset is not covered by the CRC, so a flipped bit
        // there is only caught here).
        if batch.base_offset() < scan.next_offset {
            break Some(format!(
                "batch at position {} starts at offset {} below the end {} of the batches before it",
                entry.position,
                batch.base_offset(),
                scan.next_offset
            ));
        }
        let max_timestamp = batch.max_timestamp();
        if max_timestamp > scan.max_timestamp.timestamp {
            scan.max_timestamp = TimestampOffset {
                timestamp: max_timestamp,
                offset: last_offset,
            };
        }
        if scan.valid_bytes - last_index_entry > index_interval_bytes {
            let position =
                u32::try_from(scan.valid_bytes).map_err(|_| StorageError::SegmentTooLarge {
                    position: scan.valid_bytes,
                })?;
            scan.index_points.push(IndexPoint {
                offset: last_offset,
                position,
                max_timestamp_so_far: scan.max_timestamp,
            });
            last_index_entry = scan.valid_bytes;
        }
        if entry.magic >= MAGIC_V2
            && let Some(header) = batch.header()
        {
            let epoch = header.partition_leader_epoch;
            if epoch >= 0 && scan.epochs.last().is_none_or(|(latest, _)| epoch > *latest) {
                scan.epochs.push((epoch, header.base_offset));
            }
        }
        visit(&ScannedBatch {
            position: entry.position,
            size: entry.size,
            last_offset,
            max_timestamp,
        });
        scan.valid_bytes += entry.size as u64;
        scan.batches += 1;
        scan.next_offset = last_offset + 1;
        if scan.valid_bytes - last_progress >= SCAN_CHUNK as u64 {
            last_progress = scan.valid_bytes;
            progress(scan.valid_bytes);
        }
    };
    progress(scan.valid_bytes);
    if scan.valid_bytes < log.size_in_bytes() {
        scan.invalid = Some(InvalidData {
            position: scan.valid_bytes,
            next_offset: scan.next_offset,
            reason: stop.unwrap_or_else(|| "the last batch is incomplete (torn write)".to_string()),
        });
    }
    Ok(scan)
}

/// Writes the entries of `scan` into empty indexes, ending with the final time-index entry, as
/// `LogSegment.recover` leaves them (the caller trims or closes them).
pub(crate) fn write_indexes(
    scan: &SegmentScan,
    offset_index: &mut OffsetIndex,
    time_index: &mut TimeIndex,
) -> Result<(), StorageError> {
    for point in &scan.index_points {
        offset_index.append(point.offset, point.position)?;
        time_index.maybe_append(
            point.max_timestamp_so_far.timestamp,
            point.max_timestamp_so_far.offset,
            false,
        )?;
    }
    time_index.maybe_append(
        scan.max_timestamp.timestamp,
        scan.max_timestamp.offset,
        true,
    )
}
