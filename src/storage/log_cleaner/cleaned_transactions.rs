//! What the cleaner knows of transactions while it walks a range of the log (Kafka's
//! `CleanedTransactionMetadata`): which producers' batches belong to aborted transactions, and
//! which markers may go.
//!
//! The aborted transactions of the range come from the `.txnindex` files (Kafka's
//! `collectAbortedTransactions`), ordered by first offset, and become "ongoing" as the walk
//! reaches their first offset. Then, batch by batch in offset order:
//!
//! - a transactional data batch of a producer with an ongoing aborted transaction is aborted
//!   data: the offset map skips its keys (an aborted record must not shadow a committed one)
//!   and the cleaning drops it; one of a producer without one belongs to a committed
//!   transaction;
//! - an ABORT marker ends its transaction. If the walk saw some of the transaction's data, the
//!   marker stays (a reader of an older copy of the log, or a follower, still needs to know the
//!   data was aborted) and its `.txnindex` entry goes to the cleaned segment; if it saw none
//!   (an earlier cleaning removed it), the marker may go;
//! - a COMMIT marker may go once none of its transaction's data is in the range;
//! - an empty control batch (its record cleaned before) may go.
//!
//! "May go" is not "goes": a marker is dropped only once its batch's delete horizon
//! (`delete.retention.ms` after the cleaning that found it removable, KIP-534) has passed, so a
//! consumer reading the log meanwhile still sees it.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::protocol::record::batch::RecordBatchHeader;
use crate::protocol::record::builder::ControlRecordType;
use crate::protocol::record::control::{ControlRecord, read_control_record};
use crate::storage::StorageError;
use crate::storage::replace_segments::LogSnapshot;
use crate::storage::transaction_index::AbortedTxn;

/// An aborted transaction the walk has reached.
#[derive(Debug, Clone, Copy)]
struct OngoingAborted {
    txn: AbortedTxn,
    /// The last offset of the last batch of it seen, if any was.
    last_observed_batch_offset: Option<i64>,
}

/// See the module doc.
#[derive(Debug, Default)]
pub(crate) struct CleanedTransactionMetadata {
    /// Not yet reached, by first offset.
    aborted: VecDeque<AbortedTxn>,
    ongoing_aborted: HashMap<i64, OngoingAborted>,
    ongoing_committed: HashSet<i64>,
    /// The `.txnindex` entries of the markers kept, in marker order.
    cleaned_index: Vec<AbortedTxn>,
}

impl CleanedTransactionMetadata {
    pub(crate) fn new(mut aborted: Vec<AbortedTxn>) -> Self {
        aborted.sort_by_key(|t| t.first_offset);
        CleanedTransactionMetadata {
            aborted: aborted.into(),
            ..Self::default()
        }
    }

    fn consume_aborted_txns_up_to(&mut self, offset: i64) {
        while let Some(txn) = self.aborted.front().copied() {
            if txn.first_offset > offset {
                break;
            }
            self.aborted.pop_front();
            self.ongoing_aborted
                .entry(txn.producer_id)
                .or_insert(OngoingAborted {
                    txn,
                    last_observed_batch_offset: None,
                });
        }
    }

    /// A data batch read (Kafka's `onBatchRead`): whether it is aborted data.
    pub(crate) fn on_batch_read(&mut self, header: &RecordBatchHeader) -> bool {
        self.consume_aborted_txns_up_to(header.last_offset());
        if !header.is_transactional() {
            return false;
        }
        match self.ongoing_aborted.get_mut(&header.producer_id) {
            Some(ongoing) => {
                ongoing.last_observed_batch_offset = Some(header.last_offset());
                true
            }
            None => {
                self.ongoing_committed.insert(header.producer_id);
                false
            }
        }
    }

    /// A control batch read (Kafka's `onControlBatchRead`): whether it may be discarded once
    /// its delete horizon passes.
    pub(crate) fn on_control_batch_read(
        &mut self,
        batch: &[u8],
        header: &RecordBatchHeader,
    ) -> Result<bool, StorageError> {
        self.consume_aborted_txns_up_to(header.last_offset());
        if header.records_count <= 0 {
            return Ok(true);
        }
        let producer_id = header.producer_id;
        let ControlRecord::EndTxn(marker) = read_control_record(batch, header)? else {
            return Ok(false);
        };
        Ok(match marker.kind {
            ControlRecordType::Abort => match self.ongoing_aborted.remove(&producer_id) {
                Some(OngoingAborted {
                    txn,
                    last_observed_batch_offset: Some(_),
                }) => {
                    self.cleaned_index.push(txn);
                    false
                }
                _ => true,
            },
            ControlRecordType::Commit => !self.ongoing_committed.remove(&producer_id),
        })
    }

    /// The `.txnindex` entries of the aborted transactions whose markers stay, for the cleaned
    /// segment.
    pub(crate) fn take_cleaned_index(&mut self) -> Vec<AbortedTxn> {
        std::mem::take(&mut self.cleaned_index)
    }
}

/// Kafka's `collectAbortedTransactions(start, upper)` over a snapshot's indexes: the aborted
/// transactions with data in `[start, upper)`, from the segment holding `start` on, until an
/// entry's last stable offset reaches `upper` (a transaction is indexed in its marker's
/// segment, which may come after its data's).
pub(crate) fn collect_aborted_transactions(
    log: &LogSnapshot,
    start: i64,
    upper: i64,
) -> Vec<AbortedTxn> {
    let from = log
        .segments
        .iter()
        .rposition(|s| s.base_offset <= start)
        .unwrap_or(0);
    let mut out = Vec::new();
    for segment in log.segments.iter().skip(from) {
        let mut complete = false;
        for txn in &segment.aborted_txns {
            if txn.last_offset >= start && txn.first_offset < upper {
                out.push(*txn);
            }
            complete |= txn.last_stable_offset >= upper;
        }
        if complete {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::batch::{CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK};
    use crate::protocol::record::builder::build_control_batch;

    fn header(pid: i64, base: i64, count: i32, attributes: i16) -> RecordBatchHeader {
        RecordBatchHeader {
            base_offset: base,
            batch_length: 100,
            partition_leader_epoch: 0,
            magic: 2,
            crc: 0,
            attributes,
            last_offset_delta: count - 1,
            base_timestamp: 0,
            max_timestamp: 0,
            producer_id: pid,
            producer_epoch: 0,
            base_sequence: 0,
            records_count: count,
        }
    }

    fn data(pid: i64, base: i64) -> RecordBatchHeader {
        header(pid, base, 1, TRANSACTIONAL_FLAG_MASK)
    }

    /// A marker batch of `kind` at `offset` and its header.
    fn marker(pid: i64, offset: i64, kind: ControlRecordType) -> (Vec<u8>, RecordBatchHeader) {
        let bytes = build_control_batch(kind, offset, 0, pid, 0, 5, 0).unwrap();
        let header = RecordBatchHeader::parse(&bytes).unwrap();
        assert_eq!(
            header.attributes & (CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK),
            CONTROL_FLAG_MASK | TRANSACTIONAL_FLAG_MASK
        );
        (bytes, header)
    }

    fn aborted(pid: i64, first: i64, last: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: last,
            last_stable_offset: first,
        }
    }

    #[test]
    fn aborted_data_is_found_and_its_marker_kept_and_indexed_while_data_was_seen() {
        // Producer 1 aborts [0, 2]; producer 2 commits [1, 3] around it.
        let txn = aborted(1, 0, 2);
        let mut m = CleanedTransactionMetadata::new(vec![txn]);
        assert!(m.on_batch_read(&data(1, 0)));
        assert!(!m.on_batch_read(&data(2, 1)));
        let (bytes, h) = marker(1, 2, ControlRecordType::Abort);
        assert!(
            !m.on_control_batch_read(&bytes, &h).unwrap(),
            "data was seen"
        );
        let (bytes, h) = marker(2, 3, ControlRecordType::Commit);
        assert!(
            !m.on_control_batch_read(&bytes, &h).unwrap(),
            "data was seen"
        );
        assert_eq!(m.take_cleaned_index(), vec![txn]);
        // A plain batch is never aborted data.
        assert!(!m.on_batch_read(&header(1, 4, 1, 0)));
    }

    #[test]
    fn markers_whose_data_is_gone_may_go_and_leave_no_index_entry() {
        let mut m = CleanedTransactionMetadata::new(vec![aborted(1, 0, 2)]);
        let (bytes, h) = marker(1, 2, ControlRecordType::Abort);
        assert!(m.on_control_batch_read(&bytes, &h).unwrap());
        let (bytes, h) = marker(2, 3, ControlRecordType::Commit);
        assert!(m.on_control_batch_read(&bytes, &h).unwrap());
        assert!(m.take_cleaned_index().is_empty());
        // An emptied control batch may go too.
        let mut empty = h;
        empty.records_count = 0;
        assert!(m.on_control_batch_read(&[], &empty).unwrap());
    }

    #[test]
    fn a_transaction_is_aborted_data_only_from_its_first_offset() {
        // Producer 1 commits at 0, then aborts [5, 6].
        let mut m = CleanedTransactionMetadata::new(vec![aborted(1, 5, 6)]);
        assert!(!m.on_batch_read(&data(1, 0)));
        let (bytes, h) = marker(1, 1, ControlRecordType::Commit);
        assert!(!m.on_control_batch_read(&bytes, &h).unwrap());
        assert!(m.on_batch_read(&data(1, 5)));
    }
}
