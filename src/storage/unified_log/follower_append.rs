//! A follower's appends: the leader's batches taken as they are (offsets, leader epochs, CRCs
//! untouched), from a buffer ([`UnifiedLog::append_as_follower`]) or written in place from a
//! [`RecordsSource`] ([`UnifiedLog::append_as_follower_from`]).
//!
//! In place, the bytes go into the active segment's file just past its end before anything
//! checks them, then are read back and checked exactly as a buffer is (whole batches, CRC-32C,
//! offsets increasing from the log end). Only then do they become part of the segment; a failed
//! check cuts them off again, so the log end never covers bytes that were not checked. Bytes
//! past the segment's end are invisible to readers (every read is bounded by the segment's
//! size), and the caller holds the log's lock throughout, so no append interleaves. Should the
//! broker die in between, recovery treats them as the torn tail of an append: checked on load,
//! and kept only if whole, as a follower that died right after an ordinary append.
//!
//! An append that would roll the segment takes the ordinary path with the bytes read back, so
//! the new segment starts at the first batch's offset as in Kafka's `maybeRoll`.

use std::io::IoSlice;

use crate::protocol::record::batch::{NO_TIMESTAMP, RecordBatchHeader};
use crate::protocol::record::batch_iter::BatchIter;
use crate::protocol::record::control::EndTxnMarker;
use crate::storage::StorageError;
use crate::storage::producer_state;
use crate::storage::records_source::RecordsSource;

use super::{LogAppendInfo, UnifiedLog};

/// The whole batches at the start of a follower's buffer, checked (Kafka's
/// `analyzeAndValidateRecords` for a replica).
#[derive(Debug)]
struct FollowerBatches {
    first_offset: i64,
    last_offset: i64,
    max_timestamp: i64,
    shallow_offset_of_max_timestamp: i64,
    /// `(partition_leader_epoch, base_offset)` of each batch, in order.
    epochs: Vec<(i32, i64)>,
    /// The headers of batches with a producer id, and the transaction marker of each that is
    /// one, for the producer state.
    producer_batches: Vec<(RecordBatchHeader, Option<EndTxnMarker>)>,
    records_count: usize,
    /// The bytes the whole batches take; a partial batch after them is not appended.
    valid_bytes: usize,
}

impl UnifiedLog {
    /// Appends batches replicated from the leader, offsets and epochs as they are. They must be
    /// intact (CRC) and their offsets must increase from the log end on.
    pub fn append_as_follower(
        &mut self,
        records: &[u8],
        now_ms: i64,
    ) -> Result<LogAppendInfo, StorageError> {
        let Some(batches) = self.analyze_follower_batches(records)? else {
            return Ok(self.nothing_appended());
        };
        self.check_batch_fits_segment(batches.valid_bytes)?;
        self.maybe_roll(
            batches.valid_bytes,
            batches.max_timestamp,
            batches.first_offset,
            batches.last_offset,
            now_ms,
        )?;
        let slices = [IoSlice::new(&records[..batches.valid_bytes])];
        self.active_segment_mut()?.append(
            batches.last_offset,
            batches.max_timestamp,
            batches.shallow_offset_of_max_timestamp,
            &slices,
        )?;
        self.complete_follower_append(batches, now_ms)
    }

    /// [`append_as_follower`](Self::append_as_follower) for records that write themselves into
    /// the active segment (see the module doc). `scratch` is where they are read back for the
    /// checks; it keeps its allocation for the next call.
    pub fn append_as_follower_from(
        &mut self,
        source: &mut dyn RecordsSource,
        scratch: &mut Vec<u8>,
        now_ms: i64,
    ) -> Result<LogAppendInfo, StorageError> {
        let len = source.len();
        if len == 0 {
            return Ok(self.nothing_appended());
        }
        let segment_bytes = u64::try_from(self.config().segment_bytes).unwrap_or(0);
        if self.active_segment_mut()?.size() + len as u64 > segment_bytes {
            // A roll by size: the new segment's base offset is the first batch's.
            scratch.clear();
            source
                .read_into(scratch)
                .map_err(|source| StorageError::RecordsSource {
                    topic_partition: self.topic_partition().clone(),
                    source,
                })?;
            return self.append_as_follower(scratch, now_ms);
        }
        if scratch.len() < len {
            scratch.resize(len, 0);
        }
        let written = &mut scratch[..len];
        {
            let active = self.active_segment_mut()?;
            active.write_past_end(len as u64, |file, position| source.write_to(file, position))?;
            if let Err(err) = active.read_past_end(written) {
                let _ = active.discard_written();
                return Err(err);
            }
        }
        let batches = match self.analyze_follower_batches(written) {
            Ok(Some(batches)) => batches,
            Ok(None) => {
                self.active_segment_mut()?.discard_written()?;
                return Ok(self.nothing_appended());
            }
            Err(err) => {
                self.active_segment_mut()?.discard_written()?;
                return Err(err);
            }
        };
        let params = self.roll_params(
            batches.valid_bytes,
            batches.max_timestamp,
            batches.last_offset,
            now_ms,
        );
        let active = self.active_segment_mut()?;
        if active.should_roll(&params)? {
            active.discard_written()?;
            return self.append_as_follower(&scratch[..len], now_ms);
        }
        if let Err(err) = active.append_written(
            batches.last_offset,
            batches.max_timestamp,
            batches.shallow_offset_of_max_timestamp,
            batches.valid_bytes,
            len,
        ) {
            let _ = active.discard_written();
            return Err(err);
        }
        self.complete_follower_append(batches, now_ms)
    }

    /// Walks the whole batches at the start of `records`; `None` when there is none.
    fn analyze_follower_batches(
        &self,
        records: &[u8],
    ) -> Result<Option<FollowerBatches>, StorageError> {
        let mut iter = BatchIter::new(records);
        let mut first_offset = None;
        let mut last_offset = self.log_end_offset() - 1;
        let mut max_timestamp = NO_TIMESTAMP;
        let mut shallow_offset_of_max_timestamp = last_offset;
        let mut epochs = Vec::new();
        let mut producer_batches = Vec::new();
        let mut records_count = 0usize;
        for entry in iter.by_ref() {
            let entry = entry?;
            if !entry.is_valid() {
                return Err(StorageError::CorruptBatch {
                    topic_partition: self.topic_partition().clone(),
                    position: entry.position,
                });
            }
            let base = entry.base_offset();
            if base <= last_offset {
                return Err(StorageError::OffsetsOutOfOrder {
                    topic_partition: self.topic_partition().clone(),
                    offset: base,
                    log_end_offset: last_offset + 1,
                });
            }
            first_offset.get_or_insert(base);
            last_offset = entry.last_offset();
            if entry.max_timestamp() > max_timestamp {
                max_timestamp = entry.max_timestamp();
                shallow_offset_of_max_timestamp = last_offset;
            }
            if let Some(header) = entry.header() {
                records_count += usize::try_from(header.records_count).unwrap_or(0);
                epochs.push((header.partition_leader_epoch, header.base_offset));
                if header.has_producer_id() {
                    let marker = producer_state::end_txn_marker(entry.bytes, &header)?;
                    producer_batches.push((header, marker));
                }
            }
        }
        let valid_bytes = iter.position();
        Ok(first_offset.map(|first_offset| FollowerBatches {
            first_offset,
            last_offset,
            max_timestamp,
            shallow_offset_of_max_timestamp,
            epochs,
            producer_batches,
            records_count,
            valid_bytes,
        }))
    }

    /// What follows the bytes of a follower's append into the segment: the leader-epoch cache,
    /// the producer state, the log end, the flush policy.
    fn complete_follower_append(
        &mut self,
        batches: FollowerBatches,
        now_ms: i64,
    ) -> Result<LogAppendInfo, StorageError> {
        for (epoch, base) in batches.epochs {
            if epoch >= 0 {
                self.leader_epoch_cache.assign(epoch, base)?;
            }
        }
        for (header, marker) in &batches.producer_batches {
            if let Some(completed) = self.producer_state.apply_batch(
                header,
                header.base_offset,
                header.last_offset(),
                *marker,
            ) {
                self.complete_txn(&completed)?;
            }
        }
        self.producer_state
            .update_map_end_offset(batches.last_offset + 1);
        self.update_log_end_offset(batches.last_offset + 1);
        self.after_append(batches.records_count, now_ms)?;
        Ok(LogAppendInfo {
            first_offset: batches.first_offset,
            last_offset: batches.last_offset,
            max_timestamp: batches.max_timestamp,
            shallow_offset_of_max_timestamp: batches.shallow_offset_of_max_timestamp,
            log_append_time: NO_TIMESTAMP,
            log_start_offset: self.log_start_offset,
            records_count: batches.records_count,
            valid_bytes: batches.valid_bytes,
        })
    }
}
