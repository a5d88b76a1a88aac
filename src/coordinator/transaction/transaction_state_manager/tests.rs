//! The manager over a real `__transaction_state` partition (a replica manager over a temp dir,
//! this broker its only replica): lookups by load state, moves persisted and installed, loads
//! that find transactions to complete, tombstones, and appends that finish after the
//! coordinator moved.

use std::collections::BTreeSet;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::cluster::sync::lock;
use crate::cluster::{LeaderAndIsr, TRANSACTION_STATE_TOPIC_NAME, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::replication::ReplicaManager;
use crate::replication::replica_manager::{become_compacted_replica, system_clock_replica_manager};

use super::super::transaction_metadata::{EpochBump, TransactionMetadata};
use super::super::transaction_state::TransactionState;
use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    rm: Arc<ReplicaManager>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let rm = system_clock_replica_manager(0, dir.path());
    become_compacted_replica(
        &rm,
        &TopicPartition::new(TRANSACTION_STATE_TOPIC_NAME, 0),
        vec![0],
        LeaderAndIsr::new(0, vec![0]),
    );
    Fixture { _dir: dir, rm }
}

fn manager(f: &Fixture) -> TransactionStateManager {
    TransactionStateManager::new(
        TransactionLogConfig {
            num_partitions: 1,
            load_buffer_size: 1 << 20,
            request_timeout_ms: 30_000,
        },
        Arc::clone(&f.rm),
    )
}

/// A manager with partition 0 loaded at coordinator epoch `epoch`; what the load found to
/// complete.
fn loaded(f: &Fixture, epoch: i32) -> (TransactionStateManager, Vec<TransactionToComplete>) {
    let m = manager(f);
    let id = m.begin_loading(0, epoch).unwrap();
    let to_complete = m.load(0, epoch, id);
    (m, to_complete)
}

/// Persists and installs the move `prepare` makes on `id`'s metadata.
async fn persist(
    m: &TransactionStateManager,
    id: &str,
    prepare: impl FnOnce(&mut TransactionMetadata) -> TxnTransitMetadata,
) -> ErrorCode {
    let (epoch, shared) = m.get_transaction_state(id).unwrap().unwrap();
    let transit = prepare(&mut lock(&shared));
    m.append_transaction_to_log(id, epoch, &transit, &CancellationToken::new())
        .await
}

/// The move of a new id's first InitProducerId: epoch 0.
fn first_epoch(md: &mut TransactionMetadata, now: i64) -> TxnTransitMetadata {
    match md
        .prepare_increment_producer_epoch(60_000, None, now)
        .unwrap()
    {
        EpochBump::Prepared(t) => t,
        EpochBump::Fenced => panic!("a new producer is not fenced"),
    }
}

/// Persists `id`'s first InitProducerId.
async fn init(m: &TransactionStateManager, id: &str, now: i64) -> ErrorCode {
    persist(m, id, |md| first_epoch(md, now)).await
}

#[test]
fn ids_are_looked_up_only_where_their_partition_is_loaded() {
    let f = fixture();
    let m = manager(&f);
    assert_eq!(
        m.get_transaction_state("t").err(),
        Some(ErrorCode::NotCoordinator)
    );
    let id = m.begin_loading(0, 3).unwrap();
    assert_eq!(
        m.get_transaction_state("t").err(),
        Some(ErrorCode::CoordinatorLoadInProgress)
    );
    assert!(m.any_loading());
    assert_eq!(m.load(0, 3, id), Vec::new());
    assert!(m.get_transaction_state("t").unwrap().is_none());
    // An older election changes nothing; a resignation unloads.
    assert_eq!(m.begin_loading(0, 2), None);
    assert!(m.remove_transactions_for_partition(0, Some(3)));
    assert_eq!(
        m.get_transaction_state("t").err(),
        Some(ErrorCode::NotCoordinator)
    );
}

#[tokio::test]
async fn moves_are_persisted_installed_and_a_load_completes_a_prepared_commit() {
    let f = fixture();
    let (m, _) = loaded(&f, 0);
    let now = m.now_ms();
    m.put_transaction_state_if_not_exists(TransactionMetadata::new("t", 1000, 60_000, now))
        .unwrap();
    assert_eq!(init(&m, "t", now).await, ErrorCode::None);
    let added: BTreeSet<TopicPartition> =
        [TopicPartition::new("a", 0), TopicPartition::new("b", 2)].into();
    let code = persist(&m, "t", |md| {
        md.prepare_add_partitions(&added, now + 1).unwrap()
    })
    .await;
    assert_eq!(code, ErrorCode::None);
    let code = persist(&m, "t", |md| {
        md.prepare_abort_or_commit(TransactionState::PrepareCommit, now + 2)
            .unwrap()
    })
    .await;
    assert_eq!(code, ErrorCode::None);
    let (_, shared) = m.get_transaction_state("t").unwrap().unwrap();
    assert_eq!(lock(&shared).state, TransactionState::PrepareCommit);

    // Another coordinator epoch loads the log: the commit is to be completed, markers first.
    let (again, to_complete) = loaded(&f, 1);
    assert_eq!(to_complete.len(), 1);
    let complete = &to_complete[0];
    assert_eq!(
        (
            complete.transactional_id.as_str(),
            complete.coordinator_epoch,
            complete.completion.state,
            complete.completion.producer_epoch
        ),
        ("t", 1, TransactionState::CompleteCommit, 0)
    );
    let (epoch, shared) = again.get_transaction_state("t").unwrap().unwrap();
    let md = lock(&shared).clone();
    assert_eq!(epoch, 1);
    assert_eq!(
        (md.producer_id, md.state, md.partitions, md.pending_state),
        (
            1000,
            TransactionState::PrepareCommit,
            added,
            Some(TransactionState::CompleteCommit)
        )
    );
    // The previous producer epoch is not logged.
    assert_eq!(md.last_producer_epoch, -1);
}

#[tokio::test]
async fn a_move_that_finishes_after_the_coordinator_moved_is_not_installed() {
    let f = fixture();
    let (m, _) = loaded(&f, 0);
    let now = m.now_ms();
    let (epoch, shared) = m
        .put_transaction_state_if_not_exists(TransactionMetadata::new("t", 1000, 60_000, now))
        .unwrap();
    let transit = first_epoch(&mut lock(&shared), now);
    assert!(m.remove_transactions_for_partition(0, Some(0)));
    let code = m
        .append_transaction_to_log("t", epoch, &transit, &CancellationToken::new())
        .await;
    assert_eq!(code, ErrorCode::NotCoordinator);
    assert_eq!(lock(&shared).producer_epoch, -1, "nothing installed");
}

#[tokio::test]
async fn an_expired_id_is_a_tombstone_and_a_load_forgets_it() {
    let f = fixture();
    let (m, _) = loaded(&f, 0);
    let now = m.now_ms();
    m.put_transaction_state_if_not_exists(TransactionMetadata::new("gone", 1000, 60_000, now))
        .unwrap();
    m.put_transaction_state_if_not_exists(TransactionMetadata::new("kept", 2000, 60_000, now))
        .unwrap();
    for id in ["gone", "kept"] {
        assert_eq!(init(&m, id, now).await, ErrorCode::None);
    }
    let code = persist(&m, "gone", |md| md.prepare_dead().unwrap()).await;
    assert_eq!(code, ErrorCode::None);
    let (again, _) = loaded(&f, 1);
    assert!(again.get_transaction_state("gone").unwrap().is_none());
    assert!(again.get_transaction_state("kept").unwrap().is_some());
}

#[test]
fn append_errors_are_mapped_as_kafka_maps_them() {
    for (from, to) in [
        (
            ErrorCode::UnknownTopicOrPartition,
            ErrorCode::CoordinatorNotAvailable,
        ),
        (
            ErrorCode::NotEnoughReplicas,
            ErrorCode::CoordinatorNotAvailable,
        ),
        (
            ErrorCode::NotEnoughReplicasAfterAppend,
            ErrorCode::CoordinatorNotAvailable,
        ),
        (
            ErrorCode::RequestTimedOut,
            ErrorCode::CoordinatorNotAvailable,
        ),
        (ErrorCode::NotLeaderOrFollower, ErrorCode::NotCoordinator),
        (ErrorCode::KafkaStorageError, ErrorCode::NotCoordinator),
        (ErrorCode::MessageTooLarge, ErrorCode::UnknownServerError),
        (ErrorCode::RecordListTooLarge, ErrorCode::UnknownServerError),
        (ErrorCode::CorruptMessage, ErrorCode::CorruptMessage),
        (ErrorCode::None, ErrorCode::None),
    ] {
        assert_eq!(append_error(from), to, "{from:?}");
    }
}
