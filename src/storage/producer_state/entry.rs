//! One producer's state in one partition (Kafka's `ProducerStateEntry` and `BatchMetadata`):
//! its epoch and the metadata of its last five batches, which is what a retried batch is
//! recognised by.

use std::collections::VecDeque;

use crate::protocol::record::batch::{
    NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP, decrement_sequence,
};

use super::snapshot::ProducerSnapshotEntry;

/// `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`: the Java producer keeps at most five batches in
/// flight per partition, so a retry is always one of the last five.
pub const NUM_BATCHES_TO_RETAIN: usize = 5;

/// Kafka's `BatchMetadata`: one appended batch of a producer, by its last sequence and last
/// offset; the first ones are `offset_delta` before (sequences wrapping at `i32::MAX`).
/// `timestamp` is the batch's max timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMetadata {
    pub last_seq: i32,
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
}

impl BatchMetadata {
    pub fn first_seq(&self) -> i32 {
        decrement_sequence(self.last_seq, self.offset_delta)
    }

    pub fn first_offset(&self) -> i64 {
        self.last_offset - i64::from(self.offset_delta)
    }
}

/// Kafka's `ProducerStateEntry`. Invariants: `batch_metadata` holds at most
/// [`NUM_BATCHES_TO_RETAIN`] batches, oldest first, all of `producer_epoch` (an epoch change
/// clears it); `last_timestamp` is the max timestamp of the newest batch or marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerStateEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub batch_metadata: VecDeque<BatchMetadata>,
    /// The transaction coordinator's epoch of the last marker (-1: none).
    pub coordinator_epoch: i32,
    pub last_timestamp: i64,
    /// First offset of the transaction in progress (only ever set by replicated transactional
    /// batches: kcli leaders refuse transactions).
    pub current_txn_first_offset: Option<i64>,
}

impl ProducerStateEntry {
    /// `ProducerStateEntry.empty`: a producer not seen before.
    pub fn empty(producer_id: i64) -> Self {
        ProducerStateEntry {
            producer_id,
            producer_epoch: NO_PRODUCER_EPOCH,
            batch_metadata: VecDeque::new(),
            coordinator_epoch: -1,
            last_timestamp: NO_TIMESTAMP,
            current_txn_first_offset: None,
        }
    }

    /// The entry a snapshot restores: only the newest batch survives a snapshot.
    pub fn from_snapshot(e: &ProducerSnapshotEntry) -> Self {
        let mut entry = ProducerStateEntry {
            producer_id: e.producer_id,
            producer_epoch: e.producer_epoch,
            batch_metadata: VecDeque::new(),
            coordinator_epoch: e.coordinator_epoch,
            last_timestamp: e.timestamp,
            current_txn_first_offset: (e.current_txn_first_offset >= 0)
                .then_some(e.current_txn_first_offset),
        };
        if e.last_offset >= 0 {
            entry.batch_metadata.push_back(BatchMetadata {
                last_seq: e.last_sequence,
                last_offset: e.last_offset,
                offset_delta: e.offset_delta,
                timestamp: e.timestamp,
            });
        }
        entry
    }

    /// What a snapshot keeps of this entry.
    pub fn to_snapshot(&self) -> ProducerSnapshotEntry {
        ProducerSnapshotEntry {
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            last_sequence: self.last_seq(),
            last_offset: self.last_data_offset(),
            offset_delta: self.last_offset_delta(),
            timestamp: self.last_timestamp,
            coordinator_epoch: self.coordinator_epoch,
            current_txn_first_offset: self.current_txn_first_offset.unwrap_or(-1),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.batch_metadata.is_empty()
    }

    pub fn first_seq(&self) -> i32 {
        self.batch_metadata
            .front()
            .map_or(NO_SEQUENCE, BatchMetadata::first_seq)
    }

    pub fn last_seq(&self) -> i32 {
        self.batch_metadata
            .back()
            .map_or(NO_SEQUENCE, |b| b.last_seq)
    }

    pub fn last_data_offset(&self) -> i64 {
        self.batch_metadata.back().map_or(-1, |b| b.last_offset)
    }

    pub fn last_offset_delta(&self) -> i32 {
        self.batch_metadata.back().map_or(0, |b| b.offset_delta)
    }

    /// A new epoch forgets the old epoch's batches. Returns whether the epoch changed.
    pub fn maybe_update_producer_epoch(&mut self, producer_epoch: i16) -> bool {
        if self.producer_epoch != producer_epoch {
            self.batch_metadata.clear();
            self.producer_epoch = producer_epoch;
            true
        } else {
            false
        }
    }

    /// Records an appended batch, dropping the oldest beyond five.
    pub fn add_batch(
        &mut self,
        producer_epoch: i16,
        last_seq: i32,
        last_offset: i64,
        offset_delta: i32,
        timestamp: i64,
    ) {
        self.maybe_update_producer_epoch(producer_epoch);
        if self.batch_metadata.len() == NUM_BATCHES_TO_RETAIN {
            self.batch_metadata.pop_front();
        }
        self.batch_metadata.push_back(BatchMetadata {
            last_seq,
            last_offset,
            offset_delta,
            timestamp,
        });
        self.last_timestamp = timestamp;
    }

    /// `findDuplicateBatch`: the retained batch of the same epoch with exactly this sequence
    /// range, if any.
    pub fn find_duplicate_batch(
        &self,
        producer_epoch: i16,
        first_seq: i32,
        last_seq: i32,
    ) -> Option<BatchMetadata> {
        if producer_epoch != self.producer_epoch {
            return None;
        }
        self.batch_metadata
            .iter()
            .find(|b| b.first_seq() == first_seq && b.last_seq == last_seq)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_five_batches_of_the_current_epoch() {
        let mut e = ProducerStateEntry::empty(1);
        for i in 0..7 {
            e.add_batch(0, i * 2 + 1, i64::from(i) * 2 + 1, 1, 100 + i64::from(i));
        }
        assert_eq!(e.batch_metadata.len(), 5);
        assert_eq!(e.first_seq(), 4);
        assert_eq!(e.last_seq(), 13);
        assert_eq!(e.last_timestamp, 106);
        assert!(e.find_duplicate_batch(0, 12, 13).is_some());
        assert!(e.find_duplicate_batch(0, 0, 1).is_none(), "evicted");
        assert!(e.find_duplicate_batch(1, 12, 13).is_none(), "other epoch");
        assert!(e.find_duplicate_batch(0, 12, 12).is_none(), "other range");
        e.add_batch(1, 0, 20, 0, 200);
        assert_eq!(e.batch_metadata.len(), 1);
        assert_eq!(e.producer_epoch, 1);
    }

    #[test]
    fn snapshot_keeps_the_newest_batch() {
        let mut e = ProducerStateEntry::empty(9);
        e.add_batch(2, 4, 10, 4, 50);
        e.add_batch(2, 9, 15, 4, 60);
        let s = e.to_snapshot();
        assert_eq!(
            (s.last_sequence, s.last_offset, s.offset_delta, s.timestamp),
            (9, 15, 4, 60)
        );
        let back = ProducerStateEntry::from_snapshot(&s);
        assert_eq!(back.batch_metadata.len(), 1);
        assert_eq!(back.batch_metadata[0].first_offset(), 11);
        assert_eq!(back.first_seq(), 5);
        let empty = ProducerStateEntry::empty(3).to_snapshot();
        assert_eq!(
            (empty.last_sequence, empty.last_offset, empty.offset_delta),
            (-1, -1, 0)
        );
        assert!(ProducerStateEntry::from_snapshot(&empty).is_empty());
    }
}
