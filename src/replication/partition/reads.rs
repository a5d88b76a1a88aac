//! The read side of a [`Partition`] on its leader: fetches (with the diverging-epoch check of
//! truncation on fetch), ListOffsets, DeleteRecords and OffsetForLeaderEpoch, each checked
//! against the leader epoch the client last saw. Only a consumer's fetch with client metadata
//! (KIP-392) is also served by a follower; ListOffsets and OffsetForLeaderEpoch stay on the
//! leader, as in Kafka.

use crate::cluster::BrokerId;
use crate::cluster::sync::lock;
use crate::protocol::record::batch::NO_TIMESTAMP;
use crate::storage::leader_epoch_cache::{UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET};
use crate::storage::log_reads::{
    EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, FetchIsolation, LATEST_TIMESTAMP,
};
use crate::storage::log_segment::TimestampAndOffset;
use crate::storage::unified_log::UnifiedLog;

use super::{EpochEndOffset, LogReadResult, Partition, offsets_of};
use crate::replication::error::PartitionError;

impl Partition {
    /// Kafka's `readRecords` for a consumer (up to the high watermark) or a follower (up to the
    /// log end). With `fetch_only_leader` off (a consumer that sent client metadata, Fetch
    /// v11+) a follower's replica serves the read too, up to its own high watermark: an offset
    /// between it and the log end reads nothing, one past the log end is OFFSET_OUT_OF_RANGE,
    /// as from Kafka's `UnifiedLog.read`.
    ///
    /// With a `last_fetched_epoch` (Fetch v12+: the epoch of the last batch the fetcher holds),
    /// the fetcher's log is first checked against this leader's epochs: when this leader's end
    /// of that epoch is below the fetch offset, or this leader never had that epoch, nothing is
    /// read and the answer carries the [`EpochEndOffset`] the fetcher truncates to. An epoch
    /// this leader cannot place, or a fetch offset below the log start, is OFFSET_OUT_OF_RANGE
    /// (the fetcher then resets with ListOffsets).
    // Kafka's `readRecords` parameters, one for one.
    #[allow(clippy::too_many_arguments)]
    pub fn read_records(
        &self,
        fetch_offset: i64,
        current_leader_epoch: i32,
        last_fetched_epoch: Option<i32>,
        max_bytes: usize,
        isolation: FetchIsolation,
        min_one_message: bool,
        fetch_only_leader: bool,
    ) -> Result<LogReadResult, PartitionError> {
        self.local_state(current_leader_epoch, fetch_only_leader)?;
        let log = lock(&self.log);
        if let Some(epoch) = last_fetched_epoch
            && let Some(diverging) = self.diverging_epoch(&log, fetch_offset, epoch)?
        {
            // Kafka's `FetchDataInfo.empty`: no records, the offsets as they were.
            let empty = log.read(log.log_end_offset(), 0, FetchIsolation::LogEnd, false);
            let empty = self.checked(&log, empty)?;
            return Ok(LogReadResult {
                records: empty.records,
                offsets: offsets_of(&log),
                first_entry_incomplete: false,
                diverging_epoch: Some(diverging),
                aborted_transactions: None,
            });
        }
        let read = log.read(fetch_offset, max_bytes, isolation, min_one_message);
        let info = self.checked(&log, read)?;
        let offsets = offsets_of(&log);
        // Every aborted transaction the read's records may hold: those ending at or after the
        // fetch offset and beginning below the last stable offset, which bounds the read (a
        // superset of Kafka's per-segment bound; a client ignores the ones it reads no batch
        // of).
        let aborted_transactions = (isolation == FetchIsolation::TxnCommitted)
            .then(|| log.collect_aborted_transactions(fetch_offset, offsets.last_stable_offset));
        Ok(LogReadResult {
            records: info.records,
            offsets,
            first_entry_incomplete: info.first_entry_incomplete,
            diverging_epoch: None,
            aborted_transactions,
        })
    }

    /// Kafka's `activeProducerState` (DescribeProducers): every producer the partition's state
    /// holds, leader or follower.
    pub fn active_producers(&self) -> Vec<crate::storage::producer_state::ProducerStateEntry> {
        lock(&self.log)
            .producer_state()
            .active_producers()
            .cloned()
            .collect()
    }

    /// The divergence check of Kafka's `readRecords`: this leader's end of the largest epoch
    /// `<= last_fetched_epoch` (`endOffsetFor`); the fetcher diverged when that epoch is older
    /// than its own or ends below its fetch offset.
    fn diverging_epoch(
        &self,
        log: &UnifiedLog,
        fetch_offset: i64,
        last_fetched_epoch: i32,
    ) -> Result<Option<EpochEndOffset>, PartitionError> {
        let (epoch, end_offset) = log
            .leader_epoch_cache()
            .end_offset_for(last_fetched_epoch, log.log_end_offset());
        if epoch == UNDEFINED_EPOCH || end_offset == UNDEFINED_EPOCH_OFFSET {
            return Err(PartitionError::OffsetOutOfRange(format!(
                "could not determine the end offset of the last fetched epoch \
                 {last_fetched_epoch} of {}",
                self.topic_partition
            )));
        }
        // Below the log start the fetcher must reset, whether or not the epochs diverge.
        if fetch_offset < log.log_start_offset() {
            return Err(PartitionError::OffsetOutOfRange(format!(
                "received a request for offset {fetch_offset} of {}, but the log holds \
                 {} to {}",
                self.topic_partition,
                log.log_start_offset(),
                log.log_end_offset()
            )));
        }
        Ok(
            (epoch < last_fetched_epoch || end_offset < fetch_offset).then_some(EpochEndOffset {
                leader_epoch: epoch,
                end_offset,
            }),
        )
    }

    /// Kafka's `followerReplicaOrThrow`, checked before a follower's read: a fetch from a
    /// broker that is not an assigned replica (or is this one) is NOT_LEADER_OR_FOLLOWER.
    pub fn check_follower_replica(&self, follower_id: BrokerId) -> Result<(), PartitionError> {
        let state = lock(&self.state);
        if follower_id == self.local_broker_id || !state.assignment.contains(&follower_id) {
            return Err(PartitionError::NotLeaderOrFollower {
                topic_partition: self.topic_partition.clone(),
                broker_id: self.local_broker_id,
            });
        }
        Ok(())
    }

    /// ListOffsets on the leader. A client's request (`isolation` set) sees the high watermark
    /// (read_committed: the last stable offset) as the latest offset and never an offset above
    /// it; a replica's (`None`) sees the log end. While a new leader's high watermark lags the
    /// start of its epoch, a client's request for the latest offset, or for a timestamp found
    /// at or past the last fetchable offset, is OFFSET_NOT_AVAILABLE (Kafka's
    /// `fetchOffsetForTimestamp`): what the previous leader acknowledged may not be readable
    /// here yet.
    pub fn fetch_offset_for_timestamp(
        &self,
        timestamp: i64,
        isolation: Option<FetchIsolation>,
        current_leader_epoch: i32,
    ) -> Result<Option<TimestampAndOffset>, PartitionError> {
        let state = self.leader_state(current_leader_epoch)?;
        let mut log = lock(&self.log);
        let last_fetchable = match isolation {
            Some(FetchIsolation::HighWatermark) => log.high_watermark(),
            Some(FetchIsolation::TxnCommitted) => log.last_stable_offset(),
            Some(FetchIsolation::LogEnd) | None => log.log_end_offset(),
        };
        let not_available = state
            .leader_epoch_start_offset
            .filter(|start| isolation.is_some() && *start > log.high_watermark())
            .map(|epoch_start| PartitionError::OffsetNotAvailable {
                topic_partition: self.topic_partition.clone(),
                leader_epoch: state.leader_and_isr.leader_epoch,
                high_watermark: log.high_watermark(),
                epoch_start,
            });
        match timestamp {
            // Kafka answers "latest" with the current leader epoch, not the epoch of the record.
            LATEST_TIMESTAMP => match not_available {
                Some(e) => Err(e),
                None => Ok(Some(TimestampAndOffset {
                    timestamp: NO_TIMESTAMP,
                    offset: last_fetchable,
                    leader_epoch: Some(state.leader_and_isr.leader_epoch),
                })),
            },
            EARLIEST_TIMESTAMP | EARLIEST_LOCAL_TIMESTAMP => {
                Ok(log.fetch_offset_by_timestamp(timestamp)?)
            }
            // Records a consumer may not read yet are not found by a search.
            _ => match log
                .fetch_offset_by_timestamp(timestamp)?
                .filter(|t| t.offset < last_fetchable)
            {
                Some(found) => Ok(Some(found)),
                None => not_available.map_or(Ok(None), Err),
            },
        }
    }

    /// DeleteRecords: raises the log start offset to `offset` (-1: the high watermark) and
    /// returns the new low watermark. Refused on a topic whose cleanup policy lacks `delete`.
    pub fn delete_records_on_leader(&self, offset: i64) -> Result<i64, PartitionError> {
        self.leader_state(-1)?;
        let low_watermark = {
            let mut log = lock(&self.log);
            if !log.config().cleanup_policy.delete {
                return Err(PartitionError::PolicyViolation(format!(
                    "Records of partition {} can not be deleted due to the configured policy",
                    self.topic_partition
                )));
            }
            let target = if offset == -1 {
                log.high_watermark()
            } else {
                offset
            };
            if target < 0 || target > log.high_watermark() {
                return Err(PartitionError::OffsetOutOfRange(format!(
                    "cannot increment the log start offset of {} to {target}: it is outside [0, {}] (the high watermark)",
                    self.topic_partition,
                    log.high_watermark()
                )));
            }
            log.maybe_increment_log_start_offset(target)?;
            log.log_start_offset()
        };
        self.wake_waiters();
        Ok(low_watermark)
    }

    /// OffsetForLeaderEpoch: the end offset of `leader_epoch` on this leader, as
    /// `(epoch, end_offset)`; `(-1, -1)` when the epoch is unknown.
    pub fn last_offset_for_leader_epoch(
        &self,
        current_leader_epoch: i32,
        leader_epoch: i32,
    ) -> Result<(i32, i64), PartitionError> {
        self.leader_state(current_leader_epoch)?;
        let log = lock(&self.log);
        Ok(log
            .leader_epoch_cache()
            .end_offset_for(leader_epoch, log.log_end_offset()))
    }

    /// The latest epoch of the local log's leader-epoch cache (Kafka's `UnifiedLog.latestEpoch`):
    /// what a follower sends as `LastFetchedEpoch`. `None` for a log without epochs.
    pub fn latest_epoch(&self) -> Option<i32> {
        lock(&self.log).leader_epoch_cache().latest_epoch()
    }

    /// Kafka's `UnifiedLog.endOffsetForEpoch` on the local log, for a follower placing a
    /// leader's diverging epoch: the largest local epoch `<= leader_epoch` and where it ends
    /// here, as `(epoch, end_offset)`; `None` when the log has no such epoch.
    pub fn end_offset_for_epoch(&self, leader_epoch: i32) -> Option<(i32, i64)> {
        let log = lock(&self.log);
        let (epoch, end_offset) = log
            .leader_epoch_cache()
            .end_offset_for(leader_epoch, log.log_end_offset());
        (end_offset != UNDEFINED_EPOCH_OFFSET).then_some((epoch, end_offset))
    }
}

#[cfg(test)]
mod tests;
