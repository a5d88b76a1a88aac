//! Kafka's `LogManager.loadLogs` for one log dir: lock it, check or write its
//! `meta.properties`, read its checkpoints, open (and after an unclean shutdown recover) every
//! partition directory in it, and queue the `-delete` ones for removal.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::cluster::{BrokerId, TopicPartition};

use super::super::StorageError;
use super::super::clean_shutdown::CleanShutdownFile;
use super::super::file_names::{
    self, LOG_START_OFFSET_CHECKPOINT_FILE, RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
};
use super::super::log_dir_lock::LogDirLock;
use super::super::meta_properties::MetaProperties;
use super::super::offset_checkpoint::OffsetCheckpointFile;
use super::super::unified_log::UnifiedLog;
use super::{LogDir, LogManagerConfig, SharedLog, log_deletion};

/// One log dir as `LogManager::startup` loads it: locked, its logs opened (recovered after an
/// unclean shutdown), its clean-shutdown marker removed.
pub(super) struct LoadedLogDir {
    pub(super) log_dir: LogDir,
    /// Each log with whether it is a future log (a move between dirs in progress).
    pub(super) logs: Vec<(TopicPartition, SharedLog, bool)>,
}

pub(super) fn load_log_dir(
    path: &Path,
    config: &LogManagerConfig,
    logs_to_be_deleted: &log_deletion::LogsToBeDeleted,
    now_ms: i64,
) -> Result<LoadedLogDir, StorageError> {
    std::fs::create_dir_all(path).map_err(|e| StorageError::io(path, e))?;
    let lock = LogDirLock::try_acquire(path)?;
    check_or_write_meta_properties(path, config.broker_id, &config.cluster_id)?;
    let clean_shutdown = CleanShutdownFile::new(path);
    let had_clean_shutdown = clean_shutdown.exists();
    let recovery_points =
        OffsetCheckpointFile::new(path.join(RECOVERY_POINT_CHECKPOINT_FILE)).read()?;
    let log_starts =
        OffsetCheckpointFile::new(path.join(LOG_START_OFFSET_CHECKPOINT_FILE)).read()?;
    let high_watermarks =
        OffsetCheckpointFile::new(path.join(REPLICATION_OFFSET_CHECKPOINT_FILE)).read()?;
    let (partitions, doomed) = partition_dirs(path)?;
    // As Kafka's `loadLogs`: recovery is news only when there are logs to recover (a brand-new
    // dir has no marker either).
    if !had_clean_shutdown && !partitions.is_empty() {
        tracing::info!(
            log_dir = %path.display(),
            logs = partitions.len(),
            "no clean-shutdown marker, recovering logs"
        );
    }
    let mut logs = Vec::with_capacity(partitions.len());
    for (tp, dir, is_future) in partitions {
        let mut log = UnifiedLog::open(
            dir,
            tp.clone(),
            config.default_log_config.clone(),
            recovery_points.get(&tp).copied().unwrap_or(0),
            log_starts.get(&tp).copied().unwrap_or(0),
            had_clean_shutdown,
            now_ms,
        )?;
        log.set_producer_id_expiration_ms(config.producer_id_expiration_ms, now_ms);
        if let Some(hw) = high_watermarks.get(&tp) {
            log.update_high_watermark(*hw)?;
        }
        logs.push((tp, Arc::new(Mutex::new(log)), is_future));
    }
    // Deletions are scheduled only once the dir has loaded: a dir that failed is left as it is.
    for dir in doomed {
        logs_to_be_deleted.push(dir, now_ms);
    }
    clean_shutdown.delete()?;
    Ok(LoadedLogDir {
        log_dir: LogDir {
            path: path.to_path_buf(),
            _lock: Some(lock),
        },
        logs,
    })
}

/// The partition directories of a log dir, each with whether it is a future replica
/// (`-future`, a move in progress, loaded as Kafka's `loadLog` does), and the `-delete` dirs of
/// partitions being deleted (queued for removal); stray directories are not loaded.
type PartitionDirs = (Vec<(TopicPartition, PathBuf, bool)>, Vec<PathBuf>);

fn partition_dirs(log_dir: &Path) -> Result<PartitionDirs, StorageError> {
    let mut dirs = Vec::new();
    let mut doomed = Vec::new();
    for entry in std::fs::read_dir(log_dir).map_err(|e| StorageError::io(log_dir, e))? {
        let entry = entry.map_err(|e| StorageError::io(log_dir, e))?;
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if name.ends_with("-delete") {
            doomed.push(path);
            continue;
        }
        if let Some(tp) = file_names::parse_topic_partition_name(&name) {
            dirs.push((tp, path, false));
        } else if let Some(tp) = file_names::parse_future_dir_name(&name) {
            dirs.push((tp, path, true));
        }
    }
    dirs.sort();
    Ok((dirs, doomed))
}

/// A ZooKeeper-mode `meta.properties`: written when missing; a different `broker.id` or
/// `cluster.id` means the dir belongs to another broker or cluster, and the broker refuses it.
fn check_or_write_meta_properties(
    dir: &Path,
    broker_id: BrokerId,
    cluster_id: &str,
) -> Result<(), StorageError> {
    match MetaProperties::read(dir)? {
        None => MetaProperties::zk(broker_id, cluster_id).write(dir),
        Some(stored) => {
            if stored.broker_id.is_some_and(|id| id != broker_id) {
                return Err(StorageError::MetaPropertiesMismatch {
                    dir: dir.to_path_buf(),
                    reason: format!(
                        "configured broker.id {broker_id} doesn't match stored broker.id {:?} in meta.properties",
                        stored.broker_id
                    ),
                });
            }
            if stored
                .cluster_id
                .as_deref()
                .is_some_and(|id| id != cluster_id)
            {
                return Err(StorageError::MetaPropertiesMismatch {
                    dir: dir.to_path_buf(),
                    reason: format!(
                        "the cluster id {cluster_id} doesn't match stored clusterId {:?} in meta.properties",
                        stored.cluster_id
                    ),
                });
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::TopicPartition;
    use crate::storage::StorageError;
    use crate::storage::log_config::LogConfig;
    use crate::storage::log_manager::{LogManager, LogManagerConfig, now_ms};

    #[test]
    fn a_dir_that_fails_to_load_starts_offline_and_the_others_serve() {
        let root = tempfile::tempdir().unwrap();
        let good = root.path().join("good");
        // A file where a dir should be: creating and reading it fail with I/O errors.
        let bad = root.path().join("bad");
        std::fs::write(&bad, b"not a dir").unwrap();
        let config = LogManagerConfig::new(vec![good.clone(), bad.clone()], 1, "c");
        let manager = LogManager::startup(config, now_ms()).unwrap();
        assert!(manager.is_log_dir_online(&good));
        assert!(!manager.is_log_dir_online(&bad));
        let described = manager.describe_log_dirs();
        assert_eq!(
            described.iter().map(|d| d.online).collect::<Vec<_>>(),
            [true, false]
        );

        // A new partition goes to the live dir; one the controller says existed before may
        // have its log on the failed dir, and gets none here.
        let tp = TopicPartition::new("t", 0);
        assert!(matches!(
            manager.check_log_creatable(&tp, false),
            Err(StorageError::LogDirsOffline { dirs, .. }) if dirs == [bad.clone()]
        ));
        manager.check_log_creatable(&tp, true).unwrap();
        manager
            .get_or_create_log(&tp, None, LogConfig::default(), now_ms())
            .unwrap();
        assert!(good.join("t-0").is_dir());
        // Hosted now: nothing to refuse.
        manager.check_log_creatable(&tp, false).unwrap();
    }

    #[test]
    fn no_dir_loading_is_the_first_failure() {
        let root = tempfile::tempdir().unwrap();
        let bad = root.path().join("bad");
        std::fs::write(&bad, b"not a dir").unwrap();
        let config = LogManagerConfig::new(vec![bad.clone()], 1, "c");
        match LogManager::startup(config, now_ms()) {
            Err(StorageError::Io { path, .. }) => assert_eq!(path, bad),
            other => panic!("expected the dir's I/O error, got {other:?}"),
        }
    }

    #[test]
    fn a_dir_of_another_broker_still_stops_the_startup() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        let theirs =
            LogManager::startup(LogManagerConfig::new(vec![b.clone()], 2, "c"), now_ms()).unwrap();
        drop(theirs);
        let config = LogManagerConfig::new(vec![a, b], 1, "c");
        assert!(matches!(
            LogManager::startup(config, now_ms()),
            Err(StorageError::MetaPropertiesMismatch { .. })
        ));
    }
}
