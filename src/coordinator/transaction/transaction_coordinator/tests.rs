//! The coordinator over a real `__transaction_state` partition (a replica manager over a temp
//! dir on a manual clock, this broker its only replica) and a fake wire to the partition
//! leaders, which records each WriteTxnMarkers and answers what the test says: whole
//! transactions, fencing, the timeout abort, markers retried and skipped, a coordinator that
//! fails over between the Prepare record and the markers, and expiry.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::AtomicI64;

use crate::cluster::{BrokerId, LeaderAndIsr, TRANSACTION_STATE_TOPIC_NAME, TopicPartition};
use crate::protocol::messages::write_txn_markers_request::WriteTxnMarkersRequest;
use crate::protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse,
};
use crate::replication::replica_manager::{TempReplicaManager, become_compacted_replica};

use super::super::transaction_marker_channel_manager::{
    MarkerDestination, MarkerFuture, MarkerSendError,
};
use super::super::transaction_state_manager::TransactionLogConfig;
use super::*;

/// How a fake leader answers one WriteTxnMarkers.
#[derive(Debug, Clone)]
enum Answer {
    /// These partitions' errors; NONE for the others.
    Errors(Vec<(TopicPartition, ErrorCode)>),
    /// No response (a lost connection).
    Lost,
    /// No error, once the semaphore gives a permit (markers a leader is slow to write).
    Held(Arc<tokio::sync::Semaphore>),
}

/// The partition leaders: every partition led by broker 1 unless told otherwise.
#[derive(Debug, Default)]
struct FakeLeaders {
    sent: Mutex<Vec<(BrokerId, WriteTxnMarkersRequest)>>,
    answers: Mutex<VecDeque<Answer>>,
    destinations: Mutex<HashMap<TopicPartition, MarkerDestination>>,
}

impl FakeLeaders {
    fn sent(&self) -> Vec<(BrokerId, WriteTxnMarkersRequest)> {
        lock(&self.sent).clone()
    }
}

impl TxnMarkerChannel for FakeLeaders {
    fn destination(&self, tp: &TopicPartition) -> MarkerDestination {
        lock(&self.destinations)
            .get(tp)
            .copied()
            .unwrap_or(MarkerDestination::Broker(1))
    }

    fn send(&self, broker: BrokerId, request: WriteTxnMarkersRequest) -> MarkerFuture<'_> {
        lock(&self.sent).push((broker, request.clone()));
        let answer = lock(&self.answers)
            .pop_front()
            .unwrap_or(Answer::Errors(Vec::new()));
        Box::pin(async move {
            let errors = match answer {
                Answer::Held(gate) => {
                    gate.acquire().await.map(|p| p.forget()).ok();
                    Vec::new()
                }
                Answer::Lost => {
                    return Err(MarkerSendError {
                        broker,
                        reason: "connection lost".into(),
                    });
                }
                Answer::Errors(errors) => errors,
            };
            let markers = request
                .markers
                .iter()
                .map(|m| WritableTxnMarkerResult {
                    producer_id: m.producer_id,
                    topics: m
                        .topics
                        .iter()
                        .map(|t| WritableTxnMarkerTopicResult {
                            name: t.name.clone(),
                            partitions: t
                                .partition_indexes
                                .iter()
                                .map(|p| {
                                    let tp = TopicPartition::new(t.name.to_string_lossy(), *p);
                                    let code = errors
                                        .iter()
                                        .find(|(e, _)| *e == tp)
                                        .map_or(ErrorCode::None, |(_, c)| *c);
                                    WritableTxnMarkerPartitionResult {
                                        partition_index: *p,
                                        error_code: code.code(),
                                        ..Default::default()
                                    }
                                })
                                .collect(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect();
            Ok(WriteTxnMarkersResponse {
                markers,
                ..Default::default()
            })
        })
    }
}

/// Producer ids from 1000 up.
#[derive(Debug)]
struct Ids(AtomicI64);

impl ProducerIdGenerator for Ids {
    fn generate_producer_id(&self) -> Result<i64, ErrorCode> {
        Ok(self.0.fetch_add(1, Ordering::SeqCst))
    }
}

const TIMEOUT_MS: i32 = 60_000;

struct Fixture {
    trm: TempReplicaManager,
    leaders: Arc<FakeLeaders>,
    ids: Arc<Ids>,
}

fn fixture() -> Fixture {
    let trm = TempReplicaManager::new(0, 1_000_000);
    become_compacted_replica(
        &trm.rm,
        &TopicPartition::new(TRANSACTION_STATE_TOPIC_NAME, 0),
        vec![0],
        LeaderAndIsr::new(0, vec![0]),
    );
    Fixture {
        trm,
        leaders: Arc::new(FakeLeaders::default()),
        ids: Arc::new(Ids(AtomicI64::new(1000))),
    }
}

/// A started coordinator over the fixture's partition, not yet elected.
fn coordinator(f: &Fixture) -> Arc<TransactionCoordinator> {
    let state_manager = Arc::new(TransactionStateManager::new(
        TransactionLogConfig {
            num_partitions: 1,
            load_buffer_size: 1 << 20,
            request_timeout_ms: 30_000,
        },
        Arc::clone(&f.trm.rm),
    ));
    let c = TransactionCoordinator::new(
        TransactionConfig {
            max_timeout_ms: 900_000,
            // The timers stay quiet; the tests call what they run.
            abort_timed_out_interval_ms: i32::MAX,
            remove_expired_interval_ms: i32::MAX,
            transactional_id_expiration_ms: 604_800_000,
        },
        state_manager,
        Arc::clone(&f.leaders) as Arc<dyn TxnMarkerChannel>,
        Arc::clone(&f.ids) as Arc<dyn ProducerIdGenerator>,
    );
    c.startup();
    c
}

/// Waits (bounded) until `done` holds.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// A coordinator elected for partition 0 at `epoch`, its load done.
async fn elected(f: &Fixture, epoch: i32) -> Arc<TransactionCoordinator> {
    let c = coordinator(f);
    c.on_election(0, epoch);
    let probe = Arc::clone(&c);
    eventually("the partition loads", move || {
        probe.state_manager().get_transaction_state("probe").is_ok()
    })
    .await;
    c
}

fn state(c: &TransactionCoordinator, id: &str) -> TransactionMetadata {
    let (_, m) = c
        .state_manager()
        .get_transaction_state(id)
        .unwrap()
        .unwrap();
    lock(&m).clone()
}

fn tps(ps: &[(&str, i32)]) -> BTreeSet<TopicPartition> {
    ps.iter()
        .map(|(t, p)| TopicPartition::new(*t, *p))
        .collect()
}

/// InitProducerId without an expected producer; its producer id and epoch.
async fn init(c: &TransactionCoordinator, id: &str) -> (i64, i16) {
    let r = c.handle_init_producer_id(id, TIMEOUT_MS, -1, -1).await;
    assert_eq!(r.error, ErrorCode::None, "{r:?}");
    (r.producer_id, r.producer_epoch)
}

/// One marker sent: producer id, epoch, commit?, coordinator epoch, partitions.
type SentMarker = (i64, i16, bool, i32, Vec<(String, i32)>);

/// Every marker sent.
fn markers(f: &Fixture) -> Vec<SentMarker> {
    f.leaders
        .sent()
        .into_iter()
        .flat_map(|(_, r)| r.markers)
        .map(|m| {
            let parts = m
                .topics
                .iter()
                .flat_map(|t| {
                    let name = t.name.to_string_lossy().into_owned();
                    t.partition_indexes.iter().map(move |p| (name.clone(), *p))
                })
                .collect();
            (
                m.producer_id,
                m.producer_epoch,
                m.transaction_result,
                m.coordinator_epoch,
                parts,
            )
        })
        .collect()
}

async fn completed(c: &TransactionCoordinator, id: &str, to: TransactionState) {
    eventually("the transaction completes", || {
        // A partition being loaded again answers nothing yet.
        let Ok(Some((_, m))) = c.state_manager().get_transaction_state(id) else {
            return false;
        };
        let m = lock(&m);
        m.state == to && m.pending_state.is_none()
    })
    .await;
}

#[tokio::test]
async fn a_committed_transaction_writes_its_markers_then_completes_and_survives_a_reload() {
    let f = fixture();
    let c = elected(&f, 5).await;
    let (pid, epoch) = init(&c, "t1").await;
    assert_eq!((pid, epoch), (1000, 0));
    let added = tps(&[("a", 0), ("a", 1), ("__consumer_offsets", 7)]);
    assert_eq!(
        c.handle_add_partitions_to_transaction("t1", pid, epoch, &added)
            .await,
        ErrorCode::None
    );
    assert_eq!(state(&c, "t1").state, TransactionState::Ongoing);
    assert_eq!(
        c.handle_end_transaction("t1", pid, epoch, TransactionResult::Commit)
            .await,
        ErrorCode::None
    );
    completed(&c, "t1", TransactionState::CompleteCommit).await;
    assert_eq!(
        markers(&f),
        vec![(
            pid,
            epoch,
            true,
            5,
            vec![
                ("__consumer_offsets".into(), 7),
                ("a".into(), 0),
                ("a".into(), 1)
            ]
        )]
    );
    assert!(state(&c, "t1").partitions.is_empty());
    assert_eq!(c.markers().num_txns_with_pending_markers(), 0);
    // A retried EndTxn is answered as done.
    assert_eq!(
        c.handle_end_transaction("t1", pid, epoch, TransactionResult::Commit)
            .await,
        ErrorCode::None
    );
    c.shutdown().await;
    // Another coordinator of the same log finds the id complete, with nothing to send.
    let again = elected(&f, 6).await;
    let m = state(&again, "t1");
    assert_eq!(
        (m.state, m.producer_id, m.producer_epoch),
        (TransactionState::CompleteCommit, pid, epoch)
    );
    assert_eq!(markers(&f).len(), 1);
    again.shutdown().await;
}

#[tokio::test]
async fn a_second_producer_fences_the_first_and_aborts_its_transaction() {
    let f = fixture();
    let c = elected(&f, 1).await;
    let (pid, epoch) = init(&c, "t").await;
    c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 0)]))
        .await;
    // The new producer is told to retry while the old transaction is aborted at a bumped
    // epoch no client is given.
    let r = c.handle_init_producer_id("t", TIMEOUT_MS, -1, -1).await;
    assert_eq!(r.error, ErrorCode::ConcurrentTransactions);
    completed(&c, "t", TransactionState::CompleteAbort).await;
    assert_eq!(
        markers(&f),
        vec![(pid, epoch + 1, false, 1, vec![("a".into(), 0)])]
    );
    assert_eq!(init(&c, "t").await, (pid, epoch + 2));
    // The old producer is fenced everywhere.
    assert_eq!(
        c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 1)]))
            .await,
        ErrorCode::ProducerFenced
    );
    assert_eq!(
        c.handle_end_transaction("t", pid, epoch, TransactionResult::Commit)
            .await,
        ErrorCode::ProducerFenced
    );
    c.shutdown().await;
}

#[tokio::test]
async fn requests_outside_a_transaction_get_kafkas_errors() {
    let f = fixture();
    let c = elected(&f, 1).await;
    assert_eq!(
        c.handle_end_transaction("nobody", 1, 0, TransactionResult::Commit)
            .await,
        ErrorCode::InvalidProducerIdMapping
    );
    let (pid, epoch) = init(&c, "t").await;
    assert_eq!(
        c.handle_end_transaction("t", pid, epoch, TransactionResult::Commit)
            .await,
        ErrorCode::InvalidTxnState,
        "nothing was added"
    );
    assert_eq!(
        c.handle_init_producer_id("t", 900_001, -1, -1).await.error,
        ErrorCode::InvalidTransactionTimeout
    );
    assert_eq!(
        c.handle_add_partitions_to_transaction("", pid, epoch, &tps(&[("a", 0)]))
            .await,
        ErrorCode::InvalidRequest
    );
    // Verification of a partition not in the (empty) transaction.
    assert_eq!(
        c.handle_verify_partitions_in_transaction("t", pid, epoch, &[TopicPartition::new("a", 0)]),
        vec![(TopicPartition::new("a", 0), ErrorCode::TransactionAbortable)]
    );
    c.shutdown().await;
    // Not loaded here: NOT_COORDINATOR.
    let other = coordinator(&f);
    assert_eq!(
        other
            .handle_init_producer_id("t", TIMEOUT_MS, -1, -1)
            .await
            .error,
        ErrorCode::NotCoordinator
    );
    other.shutdown().await;
}

#[tokio::test]
async fn a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced() {
    let f = fixture();
    let c = elected(&f, 1).await;
    let (pid, epoch) = init(&c, "t").await;
    c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 0)]))
        .await;
    c.abort_timed_out_transactions().await;
    assert_eq!(state(&c, "t").state, TransactionState::Ongoing, "not yet");
    f.trm.time.sleep(i64::from(TIMEOUT_MS) + 1);
    c.abort_timed_out_transactions().await;
    completed(&c, "t", TransactionState::CompleteAbort).await;
    assert_eq!(state(&c, "t").producer_epoch, epoch + 1);
    assert_eq!(
        markers(&f),
        vec![(pid, epoch + 1, false, 1, vec![("a".into(), 0)])]
    );
    assert_eq!(
        c.handle_end_transaction("t", pid, epoch, TransactionResult::Commit)
            .await,
        ErrorCode::ProducerFenced
    );
    c.shutdown().await;
}

#[tokio::test]
async fn markers_are_retried_on_a_moving_leader_and_skipped_for_a_deleted_partition() {
    let f = fixture();
    lock(&f.leaders.destinations).insert(
        TopicPartition::new("gone", 0),
        MarkerDestination::NoPartition,
    );
    lock(&f.leaders.answers).extend([
        Answer::Lost,
        Answer::Errors(vec![(
            TopicPartition::new("a", 1),
            ErrorCode::NotLeaderOrFollower,
        )]),
    ]);
    let c = elected(&f, 1).await;
    let (pid, epoch) = init(&c, "t").await;
    c.handle_add_partitions_to_transaction(
        "t",
        pid,
        epoch,
        &tps(&[("a", 0), ("a", 1), ("gone", 0)]),
    )
    .await;
    c.handle_end_transaction("t", pid, epoch, TransactionResult::Abort)
        .await;
    completed(&c, "t", TransactionState::CompleteAbort).await;
    let sent: Vec<Vec<(String, i32)>> = markers(&f).into_iter().map(|m| m.4).collect();
    assert_eq!(
        sent,
        vec![
            vec![("a".into(), 0), ("a".into(), 1)],
            vec![("a".into(), 0), ("a".into(), 1)],
            vec![("a".into(), 1)],
        ],
        "lost: both again; one refused: that one again; the deleted one never"
    );
    c.shutdown().await;
}

#[tokio::test]
async fn a_refused_marker_leaves_the_transaction_to_the_next_load() {
    let f = fixture();
    lock(&f.leaders.answers).push_back(Answer::Errors(vec![(
        TopicPartition::new("a", 0),
        ErrorCode::InvalidProducerEpoch,
    )]));
    let c = elected(&f, 1).await;
    let (pid, epoch) = init(&c, "t").await;
    c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 0)]))
        .await;
    c.handle_end_transaction("t", pid, epoch, TransactionResult::Commit)
        .await;
    eventually("the refusal is handled", || {
        c.markers().num_txns_with_pending_markers() == 0
    })
    .await;
    let m = state(&c, "t");
    assert_eq!(m.state, TransactionState::PrepareCommit);
    assert_eq!(m.pending_state, Some(TransactionState::CompleteCommit));
    c.shutdown().await;
    // The next coordinator sends the markers again at its own epoch, and completes.
    let again = elected(&f, 2).await;
    completed(&again, "t", TransactionState::CompleteCommit).await;
    let last = markers(&f).pop().unwrap();
    assert_eq!((last.2, last.3), (true, 2));
    again.shutdown().await;
}

#[tokio::test]
async fn a_resignation_drops_the_ids_and_their_markers() {
    let f = fixture();
    // The leader never answers: the markers stay queued until the resignation.
    lock(&f.leaders.destinations).insert(
        TopicPartition::new("a", 0),
        MarkerDestination::UnknownBroker,
    );
    let c = elected(&f, 1).await;
    let (pid, epoch) = init(&c, "t").await;
    c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 0)]))
        .await;
    c.handle_end_transaction("t", pid, epoch, TransactionResult::Commit)
        .await;
    assert_eq!(c.markers().num_txns_with_pending_markers(), 1);
    c.on_resignation(0, Some(2));
    assert_eq!(c.markers().num_txns_with_pending_markers(), 0);
    assert_eq!(
        c.state_manager().get_transaction_state("t").unwrap_err(),
        ErrorCode::NotCoordinator
    );
    assert!(f.leaders.sent().is_empty());
    c.shutdown().await;
}

#[tokio::test]
async fn idle_ids_expire_with_a_tombstone_and_open_ones_stay() {
    let f = fixture();
    let c = elected(&f, 1).await;
    let (pid, epoch) = init(&c, "idle").await;
    let (busy_pid, busy_epoch) = init(&c, "busy").await;
    c.handle_add_partitions_to_transaction("busy", busy_pid, busy_epoch, &tps(&[("a", 0)]))
        .await;
    let expiration = 1_000;
    assert_eq!(
        c.state_manager()
            .remove_expired_transactional_ids(expiration, &CancellationToken::new())
            .await,
        0
    );
    f.trm.time.sleep(expiration);
    assert_eq!(
        c.state_manager()
            .remove_expired_transactional_ids(expiration, &CancellationToken::new())
            .await,
        1
    );
    assert!(
        c.state_manager()
            .get_transaction_state("idle")
            .unwrap()
            .is_none()
    );
    assert_eq!(state(&c, "busy").state, TransactionState::Ongoing);
    c.shutdown().await;
    // The tombstone is in the log: a reload does not find the id, and InitProducerId starts it
    // afresh with a new producer id.
    let again = elected(&f, 2).await;
    assert!(
        again
            .state_manager()
            .get_transaction_state("idle")
            .unwrap()
            .is_none()
    );
    let (new_pid, new_epoch) = init(&again, "idle").await;
    assert_ne!(new_pid, pid);
    assert_eq!((new_epoch, epoch), (0, 0));
    again.shutdown().await;
}

#[tokio::test]
async fn a_new_leader_epoch_of_a_loaded_partition_reloads_it_and_sends_the_markers_again() {
    let f = fixture();
    // The leader is unknown at first: the markers wait.
    lock(&f.leaders.destinations).insert(
        TopicPartition::new("a", 0),
        MarkerDestination::UnknownBroker,
    );
    let c = elected(&f, 1).await;
    let (pid, epoch) = init(&c, "t").await;
    c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 0)]))
        .await;
    c.handle_end_transaction("t", pid, epoch, TransactionResult::Commit)
        .await;
    // An ISR change bumps the leader epoch of the coordinator's own partition: an election at
    // epoch 2, which drops the queued markers and loads the partition again.
    c.on_election(0, 2);
    lock(&f.leaders.destinations).clear();
    completed(&c, "t", TransactionState::CompleteCommit).await;
    let sent = markers(&f);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].3, 2, "sent at the new coordinator epoch");
    c.shutdown().await;
}

/// Starts a transaction on ("a", 0) and commits it with its markers held at the leader until the
/// returned gate opens; the id is left in PrepareCommit.
async fn committed_with_markers_held(
    f: &Fixture,
    c: &TransactionCoordinator,
) -> (i64, i16, Arc<tokio::sync::Semaphore>) {
    let (pid, epoch) = init(c, "t").await;
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    lock(&f.leaders.answers).push_back(Answer::Held(Arc::clone(&gate)));
    assert_eq!(
        c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 0)]))
            .await,
        ErrorCode::None
    );
    assert_eq!(
        c.handle_end_transaction("t", pid, epoch, TransactionResult::Commit)
            .await,
        ErrorCode::None
    );
    assert_eq!(state(c, "t").state, TransactionState::PrepareCommit);
    (pid, epoch, gate)
}

#[tokio::test]
async fn the_next_transaction_waits_for_the_last_ones_markers_instead_of_being_refused() {
    let f = fixture();
    let c = elected(&f, 1).await;
    let (pid, epoch, gate) = committed_with_markers_held(&f, &c).await;
    // The producer's next transaction starts while the markers are out: its add waits for
    // the completion and succeeds, where Kafka answers CONCURRENT_TRANSACTIONS.
    let add = tokio::spawn({
        let c = Arc::clone(&c);
        async move {
            c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 1)]))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(
        !add.is_finished(),
        "the add waits while the markers are out"
    );
    gate.add_permits(1);
    assert_eq!(add.await.unwrap(), ErrorCode::None);
    let m = state(&c, "t");
    assert_eq!(m.state, TransactionState::Ongoing);
    assert_eq!(m.partitions, tps(&[("a", 1)]));
    c.shutdown().await;
}

#[tokio::test]
async fn markers_held_past_the_wait_answer_concurrent_transactions() {
    let f = fixture();
    let c = elected(&f, 1).await;
    let (pid, epoch, gate) = committed_with_markers_held(&f, &c).await;
    let started = tokio::time::Instant::now();
    assert_eq!(
        c.handle_add_partitions_to_transaction("t", pid, epoch, &tps(&[("a", 1)]))
            .await,
        ErrorCode::ConcurrentTransactions
    );
    assert!(started.elapsed() >= BUSY_ID_WAIT);
    assert_eq!(state(&c, "t").state, TransactionState::PrepareCommit);
    gate.add_permits(1);
    completed(&c, "t", TransactionState::CompleteCommit).await;
    c.shutdown().await;
}
