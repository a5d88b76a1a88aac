//! Kafka's `LogManager.asyncDelete` and `deleteLogs`: a deleted partition's directory is renamed
//! `<tp>.<uuid>-delete` at once (so a restart never loads it, and a topic of the same name can
//! be created meanwhile) and removed from disk `file.delete.delay.ms` later (the broker's
//! `log.segment.delete.delay.ms`, 60 s by default), as Kafka gives readers of the old files
//! time to finish. `-delete` dirs found at startup are queued the same way from the start.
//!
//! Lock order: the queue's mutex is a leaf; nothing else is locked while it is held.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::cluster::sync::lock;

use super::super::StorageError;
use super::LogManager;

/// Directories waiting for removal, oldest first, with when they were renamed (epoch ms).
#[derive(Debug, Default)]
pub(super) struct LogsToBeDeleted {
    queue: Mutex<VecDeque<(PathBuf, i64)>>,
}

impl LogsToBeDeleted {
    pub(super) fn push(&self, dir: PathBuf, scheduled_ms: i64) {
        lock(&self.queue).push_back((dir, scheduled_ms));
    }

    pub(super) fn len(&self) -> usize {
        lock(&self.queue).len()
    }

    /// Takes the dirs scheduled at or before `cutoff_ms`.
    fn take_due(&self, cutoff_ms: i64) -> Vec<PathBuf> {
        let mut queue = lock(&self.queue);
        let mut due = Vec::new();
        while queue.front().is_some_and(|(_, at)| *at <= cutoff_ms) {
            if let Some((dir, _)) = queue.pop_front() {
                due.push(dir);
            }
        }
        due
    }
}

impl LogManager {
    /// Kafka's `deleteLogs`: removes the renamed dirs whose delay has passed; returns how many.
    /// A dir that cannot be removed is an error (its log dir is failing); the others still go.
    pub fn delete_logs(&self, now_ms: i64) -> Result<usize, StorageError> {
        let delay = self.config.default_log_config.file_delete_delay_ms;
        let due = self
            .logs_to_be_deleted
            .take_due(now_ms.saturating_sub(delay));
        let mut first_error = None;
        let mut removed = 0;
        for dir in due {
            match std::fs::remove_dir_all(&dir) {
                Ok(()) => {
                    removed += 1;
                    tracing::info!(dir = %dir.display(), "deleted log dir");
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    first_error.get_or_insert(StorageError::io(&dir, e));
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(removed),
        }
    }

    /// How many renamed dirs wait for removal.
    pub fn pending_log_deletions(&self) -> usize {
        self.logs_to_be_deleted.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::TopicPartition;
    use crate::storage::log_config::LogConfig;
    use crate::storage::log_manager::{LogManager, LogManagerConfig, now_ms};

    fn doomed_dirs(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with("-delete"))
            .collect()
    }

    #[test]
    fn a_deleted_log_is_renamed_at_once_and_removed_after_the_delay_even_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = LogManagerConfig::new(vec![dir.path().to_path_buf()], 1, "c");
        config.default_log_config.file_delete_delay_ms = 60_000;
        let manager = LogManager::startup(config.clone(), now_ms()).unwrap();
        let tp = TopicPartition::new("t", 0);
        manager
            .get_or_create_log(&tp, None, LogConfig::default(), now_ms())
            .unwrap();
        assert!(manager.delete_log(&tp).unwrap());
        assert!(!dir.path().join("t-0").exists(), "renamed at once");
        let doomed = doomed_dirs(dir.path());
        assert_eq!(doomed.len(), 1, "{doomed:?}");
        assert!(doomed[0].starts_with("t-0."), "{doomed:?}");
        // Not before the delay.
        assert_eq!(manager.delete_logs(now_ms() + 59_000).unwrap(), 0);
        assert_eq!(doomed_dirs(dir.path()).len(), 1);
        // A restart meanwhile neither loads it nor forgets it.
        manager.shutdown(-1, now_ms()).unwrap();
        drop(manager);
        let manager = LogManager::startup(config, now_ms()).unwrap();
        assert!(manager.get_log(&tp).is_none());
        assert_eq!(manager.pending_log_deletions(), 1);
        assert_eq!(manager.delete_logs(now_ms() + 1_000).unwrap(), 0);
        assert_eq!(manager.delete_logs(now_ms() + 61_000).unwrap(), 1);
        assert!(doomed_dirs(dir.path()).is_empty());
        assert_eq!(manager.pending_log_deletions(), 0);
    }
}
