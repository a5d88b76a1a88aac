//! Kafka 3.9's `TransactionCoordinator` (ZooKeeper mode): the transactional APIs over the ids
//! of the `__transaction_state` partitions this broker leads. Each request looks its id up in
//! the [`TransactionStateManager`], decides under the id's lock ([`init_producer_id`],
//! [`add_partitions`], [`end_transaction`]), appends the move and answers once it is
//! committed. An end of transaction answers once its Prepare record is committed; its markers
//! then go out through the [`TransactionMarkerChannelManager`], which appends the completion.
//!
//! Timers: every `transaction.abort.timed.out.transaction.cleanup.interval.ms`, open
//! transactions past their timeout are aborted with their producer fenced (its epoch bumped);
//! every `transaction.remove.expired.transaction.cleanup.interval.ms`, ids idle for
//! `transactional.id.expiration.ms` are removed.
//!
//! [`init_producer_id`]: super::init_producer_id
//! [`add_partitions`]: super::add_partitions
//! [`end_transaction`]: super::end_transaction

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;

use super::add_partitions::{AddDecision, prepare_add_partitions, verify_partitions};
use super::end_transaction::{
    EndDecision, EndOrigin, TransactionResult, prepare_end_transaction, prepare_send_markers,
};
use super::init_producer_id::{InitDecision, prepare_init_producer_id_transit, validate_request};
use super::transaction_marker_channel_manager::{
    TransactionMarkerChannelManager, TxnMarkerChannel,
};
use super::transaction_metadata::{NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionMetadata};
use super::transaction_state::TransactionState;
use super::transaction_state_manager::{SharedMetadata, TransactionStateManager};

/// How long AddPartitionsToTxn (and AddOffsetsToTxn) waits on an id that is busy, before it
/// answers CONCURRENT_TRANSACTIONS. Kafka answers at once; its clients then back off (the Java
/// producer 20 ms for the first partition of a transaction, which is exactly the case of a
/// producer starting its next transaction while the last one's markers are written). A marker
/// round here takes a few milliseconds (the markers' append and the completion's, each one
/// replication round trip), so waiting for it starts the next transaction that much sooner;
/// past this bound the markers wait on a leader that is down, and the client's own retries are
/// the better wait.
const BUSY_ID_WAIT: Duration = Duration::from_millis(50);

/// Where new producer ids come from (the broker's block of ids from the controller).
pub trait ProducerIdGenerator: Send + Sync + fmt::Debug {
    /// The next id, or the error to answer (COORDINATOR_LOAD_IN_PROGRESS while a block is
    /// awaited).
    fn generate_producer_id(&self) -> Result<i64, ErrorCode>;
}

/// The `transaction.*` settings the coordinator uses.
#[derive(Debug, Clone)]
pub struct TransactionConfig {
    /// `transaction.max.timeout.ms`.
    pub max_timeout_ms: i32,
    /// `transaction.abort.timed.out.transaction.cleanup.interval.ms`.
    pub abort_timed_out_interval_ms: i32,
    /// `transaction.remove.expired.transaction.cleanup.interval.ms`.
    pub remove_expired_interval_ms: i32,
    /// `transactional.id.expiration.ms`.
    pub transactional_id_expiration_ms: i32,
}

/// InitProducerId's answer: on an error, producer id and epoch -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitProducerIdResult {
    pub error: ErrorCode,
    pub producer_id: i64,
    pub producer_epoch: i16,
}

impl InitProducerIdResult {
    fn error(error: ErrorCode) -> Self {
        InitProducerIdResult {
            error,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
        }
    }
}

/// A timer's job: one run of it.
type TimerJob = fn(
    Arc<TransactionCoordinator>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// The coordinator; see the module doc.
pub struct TransactionCoordinator {
    config: TransactionConfig,
    state_manager: Arc<TransactionStateManager>,
    markers: Arc<TransactionMarkerChannelManager>,
    producer_ids: Arc<dyn ProducerIdGenerator>,
    active: AtomicBool,
    tasks: TaskTracker,
    shutdown: CancellationToken,
    me: Weak<TransactionCoordinator>,
}

impl fmt::Debug for TransactionCoordinator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransactionCoordinator")
            .field("config", &self.config)
            .field("active", &self.active)
            .finish_non_exhaustive()
    }
}

impl TransactionCoordinator {
    pub fn new(
        config: TransactionConfig,
        state_manager: Arc<TransactionStateManager>,
        marker_channel: Arc<dyn TxnMarkerChannel>,
        producer_ids: Arc<dyn ProducerIdGenerator>,
    ) -> Arc<Self> {
        let tasks = TaskTracker::new();
        let shutdown = CancellationToken::new();
        let markers = TransactionMarkerChannelManager::new(
            Arc::clone(&state_manager),
            marker_channel,
            tasks.clone(),
            shutdown.clone(),
        );
        Arc::new_cyclic(|me| TransactionCoordinator {
            config,
            state_manager,
            markers,
            producer_ids,
            active: AtomicBool::new(false),
            tasks,
            shutdown,
            me: me.clone(),
        })
    }

    pub fn state_manager(&self) -> &Arc<TransactionStateManager> {
        &self.state_manager
    }

    pub fn markers(&self) -> &Arc<TransactionMarkerChannelManager> {
        &self.markers
    }

    /// The `__transaction_state` partition of `transactional_id`.
    pub fn partition_for(&self, transactional_id: &str) -> i32 {
        self.state_manager.partition_for(transactional_id)
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// Starts the marker sender and the timers.
    pub fn startup(&self) {
        self.tasks.spawn(Arc::clone(&self.markers).run());
        let every = |ms: i32| Duration::from_millis(u64::try_from(ms.max(1)).unwrap_or(1));
        if let Some(me) = self.me.upgrade() {
            let interval = every(self.config.abort_timed_out_interval_ms);
            self.tasks.spawn(me.repeat(interval, |me| {
                Box::pin(async move { me.abort_timed_out_transactions().await })
            }));
        }
        if let Some(me) = self.me.upgrade() {
            let interval = every(self.config.remove_expired_interval_ms);
            self.tasks.spawn(me.repeat(interval, |me| {
                Box::pin(async move {
                    let expiration = i64::from(me.config.transactional_id_expiration_ms);
                    me.state_manager
                        .remove_expired_transactional_ids(expiration, &me.shutdown)
                        .await;
                })
            }));
        }
        self.active.store(true, Ordering::SeqCst);
        tracing::info!("transaction coordinator started");
    }

    /// Runs `job` every `interval` until shutdown.
    async fn repeat(self: Arc<Self>, interval: Duration, job: TimerJob) {
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = ticker.tick() => job(Arc::clone(&self)).await,
            }
        }
    }

    /// Stops the timers and the marker sender; appends in flight end with NOT_COORDINATOR.
    pub async fn shutdown(&self) {
        self.active.store(false, Ordering::SeqCst);
        self.shutdown.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }

    /// Kafka's `onElection`: this broker leads `__transaction_state` partition `index` at
    /// leader epoch `epoch` (its coordinator epoch); its ids are loaded in the background, and
    /// the transactions found being completed get their markers again.
    pub fn on_election(&self, index: i32, epoch: i32) {
        tracing::info!(
            partition = index,
            epoch,
            "elected transaction coordinator of a __transaction_state partition"
        );
        self.markers.remove_markers_for_txn_topic_partition(index);
        let Some(load_id) = self.state_manager.begin_loading(index, epoch) else {
            return;
        };
        let Some(me) = self.me.upgrade() else { return };
        self.tasks.spawn(async move {
            let manager = Arc::clone(&me.state_manager);
            let loaded =
                tokio::task::spawn_blocking(move || manager.load(index, epoch, load_id)).await;
            let Ok(to_complete) = loaded else { return };
            for txn in to_complete {
                let Ok(Some((coordinator_epoch, metadata))) = me
                    .state_manager
                    .get_transaction_state(&txn.transactional_id)
                else {
                    continue;
                };
                if coordinator_epoch != txn.coordinator_epoch {
                    continue;
                }
                let result = if txn.completion.state == TransactionState::CompleteCommit {
                    TransactionResult::Commit
                } else {
                    TransactionResult::Abort
                };
                me.markers.add_txn_markers_to_send(
                    coordinator_epoch,
                    result,
                    metadata,
                    txn.completion,
                );
            }
        });
    }

    /// Kafka's `onResignation`: no longer the leader of partition `index` (as of `epoch`;
    /// `None`: stopped hosting it). Its ids and queued markers go.
    pub fn on_resignation(&self, index: i32, epoch: Option<i32>) {
        tracing::info!(
            partition = index,
            ?epoch,
            "resigned as transaction coordinator of a __transaction_state partition"
        );
        self.state_manager
            .remove_transactions_for_partition(index, epoch);
        self.markers.remove_markers_for_txn_topic_partition(index);
    }

    /// Kafka's `handleInitProducerId` for a transactional id, with the request's producer id
    /// and epoch (-1, -1 when it has none).
    pub async fn handle_init_producer_id(
        &self,
        transactional_id: &str,
        timeout_ms: i32,
        producer_id: i64,
        producer_epoch: i16,
    ) -> InitProducerIdResult {
        let expected = match validate_request(
            transactional_id,
            timeout_ms,
            self.config.max_timeout_ms,
            producer_id,
            producer_epoch,
        ) {
            Ok(expected) => expected,
            Err(code) => return InitProducerIdResult::error(code),
        };
        let now_ms = self.state_manager.now_ms();
        let found =
            match self.state_manager.get_transaction_state(transactional_id) {
                Ok(Some(found)) => Ok(found),
                Ok(None) => self.producer_ids.generate_producer_id().and_then(|id| {
                    self.state_manager.put_transaction_state_if_not_exists(
                        TransactionMetadata::new(transactional_id, id, timeout_ms, now_ms),
                    )
                }),
                Err(code) => Err(code),
            };
        let (coordinator_epoch, metadata) = match found {
            Ok(found) => found,
            Err(code) => return InitProducerIdResult::error(code),
        };
        let decision = prepare_init_producer_id_transit(
            &mut lock(&metadata),
            timeout_ms,
            expected,
            now_ms,
            || self.producer_ids.generate_producer_id(),
        );
        match decision {
            Err(e) => {
                tracing::error!(%e, "InitProducerId found an impossible transaction state");
                InitProducerIdResult::error(ErrorCode::UnknownServerError)
            }
            Ok(InitDecision::Refused(code)) => InitProducerIdResult::error(code),
            Ok(InitDecision::Append(transit)) => {
                let code = self
                    .state_manager
                    .append_transaction_to_log(
                        transactional_id,
                        coordinator_epoch,
                        &transit,
                        &self.shutdown,
                    )
                    .await;
                if code != ErrorCode::None {
                    tracing::info!(transactional_id, ?code, "InitProducerId failed");
                    return InitProducerIdResult::error(code);
                }
                tracing::info!(
                    transactional_id,
                    producer_id = transit.producer_id,
                    producer_epoch = transit.producer_epoch,
                    partition = self.partition_for(transactional_id),
                    "initialized transactional id"
                );
                InitProducerIdResult {
                    error: ErrorCode::None,
                    producer_id: transit.producer_id,
                    producer_epoch: transit.producer_epoch,
                }
            }
            Ok(InitDecision::FenceOngoing(fence)) => {
                // The open transaction is aborted at the fenced epoch, which no client is
                // given: the producer retries and gets its own bump.
                let code = self
                    .end_transaction(
                        transactional_id,
                        fence.producer_id,
                        fence.producer_epoch,
                        TransactionResult::Abort,
                        EndOrigin::Coordinator,
                    )
                    .await;
                InitProducerIdResult::error(if code == ErrorCode::None {
                    ErrorCode::ConcurrentTransactions
                } else {
                    code
                })
            }
        }
    }

    /// Kafka's `handleAddPartitionsToTransaction` (AddPartitionsToTxn, and AddOffsetsToTxn with
    /// the group's offsets partition).
    pub async fn handle_add_partitions_to_transaction(
        &self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        partitions: &BTreeSet<TopicPartition>,
    ) -> ErrorCode {
        let deadline = tokio::time::Instant::now() + BUSY_ID_WAIT;
        let (coordinator_epoch, decision) = loop {
            let moved = self.state_manager.moved();
            tokio::pin!(moved);
            moved.as_mut().enable();
            let (coordinator_epoch, metadata) = match self.existing(transactional_id) {
                Ok(found) => found,
                Err(code) => return code,
            };
            let now_ms = self.state_manager.now_ms();
            let decision = prepare_add_partitions(
                &mut lock(&metadata),
                producer_id,
                producer_epoch,
                partitions,
                now_ms,
            );
            if decision != Ok(AddDecision::Answer(ErrorCode::ConcurrentTransactions)) {
                break (coordinator_epoch, decision);
            }
            // The previous transaction's markers are out (or another move is): look again
            // when a move finishes rather than send the producer into its retry backoff.
            tokio::select! {
                () = moved => {}
                () = tokio::time::sleep_until(deadline) => break (coordinator_epoch, decision),
                () = self.shutdown.cancelled() => break (coordinator_epoch, decision),
            }
        };
        match decision {
            Err(e) => {
                tracing::error!(%e, "AddPartitionsToTxn found an impossible transaction state");
                ErrorCode::UnknownServerError
            }
            Ok(AddDecision::Answer(code)) => code,
            Ok(AddDecision::Append(transit)) => {
                self.state_manager
                    .append_transaction_to_log(
                        transactional_id,
                        coordinator_epoch,
                        &transit,
                        &self.shutdown,
                    )
                    .await
            }
        }
    }

    /// Kafka's `handleVerifyPartitionsInTransaction`: a leader asks whether `partitions` are in
    /// the producer's transaction (AddPartitionsToTxn v4+ with VerifyOnly).
    pub fn handle_verify_partitions_in_transaction(
        &self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        partitions: &[TopicPartition],
    ) -> Vec<(TopicPartition, ErrorCode)> {
        let all = |code: ErrorCode| partitions.iter().map(|tp| (tp.clone(), code)).collect();
        if transactional_id.is_empty() {
            return all(ErrorCode::InvalidRequest);
        }
        let metadata = match self.existing(transactional_id) {
            Ok((_, metadata)) => metadata,
            Err(code) => return all(code),
        };
        let answer = verify_partitions(&lock(&metadata), producer_id, producer_epoch, partitions);
        answer.unwrap_or_else(all)
    }

    /// Kafka's `handleEndTransaction`: a client's EndTxn.
    pub async fn handle_end_transaction(
        &self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        result: TransactionResult,
    ) -> ErrorCode {
        self.end_transaction(
            transactional_id,
            producer_id,
            producer_epoch,
            result,
            EndOrigin::Client,
        )
        .await
    }

    /// The id's metadata: INVALID_REQUEST for an empty id, INVALID_PRODUCER_ID_MAPPING when it
    /// has none here, or the lookup's error.
    fn existing(&self, transactional_id: &str) -> Result<(i32, SharedMetadata), ErrorCode> {
        if transactional_id.is_empty() {
            return Err(ErrorCode::InvalidRequest);
        }
        self.state_manager
            .get_transaction_state(transactional_id)?
            .ok_or(ErrorCode::InvalidProducerIdMapping)
    }

    /// Kafka's `endTransaction`: the Prepare record, then the markers; see
    /// [`end_transaction`](super::end_transaction).
    async fn end_transaction(
        &self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        result: TransactionResult,
        origin: EndOrigin,
    ) -> ErrorCode {
        let (coordinator_epoch, metadata) = match self.existing(transactional_id) {
            Ok(found) => found,
            Err(code) => return code,
        };
        let now_ms = self.state_manager.now_ms();
        let decision = prepare_end_transaction(
            &mut lock(&metadata),
            producer_id,
            producer_epoch,
            result,
            origin,
            now_ms,
        );
        let (transit, epoch_fence) = match decision {
            Err(e) => {
                tracing::error!(%e, "EndTxn found an impossible transaction state");
                return ErrorCode::UnknownServerError;
            }
            Ok(EndDecision::Answer(code)) => return code,
            Ok(EndDecision::Append {
                transit,
                epoch_fence,
            }) => (transit, epoch_fence),
        };
        let code = self
            .state_manager
            .append_transaction_to_log(
                transactional_id,
                coordinator_epoch,
                &transit,
                &self.shutdown,
            )
            .await;
        if code != ErrorCode::None {
            tracing::info!(
                transactional_id,
                ?code,
                ?result,
                "not sending transaction markers: the Prepare record was not written"
            );
            if epoch_fence
                && let Ok(Some((epoch, metadata))) =
                    self.state_manager.get_transaction_state(transactional_id)
                && epoch == coordinator_epoch
            {
                // The bumped epoch stays in memory, never given to a client: the next fence
                // reuses it (KAFKA-9666).
                lock(&metadata).has_failed_epoch_fence = true;
            }
            return code;
        }
        let current = match self.state_manager.get_transaction_state(transactional_id) {
            Ok(Some((epoch, metadata))) if epoch == coordinator_epoch => metadata,
            _ => {
                tracing::info!(
                    transactional_id,
                    "the coordinator moved after the Prepare record was written"
                );
                return ErrorCode::NotCoordinator;
            }
        };
        let completion = prepare_send_markers(
            &mut lock(&current),
            producer_id,
            producer_epoch,
            result,
            self.state_manager.now_ms(),
        );
        match completion {
            Err(e) => {
                tracing::error!(%e, "cannot complete a prepared transaction");
                ErrorCode::UnknownServerError
            }
            Ok(Err(code)) => code,
            Ok(Ok(completion)) => {
                self.markers.add_txn_markers_to_send(
                    coordinator_epoch,
                    result,
                    current,
                    completion,
                );
                ErrorCode::None
            }
        }
    }

    /// Kafka's `handleDescribeTransactions` for one id: its state as DescribeTransactions
    /// reports it (an unknown or expiring id: TRANSACTIONAL_ID_NOT_FOUND).
    pub fn handle_describe_transaction(
        &self,
        transactional_id: &str,
    ) -> Result<TransactionMetadata, ErrorCode> {
        if !self.is_active() {
            return Err(ErrorCode::CoordinatorNotAvailable);
        }
        if transactional_id.is_empty() {
            return Err(ErrorCode::InvalidRequest);
        }
        match self.state_manager.get_transaction_state(transactional_id)? {
            None => Err(ErrorCode::TransactionalIdNotFound),
            Some((_, metadata)) => {
                let m = lock(&metadata).clone();
                if m.state == TransactionState::Dead {
                    Err(ErrorCode::TransactionalIdNotFound)
                } else {
                    Ok(m)
                }
            }
        }
    }

    /// Kafka's `handleListTransactions`.
    pub fn handle_list_transactions(
        &self,
        producer_id_filters: &[i64],
        state_filters: &[String],
        duration_filter_ms: i64,
    ) -> super::transaction_state_manager::listing::TransactionListing {
        if !self.is_active() {
            return super::transaction_state_manager::listing::TransactionListing {
                error: Some(ErrorCode::CoordinatorNotAvailable),
                ..Default::default()
            };
        }
        self.state_manager.list_transaction_states(
            producer_id_filters,
            state_filters,
            duration_filter_ms,
        )
    }

    /// Kafka's `abortTimedOutTransactions`: each open transaction past its timeout is aborted,
    /// its producer fenced.
    pub async fn abort_timed_out_transactions(&self) {
        let now_ms = self.state_manager.now_ms();
        for (transactional_id, producer_id) in self.state_manager.timed_out_transactions(now_ms) {
            let Ok((_, metadata)) = self.existing(&transactional_id) else {
                continue;
            };
            let fence = {
                let mut m = lock(&metadata);
                if m.producer_id != producer_id || m.pending_transition_in_progress() {
                    continue;
                }
                m.prepare_fence_producer_epoch()
            };
            let fence = match fence {
                Ok(fence) => fence,
                Err(e) => {
                    tracing::error!(%e, "cannot fence a timed-out transaction's producer");
                    continue;
                }
            };
            tracing::info!(
                %transactional_id,
                producer_id,
                epoch = fence.producer_epoch,
                "aborting a transaction past its timeout"
            );
            let code = self
                .end_transaction(
                    &transactional_id,
                    fence.producer_id,
                    fence.producer_epoch,
                    TransactionResult::Abort,
                    EndOrigin::Coordinator,
                )
                .await;
            match code {
                ErrorCode::None => {
                    tracing::info!(%transactional_id, "rolled back a timed-out transaction")
                }
                ErrorCode::InvalidProducerIdMapping
                | ErrorCode::ProducerFenced
                | ErrorCode::ConcurrentTransactions => {
                    tracing::debug!(%transactional_id, ?code, "timed-out rollback cancelled")
                }
                code => tracing::warn!(%transactional_id, ?code, "timed-out rollback failed"),
            }
        }
    }
}

#[cfg(test)]
mod tests;
