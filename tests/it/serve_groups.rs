//! The classic group coordinator of `kcli serve` over the raw protocol (`KafkaConn`): the
//! MEMBER_ID_REQUIRED round trip, rebalances with two members, heartbeats during a rebalance,
//! session timeouts, static members, offsets (v0 through ZooKeeper paths, v8 multi-group),
//! the admin APIs, offsets surviving restarts and kill -9, and Kafka's own DumpLogSegments
//! decoding what we wrote. Submodules: offsets.rs (offsets, restarts, every version),
//! admin.rs (the admin APIs, FindCoordinator, DumpLogSegments), kcat.rs (kcat -G consumers),
//! librdkafka.rs (the rdkafka crate as a group consumer).
//!
//! Brokers run with `group.initial.rebalance.delay.ms=0`, a small minimum session timeout and
//! few offsets partitions so the tests stay fast; every wait is bounded.

mod admin;
mod compaction;
mod kcat;
mod librdkafka;
mod offsets;

use std::time::{Duration, Instant};

use bytes::Bytes;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::errors::ErrorCode;
use kcli::protocol::messages::RequestKind;
use kcli::protocol::messages::ResponseKind;
use kcli::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kcli::protocol::messages::heartbeat_request::HeartbeatRequest;
use kcli::protocol::messages::join_group_request::{JoinGroupRequest, JoinGroupRequestProtocol};
use kcli::protocol::messages::join_group_response::JoinGroupResponse;
use kcli::protocol::messages::leave_group_request::{LeaveGroupRequest, MemberIdentity};
use kcli::protocol::messages::offset_commit_request::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kcli::protocol::messages::offset_fetch_request::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kcli::protocol::messages::sync_group_request::{SyncGroupRequest, SyncGroupRequestAssignment};
use kcli::protocol::messages::sync_group_response::SyncGroupResponse;

use crate::serve_support::{
    KafkaConn, TestBroker, batch_of, create_topic_with, produce_request, produce_result,
};

/// Overrides that keep group tests fast.
pub const FAST: &[(&str, &str)] = &[
    ("group.initial.rebalance.delay.ms", "0"),
    ("group.min.session.timeout.ms", "200"),
    ("offsets.topic.num.partitions", "5"),
    ("num.partitions", "1"),
];

const JOIN_VERSION: i16 = 5;

pub fn s(v: &str) -> StrBytes {
    StrBytes::from(v)
}

/// FindCoordinator (v3) for `group`, retried while the coordinator is not ready; returns the
/// node id.
pub fn find_coordinator(conn: &mut KafkaConn, group: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = conn.call(
            &RequestKind::FindCoordinator(FindCoordinatorRequest {
                key: s(group),
                key_type: 0,
                ..Default::default()
            }),
            3,
        );
        let ResponseKind::FindCoordinator(r) = r else {
            panic!("{r:?}")
        };
        if r.error_code == 0 {
            return r.node_id;
        }
        assert!(Instant::now() < deadline, "no coordinator: {r:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn join_request(
    group: &str,
    member: &str,
    instance: Option<&str>,
    session_ms: i32,
) -> RequestKind {
    RequestKind::JoinGroup(JoinGroupRequest {
        group_id: s(group),
        session_timeout_ms: session_ms,
        rebalance_timeout_ms: 3000,
        member_id: s(member),
        group_instance_id: instance.map(s),
        protocol_type: s("consumer"),
        protocols: vec![JoinGroupRequestProtocol {
            name: s("range"),
            metadata: Bytes::from(format!("meta-of-{}", instance.unwrap_or("dynamic"))),
            ..Default::default()
        }],
        ..Default::default()
    })
}

fn join_response(r: ResponseKind) -> JoinGroupResponse {
    match r {
        ResponseKind::JoinGroup(j) => j,
        other => panic!("not a JoinGroup response: {other:?}"),
    }
}

/// A dynamic member's full join (MEMBER_ID_REQUIRED, then the join); returns the answer.
pub fn join_new(conn: &mut KafkaConn, group: &str, session_ms: i32) -> JoinGroupResponse {
    let first = join_response(conn.call(&join_request(group, "", None, session_ms), JOIN_VERSION));
    assert_eq!(
        first.error_code,
        ErrorCode::MemberIdRequired.code(),
        "{first:?}"
    );
    let id = first.member_id.to_string_lossy().into_owned();
    join_response(conn.call(&join_request(group, &id, None, session_ms), JOIN_VERSION))
}

pub fn sync(
    conn: &mut KafkaConn,
    group: &str,
    generation: i32,
    member: &str,
    assignments: &[(&str, &str)],
) -> SyncGroupResponse {
    let r = conn.call(&sync_request(group, generation, member, assignments), 3);
    match r {
        ResponseKind::SyncGroup(r) => r,
        other => panic!("{other:?}"),
    }
}

fn sync_request(
    group: &str,
    generation: i32,
    member: &str,
    assignments: &[(&str, &str)],
) -> RequestKind {
    RequestKind::SyncGroup(SyncGroupRequest {
        group_id: s(group),
        generation_id: generation,
        member_id: s(member),
        assignments: assignments
            .iter()
            .map(|(m, a)| SyncGroupRequestAssignment {
                member_id: s(m),
                assignment: Bytes::from(a.to_string()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    })
}

pub fn heartbeat(
    conn: &mut KafkaConn,
    group: &str,
    generation: i32,
    member: &str,
    instance: Option<&str>,
) -> i16 {
    let r = conn.call(
        &RequestKind::Heartbeat(HeartbeatRequest {
            group_id: s(group),
            generation_id: generation,
            member_id: s(member),
            group_instance_id: instance.map(s),
            ..Default::default()
        }),
        4,
    );
    match r {
        ResponseKind::Heartbeat(h) => h.error_code,
        other => panic!("{other:?}"),
    }
}

fn id(j: &JoinGroupResponse) -> String {
    j.member_id.to_string_lossy().into_owned()
}

fn commit_request(
    group: &str,
    generation: i32,
    member: &str,
    topic: &str,
    offsets: &[(i32, i64, &str)],
) -> RequestKind {
    RequestKind::OffsetCommit(OffsetCommitRequest {
        group_id: s(group),
        generation_id_or_member_epoch: generation,
        member_id: s(member),
        retention_time_ms: -1,
        topics: vec![OffsetCommitRequestTopic {
            name: s(topic),
            partitions: offsets
                .iter()
                .map(|(p, o, m)| OffsetCommitRequestPartition {
                    partition_index: *p,
                    committed_offset: *o,
                    committed_leader_epoch: -1,
                    commit_timestamp: -1,
                    committed_metadata: Some(s(m)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    })
}

/// Commits and returns each partition's error code, in request order.
pub fn commit(
    conn: &mut KafkaConn,
    version: i16,
    group: &str,
    topic: &str,
    offsets: &[(i32, i64, &str)],
) -> Vec<i16> {
    match conn.call(&commit_request(group, -1, "", topic, offsets), version) {
        ResponseKind::OffsetCommit(r) => r
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| p.error_code))
            .collect(),
        other => panic!("{other:?}"),
    }
}

/// OffsetFetch (v1-7) of `partitions` of `topic`: (offset, metadata, error) of each.
pub fn fetch_offsets(
    conn: &mut KafkaConn,
    version: i16,
    group: &str,
    topic: &str,
    partitions: &[i32],
) -> (i16, Vec<(i64, String, i16)>) {
    let r = conn.call(
        &RequestKind::OffsetFetch(OffsetFetchRequest {
            group_id: s(group),
            topics: Some(vec![OffsetFetchRequestTopic {
                name: s(topic),
                partition_indexes: partitions.to_vec(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        version,
    );
    let ResponseKind::OffsetFetch(r) = r else {
        panic!("{r:?}")
    };
    let rows = r
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| {
            (
                p.committed_offset,
                p.metadata
                    .as_ref()
                    .map(|m| m.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                p.error_code,
            )
        })
        .collect();
    (r.error_code, rows)
}

/// Creates `topic` with `partitions` partitions and produces one record to each.
pub fn produce(conn: &mut KafkaConn, topic: &str, partitions: i32) {
    create_topic_with(conn, topic, partitions, &[]);
    for p in 0..partitions {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = conn.call(&produce_request(topic, p, batch_of(&[b"x".to_vec()]), 1), 9);
            if produce_result(&r).0 == 0 {
                break;
            }
            assert!(Instant::now() < deadline, "produce to {topic}-{p}: {r:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn groups_member_id_required_round_trip_and_single_member_generation() {
    let broker = TestBroker::start(FAST);
    let mut conn = KafkaConn::connect(broker.port());
    // Before any FindCoordinator there is no offsets topic: this broker coordinates nothing.
    let early = join_response(conn.call(&join_request("g", "", None, 10_000), 4));
    assert_eq!(early.error_code, ErrorCode::NotCoordinator.code());
    assert_eq!(find_coordinator(&mut conn, "g"), 0);
    let first = join_response(conn.call(&join_request("g", "", None, 10_000), 4));
    assert_eq!(first.error_code, ErrorCode::MemberIdRequired.code());
    let member = id(&first);
    assert!(member.starts_with("kcli-serve-test-"), "{member}");
    let joined = join_response(conn.call(&join_request("g", &member, None, 10_000), 4));
    assert_eq!(joined.error_code, 0, "{joined:?}");
    assert_eq!(id(&joined), member);
    assert_eq!(joined.generation_id, 1);
    assert_eq!(joined.leader.to_string_lossy(), member);
    assert_eq!(joined.members.len(), 1);
    assert_eq!(joined.members[0].metadata, Bytes::from("meta-of-dynamic"));
    assert_eq!(
        joined.protocol_name.as_ref().unwrap().to_string_lossy(),
        "range"
    );
    let synced = sync(&mut conn, "g", 1, &member, &[(&member, "all-partitions")]);
    assert_eq!(synced.error_code, 0);
    assert_eq!(synced.assignment, Bytes::from("all-partitions"));
    assert_eq!(heartbeat(&mut conn, "g", 1, &member, None), 0);
    assert_eq!(
        heartbeat(&mut conn, "g", 7, &member, None),
        ErrorCode::IllegalGeneration.code()
    );
    assert_eq!(
        heartbeat(&mut conn, "g", 1, "nobody", None),
        ErrorCode::UnknownMemberId.code()
    );
    // JoinGroup v3 (before KIP-394) joins at once, with no MEMBER_ID_REQUIRED round trip.
    let old = join_response(conn.call(&join_request("g3", "", None, 10_000), 3));
    assert_eq!(old.error_code, 0, "{old:?}");
    assert_eq!(old.generation_id, 1);
    // Session timeouts outside the broker's bounds.
    let bad = join_response(conn.call(&join_request("g4", "", None, 100), 5));
    assert_eq!(bad.error_code, ErrorCode::InvalidSessionTimeout.code());
    // A different protocol type than the group's members use.
    let mut other = join_request("g", "", None, 10_000);
    if let RequestKind::JoinGroup(j) = &mut other {
        j.protocol_type = s("connect");
    }
    let r = join_response(conn.call(&other, 5));
    assert_eq!(r.error_code, ErrorCode::InconsistentGroupProtocol.code());
}

#[test]
fn groups_two_members_rebalance_with_heartbeats_and_leave() {
    let broker = TestBroker::start(FAST);
    let mut a = KafkaConn::connect(broker.port());
    let mut b = KafkaConn::connect(broker.port());
    find_coordinator(&mut a, "two");
    let ja = join_new(&mut a, "two", 10_000);
    let ma = id(&ja);
    assert_eq!(ja.generation_id, 1);
    assert_eq!(
        sync(&mut a, "two", 1, &ma, &[(&ma, "A1")]).assignment,
        Bytes::from("A1")
    );
    // B's join is parked until A rejoins.
    let first = join_response(b.call(&join_request("two", "", None, 10_000), JOIN_VERSION));
    let mb = id(&first);
    b.send(&join_request("two", &mb, None, 10_000), JOIN_VERSION)
        .unwrap();
    // Once B's join is in (another connection), A's heartbeats say a rebalance is on.
    let deadline = Instant::now() + Duration::from_secs(5);
    while heartbeat(&mut a, "two", 1, &ma, None) != ErrorCode::RebalanceInProgress.code() {
        assert!(Instant::now() < deadline, "A never heard of the rebalance");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ja2 = join_response(a.call(&join_request("two", &ma, None, 10_000), JOIN_VERSION));
    let (_, jb) = b
        .recv(kcli::protocol::messages::ApiKey::JoinGroup, JOIN_VERSION)
        .unwrap();
    let jb = join_response(jb);
    assert_eq!((ja2.error_code, jb.error_code), (0, 0), "{ja2:?} {jb:?}");
    assert_eq!((ja2.generation_id, jb.generation_id), (2, 2));
    // The first member stays leader and alone gets the members' metadata.
    assert_eq!(ja2.leader.to_string_lossy(), ma);
    assert_eq!(jb.leader.to_string_lossy(), ma);
    assert_eq!(ja2.members.len(), 2);
    assert!(jb.members.is_empty());
    // B's sync waits for the leader's assignment.
    b.send(&sync_request("two", 2, &mb, &[]), 3).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let sa = sync(&mut a, "two", 2, &ma, &[(&ma, "A2"), (&mb, "B2")]);
    let (_, sb) = b
        .recv(kcli::protocol::messages::ApiKey::SyncGroup, 3)
        .unwrap();
    let ResponseKind::SyncGroup(sb) = sb else {
        panic!()
    };
    assert_eq!(
        (sa.assignment.clone(), sb.assignment.clone()),
        (Bytes::from("A2"), Bytes::from("B2"))
    );
    assert_eq!(heartbeat(&mut b, "two", 2, &mb, None), 0);
    // B leaves (v3: a batch of members); A is told to rejoin and is alone in generation 3.
    let r = b.call(
        &RequestKind::LeaveGroup(LeaveGroupRequest {
            group_id: s("two"),
            members: vec![
                MemberIdentity {
                    member_id: s(&mb),
                    ..Default::default()
                },
                MemberIdentity {
                    member_id: s("ghost"),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }),
        3,
    );
    let ResponseKind::LeaveGroup(r) = r else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
    let codes: Vec<i16> = r.members.iter().map(|m| m.error_code).collect();
    assert_eq!(codes, vec![0, ErrorCode::UnknownMemberId.code()]);
    assert_eq!(
        heartbeat(&mut a, "two", 2, &ma, None),
        ErrorCode::RebalanceInProgress.code()
    );
    let ja3 = join_response(a.call(&join_request("two", &ma, None, 10_000), JOIN_VERSION));
    assert_eq!((ja3.generation_id, ja3.members.len()), (3, 1));
}

#[test]
fn groups_session_timeout_removes_a_silent_member() {
    let broker = TestBroker::start(FAST);
    let mut a = KafkaConn::connect(broker.port());
    let mut b = KafkaConn::connect(broker.port());
    find_coordinator(&mut a, "st");
    let ma = id(&join_new(&mut a, "st", 10_000));
    sync(&mut a, "st", 1, &ma, &[]);
    let first = join_response(b.call(&join_request("st", "", None, 600), JOIN_VERSION));
    let mb = id(&first);
    b.send(&join_request("st", &mb, None, 600), JOIN_VERSION)
        .unwrap();
    let ja = join_response(a.call(&join_request("st", &ma, None, 10_000), JOIN_VERSION));
    assert_eq!(ja.members.len(), 2);
    let (_, jb) = b
        .recv(kcli::protocol::messages::ApiKey::JoinGroup, JOIN_VERSION)
        .unwrap();
    assert_eq!(join_response(jb).generation_id, 2);
    b.send(&sync_request("st", 2, &mb, &[]), 3).unwrap();
    sync(&mut a, "st", 2, &ma, &[]);
    let (_, sb) = b
        .recv(kcli::protocol::messages::ApiKey::SyncGroup, 3)
        .unwrap();
    let ResponseKind::SyncGroup(sb) = sb else {
        panic!()
    };
    assert_eq!(sb.error_code, 0);
    // B never heartbeats: within its 600 ms session (+ the ticks) A hears of a rebalance.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let e = heartbeat(&mut a, "st", 2, &ma, None);
        if e == ErrorCode::RebalanceInProgress.code() {
            break;
        }
        assert_eq!(e, 0);
        assert!(
            Instant::now() < deadline,
            "the silent member was never removed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let ja = join_response(a.call(&join_request("st", &ma, None, 10_000), JOIN_VERSION));
    assert_eq!((ja.generation_id, ja.members.len()), (3, 1), "{ja:?}");
    assert_eq!(
        heartbeat(&mut b, "st", 2, &mb, None),
        ErrorCode::UnknownMemberId.code()
    );
}

#[test]
fn groups_static_member_replacement_keeps_its_assignment_and_fences_the_old_one() {
    let broker = TestBroker::start(FAST);
    let mut a = KafkaConn::connect(broker.port());
    find_coordinator(&mut a, "static");
    // Static members skip MEMBER_ID_REQUIRED.
    let j = join_response(a.call(
        &join_request("static", "", Some("i1"), 10_000),
        JOIN_VERSION,
    ));
    assert_eq!(j.error_code, 0, "{j:?}");
    let old = id(&j);
    assert!(old.starts_with("i1-"), "{old}");
    sync(&mut a, "static", 1, &old, &[(&old, "P0")]);
    // The same instance comes back with no member id: same generation, a new id, and (before
    // v9) the old leader id so it does not reassign a stable group.
    let mut b = KafkaConn::connect(broker.port());
    let j2 = join_response(b.call(
        &join_request("static", "", Some("i1"), 10_000),
        JOIN_VERSION,
    ));
    assert_eq!(j2.error_code, 0, "{j2:?}");
    let new = id(&j2);
    assert_ne!(new, old);
    assert_eq!(j2.generation_id, 1);
    assert_eq!(j2.leader.to_string_lossy(), old);
    let s2 = sync(&mut b, "static", 1, &new, &[]);
    assert_eq!((s2.error_code, s2.assignment), (0, Bytes::from("P0")));
    assert_eq!(
        heartbeat(&mut a, "static", 1, &old, Some("i1")),
        ErrorCode::FencedInstanceId.code()
    );
    assert_eq!(heartbeat(&mut b, "static", 1, &new, Some("i1")), 0);
    // Administrative removal by instance id alone (LeaveGroup v4, no member id).
    let r = a.call(
        &RequestKind::LeaveGroup(LeaveGroupRequest {
            group_id: s("static"),
            members: vec![
                MemberIdentity {
                    group_instance_id: Some(s("i1")),
                    ..Default::default()
                },
                MemberIdentity {
                    group_instance_id: Some(s("i9")),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }),
        4,
    );
    let ResponseKind::LeaveGroup(r) = r else {
        panic!()
    };
    let codes: Vec<i16> = r.members.iter().map(|m| m.error_code).collect();
    assert_eq!(codes, vec![0, ErrorCode::UnknownMemberId.code()]);
    assert_eq!(
        heartbeat(&mut b, "static", 1, &new, Some("i1")),
        ErrorCode::UnknownMemberId.code()
    );
}

/// A clean shutdown answers a parked JoinGroup (NOT_COORDINATOR, so the client looks for the
/// coordinator again) instead of leaving it to the rebalance timeout.
#[test]
fn groups_shutdown_answers_parked_joins() {
    let mut broker = TestBroker::start(FAST);
    let mut a = KafkaConn::connect(broker.port());
    find_coordinator(&mut a, "sd");
    let ma = id(&join_new(&mut a, "sd", 10_000));
    sync(&mut a, "sd", 1, &ma, &[]);
    let mut b = KafkaConn::connect(broker.port());
    let first = join_response(b.call(&join_request("sd", "", None, 10_000), JOIN_VERSION));
    let mut long = join_request("sd", &id(&first), None, 10_000);
    if let RequestKind::JoinGroup(j) = &mut long {
        j.rebalance_timeout_ms = 60_000;
    }
    b.send(&long, JOIN_VERSION).unwrap();
    let waiter = std::thread::spawn(move || {
        b.recv(kcli::protocol::messages::ApiKey::JoinGroup, JOIN_VERSION)
    });
    std::thread::sleep(Duration::from_millis(200));
    broker.stop_within(Duration::from_secs(10));
    let (_, r) = waiter
        .join()
        .unwrap()
        .expect("the parked JoinGroup was answered");
    assert_eq!(
        join_response(r).error_code,
        ErrorCode::NotCoordinator.code()
    );
}
