//! Unit tests of the replica manager's produce and fetch paths: the acks=-1 wait and its
//! endings (high watermark, leadership moved, min ISR, timeout), the effective min ISR, a
//! follower's refusals, the long poll, and the controllable clock.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::cluster::time::MockTime;
use crate::cluster::{LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::batch::TimestampType;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;
use crate::storage::log_config::LogConfig;

use super::*;
use crate::cluster::GROUP_METADATA_TOPIC_NAME;
use crate::replication::partition::ReplicationCheck;

const BOUND: Duration = Duration::from_secs(10);

struct Fixture {
    _dir: tempfile::TempDir,
    rm: Arc<ReplicaManager>,
    time: Arc<MockTime>,
}

fn fixture() -> Fixture {
    let TempReplicaManager { dir, rm, time } = TempReplicaManager::new(0, 1_700_000_000_000);
    Fixture {
        _dir: dir,
        rm,
        time,
    }
}

fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

fn leadership(leader: i32, leader_epoch: i32, isr: Vec<i32>) -> LeaderAndIsr {
    LeaderAndIsr {
        leader_epoch,
        ..LeaderAndIsr::new(leader, isr)
    }
}

fn host(f: &Fixture, replicas: Vec<i32>, state: LeaderAndIsr, min_isr: i32) -> Arc<Partition> {
    let config = LogConfig {
        min_insync_replicas: min_isr,
        message_timestamp_type: TimestampType::LogAppendTime,
        ..LogConfig::default()
    };
    f.rm.become_leader_or_follower(&tp(), None, replicas, state, config)
        .unwrap()
}

fn entry() -> Vec<AppendEntry> {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.records.push(SimpleRecord::new(
        5,
        Some(b"k".to_vec()),
        Some(b"v".to_vec()),
    ));
    vec![AppendEntry {
        topic_partition: tp(),
        records: Bytes::from(b.build().unwrap()),
        verification_guard: None,
    }]
}

fn ready(result: ProduceResult) -> Vec<PartitionResponse> {
    match result {
        ProduceResult::Ready(r) => r,
        ProduceResult::Delayed(_) => panic!("expected an answer at once"),
    }
}

fn delayed(result: ProduceResult) -> DelayedProduce {
    match result {
        ProduceResult::Delayed(d) => d,
        ProduceResult::Ready(r) => panic!("expected a wait, got {r:?}"),
    }
}

/// Appends with acks=-1 where a follower in the ISR holds the high watermark back, changes the
/// partition with `change`, and returns how the wait ended.
async fn wait_ended_by(change: impl FnOnce(&Fixture, &Arc<Partition>)) -> ErrorCode {
    let f = fixture();
    let partition = host(&f, vec![0, 1], leadership(0, 3, vec![0, 1]), 1);
    let wait = delayed(f.rm.append_records(AppendParams::client(30_000, -1), entry()));
    let waiting = tokio::spawn(wait.complete());
    // Still parked: the follower never fetched, so the high watermark stays at 0.
    assert_eq!(partition.offsets().high_watermark, 0);
    assert!(!waiting.is_finished());
    change(&f, &partition);
    let answers = tokio::time::timeout(BOUND, waiting).await.unwrap().unwrap();
    assert_eq!(answers.len(), 1);
    answers[0].error_code
}

#[tokio::test]
async fn a_waiting_acks_all_produce_fails_when_the_leader_becomes_follower() {
    let code = wait_ended_by(|f, _| {
        f.rm.become_leader_or_follower(
            &tp(),
            None,
            vec![0, 1],
            leadership(1, 4, vec![0, 1]),
            LogConfig::default(),
        )
        .unwrap();
    })
    .await;
    assert_eq!(code, ErrorCode::NotLeaderOrFollower);
}

#[tokio::test]
async fn a_waiting_acks_all_produce_survives_a_reelection_of_its_leader() {
    // The controller shrank the ISR to the leader at a new epoch (as after a follower died):
    // the leader led throughout and its log holds the append, which the high watermark now
    // passes. Kafka's DelayedProduce acknowledges it; failing it would tell the producer a
    // written batch was not written.
    let code = wait_ended_by(|f, p| {
        f.time.sleep(30_001);
        p.update_leader_and_isr(vec![0, 1], leadership(0, 4, vec![0]));
    })
    .await;
    assert_eq!(code, ErrorCode::None);
}

#[tokio::test]
async fn a_waiting_acks_all_produce_fails_when_its_leader_was_follower_meanwhile() {
    // Follower at epoch 4 (its log may have been truncated there), leader again at epoch 5
    // with the ISR shrunk to itself: the high watermark passes the append's offset, but what
    // is there need not be the append.
    let code = wait_ended_by(|f, p| {
        p.update_leader_and_isr(vec![0, 1], leadership(1, 4, vec![0, 1]));
        f.time.sleep(30_001);
        p.update_leader_and_isr(vec![0, 1], leadership(0, 5, vec![0]));
    })
    .await;
    assert_eq!(code, ErrorCode::NotLeaderOrFollower);
}

#[tokio::test]
async fn a_waiting_acks_all_produce_fails_when_the_replica_is_stopped() {
    let code = wait_ended_by(|f, _| f.rm.stop_replica(&tp(), false).unwrap()).await;
    assert_eq!(code, ErrorCode::NotLeaderOrFollower);
}

#[tokio::test]
async fn a_waiting_acks_all_produce_succeeds_once_the_isr_is_the_leader_alone() {
    let code = wait_ended_by(|f, p| {
        // The follower has not been caught up for longer than the lag (else the high
        // watermark waits for it to join the ISR again, Kafka's shouldWaitForReplicaToJoinIsr).
        f.time.sleep(30_001);
        p.update_leader_and_isr(vec![0, 1], leadership(0, 3, vec![0]));
    })
    .await;
    assert_eq!(code, ErrorCode::None);
}

#[tokio::test]
async fn below_the_effective_min_isr_after_the_append_the_wait_fails() {
    let f = fixture();
    let partition = host(&f, vec![0, 1], leadership(0, 0, vec![0, 1]), 2);
    let wait = delayed(f.rm.append_records(AppendParams::client(30_000, -1), entry()));
    // Before the wait checks again, the follower fetches past the append (the high watermark
    // passes it) and then the ISR shrinks to the leader: one replica in sync is below
    // min.insync.replicas=2, so the append is not acknowledged.
    partition.update_follower_fetch_state(1, 1, 1, 0).unwrap();
    assert_eq!(partition.offsets().high_watermark, 1);
    partition.update_leader_and_isr(vec![0, 1], leadership(0, 0, vec![0]));
    let answers = tokio::time::timeout(BOUND, wait.complete()).await.unwrap();
    assert_eq!(
        answers[0].error_code,
        ErrorCode::NotEnoughReplicasAfterAppend
    );
}

#[tokio::test]
async fn an_unmet_acks_all_produce_times_out_and_is_never_acknowledged() {
    let f = fixture();
    host(&f, vec![0, 1], leadership(0, 0, vec![0, 1]), 1);
    let wait = delayed(f.rm.append_records(AppendParams::client(50, -1), entry()));
    let answers = tokio::time::timeout(BOUND, wait.complete()).await.unwrap();
    assert_eq!(answers[0].error_code, ErrorCode::RequestTimedOut);
}

#[test]
fn the_effective_min_isr_is_capped_at_the_replica_count() {
    // One replica, min.insync.replicas=2: Kafka's effective min ISR is 1, so acks=-1 commits.
    let f = fixture();
    host(&f, vec![0], leadership(0, 0, vec![0]), 2);
    let answers = ready(f.rm.append_records(AppendParams::client(1_000, -1), entry()));
    assert_eq!(answers[0].error_code, ErrorCode::None);
    assert_eq!(answers[0].base_offset, 0);
}

#[test]
fn acks_all_below_the_effective_min_isr_is_refused_before_the_append() {
    let f = fixture();
    let partition = host(&f, vec![0, 1, 2], leadership(0, 0, vec![0]), 2);
    let answers = ready(f.rm.append_records(AppendParams::client(1_000, -1), entry()));
    assert_eq!(answers[0].error_code, ErrorCode::NotEnoughReplicas);
    assert_eq!(partition.offsets().log_end_offset, 0, "nothing was written");
    // acks=1 does not care about the ISR.
    let answers = ready(f.rm.append_records(AppendParams::client(1_000, 1), entry()));
    assert_eq!(answers[0].error_code, ErrorCode::None);
}

#[test]
fn appends_take_their_log_append_time_from_the_replica_managers_clock() {
    let f = fixture();
    host(&f, vec![0], leadership(0, 0, vec![0]), 1);
    f.time.set(1_234_567);
    let answers = ready(f.rm.append_records(AppendParams::client(1_000, 1), entry()));
    assert_eq!(answers[0].log_append_time_ms, 1_234_567);
}

#[test]
fn invalid_acks_fail_every_partition() {
    let f = fixture();
    let partition = host(&f, vec![0], leadership(0, 0, vec![0]), 1);
    let answers = ready(f.rm.append_records(AppendParams::client(1_000, 2), entry()));
    assert_eq!(answers[0].error_code, ErrorCode::InvalidRequiredAcks);
    assert_eq!(partition.offsets().log_end_offset, 0);
}

fn consumer_fetch(max_wait_ms: i32, min_bytes: i32) -> (FetchParams, Vec<FetchPartitionInfo>) {
    let params = FetchParams {
        replica_id: -1,
        max_wait_ms,
        min_bytes,
        max_bytes: 1 << 20,
        isolation_level: 0,
        min_one_message: true,
        whole_batches: false,
        client_metadata: None,
    };
    let info = FetchPartitionInfo {
        topic_partition: tp(),
        fetch_offset: 0,
        current_leader_epoch: -1,
        last_fetched_epoch: None,
        log_start_offset: -1,
        partition_max_bytes: 1 << 20,
    };
    (params, vec![info])
}

fn fetched(result: FetchResult) -> Vec<FetchPartitionData> {
    match result {
        FetchResult::Ready(r) => r,
        FetchResult::Delayed(_) => panic!("expected an answer at once"),
    }
}

#[test]
fn a_follower_refuses_produce_and_consumer_fetch_and_an_unhosted_partition_is_unknown() {
    let f = fixture();
    let (params, infos) = consumer_fetch(500, 1);
    let answers = ready(f.rm.append_records(AppendParams::client(1_000, 1), entry()));
    assert_eq!(answers[0].error_code, ErrorCode::UnknownTopicOrPartition);
    let reads = fetched(f.rm.fetch_messages(params.clone(), infos.clone()));
    assert_eq!(reads[0].error_code, ErrorCode::UnknownTopicOrPartition);

    host(&f, vec![0, 1], leadership(1, 2, vec![1, 0]), 1);
    for acks in [0, 1, -1] {
        let answers = ready(f.rm.append_records(AppendParams::client(1_000, acks), entry()));
        assert_eq!(answers[0].error_code, ErrorCode::NotLeaderOrFollower);
    }
    let reads = fetched(f.rm.fetch_messages(params, infos));
    assert_eq!(reads[0].error_code, ErrorCode::NotLeaderOrFollower);
    assert_eq!(reads[0].high_watermark, -1);
    assert!(reads[0].records.is_none());
}

#[tokio::test]
async fn a_long_poll_answers_when_data_arrives() {
    let f = fixture();
    host(&f, vec![0], leadership(0, 0, vec![0]), 1);
    let (params, infos) = consumer_fetch(30_000, 1);
    let FetchResult::Delayed(wait) = f.rm.fetch_messages(params, infos) else {
        panic!("an empty partition with min_bytes 1 waits");
    };
    let waiting = tokio::spawn(wait.complete());
    assert!(!waiting.is_finished());
    ready(f.rm.append_records(AppendParams::client(1_000, 1), entry()));
    let reads = tokio::time::timeout(BOUND, waiting).await.unwrap().unwrap();
    assert_eq!(reads[0].error_code, ErrorCode::None);
    assert_eq!(reads[0].high_watermark, 1);
    assert!(reads[0].size() > 0);
}

#[tokio::test]
async fn a_long_poll_without_data_answers_empty_at_max_wait() {
    let f = fixture();
    host(&f, vec![0], leadership(0, 0, vec![0]), 1);
    let (params, infos) = consumer_fetch(50, 1);
    let FetchResult::Delayed(wait) = f.rm.fetch_messages(params, infos) else {
        panic!("an empty partition with min_bytes 1 waits");
    };
    let reads = tokio::time::timeout(BOUND, wait.complete()).await.unwrap();
    assert_eq!(reads[0].error_code, ErrorCode::None);
    assert!(reads[0].records.is_none());
}

#[test]
fn consumers_read_below_the_high_watermark_and_followers_to_the_log_end() {
    let f = fixture();
    host(&f, vec![0, 1], leadership(0, 0, vec![0, 1]), 1);
    ready(f.rm.append_records(AppendParams::client(1_000, 1), entry()));
    let (params, infos) = consumer_fetch(0, 1);
    let reads = fetched(f.rm.fetch_messages(params.clone(), infos.clone()));
    assert_eq!(reads[0].high_watermark, 0);
    assert!(
        reads[0].records.is_none(),
        "the record is above the high watermark"
    );
    let follower = FetchParams {
        replica_id: 1,
        ..params
    };
    let reads = fetched(f.rm.fetch_messages(follower, infos));
    assert!(reads[0].size() > 0);
}

#[test]
fn becoming_leader_records_the_new_epochs_start_offset() {
    let f = fixture();
    let partition = host(&f, vec![0], leadership(0, 0, vec![0]), 1);
    let epochs = |p: &Arc<Partition>| -> Vec<(i32, i64)> {
        crate::cluster::sync::lock(p.log())
            .leader_epoch_cache()
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    };
    assert_eq!(epochs(&partition), vec![(0, 0)]);
    for _ in 0..3 {
        ready(f.rm.append_records(AppendParams::client(1_000, 1), entry()));
    }
    // Re-elected at epoch 2 (an election elsewhere took epoch 1): epoch 2 starts at the log end.
    host(&f, vec![0], leadership(0, 2, vec![0]), 1);
    assert_eq!(epochs(&partition), vec![(0, 0), (2, 3)]);
    // The same epoch again changes nothing.
    host(&f, vec![0], leadership(0, 2, vec![0]), 1);
    assert_eq!(epochs(&partition), vec![(0, 0), (2, 3)]);
}

#[test]
fn an_append_checked_after_a_follower_spell_is_not_acknowledged_even_as_leader_again() {
    // The check itself, with no waiter to see the follower state in between.
    let f = fixture();
    let partition = host(&f, vec![0, 1], leadership(0, 3, vec![0, 1]), 1);
    let records = entry().remove(0).records;
    let (_, append) = partition
        .append_records_to_leader(
            &records,
            AppendOrigin::Client,
            -1,
            None,
            f.time.milliseconds(),
        )
        .unwrap();
    partition.update_leader_and_isr(vec![0, 1], leadership(0, 4, vec![0, 1]));
    assert_eq!(
        partition.check_enough_replicas_reach_offset(append),
        ReplicationCheck::Pending,
        "re-elected: still its leadership"
    );
    partition.update_leader_and_isr(vec![0, 1], leadership(1, 5, vec![0, 1]));
    f.time.sleep(30_001);
    partition.update_leader_and_isr(vec![0, 1], leadership(0, 6, vec![0]));
    assert_eq!(partition.offsets().high_watermark, 1);
    assert_eq!(
        partition.check_enough_replicas_reach_offset(append),
        ReplicationCheck::Failed(ErrorCode::NotLeaderOrFollower)
    );
}

#[test]
fn internal_topics_take_appends_only_where_the_caller_allows_them() {
    let f = fixture();
    let offsets = TopicPartition::new(GROUP_METADATA_TOPIC_NAME, 0);
    f.rm.become_leader_or_follower(
        &offsets,
        None,
        vec![0],
        LeaderAndIsr::new(0, vec![0]),
        LogConfig::default(),
    )
    .unwrap();
    let to_offsets = || {
        let mut e = entry();
        e[0].topic_partition = offsets.clone();
        e
    };
    let refused = ready(f.rm.append_records(AppendParams::client(1_000, 1), to_offsets()));
    assert_eq!(refused[0].error_code, ErrorCode::InvalidTopicException);
    assert_eq!(
        refused[0].error_message.as_deref(),
        Some("Cannot append to internal topic __consumer_offsets")
    );
    // A coordinator (acks=-1; the ISR is this broker alone, so it is committed at once), and
    // Kafka's admin client through Produce.
    let coordinator = ready(f.rm.append_records(AppendParams::coordinator(1_000), to_offsets()));
    assert_eq!(
        (coordinator[0].error_code, coordinator[0].base_offset),
        (ErrorCode::None, 0)
    );
    let admin = AppendParams {
        internal_topics_allowed: true,
        ..AppendParams::client(1_000, 1)
    };
    let admin = ready(f.rm.append_records(admin, to_offsets()));
    assert_eq!(
        (admin[0].error_code, admin[0].base_offset),
        (ErrorCode::None, 1)
    );
}

/// Topic configs for the leadership tests: the defaults for every topic.
struct DefaultConfigs;

impl TopicConfigRepository for DefaultConfigs {
    fn topic_log_config<'a>(&'a self, _topic: &'a str) -> LogConfigFuture<'a> {
        Box::pin(async { Ok(LogConfig::default()) })
    }
}

/// Records every leadership change it hears of.
#[derive(Debug, Default)]
struct Recording(std::sync::Mutex<Vec<LeadershipChange>>);

impl LeadershipListener for Recording {
    fn on_leadership_change(&self, change: &LeadershipChange) {
        self.0.lock().unwrap().push(change.clone());
    }
}

fn leadership_of(partition: i32, state: LeaderAndIsr) -> PartitionLeadership {
    PartitionLeadership {
        topic_partition: TopicPartition::new("t", partition),
        topic_id: None,
        known_topic_id: None,
        replicas: vec![0, 1],
        leader_and_isr: state,
        is_new: true,
    }
}

#[tokio::test]
async fn leadership_changes_are_applied_checked_and_reported_once_per_request() {
    let f = fixture();
    let heard = Arc::new(Recording::default());
    f.rm.set_leadership_listener(heard.clone());
    let states = vec![
        leadership_of(0, leadership(0, 1, vec![0, 1])),
        // Its new log gets the id this broker's metadata knows.
        PartitionLeadership {
            known_topic_id: Some(Uuid::from_u128(7)),
            ..leadership_of(1, leadership(1, 1, vec![1, 0]))
        },
        // Not a replica here.
        PartitionLeadership {
            replicas: vec![1, 2],
            ..leadership_of(2, leadership(1, 1, vec![1, 2]))
        },
    ];
    let errors =
        f.rm.become_leader_or_follower_all(1, 5, &states, &DefaultConfigs)
            .await;
    assert_eq!(
        errors,
        vec![
            ErrorCode::None,
            ErrorCode::None,
            ErrorCode::UnknownTopicOrPartition
        ]
    );
    assert_eq!(
        f.rm.get_partition(&TopicPartition::new("t", 1))
            .unwrap()
            .topic_id(),
        Some(Uuid::from_u128(7))
    );
    // An older leader epoch changes nothing; the same one changes nothing either.
    let again =
        f.rm.become_leader_or_follower_all(
            1,
            5,
            &[
                leadership_of(0, leadership(1, 0, vec![1, 0])),
                leadership_of(1, leadership(1, 1, vec![1, 0])),
            ],
            &DefaultConfigs,
        )
        .await;
    assert_eq!(
        again,
        vec![ErrorCode::StaleControllerEpoch, ErrorCode::None],
        "a follower told of no id at its epoch is answered NONE"
    );
    // A new leader epoch under the same leaders (a replica left the ISR) is applied and heard
    // of by no one: no coordinator reloads for it.
    let bumped =
        f.rm.become_leader_or_follower_all(
            1,
            5,
            &[
                leadership_of(0, leadership(0, 2, vec![0])),
                leadership_of(1, leadership(1, 2, vec![1])),
            ],
            &DefaultConfigs,
        )
        .await;
    assert_eq!(bumped, vec![ErrorCode::None, ErrorCode::None]);
    assert_eq!(
        f.rm.get_partition(&TopicPartition::new("t", 0))
            .unwrap()
            .leader_and_isr()
            .leader_epoch,
        2
    );
    let stopped = f.rm.stop_replicas(&[
        StopPartition {
            topic_partition: TopicPartition::new("t", 0),
            leader_epoch: 1,
            delete: false,
        },
        StopPartition {
            topic_partition: TopicPartition::new("t", 1),
            leader_epoch: 2,
            delete: true,
        },
    ]);
    assert_eq!(stopped, vec![ErrorCode::FencedLeaderEpoch, ErrorCode::None]);
    assert!(f.rm.get_partition(&TopicPartition::new("t", 1)).is_none());
    let t = |p| TopicPartition::new("t", p);
    assert_eq!(
        *heard.0.lock().unwrap(),
        vec![
            LeadershipChange {
                leaders: vec![(t(0), 1)],
                resigned: vec![(t(1), Some(1))],
            },
            // Nothing from the second and third requests: no leader moved.
            LeadershipChange {
                leaders: Vec::new(),
                resigned: vec![(t(1), Some(2))],
            },
        ]
    );
}
