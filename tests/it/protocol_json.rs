//! The JSON writers: Kafka's `JsonConverter` output for the `__consumer_offsets` and
//! `__transaction_state` schemas the dump tools print, tagged-field and records rules, and
//! well-formed JSON for every message at every version.

// Test code: a failed expectation panics with the message, version and value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::messages::visit_all;
use crate::protocol_arb::{Arb, Gen, Visit};
use bytes::Bytes;
use kcli::protocol::codec::{Message, StrBytes, Uuid, cx};
use kcli::protocol::messages::{
    FetchResponse, OffsetCommitKey, OffsetCommitValue, TransactionLogValue, fetch_response,
    transaction_log_value,
};

#[test]
fn offset_commit_records_print_as_kafkas_offsets_decoder_does() {
    let key = OffsetCommitKey {
        group: StrBytes::from("g"),
        topic: StrBytes::from("t"),
        partition: 3,
    };
    assert_eq!(
        key.to_json_string(1),
        r#"{"group":"g","topic":"t","partition":3}"#
    );
    let value = OffsetCommitValue {
        offset: 42,
        leader_epoch: 5,
        metadata: StrBytes::from("m\"x"),
        commit_timestamp: 1_700_000_000_000,
        expire_timestamp: -1,
        ..Default::default()
    };
    assert_eq!(
        value.to_json_string(3),
        r#"{"offset":42,"leaderEpoch":5,"metadata":"m\"x","commitTimestamp":1700000000000}"#
    );
    assert_eq!(
        value.to_json_string(1),
        r#"{"offset":42,"metadata":"m\"x","commitTimestamp":1700000000000,"expireTimestamp":-1}"#
    );
}

#[test]
fn transaction_log_values_print_nested_arrays() {
    let value = TransactionLogValue {
        producer_id: 7,
        producer_epoch: 1,
        transaction_timeout_ms: 60_000,
        transaction_status: 2,
        transaction_partitions: Some(vec![transaction_log_value::PartitionsSchema {
            topic: StrBytes::from("t"),
            partition_ids: vec![0, 1],
            ..Default::default()
        }]),
        transaction_last_update_timestamp_ms: 10,
        transaction_start_timestamp_ms: 9,
        ..Default::default()
    };
    assert_eq!(
        value.to_json_string(0),
        concat!(
            r#"{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"#,
            r#""transactionStatus":2,"transactionPartitions":[{"topic":"t","partitionIds":[0,1]}],"#,
            r#""transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":9}"#
        )
    );
}

#[test]
fn records_print_their_size_and_uuids_kafkas_base64() {
    let response = FetchResponse {
        responses: vec![fetch_response::FetchableTopicResponse {
            topic_id: Uuid::nil(),
            partitions: vec![fetch_response::PartitionData {
                records: Some(Bytes::from_static(b"12345")),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let json = response.to_json_string(13);
    assert!(
        json.contains(r#""topicId":"AAAAAAAAAAAAAAAAAAAAAA""#),
        "{json}"
    );
    assert!(json.contains(r#""recordsSizeInBytes":5"#), "{json}");
    // Tagged fields at their defaults (DivergingEpoch, CurrentLeader, SnapshotId) are left out.
    assert!(!json.contains("divergingEpoch"), "{json}");
    assert!(!json.contains("topic\""), "v13 has no topic name: {json}");
}

struct WellFormed {
    checked: usize,
}

impl Visit for WellFormed {
    fn visit<M: Message + Arb>(&mut self) {
        for v in M::VERSIONS.min..=M::VERSIONS.max {
            let x = M::arb(&mut Gen::new(v as u64 + 17), cx(v, false));
            let json = x.to_json_string(v);
            serde_json::from_str::<serde_json::Value>(&json)
                .unwrap_or_else(|e| panic!("{} v{v}: {e} in {json}", M::NAME));
            self.checked += 1;
        }
    }
}

#[test]
fn every_message_prints_well_formed_json() {
    let mut w = WellFormed { checked: 0 };
    visit_all(&mut w);
    assert!(w.checked > 600);
}
