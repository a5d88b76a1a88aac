//! Truncation of a partition log: a follower cutting its log back to the leader's
//! (`truncate_to`), a replica starting over at a new offset (`truncate_fully_and_start_at`),
//! and moving the log start offset forward (DeleteRecords, retention).

use super::UnifiedLog;
use crate::storage::StorageError;

impl UnifiedLog {
    /// Removes everything at and above `target_offset` (a follower truncating to the leader):
    /// the batches, the leader-epoch entries starting there or later, and the producer state
    /// they made (rebuilt from what is left). Returns whether any batch was removed.
    ///
    /// At or above the log end no batch goes, but the epoch entries starting at the log end
    /// still do, as in Kafka: a broker that became leader recorded its epoch's start at its
    /// log end and may have lost the leadership before writing in it, and a follower must not
    /// fetch claiming that epoch.
    pub fn truncate_to(&mut self, target_offset: i64, now_ms: i64) -> Result<bool, StorageError> {
        if target_offset < 0 {
            return Err(StorageError::InvalidTruncation {
                offset: target_offset,
            });
        }
        if target_offset >= self.log_end_offset() {
            self.leader_epoch_cache
                .truncate_from_end(self.log_end_offset())?;
            return Ok(false);
        }
        let first_base = self
            .local_log
            .segments()
            .first_segment_base_offset()
            .unwrap_or(0);
        if first_base > target_offset {
            self.truncate_fully_and_start_at(target_offset, now_ms)?;
            return Ok(true);
        }
        let next = self.local_log.truncate_to(target_offset, now_ms)?;
        self.leader_epoch_cache.truncate_from_end(next)?;
        self.log_start_offset = self.log_start_offset.min(next);
        self.update_log_end_offset(next);
        self.rebuild_producer_state_after_truncation(now_ms)?;
        Ok(true)
    }

    /// Deletes every segment and starts an empty log at `new_offset`.
    pub fn truncate_fully_and_start_at(
        &mut self,
        new_offset: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        self.local_log
            .truncate_fully_and_start_at(new_offset, now_ms)?;
        self.leader_epoch_cache.clear_and_flush()?;
        self.producer_state
            .truncate_fully_and_start_at(new_offset)?;
        self.log_start_offset = new_offset;
        self.update_log_end_offset(new_offset);
        self.high_watermark = self.local_log.log_end_offset_metadata();
        Ok(())
    }

    /// Raises the log start offset (DeleteRecords, or retention having deleted segments);
    /// never above the high watermark.
    pub fn maybe_increment_log_start_offset(
        &mut self,
        new_log_start_offset: i64,
    ) -> Result<bool, StorageError> {
        if new_log_start_offset > self.high_watermark() {
            return Err(StorageError::OffsetOutOfRange {
                topic_partition: self.topic_partition().clone(),
                offset: new_log_start_offset,
                log_start_offset: self.log_start_offset,
                log_end_offset: self.log_end_offset(),
            });
        }
        if new_log_start_offset <= self.log_start_offset {
            return Ok(false);
        }
        self.log_start_offset = new_log_start_offset;
        self.leader_epoch_cache
            .truncate_from_start(new_log_start_offset)?;
        self.producer_state
            .on_log_start_offset_incremented(new_log_start_offset);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::TopicPartition;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use crate::protocol::record::compression::CompressionType;
    use crate::storage::leader_epoch_cache::LeaderEpochFileCache;
    use crate::storage::log_config::LogConfig;
    use crate::storage::log_validator::AppendOrigin;
    use crate::storage::unified_log::UnifiedLog;

    const T: i64 = 1_700_000_000_000;

    fn open(dir: &std::path::Path) -> UnifiedLog {
        UnifiedLog::open(
            dir.join("t-0"),
            TopicPartition::new("t", 0),
            LogConfig::default(),
            0,
            0,
            true,
            T,
        )
        .unwrap()
    }

    fn append(log: &mut UnifiedLog, epoch: i32, producer_sequence: Option<i32>) {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        if let Some(sequence) = producer_sequence {
            b.producer_id = 9;
            b.producer_epoch = 0;
            b.base_sequence = sequence;
        }
        b.records.push(SimpleRecord::new(T, None, Some(vec![1; 8])));
        log.append_as_leader(&b.build().unwrap(), epoch, AppendOrigin::Client, T)
            .unwrap();
    }

    fn epochs(log: &UnifiedLog) -> Vec<(i32, i64)> {
        log.leader_epoch_cache()
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    }

    #[test]
    fn truncating_at_the_log_end_still_drops_an_epoch_started_there() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = open(dir.path());
        append(&mut log, 1, None);
        append(&mut log, 1, None);
        // Made leader at epoch 4, then follower before writing anything in it.
        log.maybe_assign_epoch_start_offset(4, 2).unwrap();
        assert_eq!(epochs(&log), vec![(1, 0), (4, 2)]);
        assert!(!log.truncate_to(2, T).unwrap(), "no batch removed");
        assert_eq!(epochs(&log), vec![(1, 0)]);
        let on_disk =
            LeaderEpochFileCache::read_entries(&log.dir().join("leader-epoch-checkpoint")).unwrap();
        assert_eq!(on_disk.len(), 1, "the checkpoint file too");
        assert!(!log.truncate_to(10, T).unwrap());
        assert_eq!(log.log_end_offset(), 2);
    }

    #[test]
    fn truncation_removes_the_epochs_and_the_producer_batches_above_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = open(dir.path());
        append(&mut log, 1, Some(0));
        append(&mut log, 1, Some(1));
        append(&mut log, 3, Some(2));
        append(&mut log, 3, Some(3));
        assert_eq!(epochs(&log), vec![(1, 0), (3, 2)]);
        assert!(log.truncate_to(2, T).unwrap());
        assert_eq!(log.log_end_offset(), 2);
        assert_eq!(epochs(&log), vec![(1, 0)]);
        // The producer's state is back at sequence 1: sequence 2 is next (a retry of 3 would
        // be out of order), and appending it again takes offset 2.
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.producer_id = 9;
        b.producer_epoch = 0;
        b.base_sequence = 3;
        b.records.push(SimpleRecord::new(T, None, Some(vec![1; 8])));
        assert!(
            log.append_as_leader(&b.build().unwrap(), 3, AppendOrigin::Client, T)
                .is_err(),
            "sequence 3 no longer follows the producer's last"
        );
        append(&mut log, 3, Some(2));
        assert_eq!(log.log_end_offset(), 3);
    }
}
