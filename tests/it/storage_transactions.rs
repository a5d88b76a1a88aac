//! Transactions on a real partition log: the last stable offset held by an open transaction
//! until its marker is replicated, aborted transactions in the segment's `.txnindex` (Kafka's
//! bytes, read back by Kafka's DumpLogSegments) and in what a read_committed read collects,
//! and all of it rebuilt after a clean restart, after a crash that lost the `.txnindex`, and
//! after a truncation.

use kcli::protocol::record::builder::{
    ControlRecordType, RecordBatchBuilder, SimpleRecord, build_control_batch,
};
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::StorageError;
use kcli::storage::log_reads::FetchIsolation;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::producer_state::ProducerStateError;
use kcli::storage::transaction_index::AbortedTxn;
use kcli::storage::unified_log::UnifiedLog;

use super::dump_segment::support::{kafka, same_as_kafka, text};
use super::storage_support::{T0, open_log, small_config, txn_index_files};

/// A batch of `count` records from producer `pid`, transactional or not.
fn batch(pid: i64, base_seq: i32, count: usize, transactional: bool) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.producer_id = pid;
    b.producer_epoch = 0;
    b.base_sequence = base_seq;
    b.is_transactional = transactional;
    b.records = (0..count)
        .map(|i| SimpleRecord::new(T0, None, Some(vec![b'x'; 100 + i])))
        .collect();
    b.build().unwrap()
}

/// Appends as the leader (client or coordinator) and lets the high watermark follow.
fn append(log: &mut UnifiedLog, bytes: &[u8], origin: AppendOrigin) -> i64 {
    let info = log.append_as_leader(bytes, 0, origin, T0).unwrap();
    info.first_offset
}

fn marker(log: &mut UnifiedLog, pid: i64, kind: ControlRecordType) -> i64 {
    let bytes = build_control_batch(kind, 0, -1, pid, 0, 3, T0).unwrap();
    append(log, &bytes, AppendOrigin::Coordinator)
}

fn replicate(log: &mut UnifiedLog) {
    let end = log.log_end_offset();
    log.update_high_watermark(end).unwrap();
}

fn aborted(pid: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
    AbortedTxn {
        producer_id: pid,
        first_offset: first,
        last_offset: last,
        last_stable_offset: lso,
    }
}

/// Two interleaved transactions, one aborted and one committed, and a plain producer:
/// returns (first offset of 7's, 7's abort marker, first offset of 8's, 8's commit marker).
fn two_transactions(log: &mut UnifiedLog) -> (i64, i64, i64, i64) {
    append(log, &batch(1, 0, 2, false), AppendOrigin::Client);
    let first7 = append(log, &batch(7, 0, 2, true), AppendOrigin::Client);
    let first8 = append(log, &batch(8, 0, 1, true), AppendOrigin::Client);
    append(log, &batch(7, 2, 1, true), AppendOrigin::Client);
    replicate(log);
    assert_eq!(
        log.last_stable_offset(),
        first7,
        "7's open transaction holds it"
    );
    let abort7 = marker(log, 7, ControlRecordType::Abort);
    replicate(log);
    assert_eq!(log.last_stable_offset(), first8, "then 8's");
    let commit8 = marker(log, 8, ControlRecordType::Commit);
    assert_eq!(
        log.last_stable_offset(),
        first8,
        "until 8's marker is replicated"
    );
    replicate(log);
    assert_eq!(log.last_stable_offset(), log.log_end_offset());
    (first7, abort7, first8, commit8)
}

#[test]
fn an_aborted_transaction_is_indexed_and_read_committed_stops_at_the_open_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let (first7, abort7, first8, _) = two_transactions(&mut log);
    assert_eq!(
        log.collect_aborted_transactions(0, log.log_end_offset()),
        vec![aborted(7, first7, abort7, first8)],
        "the last stable offset at the abort was 8's open transaction"
    );
    assert_eq!(txn_index_files(dir.path()).len(), 1);
    // A transaction opened now: read_committed reads up to it, and no further.
    let first9 = append(&mut log, &batch(9, 0, 1, true), AppendOrigin::Client);
    append(&mut log, &batch(1, 2, 1, false), AppendOrigin::Client);
    replicate(&mut log);
    assert_eq!(log.last_stable_offset(), first9);
    let committed = log
        .read(first9, 1 << 20, FetchIsolation::TxnCommitted, true)
        .unwrap();
    assert_eq!(committed.records.size, 0);
    let uncommitted = log
        .read(first9, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    assert!(uncommitted.records.size > 0);
    // The producer with an open transaction may not write outside it.
    let plain = log.append_as_leader(&batch(9, 1, 1, false), 0, AppendOrigin::Client, T0);
    assert!(matches!(
        plain,
        Err(StorageError::ProducerState(
            ProducerStateError::InvalidTxnState { .. }
        ))
    ));
}

#[test]
fn transactions_survive_a_clean_restart_a_lost_txnindex_and_a_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let (first7, abort7, first8, commit8) = two_transactions(&mut log);
    let open = append(&mut log, &batch(9, 0, 1, true), AppendOrigin::Client);
    replicate(&mut log);
    let end = log.log_end_offset();
    log.close(T0).unwrap();
    // A clean restart: 9's transaction is open again (from the snapshot).
    let mut log = open_log(dir.path(), small_config(), end, true);
    log.update_high_watermark(end).unwrap();
    assert_eq!(log.last_stable_offset(), open);
    drop(log);
    // A crash that lost the `.txnindex`: the recovery replays the segment and indexes the
    // abort again.
    for name in txn_index_files(dir.path()) {
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
    let mut log = open_log(dir.path(), small_config(), 0, false);
    log.update_high_watermark(end).unwrap();
    assert_eq!(
        log.collect_aborted_transactions(0, end),
        vec![aborted(7, first7, abort7, first8)]
    );
    assert_eq!(log.last_stable_offset(), open);
    // A truncation below the abort marker: its entry goes, and 7's transaction is open again.
    log.truncate_to(abort7, T0).unwrap();
    assert!(log.collect_aborted_transactions(0, end).is_empty());
    log.update_high_watermark(abort7).unwrap();
    assert_eq!(log.last_stable_offset(), first7);
    assert!(commit8 > abort7);
}

/// Kafka's DumpLogSegments reads kcli's `.txnindex` and control batches, and kcli's
/// dump-segment prints them as it does.
#[test]
fn kafka_dump_log_segments_reads_the_txnindex_and_markers() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let (first7, abort7, first8, _) = two_transactions(&mut log);
    log.close(T0).unwrap();
    let index = txn_index_files(dir.path())[0].clone();
    let log_file = index.replace(".txnindex", ".log");
    let out = text(&same_as_kafka(dir.path(), &[&index], &[]).stdout);
    assert!(
        out.contains(&format!(
            "version: 0 producerId: 7 firstOffset: {first7} lastOffset: {abort7} lastStableOffset: {first8}"
        )),
        "{out}"
    );
    let out = text(&kafka(dir.path(), &[&log_file], &["--deep-iteration"]).stdout);
    assert!(out.contains("isControl: true"), "{out}");
    assert!(
        out.contains("endTxnMarker: ABORT coordinatorEpoch: 3"),
        "{out}"
    );
    assert!(
        out.contains("endTxnMarker: COMMIT coordinatorEpoch: 3"),
        "{out}"
    );
}

/// An aborted transaction's `.txnindex` entry is in its marker's segment, which may begin past
/// the last stable offset (another transaction, still open, holds it back): a read below the
/// last stable offset still lists it, so its records there are skipped.
#[test]
fn an_abort_indexed_in_a_later_segment_is_listed_for_a_read_below_the_lso() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let first7 = append(&mut log, &batch(7, 0, 1, true), AppendOrigin::Client);
    let first8 = append(&mut log, &batch(8, 0, 1, true), AppendOrigin::Client);
    // Plain records roll the log a few segments on.
    for i in 0..40 {
        append(&mut log, &batch(1, i * 2, 2, false), AppendOrigin::Client);
    }
    let abort7 = marker(&mut log, 7, ControlRecordType::Abort);
    replicate(&mut log);
    let lso = log.last_stable_offset();
    assert_eq!(lso, first8, "8's transaction is still open");
    let marker_segment = log
        .segment_base_offsets()
        .into_iter()
        .rfind(|b| *b <= abort7)
        .unwrap();
    assert!(
        marker_segment > lso,
        "the marker's segment begins past the LSO"
    );
    assert_eq!(
        log.collect_aborted_transactions(first7, lso),
        vec![aborted(7, first7, abort7, first8)]
    );
}
