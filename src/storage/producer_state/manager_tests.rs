//! Unit tests of the producer state machine and its snapshot files.

use super::*;
use crate::protocol::record::batch::{CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK};

/// A header of a batch of `count` records from producer `pid`.
fn header(pid: i64, epoch: i16, base_seq: i32, count: i32) -> RecordBatchHeader {
    RecordBatchHeader {
        base_offset: 0,
        batch_length: 100,
        partition_leader_epoch: 0,
        magic: 2,
        crc: 0,
        attributes: 0,
        last_offset_delta: count - 1,
        base_timestamp: 1000,
        max_timestamp: 1000,
        producer_id: pid,
        producer_epoch: epoch,
        base_sequence: base_seq,
        records_count: count,
    }
}

fn manager(dir: &Path) -> ProducerStateManager {
    ProducerStateManager::new(dir, "t-0".into(), DEFAULT_PRODUCER_ID_EXPIRATION_MS).unwrap()
}

/// Checks and applies like a leader: returns the check's outcome.
fn leader_append(
    m: &mut ProducerStateManager,
    h: RecordBatchHeader,
    next_offset: &mut i64,
) -> Result<LeaderBatchCheck, ProducerStateError> {
    let check = m.check_leader_batch(&h, *next_offset, AppendOrigin::Client, None, None)?;
    if check == LeaderBatchCheck::Append {
        let first = *next_offset;
        let last = first + i64::from(h.last_offset_delta);
        m.apply_batch(&h, first, last, None);
        *next_offset = last + 1;
        m.update_map_end_offset(*next_offset);
    }
    Ok(check)
}

#[test]
fn in_order_batches_append_and_retries_of_the_last_five_are_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut next = 0;
    for i in 0..6 {
        let check = leader_append(&mut m, header(7, 0, i * 3, 3), &mut next).unwrap();
        assert_eq!(check, LeaderBatchCheck::Append);
    }
    assert_eq!(next, 18);
    // Batch 2 (seq 6..8, offsets 6..8) is among the last five.
    match leader_append(&mut m, header(7, 0, 6, 3), &mut next).unwrap() {
        LeaderBatchCheck::Duplicate(b) => {
            assert_eq!((b.first_offset(), b.last_offset), (6, 8));
            assert_eq!((b.first_seq(), b.last_seq), (6, 8));
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    assert_eq!(next, 18, "a duplicate appends nothing");
    // Batch 0 (seq 0..2) was evicted: now it is out of order, not a duplicate.
    assert!(matches!(
        leader_append(&mut m, header(7, 0, 0, 3), &mut next),
        Err(ProducerStateError::OutOfOrderSequence { .. })
    ));
}

#[test]
fn a_gap_is_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut next = 0;
    leader_append(&mut m, header(7, 0, 0, 2), &mut next).unwrap();
    let err = leader_append(&mut m, header(7, 0, 3, 1), &mut next).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Out of order sequence number for producer 7 at offset 2 in partition t-0: 3 (incoming seq. number), 1 (current end sequence number)"
    );
    // A partial overlap with an appended batch is out of order too.
    assert!(leader_append(&mut m, header(7, 0, 1, 2), &mut next).is_err());
    assert_eq!(
        leader_append(&mut m, header(7, 0, 2, 1), &mut next).unwrap(),
        LeaderBatchCheck::Append
    );
}

#[test]
fn older_epochs_are_fenced_and_new_epochs_start_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut next = 0;
    leader_append(&mut m, header(7, 3, 0, 1), &mut next).unwrap();
    let err = leader_append(&mut m, header(7, 2, 1, 1), &mut next).unwrap_err();
    assert!(
        matches!(err, ProducerStateError::InvalidProducerEpoch { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "Epoch of producer 7 at offset 1 in t-0 is 2, which is smaller than the last seen epoch 3"
    );
    assert!(matches!(
        leader_append(&mut m, header(7, 4, 5, 1), &mut next),
        Err(ProducerStateError::OutOfOrderSequence { .. })
    ));
    assert_eq!(
        leader_append(&mut m, header(7, 4, 0, 1), &mut next).unwrap(),
        LeaderBatchCheck::Append
    );
    let entry = m.last_entry(7).unwrap();
    assert_eq!(entry.producer_epoch, 4);
    assert_eq!(
        entry.batch_metadata.len(),
        1,
        "the new epoch forgot the old batches"
    );
}

#[test]
fn unknown_producers_are_accepted_at_any_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut next = 0;
    assert_eq!(
        leader_append(&mut m, header(99, 5, 1234, 2), &mut next).unwrap(),
        LeaderBatchCheck::Append
    );
    assert_eq!(m.last_entry(99).unwrap().last_seq(), 1235);
    assert!(leader_append(&mut m, header(99, 5, 1237, 1), &mut next).is_err());
}

#[test]
fn sequences_wrap_at_int_max() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut next = 0;
    // Two records from i32::MAX - 1: the last sequence is i32::MAX.
    leader_append(&mut m, header(7, 0, i32::MAX - 1, 2), &mut next).unwrap();
    assert_eq!(m.last_entry(7).unwrap().last_seq(), i32::MAX);
    assert_eq!(
        leader_append(&mut m, header(7, 0, 0, 3), &mut next).unwrap(),
        LeaderBatchCheck::Append
    );
    // A batch that itself wraps: base i32::MAX, three records end at sequence 1.
    let mut m2 = manager(dir.path());
    let mut next2 = 0;
    leader_append(&mut m2, header(8, 0, i32::MAX, 3), &mut next2).unwrap();
    assert_eq!(m2.last_entry(8).unwrap().last_seq(), 1);
    match leader_append(&mut m2, header(8, 0, i32::MAX, 3), &mut next2).unwrap() {
        LeaderBatchCheck::Duplicate(b) => assert_eq!(b.first_seq(), i32::MAX),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        leader_append(&mut m2, header(8, 0, 2, 1), &mut next2).unwrap(),
        LeaderBatchCheck::Append
    );
}

#[test]
fn a_plain_batch_during_the_producers_transaction_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut h = header(7, 0, 0, 1);
    h.attributes |= TRANSACTIONAL_FLAG_MASK;
    assert_eq!(
        m.check_leader_batch(&h, 0, AppendOrigin::Client, None, None),
        Ok(LeaderBatchCheck::Append)
    );
    m.apply_batch(&h, 0, 0, None);
    assert_eq!(m.first_unstable_offset(), Some(0));
    assert!(matches!(
        m.check_leader_batch(&header(7, 0, 1, 1), 1, AppendOrigin::Client, None, None),
        Err(ProducerStateError::InvalidTxnState { .. })
    ));
}

#[test]
fn a_marker_ends_the_transaction_and_one_from_an_older_coordinator_or_producer_is_refused() {
    use crate::protocol::record::builder::ControlRecordType;
    use crate::protocol::record::control::EndTxnMarker;
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut data = header(7, 1, 0, 1);
    data.attributes |= TRANSACTIONAL_FLAG_MASK;
    m.apply_batch(&data, 0, 0, None);
    assert_eq!(m.last_entry(7).unwrap().current_txn_first_offset, Some(0));
    let mut control = header(7, 1, -1, 1);
    control.attributes |= TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK;
    let marker = |coordinator_epoch| {
        Some(EndTxnMarker {
            kind: ControlRecordType::Commit,
            coordinator_epoch,
        })
    };
    assert_eq!(
        m.check_leader_batch(&control, 1, AppendOrigin::Coordinator, marker(5), None),
        Ok(LeaderBatchCheck::Append)
    );
    m.apply_batch(&control, 1, 1, marker(5));
    let e = m.last_entry(7).unwrap();
    assert_eq!((e.current_txn_first_offset, e.coordinator_epoch), (None, 5));
    assert!(matches!(
        m.check_leader_batch(&control, 2, AppendOrigin::Coordinator, marker(4), None),
        Err(ProducerStateError::CoordinatorFenced { .. })
    ));
    let mut older = control;
    older.producer_epoch = 0;
    assert!(matches!(
        m.check_leader_batch(&older, 2, AppendOrigin::Coordinator, marker(5), None),
        Err(ProducerStateError::InvalidProducerEpoch { .. })
    ));
    // A follower takes what its leader wrote.
    assert_eq!(
        m.check_leader_batch(&older, 2, AppendOrigin::Replication, marker(4), None),
        Ok(LeaderBatchCheck::Append)
    );
}

#[test]
fn followers_apply_without_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    m.apply_batch(&header(7, 3, 10, 1), 0, 0, None);
    // A gap and an older epoch from the leader are taken as they are.
    m.apply_batch(&header(7, 2, 50, 2), 1, 2, None);
    let e = m.last_entry(7).unwrap();
    assert_eq!((e.producer_epoch, e.last_seq()), (2, 51));
    assert_eq!(
        m.check_leader_batch(
            &header(7, 1, 0, 1),
            3,
            AppendOrigin::Replication,
            None,
            None
        ),
        Ok(LeaderBatchCheck::Append)
    );
}

#[test]
fn producers_expire_by_their_last_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = ProducerStateManager::new(dir.path(), "t-0".into(), 1000).unwrap();
    let mut old = header(1, 0, 0, 1);
    old.max_timestamp = 5000;
    let mut fresh = header(2, 0, 0, 1);
    fresh.max_timestamp = 5800;
    m.apply_batch(&old, 0, 0, None);
    m.apply_batch(&fresh, 1, 1, None);
    assert_eq!(m.remove_expired_producers(5999), 0);
    assert_eq!(m.remove_expired_producers(6000), 1);
    assert!(m.last_entry(1).is_none());
    assert!(m.last_entry(2).is_some());
    assert_eq!(m.remove_expired_producers(6800), 1);
    assert!(m.is_empty());
}

#[test]
fn snapshots_are_written_only_past_the_last_one_and_reload() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let mut next = 0;
    leader_append(&mut m, header(7, 1, 0, 4), &mut next).unwrap();
    leader_append(&mut m, header(8, 0, 0, 1), &mut next).unwrap();
    let path = m.take_snapshot(true).unwrap().unwrap();
    assert!(path.ends_with("00000000000000000005.snapshot"));
    assert_eq!(m.take_snapshot(true).unwrap(), None, "no new offset");
    let entries = snapshot::read_snapshot(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[0],
        ProducerSnapshotEntry {
            producer_id: 7,
            producer_epoch: 1,
            last_sequence: 3,
            last_offset: 3,
            offset_delta: 3,
            timestamp: 1000,
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
        }
    );
    // A fresh manager (a restart) loads it; the retry of the last batch is still a duplicate.
    let mut again = manager(dir.path());
    again.truncate_and_reload(0, 5, 2000).unwrap();
    assert_eq!(again.map_end_offset(), 5);
    match again.check_leader_batch(&header(7, 1, 0, 4), 5, AppendOrigin::Client, None, None) {
        Ok(LeaderBatchCheck::Duplicate(b)) => assert_eq!((b.first_offset(), b.last_offset), (0, 3)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn truncate_and_reload_drops_snapshots_out_of_range_and_corrupt_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    for offset in [10, 20, 30] {
        m.apply_batch(&header(offset, 0, 0, 1), offset - 1, offset - 1, None);
        m.update_map_end_offset(offset);
        m.take_snapshot(false).unwrap();
    }
    assert_eq!(m.snapshot_offsets(), vec![10, 20, 30]);
    // Damage the one at 20; truncating to 25 removes 30, skips 20 and loads 10.
    let p20 = m.snapshot_file(20).unwrap().to_path_buf();
    std::fs::write(&p20, b"garbage!!!!!").unwrap();
    let mut again = manager(dir.path());
    again.truncate_and_reload(0, 25, 0).unwrap();
    assert_eq!(again.snapshot_offsets(), vec![10]);
    assert_eq!(again.map_end_offset(), 10);
    assert!(again.last_entry(10).is_some());
    assert!(again.last_entry(20).is_none());
    // The log start at 10 removes the snapshot at 10 too (Kafka drops those at or below it).
    again.truncate_and_reload(10, 25, 0).unwrap();
    assert!(again.snapshot_offsets().is_empty());
    assert_eq!(again.map_end_offset(), 10);
}

#[test]
fn stray_snapshots_and_deletion_before_an_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    for offset in [5, 10, 15, 40, 50] {
        m.update_map_end_offset(offset);
        m.take_snapshot(false).unwrap();
    }
    // Segments at 0, 10, 40: 5 and 15 are stray below the last base; 50 is above it and kept.
    m.remove_stray_snapshots(&[0, 10, 40]).unwrap();
    assert_eq!(m.snapshot_offsets(), vec![10, 40, 50]);
    m.delete_snapshots_before(40).unwrap();
    assert_eq!(m.snapshot_offsets(), vec![40, 50]);
    assert_eq!(list_snapshots(dir.path()).unwrap().len(), 2);
    m.truncate_fully_and_start_at(100).unwrap();
    assert!(list_snapshots(dir.path()).unwrap().is_empty());
    assert_eq!(m.map_end_offset(), 100);
}

#[test]
fn with_verification_a_transactions_first_batch_needs_the_producers_current_guard() {
    use crate::protocol::record::builder::ControlRecordType;
    use crate::protocol::record::control::EndTxnMarker;
    use crate::storage::producer_state::VerificationGuard;
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path());
    let txn = |seq| {
        let mut h = header(7, 0, seq, 1);
        h.attributes |= TRANSACTIONAL_FLAG_MASK;
        h
    };
    let check = |m: &ProducerStateManager, h: &RecordBatchHeader, guard| {
        m.check_leader_batch(h, 0, AppendOrigin::Client, None, Some(guard))
    };
    let not_in_txn = |r| matches!(r, Err(ProducerStateError::InvalidTxnState { ref message }) if message == "Record was not part of an ongoing transaction");
    // Unverified (no entry, or the sentinel): refused. Without verification on: appended.
    assert!(not_in_txn(check(&m, &txn(0), VerificationGuard::SENTINEL)));
    assert_eq!(
        m.check_leader_batch(&txn(0), 0, AppendOrigin::Client, None, None),
        Ok(LeaderBatchCheck::Append)
    );
    let guard = m.maybe_create_verification_state_entry(7, 0, 0, 0);
    assert!(not_in_txn(check(&m, &txn(0), VerificationGuard::SENTINEL)));
    assert_eq!(check(&m, &txn(0), guard), Ok(LeaderBatchCheck::Append));
    // A higher sequence than the lowest seen while verifying is out of order.
    assert!(matches!(
        check(&m, &txn(1), guard),
        Err(ProducerStateError::OutOfOrderSequence { .. })
    ));
    // The append clears the entry; the open transaction needs no guard from then on.
    m.apply_batch(&txn(0), 0, 0, None);
    assert!(m.verification_state_entry(7).is_none());
    assert_eq!(
        check(&m, &txn(1), VerificationGuard::SENTINEL),
        Ok(LeaderBatchCheck::Append)
    );
    m.apply_batch(&txn(1), 1, 1, None);
    let mut control = header(7, 0, -1, 1);
    control.attributes |= TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK;
    let marker = |kind| {
        Some(EndTxnMarker {
            kind,
            coordinator_epoch: 0,
        })
    };
    m.apply_batch(&control, 2, 2, marker(ControlRecordType::Commit));
    // ABA: the next transaction is verified, then aborted (its marker lands) before the
    // append: the late append's guard went with the marker.
    let guard = m.maybe_create_verification_state_entry(7, 2, 0, 0);
    m.apply_batch(&control, 3, 3, marker(ControlRecordType::Abort));
    assert!(not_in_txn(check(&m, &txn(2), guard)));
    // A follower takes what its leader wrote.
    assert_eq!(
        m.check_leader_batch(&txn(2), 4, AppendOrigin::Replication, None, Some(guard)),
        Ok(LeaderBatchCheck::Append)
    );
}
