//! The producer-state snapshot file `<offset>.snapshot` (Kafka's `ProducerStateManager`
//! `writeSnapshot`/`readSnapshot`), the one implementation the broker and `dump-segment` share.
//!
//! Layout (big-endian): `version i16 = 1`, `crc u32` (CRC-32C of bytes 6..end), an
//! `i32`-counted array of 46-byte entries `producer_id i64, epoch i16, last_sequence i32,
//! last_offset i64, offset_delta i32, timestamp i64, coordinator_epoch i32,
//! current_txn_first_offset i64`. A producer without batch metadata has `last_sequence` -1,
//! `last_offset` -1 and `offset_delta` 0; no transaction in progress is
//! `current_txn_first_offset` -1. The offset in the file name is the log offset the state
//! covers: every batch below it is reflected, none at or above it.

use std::io::Write;
use std::path::Path;

use crate::protocol::record::batch::decrement_sequence;
use crate::protocol::record::big_endian::{i16_at, i32_at, i64_at};

use super::super::StorageError;

/// The snapshot format version Kafka 3.9 writes and reads.
pub const PRODUCER_SNAPSHOT_VERSION: i16 = 1;

/// One producer of a snapshot, as `ProducerStateEntry` persists it.
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
/// Bytes of one entry.
pub const ENTRY_SIZE: usize = 46;
/// Bytes before the first entry: version, crc, array count.
pub const HEADER_SIZE: usize = 10;
const UNDERFLOW: &str = "java.nio.BufferUnderflowException";

/// Parses a producer snapshot. The error is the message of Kafka's `CorruptSnapshotException`
/// (schema errors name the field that ran out, as Kafka's `Schema.read` does).
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
    if buf.len() < HEADER_SIZE {
        return Err(schema(format!(
            "Error reading field 'producer_entries': {UNDERFLOW}"
        )));
    }
    let count = i32_at(buf, 6);
    let remaining = buf.len() - HEADER_SIZE;
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
    let version = i16_at(buf, 0);
    if version != PRODUCER_SNAPSHOT_VERSION {
        return Err(format!(
            "Snapshot contained an unknown file version {version}"
        ));
    }
    let crc = u32::from_be_bytes([buf[2], buf[3], buf[4], buf[5]]);
    let computed = crc32c::crc32c(&buf[6..]);
    if crc != computed {
        return Err(format!(
            "Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"
        ));
    }
    Ok((0..count)
        .map(|i| {
            let e = &buf[HEADER_SIZE + i * ENTRY_SIZE..HEADER_SIZE + (i + 1) * ENTRY_SIZE];
            ProducerSnapshotEntry {
                producer_id: i64_at(e, 0),
                producer_epoch: i16_at(e, 8),
                last_sequence: i32_at(e, 10),
                last_offset: i64_at(e, 14),
                offset_delta: i32_at(e, 22),
                timestamp: i64_at(e, 26),
                coordinator_epoch: i32_at(e, 34),
                current_txn_first_offset: i64_at(e, 38),
            }
        })
        .collect())
}

/// The bytes of a snapshot holding `entries`, in the given order.
pub fn encode_snapshot(entries: &[ProducerSnapshotEntry]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(HEADER_SIZE + entries.len() * ENTRY_SIZE);
    buf.extend_from_slice(&PRODUCER_SNAPSHOT_VERSION.to_be_bytes());
    buf.extend_from_slice(&[0; 4]);
    let count = i32::try_from(entries.len()).unwrap_or(i32::MAX);
    buf.extend_from_slice(&count.to_be_bytes());
    for e in entries {
        buf.extend_from_slice(&e.producer_id.to_be_bytes());
        buf.extend_from_slice(&e.producer_epoch.to_be_bytes());
        buf.extend_from_slice(&e.last_sequence.to_be_bytes());
        buf.extend_from_slice(&e.last_offset.to_be_bytes());
        buf.extend_from_slice(&e.offset_delta.to_be_bytes());
        buf.extend_from_slice(&e.timestamp.to_be_bytes());
        buf.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
        buf.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
    }
    let crc = crc32c::crc32c(&buf[6..]);
    buf[2..6].copy_from_slice(&crc.to_be_bytes());
    buf
}

/// Writes a snapshot file as Kafka does: straight into `path` (created or truncated), fsynced
/// when `sync`. A torn write fails the CRC on load and the snapshot is then skipped.
pub fn write_snapshot(
    path: &Path,
    entries: &[ProducerSnapshotEntry],
    sync: bool,
) -> Result<(), StorageError> {
    let bytes = encode_snapshot(entries);
    let mut file = std::fs::File::create(path).map_err(|e| StorageError::io(path, e))?;
    file.write_all(&bytes)
        .map_err(|e| StorageError::io(path, e))?;
    if sync {
        file.sync_all().map_err(|e| StorageError::io(path, e))?;
    }
    Ok(())
}

/// An entry for the format's tests here and in `dump-segment`'s.
#[cfg(test)]
pub(crate) mod test_entries {
    use super::ProducerSnapshotEntry;

    pub(crate) const ENTRY: ProducerSnapshotEntry = ProducerSnapshotEntry {
        producer_id: 1000,
        producer_epoch: 3,
        last_sequence: 9,
        last_offset: 42,
        offset_delta: 4,
        timestamp: 1700000000000,
        coordinator_epoch: -1,
        current_txn_first_offset: -1,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::test_entries::ENTRY;

    #[test]
    fn golden_bytes_of_one_entry() {
        // Written field by field from ProducerStateManager's schema: version 1, CRC-32C over
        // everything after the CRC, count, then the 46-byte entry.
        let bytes = encode_snapshot(&[ENTRY]);
        let mut expected = vec![0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1];
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x03, 0xe8]); // producer id 1000
        expected.extend_from_slice(&[0, 3]); // epoch
        expected.extend_from_slice(&[0, 0, 0, 9]); // last sequence
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 42]); // last offset
        expected.extend_from_slice(&[0, 0, 0, 4]); // offset delta
        expected.extend_from_slice(&1700000000000i64.to_be_bytes()); // timestamp
        expected.extend_from_slice(&[0xff; 4]); // coordinator epoch -1
        expected.extend_from_slice(&[0xff; 8]); // no transaction
        let crc = crc32c::crc32c(&expected[6..]);
        expected[2..6].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(bytes, expected);
        assert_eq!(bytes.len(), HEADER_SIZE + ENTRY_SIZE);
    }

    #[test]
    fn empty_snapshot_is_ten_bytes() {
        let bytes = encode_snapshot(&[]);
        assert_eq!(bytes.len(), 10);
        assert_eq!(&bytes[..2], &[0, 1]);
        // CRC-32C of four zero bytes (the count).
        assert_eq!(
            u32::from_be_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]),
            crc32c::crc32c(&[0, 0, 0, 0])
        );
        assert_eq!(read_snapshot(&bytes).unwrap(), vec![]);
    }

    #[test]
    fn round_trips_and_first_sequence() {
        let other = ProducerSnapshotEntry {
            producer_id: 7,
            last_sequence: 2,
            offset_delta: 5,
            ..ENTRY
        };
        let entries = read_snapshot(&encode_snapshot(&[ENTRY, other])).unwrap();
        assert_eq!(entries, vec![ENTRY, other]);
        assert_eq!(entries[0].first_sequence(), 5);
        // 2 - 5 wraps below zero to i32::MAX - 2.
        assert_eq!(entries[1].first_sequence(), i32::MAX - 2);
    }

    #[test]
    fn corrupt_snapshots_get_kafkas_messages() {
        let mut buf = encode_snapshot(&[ENTRY]);
        buf[20] ^= 1;
        assert!(
            read_snapshot(&buf)
                .unwrap_err()
                .starts_with("Snapshot is corrupt (CRC is no longer valid)")
        );
        let buf = encode_snapshot(&[ENTRY]);
        assert_eq!(
            read_snapshot(&buf[..buf.len() - 3]).unwrap_err(),
            "Snapshot failed schema validation: Error reading field 'producer_entries': Error reading field 'current_txn_first_offset': java.nio.BufferUnderflowException"
        );
        assert_eq!(
            read_snapshot(&[0]).unwrap_err(),
            "Snapshot failed schema validation: Error reading field 'version': java.nio.BufferUnderflowException"
        );
        let mut v2 = encode_snapshot(&[]);
        v2[1] = 2;
        assert_eq!(
            read_snapshot(&v2).unwrap_err(),
            "Snapshot contained an unknown file version 2"
        );
    }
}
