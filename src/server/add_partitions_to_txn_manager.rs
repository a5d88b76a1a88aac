//! The leaders' half of transaction verification (KIP-890 part 1; Kafka's
//! `AddPartitionsToTxnManager`): before a partition leader appends the first batch of a
//! producer's transaction, it asks the transaction coordinator, with AddPartitionsToTxn v4
//! `VerifyOnly`, whether the partition is in the transaction. The coordinator is the leader of
//! the transactional id's `__transaction_state` partition, found in the metadata cache on the
//! inter-broker listener; none alive is COORDINATOR_NOT_AVAILABLE.
//!
//! As in Kafka, the questions to one coordinator go in batches: one request in flight per
//! coordinator, and the questions that arrive meanwhile wait and go together in the next one,
//! one entry per transactional id. A newer question for a transactional id already waiting
//! replaces the waiting one, which is answered INVALID_PRODUCER_EPOCH (the new one has a newer
//! epoch: the old producer is fenced) or NETWORK_EXCEPTION (the same epoch: a client retry);
//! a question with an older epoch than the waiting one is answered INVALID_PRODUCER_EPOCH at
//! once.
//!
//! Answers, per partition, in the leader's terms: the coordinator's PRODUCER_FENCED is
//! INVALID_PRODUCER_EPOCH (what producers expect from a leader); TRANSACTION_ABORTABLE stays for
//! clients that know it and is INVALID_TXN_STATE for older ones; a top-level
//! CLUSTER_AUTHORIZATION_FAILED (this broker may not ask) is INVALID_TXN_STATE; a lost
//! connection or a timeout is NETWORK_EXCEPTION. The produce handler maps the retriable ones on.
//!
//! Kafka's manager falls back to no verification when the coordinator's broker lacks v4 (a
//! version mismatch found by its client's ApiVersions); kcli's inter-broker client does not
//! negotiate, so verification is on only from `inter.broker.protocol.version` 3.6, where every
//! broker of the cluster serves v4. Unlike Kafka, each question keeps its own client's view of
//! TRANSACTION_ABORTABLE (Kafka takes it from whichever question opened the batch).
//!
//! `nodes` is never held across an await.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio_util::task::TaskTracker;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, TRANSACTION_STATE_TOPIC_NAME, TopicPartition};
use crate::network::ClientSecurity;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::add_partitions_to_txn_request::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnTopic, AddPartitionsToTxnTransaction,
};
use crate::protocol::messages::add_partitions_to_txn_response::AddPartitionsToTxnResponse;
use crate::protocol::messages::{RequestKind, ResponseKind};

use super::inter_broker_clients::InterBrokerClients;
use super::metadata_cache::MetadataCache;

/// The first AddPartitionsToTxn version with `VerifyOnly` (brokers only).
const VERIFY_ONLY_VERSION: i16 = 4;

/// The partitions that did not verify, with why (an empty map: all verified).
pub(crate) type VerificationErrors = HashMap<TopicPartition, ErrorCode>;

/// One producer's question.
#[derive(Debug, Clone)]
pub struct TxnVerification {
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub partitions: Vec<TopicPartition>,
    /// Whether the client knows TRANSACTION_ABORTABLE (Produce v11+, TxnOffsetCommit v4+);
    /// older ones get INVALID_TXN_STATE in its place (Kafka's `genericError` operation).
    pub supports_transaction_abortable: bool,
}

/// A question waiting for its coordinator's answer.
struct Waiting {
    question: TxnVerification,
    reply: oneshot::Sender<VerificationErrors>,
}

/// The questions for one coordinator broker.
#[derive(Default)]
struct NodeQueue {
    /// A request to this broker is in flight: new questions wait for the next one.
    in_flight: bool,
    /// Waiting questions, one per transactional id.
    waiting: Vec<Waiting>,
}

/// See the module doc.
pub struct AddPartitionsToTxnManager {
    brokers: InterBrokerClients,
    /// The transactional id's `__transaction_state` partition (the coordinator's hashing).
    partition_for: Box<dyn Fn(&str) -> i32 + Send + Sync>,
    tasks: TaskTracker,
    nodes: Mutex<HashMap<BrokerId, NodeQueue>>,
}

impl std::fmt::Debug for AddPartitionsToTxnManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddPartitionsToTxnManager")
            .field("brokers", &self.brokers)
            .finish_non_exhaustive()
    }
}

impl AddPartitionsToTxnManager {
    pub fn new(
        broker_id: BrokerId,
        listener: impl Into<String>,
        request_timeout: Duration,
        metadata_cache: Arc<MetadataCache>,
        security: ClientSecurity,
        partition_for: Box<dyn Fn(&str) -> i32 + Send + Sync>,
        tasks: TaskTracker,
    ) -> Self {
        AddPartitionsToTxnManager {
            brokers: InterBrokerClients::new(
                format!("broker-{broker_id}-add-partitions-to-txn-manager"),
                listener,
                request_timeout,
                metadata_cache,
                security,
            ),
            partition_for,
            tasks,
            nodes: Mutex::new(HashMap::new()),
        }
    }

    /// Asks the coordinator of `question`'s transactional id whether its partitions are in the
    /// transaction; the ones that are not, or could not be verified, with their errors.
    pub async fn verify_transaction(
        self: &Arc<Self>,
        question: TxnVerification,
    ) -> VerificationErrors {
        let Some(coordinator) = self.transaction_coordinator(&question.transactional_id) else {
            return all(&question.partitions, ErrorCode::CoordinatorNotAvailable);
        };
        let partitions = question.partitions.clone();
        let (reply, answer) = oneshot::channel();
        let start_sending = {
            let mut nodes = lock(&self.nodes);
            let queue = nodes.entry(coordinator).or_default();
            let same_id = queue
                .waiting
                .iter()
                .position(|w| w.question.transactional_id == question.transactional_id);
            if let Some(i) = same_id {
                let waiting_epoch = queue.waiting[i].question.producer_epoch;
                if question.producer_epoch < waiting_epoch {
                    return all(&question.partitions, ErrorCode::InvalidProducerEpoch);
                }
                let replaced = queue.waiting.swap_remove(i);
                let error = if waiting_epoch < question.producer_epoch {
                    ErrorCode::InvalidProducerEpoch
                } else {
                    ErrorCode::NetworkException
                };
                let _ = replaced
                    .reply
                    .send(all(&replaced.question.partitions, error));
            }
            queue.waiting.push(Waiting { question, reply });
            !std::mem::replace(&mut queue.in_flight, true)
        };
        tracing::debug!(
            coordinator,
            partitions = partitions.len(),
            start_sending,
            "verifying a transaction's partitions"
        );
        if start_sending {
            let me = Arc::clone(self);
            self.tasks
                .spawn(async move { me.send_batches(coordinator).await });
        }
        // The sender went away only when the broker is shutting down.
        answer
            .await
            .unwrap_or_else(|_| all(&partitions, ErrorCode::NetworkException))
    }

    /// The live broker leading the transactional id's `__transaction_state` partition.
    fn transaction_coordinator(&self, transactional_id: &str) -> Option<BrokerId> {
        let partition = (self.partition_for)(transactional_id);
        let leader = self
            .brokers
            .metadata_cache()
            .partition(TRANSACTION_STATE_TOPIC_NAME, partition)?
            .leader;
        self.brokers.is_reachable(leader).then_some(leader)
    }

    /// Sends the waiting questions for `coordinator`, a batch at a time, until none waits.
    async fn send_batches(self: Arc<Self>, coordinator: BrokerId) {
        loop {
            let batch = {
                let mut nodes = lock(&self.nodes);
                let Some(queue) = nodes.get_mut(&coordinator) else {
                    return;
                };
                if queue.waiting.is_empty() {
                    queue.in_flight = false;
                    return;
                }
                std::mem::take(&mut queue.waiting)
            };
            let outcome = self.send(coordinator, &batch).await;
            tracing::debug!(
                coordinator,
                transactions = batch.len(),
                ok = outcome.is_ok(),
                "verification answered"
            );
            for waiting in batch {
                let errors = match &outcome {
                    Ok(response) => answers_of(response, &waiting.question),
                    Err(error) => all(&waiting.question.partitions, *error),
                };
                let _ = waiting.reply.send(errors);
            }
        }
    }

    /// One request with every question of `batch`; a failure that answers them all alike.
    async fn send(
        &self,
        coordinator: BrokerId,
        batch: &[Waiting],
    ) -> Result<AddPartitionsToTxnResponse, ErrorCode> {
        let Some(address) = self.brokers.address(coordinator) else {
            return Err(ErrorCode::CoordinatorNotAvailable);
        };
        let request = AddPartitionsToTxnRequest {
            transactions: batch.iter().map(|w| transaction_of(&w.question)).collect(),
            ..AddPartitionsToTxnRequest::default()
        };
        let client = self.brokers.client(&address);
        match client
            .send(
                &RequestKind::AddPartitionsToTxn(request),
                VERIFY_ONLY_VERSION,
            )
            .await
        {
            Ok(ResponseKind::AddPartitionsToTxn(response)) => Ok(response),
            Ok(other) => {
                tracing::warn!(coordinator, api = ?other.api_key(),
                    "transaction verification answered with another response");
                Err(ErrorCode::NetworkException)
            }
            Err(err) => {
                tracing::warn!(coordinator, %err, "transaction verification failed");
                Err(ErrorCode::NetworkException)
            }
        }
    }
}

fn all(partitions: &[TopicPartition], error: ErrorCode) -> VerificationErrors {
    partitions.iter().map(|tp| (tp.clone(), error)).collect()
}

/// The request entry of one question: its partitions grouped by topic, `VerifyOnly` set.
fn transaction_of(question: &TxnVerification) -> AddPartitionsToTxnTransaction {
    let mut topics: Vec<AddPartitionsToTxnTopic> = Vec::new();
    for tp in &question.partitions {
        match topics.iter_mut().find(|t| t.name == *tp.topic.as_str()) {
            Some(topic) => topic.partitions.push(tp.partition),
            None => topics.push(AddPartitionsToTxnTopic {
                name: StrBytes::from(tp.topic.clone()),
                partitions: vec![tp.partition],
                ..AddPartitionsToTxnTopic::default()
            }),
        }
    }
    AddPartitionsToTxnTransaction {
        transactional_id: StrBytes::from(question.transactional_id.clone()),
        producer_id: question.producer_id,
        producer_epoch: question.producer_epoch,
        verify_only: true,
        topics,
        ..AddPartitionsToTxnTransaction::default()
    }
}

/// What the coordinator's `response` says of `question`, in the leader's terms (module doc). A
/// partition the coordinator did not mention verified, as in Kafka; a question it did not
/// answer at all is a retriable failure (Kafka would leave it waiting).
fn answers_of(
    response: &AddPartitionsToTxnResponse,
    question: &TxnVerification,
) -> VerificationErrors {
    let top = ErrorCode::from_code(response.error_code).unwrap_or(ErrorCode::UnknownServerError);
    if top != ErrorCode::None {
        let error = if top == ErrorCode::ClusterAuthorizationFailed {
            ErrorCode::InvalidTxnState
        } else {
            top
        };
        return all(&question.partitions, error);
    }
    let Some(result) = response
        .results_by_transaction
        .iter()
        .find(|r| r.transactional_id == *question.transactional_id.as_str())
    else {
        return all(&question.partitions, ErrorCode::NetworkException);
    };
    let mut errors = VerificationErrors::new();
    for topic in &result.topic_results {
        for partition in &topic.results_by_partition {
            let code = ErrorCode::from_code(partition.partition_error_code)
                .unwrap_or(ErrorCode::UnknownServerError);
            let error = match code {
                ErrorCode::None => continue,
                ErrorCode::ProducerFenced => ErrorCode::InvalidProducerEpoch,
                ErrorCode::TransactionAbortable if !question.supports_transaction_abortable => {
                    ErrorCode::InvalidTxnState
                }
                other => other,
            };
            let tp = TopicPartition::new(topic.name.to_string(), partition.partition_index);
            errors.insert(tp, error);
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::add_partitions_to_txn_response::{
        AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
    };

    fn question(abortable: bool) -> TxnVerification {
        TxnVerification {
            transactional_id: "t".into(),
            producer_id: 5,
            producer_epoch: 1,
            partitions: vec![
                TopicPartition::new("a", 0),
                TopicPartition::new("a", 1),
                TopicPartition::new("b", 0),
            ],
            supports_transaction_abortable: abortable,
        }
    }

    fn response(codes: &[(&str, i32, ErrorCode)]) -> AddPartitionsToTxnResponse {
        AddPartitionsToTxnResponse {
            results_by_transaction: vec![AddPartitionsToTxnResult {
                transactional_id: StrBytes::from("t"),
                topic_results: codes
                    .iter()
                    .map(|(topic, p, code)| AddPartitionsToTxnTopicResult {
                        name: StrBytes::from(topic.to_string()),
                        results_by_partition: vec![AddPartitionsToTxnPartitionResult {
                            partition_index: *p,
                            partition_error_code: code.code(),
                            ..Default::default()
                        }],
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_question_groups_its_partitions_by_topic_and_only_verifies() {
        let t = transaction_of(&question(true));
        assert!(t.verify_only);
        assert_eq!((t.producer_id, t.producer_epoch), (5, 1));
        let topics: Vec<(String, Vec<i32>)> = t
            .topics
            .iter()
            .map(|t| (t.name.to_string(), t.partitions.clone()))
            .collect();
        assert_eq!(
            topics,
            vec![("a".to_string(), vec![0, 1]), ("b".to_string(), vec![0])]
        );
    }

    #[test]
    fn coordinator_answers_become_the_errors_a_leader_gives() {
        let r = response(&[
            ("a", 0, ErrorCode::None),
            ("a", 1, ErrorCode::ProducerFenced),
            ("b", 0, ErrorCode::TransactionAbortable),
        ]);
        let errors = answers_of(&r, &question(true));
        assert_eq!(errors.len(), 2);
        assert_eq!(
            errors[&TopicPartition::new("a", 1)],
            ErrorCode::InvalidProducerEpoch
        );
        assert_eq!(
            errors[&TopicPartition::new("b", 0)],
            ErrorCode::TransactionAbortable
        );
        let older = answers_of(&r, &question(false));
        assert_eq!(
            older[&TopicPartition::new("b", 0)],
            ErrorCode::InvalidTxnState
        );
        // A top-level error answers every partition; this broker's missing permission is not
        // the client's to see.
        let mut denied = response(&[]);
        denied.error_code = ErrorCode::ClusterAuthorizationFailed.code();
        let errors = answers_of(&denied, &question(true));
        assert_eq!(errors.len(), 3);
        assert!(errors.values().all(|e| *e == ErrorCode::InvalidTxnState));
    }
}
