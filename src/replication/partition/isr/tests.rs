//! Unit tests of the leader's ISR management against a fake AlterPartition manager that keeps
//! the proposals for the test to answer: shrink after the lag, expand at the high watermark and
//! the epoch's start, one proposal in flight with the maximal ISR counted meanwhile, each kind
//! of answer (commit, roll back, wait for LeaderAndIsr, send again), the broker epoch a
//! leadership was granted under, and the high watermark held under the min ISR.

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::cluster::sync::lock;
use crate::cluster::time::MockTime;
use crate::cluster::{LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;
use crate::replication::AppendParams;
use crate::replication::alter_partition::{
    AlterPartitionCallback, AlterPartitionItem, AlterPartitionManager, ReplicaEligibility,
};
use crate::replication::partition::Partition;
use crate::replication::replica_manager::{
    AppendEntry, ProduceResult, ReplicaManager, TempReplicaManager,
};
use crate::storage::log_config::LogConfig;

const LAG_MS: i64 = 10_000;

/// Keeps every proposal with its callback.
#[derive(Default)]
struct FakeManager {
    submitted: Mutex<Vec<(AlterPartitionItem, Option<AlterPartitionCallback>)>>,
}

impl std::fmt::Debug for FakeManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FakeManager")
    }
}

impl AlterPartitionManager for FakeManager {
    fn submit(&self, item: AlterPartitionItem, callback: AlterPartitionCallback) {
        lock(&self.submitted).push((item, Some(callback)));
    }
}

impl FakeManager {
    fn count(&self) -> usize {
        lock(&self.submitted).len()
    }

    fn last(&self) -> AlterPartitionItem {
        lock(&self.submitted).last().unwrap().0.clone()
    }

    /// Answers the last proposal with `result` (outside the list's lock: a callback may
    /// submit again).
    fn answer_last(&self, result: Result<LeaderAndIsr, ErrorCode>) {
        let callback = lock(&self.submitted).last_mut().unwrap().1.take().unwrap();
        callback(result);
    }
}

/// The brokers the test declares dead.
#[derive(Debug, Default)]
struct Dead(Mutex<Vec<i32>>);

impl ReplicaEligibility for Dead {
    fn is_replica_isr_eligible(&self, broker_id: i32) -> bool {
        !lock(&self.0).contains(&broker_id)
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    rm: Arc<ReplicaManager>,
    time: Arc<MockTime>,
    manager: Arc<FakeManager>,
    dead: Arc<Dead>,
}

fn fixture() -> Fixture {
    let TempReplicaManager { dir, rm, time } = TempReplicaManager::new(0, 1_700_000_000_000);
    let manager = Arc::new(FakeManager::default());
    let dead = Arc::new(Dead::default());
    rm.set_isr_management(
        Arc::clone(&manager) as Arc<dyn AlterPartitionManager>,
        Arc::clone(&dead) as Arc<dyn ReplicaEligibility>,
        LAG_MS,
    );
    Fixture {
        _dir: dir,
        rm,
        time,
        manager,
        dead,
    }
}

/// The replica manager's IsrExpandsPerSec, IsrShrinksPerSec and FailedIsrUpdatesPerSec counts.
fn isr_counts(f: &Fixture) -> (u64, u64, u64) {
    let meters = f.rm.isr_meters();
    (
        meters.expands.count(),
        meters.shrinks.count(),
        meters.failed.count(),
    )
}

fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

fn leadership(leader_epoch: i32, isr: Vec<i32>, partition_epoch: i32) -> LeaderAndIsr {
    LeaderAndIsr {
        leader_epoch,
        partition_epoch,
        ..LeaderAndIsr::new(0, isr)
    }
}

fn host(f: &Fixture, state: LeaderAndIsr, min_isr: i32) -> Arc<Partition> {
    let config = LogConfig {
        min_insync_replicas: min_isr,
        ..LogConfig::default()
    };
    f.rm.become_leader_or_follower_at(&tp(), None, vec![0, 1, 2], state, config, Some(7))
        .unwrap()
}

fn produce(f: &Fixture, n: usize) {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    for i in 0..n {
        b.records
            .push(SimpleRecord::new(1, Some(vec![i as u8]), Some(vec![1; 8])));
    }
    let entry = AppendEntry {
        topic_partition: tp(),
        records: Bytes::from(b.build().unwrap()),
        verification_guard: None,
    };
    let ProduceResult::Ready(answers) =
        f.rm.append_records(AppendParams::client(1_000, 1), vec![entry])
    else {
        panic!("acks=1 answers at once");
    };
    assert_eq!(answers[0].error_code, ErrorCode::None);
}

#[test]
fn a_follower_behind_for_longer_than_the_lag_is_proposed_out_and_counted_until_committed() {
    let f = fixture();
    let p = host(&f, leadership(3, vec![0, 1, 2], 5), 1);
    produce(&f, 4);
    p.update_follower_fetch_state(1, 4, 4, 0).unwrap();
    p.update_follower_fetch_state(2, 2, 4, 0).unwrap();
    // Within the lag nobody leaves.
    f.time.sleep(LAG_MS);
    p.maybe_shrink_isr();
    assert_eq!(f.manager.count(), 0);
    // Follower 1 is at the leader's end (caught up however long it waits); 2 is not.
    f.time.sleep(1);
    p.maybe_shrink_isr();
    assert_eq!(f.manager.count(), 1);
    let item = f.manager.last();
    assert_eq!(item.leader_and_isr.isr, vec![0, 1]);
    assert_eq!(item.leader_and_isr.leader_epoch, 3);
    assert_eq!(item.leader_and_isr.partition_epoch, 5);
    assert_eq!(
        item.broker_epoch,
        Some(7),
        "the epoch the leadership was granted under"
    );
    // In flight: nothing else is proposed, the ISR counted is still the old one, so the high
    // watermark waits for follower 2.
    p.maybe_shrink_isr();
    assert_eq!(f.manager.count(), 1);
    assert!(p.is_isr_change_in_flight());
    assert_eq!(p.maximal_isr(), vec![0, 1, 2]);
    assert_eq!(p.offsets().high_watermark, 2);
    assert_eq!(isr_counts(&f), (0, 0, 0), "a shrink counts once committed");
    f.manager.answer_last(Ok(LeaderAndIsr {
        partition_epoch: 6,
        ..item.leader_and_isr.clone()
    }));
    assert_eq!(isr_counts(&f), (0, 1, 0));
    assert!(!p.is_isr_change_in_flight());
    assert_eq!(p.leader_and_isr().isr, vec![0, 1]);
    assert_eq!(p.leader_and_isr().partition_epoch, 6);
    assert_eq!(
        p.offsets().high_watermark,
        4,
        "follower 2 no longer holds it"
    );
}

#[test]
fn a_follower_at_the_high_watermark_and_the_epochs_start_is_proposed_in() {
    let f = fixture();
    produce_before_leading(&f);
    let p = host(&f, leadership(1, vec![0, 1], 0), 1);
    // The epoch started at offset 2 (the log end when this broker took it).
    p.update_follower_fetch_state(1, 2, 2, 0).unwrap();
    assert_eq!(p.offsets().high_watermark, 2);
    p.update_follower_fetch_state(2, 1, 2, 0).unwrap();
    assert_eq!(f.manager.count(), 0, "below the high watermark");
    p.update_follower_fetch_state(2, 2, 2, 0).unwrap();
    assert_eq!(f.manager.count(), 1);
    assert_eq!(f.manager.last().leader_and_isr.isr, vec![0, 1, 2]);
    // While it is in flight, the new member counts: the high watermark waits for it too.
    assert_eq!(p.maximal_isr(), vec![0, 1, 2]);
    // The controller did not apply it (say, broker 2 is shutting down): back to [0, 1], and a
    // later fetch may propose again.
    f.manager.answer_last(Err(ErrorCode::IneligibleReplica));
    assert_eq!(isr_counts(&f), (0, 0, 1), "a refusal is a failed update");
    assert_eq!(p.maximal_isr(), vec![0, 1]);
    assert!(!p.is_isr_change_in_flight());
    p.update_follower_fetch_state(2, 2, 2, 0).unwrap();
    assert_eq!(f.manager.count(), 2);
    let sent = f.manager.last().leader_and_isr;
    f.manager.answer_last(Ok(LeaderAndIsr {
        partition_epoch: sent.partition_epoch + 1,
        ..sent
    }));
    assert_eq!(isr_counts(&f), (1, 0, 1));
    assert_eq!(p.leader_and_isr().isr, vec![0, 1, 2]);
}

/// Two records on the partition's log before this broker leads it, so its epoch starts at 2.
fn produce_before_leading(f: &Fixture) {
    let p = host(f, leadership(0, vec![0], 0), 1);
    produce(f, 2);
    assert_eq!(p.offsets().log_end_offset, 2);
}

#[test]
fn refusals_that_mean_a_stale_view_wait_for_the_next_leader_and_isr() {
    for code in [
        ErrorCode::StaleBrokerEpoch,
        ErrorCode::FencedLeaderEpoch,
        ErrorCode::InvalidUpdateVersion,
    ] {
        let f = fixture();
        let p = host(&f, leadership(3, vec![0, 1, 2], 5), 1);
        produce(&f, 1);
        f.time.sleep(LAG_MS + 1);
        p.maybe_shrink_isr();
        f.manager.answer_last(Err(code));
        assert!(p.is_isr_change_in_flight(), "{code:?}: still pending");
        p.maybe_shrink_isr();
        assert_eq!(f.manager.count(), 1, "{code:?}: nothing more proposed");
        // The controller's next state replaces the proposal.
        p.update_leader_and_isr(vec![0, 1, 2], leadership(4, vec![0, 1], 6));
        assert!(!p.is_isr_change_in_flight());
    }
}

#[test]
fn an_unexpected_error_sends_the_proposal_again_and_a_late_answer_is_ignored() {
    let f = fixture();
    let p = host(&f, leadership(3, vec![0, 1, 2], 5), 1);
    produce(&f, 1);
    f.time.sleep(LAG_MS + 1);
    p.maybe_shrink_isr();
    let sent = f.manager.last();
    f.manager.answer_last(Err(ErrorCode::UnknownServerError));
    assert_eq!(f.manager.count(), 2);
    assert_eq!(f.manager.last(), sent);
    assert_eq!(isr_counts(&f), (0, 0, 1));
    // A LeaderAndIsr arrives first; the controller's answer to the old proposal then changes
    // nothing.
    p.update_leader_and_isr(vec![0, 1, 2], leadership(3, vec![0, 2], 7));
    f.manager.answer_last(Ok(LeaderAndIsr {
        partition_epoch: 6,
        ..sent.leader_and_isr
    }));
    assert_eq!(p.leader_and_isr().isr, vec![0, 2]);
    assert_eq!(p.leader_and_isr().partition_epoch, 7);
    assert_eq!(
        isr_counts(&f),
        (0, 0, 1),
        "an answer no longer pending counts nothing"
    );
    // And a state of an older partition epoch at the same leader epoch is ignored.
    p.update_leader_and_isr(vec![0, 1, 2], leadership(3, vec![0, 1, 2], 6));
    assert_eq!(p.leader_and_isr().isr, vec![0, 2]);
}

#[test]
fn the_high_watermark_stays_while_the_isr_is_under_the_min_isr() {
    let f = fixture();
    let p = host(&f, leadership(1, vec![0], 0), 2);
    produce(&f, 3);
    assert_eq!(p.offsets().high_watermark, 0, "one in sync, min ISR 2");
    // A caught-up follower outside the ISR does not lift it either: the ISR must grow.
    p.update_follower_fetch_state(1, 3, 3, 0).unwrap();
    assert_eq!(p.offsets().high_watermark, 0);
    let item = f.manager.last();
    assert_eq!(item.leader_and_isr.isr, vec![0, 1]);
    f.manager.answer_last(Ok(LeaderAndIsr {
        partition_epoch: 1,
        ..item.leader_and_isr
    }));
    assert_eq!(p.offsets().high_watermark, 3);
}

#[test]
fn a_dead_follower_neither_joins_the_isr_nor_holds_the_high_watermark_outside_it() {
    let f = fixture();
    let p = host(&f, leadership(1, vec![0, 1], 0), 1);
    produce(&f, 3);
    p.update_follower_fetch_state(1, 3, 3, 0).unwrap();
    // Follower 2, outside the ISR, caught up a moment ago at offset 2 (it asked for the
    // leader's end as of its previous fetch), then its broker died.
    p.update_follower_fetch_state(2, 0, 2, 0).unwrap();
    p.update_follower_fetch_state(2, 2, 3, 0).unwrap();
    assert_eq!(f.manager.count(), 0, "2 is below the high watermark");
    produce(&f, 1);
    p.update_follower_fetch_state(1, 4, 4, 0).unwrap();
    assert_eq!(
        p.offsets().high_watermark,
        3,
        "alive and caught up within the lag at 2: the high watermark waits for it below 4"
    );
    lock(&f.dead.0).push(2);
    p.update_follower_fetch_state(1, 4, 4, 0).unwrap();
    assert_eq!(
        p.offsets().high_watermark,
        4,
        "a dead broker holds nothing back"
    );
    // Nor is it proposed into the ISR when a last fetch of it lands at the high watermark.
    p.update_follower_fetch_state(2, 4, 4, 0).unwrap();
    assert_eq!(f.manager.count(), 0);
}
