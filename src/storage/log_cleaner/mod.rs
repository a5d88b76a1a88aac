//! The log cleaner (Kafka's `LogCleaner`): background threads that compact the logs of topics
//! with `cleanup.policy=compact` (or `compact,delete`), keeping the latest record of every key.
//!
//! Each of `log.cleaner.threads` tasks loops: pick the filthiest compacted log
//! ([`cleaner_manager`]), clean it (`cleaner`), run retention for the compacted logs (which the
//! retention task leaves to the cleaner, as Kafka does), and sleep `log.cleaner.backoff.ms` when
//! there was nothing to clean. A pass runs on the blocking pool; it stops between batches when
//! the broker shuts down or the partition is deleted or truncated.
//!
//! - `offset_map`: key hash → latest offset, bounded by `log.cleaner.dedupe.buffer.size`.
//! - `cleaned_batch`: one batch filtered and rebuilt with Kafka's batch semantics.
//! - `cleaned_transactions`: aborted data and removable markers, from the `.txnindex` files.
//! - `cleaner`: building the map, grouping segments, writing cleaned segments, the swap.
//! - [`cleaner_manager`]: choosing the log, the cleaning states, `cleaner-offset-checkpoint`.
//! - `throttler`: the `log.cleaner.io.max.bytes.per.second` limit.

pub(crate) mod cleaned_batch;
pub(crate) mod cleaned_transactions;
pub(crate) mod cleaner;
pub mod cleaner_manager;
pub(crate) mod offset_map;
pub(crate) mod throttler;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;

use super::StorageError;
use super::log_manager::{SharedLog, now_ms};
use cleaner::Cleaner;
use cleaner_manager::{LogCleanerManager, LogToClean};
use throttler::Throttler;

/// The broker's `log.cleaner.*` settings (Kafka's `CleanerConfig`), with Kafka 3.9's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct CleanerConfig {
    /// `log.cleaner.enable`.
    pub enable_cleaner: bool,
    /// `log.cleaner.threads`.
    pub num_threads: usize,
    /// `log.cleaner.dedupe.buffer.size`: offset map memory, shared out among the threads.
    pub dedupe_buffer_size: i64,
    /// `log.cleaner.io.buffer.load.factor`: how full an offset map gets.
    pub dedupe_buffer_load_factor: f64,
    /// `log.cleaner.io.buffer.size`: I/O buffer memory, shared out among the threads.
    pub io_buffer_size: usize,
    /// `log.cleaner.io.max.bytes.per.second`.
    pub max_io_bytes_per_second: f64,
    /// `log.cleaner.backoff.ms`: the sleep when no log needs cleaning.
    pub backoff_ms: u64,
}

impl Default for CleanerConfig {
    fn default() -> Self {
        CleanerConfig {
            enable_cleaner: true,
            num_threads: 1,
            dedupe_buffer_size: 128 * 1024 * 1024,
            dedupe_buffer_load_factor: 0.9,
            io_buffer_size: 512 * 1024,
            max_io_bytes_per_second: f64::MAX,
            backoff_ms: 15_000,
        }
    }
}

impl CleanerConfig {
    /// Each thread's offset map memory: `dedupe_buffer_size / threads`, at most `i32::MAX` as
    /// in Kafka.
    pub fn offset_map_memory(&self) -> usize {
        let per_thread =
            self.dedupe_buffer_size / i64::try_from(self.num_threads.max(1)).unwrap_or(1);
        usize::try_from(per_thread.clamp(0, i64::from(i32::MAX))).unwrap_or(0)
    }

    /// Each thread's read buffer: `io_buffer_size / threads / 2` (Kafka splits it between the
    /// read and the write buffer).
    pub fn io_buffer_per_thread(&self) -> usize {
        self.io_buffer_size / self.num_threads.max(1) / 2
    }
}

/// The logs the cleaner may work on: `(partition, log, log dir)`.
pub type LogSource = Arc<dyn Fn() -> Vec<(TopicPartition, SharedLog, PathBuf)> + Send + Sync>;

/// The cleaner: its configuration, the cleaning states and the shared throttle.
#[derive(Debug)]
pub struct LogCleaner {
    config: CleanerConfig,
    manager: LogCleanerManager,
    throttler: Arc<Throttler>,
}

impl LogCleaner {
    /// Reads every log dir's `cleaner-offset-checkpoint`.
    pub fn new(config: CleanerConfig, log_dirs: &[PathBuf]) -> Result<Self, StorageError> {
        Ok(LogCleaner {
            throttler: Arc::new(Throttler::new(config.max_io_bytes_per_second)),
            manager: LogCleanerManager::new(log_dirs)?,
            config,
        })
    }

    pub fn config(&self) -> &CleanerConfig {
        &self.config
    }

    pub fn manager(&self) -> &LogCleanerManager {
        &self.manager
    }

    /// A cleaner thread's state (its offset map).
    pub fn new_cleaner(&self, id: usize) -> Cleaner {
        Cleaner::new(
            id,
            self.config.offset_map_memory(),
            self.config.dedupe_buffer_load_factor,
            self.config.io_buffer_per_thread(),
            Arc::clone(&self.throttler),
        )
    }

    /// Starts `log.cleaner.threads` tasks on `tracker`; they end when `shutdown` is cancelled.
    pub fn spawn_threads(
        self: &Arc<Self>,
        tracker: &TaskTracker,
        shutdown: CancellationToken,
        logs: LogSource,
    ) {
        for id in 0..self.config.num_threads {
            let cleaner_state = self.new_cleaner(id);
            let this = Arc::clone(self);
            let logs = Arc::clone(&logs);
            let shutdown = shutdown.clone();
            tracker.spawn(async move {
                let mut state = Some(cleaner_state);
                let backoff = Duration::from_millis(this.config.backoff_ms.max(1));
                while !shutdown.is_cancelled() {
                    let Some(mut cleaner) = state.take() else {
                        break;
                    };
                    let (this2, logs2, token) =
                        (Arc::clone(&this), Arc::clone(&logs), shutdown.clone());
                    let outcome = tokio::task::spawn_blocking(move || {
                        let cleaned = this2.do_work(&mut cleaner, &logs2, &token);
                        (cleaner, cleaned)
                    })
                    .await;
                    let cleaned = match outcome {
                        Ok((cleaner, cleaned)) => {
                            state = Some(cleaner);
                            cleaned
                        }
                        Err(err) => {
                            tracing::error!(thread = id, %err, "log cleaner pass panicked");
                            state = Some(this.new_cleaner(id));
                            false
                        }
                    };
                    if !cleaned {
                        tokio::select! {
                            _ = shutdown.cancelled() => break,
                            _ = tokio::time::sleep(backoff) => {}
                        }
                    }
                }
            });
        }
    }

    /// One pass of a cleaner thread (Kafka's `doWork` without the sleep): returns whether a log
    /// was cleaned.
    pub fn do_work(
        &self,
        cleaner: &mut Cleaner,
        logs: &LogSource,
        shutdown: &CancellationToken,
    ) -> bool {
        let listed_at = self.manager.removals();
        let logs = logs();
        let now = now_ms();
        let cleaned = match self
            .manager
            .grab_filthiest_compacted_log(&logs, listed_at, now)
        {
            Some(cleanable) => {
                self.clean_log(cleaner, &cleanable, now, shutdown);
                true
            }
            None => false,
        };
        let deletable = self.manager.deletable_logs(&logs, listed_at);
        for (tp, log) in &deletable {
            let (outcome, dir) = {
                let mut log = lock(log);
                let outcome = log
                    .delete_old_segments(now)
                    .and_then(|_| log.delete_due_files(now));
                (outcome, log.dir().to_path_buf())
            };
            // The log's lock is released first: the lock order is the cleaner's state, then a
            // log.
            if let Err(err) = outcome {
                tracing::warn!(topic_partition = %tp, %err, "retention of a compacted log failed, marking it uncleanable");
                if let Some(parent) = dir.parent() {
                    self.manager.mark_partition_uncleanable(parent, tp);
                }
            }
        }
        let done: Vec<TopicPartition> = deletable.into_iter().map(|(tp, _)| tp).collect();
        self.manager.done_deleting(&done);
        let live: HashSet<TopicPartition> = logs.into_iter().map(|(tp, _, _)| tp).collect();
        self.manager.maintain_uncleanable_partitions(&live);
        cleaned
    }

    /// Kafka's `cleanLog`: cleans, then records where the dirty part now starts (unchanged
    /// after an abort or a failure, which also marks the partition uncleanable).
    fn clean_log(
        &self,
        cleaner: &mut Cleaner,
        cleanable: &LogToClean,
        now: i64,
        shutdown: &CancellationToken,
    ) {
        let tp = &cleanable.topic_partition;
        let check_done = || -> Result<(), StorageError> {
            if shutdown.is_cancelled() {
                return Err(StorageError::CleaningAborted {
                    topic_partition: tp.clone(),
                });
            }
            self.manager.check_cleaning_aborted(tp)
        };
        let mut end_offset = cleanable.first_dirty_offset;
        match cleaner.clean(cleanable, now, &check_done) {
            Ok((next_dirty, stats)) => {
                end_offset = next_dirty;
                tracing::info!(
                    thread = cleaner.id,
                    topic_partition = %tp,
                    from = cleanable.first_dirty_offset,
                    to = next_dirty,
                    bytes_read = stats.bytes_read,
                    bytes_written = stats.bytes_written,
                    messages_read = stats.messages_read,
                    messages_written = stats.messages_written,
                    segments = stats.segments_swapped,
                    map_utilization = cleaner.offset_map().utilization(),
                    "cleaned log"
                );
            }
            Err(StorageError::CleaningAborted { .. }) => {
                tracing::info!(topic_partition = %tp, "cleaning aborted");
            }
            Err(err) => {
                tracing::warn!(topic_partition = %tp, %err, "cleaning failed, marking the partition uncleanable");
                self.manager
                    .mark_partition_uncleanable(&cleanable.log_dir, tp);
            }
        }
        self.manager
            .done_cleaning(tp, &cleanable.log_dir, end_offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafkas_and_memory_is_shared_out_among_threads() {
        let config = CleanerConfig::default();
        assert_eq!(config.offset_map_memory(), 128 * 1024 * 1024);
        assert_eq!(config.io_buffer_per_thread(), 256 * 1024);
        let four = CleanerConfig {
            num_threads: 4,
            dedupe_buffer_size: i64::MAX,
            ..CleanerConfig::default()
        };
        // At most Int.MaxValue bytes per thread, as Kafka's `SkimpyOffsetMap` takes an int.
        assert_eq!(four.offset_map_memory(), i32::MAX as usize);
        assert_eq!(four.io_buffer_per_thread(), 64 * 1024);
    }
}
