//! `--offsets-decoder`: a `__consumer_offsets` record's key and value as Kafka 3.9's
//! `DumpLogSegments.OffsetsMessageParser` prints them.
//!
//! The key's int16 prefix is the record type (0 and 1: an offset commit, 2: group metadata, 3-8:
//! KIP-848 consumer-group records); the value's int16 prefix is its version. The key prints as
//! `{"type":"<type>","data":<key>}`, the value as `{"version":"<version>","data":<value>}`, both
//! in the JSON of Kafka's generated converters, and a tombstone as `<DELETE>`. A classic group
//! whose protocol type is `consumer` has each member's subscription and assignment decoded from
//! the consumer protocol's bytes (left as base64 when they do not decode, as Kafka does). A
//! record of an unknown type, or one that does not decode, prints a message as its key and no
//! payload; a record without a key stops the dump, as it stops Kafka's tool.

use bytes::Bytes;

use crate::protocol::codec::{self as c, DecodeErrorKind, JsonWriter, Message, Reader, ToJson};
use crate::protocol::messages::{
    ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue, ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue, ConsumerGroupPartitionMetadataKey,
    ConsumerGroupPartitionMetadataValue, ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue, ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue, ConsumerProtocolAssignment,
    ConsumerProtocolSubscription, GroupMetadataKey, GroupMetadataValue, OffsetCommitKey,
    OffsetCommitValue, group_metadata_value::MemberMetadata,
};

use super::segment::SegmentError;

/// What the parser prints for one record: ` key: <key>` and, when present, ` payload: <value>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodedRecord {
    pub key: String,
    pub payload: Option<String>,
}

/// Decodes one `__consumer_offsets` record at `offset`.
pub(crate) fn decode(
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<DecodedRecord, SegmentError> {
    let Some(key) = key else {
        return Err(SegmentError::Corrupt(format!(
            "Failed to decode message at offset {offset} using offset topic decoder (message had a missing key)"
        )));
    };
    let skipped = |reason: String| DecodedRecord {
        key: format!("Error at offset {offset}, skipping. {reason}"),
        payload: None,
    };
    let mut r = Reader::new(Bytes::copy_from_slice(key));
    let Ok(record_type) = r.i16() else {
        return Ok(skipped("Could not read version from key's buffer.".into()));
    };
    let result = match record_type {
        0 | 1 => pair::<OffsetCommitKey, OffsetCommitValue>(record_type, &mut r, value),
        2 => decode_group_metadata(&mut r, value),
        3 => pair::<ConsumerGroupMetadataKey, ConsumerGroupMetadataValue>(3, &mut r, value),
        4 => pair::<ConsumerGroupPartitionMetadataKey, ConsumerGroupPartitionMetadataValue>(
            4, &mut r, value,
        ),
        5 => pair::<ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue>(
            5, &mut r, value,
        ),
        6 => pair::<
            ConsumerGroupTargetAssignmentMetadataKey,
            ConsumerGroupTargetAssignmentMetadataValue,
        >(6, &mut r, value),
        7 => {
            pair::<ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue>(
                7, &mut r, value,
            )
        }
        8 => pair::<
            ConsumerGroupCurrentMemberAssignmentKey,
            ConsumerGroupCurrentMemberAssignmentValue,
        >(8, &mut r, value),
        other => {
            return Ok(DecodedRecord {
                key: format!("Unknown record type {other} at offset {offset}, skipping."),
                payload: None,
            });
        }
    };
    Ok(result.unwrap_or_else(skipped))
}

/// A key of type `record_type` (its version) and its value, each written by the generated JSON.
fn pair<K: Message, V: Message>(
    record_type: i16,
    key: &mut Reader,
    value: Option<&[u8]>,
) -> Result<DecodedRecord, String> {
    let k: K = read_message(key, record_type, "key")?;
    let key = wrap("type", record_type, &k);
    let payload = match value {
        None => "<DELETE>".to_string(),
        Some(bytes) => {
            let (version, v) = read_versioned::<V>(bytes)?;
            wrap("version", version, &v)
        }
    };
    Ok(DecodedRecord {
        key,
        payload: Some(payload),
    })
}

/// Group metadata: as [`pair`], with the consumer protocol's bytes decoded in the members.
fn decode_group_metadata(key: &mut Reader, value: Option<&[u8]>) -> Result<DecodedRecord, String> {
    let k: GroupMetadataKey = read_message(key, 2, "key")?;
    let key = wrap("type", 2, &k);
    let payload = match value {
        None => "<DELETE>".to_string(),
        Some(bytes) => {
            let (version, v) = read_versioned::<GroupMetadataValue>(bytes)?;
            if v.protocol_type.as_bytes() == b"consumer" {
                wrap("version", version, &ConsumerGroupJson(&v))
            } else {
                wrap("version", version, &v)
            }
        }
    };
    Ok(DecodedRecord {
        key,
        payload: Some(payload),
    })
}

/// `{"<label>":"<version>","data":<message>}`, Kafka's wrapper around both halves.
fn wrap<T: ToJson>(label: &str, version: i16, message: &T) -> String {
    let mut j = JsonWriter::new();
    j.begin_object();
    j.field(
        label,
        &c::StrBytes::from(version.to_string()),
        c::cx(version, false),
    );
    j.field("data", message, c::cx(version, false));
    j.end_object();
    j.finish()
}

/// Reads a message at `version`, ignoring bytes after it as Kafka's generated readers do.
fn read_message<M: Message>(r: &mut Reader, version: i16, what: &str) -> Result<M, String> {
    M::decode(r, version).map_err(|e| {
        // Running out of bytes is Java's BufferUnderflowException, whose message is null.
        let reason = match e.kind {
            DecodeErrorKind::UnexpectedEof { .. } => "null".to_string(),
            _ => e.to_string(),
        };
        format!(
            "Could not read record with version {version} from {what}'s buffer due to: {reason}."
        )
    })
}

fn read_versioned<M: Message>(bytes: &[u8]) -> Result<(i16, M), String> {
    let mut r = Reader::new(Bytes::copy_from_slice(bytes));
    let version = r
        .i16()
        .map_err(|_| "Could not read version from value's buffer.".to_string())?;
    Ok((version, read_message(&mut r, version, "value")?))
}

/// A `consumer` group's metadata value: the generated JSON, except that each member's
/// `subscription` and `assignment` are the decoded consumer-protocol messages.
struct ConsumerGroupJson<'a>(&'a GroupMetadataValue);

impl ToJson for ConsumerGroupJson<'_> {
    fn to_json(&self, j: &mut JsonWriter, cx: c::Cx) {
        let g = self.0;
        j.begin_object();
        j.field("protocolType", &g.protocol_type, cx);
        j.field("generation", &g.generation, cx);
        j.field("protocol", &g.protocol, cx);
        j.field("leader", &g.leader, cx);
        if cx.version >= 2 {
            j.field("currentStateTimestamp", &g.current_state_timestamp, cx);
        }
        let members: Vec<ConsumerMemberJson<'_>> =
            g.members.iter().map(ConsumerMemberJson).collect();
        j.field("members", &members, cx);
        j.end_object();
    }
}

struct ConsumerMemberJson<'a>(&'a MemberMetadata);

impl ToJson for ConsumerMemberJson<'_> {
    fn to_json(&self, j: &mut JsonWriter, cx: c::Cx) {
        let m = self.0;
        j.begin_object();
        j.field("memberId", &m.member_id, cx);
        if cx.version >= 3 {
            j.field("groupInstanceId", &m.group_instance_id, cx);
        }
        j.field("clientId", &m.client_id, cx);
        j.field("clientHost", &m.client_host, cx);
        if cx.version >= 1 {
            j.field("rebalanceTimeout", &m.rebalance_timeout, cx);
        }
        j.field("sessionTimeout", &m.session_timeout, cx);
        j.field(
            "subscription",
            &Embedded::<ConsumerProtocolSubscription>::new(&m.subscription),
            cx,
        );
        j.field(
            "assignment",
            &Embedded::<ConsumerProtocolAssignment>::new(&m.assignment),
            cx,
        );
        j.end_object();
    }
}

/// Consumer-protocol bytes (an int16 version, then the message): the message's JSON when they
/// decode, else the bytes' base64, as Kafka leaves a field it cannot decode.
struct Embedded<'a, M> {
    bytes: &'a Bytes,
    _message: std::marker::PhantomData<M>,
}

impl<'a, M> Embedded<'a, M> {
    fn new(bytes: &'a Bytes) -> Self {
        Embedded {
            bytes,
            _message: std::marker::PhantomData,
        }
    }
}

impl<M: Message> ToJson for Embedded<'_, M> {
    fn to_json(&self, j: &mut JsonWriter, cx: c::Cx) {
        let mut r = Reader::new(self.bytes.clone());
        let decoded = r
            .i16()
            .ok()
            .and_then(|version| M::decode(&mut r, version).ok().map(|m| (version, m)));
        match decoded {
            Some((version, m)) => m.to_json(j, c::cx(version, false)),
            None => self.bytes.to_json(j, cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::consumer_protocol_subscription::TopicPartition as OwnedPartition;

    fn versioned<M: Message>(m: &M, version: i16) -> Vec<u8> {
        let mut out = version.to_be_bytes().to_vec();
        out.extend_from_slice(&m.encode_to_bytes(version).unwrap());
        out
    }

    fn commit_key(version: i16) -> Vec<u8> {
        versioned(
            &OffsetCommitKey {
                group: "g1".into(),
                topic: "t".into(),
                partition: 3,
            },
            version,
        )
    }

    #[test]
    fn offset_commit_and_its_tombstone() {
        let value = versioned(
            &OffsetCommitValue {
                offset: 42,
                leader_epoch: 0,
                metadata: "".into(),
                commit_timestamp: 1700000000000,
                ..Default::default()
            },
            3,
        );
        let d = decode(7, Some(&commit_key(1)), Some(&value)).unwrap();
        assert_eq!(
            d.key,
            r#"{"type":"1","data":{"group":"g1","topic":"t","partition":3}}"#
        );
        assert_eq!(
            d.payload.as_deref(),
            Some(
                r#"{"version":"3","data":{"offset":42,"leaderEpoch":0,"metadata":"","commitTimestamp":1700000000000}}"#
            )
        );
        let tomb = decode(8, Some(&commit_key(1)), None).unwrap();
        assert_eq!(tomb.payload.as_deref(), Some("<DELETE>"));
    }

    #[test]
    fn consumer_group_members_have_their_protocol_decoded() {
        let subscription = versioned(
            &ConsumerProtocolSubscription {
                topics: vec!["t".into()],
                user_data: None,
                owned_partitions: vec![OwnedPartition {
                    topic: "t".into(),
                    partitions: vec![0, 1],
                }],
                ..Default::default()
            },
            1,
        );
        let group = GroupMetadataValue {
            protocol_type: "consumer".into(),
            generation: 4,
            protocol: Some("range".into()),
            leader: Some("m-1".into()),
            current_state_timestamp: 5,
            members: vec![MemberMetadata {
                member_id: "m-1".into(),
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                rebalance_timeout: 300000,
                session_timeout: 45000,
                subscription: Bytes::from(subscription),
                // Not a valid assignment: left as base64.
                assignment: Bytes::from_static(&[0xff]),
                ..Default::default()
            }],
            ..Default::default()
        };
        let key = versioned(&GroupMetadataKey { group: "g1".into() }, 2);
        let d = decode(0, Some(&key), Some(&versioned(&group, 3))).unwrap();
        assert_eq!(d.key, r#"{"type":"2","data":{"group":"g1"}}"#);
        assert_eq!(
            d.payload.as_deref(),
            Some(concat!(
                r#"{"version":"3","data":{"protocolType":"consumer","generation":4,"protocol":"range","leader":"m-1","currentStateTimestamp":5,"#,
                r#""members":[{"memberId":"m-1","groupInstanceId":null,"clientId":"c","clientHost":"/127.0.0.1","rebalanceTimeout":300000,"sessionTimeout":45000,"#,
                r#""subscription":{"topics":["t"],"userData":null,"ownedPartitions":[{"topic":"t","partitions":[0,1]}]},"assignment":"/w=="}]}}"#
            ))
        );
    }

    #[test]
    fn unknown_types_bad_bytes_and_missing_keys() {
        let d = decode(3, Some(&[0, 42, 1]), Some(b"x")).unwrap();
        assert_eq!(d.key, "Unknown record type 42 at offset 3, skipping.");
        assert_eq!(d.payload, None);
        let d = decode(4, Some(&[0]), None).unwrap();
        assert_eq!(
            d.key,
            "Error at offset 4, skipping. Could not read version from key's buffer."
        );
        let d = decode(5, Some(&commit_key(1)), Some(&[0, 3, 0])).unwrap();
        assert_eq!(
            d.key,
            "Error at offset 5, skipping. Could not read record with version 3 from value's buffer due to: null."
        );
        let err = decode(6, None, Some(b"v")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Failed to decode message at offset 6 using offset topic decoder (message had a missing key)"
        );
    }
}
