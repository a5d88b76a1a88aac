//! ListGroups, DescribeGroups, DeleteGroups, OffsetDelete and FindCoordinator's batched and
//! transactional lookups over the raw protocol; Kafka's DumpLogSegments decoding the records
//! we write to `__consumer_offsets`.

use super::*;
use kcli::protocol::messages::delete_groups_request::DeleteGroupsRequest;
use kcli::protocol::messages::describe_groups_request::DescribeGroupsRequest;
use kcli::protocol::messages::list_groups_request::ListGroupsRequest;
use kcli::protocol::messages::offset_delete_request::{
    OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};

fn list(conn: &mut KafkaConn, states: &[&str]) -> Vec<(String, String, String)> {
    let r = conn.call(
        &RequestKind::ListGroups(ListGroupsRequest {
            states_filter: states.iter().map(|x| s(x)).collect(),
            ..Default::default()
        }),
        4,
    );
    let ResponseKind::ListGroups(r) = r else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
    let mut out: Vec<_> = r
        .groups
        .iter()
        .map(|g| {
            (
                g.group_id.to_string_lossy().into_owned(),
                g.protocol_type.to_string_lossy().into_owned(),
                g.group_state.to_string_lossy().into_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

fn delete_groups(conn: &mut KafkaConn, groups: &[&str]) -> Vec<i16> {
    let r = conn.call(
        &RequestKind::DeleteGroups(DeleteGroupsRequest {
            groups_names: groups.iter().map(|g| s(g)).collect(),
            ..Default::default()
        }),
        2,
    );
    let ResponseKind::DeleteGroups(r) = r else {
        panic!()
    };
    r.results.iter().map(|x| x.error_code).collect()
}

fn offset_delete(conn: &mut KafkaConn, group: &str, topic: &str) -> (i16, Vec<i16>) {
    let r = conn.call(
        &RequestKind::OffsetDelete(OffsetDeleteRequest {
            group_id: s(group),
            topics: vec![OffsetDeleteRequestTopic {
                name: s(topic),
                partitions: vec![OffsetDeleteRequestPartition { partition_index: 0 }],
            }],
        }),
        0,
    );
    let ResponseKind::OffsetDelete(r) = r else {
        panic!()
    };
    (
        r.error_code,
        r.topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| p.error_code))
            .collect(),
    )
}

#[test]
fn groups_list_describe_delete_and_offset_delete() {
    let broker = TestBroker::start(FAST);
    let mut conn = KafkaConn::connect(broker.port());
    produce(&mut conn, "adm", 1);
    find_coordinator(&mut conn, "x");
    assert_eq!(
        commit(&mut conn, 8, "only-offsets", "adm", &[(0, 1, "")]),
        vec![0]
    );
    assert_eq!(
        commit(&mut conn, 8, "to-trim", "adm", &[(0, 2, "")]),
        vec![0]
    );
    let j = join_new(&mut conn, "busy", 10_000);
    let m = id(&j);
    sync(&mut conn, "busy", 1, &m, &[(&m, "assigned")]);
    assert_eq!(
        list(&mut conn, &[]),
        vec![
            ("busy".into(), "consumer".into(), "Stable".into()),
            ("only-offsets".into(), String::new(), "Empty".into()),
            ("to-trim".into(), String::new(), "Empty".into()),
        ]
    );
    assert_eq!(list(&mut conn, &["stable"]).len(), 1);
    assert_eq!(list(&mut conn, &["Empty", "Dead"]).len(), 2);
    let r = conn.call(
        &RequestKind::DescribeGroups(DescribeGroupsRequest {
            groups: vec![s("busy"), s("ghost")],
            include_authorized_operations: true,
            ..Default::default()
        }),
        5,
    );
    let ResponseKind::DescribeGroups(r) = r else {
        panic!()
    };
    let busy = &r.groups[0];
    assert_eq!(
        (
            busy.error_code,
            busy.group_state.to_string_lossy().as_ref(),
            busy.protocol_data.to_string_lossy().as_ref()
        ),
        (0, "Stable", "range")
    );
    assert_eq!(busy.members.len(), 1);
    assert_eq!(busy.members[0].member_assignment, Bytes::from("assigned"));
    assert_eq!(busy.members[0].client_host.to_string_lossy(), "/127.0.0.1");
    assert_eq!(busy.authorized_operations, 328);
    assert_eq!(r.groups[1].group_state.to_string_lossy(), "Dead");
    // OffsetDelete: only for a group without members (here) or topics nobody subscribes to.
    assert_eq!(offset_delete(&mut conn, "to-trim", "adm"), (0, vec![0]));
    assert_eq!(
        fetch_offsets(&mut conn, 7, "to-trim", "adm", &[0]).1[0].0,
        -1
    );
    assert_eq!(
        offset_delete(&mut conn, "ghost", "adm").0,
        ErrorCode::GroupIdNotFound.code()
    );
    assert_eq!(
        delete_groups(&mut conn, &["busy", "only-offsets", "ghost"]),
        vec![
            ErrorCode::NonEmptyGroup.code(),
            0,
            ErrorCode::GroupIdNotFound.code()
        ]
    );
    assert_eq!(
        fetch_offsets(&mut conn, 7, "only-offsets", "adm", &[0]).1[0].0,
        -1
    );
    assert_eq!(list(&mut conn, &[]).len(), 1);
}

#[test]
fn find_coordinator_batches_groups_and_transactional_ids() {
    let broker = TestBroker::start(FAST);
    let mut conn = KafkaConn::connect(broker.port());
    let r = conn.call(
        &RequestKind::FindCoordinator(FindCoordinatorRequest {
            key_type: 0,
            coordinator_keys: vec![s("a"), s("b")],
            ..Default::default()
        }),
        4,
    );
    let ResponseKind::FindCoordinator(r) = r else {
        panic!()
    };
    let found: Vec<(String, i16, i32, i32)> = r
        .coordinators
        .iter()
        .map(|c| {
            (
                c.key.to_string_lossy().into_owned(),
                c.error_code,
                c.node_id,
                c.port,
            )
        })
        .collect();
    let port = i32::from(broker.port());
    assert_eq!(
        found,
        vec![("a".into(), 0, 0, port), ("b".into(), 0, 0, port)]
    );
    // A transactional id: the first lookup creates `__transaction_state` (one replica on a
    // single broker), and this broker, its only leader, coordinates it.
    let r = conn.call(
        &RequestKind::FindCoordinator(FindCoordinatorRequest {
            key_type: 1,
            key: s("txn"),
            ..Default::default()
        }),
        3,
    );
    let ResponseKind::FindCoordinator(r) = r else {
        panic!()
    };
    assert_eq!(
        (r.error_code, r.node_id, r.port),
        (ErrorCode::None.code(), 0, port),
        "{r:?}"
    );
    assert!(broker.data_dir().join("__transaction_state-49").is_dir());
    // The first group lookup created the offsets topic with Kafka's configs.
    let config = std::fs::read_to_string(
        broker
            .data_dir()
            .join("__consumer_offsets-4/partition.metadata"),
    );
    assert!(config.is_ok(), "{config:?}");
}

/// The classpath of Kafka 3.9.1's jars (as tests/it/protocol_java_oracle.rs finds them).
fn kafka_classpath() -> String {
    if let Ok(cp) = std::env::var("KCLI_KAFKA_CLIENTS_CP") {
        return cp;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/kafka-3.9.1");
    assert!(
        dir.join("kafka_2.13-3.9.1.jar").exists(),
        "Kafka 3.9.1's jars are missing from {}: run tests/install-kafka-tools",
        dir.display()
    );
    format!("{}/*", dir.display())
}

/// Kafka's `kafka-dump-log --offsets-decoder` reads our commits, group metadata and
/// tombstones as its own.
#[test]
fn kafka_dump_log_decodes_our_consumer_offsets_records() {
    let mut broker = TestBroker::start(&[
        ("group.initial.rebalance.delay.ms", "0"),
        ("offsets.topic.num.partitions", "1"),
    ]);
    let mut conn = KafkaConn::connect(broker.port());
    produce(&mut conn, "dl", 1);
    find_coordinator(&mut conn, "dump");
    let j = join_new(&mut conn, "dump", 10_000);
    sync(&mut conn, "dump", 1, &id(&j), &[]);
    let r = conn.call(
        &commit_request("dump", 1, &id(&j), "dl", &[(0, 77, "md")]),
        8,
    );
    let ResponseKind::OffsetCommit(r) = r else {
        panic!()
    };
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    assert_eq!(commit(&mut conn, 8, "gone", "dl", &[(0, 1, "")]), vec![0]);
    assert_eq!(delete_groups(&mut conn, &["gone"]), vec![0]);
    drop(conn);
    broker.stop();
    let log = broker
        .data_dir()
        .join("__consumer_offsets-0/00000000000000000000.log");
    let mut cmd = std::process::Command::new("java");
    cmd.args([
        "-cp",
        &kafka_classpath(),
        "kafka.tools.DumpLogSegments",
        "--offsets-decoder",
        "--files",
    ])
    .arg(&log);
    let (code, out, err) = crate::serve_support::run_within(cmd, b"", Duration::from_secs(90));
    assert_eq!(code, 0, "{err}");
    let member = id(&j);
    for expected in [
        format!(r#"key: {{"type":"2","data":{{"group":"dump"}}}} payload: {{"version":"3","data":{{"protocolType":"consumer","generation":1,"protocol":"range","leader":"{member}""#),
        r#"key: {"type":"1","data":{"group":"dump","topic":"dl","partition":0}} payload: {"version":"3","data":{"offset":77,"leaderEpoch":-1,"metadata":"md","#.to_string(),
        r#"key: {"type":"1","data":{"group":"gone","topic":"dl","partition":0}} payload: <DELETE>"#.to_string(),
    ] {
        assert!(out.contains(&expected), "missing {expected}\nin:\n{out}");
    }
    // An offsets-only group never had a generation: no group tombstone for it.
    assert!(
        !out.contains(r#"{"group":"gone"}} payload: <DELETE>"#),
        "{out}"
    );
}
