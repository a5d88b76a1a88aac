//! The coordinator's timers and rebalance rules over a real offsets partition (a log manager
//! in a temp dir), with tokio's paused clock: session expiry, the rebalance timeout removing
//! members that do not rejoin, the initial delayed join, the group size limit, pending-sync
//! expiry, parked answers at shutdown, groups coming back from the log, and groups unloaded when
//! the offsets partition is led elsewhere and reloaded when it comes back (epochs fenced).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::cluster::GROUP_METADATA_TOPIC_NAME;
use crate::cluster::LeaderAndIsr;
use crate::cluster::TopicPartition;
use crate::cluster::time::{SystemTime, Time};
use crate::protocol::errors::ErrorCode;
use crate::replication::ReplicaManager;
use crate::replication::replica_manager::{become_compacted_replica, system_clock_replica_manager};
use crate::zk::EmbeddedStore;

use super::group_coordinator::{GroupApi, LeavingMember, SyncParams};
use super::group_join::JoinParams;
use super::group_offsets::CommitParams;
use super::member_metadata::JoinGroupResult;
use super::offsets_records::OffsetAndMetadata;
use super::{GroupConfig, GroupCoordinator, GroupMetadataManager, OffsetsConfig};

struct Fixture {
    _dir: tempfile::TempDir,
    replica_manager: Arc<ReplicaManager>,
    zk: Arc<dyn crate::zk::ZkClient>,
    coordinator: Arc<GroupCoordinator>,
}

fn group_config(initial_delay_ms: i32, max_size: usize) -> GroupConfig {
    GroupConfig {
        min_session_timeout_ms: 10,
        max_session_timeout_ms: 100_000,
        max_size,
        initial_rebalance_delay_ms: initial_delay_ms,
    }
}

fn offsets_config() -> OffsetsConfig {
    OffsetsConfig {
        num_partitions: 1,
        commit_timeout_ms: 5000,
        metadata_max_bytes: 4096,
        compression: crate::protocol::record::compression::CompressionType::None,
        retention_ms: 60_000,
        retention_check_interval_ms: 600_000,
        load_buffer_size: 1 << 20,
    }
}

fn fixture(initial_delay_ms: i32, max_size: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let replica_manager = system_clock_replica_manager(0, dir.path());
    become_compacted_replica(
        &replica_manager,
        &TopicPartition::new(GROUP_METADATA_TOPIC_NAME, 0),
        vec![0],
        LeaderAndIsr::new(0, vec![0]),
    );
    let store = EmbeddedStore::open(&dir.path().join("zk")).unwrap();
    let zk: Arc<dyn crate::zk::ZkClient> = Arc::new(store.session());
    let coordinator = coordinator_over(&replica_manager, &zk, initial_delay_ms, max_size);
    Fixture {
        _dir: dir,
        replica_manager,
        zk,
        coordinator,
    }
}

fn coordinator_over(
    replica_manager: &Arc<ReplicaManager>,
    zk: &Arc<dyn crate::zk::ZkClient>,
    initial_delay_ms: i32,
    max_size: usize,
) -> Arc<GroupCoordinator> {
    let manager = Arc::new(GroupMetadataManager::new(
        offsets_config(),
        Arc::clone(replica_manager),
    ));
    manager.load_partition(0);
    let coordinator = GroupCoordinator::new(
        group_config(initial_delay_ms, max_size),
        manager,
        Arc::clone(zk),
    );
    coordinator.activate();
    coordinator
}

fn params(member_id: &str, session_ms: i32) -> JoinParams {
    JoinParams {
        group_id: "g".into(),
        member_id: member_id.into(),
        group_instance_id: None,
        require_known_member_id: false,
        support_skipping_assignment: false,
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        rebalance_timeout_ms: 1000,
        session_timeout_ms: session_ms,
        protocol_type: "consumer".into(),
        protocols: vec![("range".into(), Bytes::from_static(b"m"))],
    }
}

fn ready(rx: &mut oneshot::Receiver<JoinGroupResult>) -> Option<JoinGroupResult> {
    rx.try_recv().ok()
}

fn sync(c: &GroupCoordinator, generation: i32, member: &str) -> ErrorCode {
    let mut rx = c.handle_sync_group(SyncParams {
        group_id: "g".into(),
        generation_id: generation,
        member_id: member.into(),
        protocol_type: None,
        protocol_name: None,
        group_instance_id: None,
        assignment: [(member.to_string(), Bytes::from_static(b"a"))].into(),
    });
    rx.try_recv()
        .map_or(ErrorCode::UnknownServerError, |r| r.error)
}

async fn advance(c: &GroupCoordinator, ms: u64) {
    tokio::time::advance(Duration::from_millis(ms)).await;
    c.tick(Instant::now());
}

#[tokio::test(start_paused = true)]
async fn a_silent_member_expires_after_its_session_timeout() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 500))).unwrap();
    assert_eq!((a.error, a.generation_id), (ErrorCode::None, 1));
    assert_eq!(sync(c, 1, &a.member_id), ErrorCode::None);
    advance(c, 400).await;
    assert_eq!(
        c.handle_heartbeat("g", &a.member_id, None, 1),
        ErrorCode::None
    );
    advance(c, 400).await;
    // The heartbeat moved the deadline: still a member.
    assert_eq!(
        c.handle_heartbeat("g", &a.member_id, None, 1),
        ErrorCode::None
    );
    advance(c, 501).await;
    assert_eq!(
        c.handle_heartbeat("g", &a.member_id, None, 1),
        ErrorCode::UnknownMemberId
    );
    // Alone, its removal empties the group once the rebalance completes.
    advance(c, 0).await;
    let (_, summary) = c.describe_group("g");
    assert_eq!(summary.state, "Empty");
}

/// As Kafka's purgatory completes a join that can complete at once, the last member's leave
/// empties the group within the LeaveGroup call, not at the next tick.
#[tokio::test(start_paused = true)]
async fn the_last_member_leaving_empties_the_group_at_once() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    assert_eq!(sync(c, 1, &a.member_id), ErrorCode::None);
    assert_eq!(
        group_gauges(c),
        vec![
            ("NumGroups".to_string(), 1.0),
            ("NumGroupsPreparingRebalance".to_string(), 0.0),
            ("NumGroupsCompletingRebalance".to_string(), 0.0),
            ("NumGroupsStable".to_string(), 1.0),
            ("NumGroupsDead".to_string(), 0.0),
            ("NumGroupsEmpty".to_string(), 0.0),
        ]
    );
    let (e, errors) = c.handle_leave_group(
        "g",
        &[LeavingMember {
            member_id: a.member_id.clone(),
            group_instance_id: None,
        }],
    );
    assert_eq!((e, errors), (ErrorCode::None, vec![ErrorCode::None]));
    let (_, summary) = c.describe_group("g");
    assert_eq!(summary.state, "Empty");
    let gauges = group_gauges(c);
    assert_eq!(gauges[3], ("NumGroupsStable".to_string(), 0.0));
    assert_eq!(gauges[5], ("NumGroupsEmpty".to_string(), 1.0));
}

/// The GroupMetadataManager gauges as a scrape reads them, by name, in Kafka's order.
fn group_gauges(c: &GroupCoordinator) -> Vec<(String, f64)> {
    use crate::metrics::{MetricsSource, Reading};
    let source = super::metrics::GroupMetadataManagerMetrics::new(&c.manager);
    let mut samples = Vec::new();
    source.collect(&mut samples);
    samples
        .into_iter()
        .map(|s| {
            assert_eq!(s.mbean.domain, "kafka.coordinator.group");
            let name = s.mbean.properties[1].1.clone();
            match s.reading {
                Reading::Gauge(v) => (name, v),
                other => panic!("{name} is {other:?}"),
            }
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    sync(c, 1, &a.member_id);
    // B joins; A keeps heartbeating but never rejoins.
    let mut b = c.handle_join_group(params("", 10_000));
    assert!(ready(&mut b).is_none(), "B's join waits for the rebalance");
    for _ in 0..9 {
        advance(c, 100).await;
        assert_eq!(
            c.handle_heartbeat("g", &a.member_id, None, 1),
            ErrorCode::RebalanceInProgress
        );
        assert!(ready(&mut b).is_none());
    }
    advance(c, 101).await;
    let b = ready(&mut b).expect("the rebalance timeout completes the join");
    assert_eq!((b.error, b.generation_id), (ErrorCode::None, 2));
    assert_eq!(
        b.leader_id, b.member_id,
        "the leader that did not rejoin was replaced"
    );
    assert_eq!(b.members.len(), 1);
    assert_eq!(
        c.handle_heartbeat("g", &a.member_id, None, 2),
        ErrorCode::UnknownMemberId
    );
}

#[tokio::test(start_paused = true)]
async fn the_initial_delay_waits_for_more_members_up_to_the_rebalance_timeout() {
    let f = fixture(300, 10);
    let c = &f.coordinator;
    let mut a = c.handle_join_group(params("", 10_000));
    advance(c, 200).await;
    let mut b = c.handle_join_group(params("", 10_000));
    advance(c, 101).await;
    // B arrived within the first delay: the group waits another delay.
    assert!(ready(&mut a).is_none());
    advance(c, 300).await;
    let (a, b) = (ready(&mut a).unwrap(), ready(&mut b).unwrap());
    assert_eq!((a.generation_id, b.generation_id), (1, 1));
    assert_eq!(a.leader_id, a.member_id, "the first member to join leads");
    assert_eq!(a.members.len(), 2);
    assert!(b.members.is_empty());
}

#[tokio::test(start_paused = true)]
async fn joins_beyond_group_max_size_are_refused() {
    let f = fixture(0, 1);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    assert_eq!(a.error, ErrorCode::None);
    let b = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    assert_eq!(b.error, ErrorCode::GroupMaxSizeReached);
}

#[tokio::test(start_paused = true)]
async fn members_that_never_sync_are_removed_and_the_group_rebalances() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    assert_eq!(a.generation_id, 1);
    advance(c, 1001).await;
    assert_eq!(
        c.handle_heartbeat("g", &a.member_id, None, 1),
        ErrorCode::UnknownMemberId
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_answers_parked_joins() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    sync(c, 1, &a.member_id);
    let mut b = c.handle_join_group(params("", 10_000));
    assert!(ready(&mut b).is_none());
    c.shutdown().await;
    assert_eq!(ready(&mut b).unwrap().error, ErrorCode::NotCoordinator);
    assert_eq!(
        c.validate_group_status("g", GroupApi::Heartbeat),
        Some(ErrorCode::CoordinatorNotAvailable)
    );
}

#[tokio::test]
async fn groups_and_offsets_come_back_from_the_log() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    assert_eq!(sync(c, 1, &a.member_id), ErrorCode::None);
    let offset = |o| OffsetAndMetadata {
        committed_offset: o,
        leader_epoch: 3,
        metadata: "md".into(),
        commit_timestamp_ms: 1,
        expire_timestamp_ms: None,
    };
    let results = c
        .commit_offsets(CommitParams {
            group_id: "g".into(),
            member_id: a.member_id.clone(),
            group_instance_id: None,
            generation_id: 1,
            offsets: vec![(TopicPartition::new("t", 0), offset(5))],
        })
        .await;
    assert_eq!(
        results,
        vec![(TopicPartition::new("t", 0), ErrorCode::None)]
    );
    let simple = CommitParams {
        group_id: "other".into(),
        member_id: String::new(),
        group_instance_id: None,
        generation_id: -1,
        offsets: vec![(TopicPartition::new("t", 1), offset(9))],
    };
    c.commit_offsets(simple).await;
    assert_eq!(c.delete_groups(&["other".into()])[0].1, ErrorCode::None);
    // A second coordinator over the same partition reads it all back.
    let again = coordinator_over(&f.replica_manager, &f.zk, 0, 10);
    let (_, found) = again.fetch_offsets("g", None);
    assert_eq!(found, vec![(TopicPartition::new("t", 0), Some(offset(5)))]);
    let (_, summary) = again.describe_group("g");
    assert_eq!(summary.state, "Stable");
    assert_eq!(summary.members[0].member_id, a.member_id);
    assert_eq!(summary.members[0].assignment, Bytes::from_static(b"a"));
    assert_eq!(again.fetch_offsets("other", None).1, vec![]);
    assert!(again.list_groups(&[], &[]).1.iter().all(|g| g.0 != "other"));
    // The restored member keeps its session: a heartbeat of generation 1 is accepted.
    assert_eq!(
        again.handle_heartbeat("g", &a.member_id, None, 1),
        ErrorCode::None
    );
    let (e, errors) = again.handle_leave_group(
        "g",
        &[LeavingMember {
            member_id: a.member_id.clone(),
            group_instance_id: None,
        }],
    );
    assert_eq!((e, errors), (ErrorCode::None, vec![ErrorCode::None]));
}

#[test]
fn loading_partitions_answer_load_in_progress() {
    let f = fixture(0, 10);
    f.coordinator.manager.mark_loading(0);
    assert_eq!(
        f.coordinator
            .validate_group_status("g", GroupApi::JoinGroup),
        Some(ErrorCode::CoordinatorLoadInProgress)
    );
    assert_eq!(
        f.coordinator.handle_heartbeat("g", "m", None, 1),
        ErrorCode::None,
        "heartbeats are answered blindly while loading"
    );
    f.coordinator.manager.load_partition(0);
    assert_eq!(
        f.coordinator
            .validate_group_status("g", GroupApi::JoinGroup),
        None
    );
    assert_eq!(
        f.coordinator.validate_group_status("", GroupApi::JoinGroup),
        Some(ErrorCode::InvalidGroupId)
    );
    assert_eq!(
        f.coordinator
            .validate_group_status("", GroupApi::OffsetFetch),
        None
    );
}

#[tokio::test]
async fn expired_offsets_get_tombstones_and_their_empty_group_goes() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let commit = |group: &str, ts: i64| CommitParams {
        group_id: group.into(),
        member_id: String::new(),
        group_instance_id: None,
        generation_id: -1,
        offsets: vec![(
            TopicPartition::new("t", 0),
            OffsetAndMetadata {
                committed_offset: 1,
                leader_epoch: -1,
                metadata: String::new(),
                commit_timestamp_ms: ts,
                expire_timestamp_ms: None,
            },
        )],
    };
    let now = SystemTime.milliseconds();
    c.commit_offsets(commit("old", now - 120_000)).await;
    c.commit_offsets(commit("fresh", now)).await;
    c.cleanup_expired_offsets(now);
    let groups: Vec<String> = c.list_groups(&[], &[]).1.into_iter().map(|g| g.0).collect();
    assert_eq!(groups, vec!["fresh".to_string()]);
    // The tombstones are in the log: a reload does not bring the expired offset back.
    let again = coordinator_over(&f.replica_manager, &f.zk, 0, 10);
    assert!(again.fetch_offsets("old", None).1.is_empty());
    assert_eq!(again.fetch_offsets("fresh", None).1.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_member_id_handed_out_expires_unless_used_within_the_session_timeout() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let mut p = params("", 500);
    p.require_known_member_id = true;
    let first = ready(&mut c.handle_join_group(p.clone())).unwrap();
    assert_eq!(first.error, ErrorCode::MemberIdRequired);
    // Used in time: the member joins with it.
    p.member_id = first.member_id.clone();
    let joined = ready(&mut c.handle_join_group(p.clone())).unwrap();
    assert_eq!(
        (joined.error, joined.member_id),
        (ErrorCode::None, first.member_id)
    );
    // Not used in time: forgotten.
    let mut q = params("", 500);
    q.require_known_member_id = true;
    let second = ready(&mut c.handle_join_group(q.clone())).unwrap();
    advance(c, 501).await;
    q.member_id = second.member_id;
    let late = ready(&mut c.handle_join_group(q)).unwrap();
    assert_eq!(late.error, ErrorCode::UnknownMemberId);
}

#[tokio::test(start_paused = true)]
async fn a_replaced_static_leader_skips_the_assignment_from_join_group_v9() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let mut p = params("", 10_000);
    p.group_instance_id = Some("i".into());
    p.support_skipping_assignment = true;
    let a = ready(&mut c.handle_join_group(p.clone())).unwrap();
    assert_eq!(sync(c, 1, &a.member_id), ErrorCode::None);
    let b = ready(&mut c.handle_join_group(p)).unwrap();
    assert_eq!(b.error, ErrorCode::None);
    assert_ne!(b.member_id, a.member_id);
    assert_eq!(b.generation_id, 1, "a stable group keeps its generation");
    assert!(b.skip_assignment);
    assert_eq!(b.leader_id, b.member_id);
    assert_eq!(b.members.len(), 1);
    assert_eq!(
        c.handle_heartbeat("g", &a.member_id, Some("i"), 1),
        ErrorCode::FencedInstanceId
    );
}

#[tokio::test(start_paused = true)]
async fn a_group_over_capacity_after_a_load_rebalances_down_to_the_limit() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    sync(c, 1, &a.member_id);
    let mut b = c.handle_join_group(params("", 10_000));
    let mut a2 = c.handle_join_group(params(&a.member_id, 10_000));
    let (a2, b) = (ready(&mut a2).unwrap(), ready(&mut b).unwrap());
    assert_eq!((a2.generation_id, b.generation_id), (2, 2));
    sync(c, 2, &a.member_id);
    // Reloaded under group.max.size = 1: the next tick starts a rebalance.
    let small = coordinator_over(&f.replica_manager, &f.zk, 0, 1);
    small.tick(Instant::now());
    assert_eq!(small.describe_group("g").1.state, "PreparingRebalance");
    let mut first = small.handle_join_group(params(&a.member_id, 10_000));
    let refused = ready(&mut small.handle_join_group(params(&b.member_id, 10_000))).unwrap();
    assert_eq!(refused.error, ErrorCode::GroupMaxSizeReached);
    let first = ready(&mut first).expect("the group completes with the one member left");
    assert_eq!((first.error, first.members.len()), (ErrorCode::None, 1));
}

#[tokio::test]
async fn a_waiting_offsets_append_fails_when_the_offsets_partition_moves() {
    let f = fixture(0, 10);
    let tp = TopicPartition::new(GROUP_METADATA_TOPIC_NAME, 0);
    let partition = f.replica_manager.get_partition(&tp).unwrap();
    // A follower in the ISR holds the high watermark back.
    partition.update_leader_and_isr(vec![0, 1], LeaderAndIsr::new(0, vec![0, 1]));
    let manager = GroupMetadataManager::new(offsets_config(), Arc::clone(&f.replica_manager));
    let record = crate::protocol::record::builder::SimpleRecord::new(1, Some(b"k".to_vec()), None);
    let Err(pending) = super::group_metadata_manager::settled(manager.append("g", vec![record]))
    else {
        panic!("committed with a follower in the ISR that never fetched");
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    let waiting =
        tokio::spawn(
            async move { super::group_metadata_manager::committed(pending, &shutdown).await },
        );
    partition.update_leader_and_isr(
        vec![0, 1],
        LeaderAndIsr {
            leader_epoch: 1,
            ..LeaderAndIsr::new(1, vec![1, 0])
        },
    );
    let code = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(code, ErrorCode::NotLeaderOrFollower);
    assert_eq!(
        super::group_metadata_manager::commit_error(code),
        ErrorCode::NotCoordinator
    );
}

/// Makes the fixture's broker the follower (`leader` 1) or the leader (0) of the offsets
/// partition at `epoch`. No leader end points are installed, so a follower does not fetch.
fn lead_offsets_partition(f: &Fixture, leader: i32, epoch: i32) {
    become_compacted_replica(
        &f.replica_manager,
        &TopicPartition::new(GROUP_METADATA_TOPIC_NAME, 0),
        vec![0, 1],
        LeaderAndIsr {
            leader_epoch: epoch,
            ..LeaderAndIsr::new(leader, vec![0])
        },
    );
}

/// Yields to the coordinator's tasks until partition 0 is loaded (the load runs on a blocking
/// thread, in real time).
async fn until_loaded(c: &GroupCoordinator) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !c.manager.is_partition_loaded(0) {
        assert!(std::time::Instant::now() < deadline, "not loaded in 10 s");
        tokio::task::yield_now().await;
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[tokio::test(start_paused = true)]
async fn resigning_the_offsets_partition_unloads_its_groups_and_a_new_election_reloads_them() {
    let f = fixture(0, 10);
    let c = &f.coordinator;
    let a = ready(&mut c.handle_join_group(params("", 10_000))).unwrap();
    assert_eq!(sync(c, 1, &a.member_id), ErrorCode::None);
    let committed = OffsetAndMetadata {
        committed_offset: 7,
        leader_epoch: -1,
        metadata: String::new(),
        commit_timestamp_ms: 1,
        expire_timestamp_ms: None,
    };
    let results = c
        .commit_offsets(CommitParams {
            group_id: "g".into(),
            member_id: a.member_id.clone(),
            group_instance_id: None,
            generation_id: 1,
            offsets: vec![(TopicPartition::new("t", 0), committed.clone())],
        })
        .await;
    assert_eq!(results[0].1, ErrorCode::None);
    // B's JoinGroup is parked in the rebalance it starts.
    let mut b = c.handle_join_group(params("", 10_000));
    assert!(ready(&mut b).is_none());

    // Broker 1 leads the partition at epoch 1: this broker resigns.
    lead_offsets_partition(&f, 1, 1);
    c.on_resignation(0, Some(1));
    assert_eq!(
        ready(&mut b).expect("the parked join is answered").error,
        ErrorCode::NotCoordinator
    );
    assert!(c.manager.get_group("g").is_none(), "gone from the cache");
    assert!(!c.manager.is_partition_loaded(0));
    assert_eq!(
        c.handle_heartbeat("g", &a.member_id, None, 1),
        ErrorCode::NotCoordinator
    );
    assert_eq!(sync(c, 1, &a.member_id), ErrorCode::NotCoordinator);
    assert_eq!(c.fetch_offsets("g", None).0, ErrorCode::NotCoordinator);
    // The timers no longer see the group: nothing expires or is written for it.
    advance(c, 20_000).await;
    assert!(c.manager.get_group("g").is_none());

    // An election older than the resignation changes nothing.
    c.on_elected(vec![(0, 0)]);
    assert!(!c.manager.is_loading("g"));
    assert!(!c.manager.is_partition_loaded(0));

    // Leader again at epoch 2: the group comes back from the log with its offset and member.
    lead_offsets_partition(&f, 0, 2);
    c.on_elected(vec![(0, 2)]);
    until_loaded(c).await;
    assert_eq!(
        c.fetch_offsets("g", None),
        (
            ErrorCode::None,
            vec![(TopicPartition::new("t", 0), Some(committed))]
        )
    );
    let (_, summary) = c.describe_group("g");
    assert_eq!(summary.state, "Stable");
    assert_eq!(summary.members.len(), 1);
    assert_eq!(summary.members[0].member_id, a.member_id);
    // A resignation older than that election is ignored.
    c.on_resignation(0, Some(1));
    assert!(c.manager.get_group("g").is_some());
    assert!(c.manager.is_partition_loaded(0));
}

#[test]
fn a_load_overtaken_by_a_resignation_installs_nothing() {
    let f = fixture(0, 10);
    let manager = &f.coordinator.manager;
    manager.get_or_create_group("g");
    let removed = manager.remove_groups_for_partition(0, Some(3)).unwrap();
    assert_eq!(removed.len(), 1);
    assert!(manager.get_group("g").is_none());
    assert!(
        manager.begin_loading(0, Some(2)).is_none(),
        "an election older than the resignation"
    );
    // The election at epoch 4 is overtaken by a resignation at epoch 5 before its load ends.
    let load = manager
        .begin_loading(0, Some(4))
        .expect("a newer election loads");
    assert_eq!(
        manager
            .remove_groups_for_partition(0, Some(5))
            .map(|g| g.len()),
        Some(0)
    );
    manager.load(0, load);
    assert!(
        !manager.is_partition_loaded(0),
        "the overtaken load is discarded"
    );
    // A second election's load supersedes an earlier one still running.
    let first = manager.begin_loading(0, Some(6)).unwrap();
    let second = manager.begin_loading(0, Some(7)).unwrap();
    manager.load(0, first);
    assert!(!manager.is_partition_loaded(0));
    manager.load(0, second);
    assert!(manager.is_partition_loaded(0));
}
