//! The read side of a [`Partition`] on its leader: fetches, ListOffsets, DeleteRecords and
//! OffsetForLeaderEpoch, each checked against the leader epoch the client last saw.

use crate::cluster::sync::lock;
use crate::protocol::record::batch::NO_TIMESTAMP;
use crate::storage::log_reads::{
    EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, FetchIsolation, LATEST_TIMESTAMP,
};
use crate::storage::log_segment::TimestampAndOffset;

use super::{LogReadResult, Partition, offsets_of};
use crate::replication::error::PartitionError;

impl Partition {
    /// Kafka's `readRecords` for a consumer (up to the high watermark) or a follower (up to the
    /// log end).
    pub fn read_records(
        &self,
        fetch_offset: i64,
        current_leader_epoch: i32,
        max_bytes: usize,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<LogReadResult, PartitionError> {
        self.leader_state(current_leader_epoch)?;
        let log = lock(&self.log);
        let read = log.read(fetch_offset, max_bytes, isolation, min_one_message);
        let info = self.checked(&log, read)?;
        Ok(LogReadResult {
            records: info.records,
            offsets: offsets_of(&log),
            first_entry_incomplete: info.first_entry_incomplete,
        })
    }

    /// ListOffsets on the leader. Consumers (`isolation` = high watermark) see the high
    /// watermark as the latest offset and never an offset above it.
    pub fn fetch_offset_for_timestamp(
        &self,
        timestamp: i64,
        isolation: FetchIsolation,
        current_leader_epoch: i32,
    ) -> Result<Option<TimestampAndOffset>, PartitionError> {
        let state = self.leader_state(current_leader_epoch)?;
        let mut log = lock(&self.log);
        let last_fetchable = match isolation {
            FetchIsolation::HighWatermark => log.high_watermark(),
            FetchIsolation::LogEnd => log.log_end_offset(),
        };
        match timestamp {
            // Kafka answers "latest" with the current leader epoch, not the epoch of the record.
            LATEST_TIMESTAMP => Ok(Some(TimestampAndOffset {
                timestamp: NO_TIMESTAMP,
                offset: last_fetchable,
                leader_epoch: Some(state.leader_and_isr.leader_epoch),
            })),
            EARLIEST_TIMESTAMP | EARLIEST_LOCAL_TIMESTAMP => {
                Ok(log.fetch_offset_by_timestamp(timestamp)?)
            }
            // Records a consumer may not read yet are not found by a search.
            _ => Ok(log
                .fetch_offset_by_timestamp(timestamp)?
                .filter(|t| t.offset < last_fetchable)),
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
}
