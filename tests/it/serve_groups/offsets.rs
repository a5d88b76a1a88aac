//! Offsets over the raw protocol: every store (the offsets topic, ZooKeeper's paths for v0,
//! v8's multi-group fetch), who may commit when, offsets surviving restarts and kill -9, and
//! every version of the member APIs end to end.

use super::*;

#[test]
fn groups_commit_and_fetch_offsets_in_every_store() {
    let broker = TestBroker::start(FAST);
    let mut conn = KafkaConn::connect(broker.port());
    produce(&mut conn, "ct", 1);
    find_coordinator(&mut conn, "simple");
    // A simple consumer (generation -1, no member id) commits for an unknown group.
    assert_eq!(
        commit(&mut conn, 2, "simple", "ct", &[(0, 42, "meta")]),
        vec![0]
    );
    assert_eq!(
        fetch_offsets(&mut conn, 1, "simple", "ct", &[0]).1,
        vec![(42, "meta".to_string(), 0)]
    );
    // Nothing committed: -1, no error.
    assert_eq!(
        fetch_offsets(&mut conn, 5, "nobody", "ct", &[0]).1,
        vec![(-1, String::new(), 0)]
    );
    // Unknown topic, too much metadata.
    assert_eq!(
        commit(&mut conn, 8, "simple", "no-such-topic", &[(0, 1, "")]),
        vec![ErrorCode::UnknownTopicOrPartition.code()]
    );
    let big = "m".repeat(5000);
    assert_eq!(
        commit(&mut conn, 8, "simple", "ct", &[(0, 7, &big)]),
        vec![ErrorCode::OffsetMetadataTooLarge.code()]
    );
    // v0 goes to ZooKeeper's paths, apart from the offsets topic.
    assert_eq!(
        commit(&mut conn, 0, "zk-group", "ct", &[(0, 9, "")]),
        vec![0]
    );
    assert_eq!(
        fetch_offsets(&mut conn, 0, "zk-group", "ct", &[0]).1,
        vec![(9, String::new(), 0)]
    );
    assert_eq!(
        fetch_offsets(&mut conn, 1, "zk-group", "ct", &[0]).1[0].0,
        -1
    );
    assert_eq!(fetch_offsets(&mut conn, 0, "simple", "ct", &[0]).1[0].0, -1);
    // v8: several groups in one request; null topics = everything the group has.
    assert_eq!(commit(&mut conn, 8, "second", "ct", &[(0, 5, "")]), vec![0]);
    let r = conn.call(
        &RequestKind::OffsetFetch(OffsetFetchRequest {
            groups: vec![
                OffsetFetchRequestGroup {
                    group_id: s("simple"),
                    topics: None,
                    ..Default::default()
                },
                OffsetFetchRequestGroup {
                    group_id: s("second"),
                    topics: Some(vec![OffsetFetchRequestTopics {
                        name: s("ct"),
                        partition_indexes: vec![0],
                        ..Default::default()
                    }]),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }),
        8,
    );
    let ResponseKind::OffsetFetch(r) = r else {
        panic!()
    };
    let got: Vec<(String, i64)> = r
        .groups
        .iter()
        .flat_map(|g| {
            g.topics.iter().flat_map(|t| t.partitions.iter()).map(|p| {
                (
                    g.group_id.to_string_lossy().into_owned(),
                    p.committed_offset,
                )
            })
        })
        .collect();
    assert_eq!(
        got,
        vec![("simple".to_string(), 42), ("second".to_string(), 5)]
    );
    // A member of a live group must name itself: a simple commit is refused.
    let j = join_new(&mut conn, "live", 10_000);
    let r = conn.call(&commit_request("live", -1, "", "ct", &[(0, 1, "")]), 8);
    let ResponseKind::OffsetCommit(r) = r else {
        panic!()
    };
    assert_eq!(
        r.topics[0].partitions[0].error_code,
        ErrorCode::UnknownMemberId.code()
    );
    let r = conn.call(
        &commit_request("live", j.generation_id, &id(&j), "ct", &[(0, 1, "")]),
        8,
    );
    let ResponseKind::OffsetCommit(r) = r else {
        panic!()
    };
    // Between JoinGroup and SyncGroup a member's commit waits for the rebalance to finish.
    assert_eq!(
        r.topics[0].partitions[0].error_code,
        ErrorCode::RebalanceInProgress.code()
    );
    sync(&mut conn, "live", j.generation_id, &id(&j), &[]);
    let r = conn.call(
        &commit_request("live", j.generation_id, &id(&j), "ct", &[(0, 3, "")]),
        8,
    );
    let ResponseKind::OffsetCommit(r) = r else {
        panic!()
    };
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    assert_eq!(fetch_offsets(&mut conn, 7, "live", "ct", &[0]).1[0].0, 3);
}

#[test]
fn groups_offsets_survive_a_clean_restart_and_kill_9() {
    let mut broker = TestBroker::start(FAST);
    let mut conn = KafkaConn::connect(broker.port());
    produce(&mut conn, "dur", 1);
    find_coordinator(&mut conn, "d");
    assert_eq!(
        commit(&mut conn, 8, "d", "dur", &[(0, 11, "first")]),
        vec![0]
    );
    drop(conn);
    broker.stop();
    broker.restart();
    assert_eq!(
        fetch_retrying(broker.port(), "d", "dur"),
        (11, "first".to_string())
    );
    let mut conn = KafkaConn::connect(broker.port());
    assert_eq!(
        commit(&mut conn, 8, "d", "dur", &[(0, 12, "second")]),
        vec![0]
    );
    drop(conn);
    broker.kill9();
    broker.restart();
    assert_eq!(
        fetch_retrying(broker.port(), "d", "dur"),
        (12, "second".to_string())
    );
}

/// OffsetFetch v7 of partition 0, retried while the coordinator loads (as a client does).
fn fetch_retrying(port: u16, group: &str, topic: &str) -> (i64, String) {
    let mut conn = KafkaConn::connect(port);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (e, rows) = fetch_offsets(&mut conn, 7, group, topic, &[0]);
        if e == 0 {
            return (rows[0].0, rows[0].1.clone());
        }
        assert!(
            e == ErrorCode::CoordinatorLoadInProgress.code()
                || e == ErrorCode::NotCoordinator.code(),
            "{e}"
        );
        assert!(Instant::now() < deadline, "still loading");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One member's whole life (join, sync, heartbeat, commit, fetch, leave) at every version of
/// every API it uses: each version's encoding of requests and answers is exercised end to end.
#[test]
fn groups_every_version_of_the_member_apis() {
    let broker = TestBroker::start(FAST);
    let mut conn = KafkaConn::connect(broker.port());
    produce(&mut conn, "ev", 1);
    find_coordinator(&mut conn, "x");
    for v in 0..=9i16 {
        let group = format!("v{v}");
        let mut j = join_response(conn.call(&join_request(&group, "", None, 10_000), v));
        if v >= 4 {
            assert_eq!(j.error_code, ErrorCode::MemberIdRequired.code(), "v{v}");
            j = join_response(conn.call(&join_request(&group, &id(&j), None, 10_000), v));
        }
        assert_eq!(
            (j.error_code, j.generation_id),
            (0, 1),
            "JoinGroup v{v}: {j:?}"
        );
        let member = id(&j);
        let sv = v.min(5);
        let mut req = sync_request(&group, 1, &member, &[(&member, "mine")]);
        if let RequestKind::SyncGroup(r) = &mut req {
            r.protocol_type = Some(s("consumer"));
            r.protocol_name = Some(s("range"));
        }
        let ResponseKind::SyncGroup(sr) = conn.call(&req, sv) else {
            panic!()
        };
        assert_eq!(
            (sr.error_code, sr.assignment),
            (0, Bytes::from("mine")),
            "SyncGroup v{sv}"
        );
        let hb = conn.call(
            &RequestKind::Heartbeat(HeartbeatRequest {
                group_id: s(&group),
                generation_id: 1,
                member_id: s(&member),
                ..Default::default()
            }),
            v.min(4),
        );
        let ResponseKind::Heartbeat(hb) = hb else {
            panic!()
        };
        assert_eq!(hb.error_code, 0, "Heartbeat v{}", v.min(4));
        let (generation, committer) = if v == 0 {
            (-1, "")
        } else {
            (1, member.as_str())
        };
        let ResponseKind::OffsetCommit(c) = conn.call(
            &commit_request(
                &group,
                generation,
                committer,
                "ev",
                &[(0, i64::from(v) + 100, "")],
            ),
            v,
        ) else {
            panic!()
        };
        assert_eq!(c.topics[0].partitions[0].error_code, 0, "OffsetCommit v{v}");
        let fetched = if v >= 8 {
            let r = conn.call(
                &RequestKind::OffsetFetch(OffsetFetchRequest {
                    groups: vec![OffsetFetchRequestGroup {
                        group_id: s(&group),
                        topics: None,
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                v,
            );
            let ResponseKind::OffsetFetch(r) = r else {
                panic!()
            };
            r.groups[0].topics[0].partitions[0].committed_offset
        } else {
            fetch_offsets(&mut conn, v, &group, "ev", &[0]).1[0].0
        };
        assert_eq!(fetched, i64::from(v) + 100, "OffsetFetch v{v}");
        let lv = v.min(5);
        let leave = if lv < 3 {
            LeaveGroupRequest {
                group_id: s(&group),
                member_id: s(&member),
                ..Default::default()
            }
        } else {
            LeaveGroupRequest {
                group_id: s(&group),
                members: vec![MemberIdentity {
                    member_id: s(&member),
                    ..Default::default()
                }],
                ..Default::default()
            }
        };
        let ResponseKind::LeaveGroup(l) = conn.call(&RequestKind::LeaveGroup(leave), lv) else {
            panic!()
        };
        assert_eq!(l.error_code, 0, "LeaveGroup v{lv}");
    }
}
