//! The idempotent producer's state on a real partition log: duplicates answered with their
//! original offsets, sequence and epoch errors, snapshots at roll and close, recovery with and
//! without snapshots after clean and unclean shutdowns, truncation, snapshot retention.

use std::path::Path;

use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::StorageError;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::producer_state::ProducerStateError;
use kcli::storage::producer_state::snapshot::read_snapshot;
use kcli::storage::unified_log::UnifiedLog;

use super::storage_support::{T0, open_log, read_all, small_config};

/// An idempotent batch of `count` records of ~200 bytes from producer `pid`.
fn idem_batch(pid: i64, epoch: i16, base_seq: i32, count: usize) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.producer_id = pid;
    b.producer_epoch = epoch;
    b.base_sequence = base_seq;
    b.records = (0..count)
        .map(|i| {
            SimpleRecord::new(
                T0 + i as i64,
                None,
                Some(format!("p{pid}-s{}-{}", base_seq + i as i32, "x".repeat(200)).into_bytes()),
            )
        })
        .collect();
    b.build().unwrap()
}

fn append(log: &mut UnifiedLog, batch: &[u8]) -> Result<(i64, i64), StorageError> {
    log.append_as_leader(batch, 0, AppendOrigin::Client, T0)
        .map(|i| (i.first_offset, i.last_offset))
}

fn snapshot_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".snapshot"))
        .collect();
    names.sort();
    names
}

/// Producer 5 writes `batches` batches of 3 records: sequences 0, 3, 6, ...
fn write_batches(log: &mut UnifiedLog, batches: i32) {
    write_batches_from(log, 0, batches);
}

/// Producer 5's batches `from..from + batches` of 3 records each.
fn write_batches_from(log: &mut UnifiedLog, from: i32, batches: i32) {
    for i in from..from + batches {
        append(log, &idem_batch(5, 0, i * 3, 3)).unwrap();
    }
}

#[test]
fn producer_state_retry_returns_original_offsets_and_appends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    append(&mut log, &idem_batch(9, 0, 0, 1)).unwrap();
    let first = idem_batch(5, 0, 0, 3);
    assert_eq!(append(&mut log, &first).unwrap(), (1, 3));
    append(&mut log, &idem_batch(5, 0, 3, 2)).unwrap();
    let end = log.log_end_offset();
    let info = log
        .append_as_leader(&first, 0, AppendOrigin::Client, T0 + 99)
        .unwrap();
    assert_eq!((info.first_offset, info.last_offset), (1, 3));
    // Kafka reports the original batch's timestamp as the log append time of a duplicate.
    assert_eq!(info.log_append_time, T0 + 2);
    assert_eq!(log.log_end_offset(), end, "nothing appended");
    assert_eq!(read_all(&log, 0).len(), 6);
}

#[test]
fn producer_state_gap_and_old_epoch_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    append(&mut log, &idem_batch(5, 1, 0, 2)).unwrap();
    let gap = append(&mut log, &idem_batch(5, 1, 5, 1)).unwrap_err();
    assert!(
        matches!(
            gap,
            StorageError::ProducerState(ProducerStateError::OutOfOrderSequence { .. })
        ),
        "{gap:?}"
    );
    let fenced = append(&mut log, &idem_batch(5, 0, 2, 1)).unwrap_err();
    assert!(
        matches!(
            fenced,
            StorageError::ProducerState(ProducerStateError::InvalidProducerEpoch { .. })
        ),
        "{fenced:?}"
    );
    assert_eq!(log.log_end_offset(), 2, "refused batches are not appended");
    // Non-idempotent batches are untouched by producer state.
    append(&mut log, &idem_batch(-1, -1, -1, 2)).unwrap();
    assert_eq!(log.producer_state().active_producers().count(), 1);
}

#[test]
fn producer_state_roll_and_close_write_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    write_batches(&mut log, 40);
    let bases = log.segment_base_offsets();
    assert!(bases.len() >= 3, "{bases:?}");
    let names = snapshot_files(dir.path());
    for base in &bases[1..] {
        assert!(names.contains(&format!("{base:020}.snapshot")), "{names:?}");
    }
    let end = log.log_end_offset();
    log.close(T0).unwrap();
    let at_end = dir.path().join(format!("{end:020}.snapshot"));
    let entries = read_snapshot(&std::fs::read(at_end).unwrap()).unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].producer_id, 5);
    assert_eq!(entries[0].last_sequence, 119);
    assert_eq!(entries[0].last_offset, end - 1);
    assert_eq!(entries[0].offset_delta, 2);
}

#[test]
fn producer_state_survives_a_clean_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    write_batches(&mut log, 10);
    let end = log.log_end_offset();
    log.close(T0).unwrap();
    let mut log = open_log(dir.path(), small_config(), end, true);
    // The last batch (sequences 27..29) is still recognised; the next one follows on.
    assert_eq!(
        append(&mut log, &idem_batch(5, 0, 27, 3)).unwrap(),
        (end - 3, end - 1)
    );
    assert_eq!(log.log_end_offset(), end);
    assert!(append(&mut log, &idem_batch(5, 0, 31, 1)).is_err());
    assert_eq!(
        append(&mut log, &idem_batch(5, 0, 30, 1)).unwrap(),
        (end, end)
    );
}

#[test]
fn producer_state_is_rebuilt_after_a_crash_with_and_without_snapshots() {
    for keep_snapshots in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut log = open_log(dir.path(), small_config(), 0, true);
        write_batches(&mut log, 40);
        let end = log.log_end_offset();
        assert!(log.number_of_segments() >= 3);
        // A crash: no close, no snapshot at the end.
        drop(log);
        if !keep_snapshots {
            for name in snapshot_files(dir.path()) {
                std::fs::remove_file(dir.path().join(name)).unwrap();
            }
        }
        let mut log = open_log(dir.path(), small_config(), 0, false);
        assert_eq!(log.log_end_offset(), end);
        let entry = log.producer_state().last_entry(5).unwrap();
        assert_eq!(entry.last_seq(), 119, "keep_snapshots={keep_snapshots}");
        // As in Kafka, each recovered segment leaves a snapshot at its end and the log's state
        // is loaded from the last one, which keeps each producer's newest batch only.
        assert_eq!(
            entry.batch_metadata.len(),
            1,
            "keep_snapshots={keep_snapshots}"
        );
        let mut expected: Vec<String> = log.segment_base_offsets()[1..]
            .iter()
            .chain([end].iter())
            .map(|o| format!("{o:020}.snapshot"))
            .collect();
        expected.dedup();
        assert_eq!(
            snapshot_files(dir.path()),
            expected,
            "keep_snapshots={keep_snapshots}"
        );
        // A retry of the newest batch is still deduplicated; an older one is out of order.
        assert_eq!(
            append(&mut log, &idem_batch(5, 0, 117, 3)).unwrap(),
            (end - 3, end - 1)
        );
        assert!(matches!(
            append(&mut log, &idem_batch(5, 0, 111, 3)),
            Err(StorageError::ProducerState(
                ProducerStateError::OutOfOrderSequence { .. }
            ))
        ));
        assert_eq!(log.log_end_offset(), end);
        assert_eq!(
            append(&mut log, &idem_batch(5, 0, 120, 1)).unwrap(),
            (end, end)
        );
    }
}

/// Only the segments from the recovery point on are recovered: the state before them comes
/// from the snapshot at their base (or a replay of the flushed segments when it is gone).
#[test]
fn producer_state_crash_recovers_from_the_recovery_point() {
    for keep_snapshots in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut log = open_log(dir.path(), small_config(), 0, true);
        write_batches(&mut log, 40);
        append(&mut log, &idem_batch(8, 2, 0, 1)).unwrap();
        let bases = log.segment_base_offsets();
        let active = *bases.last().unwrap();
        log.flush(active, T0).unwrap();
        write_batches_from(&mut log, 40, 5);
        let end = log.log_end_offset();
        drop(log);
        if !keep_snapshots {
            for name in snapshot_files(dir.path()) {
                std::fs::remove_file(dir.path().join(name)).unwrap();
            }
        }
        let log = open_log(dir.path(), small_config(), active, false);
        assert_eq!(log.log_end_offset(), end);
        let p5 = log.producer_state().last_entry(5).unwrap();
        assert_eq!(p5.last_seq(), 134, "keep_snapshots={keep_snapshots}");
        let p8 = log.producer_state().last_entry(8).unwrap();
        assert_eq!((p8.producer_epoch, p8.last_seq()), (2, 0));
    }
}

#[test]
fn producer_state_no_snapshot_after_clean_shutdown_is_not_replayed() {
    // Kafka's upgrade path: a cleanly shut down log without snapshots is not scanned; empty
    // snapshots are written at the last two segments' bases and the log end.
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    write_batches(&mut log, 40);
    let end = log.log_end_offset();
    let bases = log.segment_base_offsets();
    assert!(bases.len() >= 3, "{bases:?}");
    log.close(T0).unwrap();
    for name in snapshot_files(dir.path()) {
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
    let log = open_log(dir.path(), small_config(), end, true);
    assert!(log.producer_state().is_empty());
    let expected: Vec<String> = [bases[bases.len() - 2], bases[bases.len() - 1], end]
        .iter()
        .map(|o| format!("{o:020}.snapshot"))
        .collect();
    assert_eq!(snapshot_files(dir.path()), expected);
}

#[test]
fn producer_state_truncation_drops_later_batches_and_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    write_batches(&mut log, 20);
    let bases = log.segment_base_offsets();
    // Truncate into the second segment, just after a batch boundary.
    let target = bases[1] + 3 - (bases[1] % 3);
    log.truncate_to(target, T0).unwrap();
    assert_eq!(log.log_end_offset(), target);
    let entry = log.producer_state().last_entry(5).unwrap();
    assert_eq!(i64::from(entry.last_seq()), target - 1);
    assert!(
        log.producer_state()
            .snapshot_offsets()
            .iter()
            .all(|o| *o <= target),
        "{:?}",
        log.producer_state().snapshot_offsets()
    );
    // The producer continues at the truncation point.
    let next_seq = i32::try_from(target).unwrap();
    assert_eq!(
        append(&mut log, &idem_batch(5, 0, next_seq, 3)).unwrap(),
        (target, target + 2)
    );
    log.truncate_fully_and_start_at(1000, T0).unwrap();
    assert!(log.producer_state().is_empty());
    assert!(snapshot_files(dir.path()).is_empty());
}

#[test]
fn producer_state_snapshot_retention_keeps_the_last_two_segments() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    write_batches(&mut log, 60);
    let bases = log.segment_base_offsets();
    assert!(bases.len() >= 5, "{bases:?}");
    let end = log.log_end_offset();
    log.flush(end, T0).unwrap();
    let min = log
        .delete_snapshots_after_recovery_point_checkpoint()
        .unwrap();
    assert_eq!(min, bases[bases.len() - 2]);
    assert!(
        log.producer_state()
            .snapshot_offsets()
            .iter()
            .all(|o| *o >= min)
    );
    assert_eq!(
        snapshot_files(dir.path()).len(),
        log.producer_state().snapshot_offsets().len()
    );
}

#[test]
fn producer_state_follower_appends_update_without_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut leader = open_log(dir.path(), small_config(), 0, true);
    append(&mut leader, &idem_batch(5, 0, 0, 2)).unwrap();
    let bytes = leader
        .read(
            0,
            1 << 20,
            kcli::storage::log_reads::FetchIsolation::LogEnd,
            true,
        )
        .unwrap()
        .records
        .read_to_vec()
        .unwrap();
    let other = tempfile::tempdir().unwrap();
    let mut follower = open_log(other.path(), small_config(), 0, true);
    follower.append_as_follower(&bytes, T0).unwrap();
    let entry = follower.producer_state().last_entry(5).unwrap();
    assert_eq!((entry.last_seq(), entry.last_data_offset()), (1, 1));
}

#[test]
fn producer_state_snapshot_is_read_by_kafkas_dump_log_segments() {
    use super::dump_segment::support::{kafka, kcli};
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    append(&mut log, &idem_batch(1000, 3, 0, 2)).unwrap();
    append(&mut log, &idem_batch(2, 0, 7, 5)).unwrap();
    append(&mut log, &idem_batch(1000, 3, 2, 3)).unwrap();
    let end = log.log_end_offset();
    log.close(T0).unwrap();
    let name = format!("{end:020}.snapshot");
    let kafka_out = kafka(dir.path(), &[&name], &[]);
    assert!(kafka_out.status.success(), "{kafka_out:?}");
    let stdout = String::from_utf8(kafka_out.stdout).unwrap();
    // Kafka's own reader decodes both producers with their last batches.
    for line in [
        format!(
            "producerId: 2 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: {ts} firstSequence: 7 lastSequence: 11 lastOffset: 6 offsetDelta: 4 timestamp: {ts}",
            ts = T0 + 4
        ),
        format!(
            "producerId: 1000 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: {ts} firstSequence: 2 lastSequence: 4 lastOffset: 9 offsetDelta: 2 timestamp: {ts}",
            ts = T0 + 2
        ),
    ] {
        assert!(stdout.contains(&line), "missing {line:?} in:\n{stdout}");
    }
    // And kcli's dump-segment, now on the shared storage code, prints the same.
    let ours = kcli(dir.path(), &[&name], &[]);
    assert_eq!(String::from_utf8(ours.stdout).unwrap(), stdout);
}

#[test]
fn producer_state_expired_producers_are_forgotten_and_accepted_at_any_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    append(&mut log, &idem_batch(5, 0, 0, 3)).unwrap();
    append(&mut log, &idem_batch(6, 0, 0, 1)).unwrap();
    // The batches' timestamps are T0..T0+2; a day later (the default) they expire.
    let day = 86_400_000;
    assert_eq!(log.remove_expired_producers(T0 + day - 1), 0);
    assert_eq!(log.remove_expired_producers(T0 + day + 2), 2);
    assert!(log.producer_state().is_empty());
    // KIP-360: a producer the partition no longer knows continues at any sequence.
    assert_eq!(append(&mut log, &idem_batch(5, 0, 40, 1)).unwrap(), (4, 4));
    // A shorter expiration applied at open drops what the snapshot still had.
    log.close(T0).unwrap();
    let mut log = open_log(dir.path(), small_config(), 5, true);
    assert!(log.producer_state().last_entry(5).is_some());
    log.set_producer_id_expiration_ms(1000, T0 + 5000);
    assert!(log.producer_state().is_empty());
}

/// Runs `script` (see tests/clients/java/ProducerStateOracle.java) through kcli's producer state
/// the way `UnifiedLog::append_as_leader` / `append_as_follower` drive it, printing the same
/// lines as the oracle.
fn run_script_on_kcli(dir: &Path, script: &str) -> Vec<String> {
    use kcli::protocol::record::batch::RecordBatchHeader;
    use kcli::storage::producer_state::{LeaderBatchCheck, ProducerStateManager};
    let mut m = ProducerStateManager::new(dir, "t-0".into(), 86_400_000).unwrap();
    let mut next = 0i64;
    let mut out = Vec::new();
    for line in script.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[0] {
            "append" | "replicate" => {
                let n = |i: usize| f[i].parse::<i64>().unwrap();
                let count = n(4) as i32;
                let header = RecordBatchHeader {
                    base_offset: next,
                    batch_length: 100,
                    partition_leader_epoch: 0,
                    magic: 2,
                    crc: 0,
                    attributes: 0,
                    last_offset_delta: count - 1,
                    base_timestamp: n(5),
                    max_timestamp: n(5),
                    producer_id: n(1),
                    producer_epoch: n(2) as i16,
                    base_sequence: n(3) as i32,
                    records_count: count,
                };
                let origin = if f[0] == "append" {
                    AppendOrigin::Client
                } else {
                    AppendOrigin::Replication
                };
                let last = next + i64::from(count) - 1;
                match m.check_leader_batch(&header, next, origin, None, None) {
                    Ok(LeaderBatchCheck::Duplicate(b)) => {
                        out.push(format!("dup {} {}", b.first_offset(), b.last_offset))
                    }
                    Ok(LeaderBatchCheck::Append) => {
                        m.apply_batch(&header, next, last, None);
                        m.update_map_end_offset(last + 1);
                        out.push(format!("ok {next} {last}"));
                        next = last + 1;
                    }
                    Err(ProducerStateError::OutOfOrderSequence { .. }) => {
                        out.push("err OutOfOrderSequenceException".into())
                    }
                    Err(ProducerStateError::InvalidProducerEpoch { .. }) => {
                        out.push("err InvalidProducerEpochException".into())
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            "expire" => {
                m.remove_expired_producers(f[1].parse().unwrap());
                out.push(format!("producers {}", m.active_producers().count()));
            }
            "snapshot" => {
                m.take_snapshot(true).unwrap();
                out.push(format!("snapshot {}", m.map_end_offset()));
            }
            other => panic!("bad script line {other}"),
        }
    }
    out
}

/// The same script through Kafka 3.9.1's ProducerStateManager and through kcli's: every
/// outcome (append, duplicate with its offsets, error) and the snapshot bytes must be equal.
#[test]
fn producer_state_matches_kafkas_producer_state_manager() {
    use super::dump_segment::support::{kafka_dir, output_within};
    use std::process::{Command, Stdio};
    let jars = kafka_dir();
    assert!(
        jars.join(".complete").exists(),
        "Kafka 3.9.1's jars are missing from {}: run tests/install-kafka-tools",
        jars.display()
    );
    let t = T0;
    let script = [
        format!("append 1 0 0 3 {t}"),
        format!("append 1 0 3 2 {t}"),
        format!("append 1 0 0 3 {t}"),        // a retry: duplicate
        format!("append 1 0 9 1 {t}"),        // a gap
        format!("append 1 0 4 1 {t}"),        // overlaps the last batch
        format!("append 2 5 77 2 {}", t + 1), // unknown producer, any sequence
        format!("append 2 4 79 1 {}", t + 1), // older epoch
        format!("append 2 6 3 1 {}", t + 2),  // new epoch not at 0
        format!("append 2 6 0 1 {}", t + 2),
        format!("append 3 0 {} 3 {}", i32::MAX - 1, t + 3), // wraps
        format!("append 3 0 2 1 {}", t + 3),
        format!("append 3 0 {} 3 {}", i32::MAX - 1, t + 3), // retry of the wrapped batch
        format!("replicate 4 2 10 1 {}", t + 4),
        format!("replicate 4 1 50 2 {}", t + 4), // followers take gaps and old epochs
        format!("append 4 1 52 1 {}", t + 4),
        "append 1 0 5 1 1000".to_string(),
        "expire 86401000".to_string(),
        format!("append 5 0 0 1 {}", t + 5),
    ]
    .into_iter()
    // Six more one-record batches of producer 5, then retries: seq 0 has left the last five
    // (out of order now), seq 2 is still among them (a duplicate).
    .chain((1..7).map(|seq| format!("append 5 0 {seq} 1 {}", t + 5)))
    .chain([
        format!("append 5 0 0 1 {}", t + 5),
        format!("append 5 0 2 1 {}", t + 5),
        "snapshot".to_string(),
    ])
    .collect::<Vec<_>>()
    .join("\n");
    let work = tempfile::tempdir().unwrap();
    let classes = work.path().join("classes");
    let classpath = format!("{}/*", jars.display());
    let mut javac = Command::new("javac");
    javac
        .args(["-nowarn", "-cp", &classpath, "-d"])
        .arg(&classes)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/clients/java/ProducerStateOracle.java"),
        );
    let out = output_within(javac, std::time::Duration::from_secs(120));
    assert!(out.status.success(), "javac: {out:?}");
    let kafka_dir_out = work.path().join("kafka");
    let ours_dir = work.path().join("kcli");
    std::fs::create_dir_all(&kafka_dir_out).unwrap();
    std::fs::create_dir_all(&ours_dir).unwrap();
    let script_file = work.path().join("script");
    std::fs::write(&script_file, &script).unwrap();
    let mut java = Command::new("java");
    java.args(["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp"])
        .arg(format!("{}:{classpath}", classes.display()))
        .arg("ProducerStateOracle")
        .arg(&kafka_dir_out)
        .stdin(Stdio::from(std::fs::File::open(&script_file).unwrap()));
    let out = output_within(java, std::time::Duration::from_secs(120));
    assert!(out.status.success(), "oracle: {out:?}");
    let kafka_lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let ours = run_script_on_kcli(&ours_dir, &script);
    assert_eq!(ours, kafka_lines);
    // Sanity: the script exercised every outcome.
    for what in [
        "dup ",
        "err OutOfOrderSequenceException",
        "err InvalidProducerEpochException",
    ] {
        assert!(ours.iter().any(|l| l.starts_with(what)), "{what}: {ours:?}");
    }
    let name = snapshot_files(&kafka_dir_out);
    assert_eq!(name, snapshot_files(&ours_dir));
    assert_eq!(name.len(), 1);
    assert_eq!(
        std::fs::read(ours_dir.join(&name[0])).unwrap(),
        std::fs::read(kafka_dir_out.join(&name[0])).unwrap(),
        "snapshot bytes"
    );
}

#[test]
fn producer_state_log_manager_expires_producers_and_retires_old_snapshots() {
    use kcli::cluster::TopicPartition;
    use kcli::storage::log_manager::{LogManager, LogManagerConfig};
    let dir = tempfile::tempdir().unwrap();
    let mut config = LogManagerConfig::new(vec![dir.path().to_path_buf()], 1, "kcli-test");
    config.default_log_config = small_config();
    config.producer_id_expiration_ms = 60_000;
    let manager = LogManager::startup(config.clone(), T0).unwrap();
    let tp = TopicPartition::new("t", 0);
    let log = manager
        .get_or_create_log(&tp, None, small_config(), T0)
        .unwrap();
    {
        let mut log = log.lock().unwrap();
        write_batches(&mut log, 60);
        let end = log.log_end_offset();
        log.flush(end, T0).unwrap();
        assert!(log.producer_state().snapshot_offsets().len() >= 5);
    }
    // The recovery-point checkpoint retires the snapshots before the last two segments.
    manager.checkpoint_log_recovery_offsets_and_start().unwrap();
    {
        let log = log.lock().unwrap();
        let bases = log.segment_base_offsets();
        let min = bases[bases.len() - 2];
        let kept = log.producer_state().snapshot_offsets();
        assert!(
            !kept.is_empty() && kept.iter().all(|o| *o >= min),
            "{kept:?} {bases:?}"
        );
    }
    // producer.id.expiration.ms from the manager's config applies to its logs.
    assert_eq!(manager.remove_expired_producers(T0 + 59_000), 0);
    assert_eq!(manager.remove_expired_producers(T0 + 61_000), 1);
    manager.shutdown(1, T0).unwrap();
}

#[test]
fn producer_state_retention_deletes_the_snapshots_of_deleted_segments() {
    let dir = tempfile::tempdir().unwrap();
    let config = kcli::storage::log_config::LogConfig {
        retention_bytes: 20 * 1024,
        ..small_config()
    };
    let mut log = open_log(dir.path(), config.clone(), 0, true);
    write_batches(&mut log, 60);
    let end = log.log_end_offset();
    log.update_high_watermark(end).unwrap();
    let before = log.segment_base_offsets();
    assert!(log.delete_old_segments(T0).unwrap() > 0);
    let after = log.segment_base_offsets();
    let first = after[0];
    assert!(first > before[0] && log.log_start_offset() == first);
    for gone in before.iter().filter(|b| **b < first && **b > 0) {
        assert!(
            !snapshot_files(dir.path()).contains(&format!("{gone:020}.snapshot")),
            "snapshot of deleted segment {gone} still there"
        );
    }
    // The producer is still known: retention does not forget producers.
    assert_eq!(log.producer_state().last_entry(5).unwrap().last_seq(), 179);
    assert_eq!(
        append(&mut log, &idem_batch(5, 0, 180, 1)).unwrap(),
        (end, end)
    );
}
