//! The log manager on real log dirs: locking, placement, checkpoints in Kafka's text format, the
//! clean-shutdown marker, recovery after a crash, and the retention schedule.

use std::fs;
use std::sync::Arc;

use kcli::cluster::TopicPartition;
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::StorageError;
use kcli::storage::log_config::LogConfig;
use kcli::storage::log_manager::LogManager;
use kcli::storage::log_validator::AppendOrigin;

use crate::storage_support::{T0, append_n, batch, manager_config, read_all, small_config};

fn produce(manager: &LogManager, tp: &TopicPartition, n: usize) {
    let log = manager
        .get_or_create_log(tp, None, small_config(), T0)
        .unwrap();
    append_n(&mut log.lock().unwrap(), n);
}

#[test]
fn a_locked_log_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().to_path_buf()];
    let _first = LogManager::startup(manager_config(&dirs), T0).unwrap();
    match LogManager::startup(manager_config(&dirs), T0) {
        Err(StorageError::LogDirLocked { path }) => assert!(path.starts_with(dir.path())),
        other => panic!("expected LogDirLocked, got {other:?}"),
    }
}

#[test]
fn new_partitions_go_to_the_log_dir_with_the_fewest() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    for p in 0..4 {
        produce(&manager, &TopicPartition::new("orders", p), 1);
    }
    let in_a = fs::read_dir(a.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    let in_b = fs::read_dir(b.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!((in_a, in_b), (2, 2));
    assert!(a.path().join("orders-0").is_dir());
    assert!(b.path().join("orders-1").is_dir());
}

/// Kafka's `nextLogDirs` counts the logs already in each dir: a dir holding three partitions
/// (from before a restart) gets no new one until the empty dir has caught up.
#[test]
fn new_partitions_fill_the_emptier_log_dir_first() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    {
        let only_a = [a.path().to_path_buf()];
        let manager = LogManager::startup(manager_config(&only_a), T0).unwrap();
        for p in 0..3 {
            produce(&manager, &TopicPartition::new("old", p), 1);
        }
        manager.shutdown(0, T0).unwrap();
    }
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    for p in 0..4 {
        produce(&manager, &TopicPartition::new("new", p), 1);
    }
    for p in 0..3 {
        assert!(b.path().join(format!("new-{p}")).is_dir(), "new-{p}");
    }
    // Three each: the tie goes to the first dir in log.dirs order.
    assert!(a.path().join("new-3").is_dir());
}

#[test]
fn clean_shutdown_writes_checkpoints_and_the_marker_and_restarts_without_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().to_path_buf()];
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    let tp = TopicPartition::new("events", 3);
    produce(&manager, &tp, 25);
    manager.shutdown(42, T0).unwrap();
    drop(manager);

    let recovery = fs::read_to_string(dir.path().join("recovery-point-offset-checkpoint")).unwrap();
    assert_eq!(recovery, "0\n1\nevents 3 25\n");
    let hw = fs::read_to_string(dir.path().join("replication-offset-checkpoint")).unwrap();
    assert_eq!(hw, "0\n1\nevents 3 25\n");
    assert!(dir.path().join(".kafka_cleanshutdown").exists());
    let meta = fs::read_to_string(dir.path().join("meta.properties")).unwrap();
    assert!(
        meta.contains("broker.id=1") && meta.contains("cluster.id=kcli-test-cluster"),
        "{meta}"
    );

    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    assert!(
        !dir.path().join(".kafka_cleanshutdown").exists(),
        "removed once loaded"
    );
    let log = manager.get_log(&tp).unwrap();
    let log = log.lock().unwrap();
    assert_eq!(log.log_end_offset(), 25);
    assert_eq!(log.high_watermark(), 25);
    assert_eq!(read_all(&log, 0).len(), 25);
}

#[test]
fn a_crash_is_recovered_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().to_path_buf()];
    let tp = TopicPartition::new("events", 0);
    {
        let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
        produce(&manager, &tp, 80);
        // No shutdown: the marker is absent, indexes untrimmed.
    }
    let seg = dir.path().join("events-0").join("00000000000000000000.log");
    let len = fs::metadata(&seg).unwrap().len();
    assert!(len > 0);
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    let log = manager.get_log(&tp).unwrap();
    assert_eq!(read_all(&log.lock().unwrap(), 0).len(), 80);
}

#[test]
fn a_log_dir_of_another_broker_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().to_path_buf()];
    LogManager::startup(manager_config(&dirs), T0)
        .unwrap()
        .shutdown(-1, T0)
        .unwrap();
    let mut other = manager_config(&dirs);
    other.broker_id = 2;
    let err = LogManager::startup(other, T0).unwrap_err();
    assert!(err.to_string().contains("broker.id"), "{err}");
}

#[test]
fn deleting_a_log_removes_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let manager = LogManager::startup(manager_config(&[dir.path().to_path_buf()]), T0).unwrap();
    let tp = TopicPartition::new("gone", 0);
    produce(&manager, &tp, 3);
    assert!(manager.delete_log(&tp).unwrap());
    assert!(!dir.path().join("gone-0").exists());
    assert!(manager.get_log(&tp).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_runs_on_its_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = manager_config(&[dir.path().to_path_buf()]);
    cfg.retention_check_interval_ms = 50;
    cfg.default_log_config = LogConfig {
        retention_bytes: 10 * 1024,
        ..small_config()
    };
    let manager = Arc::new(LogManager::startup(cfg, T0).unwrap());
    let tp = TopicPartition::new("bounded", 0);
    let log = manager
        .get_or_create_log(
            &tp,
            None,
            LogConfig {
                retention_bytes: 10 * 1024,
                ..small_config()
            },
            T0,
        )
        .unwrap();
    {
        let mut log = log.lock().unwrap();
        for i in 0..200 {
            log.append_as_leader(
                &batch(&[vec![i as u8; 200]], T0, CompressionType::None),
                0,
                AppendOrigin::Client,
                T0,
            )
            .unwrap();
        }
        let end = log.log_end_offset();
        log.update_high_watermark(end).unwrap();
    }
    let tracker = tokio_util::task::TaskTracker::new();
    let token = tokio_util::sync::CancellationToken::new();
    manager.spawn_background_tasks(&tracker, token.clone());
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if log.lock().unwrap().log_start_offset() > 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "retention never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    token.cancel();
    tracker.close();
    tracker.wait().await;
    assert!(log.lock().unwrap().size() <= 10 * 1024 + 8 * 1024);
}

#[test]
fn shutdown_closes_logs_still_held_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().to_path_buf()];
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    let tp = TopicPartition::new("held", 0);
    produce(&manager, &tp, 30);
    let held = manager.get_log(&tp).unwrap(); // a request handler still holding the log
    manager.shutdown(7, T0).unwrap();
    let index = dir
        .path()
        .join("held-0")
        .join("00000000000000000000.timeindex");
    let len = fs::metadata(&index).unwrap().len();
    assert!(
        len < 4096,
        "trimmed at shutdown even though the log was shared: {len}"
    );
    let err = held
        .lock()
        .unwrap()
        .append_as_leader(
            &batch(&[vec![1; 10]], T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap_err();
    assert!(matches!(err, StorageError::NoSegments { .. }), "{err}");
}

#[test]
fn rolled_segments_are_flushed_and_move_the_recovery_point() {
    let dir = tempfile::tempdir().unwrap();
    let manager = LogManager::startup(manager_config(&[dir.path().to_path_buf()]), T0).unwrap();
    let tp = TopicPartition::new("rolling", 0);
    produce(&manager, &tp, 200); // 8 KiB segments: several rolls
    let log = manager.get_log(&tp).unwrap();
    let (recovery_before, active_base) = {
        let log = log.lock().unwrap();
        (
            log.recovery_point(),
            *log.segment_base_offsets().last().unwrap(),
        )
    };
    assert_eq!(recovery_before, 0);
    assert!(active_base > 0);
    manager.flush_rolled_segments().unwrap();
    assert_eq!(log.lock().unwrap().recovery_point(), active_base);
    assert!(log.lock().unwrap().pending_flush().is_none());
    manager.checkpoint_log_recovery_offsets_and_start().unwrap();
    let checkpoint =
        fs::read_to_string(dir.path().join("recovery-point-offset-checkpoint")).unwrap();
    assert_eq!(checkpoint, format!("0\n1\nrolling 0 {active_base}\n"));
}

/// A log whose `flush.ms` is `flush_ms`, holding 20 small batches in its one segment.
fn log_with_flush_ms(
    manager: &LogManager,
    topic: &str,
    flush_ms: i64,
) -> kcli::storage::log_manager::SharedLog {
    let log = manager
        .get_or_create_log(
            &TopicPartition::new(topic, 0),
            None,
            LogConfig {
                flush_ms,
                ..small_config()
            },
            T0,
        )
        .unwrap();
    append_n(&mut log.lock().unwrap(), 20);
    log
}

#[test]
fn flush_ms_is_the_flusher_tasks_not_the_appends() {
    let dir = tempfile::tempdir().unwrap();
    let manager = LogManager::startup(manager_config(&[dir.path().to_path_buf()]), T0).unwrap();
    let due = log_with_flush_ms(&manager, "due", 0);
    let never = log_with_flush_ms(&manager, "never", i64::MAX);
    // As in Kafka's `UnifiedLog.append`: only `flush.messages` fsyncs on the append path.
    assert_eq!(due.lock().unwrap().recovery_point(), 0);
    assert_eq!(manager.flush_dirty_logs(T0).unwrap(), 1);
    let end = due.lock().unwrap().log_end_offset();
    assert_eq!(due.lock().unwrap().recovery_point(), end);
    assert_eq!(never.lock().unwrap().recovery_point(), 0);
}

#[test]
fn flush_ms_counts_from_the_last_flush() {
    let dir = tempfile::tempdir().unwrap();
    let manager = LogManager::startup(manager_config(&[dir.path().to_path_buf()]), T0).unwrap();
    let log = log_with_flush_ms(&manager, "timed", 1000);
    assert_eq!(
        manager.flush_dirty_logs(T0 + 999).unwrap(),
        0,
        "opened at T0"
    );
    assert_eq!(manager.flush_dirty_logs(T0 + 1000).unwrap(), 1);
    append_n(&mut log.lock().unwrap(), 5);
    assert_eq!(manager.flush_dirty_logs(T0 + 1999).unwrap(), 0);
    {
        let log = log.lock().unwrap();
        assert!(log.recovery_point() < log.log_end_offset());
    }
    assert_eq!(manager.flush_dirty_logs(T0 + 2000).unwrap(), 1);
    let log = log.lock().unwrap();
    assert_eq!(log.recovery_point(), log.log_end_offset());
}

/// Polls (in paused time, up to 2 s of it) until `log` is flushed to its end.
async fn flushed_to_the_end(log: &kcli::storage::log_manager::SharedLog) -> bool {
    for _ in 0..200 {
        {
            let log = log.lock().unwrap();
            if log.recovery_point() == log.log_end_offset() {
                return true;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test(start_paused = true)]
async fn the_log_flusher_runs_30_s_after_startup_then_every_scheduler_interval() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = manager_config(&[dir.path().to_path_buf()]);
    cfg.log_flush_scheduler_interval_ms = 60_000;
    let manager = Arc::new(LogManager::startup(cfg, T0).unwrap());
    // `flush.ms` 0: due whenever the task looks, so only the schedule decides (the task reads
    // the wall clock, which paused time does not move).
    let log = log_with_flush_ms(&manager, "scheduled", 0);
    let tracker = tokio_util::task::TaskTracker::new();
    let token = tokio_util::sync::CancellationToken::new();
    let start = tokio::time::Instant::now();
    manager.spawn_background_tasks(&tracker, token.clone());

    tokio::time::sleep_until(start + Duration::from_secs(29)).await;
    assert_eq!(log.lock().unwrap().recovery_point(), 0, "not before 30 s");
    tokio::time::sleep_until(start + Duration::from_secs(30)).await;
    assert!(flushed_to_the_end(&log).await, "flushed at 30 s");

    append_n(&mut log.lock().unwrap(), 5);
    tokio::time::sleep_until(start + Duration::from_secs(89)).await;
    {
        let log = log.lock().unwrap();
        assert!(
            log.recovery_point() < log.log_end_offset(),
            "not again before 90 s"
        );
    }
    tokio::time::sleep_until(start + Duration::from_secs(90)).await;
    assert!(flushed_to_the_end(&log).await, "flushed again at 90 s");

    token.cancel();
    tracker.close();
    tracker.wait().await;
}
