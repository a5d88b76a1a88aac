//! Kafka's `TransactionStateManager`: the transactional ids of the `__transaction_state`
//! partitions this broker leads, loaded from the log when it becomes their leader and dropped
//! when it stops, and the appends that persist each move of an id before it is installed.
//!
//! - A partition is loading ([`CoordinatorPartitions`]), loaded (its ids cached, with the
//!   coordinator epoch it was loaded at: the partition's leader epoch), or not coordinated here.
//!   Every election loads it (again), at its new epoch.
//!   Looking an id up answers COORDINATOR_LOAD_IN_PROGRESS while its partition loads, and
//!   NOT_COORDINATOR when it is not coordinated here.
//! - A load reads the partition to its log end; the last value of each id wins and a tombstone
//!   removes it. Ids found in PrepareCommit or PrepareAbort are handed back with their completion
//!   prepared, for the coordinator to send their markers again at the new coordinator epoch.
//! - An append writes one record (the id's key, the move's value) through the replica manager
//!   as a coordinator at acks=-1, waiting up to the transaction's own timeout (Kafka's quirk),
//!   maps the partition's error to what a client is told (COORDINATOR_NOT_AVAILABLE,
//!   NOT_COORDINATOR, UNKNOWN_SERVER_ERROR), and installs the move only if it is committed and
//!   the partition is still loaded at the same coordinator epoch; otherwise NOT_COORDINATOR.
//!   On an error the move's pending mark is cleared, so the client may try again.
//!
//! Lock order: the partitions' states, then the cache, then one id's metadata. No lock is held
//! across an `.await`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;
use tokio_util::sync::CancellationToken;

use crate::cluster::sync::lock;
use crate::cluster::{TRANSACTION_STATE_TOPIC_NAME, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;
use crate::replication::{
    AppendEntry, AppendParams, Partition, PartitionResponse, ProduceResult, ReplicaManager,
};

use super::super::internal_topic::partition_for;
use super::super::partition_loads::{
    CoordinatorPartitions, LoadState, LoadedRecord, NoLoad, read_partition,
};
use super::transaction_log::{self, TransactionLogEntry};
use super::transaction_metadata::{
    NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionMetadata, TxnTransitMetadata,
};
use super::transaction_state::TransactionState;

/// The `transaction.state.log.*` settings the manager uses.
#[derive(Debug, Clone)]
pub struct TransactionLogConfig {
    /// `transaction.state.log.num.partitions` (or the topic's count once it exists).
    pub num_partitions: i32,
    /// `transaction.state.log.load.buffer.size`.
    pub load_buffer_size: usize,
    /// `request.timeout.ms`: how long the expiry's tombstones may wait to replicate.
    pub request_timeout_ms: i32,
}

/// One transactional id, shared by the request handlers and the timers.
pub(crate) type SharedMetadata = Arc<Mutex<TransactionMetadata>>;

/// A loaded partition's ids and the coordinator epoch they were loaded at.
#[derive(Debug)]
struct TxnPartitionCache {
    coordinator_epoch: i32,
    ids: HashMap<String, SharedMetadata>,
}

/// An id found completing a transaction by a load, its completion prepared: the coordinator
/// sends its markers again (Kafka's `sendTxnMarkers` callback of the load).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionToComplete {
    pub transactional_id: String,
    pub coordinator_epoch: i32,
    /// CompleteCommit or CompleteAbort, pending on the id's metadata.
    pub completion: TxnTransitMetadata,
}

/// The manager; see the module doc.
#[derive(Debug)]
pub struct TransactionStateManager {
    config: TransactionLogConfig,
    replica_manager: Arc<ReplicaManager>,
    partitions: Mutex<CoordinatorPartitions>,
    cache: Mutex<HashMap<i32, TxnPartitionCache>>,
    /// Notified as each append of a move finishes; see [`moved`](Self::moved).
    moved: Notify,
}

impl TransactionStateManager {
    pub fn new(config: TransactionLogConfig, replica_manager: Arc<ReplicaManager>) -> Self {
        TransactionStateManager {
            config,
            replica_manager,
            partitions: Mutex::new(CoordinatorPartitions::default()),
            cache: Mutex::new(HashMap::new()),
            moved: Notify::new(),
        }
    }

    /// The `__transaction_state` partition of `transactional_id`.
    pub fn partition_for(&self, transactional_id: &str) -> i32 {
        partition_for(transactional_id, self.config.num_partitions)
    }

    /// The broker's clock.
    pub fn now_ms(&self) -> i64 {
        self.replica_manager.time().milliseconds()
    }

    fn txn_partition(&self, index: i32) -> Option<Arc<Partition>> {
        self.replica_manager
            .get_partition(&TopicPartition::new(TRANSACTION_STATE_TOPIC_NAME, index))
    }

    /// Kafka's `getTransactionState`: the id's coordinator epoch and metadata, `None` when it
    /// is unknown in a partition loaded here; COORDINATOR_LOAD_IN_PROGRESS while its partition
    /// loads, NOT_COORDINATOR when it is not coordinated here.
    pub fn get_transaction_state(
        &self,
        transactional_id: &str,
    ) -> Result<Option<(i32, SharedMetadata)>, ErrorCode> {
        let index = self.partition_for(transactional_id);
        let partitions = lock(&self.partitions);
        match partitions.state(index) {
            Some(LoadState::Loading) => Err(ErrorCode::CoordinatorLoadInProgress),
            None => Err(ErrorCode::NotCoordinator),
            Some(LoadState::Loaded) => {
                let cache = lock(&self.cache);
                let Some(loaded) = cache.get(&index) else {
                    return Err(ErrorCode::NotCoordinator);
                };
                Ok(loaded
                    .ids
                    .get(transactional_id)
                    .map(|m| (loaded.coordinator_epoch, Arc::clone(m))))
            }
        }
    }

    /// Kafka's `putTransactionStateIfNotExists`: the id's metadata, `metadata` when it had none.
    pub fn put_transaction_state_if_not_exists(
        &self,
        metadata: TransactionMetadata,
    ) -> Result<(i32, SharedMetadata), ErrorCode> {
        let index = self.partition_for(&metadata.transactional_id);
        let partitions = lock(&self.partitions);
        match partitions.state(index) {
            Some(LoadState::Loading) => return Err(ErrorCode::CoordinatorLoadInProgress),
            None => return Err(ErrorCode::NotCoordinator),
            Some(LoadState::Loaded) => {}
        }
        let mut cache = lock(&self.cache);
        let Some(loaded) = cache.get_mut(&index) else {
            return Err(ErrorCode::NotCoordinator);
        };
        let shared = loaded
            .ids
            .entry(metadata.transactional_id.clone())
            .or_insert_with(|| Arc::new(Mutex::new(metadata)));
        Ok((loaded.coordinator_epoch, Arc::clone(shared)))
    }

    /// Kafka's `timedOutTransactions`: the open transactions, with nothing pending, whose
    /// timeout ran out by `now_ms` (counted from their first partition), as (id, producer id).
    pub fn timed_out_transactions(&self, now_ms: i64) -> Vec<(String, i64)> {
        let partitions = lock(&self.partitions);
        let cache = lock(&self.cache);
        cache
            .iter()
            .filter(|(index, _)| partitions.state(**index) == Some(LoadState::Loaded))
            .flat_map(|(_, loaded)| loaded.ids.values())
            .filter_map(|shared| {
                let m = lock(shared);
                let expired = m.state == TransactionState::Ongoing
                    && m.pending_state.is_none()
                    && m.txn_start_timestamp_ms + i64::from(m.txn_timeout_ms) < now_ms;
                expired.then(|| (m.transactional_id.clone(), m.producer_id))
            })
            .collect()
    }

    /// Whether partition `index` is loaded here.
    pub fn is_partition_loaded(&self, index: i32) -> bool {
        lock(&self.partitions).state(index) == Some(LoadState::Loaded)
    }

    /// Whether any partition is loading.
    pub fn any_loading(&self) -> bool {
        lock(&self.partitions).any_loading()
    }

    /// Kafka's `onElection` up to the load: marks `index` loading at coordinator epoch `epoch`;
    /// the id of the load to run, unless the election is stale. A partition loaded already is
    /// loaded again, as Kafka's transaction coordinator does at every election: its ids move to
    /// the new coordinator epoch and the markers of the transactions being completed, dropped
    /// with the election, are sent again (a leader epoch bumped by an ISR change is such an
    /// election).
    pub fn begin_loading(&self, index: i32, epoch: i32) -> Option<u64> {
        let mut partitions = lock(&self.partitions);
        match partitions.begin_loading(index, Some(epoch)) {
            Ok(id) => Some(id),
            Err(NoLoad::Stale) => {
                tracing::info!(
                    partition = index,
                    epoch,
                    "not loading __transaction_state: the election is stale"
                );
                None
            }
            Err(NoLoad::Loaded) => Some(partitions.new_load(index)),
        }
    }

    /// Kafka's `loadTransactionsForTxnTopicPartition`: reads partition `index` and installs its
    /// ids at coordinator epoch `epoch`, unless load `load_id` was overtaken meanwhile; the ids
    /// whose markers must be sent again. Blocking (file reads).
    pub fn load(&self, index: i32, epoch: i32, load_id: u64) -> Vec<TransactionToComplete> {
        let mut entries: HashMap<String, TransactionLogEntry> = HashMap::new();
        let read = match self.txn_partition(index) {
            Some(p) => read_partition(&p, self.config.load_buffer_size, |record| {
                let LoadedRecord::Data { key, value, .. } = record else {
                    return Ok(());
                };
                let Some(key) = key else { return Ok(()) };
                let Some(id) = transaction_log::read_key(key).map_err(|e| e.to_string())? else {
                    return Ok(());
                };
                match value {
                    None => {
                        entries.remove(&id);
                    }
                    Some(v) => {
                        let entry = transaction_log::read_value(v).map_err(|e| e.to_string())?;
                        entries.insert(id, entry);
                    }
                }
                Ok(())
            }),
            None => Ok(()),
        };
        if let Err(e) = read {
            tracing::error!(partition = index, err = %e,
                "loading __transaction_state stopped at a bad record; the ids after it are missing");
        }
        let mut partitions = lock(&self.partitions);
        if !partitions.is_current(index, load_id) {
            tracing::info!(
                partition = index,
                "__transaction_state load overtaken by a resignation or a newer load; discarded"
            );
            return Vec::new();
        }
        let now_ms = self.now_ms();
        let mut ids = HashMap::with_capacity(entries.len());
        let mut to_complete = Vec::new();
        for (id, entry) in entries {
            let mut metadata = metadata_of(&id, entry);
            if matches!(
                metadata.state,
                TransactionState::PrepareCommit | TransactionState::PrepareAbort
            ) {
                match metadata.prepare_complete(now_ms) {
                    Ok(completion) => to_complete.push(TransactionToComplete {
                        transactional_id: id.clone(),
                        coordinator_epoch: epoch,
                        completion,
                    }),
                    Err(e) => tracing::error!(%e, "cannot complete a loaded transaction"),
                }
            }
            ids.insert(id, Arc::new(Mutex::new(metadata)));
        }
        let count = ids.len();
        lock(&self.cache).insert(
            index,
            TxnPartitionCache {
                coordinator_epoch: epoch,
                ids,
            },
        );
        partitions.finish(index, load_id);
        drop(partitions);
        tracing::info!(
            partition = index,
            epoch,
            ids = count,
            completing = to_complete.len(),
            "loaded __transaction_state partition"
        );
        to_complete
    }

    /// Kafka's `removeTransactionsForTxnTopicPartition` (`onResignation`): the partition's ids
    /// leave the cache, unless `epoch` is older than its newest election; whether they left.
    pub fn remove_transactions_for_partition(&self, index: i32, epoch: Option<i32>) -> bool {
        let mut partitions = lock(&self.partitions);
        if !partitions.resign(index, epoch) {
            tracing::info!(
                partition = index,
                ?epoch,
                "not unloading __transaction_state: the resignation is stale"
            );
            return false;
        }
        if let Some(removed) = lock(&self.cache).remove(&index) {
            tracing::info!(
                partition = index,
                ids = removed.ids.len(),
                "unloaded __transaction_state partition"
            );
        }
        true
    }

    /// Kafka's `appendTransactionToLog`: persists `transit` (prepared on the id's metadata at
    /// `coordinator_epoch`) and installs it once committed; see the module doc. `shutdown`
    /// ends the wait with NOT_COORDINATOR.
    pub async fn append_transaction_to_log(
        &self,
        transactional_id: &str,
        coordinator_epoch: i32,
        transit: &TxnTransitMetadata,
        shutdown: &CancellationToken,
    ) -> ErrorCode {
        self.append_transaction_to_log_retrying(
            transactional_id,
            coordinator_epoch,
            transit,
            |_| false,
            shutdown,
        )
        .await
    }

    /// [`append_transaction_to_log`](Self::append_transaction_to_log), keeping the move pending
    /// after an error `retry_on` accepts, for the caller to append it again (Kafka's
    /// `retryOnError`: a completion that found the log unavailable).
    pub async fn append_transaction_to_log_retrying(
        &self,
        transactional_id: &str,
        coordinator_epoch: i32,
        transit: &TxnTransitMetadata,
        retry_on: fn(ErrorCode) -> bool,
        shutdown: &CancellationToken,
    ) -> ErrorCode {
        let code = match self.append(transactional_id, transit) {
            Ok(result) => append_error(match result {
                ProduceResult::Ready(responses) => first_error(&responses),
                ProduceResult::Delayed(delayed) => tokio::select! {
                    responses = delayed.complete() => first_error(&responses),
                    _ = shutdown.cancelled() => ErrorCode::NotCoordinator,
                },
            }),
            Err(code) => code,
        };
        let code = self.finish_append(transactional_id, coordinator_epoch, transit, code, retry_on);
        self.moved.notify_waiters();
        code
    }

    /// Resolves after the next append of a move finishes (installed or not), for a request that
    /// found its id busy and waits to look again. Create it, `enable` it, then look: a move
    /// finishing in between still wakes it.
    pub fn moved(&self) -> Notified<'_> {
        self.moved.notified()
    }

    /// Builds and appends the move's record.
    fn append(
        &self,
        transactional_id: &str,
        transit: &TxnTransitMetadata,
    ) -> Result<ProduceResult, ErrorCode> {
        let key = transaction_log::key(transactional_id).map_err(|e| {
            tracing::error!(%e, "cannot encode a __transaction_state key");
            ErrorCode::UnknownServerError
        })?;
        let value = if transit.state == TransactionState::Dead {
            None
        } else {
            let entry = TransactionLogEntry {
                producer_id: transit.producer_id,
                producer_epoch: transit.producer_epoch,
                transaction_timeout_ms: transit.txn_timeout_ms,
                state: transit.state,
                partitions: transit.partitions.iter().cloned().collect(),
                last_update_timestamp_ms: transit.txn_last_update_timestamp_ms,
                start_timestamp_ms: transit.txn_start_timestamp_ms,
            };
            Some(transaction_log::value(&entry).map_err(|e| {
                tracing::error!(%e, "cannot encode a __transaction_state value");
                ErrorCode::UnknownServerError
            })?)
        };
        let mut builder = RecordBatchBuilder::new(CompressionType::None);
        builder.records = vec![SimpleRecord::new(self.now_ms(), Some(key), value)];
        let batch = builder.build().map_err(|e| {
            tracing::error!(%e, "cannot build a __transaction_state batch");
            ErrorCode::UnknownServerError
        })?;
        let entry = AppendEntry {
            topic_partition: TopicPartition::new(
                TRANSACTION_STATE_TOPIC_NAME,
                self.partition_for(transactional_id),
            ),
            records: Bytes::from(batch),
            verification_guard: None,
        };
        Ok(self.replica_manager.append_records(
            AppendParams::coordinator(transit.txn_timeout_ms),
            vec![entry],
        ))
    }

    /// Installs a committed move, or clears the pending mark of one that failed.
    fn finish_append(
        &self,
        transactional_id: &str,
        coordinator_epoch: i32,
        transit: &TxnTransitMetadata,
        code: ErrorCode,
        retry_on: fn(ErrorCode) -> bool,
    ) -> ErrorCode {
        let current = match self.get_transaction_state(transactional_id) {
            Ok(Some((epoch, metadata))) if epoch == coordinator_epoch => Some(metadata),
            _ => None,
        };
        let Some(metadata) = current else {
            // Unloaded or reloaded meanwhile: another coordinator epoch owns the id now.
            tracing::info!(
                transactional_id,
                coordinator_epoch,
                ?code,
                "transaction state append finished after the coordinator moved"
            );
            return ErrorCode::NotCoordinator;
        };
        let mut metadata = lock(&metadata);
        if code != ErrorCode::None {
            if !retry_on(code) {
                metadata.pending_state = None;
            }
            return code;
        }
        if transit.state == TransactionState::Dead {
            // An expired id leaves the cache instead (the expiry's caller removes it).
            return code;
        }
        match metadata.complete_transition_to(transit) {
            Ok(()) => ErrorCode::None,
            Err(e) => {
                tracing::error!(%e, "a committed transaction state move does not fit");
                metadata.pending_state = None;
                ErrorCode::UnknownServerError
            }
        }
    }
}

/// An id's metadata as a load finds it: its last producer id and epoch are not logged.
fn metadata_of(transactional_id: &str, entry: TransactionLogEntry) -> TransactionMetadata {
    TransactionMetadata {
        transactional_id: transactional_id.to_string(),
        producer_id: entry.producer_id,
        last_producer_id: NO_PRODUCER_ID,
        producer_epoch: entry.producer_epoch,
        last_producer_epoch: NO_PRODUCER_EPOCH,
        txn_timeout_ms: entry.transaction_timeout_ms,
        state: entry.state,
        partitions: entry.partitions.into_iter().collect(),
        txn_start_timestamp_ms: entry.start_timestamp_ms,
        txn_last_update_timestamp_ms: entry.last_update_timestamp_ms,
        pending_state: None,
        has_failed_epoch_fence: false,
    }
}

/// The error of a one-entry append.
fn first_error(responses: &[PartitionResponse]) -> ErrorCode {
    responses
        .first()
        .map_or(ErrorCode::UnknownServerError, |r| r.error_code)
}

/// Kafka's mapping of an append error for a transaction state move (`appendTransactionToLog`'s
/// callback).
pub(crate) fn append_error(e: ErrorCode) -> ErrorCode {
    match e {
        ErrorCode::UnknownTopicOrPartition
        | ErrorCode::NotEnoughReplicas
        | ErrorCode::NotEnoughReplicasAfterAppend
        | ErrorCode::RequestTimedOut => ErrorCode::CoordinatorNotAvailable,
        ErrorCode::NotLeaderOrFollower | ErrorCode::KafkaStorageError => ErrorCode::NotCoordinator,
        ErrorCode::MessageTooLarge | ErrorCode::RecordListTooLarge => ErrorCode::UnknownServerError,
        other => other,
    }
}

mod expiration;
pub(crate) mod listing;
#[cfg(test)]
mod tests;
