//! The log manager's log dirs on real files: a future log described beside its current log
//! (`is_future`, offset lag), not swapped in while behind, swapped in once caught up (the old
//! dir gone, the data the same), loaded again after a restart mid-move, and a failed dir's logs
//! taken out while the others stay.

use std::path::Path;

use kcli::cluster::TopicPartition;
use kcli::storage::log_manager::LogManager;
use kcli::storage::log_reads::FetchIsolation;

use crate::storage_support::{T0, append_n, manager_config, read_all, small_config};

fn append(manager: &LogManager, tp: &TopicPartition, n: usize) {
    let log = manager.get_log(tp).unwrap();
    append_n(&mut log.lock().unwrap(), n);
}

/// Copies what the current log has beyond the future log's end, as the mover does.
fn copy(manager: &LogManager, tp: &TopicPartition) {
    let current = manager.get_log(tp).unwrap();
    let future = manager.get_future_log(tp).unwrap();
    let from = future.lock().unwrap().log_end_offset();
    let bytes = current
        .lock()
        .unwrap()
        .read(from, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap()
        .records
        .read_to_vec()
        .unwrap();
    future
        .lock()
        .unwrap()
        .append_as_follower(&bytes, T0)
        .unwrap();
}

fn lag_of(manager: &LogManager, dir: &Path, tp: &TopicPartition) -> Option<(i64, bool)> {
    manager
        .describe_log_dirs()
        .into_iter()
        .find(|d| d.path == dir)?
        .logs
        .into_iter()
        .find(|l| &l.topic_partition == tp)
        .map(|l| (l.offset_lag, l.is_future))
}

#[test]
fn a_future_log_is_described_then_swapped_in_once_caught_up() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
    let tp = TopicPartition::new("m", 0);
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    manager
        .get_or_create_log(&tp, None, small_config(), T0)
        .unwrap();
    append(&manager, &tp, 30);
    let before = read_all(&manager.get_log(&tp).unwrap().lock().unwrap(), 0);

    manager.create_future_log(&tp, b.path(), T0).unwrap();
    assert_eq!(lag_of(&manager, a.path(), &tp), Some((0, false)));
    assert_eq!(lag_of(&manager, b.path(), &tp), Some((30, true)));
    assert!(
        !manager.replace_current_with_future_log(&tp, T0).unwrap(),
        "swapped while behind"
    );
    copy(&manager, &tp);
    append(&manager, &tp, 5);
    assert_eq!(
        lag_of(&manager, b.path(), &tp).map(|l| l.0),
        Some(
            35 - manager
                .get_future_log(&tp)
                .unwrap()
                .lock()
                .unwrap()
                .log_end_offset()
        )
    );
    assert!(!manager.replace_current_with_future_log(&tp, T0).unwrap());

    // A restart mid-move: the future dir comes back as the future log, not as the partition.
    manager.shutdown(-1, T0).unwrap();
    drop(manager);
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    assert_eq!(
        manager.get_log(&tp).unwrap().lock().unwrap().dir(),
        a.path().join("m-0")
    );
    assert!(manager.get_future_log(&tp).is_some());
    copy(&manager, &tp);
    assert!(manager.replace_current_with_future_log(&tp, T0).unwrap());
    assert!(manager.get_future_log(&tp).is_none());
    let log = manager.get_log(&tp).unwrap();
    assert_eq!(log.lock().unwrap().dir(), b.path().join("m-0"));
    let mut after = read_all(&log.lock().unwrap(), 0);
    after.truncate(before.len());
    assert_eq!(after, before);
    assert_eq!(log.lock().unwrap().high_watermark(), 35);
    assert!(!a.path().join("m-0").exists());
    assert!(
        std::fs::read_dir(a.path()).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("m-0"))
    );
    assert_eq!(lag_of(&manager, b.path(), &tp), Some((0, false)));
    assert_eq!(lag_of(&manager, a.path(), &tp), None);
    // Appends go on in the new dir, and survive a restart there.
    append(&manager, &tp, 1);
    manager.shutdown(-1, T0).unwrap();
    drop(manager);
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    let log = manager.get_log(&tp).unwrap();
    let log = log.lock().unwrap();
    assert_eq!(
        (log.dir().to_path_buf(), log.log_end_offset()),
        (b.path().join("m-0"), 36)
    );
}

#[test]
fn a_failed_dir_takes_out_only_its_logs() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
    let manager = LogManager::startup(manager_config(&dirs), T0).unwrap();
    let (in_a, in_b) = (TopicPartition::new("x", 0), TopicPartition::new("x", 1));
    manager
        .get_or_create_log(&in_a, None, small_config(), T0)
        .unwrap();
    manager
        .get_or_create_log(&in_b, None, small_config(), T0)
        .unwrap();
    manager.maybe_report_log_dir_failure(&kcli::storage::StorageError::io(
        b.path().join("x-1/00000000000000000000.log"),
        std::io::Error::from_raw_os_error(28),
    ));
    assert!(!manager.is_log_dir_online(b.path()));
    let offline = manager.handle_log_dir_failure(b.path());
    assert_eq!(offline.current, std::slice::from_ref(&in_b));
    assert_eq!(offline.live_log_dirs, [a.path().to_path_buf()]);
    assert!(manager.get_log(&in_b).is_none() && manager.get_log(&in_a).is_some());
    let described = manager.describe_log_dirs();
    assert!(!described[1].online && described[1].logs.is_empty());
    // New partitions go to the live dir; checkpoints and shutdown skip the failed one.
    let new = TopicPartition::new("x", 2);
    let log = manager
        .get_or_create_log(&new, None, small_config(), T0)
        .unwrap();
    assert_eq!(log.lock().unwrap().dir(), a.path().join("x-2"));
    manager.checkpoint_high_watermarks().unwrap();
    manager.shutdown(-1, T0).unwrap();
}
