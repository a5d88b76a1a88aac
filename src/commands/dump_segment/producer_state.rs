//! Dumping `.snapshot` (producer state) and `.txnindex` (aborted transactions,
//! `TransactionIndex.allAbortedTxns`) files with Kafka's lines and error messages. The snapshot
//! format itself is `storage::producer_state::snapshot`'s, shared with the broker. Transaction index: 34-byte entries `version i16 = 0,
//! producer_id i64, first_offset i64, last_offset i64, last_stable_offset i64`; a trailing
//! partial entry is ignored.

use crate::protocol::record::big_endian::{i16_at, i64_at};

pub(crate) use crate::storage::producer_state::snapshot::{ProducerSnapshotEntry, read_snapshot};

/// Kafka's text line for a snapshot entry (no newline); the trailing space is Kafka's when
/// there is no batch metadata (`last_offset < 0`).
pub(crate) fn snapshot_line(e: &ProducerSnapshotEntry) -> String {
    let txn = if e.current_txn_first_offset >= 0 {
        format!("OptionalLong[{}]", e.current_txn_first_offset)
    } else {
        "OptionalLong.empty".to_string()
    };
    let mut line = format!(
        "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {txn} lastTimestamp: {} ",
        e.producer_id, e.producer_epoch, e.coordinator_epoch, e.timestamp
    );
    if e.last_offset >= 0 {
        line.push_str(&format!(
            "firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
            e.first_sequence(),
            e.last_sequence,
            e.last_offset,
            e.offset_delta,
            e.timestamp
        ));
    }
    line
}

/// One aborted transaction of a `.txnindex`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AbortedTxn {
    pub version: i16,
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// Kafka's text line (no newline).
    pub(crate) fn kafka_line(&self) -> String {
        format!(
            "version: {} producerId: {} firstOffset: {} lastOffset: {} lastStableOffset: {}",
            self.version,
            self.producer_id,
            self.first_offset,
            self.last_offset,
            self.last_stable_offset
        )
    }
}

/// The whole entries of a transaction index; stops with an error at an entry whose version is
/// newer than 0, as Kafka does (the entries before it are returned with the error).
pub(crate) fn read_txn_index(buf: &[u8]) -> (Vec<AbortedTxn>, Option<i16>) {
    let mut txns = Vec::with_capacity(buf.len() / 34);
    for e in buf.chunks_exact(34) {
        let version = i16_at(e, 0);
        if version > 0 {
            return (txns, Some(version));
        }
        txns.push(AbortedTxn {
            version,
            producer_id: i64_at(e, 2),
            first_offset: i64_at(e, 10),
            last_offset: i64_at(e, 18),
            last_stable_offset: i64_at(e, 26),
        });
    }
    (txns, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::producer_state::snapshot::encode_snapshot;

    use crate::storage::producer_state::snapshot::test_entries::ENTRY;

    #[test]
    fn snapshot_round_trips_and_prints_like_kafka() {
        let entries = read_snapshot(&encode_snapshot(&[ENTRY])).unwrap();
        assert_eq!(entries, vec![ENTRY]);
        assert_eq!(
            snapshot_line(&entries[0]),
            "producerId: 1000 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1700000000000 firstSequence: 5 lastSequence: 9 lastOffset: 42 offsetDelta: 4 timestamp: 1700000000000"
        );
        let empty = ProducerSnapshotEntry {
            last_sequence: -1,
            last_offset: -1,
            offset_delta: 0,
            ..ENTRY
        };
        assert!(snapshot_line(&empty).ends_with("lastTimestamp: 1700000000000 "));
    }

    #[test]
    fn txn_index_entries_and_future_versions() {
        let mut buf = Vec::new();
        for v in [0i16, 1] {
            buf.extend_from_slice(&v.to_be_bytes());
            for x in [7i64, 10, 20, 5] {
                buf.extend_from_slice(&x.to_be_bytes());
            }
        }
        let (txns, bad) = read_txn_index(&buf);
        assert_eq!(txns.len(), 1);
        assert_eq!(bad, Some(1));
        assert_eq!(
            txns[0].kafka_line(),
            "version: 0 producerId: 7 firstOffset: 10 lastOffset: 20 lastStableOffset: 5"
        );
    }
}
