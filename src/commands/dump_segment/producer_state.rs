//! Dumping `.snapshot` (producer state, `ProducerStateManager.readSnapshot`) and `.txnindex`
//! (aborted transactions, `TransactionIndex.allAbortedTxns`) files with Kafka's lines and error
//! messages.
//!
//! Snapshot layout (big-endian): `version i16 = 1`, `crc u32` (CRC-32C of bytes 6..end), an
//! `i32`-counted array of 46-byte entries `producer_id i64, epoch i16, last_sequence i32,
//! last_offset i64, offset_delta i32, timestamp i64, coordinator_epoch i32,
//! current_txn_first_offset i64`. Transaction index: 34-byte entries `version i16 = 0,
//! producer_id i64, first_offset i64, last_offset i64, last_stable_offset i64`; a trailing
//! partial entry is ignored.

use super::segment::{be_i16, be_i32, be_i64, be_u32, decrement_sequence};

/// One producer of a snapshot, as `ProducerStateEntry` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerSnapshotEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub last_sequence: i32,
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    pub current_txn_first_offset: i64,
}

impl ProducerSnapshotEntry {
    /// Kafka's `BatchMetadata.firstSeq`.
    pub fn first_sequence(&self) -> i32 {
        decrement_sequence(self.last_sequence, self.offset_delta)
    }

    /// Kafka's text line (no newline); the trailing space is Kafka's when there is no batch
    /// metadata (`last_offset < 0`).
    pub fn kafka_line(&self) -> String {
        let txn = if self.current_txn_first_offset >= 0 {
            format!("OptionalLong[{}]", self.current_txn_first_offset)
        } else {
            "OptionalLong.empty".to_string()
        };
        let mut line = format!(
            "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {txn} lastTimestamp: {} ",
            self.producer_id, self.producer_epoch, self.coordinator_epoch, self.timestamp
        );
        if self.last_offset >= 0 {
            line.push_str(&format!(
                "firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
                self.first_sequence(),
                self.last_sequence,
                self.last_offset,
                self.offset_delta,
                self.timestamp
            ));
        }
        line
    }
}

const ENTRY_FIELDS: [(&str, usize); 8] = [
    ("producer_id", 8),
    ("epoch", 2),
    ("last_sequence", 4),
    ("last_offset", 8),
    ("offset_delta", 4),
    ("timestamp", 8),
    ("coordinator_epoch", 4),
    ("current_txn_first_offset", 8),
];
const ENTRY_SIZE: usize = 46;
const UNDERFLOW: &str = "java.nio.BufferUnderflowException";

/// Parses a producer snapshot. The error is the message of Kafka's `CorruptSnapshotException`.
pub fn read_snapshot(buf: &[u8]) -> Result<Vec<ProducerSnapshotEntry>, String> {
    let schema = |msg: String| format!("Snapshot failed schema validation: {msg}");
    if buf.len() < 2 {
        return Err(schema(format!(
            "Error reading field 'version': {UNDERFLOW}"
        )));
    }
    if buf.len() < 6 {
        return Err(schema(format!("Error reading field 'crc': {UNDERFLOW}")));
    }
    if buf.len() < 10 {
        return Err(schema(format!(
            "Error reading field 'producer_entries': {UNDERFLOW}"
        )));
    }
    let count = be_i32(buf, 6);
    let remaining = buf.len() - 10;
    if count < 0 {
        return Err(schema(format!(
            "Error reading field 'producer_entries': Array size {count} cannot be negative"
        )));
    }
    if count as usize > remaining {
        return Err(schema(format!(
            "Error reading field 'producer_entries': Error reading array of size {count}, only {remaining} bytes available"
        )));
    }
    let count = count as usize;
    if count * ENTRY_SIZE > remaining {
        // Find the field that ran out, as Schema.read names it.
        let mut avail = remaining - (remaining / ENTRY_SIZE) * ENTRY_SIZE;
        let mut field = ENTRY_FIELDS[0].0;
        for (name, size) in ENTRY_FIELDS {
            if avail < size {
                field = name;
                break;
            }
            avail -= size;
        }
        return Err(schema(format!(
            "Error reading field 'producer_entries': Error reading field '{field}': {UNDERFLOW}"
        )));
    }
    let version = be_i16(buf, 0);
    if version != 1 {
        return Err(format!(
            "Snapshot contained an unknown file version {version}"
        ));
    }
    let crc = be_u32(buf, 2);
    let computed = crc32c::crc32c(&buf[6..]);
    if crc != computed {
        return Err(format!(
            "Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"
        ));
    }
    Ok((0..count)
        .map(|i| {
            let e = &buf[10 + i * ENTRY_SIZE..10 + (i + 1) * ENTRY_SIZE];
            ProducerSnapshotEntry {
                producer_id: be_i64(e, 0),
                producer_epoch: be_i16(e, 8),
                last_sequence: be_i32(e, 10),
                last_offset: be_i64(e, 14),
                offset_delta: be_i32(e, 22),
                timestamp: be_i64(e, 26),
                coordinator_epoch: be_i32(e, 34),
                current_txn_first_offset: be_i64(e, 38),
            }
        })
        .collect())
}

/// One aborted transaction of a `.txnindex`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    pub version: i16,
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// Kafka's text line (no newline).
    pub fn kafka_line(&self) -> String {
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
pub fn read_txn_index(buf: &[u8]) -> (Vec<AbortedTxn>, Option<i16>) {
    let mut txns = Vec::with_capacity(buf.len() / 34);
    for e in buf.chunks_exact(34) {
        let version = be_i16(e, 0);
        if version > 0 {
            return (txns, Some(version));
        }
        txns.push(AbortedTxn {
            version,
            producer_id: be_i64(e, 2),
            first_offset: be_i64(e, 10),
            last_offset: be_i64(e, 18),
            last_stable_offset: be_i64(e, 26),
        });
    }
    (txns, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(entries: &[ProducerSnapshotEntry]) -> Vec<u8> {
        let mut body = (entries.len() as i32).to_be_bytes().to_vec();
        for e in entries {
            body.extend_from_slice(&e.producer_id.to_be_bytes());
            body.extend_from_slice(&e.producer_epoch.to_be_bytes());
            body.extend_from_slice(&e.last_sequence.to_be_bytes());
            body.extend_from_slice(&e.last_offset.to_be_bytes());
            body.extend_from_slice(&e.offset_delta.to_be_bytes());
            body.extend_from_slice(&e.timestamp.to_be_bytes());
            body.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
            body.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
        }
        let mut buf = 1i16.to_be_bytes().to_vec();
        buf.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
        buf.extend_from_slice(&body);
        buf
    }

    const ENTRY: ProducerSnapshotEntry = ProducerSnapshotEntry {
        producer_id: 1000,
        producer_epoch: 3,
        last_sequence: 9,
        last_offset: 42,
        offset_delta: 4,
        timestamp: 1700000000000,
        coordinator_epoch: -1,
        current_txn_first_offset: -1,
    };

    #[test]
    fn snapshot_round_trips_and_prints_like_kafka() {
        let entries = read_snapshot(&snapshot(&[ENTRY])).unwrap();
        assert_eq!(entries, vec![ENTRY]);
        assert_eq!(
            entries[0].kafka_line(),
            "producerId: 1000 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1700000000000 firstSequence: 5 lastSequence: 9 lastOffset: 42 offsetDelta: 4 timestamp: 1700000000000"
        );
    }

    #[test]
    fn corrupt_snapshots_get_kafkas_messages() {
        let mut buf = snapshot(&[ENTRY]);
        buf[20] ^= 1;
        assert!(
            read_snapshot(&buf)
                .unwrap_err()
                .starts_with("Snapshot is corrupt (CRC is no longer valid)")
        );
        let buf = snapshot(&[ENTRY]);
        assert_eq!(
            read_snapshot(&buf[..buf.len() - 3]).unwrap_err(),
            "Snapshot failed schema validation: Error reading field 'producer_entries': Error reading field 'current_txn_first_offset': java.nio.BufferUnderflowException"
        );
        assert_eq!(
            read_snapshot(&[0]).unwrap_err(),
            "Snapshot failed schema validation: Error reading field 'version': java.nio.BufferUnderflowException"
        );
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
