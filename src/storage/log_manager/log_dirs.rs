//! The log dirs as the protocol sees them: future logs for partitions being moved between dirs
//! (Kafka's `LogManager.getOrCreateLog(isFuture = true)` and `replaceCurrentWithFutureLog`),
//! the description DescribeLogDirs answers with, and a failed dir taken offline (Kafka's
//! `LogManager.handleLogDirFailure`).
//!
//! A move: the future log `<tp>.<uuid>-future` is created in the destination dir with the
//! partition's topic id and its cleaning paused; the replication layer copies batches into it
//! while the current log keeps serving; once both end at the same offset, under the current
//! log's lock, the future log is closed, its dir renamed `<tp>`, reopened, and put in place of
//! the current one, whose dir is renamed `<tp>.<uuid>-delete` and removed. A crash between
//! those two renames leaves two `<tp>` dirs, which the next start refuses as Kafka does
//! ("duplicate log directories"); a crash before the first leaves the future dir, which is
//! loaded (and recovered) as a future log, and the move resumes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::cluster::TopicPartition;

use super::super::StorageError;
use super::super::file_names::{self, FUTURE_DIR_SUFFIX};
use super::super::log_config::LogConfig;
use super::super::log_dir_failure_channel::LogDirFailureChannel;
use super::super::partition_metadata::PartitionMetadataFile;
use super::super::unified_log::UnifiedLog;
use super::{LogDir, LogManager, SharedLog, lock};

/// One partition log of a log dir, for DescribeLogDirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDescription {
    pub topic_partition: TopicPartition,
    /// The bytes of its segments.
    pub size: u64,
    /// Kafka's `getLogEndOffsetLag`: for a future log, how far it is behind the current log;
    /// for a current log, how far its log end is below its high watermark (0 on a leader);
    /// -1 when the partition has no current log.
    pub offset_lag: i64,
    pub is_future: bool,
}

/// One log dir, for DescribeLogDirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDirDescription {
    /// The dir as configured, made absolute.
    pub path: PathBuf,
    /// False once the dir has failed: nothing else is reported for it.
    pub online: bool,
    /// The file system's size and the bytes available to the broker (`i64::MAX` when they do
    /// not fit, as Kafka's `adjustForLargeFileSystems`); -1 when unknown.
    pub total_bytes: i64,
    pub usable_bytes: i64,
    pub logs: Vec<LogDescription>,
}

/// What [`LogManager::handle_log_dir_failure`] took offline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OfflineLogs {
    /// Partitions whose current log was in the dir: they go offline.
    pub current: Vec<TopicPartition>,
    /// Partitions whose future log was in the dir: their moves stop.
    pub future: Vec<TopicPartition>,
    /// The dirs still online.
    pub live_log_dirs: Vec<PathBuf>,
}

/// `path` made absolute against the working directory, as Java's `File.getAbsolutePath`.
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

impl LogManager {
    /// Where I/O errors on this broker's log dirs are reported.
    pub fn failure_channel(&self) -> &Arc<LogDirFailureChannel> {
        &self.failure_channel
    }

    /// The configured log dir whose absolute path is `path` (Kafka compares absolute paths as
    /// strings), if any.
    pub fn find_log_dir(&self, path: &str) -> Option<PathBuf> {
        self.log_dirs
            .iter()
            .find(|d| absolute(&d.path).as_os_str() == path)
            .map(|d| d.path.clone())
    }

    pub fn is_log_dir_online(&self, dir: &Path) -> bool {
        !self.failure_channel.is_offline(dir)
    }

    pub(super) fn live_dirs(&self) -> Vec<&LogDir> {
        self.log_dirs
            .iter()
            .filter(|d| !self.failure_channel.is_offline(&d.path))
            .collect()
    }

    /// Every future log, in partition order.
    pub fn all_future_logs(&self) -> Vec<(TopicPartition, SharedLog)> {
        lock(&self.future_logs)
            .iter()
            .map(|(tp, log)| (tp.clone(), Arc::clone(log)))
            .collect()
    }

    pub(super) fn all_logs_and_futures(&self) -> Vec<(TopicPartition, SharedLog)> {
        let mut all = self.all_logs();
        all.extend(self.all_future_logs());
        all
    }

    /// The future log of `tp`, when it is being moved.
    pub fn get_future_log(&self, tp: &TopicPartition) -> Option<SharedLog> {
        lock(&self.future_logs).get(tp).cloned()
    }

    /// Kafka's `maybeUpdatePreferredLogDir`: a partition not created yet goes to `dir` when it
    /// is, unless its current or future log is already there.
    pub fn maybe_update_preferred_log_dir(&self, tp: &TopicPartition, dir: &Path) {
        let in_dir =
            |log: Option<SharedLog>| log.is_some_and(|log| lock(&log).dir().parent() == Some(dir));
        if !in_dir(self.get_log(tp)) && !in_dir(self.get_future_log(tp)) {
            lock(&self.preferred_log_dirs).insert(tp.clone(), dir.to_path_buf());
        }
    }

    /// The preferred dir of a partition being created, when still online.
    pub(super) fn take_preferred_log_dir(&self, tp: &TopicPartition) -> Option<PathBuf> {
        lock(&self.preferred_log_dirs)
            .remove(tp)
            .filter(|dir| self.is_log_dir_online(dir))
    }

    /// Creates `tp`'s future log in `log_dir`, with the current log's topic id and config, and
    /// pauses the partition's cleaning until the move ends. The partition must have a current
    /// log elsewhere.
    pub fn create_future_log(
        &self,
        tp: &TopicPartition,
        log_dir: &Path,
        now_ms: i64,
    ) -> Result<SharedLog, StorageError> {
        let Some(current) = self.get_log(tp) else {
            return Err(StorageError::NoCurrentLog {
                topic_partition: tp.clone(),
            });
        };
        let (config, current_dir): (LogConfig, PathBuf) = {
            let log = lock(&current);
            (log.config().clone(), log.dir().to_path_buf())
        };
        let mut futures = lock(&self.future_logs);
        if let Some(existing) = futures.get(tp) {
            return Ok(Arc::clone(existing));
        }
        lock(&self.preferred_log_dirs).remove(tp);
        let dir = log_dir.join(file_names::dir_name_with_suffix(tp, FUTURE_DIR_SUFFIX));
        let log = super::create_log_dir(&dir, || {
            let mut log = UnifiedLog::open(dir.clone(), tp.clone(), config, 0, 0, true, now_ms)?;
            log.set_producer_id_expiration_ms(
                self.producer_id_expiration_ms
                    .load(std::sync::atomic::Ordering::Relaxed),
                now_ms,
            );
            if let Some(topic_id) = PartitionMetadataFile::new(&current_dir).read()? {
                PartitionMetadataFile::new(&dir).write(topic_id)?;
            }
            Ok(log)
        })?;
        if let Some(cleaner) = &self.cleaner {
            cleaner.manager().abort_and_pause_cleaning(tp);
        }
        tracing::info!(topic_partition = %tp, dir = %dir.display(), "created future log");
        let log = Arc::new(Mutex::new(log));
        futures.insert(tp.clone(), Arc::clone(&log));
        Ok(log)
    }

    /// Kafka's `asyncDelete(isFuture = true)`: drops `tp`'s future log and its dir (a move
    /// cancelled or redirected), resuming the cleaning its move paused.
    pub fn remove_future_log(&self, tp: &TopicPartition) -> Result<bool, StorageError> {
        let Some(log) = lock(&self.future_logs).remove(tp) else {
            return Ok(false);
        };
        if let Some(cleaner) = &self.cleaner {
            cleaner.manager().resume_cleaning(std::slice::from_ref(tp));
        }
        let dir = lock(&log).dir().to_path_buf();
        delete_dir(tp, &dir)?;
        Ok(true)
    }

    /// Kafka's `replaceCurrentWithFutureLog` once the future log has caught up: returns false,
    /// changing nothing, while the two logs end at different offsets.
    pub fn replace_current_with_future_log(
        &self,
        tp: &TopicPartition,
        now_ms: i64,
    ) -> Result<bool, StorageError> {
        let (Some(current), Some(future)) = (self.get_log(tp), self.get_future_log(tp)) else {
            return Ok(false);
        };
        let (old_log, old_parent, new_parent) = {
            // No append or truncation of the current log can come in between the check and
            // the swap: appends take this lock.
            let mut current = lock(&current);
            let mut future_log = lock(&future);
            if current.log_end_offset() != future_log.log_end_offset() {
                return Ok(false);
            }
            let future_dir = future_log.dir().to_path_buf();
            let (Some(new_parent), Some(old_parent)) = (
                future_dir.parent().map(Path::to_path_buf),
                current.dir().parent().map(Path::to_path_buf),
            ) else {
                return Ok(false);
            };
            let end = future_log.log_end_offset();
            let log_start = future_log.log_start_offset();
            let config = current.config().clone();
            let high_watermark = current.high_watermark();
            future_log.close(now_ms)?;
            let target = new_parent.join(tp.to_string());
            std::fs::rename(&future_dir, &target).map_err(|e| StorageError::io(&future_dir, e))?;
            sync_dir(&new_parent)?;
            let mut moved =
                UnifiedLog::open(target, tp.clone(), config, end, log_start, true, now_ms)?;
            moved.set_producer_id_expiration_ms(
                self.producer_id_expiration_ms
                    .load(std::sync::atomic::Ordering::Relaxed),
                now_ms,
            );
            moved.update_high_watermark(high_watermark)?;
            std::mem::swap(&mut *current, &mut moved);
            // The future map's lock may be taken under a log's: nobody holds it while waiting
            // for a log.
            lock(&self.future_logs).remove(tp);
            // Renamed before anyone sees the new placement, so the old dir is never taken
            // for the partition's, by a restart or by a reader.
            let closed = moved.close(now_ms);
            let old_dir = moved.dir().to_path_buf();
            let doomed = old_dir.with_file_name(file_names::dir_name_with_suffix(
                tp,
                file_names::DELETE_DIR_SUFFIX,
            ));
            std::fs::rename(&old_dir, &doomed).map_err(|e| StorageError::io(&old_dir, e))?;
            closed?;
            (doomed, old_parent, new_parent)
        };
        std::fs::remove_dir_all(&old_log).map_err(|e| StorageError::io(&old_log, e))?;
        if let Some(cleaner) = &self.cleaner {
            // Kafka's `alterCheckpointDir`: the first dirty offset moves with the log.
            let manager = cleaner.manager();
            if let Some(offset) = manager.all_cleaner_checkpoints().get(tp).copied() {
                manager.update_checkpoints(&new_parent, Some((tp.clone(), offset)), None);
            }
            manager.update_checkpoints(&old_parent, None, Some(tp));
            manager.resume_cleaning(std::slice::from_ref(tp));
        }
        self.checkpoint_log_recovery_offsets_and_start()?;
        tracing::info!(topic_partition = %tp, from = %old_parent.display(), to = %new_parent.display(),
            "the current replica is replaced with the future replica");
        Ok(true)
    }

    /// Every log dir in `log.dirs` order with its logs (current and future), for
    /// DescribeLogDirs.
    pub fn describe_log_dirs(&self) -> Vec<LogDirDescription> {
        let mut by_dir: BTreeMap<PathBuf, Vec<LogDescription>> = BTreeMap::new();
        let current: BTreeMap<TopicPartition, SharedLog> = self.all_logs().into_iter().collect();
        let logs = current
            .iter()
            .map(|(tp, log)| (tp.clone(), Arc::clone(log), false))
            .chain(
                self.all_future_logs()
                    .into_iter()
                    .map(|(tp, log)| (tp, log, true)),
            );
        for (tp, log, is_future) in logs {
            let (parent, size, end) = {
                let log = lock(&log);
                (
                    log.dir().parent().map(Path::to_path_buf),
                    log.size(),
                    log.log_end_offset(),
                )
            };
            let offset_lag = match current.get(&tp) {
                None => -1,
                Some(current) => {
                    let current = lock(current);
                    if is_future {
                        current.log_end_offset() - end
                    } else {
                        (current.high_watermark() - end).max(0)
                    }
                }
            };
            if let Some(parent) = parent {
                by_dir.entry(parent).or_default().push(LogDescription {
                    topic_partition: tp,
                    size,
                    offset_lag,
                    is_future,
                });
            }
        }
        self.log_dirs
            .iter()
            .map(|d| {
                let online = self.is_log_dir_online(&d.path);
                let (total_bytes, usable_bytes) = if online {
                    file_store_space(&d.path)
                } else {
                    (-1, -1)
                };
                LogDirDescription {
                    path: absolute(&d.path),
                    online,
                    total_bytes,
                    usable_bytes,
                    logs: if online {
                        by_dir.remove(&d.path).unwrap_or_default()
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect()
    }

    /// The configured log dir holding `path`, if any.
    pub fn log_dir_of(&self, path: &Path) -> Option<PathBuf> {
        self.log_dirs
            .iter()
            .find(|d| path.starts_with(&d.path))
            .map(|d| d.path.clone())
    }

    /// Reports an I/O error on a log dir's files to the failure channel (Kafka's
    /// `maybeHandleIOException`); other errors are not a dir's failure.
    pub fn maybe_report_log_dir_failure(&self, err: &StorageError) {
        if let StorageError::Io { path, .. } = err
            && let Some(dir) = self.log_dir_of(path)
        {
            self.failure_channel.maybe_add_offline_log_dir(&dir, err);
        }
    }

    /// Kafka's `LogManager.handleLogDirFailure`: the dir's current and future logs leave the
    /// maps (checkpoints, retention, the cleaner and DescribeLogDirs no longer see them). The
    /// caller halts the broker when no dir is left.
    pub fn handle_log_dir_failure(&self, dir: &Path) -> OfflineLogs {
        self.failure_channel
            .maybe_add_offline_log_dir(dir, &"reported by the replica manager");
        let take = |map: &Mutex<BTreeMap<TopicPartition, SharedLog>>| {
            let mut map = lock(map);
            let gone: Vec<TopicPartition> = map
                .iter()
                .filter(|(_, log)| lock(log).dir().parent() == Some(dir))
                .map(|(tp, _)| tp.clone())
                .collect();
            for tp in &gone {
                map.remove(tp);
            }
            gone
        };
        let current = take(&self.logs);
        let future = take(&self.future_logs);
        if let Some(cleaner) = &self.cleaner {
            // Those paused for a move would stay paused forever otherwise.
            cleaner.manager().resume_cleaning(&future);
        }
        OfflineLogs {
            current,
            future,
            live_log_dirs: self.live_dirs().iter().map(|d| d.path.clone()).collect(),
        }
    }
}

/// Renames a partition dir `<tp>.<uuid>-delete` (so a restart never loads it) and removes it.
fn delete_dir(tp: &TopicPartition, dir: &Path) -> Result<(), StorageError> {
    let doomed = dir.with_file_name(file_names::dir_name_with_suffix(
        tp,
        file_names::DELETE_DIR_SUFFIX,
    ));
    std::fs::rename(dir, &doomed).map_err(|e| StorageError::io(dir, e))?;
    std::fs::remove_dir_all(&doomed).map_err(|e| StorageError::io(&doomed, e))
}

/// fsyncs a directory, so a rename in it survives a power loss.
fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| StorageError::io(dir, e))
}

/// The file system's total and usable bytes (Java's `FileStore.getTotalSpace` and
/// `getUsableSpace`: blocks and blocks available to unprivileged users, times the fragment
/// size).
fn file_store_space(dir: &Path) -> (i64, i64) {
    match nix::sys::statvfs::statvfs(dir) {
        Ok(st) => {
            let frsize = u128::from(st.fragment_size());
            let clamp =
                |blocks: u64| i64::try_from(u128::from(blocks) * frsize).unwrap_or(i64::MAX);
            (clamp(st.blocks()), clamp(st.blocks_available()))
        }
        Err(_) => (-1, -1),
    }
}
