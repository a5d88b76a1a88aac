//! Kafka's `TransactionMarkerChannelManager` with its completion handler
//! (`TransactionMarkerRequestCompletionHandler`): the markers of transactions being completed,
//! queued per destination broker, sent as WriteTxnMarkers, and the completion record appended
//! once every partition has its marker.
//!
//! - A completing transaction (its Prepare record written, its Complete move pending) is
//!   remembered by id; its markers are queued per partition leader, on the inter-broker listener,
//!   under the `__transaction_state` partition that owns the id. A partition with no leader
//!   endpoint yet waits in an unknown-broker queue, routed again at each turn; a partition the
//!   metadata does not know is taken as deleted, and needs no marker.
//! - One request is in flight per broker, holding every marker queued for it. The leaders'
//!   answers: NONE, or UNSUPPORTED_FOR_MESSAGE_FORMAT and UNSUPPORTED_VERSION (the producer
//!   could not have written there), take the partition off the transaction's set; the errors of
//!   a moving leader (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS,
//!   NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR) and a lost
//!   connection queue those partitions again, to their leaders looked up afresh;
//!   INVALID_PRODUCER_EPOCH and TRANSACTION_COORDINATOR_FENCED (a newer producer or coordinator)
//!   and anything else give the transaction's markers up.
//! - A transaction whose coordinator epoch changed, or whose partition is no longer coordinated
//!   here, is dropped: the new coordinator's load sends its markers again.
//! - The completion found the log unavailable (COORDINATOR_NOT_AVAILABLE): it stays pending and
//!   is appended again at the next turn.
//!
//! Lock order: the pending transactions, then the queues; an id's metadata is never locked
//! while either is held.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::write_txn_markers_request::{
    WritableTxnMarker, WritableTxnMarkerTopic, WriteTxnMarkersRequest,
};
use crate::protocol::messages::write_txn_markers_response::WriteTxnMarkersResponse;

use super::end_transaction::TransactionResult;
use super::transaction_metadata::TxnTransitMetadata;
use super::transaction_state_manager::{SharedMetadata, TransactionStateManager};

/// How often the queues are looked at without a wakeup: what routes the unknown-broker queue
/// and retries failed completions.
const POLL: Duration = Duration::from_millis(100);

/// A WriteTxnMarkers that got no response.
#[derive(Debug, thiserror::Error)]
#[error("WriteTxnMarkers to broker {broker} got no response: {reason}")]
pub struct MarkerSendError {
    pub broker: BrokerId,
    pub reason: String,
}

/// The answer to one WriteTxnMarkers.
pub(crate) type MarkerFuture<'a> =
    Pin<Box<dyn Future<Output = Result<WriteTxnMarkersResponse, MarkerSendError>> + Send + 'a>>;

/// Where a partition's marker goes (Kafka's `getPartitionLeaderEndpoint` on the inter-broker
/// listener).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkerDestination {
    /// The live leader.
    Broker(BrokerId),
    /// The partition is known but its leader has no live endpoint now.
    UnknownBroker,
    /// The metadata does not know the partition: deleted.
    NoPartition,
}

/// The leaders and the wire, as the server provides them.
pub trait TxnMarkerChannel: Send + Sync + fmt::Debug {
    fn destination(&self, tp: &TopicPartition) -> MarkerDestination;
    /// Sends `request` to `broker` (at the version the inter-broker protocol selects).
    fn send(&self, broker: BrokerId, request: WriteTxnMarkersRequest) -> MarkerFuture<'_>;
}

/// A transaction whose markers are being written (Kafka's `PendingCompleteTxn`).
#[derive(Debug)]
pub(crate) struct PendingCompleteTxn {
    pub transactional_id: String,
    pub coordinator_epoch: i32,
    pub metadata: SharedMetadata,
    /// The Complete move, pending on the metadata.
    pub completion: TxnTransitMetadata,
}

/// One marker for some partitions of one destination (Kafka's `TxnMarkerEntry`).
#[derive(Debug, Clone)]
struct TxnMarkerEntry {
    producer_id: i64,
    producer_epoch: i16,
    coordinator_epoch: i32,
    result: TransactionResult,
    partitions: Vec<TopicPartition>,
}

#[derive(Debug)]
struct QueuedMarker {
    txn: Arc<PendingCompleteTxn>,
    marker: TxnMarkerEntry,
}

/// Markers waiting, per `__transaction_state` partition.
type TxnPartitionQueues = HashMap<i32, Vec<QueuedMarker>>;

#[derive(Debug, Default)]
struct Queues {
    per_broker: HashMap<BrokerId, TxnPartitionQueues>,
    unknown_broker: TxnPartitionQueues,
    in_flight: HashSet<BrokerId>,
}

/// The manager; see the module doc.
pub struct TransactionMarkerChannelManager {
    state_manager: Arc<TransactionStateManager>,
    channel: Arc<dyn TxnMarkerChannel>,
    /// Kafka's `transactionsWithPendingMarkers`.
    pending: Mutex<HashMap<String, Arc<PendingCompleteTxn>>>,
    queues: Mutex<Queues>,
    /// Completions to append again (Kafka's `txnLogAppendRetryQueue`).
    retry_appends: Mutex<Vec<Arc<PendingCompleteTxn>>>,
    wakeup: Notify,
    me: Weak<TransactionMarkerChannelManager>,
    tasks: TaskTracker,
    shutdown: CancellationToken,
}

impl fmt::Debug for TransactionMarkerChannelManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransactionMarkerChannelManager")
            .field("pending", &lock(&self.pending).len())
            .finish_non_exhaustive()
    }
}

impl TransactionMarkerChannelManager {
    pub fn new(
        state_manager: Arc<TransactionStateManager>,
        channel: Arc<dyn TxnMarkerChannel>,
        tasks: TaskTracker,
        shutdown: CancellationToken,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| TransactionMarkerChannelManager {
            state_manager,
            channel,
            pending: Mutex::new(HashMap::new()),
            queues: Mutex::new(Queues::default()),
            retry_appends: Mutex::new(Vec::new()),
            wakeup: Notify::new(),
            me: me.clone(),
            tasks,
            shutdown,
        })
    }

    /// How many transactions wait for their markers.
    pub fn num_txns_with_pending_markers(&self) -> usize {
        lock(&self.pending).len()
    }

    /// Kafka's `addTxnMarkersToSend`: `metadata`'s transaction was prepared (its Prepare record
    /// committed) at `coordinator_epoch` and `completion` is pending on it; its markers go out
    /// to the partitions it holds.
    pub fn add_txn_markers_to_send(
        &self,
        coordinator_epoch: i32,
        result: TransactionResult,
        metadata: SharedMetadata,
        completion: TxnTransitMetadata,
    ) {
        let (transactional_id, producer_id, producer_epoch, partitions) = {
            let m = lock(&metadata);
            (
                m.transactional_id.clone(),
                m.producer_id,
                m.producer_epoch,
                m.partitions.clone(),
            )
        };
        let txn = Arc::new(PendingCompleteTxn {
            transactional_id: transactional_id.clone(),
            coordinator_epoch,
            metadata,
            completion,
        });
        if lock(&self.pending)
            .insert(transactional_id.clone(), Arc::clone(&txn))
            .is_some()
        {
            tracing::info!(%transactional_id, "replaced a transaction's pending markers");
        }
        let marker = TxnMarkerEntry {
            producer_id,
            producer_epoch,
            coordinator_epoch,
            result,
            partitions: Vec::new(),
        };
        self.add_txn_markers_to_broker_queue(&marker, &txn, partitions, true);
        self.maybe_write_txn_completion(&transactional_id);
    }

    /// Kafka's `addTxnMarkersToBrokerQueue`: queues `partitions`' markers to their leaders.
    fn add_txn_markers_to_broker_queue(
        &self,
        marker: &TxnMarkerEntry,
        txn: &Arc<PendingCompleteTxn>,
        partitions: impl IntoIterator<Item = TopicPartition>,
        wake: bool,
    ) {
        let txn_partition = self.state_manager.partition_for(&txn.transactional_id);
        let mut by_destination: HashMap<MarkerDestination, Vec<TopicPartition>> = HashMap::new();
        for tp in partitions {
            by_destination
                .entry(self.channel.destination(&tp))
                .or_default()
                .push(tp);
        }
        let mut deleted = Vec::new();
        {
            let mut queues = lock(&self.queues);
            for (destination, partitions) in by_destination {
                let queued = QueuedMarker {
                    txn: Arc::clone(txn),
                    marker: TxnMarkerEntry {
                        partitions,
                        ..marker.clone()
                    },
                };
                let queue = match destination {
                    MarkerDestination::Broker(broker) => {
                        queues.per_broker.entry(broker).or_default()
                    }
                    MarkerDestination::UnknownBroker => &mut queues.unknown_broker,
                    MarkerDestination::NoPartition => {
                        deleted.extend(queued.marker.partitions);
                        continue;
                    }
                };
                queue.entry(txn_partition).or_default().push(queued);
            }
        }
        if !deleted.is_empty() {
            self.skip_deleted_partitions(txn, &deleted);
        }
        if wake {
            self.wakeup.notify_one();
        }
    }

    /// Partitions the metadata no longer knows need no marker (they were deleted).
    fn skip_deleted_partitions(&self, txn: &Arc<PendingCompleteTxn>, deleted: &[TopicPartition]) {
        let id = &txn.transactional_id;
        let Some(metadata) = self.current_metadata(txn) else {
            self.remove_markers_for_txn(txn);
            return;
        };
        tracing::info!(transactional_id = %id, partitions = ?deleted,
            "no leader known for these partitions of a transaction: deleted, skipping their markers");
        {
            let mut m = lock(&metadata);
            for tp in deleted {
                if let Err(e) = m.remove_partition(tp) {
                    tracing::error!(%e, "cannot skip a deleted partition's marker");
                }
            }
        }
        self.maybe_write_txn_completion(id);
    }

    /// The id's metadata if it is still coordinated here at the transaction's coordinator
    /// epoch; `None` (logged) when not: the markers are obsolete.
    fn current_metadata(&self, txn: &PendingCompleteTxn) -> Option<SharedMetadata> {
        let id = &txn.transactional_id;
        match self.state_manager.get_transaction_state(id) {
            Ok(Some((epoch, metadata))) if epoch == txn.coordinator_epoch => Some(metadata),
            Ok(Some((epoch, _))) => {
                tracing::info!(transactional_id = %id, old = txn.coordinator_epoch, new = epoch,
                    "the coordinator epoch changed; cancelling the transaction's markers");
                None
            }
            Ok(None) => {
                tracing::error!(transactional_id = %id,
                    "a coordinated transaction has no metadata; cancelling its markers");
                None
            }
            Err(code) => {
                tracing::info!(transactional_id = %id, ?code,
                    "no longer coordinating the transaction here; cancelling its markers");
                None
            }
        }
    }

    /// Kafka's `maybeWriteTxnCompletion`: once no partition waits for a marker, the completion
    /// is appended.
    fn maybe_write_txn_completion(&self, transactional_id: &str) {
        let Some(txn) = lock(&self.pending).get(transactional_id).cloned() else {
            return;
        };
        if !lock(&txn.metadata).partitions.is_empty() {
            return;
        }
        // Whoever takes it out of the pending set appends the completion, once.
        {
            let mut pending = lock(&self.pending);
            if !pending
                .get(transactional_id)
                .is_some_and(|current| Arc::ptr_eq(current, &txn))
            {
                return;
            }
            pending.remove(transactional_id);
        }
        if self.current_metadata(&txn).is_some() {
            self.spawn_append(txn);
        }
    }

    /// Appends the completion in the background (Kafka's `tryAppendToLog`).
    fn spawn_append(&self, txn: Arc<PendingCompleteTxn>) {
        let Some(me) = self.me.upgrade() else { return };
        self.tasks
            .spawn(async move { me.try_append_to_log(txn).await });
    }

    async fn try_append_to_log(&self, txn: Arc<PendingCompleteTxn>) {
        let code = self
            .state_manager
            .append_transaction_to_log_retrying(
                &txn.transactional_id,
                txn.coordinator_epoch,
                &txn.completion,
                |e| e == ErrorCode::CoordinatorNotAvailable,
                &self.shutdown,
            )
            .await;
        let id = &txn.transactional_id;
        match code {
            ErrorCode::None => {
                tracing::debug!(transactional_id = %id, state = ?txn.completion.state,
                    "completed transaction");
            }
            ErrorCode::CoordinatorNotAvailable => {
                tracing::info!(transactional_id = %id,
                    "the transaction log is unavailable; appending the completion again");
                lock(&self.retry_appends).push(txn);
            }
            ErrorCode::NotCoordinator | ErrorCode::CoordinatorLoadInProgress => {
                tracing::info!(transactional_id = %id, ?code,
                    "not completing the transaction here: its partition moved or reloads");
            }
            other => {
                tracing::error!(transactional_id = %id, code = ?other,
                    "appending a transaction's completion failed");
            }
        }
    }

    /// Kafka's `removeMarkersForTxnTopicPartition`: the partition is loaded afresh or no
    /// longer coordinated here; its queued markers are dropped.
    pub fn remove_markers_for_txn_topic_partition(&self, txn_partition: i32) {
        let dropped: Vec<QueuedMarker> = {
            let mut queues = lock(&self.queues);
            let Queues {
                per_broker,
                unknown_broker,
                ..
            } = &mut *queues;
            per_broker
                .values_mut()
                .chain(std::iter::once(unknown_broker))
                .filter_map(|q| q.remove(&txn_partition))
                .flatten()
                .collect()
        };
        for queued in dropped {
            self.remove_markers_for_txn(&queued.txn);
        }
    }

    /// Kafka's `removeMarkersForTxn`: the transaction no longer waits here.
    fn remove_markers_for_txn(&self, txn: &Arc<PendingCompleteTxn>) {
        let mut pending = lock(&self.pending);
        if pending
            .get(&txn.transactional_id)
            .is_some_and(|current| Arc::ptr_eq(current, txn))
        {
            pending.remove(&txn.transactional_id);
        }
    }

    /// The send loop (Kafka's `InterBrokerSendThread`), until `shutdown`.
    pub async fn run(self: Arc<Self>) {
        loop {
            self.turn();
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = self.wakeup.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// One turn: failed completions again, the unknown-broker queue routed, and a request to
    /// every broker with markers queued and none in flight.
    fn turn(&self) {
        for txn in std::mem::take(&mut *lock(&self.retry_appends)) {
            self.spawn_append(txn);
        }
        let unknown = std::mem::take(&mut lock(&self.queues).unknown_broker);
        for queued in unknown.into_values().flatten() {
            let partitions = queued.marker.partitions.clone();
            self.add_txn_markers_to_broker_queue(&queued.marker, &queued.txn, partitions, false);
        }
        let requests: Vec<(BrokerId, Vec<QueuedMarker>)> = {
            let mut queues = lock(&self.queues);
            let Queues {
                per_broker,
                in_flight,
                ..
            } = &mut *queues;
            per_broker
                .iter_mut()
                .filter(|(broker, q)| !in_flight.contains(*broker) && !q.is_empty())
                .map(|(broker, q)| (*broker, q.drain().flat_map(|(_, v)| v).collect()))
                .collect::<Vec<_>>()
                .into_iter()
                .inspect(|(broker, _)| {
                    in_flight.insert(*broker);
                })
                .collect()
        };
        for (broker, entries) in requests {
            let Some(me) = self.me.upgrade() else { return };
            self.tasks.spawn(async move {
                let request = write_txn_markers_request(&entries);
                let outcome = me.channel.send(broker, request).await;
                me.on_complete(broker, entries, outcome);
                lock(&me.queues).in_flight.remove(&broker);
                me.wakeup.notify_one();
            });
        }
    }

    /// Kafka's `TransactionMarkerRequestCompletionHandler.onComplete`.
    fn on_complete(
        &self,
        broker: BrokerId,
        entries: Vec<QueuedMarker>,
        outcome: Result<WriteTxnMarkersResponse, MarkerSendError>,
    ) {
        let response = match outcome {
            Ok(response) => response,
            Err(e) => {
                tracing::info!(%e, "re-sending transaction markers after a lost request");
                for queued in entries {
                    if self.current_metadata(&queued.txn).is_none() {
                        self.remove_markers_for_txn(&queued.txn);
                        continue;
                    }
                    let partitions = queued.marker.partitions.clone();
                    self.add_txn_markers_to_broker_queue(
                        &queued.marker,
                        &queued.txn,
                        partitions,
                        false,
                    );
                }
                return;
            }
        };
        let errors = errors_by_producer_id(&response);
        for queued in entries {
            let QueuedMarker { txn, marker } = queued;
            let id = &txn.transactional_id;
            let Some(metadata) = self.current_metadata(&txn) else {
                self.remove_markers_for_txn(&txn);
                continue;
            };
            let Some(answers) = errors.get(&marker.producer_id) else {
                tracing::error!(broker, transactional_id = %id, producer_id = marker.producer_id,
                    "WriteTxnMarkers response without the producer; sending its markers again");
                self.add_txn_markers_to_broker_queue(
                    &marker,
                    &txn,
                    marker.partitions.clone(),
                    false,
                );
                continue;
            };
            let mut retry = BTreeSet::new();
            let mut give_up = false;
            {
                let mut m = lock(&metadata);
                for tp in &marker.partitions {
                    let code = answers
                        .get(tp)
                        .copied()
                        .unwrap_or(ErrorCode::UnknownServerError);
                    match code {
                        ErrorCode::None
                        | ErrorCode::UnsupportedForMessageFormat
                        | ErrorCode::UnsupportedVersion => {
                            if code != ErrorCode::None {
                                tracing::info!(transactional_id = %id, %tp, ?code,
                                    "a partition cannot take a marker; its producer wrote nothing there");
                            }
                            if let Err(e) = m.remove_partition(tp) {
                                tracing::error!(%e, "a marker was written for a transaction not being completed");
                            }
                        }
                        ErrorCode::UnknownTopicOrPartition
                        | ErrorCode::NotLeaderOrFollower
                        | ErrorCode::NotEnoughReplicas
                        | ErrorCode::NotEnoughReplicasAfterAppend
                        | ErrorCode::RequestTimedOut
                        | ErrorCode::KafkaStorageError => {
                            tracing::info!(transactional_id = %id, %tp, ?code,
                                "writing a transaction marker failed; retrying");
                            retry.insert(tp.clone());
                        }
                        ErrorCode::InvalidProducerEpoch
                        | ErrorCode::TransactionCoordinatorFenced => {
                            tracing::info!(transactional_id = %id, %tp, ?code,
                                "a transaction marker was refused for good; cancelling its markers");
                            give_up = true;
                        }
                        other => {
                            // Kafka's coordinator throws on these (CORRUPT_MESSAGE,
                            // MESSAGE_TOO_LARGE, ...), leaving the transaction to its next load.
                            tracing::error!(transactional_id = %id, %tp, code = ?other,
                                "unexpected error writing a transaction marker; cancelling its markers");
                            give_up = true;
                        }
                    }
                }
            }
            if give_up {
                self.remove_markers_for_txn(&txn);
            } else if !retry.is_empty() {
                self.add_txn_markers_to_broker_queue(&marker, &txn, retry, false);
            } else {
                self.maybe_write_txn_completion(id);
            }
        }
    }
}

/// One WriteTxnMarkers holding `entries`' markers.
fn write_txn_markers_request(entries: &[QueuedMarker]) -> WriteTxnMarkersRequest {
    let markers = entries
        .iter()
        .map(|q| {
            let mut topics: Vec<WritableTxnMarkerTopic> = Vec::new();
            for tp in &q.marker.partitions {
                match topics.iter_mut().find(|t| t.name == tp.topic.as_str()) {
                    Some(t) => t.partition_indexes.push(tp.partition),
                    None => topics.push(WritableTxnMarkerTopic {
                        name: StrBytes::from(tp.topic.as_str()),
                        partition_indexes: vec![tp.partition],
                        ..WritableTxnMarkerTopic::default()
                    }),
                }
            }
            WritableTxnMarker {
                producer_id: q.marker.producer_id,
                producer_epoch: q.marker.producer_epoch,
                transaction_result: q.marker.result.is_commit(),
                topics,
                coordinator_epoch: q.marker.coordinator_epoch,
                ..WritableTxnMarker::default()
            }
        })
        .collect();
    WriteTxnMarkersRequest {
        markers,
        ..WriteTxnMarkersRequest::default()
    }
}

/// The response's errors, by producer id and partition (Kafka's `errorsByProducerId`).
fn errors_by_producer_id(
    response: &WriteTxnMarkersResponse,
) -> HashMap<i64, HashMap<TopicPartition, ErrorCode>> {
    let mut errors: HashMap<i64, HashMap<TopicPartition, ErrorCode>> = HashMap::new();
    for marker in &response.markers {
        let by_partition = errors.entry(marker.producer_id).or_default();
        for topic in &marker.topics {
            let name = topic.name.to_string_lossy();
            for p in &topic.partitions {
                by_partition.insert(
                    TopicPartition::new(name.as_ref(), p.partition_index),
                    ErrorCode::from_code(p.error_code).unwrap_or(ErrorCode::UnknownServerError),
                );
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::write_txn_markers_response::{
        WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    };

    fn queued(producer_id: i64, partitions: &[(&str, i32)]) -> QueuedMarker {
        let metadata = super::super::transaction_metadata::TransactionMetadata::new("t", 1, 1, 0);
        QueuedMarker {
            txn: Arc::new(PendingCompleteTxn {
                transactional_id: "t".into(),
                coordinator_epoch: 4,
                completion: TxnTransitMetadata {
                    producer_id,
                    last_producer_id: -1,
                    producer_epoch: 2,
                    last_producer_epoch: -1,
                    txn_timeout_ms: 1,
                    state: super::super::transaction_state::TransactionState::CompleteAbort,
                    partitions: BTreeSet::new(),
                    txn_start_timestamp_ms: 0,
                    txn_last_update_timestamp_ms: 0,
                },
                metadata: Arc::new(Mutex::new(metadata)),
            }),
            marker: TxnMarkerEntry {
                producer_id,
                producer_epoch: 2,
                coordinator_epoch: 4,
                result: TransactionResult::Abort,
                partitions: partitions
                    .iter()
                    .map(|(t, p)| TopicPartition::new(*t, *p))
                    .collect(),
            },
        }
    }

    #[test]
    fn a_request_holds_one_marker_per_transaction_with_its_partitions_by_topic() {
        let request = write_txn_markers_request(&[
            queued(7, &[("a", 0), ("b", 1), ("a", 2)]),
            queued(8, &[("c", 0)]),
        ]);
        assert_eq!(request.markers.len(), 2);
        let m = &request.markers[0];
        assert_eq!(
            (
                m.producer_id,
                m.producer_epoch,
                m.transaction_result,
                m.coordinator_epoch
            ),
            (7, 2, false, 4)
        );
        let topics: Vec<(String, Vec<i32>)> = m
            .topics
            .iter()
            .map(|t| {
                (
                    t.name.to_string_lossy().into_owned(),
                    t.partition_indexes.clone(),
                )
            })
            .collect();
        assert_eq!(
            topics,
            vec![("a".into(), vec![0, 2]), ("b".into(), vec![1])]
        );
    }

    #[test]
    fn a_response_is_read_by_producer_and_partition() {
        let response = WriteTxnMarkersResponse {
            markers: vec![WritableTxnMarkerResult {
                producer_id: 7,
                topics: vec![WritableTxnMarkerTopicResult {
                    name: StrBytes::from("a"),
                    partitions: vec![
                        WritableTxnMarkerPartitionResult {
                            partition_index: 0,
                            error_code: ErrorCode::NotLeaderOrFollower.code(),
                            ..Default::default()
                        },
                        WritableTxnMarkerPartitionResult {
                            partition_index: 1,
                            error_code: 9999,
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let errors = errors_by_producer_id(&response);
        assert_eq!(
            errors[&7][&TopicPartition::new("a", 0)],
            ErrorCode::NotLeaderOrFollower
        );
        assert_eq!(
            errors[&7][&TopicPartition::new("a", 1)],
            ErrorCode::UnknownServerError,
            "a code Kafka does not define"
        );
        assert!(!errors.contains_key(&8));
    }
}
