//! Every partition log of the broker, across the log dirs of `log.dirs` (Kafka's `LogManager`).
//!
//! At startup each log dir is locked (`.lock`), its `meta.properties` checked or written, its
//! checkpoints read and its partitions loaded; a log dir without the clean-shutdown marker is
//! recovered from its recovery points. The marker is removed once loading is done, so a crash
//! from then on is detected at the next start. At shutdown every log is closed, checkpoints
//! are written and the marker is put back.
//!
//! Locking: the map of logs is one mutex, each log another; the map's lock is taken first and
//! never held while a log's lock is waited on for long (appends and reads take only the log's).
//! No lock is held across an `.await`. The log cleaner's state (`log_cleaner::cleaner_manager`)
//! comes between the two: map, cleaner state, log. Deleting or truncating a log first aborts
//! and pauses its cleaning, holding none of these locks while it waits.
//!
//! A partition being moved to another log dir also has a future log (`<tp>.<uuid>-future`, in
//! its own map, loaded at startup like the others); `log_dirs` owns the moves, the
//! description of the dirs and the handling of a failed dir. Where both are locked, the current
//! log's lock comes before the future log's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, TopicPartition};

use super::StorageError;
use super::clean_shutdown::CleanShutdownFile;
use super::descriptors::NewLogBudget;
use super::file_names::{
    self, LOG_START_OFFSET_CHECKPOINT_FILE, RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
};
use super::log_cleaner::{CleanerConfig, LogCleaner, LogSource};
use super::log_config::LogConfig;
use super::log_dir_failure_channel::LogDirFailureChannel;
use super::log_dir_lock::LogDirLock;
use super::offset_checkpoint::OffsetCheckpointFile;
use super::partition_metadata::{PartitionMetadataFile, TopicId};
use super::unified_log::UnifiedLog;

mod load_logs;
mod log_deletion;
mod log_dirs;

pub use log_dirs::{LogDescription, LogDirDescription, OfflineLogs, absolute};

/// A partition's log, shared by the threads that append to and read from it.
pub type SharedLog = Arc<Mutex<UnifiedLog>>;

/// How often rolled segments are looked for and fsynced (Kafka schedules the flush at once
/// after each roll).
const ROLL_FLUSH_INTERVAL_MS: u64 = 1000;

/// Kafka's `LogManager.InitialTaskDelayMs`: the `kafka-log-flusher` task first runs this long
/// after startup.
const INITIAL_TASK_DELAY: Duration = Duration::from_secs(30);

/// The longest period a task is scheduled with: `Long.MAX_VALUE` milliseconds (Kafka's
/// `log.flush.scheduler.interval.ms` default, "never again") does not fit a timer.
const LONGEST_PERIOD: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A periodic storage task run on the blocking pool.
type StorageJob = fn(&LogManager) -> Result<(), StorageError>;

/// What the log manager needs from the broker's configuration.
#[derive(Debug, Clone)]
pub struct LogManagerConfig {
    /// `log.dirs`.
    pub log_dirs: Vec<PathBuf>,
    /// The broker-wide defaults a topic's overrides apply to.
    pub default_log_config: LogConfig,
    /// `broker.id`, checked against and written to `meta.properties`.
    pub broker_id: BrokerId,
    /// The cluster id written to `meta.properties`.
    pub cluster_id: String,
    /// `log.retention.check.interval.ms`.
    pub retention_check_interval_ms: u64,
    /// `log.flush.offset.checkpoint.interval.ms`.
    pub recovery_point_checkpoint_interval_ms: u64,
    /// `replica.high.watermark.checkpoint.interval.ms`.
    pub high_watermark_checkpoint_interval_ms: u64,
    /// The `log.cleaner.*` settings.
    pub cleaner: CleanerConfig,
    /// `producer.id.expiration.ms`: idle idempotent producers are forgotten after it.
    pub producer_id_expiration_ms: i64,
    /// `producer.id.expiration.check.interval.ms`.
    pub producer_id_expiration_check_interval_ms: u64,
    /// `log.flush.scheduler.interval.ms`: how often the `kafka-log-flusher` task looks for logs
    /// whose `flush.ms` has passed (Kafka's default `Long.MAX_VALUE`: once, 30 s after startup).
    pub log_flush_scheduler_interval_ms: u64,
}

impl LogManagerConfig {
    /// Kafka's defaults for the given dirs and broker.
    pub fn new(log_dirs: Vec<PathBuf>, broker_id: BrokerId, cluster_id: impl Into<String>) -> Self {
        LogManagerConfig {
            log_dirs,
            default_log_config: LogConfig::default(),
            broker_id,
            cluster_id: cluster_id.into(),
            retention_check_interval_ms: 300_000,
            recovery_point_checkpoint_interval_ms: 60_000,
            high_watermark_checkpoint_interval_ms: 5_000,
            cleaner: CleanerConfig::default(),
            producer_id_expiration_ms: 86_400_000,
            producer_id_expiration_check_interval_ms: 600_000,
            log_flush_scheduler_interval_ms: i64::MAX as u64,
        }
    }
}

/// One configured log dir: locked while it is loaded and online; a dir that failed to load
/// is listed too (offline, DescribeLogDirs answers KAFKA_STORAGE_ERROR for it), without a lock.
#[derive(Debug)]
struct LogDir {
    path: PathBuf,
    _lock: Option<LogDirLock>,
}

/// The broker's logs. Invariant: each partition has one log, in exactly one log dir.
#[derive(Debug)]
pub struct LogManager {
    config: LogManagerConfig,
    log_dirs: Vec<LogDir>,
    logs: Mutex<BTreeMap<TopicPartition, SharedLog>>,
    /// The log cleaner, when `log.cleaner.enable`.
    cleaner: Option<Arc<LogCleaner>>,
    /// `producer.id.expiration.ms` in force (dynamic in Kafka): new logs take it.
    producer_id_expiration_ms: AtomicI64,
    /// The future logs of partitions being moved between log dirs.
    future_logs: Mutex<BTreeMap<TopicPartition, SharedLog>>,
    /// Where a partition not hosted yet goes when created (AlterReplicaLogDirs before the
    /// partition exists, Kafka's `preferredLogDirs`).
    preferred_log_dirs: Mutex<BTreeMap<TopicPartition, PathBuf>>,
    /// The offline log dirs.
    failure_channel: Arc<LogDirFailureChannel>,
    /// Deleted partitions' renamed dirs, removed after `file.delete.delay.ms`.
    logs_to_be_deleted: log_deletion::LogsToBeDeleted,
}

/// Milliseconds since the Unix epoch on the system clock (`cluster::time::SystemTime`), for
/// callers that are not handed a `Time`.
pub fn now_ms() -> i64 {
    crate::cluster::time::Time::milliseconds(&crate::cluster::time::SystemTime)
}

impl LogManager {
    /// Locks and loads every log dir. A dir that fails with an I/O error (a dead or full disk)
    /// starts offline, as in Kafka's `loadLogs`: it is queued on the failure channel, whose
    /// handler tells the controller, and the broker runs on the others; when none is left the
    /// first failure is the answer. Any other failure (a dir locked by another process, one of
    /// another broker, a partition in two dirs) stops the startup.
    pub fn startup(config: LogManagerConfig, now_ms: i64) -> Result<Self, StorageError> {
        let mut log_dirs = Vec::with_capacity(config.log_dirs.len());
        let mut logs = BTreeMap::new();
        let mut future_logs = BTreeMap::new();
        let logs_to_be_deleted = log_deletion::LogsToBeDeleted::default();
        let failure_channel = Arc::new(LogDirFailureChannel::new());
        let mut first_failure = None;
        for path in &config.log_dirs {
            let loaded = match load_logs::load_log_dir(path, &config, &logs_to_be_deleted, now_ms) {
                Ok(loaded) => loaded,
                Err(err @ StorageError::Io { .. }) => {
                    failure_channel.maybe_add_offline_log_dir(path, &err);
                    first_failure.get_or_insert(err);
                    log_dirs.push(LogDir {
                        path: path.clone(),
                        _lock: None,
                    });
                    continue;
                }
                Err(err) => return Err(err),
            };
            for (tp, log, is_future) in loaded.logs {
                let into = if is_future {
                    &mut future_logs
                } else {
                    &mut logs
                };
                if into.contains_key(&tp) {
                    return Err(StorageError::DuplicateLog {
                        dir: lock(&log).dir().to_path_buf(),
                        topic_partition: tp,
                    });
                }
                into.insert(tp, log);
            }
            log_dirs.push(loaded.log_dir);
        }
        if let Some(failure) = first_failure
            && log_dirs.iter().all(|d| failure_channel.is_offline(&d.path))
        {
            return Err(failure);
        }
        let cleaner = if config.cleaner.enable_cleaner {
            // Over the live dirs only, as Kafka's `LogCleaner(liveLogDirs)`.
            let live: Vec<PathBuf> = log_dirs
                .iter()
                .filter(|d| !failure_channel.is_offline(&d.path))
                .map(|d| d.path.clone())
                .collect();
            Some(Arc::new(LogCleaner::new(config.cleaner.clone(), &live)?))
        } else {
            None
        };
        if let Some(cleaner) = &cleaner {
            // A move interrupted by the last stop resumes; its partition is not cleaned until
            // it ends, as when it began.
            for tp in future_logs.keys() {
                cleaner.manager().abort_and_pause_cleaning(tp);
            }
        }
        Ok(LogManager {
            producer_id_expiration_ms: AtomicI64::new(config.producer_id_expiration_ms),
            config,
            log_dirs,
            logs: Mutex::new(logs),
            cleaner,
            future_logs: Mutex::new(future_logs),
            preferred_log_dirs: Mutex::new(BTreeMap::new()),
            failure_channel,
            logs_to_be_deleted,
        })
    }

    pub fn config(&self) -> &LogManagerConfig {
        &self.config
    }

    /// The log cleaner, when enabled.
    pub fn cleaner(&self) -> Option<&Arc<LogCleaner>> {
        self.cleaner.as_ref()
    }

    /// The log of `tp`, if this broker has one.
    pub fn get_log(&self, tp: &TopicPartition) -> Option<SharedLog> {
        lock(&self.logs).get(tp).cloned()
    }

    /// Every log, in partition order.
    pub fn all_logs(&self) -> Vec<(TopicPartition, SharedLog)> {
        lock(&self.logs)
            .iter()
            .map(|(tp, log)| (tp.clone(), Arc::clone(log)))
            .collect()
    }

    /// Whether a log may be created for `tp` (Kafka's check in `getOrCreateLog`): one not
    /// hosted here and not `is_new` had a log before, maybe in a dir that is offline now, and
    /// an empty one made elsewhere would be a second log for it once that dir is back.
    pub fn check_log_creatable(
        &self,
        tp: &TopicPartition,
        is_new: bool,
    ) -> Result<(), StorageError> {
        if is_new || self.get_log(tp).is_some() {
            return Ok(());
        }
        let dirs = self.failure_channel.offline_dirs();
        if dirs.is_empty() {
            return Ok(());
        }
        Err(StorageError::LogDirsOffline {
            topic_partition: tp.clone(),
            dirs,
        })
    }

    /// The log of `tp`, created in the log dir with the fewest partitions when missing (ties go
    /// to the first in `log.dirs` order, as Kafka's `nextLogDirs`).
    pub fn get_or_create_log(
        &self,
        tp: &TopicPartition,
        topic_id: Option<TopicId>,
        config: LogConfig,
        now_ms: i64,
    ) -> Result<SharedLog, StorageError> {
        let mut logs = lock(&self.logs);
        if let Some(log) = logs.get(tp) {
            return Ok(Arc::clone(log));
        }
        let parent = match self.take_preferred_log_dir(tp) {
            Some(preferred) => preferred,
            None => self.next_log_dir(&logs)?,
        };
        let dir = parent.join(tp.to_string());
        let log = create_log_dir(&dir, || {
            let mut log = UnifiedLog::open(dir.clone(), tp.clone(), config, 0, 0, true, now_ms)?;
            log.set_producer_id_expiration_ms(
                self.producer_id_expiration_ms.load(Ordering::Relaxed),
                now_ms,
            );
            Ok(log)
        })?;
        let log = Arc::new(Mutex::new(log));
        logs.insert(tp.clone(), Arc::clone(&log));
        drop(logs);
        // Written (and fsynced) outside the registry's lock: the LeaderAndIsr of thousands of
        // new partitions creates them on several threads, whose syncs then overlap. The log is
        // not answered for before this returns.
        if let Some(topic_id) = topic_id
            && let Err(err) = PartitionMetadataFile::new(&dir).write(topic_id)
        {
            lock(&self.logs).remove(tp);
            drop(log);
            if let Err(e) = std::fs::remove_dir_all(&dir) {
                tracing::warn!(dir = %dir.display(), %e, "cannot remove a half-created log dir");
            }
            return Err(err);
        }
        tracing::info!(topic_partition = %tp, dir = %dir.display(), "created log");
        Ok(log)
    }

    /// What new logs may still open, measured now (see `NewLogBudget`): callers creating
    /// many logs at once take each topic's share from it before opening anything.
    pub fn new_log_budget(&self) -> NewLogBudget {
        NewLogBudget::measure()
    }

    fn next_log_dir(
        &self,
        logs: &BTreeMap<TopicPartition, SharedLog>,
    ) -> Result<PathBuf, StorageError> {
        let mut counts: Vec<(usize, usize)> = (0..self.log_dirs.len())
            .filter(|i| !self.failure_channel.is_offline(&self.log_dirs[*i].path))
            .map(|i| (0, i))
            .collect();
        // One online dir takes every log: counting them (a lock each) would make creating n
        // partitions cost n^2.
        if let [(_, only)] = counts[..] {
            return Ok(self.log_dirs[only].path.clone());
        }
        let futures = self.all_future_logs();
        for log in logs.values().chain(futures.iter().map(|(_, log)| log)) {
            let log = lock(log);
            if let Some(i) = self
                .log_dirs
                .iter()
                .position(|d| Some(d.path.as_path()) == log.dir().parent())
                && let Some(count) = counts.iter_mut().find(|(_, j)| *j == i)
            {
                count.0 += 1;
            }
        }
        counts.sort();
        counts
            .first()
            .map(|(_, i)| self.log_dirs[*i].path.clone())
            .ok_or(StorageError::NoLogDirs)
    }

    /// Removes `tp`'s log: its directory is renamed `<tp>.<uuid>-delete` at once (so a restart
    /// never loads it) and removed from disk `file.delete.delay.ms` later ([`Self::delete_logs`]).
    pub fn delete_log(&self, tp: &TopicPartition) -> Result<bool, StorageError> {
        self.remove_future_log(tp)?;
        let Some(log) = lock(&self.logs).remove(tp) else {
            return Ok(false);
        };
        let dir = lock(&log).dir().to_path_buf();
        if let Some(cleaner) = &self.cleaner {
            // Kafka's `abortCleaning`: no cleaner thread works on the log once this returns.
            cleaner.manager().abort_cleaning(tp);
            if let Some(parent) = dir.parent() {
                cleaner.manager().update_checkpoints(parent, None, Some(tp));
            }
        }
        let doomed = dir.with_file_name(file_names::dir_name_with_suffix(
            tp,
            file_names::DELETE_DIR_SUFFIX,
        ));
        lock(&log).rename_dir(doomed.clone())?;
        self.logs_to_be_deleted.push(doomed, now_ms());
        Ok(true)
    }

    /// One pass of retention over the logs that are not compacted (the cleaner runs the
    /// compacted ones' retention, and with the cleaner disabled they have none, as in Kafka),
    /// and removal of every log's `.deleted` files whose delay has passed. Returns the number
    /// of segments deleted.
    pub fn cleanup_logs(&self, now_ms: i64) -> Result<usize, StorageError> {
        let all = self.all_logs();
        let deletable = match &self.cleaner {
            // Kept from the cleaner meanwhile, should a config change make one compacted.
            Some(cleaner) => cleaner
                .manager()
                .pause_cleaning_for_non_compacted_partitions(&all),
            None => all
                .iter()
                .filter(|(_, log)| !lock(log).config().cleanup_policy.compact)
                .cloned()
                .collect(),
        };
        let mut outcome = Ok(0);
        for (_, log) in &deletable {
            match lock(log).delete_old_segments(now_ms) {
                Ok(n) => outcome = outcome.map(|total| total + n),
                Err(err) => {
                    outcome = Err(err);
                    break;
                }
            }
        }
        if let Some(cleaner) = &self.cleaner {
            let tps: Vec<TopicPartition> = deletable.into_iter().map(|(tp, _)| tp).collect();
            cleaner.manager().resume_cleaning(&tps);
        }
        for (_, log) in &all {
            lock(log).delete_due_files(now_ms)?;
        }
        outcome
    }

    /// Truncates `tp`'s log to `offset` (a follower matching its leader) with its cleaning
    /// aborted meanwhile, and its cleaner checkpoint brought down to the new end (Kafka's
    /// `LogManager.truncateTo`).
    pub fn truncate_to(
        &self,
        tp: &TopicPartition,
        offset: i64,
        now_ms: i64,
    ) -> Result<bool, StorageError> {
        self.with_cleaning_paused(
            tp,
            |log| log.truncate_to(offset, now_ms),
            |cleaner, parent, end| cleaner.manager().maybe_truncate_checkpoint(parent, tp, end),
        )
        .map(|outcome| outcome.unwrap_or(false))
    }

    /// Empties `tp`'s log and starts it at `new_offset`, its cleaning aborted meanwhile and its
    /// cleaner checkpoint reset (Kafka's `truncateFullyAndStartAt`).
    pub fn truncate_fully_and_start_at(
        &self,
        tp: &TopicPartition,
        new_offset: i64,
        now_ms: i64,
    ) -> Result<bool, StorageError> {
        self.with_cleaning_paused(
            tp,
            |log| log.truncate_fully_and_start_at(new_offset, now_ms),
            |cleaner, parent, _| cleaner.manager().update_checkpoints(parent, None, Some(tp)),
        )
        .map(|outcome| outcome.is_some())
    }

    /// Runs `change` on `tp`'s log (`None` when there is none) with its cleaning aborted and
    /// paused around it; then, whatever the outcome, `fix_checkpoint` gets the log dir and the
    /// new log end, and cleaning resumes. The log's lock is released before the cleaner's
    /// state is taken again (the lock order is the cleaner's state, then a log).
    fn with_cleaning_paused<T>(
        &self,
        tp: &TopicPartition,
        change: impl FnOnce(&mut UnifiedLog) -> Result<T, StorageError>,
        fix_checkpoint: impl FnOnce(&LogCleaner, &Path, i64),
    ) -> Result<Option<T>, StorageError> {
        let Some(log) = self.get_log(tp) else {
            return Ok(None);
        };
        if let Some(cleaner) = &self.cleaner {
            cleaner.manager().abort_and_pause_cleaning(tp);
        }
        let (outcome, dir, end) = {
            let mut log = lock(&log);
            let outcome = change(&mut log);
            (outcome, log.dir().to_path_buf(), log.log_end_offset())
        };
        if let Some(cleaner) = &self.cleaner {
            if let Some(parent) = dir.parent() {
                fix_checkpoint(cleaner, parent, end);
            }
            cleaner.manager().resume_cleaning(std::slice::from_ref(tp));
        }
        outcome.map(Some)
    }

    /// fsyncs the segments that rolled since the last pass, without holding any log's lock
    /// during the fsync, and moves those logs' recovery points up.
    pub fn flush_rolled_segments(&self) -> Result<(), StorageError> {
        for (_, log) in self.all_logs_and_futures() {
            let Some(pending) = lock(&log).pending_flush() else {
                continue;
            };
            pending.execute()?;
            lock(&log).complete_flush(&pending, now_ms());
        }
        Ok(())
    }

    /// Kafka's `flushDirtyLogs` (the `kafka-log-flusher` task): fsyncs every log whose
    /// `flush.ms` has passed since its last flush up to its end, without holding its lock
    /// during the fsync. Returns how many logs were flushed.
    pub fn flush_dirty_logs(&self, now_ms: i64) -> Result<usize, StorageError> {
        let mut flushed = 0;
        for (_, log) in self.all_logs_and_futures() {
            let Some(due) = lock(&log).time_flush(now_ms) else {
                continue;
            };
            due.execute()?;
            lock(&log).complete_flush(&due, now_ms);
            flushed += 1;
        }
        Ok(flushed)
    }

    /// Every log with the log dir holding it.
    fn logs_with_dirs(&self) -> Vec<(TopicPartition, SharedLog, PathBuf)> {
        self.all_logs()
            .into_iter()
            .map(|(tp, log)| {
                let dir = lock(&log)
                    .dir()
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                (tp, log, dir)
            })
            .collect()
    }

    /// Writes `recovery-point-offset-checkpoint` and `log-start-offset-checkpoint` in every log
    /// dir. The log start is recorded only when it is above the first segment's base, as Kafka
    /// does.
    pub fn checkpoint_log_recovery_offsets_and_start(&self) -> Result<(), StorageError> {
        for dir in self.live_dirs() {
            let mut recovery_points = BTreeMap::new();
            let mut log_starts = BTreeMap::new();
            for (tp, log) in self.all_logs_and_futures() {
                let log = lock(&log);
                if log.dir().parent() != Some(dir.path.as_path()) {
                    continue;
                }
                recovery_points.insert(tp.clone(), log.recovery_point());
                if log
                    .segment_base_offsets()
                    .first()
                    .is_some_and(|base| log.log_start_offset() > *base)
                {
                    log_starts.insert(tp, log.log_start_offset());
                }
            }
            OffsetCheckpointFile::new(dir.path.join(RECOVERY_POINT_CHECKPOINT_FILE))
                .write(&recovery_points)?;
            OffsetCheckpointFile::new(dir.path.join(LOG_START_OFFSET_CHECKPOINT_FILE))
                .write(&log_starts)?;
        }
        // Kafka's `deleteSnapshotsAfterRecoveryPointCheckpoint`: producer snapshots below the
        // checkpointed recovery point (and before the last two segments) are no longer needed.
        for (_, log) in self.all_logs_and_futures() {
            lock(&log).delete_snapshots_after_recovery_point_checkpoint()?;
        }
        Ok(())
    }

    /// A dynamic `producer.id.expiration.ms`: every log takes it (and forgets the producers it
    /// already expires), as do logs created later.
    pub fn set_producer_id_expiration_ms(&self, ms: i64, now_ms: i64) {
        self.producer_id_expiration_ms.store(ms, Ordering::Relaxed);
        for (_, log) in self.all_logs() {
            lock(&log).set_producer_id_expiration_ms(ms, now_ms);
        }
    }

    /// One `producer.id.expiration.check.interval.ms` pass: every log forgets its producers
    /// idle for `producer.id.expiration.ms`. Returns how many went.
    pub fn remove_expired_producers(&self, now_ms: i64) -> usize {
        self.all_logs()
            .into_iter()
            .map(|(_, log)| lock(&log).remove_expired_producers(now_ms))
            .sum()
    }

    /// Writes `replication-offset-checkpoint` (the high watermarks) in every log dir.
    pub fn checkpoint_high_watermarks(&self) -> Result<(), StorageError> {
        for dir in self.live_dirs() {
            let mut high_watermarks = BTreeMap::new();
            for (tp, log) in self.all_logs_and_futures() {
                let log = lock(&log);
                if log.dir().parent() == Some(dir.path.as_path()) {
                    high_watermarks.insert(tp, log.high_watermark());
                }
            }
            OffsetCheckpointFile::new(dir.path.join(REPLICATION_OFFSET_CHECKPOINT_FILE))
                .write(&high_watermarks)?;
        }
        Ok(())
    }

    /// Closes every log, writes the checkpoints and, last, the clean-shutdown marker with the
    /// broker's epoch (-1 when it has none), so a crash during shutdown still reads as unclean.
    pub fn shutdown(&self, broker_epoch: i64, now_ms: i64) -> Result<(), StorageError> {
        self.checkpoint_high_watermarks()?;
        let mut logs: Vec<_> = std::mem::take(&mut *lock(&self.logs)).into_iter().collect();
        logs.extend(std::mem::take(&mut *lock(&self.future_logs)));
        let mut recovery_points: BTreeMap<PathBuf, BTreeMap<TopicPartition, i64>> = BTreeMap::new();
        let mut log_starts: BTreeMap<PathBuf, BTreeMap<TopicPartition, i64>> = BTreeMap::new();
        for (tp, shared) in logs {
            // Other holders of the log (request handlers finishing) see it closed from now on.
            let mut log = lock(&shared);
            let parent = log
                .dir()
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            if self.failure_channel.is_offline(&parent) {
                continue;
            }
            let end = log.log_end_offset();
            recovery_points
                .entry(parent.clone())
                .or_default()
                .insert(tp.clone(), end);
            if log
                .segment_base_offsets()
                .first()
                .is_some_and(|base| log.log_start_offset() > *base)
            {
                log_starts
                    .entry(parent)
                    .or_default()
                    .insert(tp, log.log_start_offset());
            }
            log.close(now_ms)?;
        }
        for dir in self.live_dirs() {
            let empty = BTreeMap::new();
            OffsetCheckpointFile::new(dir.path.join(RECOVERY_POINT_CHECKPOINT_FILE))
                .write(recovery_points.get(&dir.path).unwrap_or(&empty))?;
            OffsetCheckpointFile::new(dir.path.join(LOG_START_OFFSET_CHECKPOINT_FILE))
                .write(log_starts.get(&dir.path).unwrap_or(&empty))?;
            CleanShutdownFile::new(&dir.path).write(broker_epoch)?;
        }
        Ok(())
    }

    /// Runs retention every `log.retention.check.interval.ms`, flushes logs by `flush.ms` every
    /// `log.flush.scheduler.interval.ms`, writes checkpoints on their intervals and runs the log
    /// cleaner's threads until `shutdown` is cancelled. Errors are logged; the tasks keep going.
    pub fn spawn_background_tasks(
        self: &Arc<Self>,
        tracker: &TaskTracker,
        shutdown: CancellationToken,
    ) {
        let every = |ms: u64| Duration::from_millis(ms.max(1)).min(LONGEST_PERIOD);
        // (name, first run after, period, job); the first run is one period in unless Kafka
        // schedules the task with its own initial delay.
        let jobs: [(&'static str, Option<Duration>, Duration, StorageJob); 7] = [
            ("kafka-delete-logs", None, Duration::from_secs(1), |m| {
                m.delete_logs(now_ms()).map(|_| ())
            }),
            (
                "flush-log",
                None,
                Duration::from_millis(ROLL_FLUSH_INTERVAL_MS),
                LogManager::flush_rolled_segments,
            ),
            (
                "kafka-log-flusher",
                Some(INITIAL_TASK_DELAY),
                every(self.config.log_flush_scheduler_interval_ms),
                |m| m.flush_dirty_logs(now_ms()).map(|_| ()),
            ),
            (
                "kafka-log-retention",
                None,
                every(self.config.retention_check_interval_ms),
                |m| m.cleanup_logs(now_ms()).map(|_| ()),
            ),
            (
                "kafka-recovery-point-checkpoint",
                None,
                every(self.config.recovery_point_checkpoint_interval_ms),
                LogManager::checkpoint_log_recovery_offsets_and_start,
            ),
            (
                "highwatermark-checkpoint",
                None,
                every(self.config.high_watermark_checkpoint_interval_ms),
                LogManager::checkpoint_high_watermarks,
            ),
            (
                "PeriodicProducerExpirationCheck",
                None,
                every(self.config.producer_id_expiration_check_interval_ms),
                |m| {
                    m.remove_expired_producers(now_ms());
                    Ok(())
                },
            ),
        ];
        if let Some(cleaner) = &self.cleaner {
            let manager = Arc::downgrade(self);
            let logs: LogSource = Arc::new(move || {
                manager
                    .upgrade()
                    .map_or_else(Vec::new, |m| m.logs_with_dirs())
            });
            cleaner.spawn_threads(tracker, shutdown.clone(), logs);
        }
        for (name, first, period, job) in jobs {
            let manager = Arc::clone(self);
            let shutdown = shutdown.clone();
            tracker.spawn(async move {
                let start = tokio::time::Instant::now() + first.unwrap_or(period);
                let mut ticker = tokio::time::interval_at(start, period);
                ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = ticker.tick() => {}
                    }
                    let job_manager = Arc::clone(&manager);
                    let outcome = tokio::task::spawn_blocking(move || job(&job_manager)).await;
                    match outcome {
                        Ok(Ok(())) => {}
                        Ok(Err(err)) => {
                            tracing::error!(task = name, %err, "storage task failed");
                            manager.maybe_report_log_dir_failure(&err);
                        }
                        Err(err) => tracing::error!(task = name, %err, "storage task panicked"),
                    }
                }
            });
        }
    }
}

/// Runs `create`, which makes the new log dir `dir` and opens its files; when it fails and the
/// dir did not exist before, the half-made dir is removed, so a retry (once descriptors are
/// free, say) starts clean and a restart finds no stray partition. Removal is best effort: a
/// dir that cannot be removed is logged and left.
fn create_log_dir<T>(
    dir: &Path,
    create: impl FnOnce() -> Result<T, StorageError>,
) -> Result<T, StorageError> {
    let existed = dir.exists();
    let created = create();
    // The failed log's files are closed by now (dropped inside `create`).
    if created.is_err()
        && !existed
        && let Err(err) = std::fs::remove_dir_all(dir)
        && err.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), %err, "cannot remove a half-created log dir");
    }
    created
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emfile(path: &Path) -> StorageError {
        let source = std::io::Error::from_raw_os_error(nix::errno::Errno::EMFILE as i32);
        StorageError::io(path, source)
    }

    #[test]
    fn a_half_created_log_dir_is_removed_when_its_files_cannot_be_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        let err = create_log_dir::<()>(&dir, || {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("00000000000000000000.log"), b"").unwrap();
            Err(emfile(&dir.join("00000000000000000000.index")))
        })
        .unwrap_err();
        assert!(err.is_resource_exhaustion(), "{err:?}");
        assert!(!dir.exists());
    }

    #[test]
    fn a_log_dir_that_existed_before_is_left_when_opening_it_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("00000000000000000000.log"), b"kept").unwrap();
        assert!(create_log_dir::<()>(&dir, || Err(emfile(&dir))).is_err());
        assert_eq!(
            std::fs::read(dir.join("00000000000000000000.log")).unwrap(),
            b"kept"
        );
    }
}
