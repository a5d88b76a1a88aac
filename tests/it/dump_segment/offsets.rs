//! `--offsets-decoder` against Kafka 3.9.1's: a `__consumer_offsets` segment Kafka itself wrote
//! for real consumer groups (tests/fixtures/consumer-offsets/), and records built here that
//! Kafka's decoder cannot read (unknown types, truncated keys and values, undecodable consumer
//! protocol bytes, a keyless record).

use super::fixtures::*;
use super::support::*;
use kcli::protocol::codec::{Bytes, Message};
use kcli::protocol::messages::group_metadata_value::MemberMetadata;
use kcli::protocol::messages::{GroupMetadataKey, GroupMetadataValue, OffsetCommitKey};
use kcli::protocol::record::compression::CompressionType;

fn versioned<M: Message>(m: &M, version: i16) -> Vec<u8> {
    let mut out = version.to_be_bytes().to_vec();
    out.extend_from_slice(&m.encode_to_bytes(version).unwrap());
    out
}

#[test]
fn consumer_offsets_written_by_kafka_decode_as_kafka_decodes_them() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{SEGMENT}.log");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/consumer-offsets")
        .join(&name);
    let fixture = std::fs::read(fixture).unwrap();
    write(dir.path(), &name, &fixture);
    for args in [
        &["--offsets-decoder"][..],
        &["--offsets-decoder", "--skip-record-metadata"],
    ] {
        let out = same_as_kafka(dir.path(), &[&name], args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains(r#""groupInstanceId":"static-1""#),
            "{stdout}"
        );
        assert!(stdout.contains("payload: <DELETE>"), "{stdout}");
        assert!(
            stdout.contains(r#""assignment":{"assignedPartitions""#),
            "{stdout}"
        );
    }
    // JSON Lines: the same documents as JSON values.
    let out = kcli(
        dir.path(),
        &[&name],
        &["--offsets-decoder", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let records: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "batch")
        .flat_map(|b| b["records"].as_array().unwrap().clone())
        .collect();
    assert_eq!(records.len(), 8);
    assert_eq!(records[0]["offsets_key"]["data"]["group"], "g1");
    assert_eq!(
        records[0]["offsets_value"]["data"]["protocolType"],
        "consumer"
    );
    assert_eq!(records[1]["offsets_value"]["data"]["offset"], 30);
    assert!(records[7]["offsets_value"].is_null());
}

#[test]
fn records_kafka_cannot_decode_print_what_kafka_prints() {
    let dir = tempfile::tempdir().unwrap();
    let commit_key = versioned(
        &OffsetCommitKey {
            group: "g".into(),
            topic: "t".into(),
            partition: 0,
        },
        1,
    );
    let group = |protocol_type: &str| GroupMetadataValue {
        protocol_type: protocol_type.into(),
        generation: 1,
        protocol: Some("range".into()),
        leader: Some("m".into()),
        current_state_timestamp: TS,
        members: vec![MemberMetadata {
            member_id: "m".into(),
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            rebalance_timeout: 1000,
            session_timeout: 1000,
            // Neither is a consumer-protocol message: Kafka leaves them as base64.
            subscription: Bytes::from_static(&[0, 9, 1]),
            assignment: Bytes::new(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let group_key = versioned(&GroupMetadataKey { group: "g".into() }, 2);
    let records = vec![
        rec(TS, Some(&[0, 42, 0, 1]), Some(b"v")),
        rec(TS, Some(&[7]), Some(b"v")),
        rec(TS, Some(&commit_key[..5]), Some(b"v")),
        rec(TS, Some(&commit_key), Some(&[0, 3, 0, 0])),
        rec(TS, Some(&commit_key), Some(&[1])),
        rec(
            TS,
            Some(&group_key),
            Some(&versioned(&group("consumer"), 3)),
        ),
        rec(TS, Some(&group_key), Some(&versioned(&group("connect"), 2))),
        rec(TS, Some(&group_key), None),
    ];
    let name = format!("{SEGMENT}.log");
    write(
        dir.path(),
        &name,
        &batch(CompressionType::None, 0, records.clone()),
    );
    let out = same_as_kafka(dir.path(), &[&name], &["--offsets-decoder"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("Unknown record type 42 at offset 0, skipping."));

    // A record without a key ends Kafka's dump with an exception.
    let mut keyless = records;
    keyless.insert(1, rec(TS, None, Some(b"v")));
    write(dir.path(), &name, &batch(CompressionType::Gzip, 0, keyless));
    let out = same_as_kafka_until_exception(dir.path(), &[&name], &["--offsets-decoder"]);
    assert_ne!(out.status.code(), Some(0));
}
