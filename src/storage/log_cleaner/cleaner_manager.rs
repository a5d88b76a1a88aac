//! Which log to clean next and the cleaning state of each partition (Kafka's
//! `LogCleanerManager`).
//!
//! A partition is in at most one state (Kafka's `LogCleaningState`): `InProgress` while a
//! cleaner thread cleans it or runs its retention, `Aborted` once someone asked that cleaning
//! stop, `Paused(n)` while n callers (deletion, truncation, the retention thread for
//! non-compacted logs) keep cleaning away. The cleaner checks for `Aborted` between batches and
//! stops, deleting its unfinished `.cleaned` files; `abort_and_pause_cleaning` waits until it
//! has. So retention, truncation and deletion never run on a log while a swap is prepared.
//!
//! Progress is the first dirty offset per partition, kept in each log dir's
//! `cleaner-offset-checkpoint` (Kafka's offset checkpoint format), read at startup and written
//! after each cleaning.
//!
//! Lock order: the log manager's map of logs, then this manager's state, then a log's lock.
//! Nothing here waits on a log's lock while holding the state for longer than a snapshot.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;
use crate::storage::StorageError;
use crate::storage::file_names::CLEANER_OFFSET_CHECKPOINT_FILE;
use crate::storage::log_manager::SharedLog;
use crate::storage::offset_checkpoint::OffsetCheckpointFile;
use crate::storage::replace_segments::LogSnapshot;

/// Kafka's `LogCleaningState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogCleaningState {
    InProgress,
    Aborted,
    Paused(u32),
}

/// A log chosen for cleaning (Kafka's `LogToClean`): what is clean, what is cleanable.
#[derive(Debug, Clone)]
pub struct LogToClean {
    pub topic_partition: TopicPartition,
    pub log: SharedLog,
    /// The log dir holding the partition.
    pub log_dir: PathBuf,
    pub first_dirty_offset: i64,
    /// The base of the first segment that may not be cleaned (a segment boundary).
    pub first_uncleanable_offset: i64,
    pub clean_bytes: u64,
    pub cleanable_bytes: u64,
    /// `max.compaction.lag.ms` has passed for the first dirty segment.
    pub need_compaction_now: bool,
}

impl LogToClean {
    pub fn total_bytes(&self) -> u64 {
        self.clean_bytes + self.cleanable_bytes
    }

    pub fn cleanable_ratio(&self) -> f64 {
        match self.total_bytes() {
            0 => 0.0,
            total => self.cleanable_bytes as f64 / total as f64,
        }
    }
}

/// Kafka's `OffsetsToClean`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetsToClean {
    pub first_dirty_offset: i64,
    pub first_uncleanable_dirty_offset: i64,
    pub force_update_checkpoint: bool,
}

#[derive(Debug, Default)]
struct State {
    in_progress: HashMap<TopicPartition, LogCleaningState>,
    uncleanable: HashMap<PathBuf, HashSet<TopicPartition>>,
    checkpoints: HashMap<PathBuf, BTreeMap<TopicPartition, i64>>,
    /// How many logs [`LogCleanerManager::abort_cleaning`] has seen removed.
    removals: u64,
    /// Each removed partition's number in `removals`: a cleaner thread that listed the logs
    /// before it was removed must not take it up (Kafka's threads read the live log map under
    /// the manager's lock; kcli's list them first).
    removed_at: HashMap<TopicPartition, u64>,
}

impl State {
    /// Whether `tp` was removed after a listing taken at removal count `listed_at`.
    fn removed_since(&self, tp: &TopicPartition, listed_at: u64) -> bool {
        self.removed_at.get(tp).is_some_and(|at| *at > listed_at)
    }
}

/// The cleaning state of every partition; shared by the cleaner threads and the log manager.
#[derive(Debug)]
pub struct LogCleanerManager {
    state: Mutex<State>,
    paused: Condvar,
}

impl LogCleanerManager {
    /// Reads every log dir's `cleaner-offset-checkpoint`.
    pub fn new(log_dirs: &[PathBuf]) -> Result<Self, StorageError> {
        let mut state = State::default();
        for dir in log_dirs {
            let offsets = checkpoint_file(dir).read()?;
            state.checkpoints.insert(dir.clone(), offsets);
        }
        Ok(LogCleanerManager {
            state: Mutex::new(state),
            paused: Condvar::new(),
        })
    }

    /// The first dirty offset of every partition with one (Kafka's `allCleanerCheckpoints`).
    pub fn all_cleaner_checkpoints(&self) -> BTreeMap<TopicPartition, i64> {
        let state = lock(&self.state);
        state
            .checkpoints
            .values()
            .flatten()
            .map(|(tp, o)| (tp.clone(), *o))
            .collect()
    }

    pub fn cleaning_state(&self, tp: &TopicPartition) -> Option<LogCleaningState> {
        lock(&self.state).in_progress.get(tp).copied()
    }

    /// The compacted log with the highest dirty ratio above its `min.cleanable.dirty.ratio` (or
    /// with a segment past `max.compaction.lag.ms`), marked in progress. `logs` are
    /// `(partition, log, log dir)`. A log whose figures cannot be computed is marked
    /// uncleanable.
    pub fn grab_filthiest_compacted_log(
        &self,
        logs: &[(TopicPartition, SharedLog, PathBuf)],
        listed_at: u64,
        now_ms: i64,
    ) -> Option<LogToClean> {
        let candidates: Vec<_> = {
            let state = lock(&self.state);
            logs.iter()
                .filter(|(tp, _, dir)| {
                    !state.in_progress.contains_key(tp)
                        && !state.uncleanable.get(dir).is_some_and(|s| s.contains(tp))
                })
                .cloned()
                .collect()
        };
        let checkpoints = self.all_cleaner_checkpoints();
        let mut dirty = Vec::new();
        for (tp, log, dir) in candidates {
            let snapshot = {
                let mut log = lock(&log);
                if !log.config().cleanup_policy.compact {
                    continue;
                }
                log.cleaner_snapshot()
            };
            let snapshot = match snapshot {
                Ok(s) => s,
                Err(err) => {
                    tracing::warn!(topic_partition = %tp, %err, "cannot compute cleaning figures, marking uncleanable");
                    self.mark_partition_uncleanable(&dir, &tp);
                    continue;
                }
            };
            let offsets = cleanable_offsets(&snapshot, checkpoints.get(&tp).copied(), now_ms);
            if offsets.force_update_checkpoint {
                self.update_checkpoints(&dir, Some((tp.clone(), offsets.first_dirty_offset)), None);
            }
            let delay = max_compaction_delay(&snapshot, offsets.first_dirty_offset, now_ms);
            let ltc = log_to_clean(tp, log, dir, &snapshot, offsets, delay > 0);
            if ltc.total_bytes() > 0 {
                dirty.push((ltc, snapshot.config.min_cleanable_dirty_ratio));
            }
        }
        let mut state = lock(&self.state);
        let filthiest = dirty
            .into_iter()
            .filter(|(ltc, min_ratio)| {
                (ltc.need_compaction_now && ltc.cleanable_bytes > 0)
                    || ltc.cleanable_ratio() > *min_ratio
            })
            .filter(|(ltc, _)| {
                !state.in_progress.contains_key(&ltc.topic_partition)
                    && !state.removed_since(&ltc.topic_partition, listed_at)
            })
            .map(|(ltc, _)| ltc)
            .max_by(|a, b| a.cleanable_ratio().total_cmp(&b.cleanable_ratio()))?;
        state.in_progress.insert(
            filthiest.topic_partition.clone(),
            LogCleaningState::InProgress,
        );
        Some(filthiest)
    }

    /// The compacted logs whose retention the cleaner thread runs (Kafka's `deletableLogs`),
    /// marked in progress until [`done_deleting`](Self::done_deleting).
    pub fn deletable_logs(
        &self,
        logs: &[(TopicPartition, SharedLog, PathBuf)],
        listed_at: u64,
    ) -> Vec<(TopicPartition, SharedLog)> {
        let mut state = lock(&self.state);
        let mut out = Vec::new();
        for (tp, log, dir) in logs {
            if state.in_progress.contains_key(tp)
                || state.removed_since(tp, listed_at)
                || state.uncleanable.get(dir).is_some_and(|s| s.contains(tp))
                || !lock(log).config().cleanup_policy.compact
            {
                continue;
            }
            state
                .in_progress
                .insert(tp.clone(), LogCleaningState::InProgress);
            out.push((tp.clone(), log.clone()));
        }
        out
    }

    /// Pauses cleaning of the non-compacted logs, whose retention the retention thread is
    /// about to run (Kafka's `pauseCleaningForNonCompactedPartitions`); resume them after.
    pub fn pause_cleaning_for_non_compacted_partitions(
        &self,
        logs: &[(TopicPartition, SharedLog)],
    ) -> Vec<(TopicPartition, SharedLog)> {
        let mut state = lock(&self.state);
        let mut out = Vec::new();
        for (tp, log) in logs {
            if state.in_progress.contains_key(tp) || lock(log).config().cleanup_policy.compact {
                continue;
            }
            state
                .in_progress
                .insert(tp.clone(), LogCleaningState::Paused(1));
            out.push((tp.clone(), log.clone()));
        }
        out
    }

    /// Stops any cleaning of `tp` and keeps it from starting until resumed; returns once no
    /// cleaner works on it (Kafka's `abortAndPauseCleaning`).
    pub fn abort_and_pause_cleaning(&self, tp: &TopicPartition) {
        let mut state = lock(&self.state);
        let next = match state.in_progress.get(tp) {
            None => LogCleaningState::Paused(1),
            Some(LogCleaningState::InProgress) => LogCleaningState::Aborted,
            Some(LogCleaningState::Paused(n)) => LogCleaningState::Paused(n + 1),
            // Someone else aborted it already: wait for the pause like they do.
            Some(LogCleaningState::Aborted) => LogCleaningState::Aborted,
        };
        state.in_progress.insert(tp.clone(), next);
        while !matches!(state.in_progress.get(tp), Some(LogCleaningState::Paused(_))) {
            state = match self.paused.wait_timeout(state, Duration::from_millis(100)) {
                Ok((s, _)) => s,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Kafka's `abortCleaning`: abort, then resume at once (the partition is going away; the
    /// caller removed it from the log manager first). A listing taken before is not used to
    /// clean it again.
    pub fn abort_cleaning(&self, tp: &TopicPartition) {
        self.abort_and_pause_cleaning(tp);
        let mut state = lock(&self.state);
        state.removals += 1;
        let at = state.removals;
        state.removed_at.insert(tp.clone(), at);
        drop(state);
        self.resume_cleaning(std::slice::from_ref(tp));
    }

    /// The removal count to take before listing the logs for
    /// [`grab_filthiest_compacted_log`](Self::grab_filthiest_compacted_log) and
    /// [`deletable_logs`](Self::deletable_logs).
    pub fn removals(&self) -> u64 {
        lock(&self.state).removals
    }

    /// Undoes one pause of each partition.
    pub fn resume_cleaning(&self, tps: &[TopicPartition]) {
        let mut state = lock(&self.state);
        for tp in tps {
            match state.in_progress.get(tp).copied() {
                Some(LogCleaningState::Paused(1)) => {
                    state.in_progress.remove(tp);
                }
                Some(LogCleaningState::Paused(n)) => {
                    state
                        .in_progress
                        .insert(tp.clone(), LogCleaningState::Paused(n - 1));
                }
                other => {
                    tracing::warn!(topic_partition = %tp, state = ?other, "compaction cannot be resumed: it is not paused");
                }
            }
        }
    }

    /// `CleaningAborted` when someone asked that cleaning of `tp` stop.
    pub fn check_cleaning_aborted(&self, tp: &TopicPartition) -> Result<(), StorageError> {
        if lock(&self.state).in_progress.get(tp) == Some(&LogCleaningState::Aborted) {
            return Err(StorageError::CleaningAborted {
                topic_partition: tp.clone(),
            });
        }
        Ok(())
    }

    /// A cleaning ended: a completed one records `end_offset` as the first dirty offset; an
    /// aborted one becomes paused and wakes whoever waits for it.
    pub fn done_cleaning(&self, tp: &TopicPartition, log_dir: &Path, end_offset: i64) {
        // One critical section: an abort arriving in between would otherwise be lost.
        let mut state = lock(&self.state);
        match state.in_progress.get(tp).copied() {
            Some(LogCleaningState::InProgress) => {
                write_checkpoint(&mut state, log_dir, Some((tp.clone(), end_offset)), None);
                state.in_progress.remove(tp);
            }
            Some(LogCleaningState::Aborted) => self.pause_aborted(&mut state, tp),
            other => {
                tracing::warn!(topic_partition = %tp, state = ?other, "cleaning ended in an unexpected state");
            }
        }
    }

    /// An aborted pass has stopped: the partition is paused once, and whoever waits in
    /// `abort_and_pause_cleaning` is woken.
    fn pause_aborted(&self, state: &mut State, tp: &TopicPartition) {
        state
            .in_progress
            .insert(tp.clone(), LogCleaningState::Paused(1));
        self.paused.notify_all();
    }

    /// The cleaner thread's retention pass over `tps` ended.
    pub fn done_deleting(&self, tps: &[TopicPartition]) {
        let mut state = lock(&self.state);
        for tp in tps {
            match state.in_progress.get(tp).copied() {
                Some(LogCleaningState::InProgress) => {
                    state.in_progress.remove(tp);
                }
                Some(LogCleaningState::Aborted) => self.pause_aborted(&mut state, tp),
                other => {
                    tracing::warn!(topic_partition = %tp, state = ?other, "retention ended in an unexpected state");
                }
            }
        }
    }

    /// Rewrites `log_dir`'s checkpoint with `update` set and `remove` gone. A write failure is
    /// logged: the next cleaning starts from the older offset, which is safe.
    pub fn update_checkpoints(
        &self,
        log_dir: &Path,
        update: Option<(TopicPartition, i64)>,
        remove: Option<&TopicPartition>,
    ) {
        write_checkpoint(&mut lock(&self.state), log_dir, update, remove);
    }

    /// After a truncation to `offset`: a first dirty offset above it comes down to it (Kafka's
    /// `maybeTruncateCheckpoint`).
    pub fn maybe_truncate_checkpoint(&self, log_dir: &Path, tp: &TopicPartition, offset: i64) {
        let above = lock(&self.state)
            .checkpoints
            .get(log_dir)
            .and_then(|c| c.get(tp))
            .is_some_and(|o| *o > offset);
        if above {
            self.update_checkpoints(log_dir, Some((tp.clone(), offset)), None);
        }
    }

    pub fn mark_partition_uncleanable(&self, log_dir: &Path, tp: &TopicPartition) {
        lock(&self.state)
            .uncleanable
            .entry(log_dir.to_path_buf())
            .or_default()
            .insert(tp.clone());
    }

    /// Forgets uncleanable partitions that no longer exist.
    pub fn maintain_uncleanable_partitions(&self, live: &HashSet<TopicPartition>) {
        let mut state = lock(&self.state);
        for partitions in state.uncleanable.values_mut() {
            partitions.retain(|tp| live.contains(tp));
        }
        state
            .uncleanable
            .retain(|_, partitions| !partitions.is_empty());
    }
}

/// [`LogCleanerManager::update_checkpoints`] under the state's lock.
fn write_checkpoint(
    state: &mut State,
    log_dir: &Path,
    update: Option<(TopicPartition, i64)>,
    remove: Option<&TopicPartition>,
) {
    let offsets = state.checkpoints.entry(log_dir.to_path_buf()).or_default();
    if let Some(tp) = remove {
        offsets.remove(tp);
    }
    if let Some((tp, offset)) = update {
        offsets.insert(tp, offset);
    }
    if let Err(err) = checkpoint_file(log_dir).write(offsets) {
        tracing::error!(%err, "failed to write the cleaner offset checkpoint");
    }
}

fn checkpoint_file(log_dir: &Path) -> OffsetCheckpointFile {
    OffsetCheckpointFile::new(log_dir.join(CLEANER_OFFSET_CHECKPOINT_FILE))
}

/// Kafka's `cleanableOffsets`: where the dirty part starts (the checkpoint, reset to the log
/// start when it is below it or past the log end) and the first offset that may not be cleaned:
/// the lowest of the high watermark (kcli has no transactions, so it is the last stable
/// offset), the active segment's base and the first dirty segment whose newest record is
/// younger than `min.compaction.lag.ms`.
pub fn cleanable_offsets(
    log: &LogSnapshot,
    last_clean_offset: Option<i64>,
    now_ms: i64,
) -> OffsetsToClean {
    let checkpoint = last_clean_offset.unwrap_or(log.log_start_offset);
    let (first_dirty_offset, force_update_checkpoint) = if checkpoint < log.log_start_offset
        || checkpoint > log.log_end_offset
    {
        if checkpoint > log.log_end_offset {
            tracing::warn!(topic_partition = %log.topic_partition, checkpoint, log_end_offset = log.log_end_offset, "cleaner checkpoint past the log end, resetting to the log start");
        }
        (log.log_start_offset, true)
    } else {
        (checkpoint, false)
    };
    let min_lag = log.config.min_compaction_lag_ms.max(0);
    let mut first_uncleanable = log.last_stable_offset.min(log.active_base_offset());
    if min_lag > 0
        && let Some(young) = log
            .non_active_segments_from(first_dirty_offset)
            .iter()
            .find(|s| s.largest_timestamp > now_ms.saturating_sub(min_lag))
    {
        first_uncleanable = first_uncleanable.min(young.base_offset);
    }
    OffsetsToClean {
        first_dirty_offset,
        first_uncleanable_dirty_offset: first_uncleanable.max(first_dirty_offset),
        force_update_checkpoint,
    }
}

/// Kafka's `maxCompactionDelay`: how long past `max.compaction.lag.ms` the oldest first batch of
/// a dirty sealed segment is (0 when none is).
pub fn max_compaction_delay(log: &LogSnapshot, first_dirty_offset: i64, now_ms: i64) -> i64 {
    let earliest = log
        .non_active_segments_from(first_dirty_offset)
        .iter()
        .map(|s| s.first_batch_timestamp)
        .filter(|t| *t > 0)
        .min()
        .unwrap_or(i64::MAX);
    let clean_until = now_ms.saturating_sub(log.config.max_compaction_lag_ms.max(0));
    if earliest < clean_until {
        clean_until - earliest
    } else {
        0
    }
}

/// Kafka's `LogToClean` with `calculateCleanableBytes`: the uncleanable offset moves down to
/// the base of the segment holding it.
fn log_to_clean(
    topic_partition: TopicPartition,
    log: SharedLog,
    log_dir: PathBuf,
    snapshot: &LogSnapshot,
    offsets: OffsetsToClean,
    need_compaction_now: bool,
) -> LogToClean {
    let first_dirty = offsets.first_dirty_offset;
    let first_uncleanable = snapshot
        .non_active_segments_from(offsets.first_uncleanable_dirty_offset)
        .first()
        .map_or(snapshot.active_base_offset(), |s| s.base_offset);
    let bytes = |from: i64, to: i64| -> u64 {
        snapshot
            .segments_in(from, to)
            .iter()
            .map(|s| s.size())
            .sum()
    };
    let clean_bytes: u64 = snapshot
        .segments
        .iter()
        .take_while(|s| s.base_offset < first_dirty)
        .map(|s| s.size())
        .sum();
    LogToClean {
        topic_partition,
        log,
        log_dir,
        first_dirty_offset: first_dirty,
        first_uncleanable_offset: first_uncleanable,
        clean_bytes,
        cleanable_bytes: bytes(first_dirty.min(first_uncleanable), first_uncleanable),
        need_compaction_now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn abort_waits_for_the_cleaner_to_stop_and_pauses_until_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().to_path_buf();
        let manager = Arc::new(LogCleanerManager::new(std::slice::from_ref(&log_dir)).unwrap());
        let tp = TopicPartition::new("t", 0);
        lock(&manager.state)
            .in_progress
            .insert(tp.clone(), LogCleaningState::InProgress);
        let (m, t) = (Arc::clone(&manager), tp.clone());
        let aborter = std::thread::spawn(move || m.abort_and_pause_cleaning(&t));
        // The cleaner notices the abort between batches, then reports it done.
        let start = std::time::Instant::now();
        while manager.check_cleaning_aborted(&tp).is_ok() {
            assert!(start.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!aborter.is_finished());
        manager.done_cleaning(&tp, &log_dir, 42);
        aborter.join().unwrap();
        assert_eq!(
            manager.cleaning_state(&tp),
            Some(LogCleaningState::Paused(1))
        );
        // An aborted cleaning records no progress.
        assert!(manager.all_cleaner_checkpoints().is_empty());
        manager.abort_and_pause_cleaning(&tp);
        assert_eq!(
            manager.cleaning_state(&tp),
            Some(LogCleaningState::Paused(2))
        );
        manager.resume_cleaning(&[tp.clone(), tp.clone()]);
        assert_eq!(manager.cleaning_state(&tp), None);
    }

    #[test]
    fn checkpoints_are_kafkas_file_and_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().to_path_buf();
        let manager = LogCleanerManager::new(std::slice::from_ref(&log_dir)).unwrap();
        let (a, b) = (TopicPartition::new("a", 0), TopicPartition::new("b", 3));
        manager.update_checkpoints(&log_dir, Some((a.clone(), 10)), None);
        manager.update_checkpoints(&log_dir, Some((b.clone(), 7)), None);
        manager.maybe_truncate_checkpoint(&log_dir, &a, 4);
        manager.maybe_truncate_checkpoint(&log_dir, &b, 9);
        assert_eq!(
            std::fs::read_to_string(log_dir.join(CLEANER_OFFSET_CHECKPOINT_FILE)).unwrap(),
            "0\n2\na 0 4\nb 3 7\n"
        );
        manager.update_checkpoints(&log_dir, None, Some(&a));
        let reread = LogCleanerManager::new(std::slice::from_ref(&log_dir)).unwrap();
        assert_eq!(reread.all_cleaner_checkpoints(), BTreeMap::from([(b, 7)]));
    }

    #[test]
    fn a_log_removed_after_the_listing_is_not_taken_up_from_it() {
        use crate::storage::log_config::{CleanupPolicy, LogConfig};
        use crate::storage::unified_log::UnifiedLog;
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().to_path_buf();
        let manager = LogCleanerManager::new(std::slice::from_ref(&log_dir)).unwrap();
        let tp = TopicPartition::new("t", 0);
        let config = LogConfig {
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: true,
            },
            ..LogConfig::default()
        };
        let log = UnifiedLog::open(log_dir.join("t-0"), tp.clone(), config, 0, 0, true, 0).unwrap();
        let logs = vec![(tp.clone(), Arc::new(Mutex::new(log)), log_dir.clone())];
        // A cleaner thread lists the logs; the partition is deleted before it picks one.
        let listed_at = manager.removals();
        manager.abort_cleaning(&tp);
        assert_eq!(manager.cleaning_state(&tp), None);
        assert!(manager.deletable_logs(&logs, listed_at).is_empty());
        assert!(
            manager
                .grab_filthiest_compacted_log(&logs, listed_at, 0)
                .is_none()
        );
        assert_eq!(
            manager.cleaning_state(&tp),
            None,
            "nothing marked in progress"
        );
        // A listing taken afterwards has it (a partition created again under the same name).
        assert_eq!(manager.deletable_logs(&logs, manager.removals()).len(), 1);
    }
}
