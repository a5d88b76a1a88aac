//! A partition's transactions (the transactional half of Kafka's `ProducerStateManager`): the
//! ongoing ones, by first offset, and the completed ones whose marker is not yet below the high
//! watermark, which together give the first unstable offset; the last stable offset of a
//! completed transaction, written with an aborted one into the segment's `.txnindex`.
//!
//! Invariants: a transaction is ongoing from its producer's first transactional batch until
//! its marker; it is then unreplicated until the high watermark passes its marker, and then
//! forgotten. The first unstable offset is the smallest first offset of either kind: no
//! read_committed consumer may read at or past it.

use std::collections::BTreeMap;

use crate::storage::transaction_index::AbortedTxn;

/// One transaction in the partition (Kafka's `TxnMetadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TxnMetadata {
    pub producer_id: i64,
    pub first_offset: i64,
    /// Its marker's offset, once completed.
    pub last_offset: Option<i64>,
}

/// A transaction a marker just ended (Kafka's `CompletedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// The marker's offset.
    pub last_offset: i64,
    pub is_aborted: bool,
}

impl CompletedTxn {
    /// Its `.txnindex` entry, with the partition's last stable offset when its marker was
    /// written.
    pub fn aborted_txn(&self, last_stable_offset: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: self.producer_id,
            first_offset: self.first_offset,
            last_offset: self.last_offset,
            last_stable_offset,
        }
    }
}

/// The partition's open and not yet replicated transactions; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct Transactions {
    ongoing: BTreeMap<i64, TxnMetadata>,
    unreplicated: BTreeMap<i64, TxnMetadata>,
}

impl Transactions {
    /// A producer's transaction began at `first_offset`.
    pub(crate) fn start(&mut self, producer_id: i64, first_offset: i64) {
        self.ongoing.insert(
            first_offset,
            TxnMetadata {
                producer_id,
                first_offset,
                last_offset: None,
            },
        );
    }

    /// Kafka's `lastStableOffset(completedTxn)`: the first offset of the earliest transaction
    /// of another producer still open, else the offset after the marker.
    pub(crate) fn last_stable_offset(&self, completed: &CompletedTxn) -> i64 {
        self.ongoing
            .values()
            .find(|t| t.producer_id != completed.producer_id)
            .map_or(completed.last_offset + 1, |t| t.first_offset)
    }

    /// Kafka's `completeTxn`: the transaction waits for the high watermark to pass its marker.
    /// A transaction this partition never saw start (its first batch below the log start) is
    /// only logged.
    pub(crate) fn complete(&mut self, completed: &CompletedTxn) {
        let Some(mut txn) = self.ongoing.remove(&completed.first_offset) else {
            tracing::warn!(
                producer_id = completed.producer_id,
                first_offset = completed.first_offset,
                "completing a transaction that was not started here"
            );
            return;
        };
        txn.last_offset = Some(completed.last_offset);
        self.unreplicated.insert(completed.first_offset, txn);
    }

    /// Kafka's `onHighWatermarkUpdated` (and `removeUnreplicatedTransactions`): the completed
    /// transactions whose marker is below `offset` are forgotten.
    pub(crate) fn on_high_watermark_updated(&mut self, offset: i64) {
        self.unreplicated
            .retain(|_, t| t.last_offset.is_none_or(|last| last >= offset));
    }

    /// Kafka's `firstUnstableOffset`.
    pub(crate) fn first_unstable_offset(&self) -> Option<i64> {
        let ongoing = self.ongoing.keys().next().copied();
        let unreplicated = self.unreplicated.keys().next().copied();
        match (ongoing, unreplicated) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.ongoing.clear();
        self.unreplicated.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(producer_id: i64, first: i64, last: i64) -> CompletedTxn {
        CompletedTxn {
            producer_id,
            first_offset: first,
            last_offset: last,
            is_aborted: true,
        }
    }

    #[test]
    fn the_first_unstable_offset_holds_until_the_marker_is_replicated() {
        let mut t = Transactions::default();
        assert_eq!(t.first_unstable_offset(), None);
        t.start(1, 10);
        t.start(2, 12);
        assert_eq!(t.first_unstable_offset(), Some(10));
        // Producer 1's marker at 15: producer 2's transaction is still open from 12.
        let c = completed(1, 10, 15);
        assert_eq!(t.last_stable_offset(&c), 12);
        t.complete(&c);
        assert_eq!(t.first_unstable_offset(), Some(10), "until replicated");
        t.on_high_watermark_updated(15);
        assert_eq!(t.first_unstable_offset(), Some(10));
        t.on_high_watermark_updated(16);
        assert_eq!(t.first_unstable_offset(), Some(12));
        // The last one open: the last stable offset follows its marker.
        let c = completed(2, 12, 20);
        assert_eq!(t.last_stable_offset(&c), 21);
        t.complete(&c);
        t.on_high_watermark_updated(21);
        assert_eq!(t.first_unstable_offset(), None);
        assert_eq!(c.aborted_txn(21).last_stable_offset, 21);
    }

    #[test]
    fn a_transaction_never_started_here_is_ignored() {
        let mut t = Transactions::default();
        t.complete(&completed(1, 3, 4));
        assert_eq!(t.first_unstable_offset(), None);
    }
}
