//! Kafka's `DefaultAlterPartitionManager`: the leaders' ISR proposals, batched into
//! AlterPartition requests to the active controller, one request in flight at a time.
//!
//! A proposal waits in `unsent` until a request carries it and the controller answers for its
//! partition; then its callback gets the answer. A proposal the answer leaves out, or every
//! proposal of a request that failed as a whole (no controller known, a lost connection, a
//! top-level error such as NOT_CONTROLLER), stays queued and goes again after
//! `retry.backoff.ms`.
//!
//! A proposal carries the broker epoch of the registration its leadership was granted to (the
//! LeaderAndIsr's), else the broker's epoch when it is submitted, and a request carries
//! proposals of one epoch. So a leader that lost its session (paused past it, say) and
//! re-registered never has a proposal of its old incarnation applied: the controller answers
//! STALE_BROKER_EPOCH, and the proposal's callback gets that error (the partition then waits
//! for the controller's next LeaderAndIsr). A STALE_BROKER_EPOCH for the current epoch means
//! the controller has not seen this registration yet: sent again.
//!
//! A request names its topics by id (v3, the ISR with broker epochs) when every proposal in it
//! has one, and by name at v1 when one has none (a topic the controller has not given an id
//! yet), as Kafka's `buildRequest` decides; its answers are matched back to partitions by the
//! same key.
//!
//! Lock order: the queue's std mutex is never held across a send or a callback (callbacks may
//! submit again).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, LeaderAndIsr, LeaderRecoveryState, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_request::{
    AlterPartitionRequest, BrokerState, PartitionData, TopicData,
};
use crate::protocol::messages::alter_partition_response::AlterPartitionResponse;
use crate::replication::alter_partition::{
    AlterPartitionCallback, AlterPartitionItem, AlterPartitionManager, AlterPartitionResult,
};

use super::broker_epoch_manager::BrokerEpochManager;
use super::broker_to_controller_channel::{
    ALTER_PARTITION_VERSION, BrokerToControllerChannelManager, BrokerToControllerError,
};

/// Kafka's `retry.backoff.ms` default: the wait before a failed request goes again.
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// The version a request goes at when a topic in it has no id: the last that names topics.
const BY_NAME_VERSION: i16 = 1;

/// How the manager reaches the controller; the channel manager in a broker, a fake in tests.
pub(crate) trait AlterPartitionChannel: Send + Sync + std::fmt::Debug {
    fn send(
        &self,
        request: AlterPartitionRequest,
        version: i16,
    ) -> crate::server::broker_to_controller_channel::ControllerFuture<'_, AlterPartitionResponse>;
}

impl AlterPartitionChannel for BrokerToControllerChannelManager {
    fn send(
        &self,
        request: AlterPartitionRequest,
        version: i16,
    ) -> crate::server::broker_to_controller_channel::ControllerFuture<'_, AlterPartitionResponse>
    {
        Box::pin(self.alter_partition(request, version))
    }
}

/// A queued proposal: the item, the broker epoch it was made under, its callback.
type Queued = (AlterPartitionItem, i64, AlterPartitionCallback);

/// The broker's AlterPartition sender; see the module doc.
pub(crate) struct DefaultAlterPartitionManager {
    broker_id: BrokerId,
    epochs: Arc<BrokerEpochManager>,
    channel: Arc<dyn AlterPartitionChannel>,
    unsent: Mutex<BTreeMap<TopicPartition, Queued>>,
    queued: Notify,
}

impl std::fmt::Debug for DefaultAlterPartitionManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DefaultAlterPartitionManager")
            .field("broker_id", &self.broker_id)
            .field("unsent", &lock(&self.unsent).len())
            .finish()
    }
}

impl AlterPartitionManager for DefaultAlterPartitionManager {
    fn submit(&self, item: AlterPartitionItem, callback: AlterPartitionCallback) {
        let refused = {
            let mut unsent = lock(&self.unsent);
            if unsent.contains_key(&item.topic_partition) {
                Some(callback)
            } else {
                let epoch = item
                    .broker_epoch
                    .unwrap_or_else(|| self.epochs.broker_epoch());
                unsent.insert(item.topic_partition.clone(), (item, epoch, callback));
                None
            }
        };
        match refused {
            Some(callback) => callback(Err(ErrorCode::OperationNotAttempted)),
            None => self.queued.notify_one(),
        }
    }
}

impl DefaultAlterPartitionManager {
    pub(crate) fn new(
        broker_id: BrokerId,
        epochs: Arc<BrokerEpochManager>,
        channel: Arc<dyn AlterPartitionChannel>,
    ) -> Self {
        DefaultAlterPartitionManager {
            broker_id,
            epochs,
            channel,
            unsent: Mutex::new(BTreeMap::new()),
            queued: Notify::new(),
        }
    }

    /// Sends the queued proposals until `stop`, one request at a time.
    pub(crate) async fn run(self: Arc<Self>, stop: CancellationToken) {
        loop {
            let wait = tokio::select! {
                _ = stop.cancelled() => return,
                _ = self.queued.notified() => self.send_queued().await,
            };
            if let Some(backoff) = wait {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                // What failed is still queued.
                self.queued.notify_one();
            }
        }
    }

    /// One request with the queued proposals of the oldest broker epoch; the backoff to wait
    /// when something must go again.
    async fn send_queued(&self) -> Option<Duration> {
        let (request, sent) = {
            let unsent = lock(&self.unsent);
            let epoch = unsent.values().map(|(_, epoch, _)| *epoch).min()?;
            let batch: Vec<&AlterPartitionItem> = unsent
                .values()
                .filter(|(_, e, _)| *e == epoch)
                .map(|(item, _, _)| item)
                .collect();
            let sent: Vec<(TopicPartition, LeaderAndIsr)> = batch
                .iter()
                .map(|item| (item.topic_partition.clone(), item.leader_and_isr.clone()))
                .collect();
            (self.build_request(epoch, &batch), sent)
        };
        let OutgoingRequest {
            request,
            version,
            names_by_id,
        } = request;
        let broker_epoch = request.broker_epoch;
        let response = match self.channel.send(request, version).await {
            Ok(response) => response,
            Err(e) => {
                log_failure(&e);
                return Some(RETRY_BACKOFF);
            }
        };
        let answers = match ErrorCode::from_code(response.error_code) {
            Some(ErrorCode::None) => answers(&response, version, &names_by_id),
            Some(ErrorCode::StaleBrokerEpoch) if broker_epoch < self.epochs.broker_epoch() => {
                tracing::warn!(error = ?ErrorCode::StaleBrokerEpoch, broker_epoch,
                    "AlterPartition of a previous registration refused: STALE_BROKER_EPOCH");
                sent.iter()
                    .map(|(tp, _)| (tp.clone(), Err(ErrorCode::StaleBrokerEpoch)))
                    .collect()
            }
            code => {
                tracing::warn!(error = ?code.unwrap_or(ErrorCode::UnknownServerError),
                    code = response.error_code, broker_epoch,
                    "the controller refused AlterPartition; sending it again");
                return Some(RETRY_BACKOFF);
            }
        };
        // Complete the proposals that were sent and answered (a proposal submitted again
        // meanwhile is another one and stays).
        let completed: Vec<(AlterPartitionCallback, AlterPartitionResult)> = {
            let mut unsent = lock(&self.unsent);
            sent.into_iter()
                .filter_map(|(tp, leader_and_isr)| {
                    let answer = answers.get(&tp)?.clone();
                    let still_ours = unsent.get(&tp).is_some_and(|(item, epoch, _)| {
                        item.leader_and_isr == leader_and_isr && *epoch == broker_epoch
                    });
                    if !still_ours {
                        return None;
                    }
                    let (_, _, callback) = unsent.remove(&tp)?;
                    Some((callback, answer))
                })
                .collect()
        };
        let left_out = !lock(&self.unsent).is_empty();
        for (callback, answer) in completed {
            callback(answer);
        }
        left_out.then_some(RETRY_BACKOFF)
    }

    /// The request for `items`, at v3 when every item's topic has an id, else at v1 (see the
    /// module doc).
    fn build_request(&self, broker_epoch: i64, items: &[&AlterPartitionItem]) -> OutgoingRequest {
        let by_id = items.iter().all(|item| item.topic_id.is_some());
        let mut topics: BTreeMap<&str, TopicData> = BTreeMap::new();
        let mut names_by_id = BTreeMap::new();
        for item in items {
            let name = item.topic_partition.topic.as_str();
            let topic_id = item.topic_id.unwrap_or_default();
            if let Some(id) = item.topic_id {
                names_by_id.insert(id, name.to_string());
            }
            let state = &item.leader_and_isr;
            let topic = topics.entry(name).or_insert_with(|| TopicData {
                topic_name: name.into(),
                topic_id,
                ..TopicData::default()
            });
            let mut partition = PartitionData {
                partition_index: item.topic_partition.partition,
                leader_epoch: state.leader_epoch,
                leader_recovery_state: match state.leader_recovery_state {
                    LeaderRecoveryState::Recovered => 0,
                    LeaderRecoveryState::Recovering => 1,
                },
                partition_epoch: state.partition_epoch,
                ..PartitionData::default()
            };
            if by_id {
                // v3 carries the ISR with broker epochs only (`new_isr` is v0-2).
                partition.new_isr_with_epochs = state
                    .isr
                    .iter()
                    .map(|id| BrokerState {
                        broker_id: *id,
                        // The controller of ZooKeeper mode does not check followers' epochs;
                        // this leader knows only its own.
                        broker_epoch: if *id == self.broker_id {
                            broker_epoch
                        } else {
                            -1
                        },
                        ..BrokerState::default()
                    })
                    .collect();
            } else {
                partition.new_isr = state.isr.clone();
            }
            topic.partitions.push(partition);
        }
        OutgoingRequest {
            request: AlterPartitionRequest {
                broker_id: self.broker_id,
                broker_epoch,
                topics: topics.into_values().collect(),
                ..AlterPartitionRequest::default()
            },
            version: if by_id {
                ALTER_PARTITION_VERSION
            } else {
                BY_NAME_VERSION
            },
            names_by_id,
        }
    }
}

/// A request ready to go: the version it goes at and, to read its answers by, the topic names of
/// the ids in it (the metadata may change before the answer comes, as Kafka's
/// `topicNamesByIds` notes).
struct OutgoingRequest {
    request: AlterPartitionRequest,
    version: i16,
    names_by_id: BTreeMap<Uuid, String>,
}

fn log_failure(e: &BrokerToControllerError) {
    match e {
        BrokerToControllerError::NoController => {
            tracing::debug!(%e, "AlterPartition waits for a controller")
        }
        _ => tracing::warn!(%e, "AlterPartition not sent; sending it again"),
    }
}

/// The response's per-partition answers by partition: its topics named by id from v2 on (an
/// id this request did not carry is left out), by name before.
fn answers(
    response: &AlterPartitionResponse,
    version: i16,
    names_by_id: &BTreeMap<Uuid, String>,
) -> BTreeMap<TopicPartition, AlterPartitionResult> {
    let mut answers = BTreeMap::new();
    for topic in &response.topics {
        let name = if version >= 2 {
            match names_by_id.get(&topic.topic_id) {
                Some(name) => name.clone(),
                None => continue,
            }
        } else {
            topic.topic_name.to_string_lossy().into_owned()
        };
        for p in &topic.partitions {
            let answer = if p.error_code != ErrorCode::None.code() {
                Err(ErrorCode::from_code(p.error_code).unwrap_or(ErrorCode::UnknownServerError))
            } else {
                Ok(LeaderAndIsr {
                    leader: p.leader_id,
                    leader_epoch: p.leader_epoch,
                    isr: p.isr.clone(),
                    partition_epoch: p.partition_epoch,
                    leader_recovery_state: if p.leader_recovery_state == 1 {
                        LeaderRecoveryState::Recovering
                    } else {
                        LeaderRecoveryState::Recovered
                    },
                })
            };
            answers.insert(TopicPartition::new(name.clone(), p.partition_index), answer);
        }
    }
    answers
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::oneshot;

    use super::*;
    use crate::protocol::messages::alter_partition_response::{
        PartitionData as AnswerData, TopicData as AnswerTopic,
    };

    /// How the fake controller answers one request at a version.
    type Answer = fn(&AlterPartitionRequest, i16) -> AlterPartitionResponse;

    /// Answers each request with the next scripted function of it, counting requests.
    #[derive(Default)]
    struct FakeController {
        script: Mutex<VecDeque<Answer>>,
        requests: Mutex<Vec<(AlterPartitionRequest, i16)>>,
        sent: AtomicUsize,
    }

    impl std::fmt::Debug for FakeController {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("FakeController")
        }
    }

    impl AlterPartitionChannel for FakeController {
        fn send(
            &self,
            request: AlterPartitionRequest,
            version: i16,
        ) -> crate::server::broker_to_controller_channel::ControllerFuture<'_, AlterPartitionResponse>
        {
            Box::pin(async move {
                self.sent.fetch_add(1, Ordering::SeqCst);
                let answer = lock(&self.script).pop_front();
                lock(&self.requests).push((request.clone(), version));
                let answer = answer.ok_or(BrokerToControllerError::NoController)?;
                Ok(answer(&request, version))
            })
        }
    }

    /// Every partition of `request` accepted, its partition epoch bumped; topics answered by id
    /// or by name as `version` has them.
    fn accept_all(request: &AlterPartitionRequest, version: i16) -> AlterPartitionResponse {
        AlterPartitionResponse {
            topics: request
                .topics
                .iter()
                .map(|t| AnswerTopic {
                    topic_id: if version >= 2 {
                        t.topic_id
                    } else {
                        Uuid::nil()
                    },
                    topic_name: if version >= 2 {
                        Default::default()
                    } else {
                        t.topic_name.clone()
                    },
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| AnswerData {
                            partition_index: p.partition_index,
                            leader_id: 1,
                            leader_epoch: p.leader_epoch,
                            isr: if version >= 3 {
                                p.new_isr_with_epochs.iter().map(|b| b.broker_id).collect()
                            } else {
                                p.new_isr.clone()
                            },
                            partition_epoch: p.partition_epoch + 1,
                            ..AnswerData::default()
                        })
                        .collect(),
                    ..AnswerTopic::default()
                })
                .collect(),
            ..AlterPartitionResponse::default()
        }
    }

    fn top_level(code: ErrorCode) -> AlterPartitionResponse {
        AlterPartitionResponse {
            error_code: code.code(),
            ..AlterPartitionResponse::default()
        }
    }

    fn item(partition: i32, broker_epoch: Option<i64>) -> AlterPartitionItem {
        AlterPartitionItem {
            topic_partition: TopicPartition::new("t", partition),
            topic_id: Some(Uuid::from_u128(9)),
            leader_and_isr: LeaderAndIsr {
                leader_epoch: 2,
                partition_epoch: 4,
                ..LeaderAndIsr::new(1, vec![1, 2])
            },
            broker_epoch,
        }
    }

    fn submit(
        manager: &DefaultAlterPartitionManager,
        item: AlterPartitionItem,
    ) -> oneshot::Receiver<AlterPartitionResult> {
        let (tx, rx) = oneshot::channel();
        manager.submit(
            item,
            Box::new(move |result| {
                let _ = tx.send(result);
            }),
        );
        rx
    }

    fn manager(controller: &Arc<FakeController>, epoch: i64) -> Arc<DefaultAlterPartitionManager> {
        let epochs = Arc::new(BrokerEpochManager::default());
        epochs.set_broker_epoch(epoch);
        Arc::new(DefaultAlterPartitionManager::new(
            1,
            epochs,
            Arc::clone(controller) as Arc<dyn AlterPartitionChannel>,
        ))
    }

    #[tokio::test(start_paused = true)]
    async fn proposals_go_in_one_request_and_each_gets_its_partitions_answer() {
        let controller = Arc::new(FakeController::default());
        lock(&controller.script).push_back(accept_all);
        let m = manager(&controller, 50);
        let a = submit(&m, item(0, None));
        let b = submit(&m, item(1, Some(50)));
        // A second proposal for a queued partition is refused at once.
        let refused = submit(&m, item(0, None)).await.unwrap();
        assert_eq!(refused, Err(ErrorCode::OperationNotAttempted));
        let stop = CancellationToken::new();
        let task = tokio::spawn(Arc::clone(&m).run(stop.clone()));
        assert_eq!(a.await.unwrap().unwrap().partition_epoch, 5);
        assert_eq!(b.await.unwrap().unwrap().isr, vec![1, 2]);
        let requests = lock(&controller.requests).clone();
        assert_eq!(requests.len(), 1);
        let (request, version) = &requests[0];
        assert_eq!(*version, 3);
        let requests = [request];
        assert_eq!(requests[0].broker_epoch, 50);
        assert_eq!(requests[0].topics[0].partitions.len(), 2);
        let p = &requests[0].topics[0].partitions[0];
        assert!(p.new_isr.is_empty(), "v3 carries the ISR with epochs only");
        assert_eq!(
            p.new_isr_with_epochs[0].broker_epoch, 50,
            "the leader's own epoch"
        );
        assert_eq!(p.new_isr_with_epochs[1].broker_epoch, -1);
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_or_failed_request_is_sent_again_after_the_backoff() {
        let controller = Arc::new(FakeController::default());
        {
            let mut script = lock(&controller.script);
            script.push_back(|_, _| top_level(ErrorCode::NotController));
            script.push_back(|_, _| top_level(ErrorCode::StaleBrokerEpoch));
            script.push_back(accept_all);
        }
        let m = manager(&controller, 50);
        let answer = submit(&m, item(0, None));
        let stop = CancellationToken::new();
        let task = tokio::spawn(Arc::clone(&m).run(stop.clone()));
        // NOT_CONTROLLER, then STALE_BROKER_EPOCH for the current epoch (the controller has
        // not seen this registration yet), then accepted.
        assert_eq!(answer.await.unwrap().unwrap().partition_epoch, 5);
        assert_eq!(controller.sent.load(Ordering::SeqCst), 3);
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_proposal_of_an_earlier_registration_is_answered_stale_broker_epoch() {
        let controller = Arc::new(FakeController::default());
        {
            let mut script = lock(&controller.script);
            script.push_back(|_, _| top_level(ErrorCode::StaleBrokerEpoch));
            script.push_back(accept_all);
        }
        // The broker re-registered (epoch 60); a leadership granted at epoch 50 proposes.
        let m = manager(&controller, 60);
        let old = submit(&m, item(0, Some(50)));
        let new = submit(&m, item(1, Some(60)));
        let stop = CancellationToken::new();
        let task = tokio::spawn(Arc::clone(&m).run(stop.clone()));
        assert_eq!(old.await.unwrap(), Err(ErrorCode::StaleBrokerEpoch));
        assert!(new.await.unwrap().is_ok());
        let epochs: Vec<i64> = lock(&controller.requests)
            .iter()
            .map(|(r, _)| r.broker_epoch)
            .collect();
        assert_eq!(
            epochs,
            vec![50, 60],
            "one request per epoch, the oldest first"
        );
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_topic_without_an_id_goes_by_name_at_v1_each_topic_apart() {
        let controller = Arc::new(FakeController::default());
        lock(&controller.script).push_back(accept_all);
        let m = manager(&controller, 50);
        let without_id = |topic: &str, partition| AlterPartitionItem {
            topic_partition: TopicPartition::new(topic, partition),
            topic_id: None,
            ..item(partition, None)
        };
        let a = submit(&m, without_id("a", 0));
        let b = submit(&m, without_id("b", 0));
        let c = submit(&m, item(3, None));
        let stop = CancellationToken::new();
        let task = tokio::spawn(Arc::clone(&m).run(stop.clone()));
        assert_eq!(a.await.unwrap().unwrap().partition_epoch, 5);
        assert_eq!(b.await.unwrap().unwrap().isr, vec![1, 2]);
        assert!(c.await.unwrap().is_ok());
        let requests = lock(&controller.requests).clone();
        assert_eq!(requests.len(), 1);
        let (request, version) = &requests[0];
        assert_eq!(
            *version, 1,
            "one topic without an id sends the whole request by name"
        );
        let names: Vec<String> = request
            .topics
            .iter()
            .map(|t| t.topic_name.to_string())
            .collect();
        assert_eq!(names, ["a", "b", "t"], "topics without ids are not merged");
        let p = &request.topics[0].partitions[0];
        assert_eq!(p.new_isr, vec![1, 2], "v1 carries the ISR without epochs");
        assert!(p.new_isr_with_epochs.is_empty());
        stop.cancel();
        task.await.unwrap();
    }
}
