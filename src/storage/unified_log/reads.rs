//! Reads from a partition log: fetches bounded by the high watermark or the log end, and the
//! offset lookups of ListOffsets (special timestamps and the first record at or after a time).

use super::UnifiedLog;
use crate::protocol::record::batch::NO_TIMESTAMP;
use crate::storage::StorageError;
use crate::storage::leader_epoch_cache::LeaderEpochFileCache;
use crate::storage::log_reads::{
    EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, FetchIsolation, LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP, MAX_TIMESTAMP,
};
use crate::storage::log_segment::{FetchDataInfo, LogOffsetMetadata, TimestampAndOffset};
use crate::storage::transaction_index::AbortedTxn;

impl UnifiedLog {
    /// Up to `max_length` bytes of whole batches from the one holding `start_offset`, bounded by
    /// `isolation`. Reading at the bound returns nothing; reading below the log start or above
    /// the log end is `OffsetOutOfRange`.
    pub fn read(
        &self,
        start_offset: i64,
        max_length: usize,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<FetchDataInfo, StorageError> {
        let end = self.log_end_offset();
        let segments = self.local_log.segments();
        let first_base = segments.first_segment_base_offset().unwrap_or(0);
        if start_offset > end || start_offset < self.log_start_offset || start_offset < first_base {
            return Err(StorageError::OffsetOutOfRange {
                topic_partition: self.topic_partition().clone(),
                offset: start_offset,
                log_start_offset: self.log_start_offset,
                log_end_offset: end,
            });
        }
        let max_offset_metadata = match isolation {
            FetchIsolation::LogEnd => self.local_log.log_end_offset_metadata(),
            FetchIsolation::HighWatermark => self.high_watermark,
            FetchIsolation::TxnCommitted => {
                let last_stable = self.last_stable_offset();
                if last_stable == self.high_watermark.message_offset {
                    self.high_watermark
                } else {
                    self.convert_to_offset_metadata(last_stable)?
                }
            }
        };
        if start_offset >= max_offset_metadata.message_offset {
            let metadata = self.convert_to_offset_metadata(start_offset)?;
            return self.empty_fetch(metadata);
        }
        for segment in segments.values_from(start_offset) {
            let max_position = if max_offset_metadata.segment_base_offset == segment.base_offset() {
                max_offset_metadata.relative_position_in_segment
            } else {
                segment.size()
            };
            if let Some(info) =
                segment.read(start_offset, max_length, max_position, min_one_message)?
            {
                return Ok(info);
            }
        }
        self.empty_fetch(self.local_log.log_end_offset_metadata())
    }

    /// Kafka's `collectAbortedTransactions`: the aborted transactions that end at or after
    /// `start_offset` and begin before `upper_bound_offset`, from the `.txnindex` of the segment
    /// holding `start_offset` on, until an entry shows no later one can matter (its last stable
    /// offset reached the bound). A transaction is indexed in its marker's segment, which may
    /// begin past the bound, so segments are not cut off by their base offset.
    pub fn collect_aborted_transactions(
        &self,
        start_offset: i64,
        upper_bound_offset: i64,
    ) -> Vec<AbortedTxn> {
        let mut aborted = Vec::new();
        for segment in self.local_log.segments().values_from(start_offset) {
            let found = segment
                .txn_index()
                .collect_aborted_txns(start_offset, upper_bound_offset);
            aborted.extend(found.aborted);
            if found.complete {
                break;
            }
        }
        aborted
    }

    fn empty_fetch(&self, metadata: LogOffsetMetadata) -> Result<FetchDataInfo, StorageError> {
        let active = self.active_segment()?;
        Ok(FetchDataInfo {
            fetch_offset_metadata: metadata,
            records: active.log().slice(active.size(), 0)?,
            first_entry_incomplete: false,
        })
    }

    /// ListOffsets: the offset for `target_timestamp`, either a special value (earliest,
    /// latest, max timestamp, earliest local, latest tiered) or the first record at or after a
    /// timestamp. `None` when no record is that late.
    pub fn fetch_offset_by_timestamp(
        &mut self,
        target_timestamp: i64,
    ) -> Result<Option<TimestampAndOffset>, StorageError> {
        match target_timestamp {
            EARLIEST_TIMESTAMP | EARLIEST_LOCAL_TIMESTAMP => {
                let offset = self.log_start_offset;
                Ok(Some(TimestampAndOffset {
                    timestamp: NO_TIMESTAMP,
                    offset,
                    leader_epoch: epoch_for_offset(&self.leader_epoch_cache, offset),
                }))
            }
            LATEST_TIMESTAMP => {
                let offset = self.log_end_offset();
                Ok(Some(TimestampAndOffset {
                    timestamp: NO_TIMESTAMP,
                    offset,
                    leader_epoch: self.leader_epoch_cache.latest_epoch(),
                }))
            }
            LATEST_TIERED_TIMESTAMP => Ok(Some(TimestampAndOffset {
                timestamp: NO_TIMESTAMP,
                offset: -1,
                leader_epoch: None,
            })),
            MAX_TIMESTAMP => self.offset_of_max_timestamp(),
            _ => {
                let start = self.log_start_offset;
                for segment in self.local_log.segments_mut().values_mut() {
                    if segment.largest_timestamp()? >= target_timestamp {
                        return segment.find_offset_by_timestamp(target_timestamp, start);
                    }
                }
                Ok(None)
            }
        }
    }

    /// The record with the largest timestamp (the first of them), as ListOffsets' MAX_TIMESTAMP
    /// answers it in Kafka 3.9.
    fn offset_of_max_timestamp(&mut self) -> Result<Option<TimestampAndOffset>, StorageError> {
        let mut best: Option<(i64, i64)> = None;
        for segment in self.local_log.segments_mut().values_mut() {
            let ts = segment.max_timestamp_so_far();
            if ts >= 0 && best.is_none_or(|(best_ts, _)| ts > best_ts) {
                best = Some((ts, segment.base_offset()));
            }
        }
        let Some((timestamp, base)) = best else {
            return Ok(None);
        };
        let start = self.log_start_offset;
        match self.local_log.segments().get(base) {
            Some(segment) => segment.find_offset_by_timestamp(timestamp, start),
            None => Ok(None),
        }
    }
}

/// The epoch of the leader that wrote `offset`: the last cache entry starting at or below it.
fn epoch_for_offset(cache: &LeaderEpochFileCache, offset: i64) -> Option<i32> {
    cache
        .entries()
        .iter()
        .take_while(|entry| entry.start_offset <= offset)
        .last()
        .map(|entry| entry.epoch)
}
