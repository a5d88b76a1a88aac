//! The records of `__consumer_offsets` as Kafka 3.9 writes them (`GroupMetadataManager`'s
//! companion: `offsetCommitKey`, `offsetCommitValue`, `groupMetadataKey`, `groupMetadataValue`,
//! `readMessageKey`), and the coordinator partition of a group (`partitionFor`).
//!
//! Every key and value is an int16 version followed by the message at that version. The key's
//! version is the record type: 0 and 1 an offset commit (`OffsetCommitKey`, Kafka writes 1), 2 the
//! group's metadata (`GroupMetadataKey`); other versions (KIP-848's records) are skipped when
//! loading. Values: `OffsetCommitValue` v3, or v1 when the commit carries an explicit expire
//! timestamp (OffsetCommit v2-4 with a retention time); `GroupMetadataValue` v3. A null value
//! is a tombstone.

use bytes::Bytes;

use crate::cluster::TopicPartition;
use crate::protocol::codec::{DecodeError, EncodeError, Message, StrBytes};
use crate::protocol::messages::group_metadata_key::GroupMetadataKey;
use crate::protocol::messages::group_metadata_value::GroupMetadataValue;
use crate::protocol::messages::offset_commit_key::OffsetCommitKey;
use crate::protocol::messages::offset_commit_value::OffsetCommitValue;

/// The key version Kafka 3.9 writes for offset commits.
pub const OFFSET_COMMIT_KEY_VERSION: i16 = 1;
/// The key version (record type) of group metadata.
pub const GROUP_METADATA_KEY_VERSION: i16 = 2;
/// The group metadata value version of IBP 2.3+.
pub const GROUP_METADATA_VALUE_VERSION: i16 = 3;

pub use super::super::internal_topic::{java_string_hash, partition_for};

/// A committed offset as the coordinator keeps it (Kafka's `OffsetAndMetadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetAndMetadata {
    pub committed_offset: i64,
    /// -1 when unknown (Kafka's empty `OptionalInt`).
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp_ms: i64,
    /// Set only by OffsetCommit v2-4 with a retention time: the old per-offset expiry.
    pub expire_timestamp_ms: Option<i64>,
}

/// A decoded `__consumer_offsets` key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffsetsKey {
    Offset {
        group: String,
        topic_partition: TopicPartition,
    },
    GroupMetadata {
        group: String,
    },
    /// A record type this coordinator does not read (KIP-848 records); skipped.
    Unknown(i16),
}

/// Why a record of the offsets topic could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum OffsetsRecordError {
    #[error("undecodable __consumer_offsets record: {0}")]
    Decode(#[from] DecodeError),
    #[error("cannot encode a __consumer_offsets record: {0}")]
    Encode(#[from] EncodeError),
    #[error("__consumer_offsets record too short for its version")]
    Short,
}

fn s(v: &str) -> StrBytes {
    StrBytes::from(v)
}

pub fn offset_commit_key(group: &str, tp: &TopicPartition) -> Result<Vec<u8>, EncodeError> {
    let key = OffsetCommitKey {
        group: s(group),
        topic: s(&tp.topic),
        partition: tp.partition,
    };
    Ok(key.encode_versioned(OFFSET_COMMIT_KEY_VERSION)?.to_vec())
}

pub fn group_metadata_key(group: &str) -> Result<Vec<u8>, EncodeError> {
    let key = GroupMetadataKey { group: s(group) };
    Ok(key.encode_versioned(GROUP_METADATA_KEY_VERSION)?.to_vec())
}

/// Kafka's `offsetCommitValue` at IBP 3.9: v1 with an expire timestamp, else v3.
pub fn offset_commit_value(o: &OffsetAndMetadata) -> Result<Vec<u8>, EncodeError> {
    let version = if o.expire_timestamp_ms.is_some() {
        1
    } else {
        3
    };
    let value = OffsetCommitValue {
        offset: o.committed_offset,
        leader_epoch: o.leader_epoch,
        metadata: s(&o.metadata),
        commit_timestamp: o.commit_timestamp_ms,
        expire_timestamp: o.expire_timestamp_ms.unwrap_or(-1),
        ..OffsetCommitValue::default()
    };
    Ok(value.encode_versioned(version)?.to_vec())
}

pub fn group_metadata_value(value: &GroupMetadataValue) -> Result<Vec<u8>, EncodeError> {
    Ok(value
        .encode_versioned(GROUP_METADATA_VALUE_VERSION)?
        .to_vec())
}

/// Kafka's `readMessageKey`.
pub fn read_key(key: &[u8]) -> Result<OffsetsKey, OffsetsRecordError> {
    let version = match key {
        [a, b, ..] => i16::from_be_bytes([*a, *b]),
        _ => return Err(OffsetsRecordError::Short),
    };
    let bytes = Bytes::copy_from_slice(key);
    match version {
        0 | 1 => {
            let (_, k) = OffsetCommitKey::decode_versioned(bytes)?;
            Ok(OffsetsKey::Offset {
                group: k.group.to_string_lossy().into_owned(),
                topic_partition: TopicPartition::new(k.topic.to_string_lossy(), k.partition),
            })
        }
        GROUP_METADATA_KEY_VERSION => {
            let (_, k) = GroupMetadataKey::decode_versioned(bytes)?;
            Ok(OffsetsKey::GroupMetadata {
                group: k.group.to_string_lossy().into_owned(),
            })
        }
        other => Ok(OffsetsKey::Unknown(other)),
    }
}

/// Kafka's `readOffsetMessageValue`: any version 0-4.
pub fn read_offset_value(value: &[u8]) -> Result<OffsetAndMetadata, OffsetsRecordError> {
    let (version, v) = OffsetCommitValue::decode_versioned(Bytes::copy_from_slice(value))?;
    Ok(OffsetAndMetadata {
        committed_offset: v.offset,
        leader_epoch: if version >= 3 { v.leader_epoch } else { -1 },
        metadata: v.metadata.to_string_lossy().into_owned(),
        commit_timestamp_ms: v.commit_timestamp,
        expire_timestamp_ms: (version == 1 && v.expire_timestamp != -1)
            .then_some(v.expire_timestamp),
    })
}

/// Kafka's `readGroupMessageValue`: any version 0-4.
pub fn read_group_value(value: &[u8]) -> Result<GroupMetadataValue, OffsetsRecordError> {
    let (_, v) = GroupMetadataValue::decode_versioned(Bytes::copy_from_slice(value))?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::group_metadata_value::MemberMetadata;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn partition_for_matches_kafka() {
        // Values of Java's String.hashCode (jshell, JDK 17).
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("my-group"), -1_906_497_762);
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        assert_eq!(java_string_hash("test-group-ü€😀"), -335_701_188);
        assert_eq!(java_string_hash("console-consumer-12345"), 158_455_506);
        assert_eq!(partition_for("my-group", 50), 1_906_497_762 % 50);
        assert_eq!(partition_for("my-group", 50), 12);
        // Utils.abs(Integer.MIN_VALUE) is 0, not MIN_VALUE's negation.
        assert_eq!(partition_for("polygenelubricants", 50), 0);
        assert_eq!(partition_for("test-group-ü€😀", 50), 335_701_188 % 50);
        assert_eq!(partition_for("console-consumer-12345", 50), 6);
    }

    // The goldens below are the bytes Kafka 3.9.1's `GroupMetadataManager.offsetCommitKey`,
    // `offsetCommitValue`, `groupMetadataKey` and `groupMetadataValue` produce for the same
    // values (tests/fixtures/java/offsets_goldens.jsh prints them; the group value's state
    // timestamp, the clock there, is replaced by 7).

    #[test]
    fn offset_commit_key_and_value_golden() {
        let tp = TopicPartition::new("t", 3);
        let key = offset_commit_key("g", &tp).unwrap();
        // version 1, group "g", topic "t", partition 3.
        assert_eq!(hex(&key), "000100016700017400000003");
        let o = OffsetAndMetadata {
            committed_offset: 42,
            leader_epoch: 5,
            metadata: "m".into(),
            commit_timestamp_ms: 1000,
            expire_timestamp_ms: None,
        };
        let value = offset_commit_value(&o).unwrap();
        // version 3: offset i64, leader epoch i32, metadata string, commit timestamp i64.
        assert_eq!(
            hex(&value),
            "0003000000000000002a0000000500016d00000000000003e8"
        );
        assert_eq!(read_offset_value(&value).unwrap(), o);
        let old = OffsetAndMetadata {
            expire_timestamp_ms: Some(2000),
            leader_epoch: -1,
            ..o
        };
        let v1 = offset_commit_value(&old).unwrap();
        // version 1: offset, metadata, commit timestamp, expire timestamp.
        assert_eq!(
            hex(&v1),
            "0001000000000000002a00016d00000000000003e800000000000007d0"
        );
        assert_eq!(read_offset_value(&v1).unwrap(), old);
        assert_eq!(
            read_key(&key).unwrap(),
            OffsetsKey::Offset {
                group: "g".into(),
                topic_partition: tp
            }
        );
    }

    #[test]
    fn group_metadata_golden() {
        let key = group_metadata_key("g").unwrap();
        assert_eq!(hex(&key), "0002000167");
        assert_eq!(
            read_key(&key).unwrap(),
            OffsetsKey::GroupMetadata { group: "g".into() }
        );
        let value = GroupMetadataValue {
            protocol_type: s("consumer"),
            generation: 1,
            protocol: Some(s("range")),
            leader: Some(s("m")),
            current_state_timestamp: 7,
            members: vec![MemberMetadata {
                member_id: s("m"),
                group_instance_id: None,
                client_id: s("c"),
                client_host: s("/h"),
                rebalance_timeout: 300,
                session_timeout: 100,
                subscription: Bytes::from_static(b"S"),
                assignment: Bytes::from_static(b"A"),
                ..MemberMetadata::default()
            }],
            ..GroupMetadataValue::default()
        };
        let bytes = group_metadata_value(&value).unwrap();
        let expected = concat!(
            "0003", // version
            "0008",
            "636f6e73756d6572", // protocol type "consumer"
            "00000001",         // generation
            "0005",
            "72616e6765", // protocol "range"
            "0001",
            "6d",               // leader "m"
            "0000000000000007", // current state timestamp
            "00000001",         // one member
            "0001",
            "6d",   // member id
            "ffff", // group instance id null
            "0001",
            "63", // client id
            "0002",
            "2f68", // client host
            "0000012c",
            "00000064", // rebalance, session timeouts
            "00000001",
            "53", // subscription
            "00000001",
            "41", // assignment
        );
        assert_eq!(hex(&bytes), expected);
        assert_eq!(read_group_value(&bytes).unwrap(), value);
    }

    #[test]
    fn unknown_record_types_are_skipped_and_short_keys_refused() {
        assert_eq!(read_key(&[0, 5, 1, 2]).unwrap(), OffsetsKey::Unknown(5));
        assert!(read_key(&[0]).is_err());
        assert!(read_key(&[0, 1, 0, 9]).is_err());
    }
}
