//! Moving a partition between this broker's log dirs (Kafka's `ReplicaManager
//! .alterReplicaLogDirs`, `ReplicaAlterLogDirsManager` and `ReplicaAlterLogDirsThread`).
//!
//! AlterReplicaLogDirs creates the partition's future log in the destination dir and starts a
//! mover task for it. The mover reads whole batches from the current log at the future log's
//! end (up to [`COPY_CHUNK_BYTES`] at a time, with the current log's lock held only for the
//! read) and appends them to the future log as a follower would, offsets, epochs and producer
//! state as they are; it follows the current log's log start and high watermark. When the
//! future log has caught up, the log manager swaps it in under the current log's lock
//! (`maybeReplaceCurrentWithFutureReplica`); while produce keeps it behind, the mover waits for
//! the next append. Produce and fetch are served by the current log throughout.
//!
//! Per partition, at most one mover runs; a move to yet another dir cancels it and drops the
//! future log first. Movers stop at shutdown (the future log stays and the move resumes at the
//! next start) and when either log's dir fails.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;
use crate::cluster::time::Time;
use crate::protocol::errors::ErrorCode;
use crate::storage::StorageError;
use crate::storage::file_names::{self, FUTURE_DIR_SUFFIX};
use crate::storage::log_manager::{LogManager, SharedLog};
use crate::storage::log_reads::FetchIsolation;

use super::partition::Partition;
use super::replica_manager::ReplicaManager;

/// The most bytes one copy step reads from the current log (Kafka's `replica.fetch.max.bytes`
/// default).
pub(crate) const COPY_CHUNK_BYTES: usize = 1 << 20;

/// How long a mover that caught up waits for an append before checking again.
const IDLE_WAIT: Duration = Duration::from_millis(500);

/// Kafka's limit on a file name, which the future dir's name must fit (KAFKA-4893).
const MAX_DIR_NAME_LEN: usize = 255;

/// The running movers, each under an id so a finished one removes only itself.
type Movers = Arc<Mutex<HashMap<TopicPartition, (u64, CancellationToken)>>>;

/// The running movers.
#[derive(Debug, Default)]
pub struct ReplicaAlterLogDirsManager {
    movers: Movers,
    next_id: AtomicU64,
    tracker: TaskTracker,
}

impl ReplicaAlterLogDirsManager {
    /// Stops `tp`'s mover, if any (it exits at its next step).
    pub fn remove_fetcher_for_partition(&self, tp: &TopicPartition) {
        if let Some((_, token)) = lock(&self.movers).remove(tp) {
            token.cancel();
        }
    }

    /// Stops every mover and waits for them.
    pub async fn shutdown(&self) {
        for (_, (_, token)) in lock(&self.movers).drain() {
            token.cancel();
        }
        self.tracker.close();
        self.tracker.wait().await;
    }

    fn add_fetcher_for_partition(
        &self,
        log_manager: &Arc<LogManager>,
        time: &Arc<dyn Time>,
        partition: Arc<Partition>,
    ) {
        let tp = partition.topic_partition().clone();
        let Some(future) = log_manager.get_future_log(&tp) else {
            return;
        };
        let token = CancellationToken::new();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Some((_, old)) = lock(&self.movers).insert(tp.clone(), (id, token.clone())) {
            old.cancel();
        }
        let log_manager = Arc::clone(log_manager);
        let time = Arc::clone(time);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!(topic_partition = %tp, "no runtime to move the partition on");
            return;
        };
        let movers = Arc::clone(&self.movers);
        self.tracker.spawn_on(
            async move {
                run_mover(log_manager, time, partition, future, token).await;
                let mut movers = lock(&movers);
                // A newer mover may have replaced this one meanwhile.
                if movers.get(&tp).is_some_and(|(other, _)| *other == id) {
                    movers.remove(&tp);
                }
            },
            &runtime,
        );
    }
}

/// What one copy step did.
enum Step {
    Copied,
    /// Caught up, but an append came in before the swap.
    Behind,
    Swapped,
    /// The future log was dropped meanwhile.
    Gone,
}

async fn run_mover(
    log_manager: Arc<LogManager>,
    time: Arc<dyn Time>,
    partition: Arc<Partition>,
    future: SharedLog,
    token: CancellationToken,
) {
    let tp = partition.topic_partition().clone();
    tracing::info!(topic_partition = %tp, "moving the replica to its future log dir");
    let wake = Arc::new(Notify::new());
    loop {
        if token.is_cancelled() || partition.is_offline() {
            break;
        }
        // Registered before the step, so an append during it is not missed.
        partition.register_waiter(&wake);
        let (lm, clock, p, f, t) = (
            Arc::clone(&log_manager),
            Arc::clone(&time),
            Arc::clone(&partition),
            Arc::clone(&future),
            token.clone(),
        );
        let outcome =
            tokio::task::spawn_blocking(move || copy_step(&lm, clock.milliseconds(), &p, &f, &t))
                .await;
        match outcome {
            Ok(Ok(Step::Copied)) => {}
            Ok(Ok(Step::Behind)) => {
                tokio::select! {
                    _ = token.cancelled() => {}
                    _ = wake.notified() => {}
                    _ = tokio::time::sleep(IDLE_WAIT) => {}
                }
            }
            Ok(Ok(Step::Swapped)) | Ok(Ok(Step::Gone)) => break,
            Ok(Err(err)) => {
                tracing::error!(topic_partition = %tp, %err, "moving the replica failed");
                log_manager.maybe_report_log_dir_failure(&err);
                break;
            }
            Err(err) => {
                tracing::error!(topic_partition = %tp, %err, "the replica mover panicked");
                break;
            }
        }
    }
}

/// One step: copy what the current log has beyond the future log's end, or swap them once
/// they end at the same offset.
fn copy_step(
    log_manager: &LogManager,
    now: i64,
    partition: &Partition,
    future: &SharedLog,
    token: &CancellationToken,
) -> Result<Step, StorageError> {
    let tp = partition.topic_partition();
    let still_ours = log_manager
        .get_future_log(tp)
        .is_some_and(|f| Arc::ptr_eq(&f, future));
    if !still_ours || token.is_cancelled() {
        return Ok(Step::Gone);
    }
    let future_end = lock(future).log_end_offset();
    let (slice, current_start, current_hw, current_end, current_dir) = {
        let current = lock(partition.log());
        let start = current.log_start_offset();
        let end = current.log_end_offset();
        let slice = if future_end >= start && future_end < end {
            Some(
                current
                    .read(future_end, COPY_CHUNK_BYTES, FetchIsolation::LogEnd, true)?
                    .records,
            )
        } else {
            None
        };
        (
            slice,
            start,
            current.high_watermark(),
            end,
            current.dir().to_path_buf(),
        )
    };
    if future_end < current_start {
        // The current log's start moved past what was copied (retention, DeleteRecords), as a
        // follower's fetch out of range: start over at the current log's start.
        lock(future).truncate_fully_and_start_at(current_start, now)?;
        return Ok(Step::Copied);
    }
    if future_end > current_end {
        lock(future).truncate_to(current_end, now)?;
        return Ok(Step::Copied);
    }
    let Some(slice) = slice else {
        return Ok(if log_manager.replace_current_with_future_log(tp, now)? {
            Step::Swapped
        } else {
            Step::Behind
        });
    };
    let bytes = slice
        .read_to_vec()
        .map_err(|e| StorageError::io(&current_dir, e))?;
    let mut future = lock(future);
    if token.is_cancelled() {
        return Ok(Step::Gone);
    }
    if bytes.is_empty() {
        return Ok(Step::Behind);
    }
    future.append_as_follower(&bytes, now)?;
    let hw = current_hw.min(future.log_end_offset());
    if hw > future.high_watermark() {
        future.update_high_watermark(hw)?;
    }
    if current_start > future.log_start_offset() && current_start <= future.high_watermark() {
        future.maybe_increment_log_start_offset(current_start)?;
    }
    Ok(Step::Copied)
}

impl ReplicaManager {
    /// Kafka's `alterReplicaLogDirs` for one partition: the error code its response carries.
    pub fn alter_replica_log_dir(&self, tp: &TopicPartition, destination: &str) -> ErrorCode {
        if file_names::dir_name_with_suffix(tp, FUTURE_DIR_SUFFIX).len() > MAX_DIR_NAME_LEN {
            return ErrorCode::InvalidTopicException;
        }
        let log_manager = self.log_manager();
        let Some(dir) = log_manager.find_log_dir(destination) else {
            return ErrorCode::LogDirNotFound;
        };
        if !log_manager.is_log_dir_online(&dir) {
            return ErrorCode::KafkaStorageError;
        }
        if let Some(partition) = self.get_partition(tp) {
            if partition.is_offline() {
                return ErrorCode::KafkaStorageError;
            }
            // A move elsewhere in progress stops (Kafka's `futureReplicaDirChanged`).
            if let Some(future) = log_manager.get_future_log(tp)
                && lock(&future).dir().parent() != Some(dir.as_path())
            {
                self.alter_log_dirs().remove_fetcher_for_partition(tp);
                if let Err(err) = log_manager.remove_future_log(tp) {
                    tracing::warn!(topic_partition = %tp, %err, "cannot drop the future log");
                    log_manager.maybe_report_log_dir_failure(&err);
                    return ErrorCode::KafkaStorageError;
                }
            }
        }
        log_manager.maybe_update_preferred_log_dir(tp, &dir);
        // Not hosted yet: it will be created in `dir`; Kafka answers REPLICA_NOT_AVAILABLE.
        let Some(partition) = self.get_partition(tp) else {
            return ErrorCode::ReplicaNotAvailable;
        };
        if partition.log_dir().as_deref() == Some(dir.as_path()) {
            return ErrorCode::None;
        }
        if log_manager.get_future_log(tp).is_some() {
            return ErrorCode::None;
        }
        // Kafka creates no future log while any dir is offline, so no partition ends up with
        // future logs in two dirs.
        if !log_manager.failure_channel().offline_dirs().is_empty() {
            return ErrorCode::KafkaStorageError;
        }
        match log_manager.create_future_log(tp, &dir, self.time().milliseconds()) {
            Ok(_) => {
                self.alter_log_dirs().add_fetcher_for_partition(
                    log_manager,
                    self.time(),
                    partition,
                );
                ErrorCode::None
            }
            Err(err) => {
                tracing::warn!(topic_partition = %tp, %err, "cannot create the future log");
                log_manager.maybe_report_log_dir_failure(&err);
                match err {
                    StorageError::Io { .. } => ErrorCode::KafkaStorageError,
                    err if err.is_resource_exhaustion() => ErrorCode::KafkaStorageError,
                    _ => ErrorCode::UnknownServerError,
                }
            }
        }
    }

    /// Kafka's `maybeAddLogDirFetchers` at startup: every hosted partition with a future log
    /// left by an interrupted move resumes it.
    pub fn maybe_add_log_dir_fetchers(&self) {
        for (tp, _) in self.log_manager().all_future_logs() {
            if let Some(partition) = self.get_partition(&tp) {
                self.alter_log_dirs().add_fetcher_for_partition(
                    self.log_manager(),
                    self.time(),
                    partition,
                );
            }
        }
    }
}
