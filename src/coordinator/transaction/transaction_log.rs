//! The records of `__transaction_state` as Kafka 3.9 writes them (`TransactionLog`), and the
//! partition a transactional id maps to (`TransactionStateManager.partitionFor`).
//!
//! A key is `TransactionLogKey` v0 behind its int16 version: the transactional id. A value is
//! `TransactionLogValue` behind its version; a 3.9 cluster in ZooKeeper mode always writes v0
//! (v1 needs the `transaction.version` feature, which ZooKeeper mode does not have), and reads
//! v0 and v1. Its partitions are null exactly when the state is Empty, and grouped by topic
//! otherwise (an empty array once a transaction completed). A null value is a tombstone: the id
//! expired. A key of a version Kafka does not know is skipped when loading, as Kafka skips it.
//!
//! The producer id and epoch of the previous producer (`lastProducerId`, `lastProducerEpoch`)
//! are not written; after a load they are unknown (-1).

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::cluster::TopicPartition;
use crate::protocol::codec::{DecodeError, EncodeError, Message, StrBytes};
use crate::protocol::messages::transaction_log_key::TransactionLogKey;
use crate::protocol::messages::transaction_log_value::{PartitionsSchema, TransactionLogValue};

use super::transaction_state::{TransactionState, UnknownTransactionState};

/// The value version a Kafka 3.9 cluster in ZooKeeper mode writes.
pub(crate) const VALUE_VERSION: i16 = 0;

/// One transactional id's state as `__transaction_state` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TransactionLogEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub transaction_timeout_ms: i32,
    pub state: TransactionState,
    /// The partitions of the open transaction, in (topic, partition) order.
    pub partitions: Vec<TopicPartition>,
    /// When this state was entered.
    pub last_update_timestamp_ms: i64,
    /// When the transaction began (its first AddPartitionsToTxn); -1 when none is open.
    pub start_timestamp_ms: i64,
}

/// Why a `__transaction_state` record could not be read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TransactionLogError {
    #[error("undecodable __transaction_state record: {0}")]
    Decode(#[from] DecodeError),
    #[error("cannot encode a __transaction_state record: {0}")]
    Encode(#[from] EncodeError),
    #[error("__transaction_state record too short for its version")]
    Short,
    #[error("__transaction_state value of an unknown state: {0}")]
    State(#[from] UnknownTransactionState),
}

/// The key of `transactional_id`'s records.
pub(crate) fn key(transactional_id: &str) -> Result<Vec<u8>, TransactionLogError> {
    let key = TransactionLogKey {
        transactional_id: StrBytes::from(transactional_id),
    };
    Ok(key.encode_versioned(0)?.to_vec())
}

/// The value of `entry`, at the version a 3.9 cluster in ZooKeeper mode writes.
pub(crate) fn value(entry: &TransactionLogEntry) -> Result<Vec<u8>, TransactionLogError> {
    let partitions = (entry.state != TransactionState::Empty).then(|| {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in &entry.partitions {
            by_topic.entry(&tp.topic).or_default().push(tp.partition);
        }
        by_topic
            .into_iter()
            .map(|(topic, partition_ids)| PartitionsSchema {
                topic: StrBytes::from(topic),
                partition_ids,
                ..PartitionsSchema::default()
            })
            .collect()
    });
    let value = TransactionLogValue {
        producer_id: entry.producer_id,
        producer_epoch: entry.producer_epoch,
        transaction_timeout_ms: entry.transaction_timeout_ms,
        transaction_status: entry.state.id(),
        transaction_partitions: partitions,
        transaction_last_update_timestamp_ms: entry.last_update_timestamp_ms,
        transaction_start_timestamp_ms: entry.start_timestamp_ms,
        ..TransactionLogValue::default()
    };
    Ok(value.encode_versioned(VALUE_VERSION)?.to_vec())
}

/// Kafka's `readTxnRecordKey`: the transactional id, or `None` for a key version it does not
/// know (skipped).
pub(crate) fn read_key(key: &[u8]) -> Result<Option<String>, TransactionLogError> {
    let version = match key {
        [a, b, ..] => i16::from_be_bytes([*a, *b]),
        _ => return Err(TransactionLogError::Short),
    };
    if !TransactionLogKey::VERSIONS.contains(version) {
        return Ok(None);
    }
    let (_, k) = TransactionLogKey::decode_versioned(Bytes::copy_from_slice(key))?;
    Ok(Some(k.transactional_id.to_string_lossy().into_owned()))
}

/// Kafka's `readTxnRecordValue`: any version it knows; an unknown version or state is an error.
pub(crate) fn read_value(value: &[u8]) -> Result<TransactionLogEntry, TransactionLogError> {
    let (_, v) = TransactionLogValue::decode_versioned(Bytes::copy_from_slice(value))?;
    let mut partitions: Vec<TopicPartition> = v
        .transaction_partitions
        .unwrap_or_default()
        .into_iter()
        .flat_map(|p| {
            let topic = p.topic.to_string_lossy().into_owned();
            p.partition_ids
                .into_iter()
                .map(move |id| TopicPartition::new(topic.clone(), id))
        })
        .collect();
    partitions.sort();
    partitions.dedup();
    Ok(TransactionLogEntry {
        producer_id: v.producer_id,
        producer_epoch: v.producer_epoch,
        transaction_timeout_ms: v.transaction_timeout_ms,
        state: TransactionState::from_id(v.transaction_status)?,
        partitions,
        last_update_timestamp_ms: v.transaction_last_update_timestamp_ms,
        start_timestamp_ms: v.transaction_start_timestamp_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::super::super::internal_topic::partition_for;
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn entry(state: TransactionState, partitions: Vec<TopicPartition>) -> TransactionLogEntry {
        TransactionLogEntry {
            producer_id: 1000,
            producer_epoch: 3,
            transaction_timeout_ms: 60_000,
            state,
            partitions,
            last_update_timestamp_ms: 1_700_000_000_000,
            start_timestamp_ms: -1,
        }
    }

    #[test]
    fn transactional_ids_map_to_kafkas_partitions() {
        // Kafka's worked values: Java's String.hashCode, and Utils.abs taking MIN_VALUE to 0.
        assert_eq!(partition_for("my-txn", 50), 45);
        assert_eq!(partition_for("txn-0", 50), 9);
        assert_eq!(partition_for("polygenelubricants", 50), 0);
    }

    #[test]
    fn keys_and_values_are_kafkas_bytes() {
        let k = key("my-txn").unwrap();
        assert_eq!(hex(&k), "000000066d792d74786e");
        assert_eq!(read_key(&k).unwrap().as_deref(), Some("my-txn"));
        // The Empty value: 37 bytes, its partitions null (count -1).
        let empty = value(&entry(TransactionState::Empty, Vec::new())).unwrap();
        assert_eq!(empty.len(), 37);
        assert_eq!(
            hex(&empty),
            format!(
                "0000{:016x}0003{:08x}00ffffffff{:016x}ffffffffffffffff",
                1000, 60_000, 1_700_000_000_000_i64
            )
        );
        // Completed: an empty array, not null.
        let done = value(&entry(TransactionState::CompleteCommit, Vec::new())).unwrap();
        assert_eq!(&done[17..21], &[0, 0, 0, 0]);
    }

    #[test]
    fn values_round_trip_with_partitions_grouped_by_topic() {
        let open = entry(
            TransactionState::Ongoing,
            vec![
                TopicPartition::new("a", 1),
                TopicPartition::new("b", 0),
                TopicPartition::new("a", 3),
            ],
        );
        let bytes = value(&open).unwrap();
        let (_, raw) = TransactionLogValue::decode_versioned(Bytes::from(bytes.clone())).unwrap();
        let grouped: Vec<(String, Vec<i32>)> = raw
            .transaction_partitions
            .unwrap()
            .into_iter()
            .map(|p| (p.topic.to_string_lossy().into_owned(), p.partition_ids))
            .collect();
        assert_eq!(
            grouped,
            vec![("a".into(), vec![1, 3]), ("b".into(), vec![0])]
        );
        let back = read_value(&bytes).unwrap();
        let mut sorted = open.clone();
        sorted.partitions.sort();
        assert_eq!(back, sorted);
    }

    #[test]
    fn unknown_versions_and_states_are_kafkas_errors_or_skipped() {
        let mut future_key = key("t").unwrap();
        future_key[1] = 9;
        assert_eq!(read_key(&future_key).unwrap(), None);
        assert!(matches!(read_key(&[0]), Err(TransactionLogError::Short)));
        let mut bad_state = value(&entry(TransactionState::Empty, Vec::new())).unwrap();
        bad_state[16] = 9;
        assert!(matches!(
            read_value(&bad_state),
            Err(TransactionLogError::State(UnknownTransactionState {
                id: 9
            }))
        ));
        let mut future_value = value(&entry(TransactionState::Empty, Vec::new())).unwrap();
        future_value[1] = 2;
        assert!(matches!(
            read_value(&future_value),
            Err(TransactionLogError::Decode(_))
        ));
    }
}
