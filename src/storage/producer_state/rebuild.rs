//! Rebuilding a partition's producer state from its snapshot and segments (Kafka 3.9's
//! `UnifiedLog.rebuildProducerState`), at load and after a truncation.
//!
//! - No snapshot and a clean shutdown (a log written before producer state existed, Kafka's
//!   upgrade path): nothing is replayed; empty snapshots are written at the base offsets of the
//!   last two segments and at the log end, so a later truncation need not scan the whole log.
//! - Otherwise: the snapshots out of range are deleted, the newest one left is loaded, and the
//!   batches from its offset to `last_offset` are replayed from their 61-byte headers (no record
//!   is decoded), taking snapshots at the last two segments' base offsets on the way and one at
//!   `last_offset` at the end. With no snapshot at all, that replays from the log start.

use crate::protocol::record::batch::{MAGIC_V2, RecordBatchHeader};

use super::super::StorageError;
use super::super::log_segment::LogSegment;
use super::super::log_segments::LogSegments;
use super::super::transaction_index::AbortedTxn;
use super::manager::ProducerStateManager;

/// Bytes read per `pread` while replaying a segment.
const REPLAY_CHUNK: usize = 64 * 1024;

/// Brings `state` to `last_offset` from its snapshots and `segments`; see the module doc.
pub(crate) fn rebuild_producer_state(
    state: &mut ProducerStateManager,
    segments: &LogSegments,
    log_start_offset: i64,
    last_offset: i64,
    reload_from_clean_shutdown: bool,
    now_ms: i64,
) -> Result<(), StorageError> {
    let offsets_to_snapshot: Vec<i64> = match segments.last_segment().map(LogSegment::base_offset) {
        Some(last_base) => {
            let mut offsets: Vec<i64> = segments
                .lower_segment(last_base)
                .map(LogSegment::base_offset)
                .into_iter()
                .collect();
            offsets.push(last_base);
            offsets.push(last_offset);
            offsets
        }
        None => vec![last_offset],
    };
    if state.latest_snapshot_offset().is_none() && reload_from_clean_shutdown {
        for offset in offsets_to_snapshot {
            state.update_map_end_offset(offset);
            state.take_snapshot(true)?;
        }
        return Ok(());
    }
    let empty_before_truncation = state.is_empty() && state.map_end_offset() >= last_offset;
    state.truncate_and_reload(log_start_offset, last_offset, now_ms)?;
    if last_offset > state.map_end_offset() && !empty_before_truncation {
        let from = state.map_end_offset();
        let last_segment_base = segments
            .floor_segment(last_offset)
            .map(LogSegment::base_offset);
        for segment in segments.values_in(from, last_offset) {
            let base = segment.base_offset();
            let start_offset = base.max(state.map_end_offset()).max(log_start_offset);
            state.update_map_end_offset(start_offset);
            if offsets_to_snapshot.contains(&base) {
                state.take_snapshot(true)?;
            }
            let max_position = if Some(base) == last_segment_base {
                segment
                    .translate_offset(last_offset, 0)?
                    .map_or(segment.size(), |p| p.position)
            } else {
                segment.size()
            };
            replay_segment(state, segment, start_offset, max_position)?;
        }
    }
    state.update_map_end_offset(last_offset);
    state.take_snapshot(true)?;
    Ok(())
}

/// Applies the batches of `segment` from the one holding `start_offset` up to byte
/// `max_position` (`loadProducersFromRecords`, origin replication); each transaction a marker
/// ends is completed. Returns the aborted ones, as the segment's `.txnindex` records them (what
/// a recovery writes again).
pub(crate) fn replay_segment(
    state: &mut ProducerStateManager,
    segment: &LogSegment,
    start_offset: i64,
    max_position: u64,
) -> Result<Vec<AbortedTxn>, StorageError> {
    let mut aborted = Vec::new();
    let Some(start) = segment.translate_offset(start_offset, 0)? else {
        return Ok(aborted);
    };
    let mut scanner = segment.log().scanner(start.position, REPLAY_CHUNK);
    while scanner.position() < max_position {
        let Some(entry) = scanner.next_entry(false)? else {
            break;
        };
        if entry.magic < MAGIC_V2 {
            continue;
        }
        let header = RecordBatchHeader::parse(entry.bytes)?;
        if header.has_producer_id() {
            // The scan reads headers only; a marker's one record is read on its own.
            let marker = if header.is_control() {
                let mut whole = vec![0u8; entry.size];
                segment.log().read_at(&mut whole, entry.position)?;
                super::end_txn_marker(&whole, &header)?
            } else {
                None
            };
            if let Some(completed) =
                state.apply_batch(&header, header.base_offset, header.last_offset(), marker)
            {
                if completed.is_aborted {
                    aborted.push(completed.aborted_txn(state.last_stable_offset(&completed)));
                }
                state.complete_txn(&completed);
            }
        }
    }
    Ok(aborted)
}
