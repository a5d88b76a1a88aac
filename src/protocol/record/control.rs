//! The record of a control batch (Kafka's `ControlRecordType` and `EndTransactionMarker`): its
//! key is `{version: i16, type: i16}`; an ABORT (0) or COMMIT (1) marker's value is
//! `{version: i16, coordinator_epoch: i32}`. As Kafka reads them, a version above 0 is read as
//! version 0 (later versions only append fields) and a negative one is refused; other types
//! (LEADER_CHANGE and KRaft's) are reported as such, with no marker.

use super::batch::RecordBatchHeader;
use super::builder::ControlRecordType;
use super::error::RecordError;
use super::records::{batch_records, read_record};

/// A transaction marker: the outcome it writes and the coordinator epoch that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTxnMarker {
    pub kind: ControlRecordType,
    pub coordinator_epoch: i32,
}

impl EndTxnMarker {
    pub fn is_commit(&self) -> bool {
        self.kind == ControlRecordType::Commit
    }
}

/// What a control batch holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlRecord {
    EndTxn(EndTxnMarker),
    /// Another control type (2: LEADER_CHANGE, 3-6: KRaft's), not a transaction's end.
    Other(i16),
}

fn be_i16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Reads the first record of the control batch `batch` (its header `header`).
pub fn read_control_record(
    batch: &[u8],
    header: &RecordBatchHeader,
) -> Result<ControlRecord, RecordError> {
    let corrupt = |why: &str| RecordError::corrupt(0, format!("control record: {why}"));
    // A control batch is never compressed by Kafka; a compressed one is inflated within the
    // size of one small record.
    let records = batch_records(batch, header, 1 << 16)?;
    let mut pos = 0;
    let record = read_record(&records, &mut pos)?;
    let key = record.key.ok_or_else(|| corrupt("no key"))?;
    let version = be_i16(key, 0).ok_or_else(|| corrupt("key too short"))?;
    if version < 0 {
        return Err(corrupt("negative key version"));
    }
    let kind = match be_i16(key, 2).ok_or_else(|| corrupt("key too short"))? {
        0 => ControlRecordType::Abort,
        1 => ControlRecordType::Commit,
        other => return Ok(ControlRecord::Other(other)),
    };
    let value = record
        .value
        .ok_or_else(|| corrupt("marker without a value"))?;
    let value_version = be_i16(value, 0).ok_or_else(|| corrupt("marker value too short"))?;
    if value_version < 0 {
        return Err(corrupt("negative marker value version"));
    }
    let coordinator_epoch = be_i32(value, 2).ok_or_else(|| corrupt("marker value too short"))?;
    Ok(ControlRecord::EndTxn(EndTxnMarker {
        kind,
        coordinator_epoch,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord, build_control_batch};

    fn control(key: Vec<u8>, value: Option<Vec<u8>>) -> Vec<u8> {
        let mut b =
            RecordBatchBuilder::new(crate::protocol::record::compression::CompressionType::None);
        b.is_control = true;
        b.is_transactional = true;
        b.producer_id = 5;
        b.producer_epoch = 1;
        b.records.push(SimpleRecord::new(0, Some(key), value));
        b.build().unwrap()
    }

    fn read(batch: &[u8]) -> Result<ControlRecord, RecordError> {
        read_control_record(batch, &RecordBatchHeader::parse(batch).unwrap())
    }

    #[test]
    fn markers_read_back_with_their_coordinator_epoch() {
        for (kind, commit) in [
            (ControlRecordType::Commit, true),
            (ControlRecordType::Abort, false),
        ] {
            let batch = build_control_batch(kind, 0, 0, 5, 1, 17, 10).unwrap();
            let ControlRecord::EndTxn(m) = read(&batch).unwrap() else {
                panic!("a marker");
            };
            assert_eq!(
                (m.kind, m.coordinator_epoch, m.is_commit()),
                (kind, 17, commit)
            );
        }
    }

    #[test]
    fn later_versions_read_as_v0_and_negative_ones_or_short_records_are_refused() {
        let v1 = control(
            [0, 1, 0, 1].to_vec(),
            Some([0, 3, 0, 0, 0, 9, 0xff, 0xff].to_vec()),
        );
        assert_eq!(
            read(&v1).unwrap(),
            ControlRecord::EndTxn(EndTxnMarker {
                kind: ControlRecordType::Commit,
                coordinator_epoch: 9
            })
        );
        assert_eq!(
            read(&control([0, 0, 0, 2].to_vec(), None)).unwrap(),
            ControlRecord::Other(2)
        );
        assert!(read(&control([0xff, 0xff, 0, 1].to_vec(), Some([0; 6].to_vec()))).is_err());
        assert!(read(&control([0, 0, 0, 1].to_vec(), Some([0; 3].to_vec()))).is_err());
        assert!(read(&control([0, 0].to_vec(), None)).is_err());
    }
}
