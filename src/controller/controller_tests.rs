//! The in-process controller harness: controllers over the embedded store, brokers registered
//! as ephemerals of their own sessions, and a fake broker channel that records every request
//! and answers it. The tests assert the sequences of LeaderAndIsr, UpdateMetadata and
//! StopReplica that creation, broker loss, broker return, failover and deletion produce.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::leader_and_isr_response::{
    LeaderAndIsrPartitionError, LeaderAndIsrResponse, LeaderAndIsrTopicError,
};
use crate::protocol::messages::stop_replica_response::{
    StopReplicaPartitionError, StopReplicaResponse,
};
use crate::protocol::messages::update_metadata_response::UpdateMetadataResponse;
use crate::zk::kafka_zk_client::{KafkaZkClient, KafkaZkError};
use crate::zk::zk_data::{self, BrokerRegistration, EndPoint, TopicAssignment};
use crate::zk::{CreateMode, EmbeddedSession, EmbeddedStore, ZkClient, recipes};

use super::channel_manager::{BrokerChannel, BrokerNode, ChannelFuture, ControllerResponse};
use super::controller_event_manager::ControllerEvent;
use super::controller_request_batch::{BatchConfig, ControllerRequest};
use super::inter_broker_versions::{ControllerRequestVersions, InterBrokerProtocolVersion};
use super::kafka_controller::{ControllerConfig, KafkaController};

/// Records (broker, request) in send order and answers with no errors, except
/// KAFKA_STORAGE_ERROR for the replicas in `offline_dirs` (a broker's failed log dir).
#[derive(Debug, Default)]
pub(super) struct RecordingChannel {
    pub(super) sent: Mutex<Vec<(BrokerId, ControllerRequest)>>,
    pub(super) offline_dirs: Mutex<std::collections::BTreeSet<(BrokerId, TopicPartition)>>,
}

impl BrokerChannel for RecordingChannel {
    fn send<'a>(
        &'a self,
        node: &'a BrokerNode,
        request: &'a ControllerRequest,
    ) -> ChannelFuture<'a> {
        self.sent.lock().unwrap().push((node.id, request.clone()));
        let response = match request {
            ControllerRequest::LeaderAndIsr { request, .. } => {
                let offline = self.offline_dirs.lock().unwrap();
                ControllerResponse::LeaderAndIsr(LeaderAndIsrResponse {
                    topics: request
                        .topic_states
                        .iter()
                        .map(|t| LeaderAndIsrTopicError {
                            topic_id: t.topic_id,
                            partition_errors: t
                                .partition_states
                                .iter()
                                .map(|p| {
                                    let tp = TopicPartition::new(
                                        t.topic_name.to_string(),
                                        p.partition_index,
                                    );
                                    LeaderAndIsrPartitionError {
                                        partition_index: p.partition_index,
                                        error_code: if offline.contains(&(node.id, tp)) {
                                            ErrorCode::KafkaStorageError.code()
                                        } else {
                                            0
                                        },
                                        ..LeaderAndIsrPartitionError::default()
                                    }
                                })
                                .collect(),
                            ..LeaderAndIsrTopicError::default()
                        })
                        .collect(),
                    ..LeaderAndIsrResponse::default()
                })
            }
            ControllerRequest::UpdateMetadata { .. } => {
                ControllerResponse::UpdateMetadata(UpdateMetadataResponse::default())
            }
            ControllerRequest::StopReplica { request, .. } => {
                ControllerResponse::StopReplica(StopReplicaResponse {
                    partition_errors: request
                        .topic_states
                        .iter()
                        .flat_map(|t| {
                            t.partition_states
                                .iter()
                                .map(|p| StopReplicaPartitionError {
                                    topic_name: t.topic_name.clone(),
                                    partition_index: p.partition_index,
                                    ..StopReplicaPartitionError::default()
                                })
                        })
                        .collect(),
                    ..StopReplicaResponse::default()
                })
            }
        };
        Box::pin(async move { Ok(response) })
    }
}

impl RecordingChannel {
    pub(super) fn take(&self) -> Vec<(BrokerId, ControllerRequest)> {
        std::mem::take(&mut *self.sent.lock().unwrap())
    }
}

pub(super) struct Harness {
    pub(super) store: EmbeddedStore,
    pub(super) channel: Arc<RecordingChannel>,
    brokers: BTreeMap<BrokerId, Arc<EmbeddedSession>>,
}

fn registration(id: BrokerId) -> BrokerRegistration {
    BrokerRegistration {
        endpoints: vec![EndPoint {
            listener_name: "PLAINTEXT".into(),
            host: "127.0.0.1".into(),
            port: 9000 + id,
            security_protocol: "PLAINTEXT".into(),
        }],
        rack: None,
        jmx_port: -1,
        timestamp_ms: 0,
    }
}

impl Harness {
    pub(super) async fn new(brokers: &[BrokerId]) -> Harness {
        let store = EmbeddedStore::in_memory();
        recipes::ensure_persistent_paths(&store.session())
            .await
            .unwrap();
        let mut h = Harness {
            store,
            channel: Arc::new(RecordingChannel::default()),
            brokers: BTreeMap::new(),
        };
        for id in brokers {
            h.start_broker(*id).await;
        }
        h
    }

    pub(super) async fn start_broker(&mut self, id: BrokerId) {
        let session = Arc::new(self.store.session());
        session
            .create(
                &zk_data::broker_id_path(id),
                &registration(id).encode(),
                CreateMode::Ephemeral,
            )
            .await
            .unwrap();
        self.brokers.insert(id, session);
    }

    /// Ends a broker's session: its registration (and `/controller`, if it held it) go.
    pub(super) async fn kill_broker(&mut self, id: BrokerId) {
        self.brokers.remove(&id).unwrap().close().await.unwrap();
    }

    pub(super) fn controller(&self, id: BrokerId) -> KafkaController {
        let zk: Arc<dyn ZkClient> = self.brokers[&id].clone();
        let config = ControllerConfig {
            batch: BatchConfig {
                controller_id: id,
                versions: ControllerRequestVersions::for_ibp(InterBrokerProtocolVersion::LATEST),
                inter_broker_listener: "PLAINTEXT".into(),
            },
            unclean_leader_election_enable: false,
            delete_topic_enable: true,
            auto_leader_rebalance_enable: true,
            leader_imbalance_check_interval: Duration::from_secs(300),
            leader_imbalance_per_broker_percentage: 10,
            // A small window, so that the tests' batches take several.
            zookeeper_max_in_flight_requests: 3,
        };
        let channel: Arc<dyn BrokerChannel> = self.channel.clone();
        KafkaController::new(config, KafkaZkClient::new(zk), channel, Arc::new(|| 0)).0
    }

    pub(super) async fn create_topic(&self, topic: &str, assignment: &[&[BrokerId]]) {
        let assignment = TopicAssignment {
            topic_id: Some(uuid::Uuid::new_v4()),
            partitions: assignment
                .iter()
                .enumerate()
                .map(|(p, r)| (p as i32, r.to_vec()))
                .collect(),
            ..TopicAssignment::default()
        };
        recipes::create_recursive(
            &self.store.session(),
            &zk_data::topic_path(topic),
            &assignment.encode(),
        )
        .await
        .unwrap();
    }

    pub(super) async fn state(&self, tp: &TopicPartition) -> (zk_data::PartitionState, i32) {
        let zk: Arc<dyn ZkClient> = Arc::new(self.store.session());
        KafkaZkClient::new(zk)
            .get_topic_partition_state(tp)
            .await
            .unwrap()
            .unwrap()
    }

    /// Waits (bounded) until the per-broker queues have delivered `n` requests, and takes them.
    pub(super) async fn sent(&self, n: usize) -> Vec<(BrokerId, ControllerRequest)> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            if self.channel.sent.lock().unwrap().len() >= n {
                // Let any request past the expected ones arrive too, so a test sees them.
                tokio::time::sleep(Duration::from_millis(20)).await;
                return self.channel.take();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "only {:?} sent",
                summary(&self.channel.sent.lock().unwrap())
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// `(broker, api)` per request.
pub(super) fn summary(sent: &[(BrokerId, ControllerRequest)]) -> Vec<(BrokerId, &'static str)> {
    sent.iter().map(|(b, r)| (*b, r.api_name())).collect()
}

/// The (partition, leader, is_new) of each partition state in a LeaderAndIsr.
fn leader_and_isr_partitions(request: &ControllerRequest) -> Vec<(i32, BrokerId, bool)> {
    match request {
        ControllerRequest::LeaderAndIsr { request, .. } => request
            .topic_states
            .iter()
            .flat_map(|t| t.partition_states.iter())
            .map(|p| (p.partition_index, p.leader, p.is_new))
            .collect(),
        _ => Vec::new(),
    }
}

/// The (partition, leader) of each partition state in an UpdateMetadata, and its live brokers.
fn update_metadata(request: &ControllerRequest) -> (Vec<(i32, BrokerId)>, Vec<BrokerId>) {
    match request {
        ControllerRequest::UpdateMetadata { request, .. } => (
            request
                .topic_states
                .iter()
                .flat_map(|t| t.partition_states.iter())
                .map(|p| (p.partition_index, p.leader))
                .collect(),
            request.live_brokers.iter().map(|b| b.id).collect(),
        ),
        _ => (Vec::new(), Vec::new()),
    }
}

#[tokio::test]
async fn failover_of_an_empty_cluster_tells_every_broker_the_brokers() {
    let h = Harness::new(&[1, 2, 3]).await;
    let mut c = h.controller(1);
    c.process(ControllerEvent::Startup).await;
    assert!(c.is_active());
    let sent = h.sent(3).await;
    assert_eq!(
        summary(&sent),
        vec![
            (1, "UpdateMetadata"),
            (2, "UpdateMetadata"),
            (3, "UpdateMetadata")
        ]
    );
    assert_eq!(update_metadata(&sent[0].1).1, vec![1, 2, 3]);
    // The second broker to try finds a controller and stays a broker.
    let mut other = h.controller(2);
    other.process(ControllerEvent::Startup).await;
    assert!(!other.is_active());
}

#[tokio::test]
async fn topic_creation_writes_state_znodes_and_sends_leader_and_isr_before_update_metadata() {
    let h = Harness::new(&[1, 2, 3]).await;
    let mut c = h.controller(1);
    c.process(ControllerEvent::Startup).await;
    h.sent(3).await;
    h.create_topic("t", &[&[1, 2, 3], &[2, 3, 1]]).await;
    c.process(ControllerEvent::TopicChange).await;
    let sent = h.sent(6).await;
    // Per broker: LeaderAndIsr (is_new) for its partitions, then UpdateMetadata with them all.
    for broker in [1, 2, 3] {
        let mine: Vec<&ControllerRequest> = sent
            .iter()
            .filter(|(b, _)| *b == broker)
            .map(|(_, r)| r)
            .collect();
        assert_eq!(mine.len(), 2, "{:?}", summary(&sent));
        assert_eq!(
            leader_and_isr_partitions(mine[0]),
            vec![(0, 1, true), (1, 2, true)]
        );
        assert_eq!(update_metadata(mine[1]).0, vec![(0, 1), (1, 2)]);
    }
    let (state, version) = h.state(&TopicPartition::new("t", 1)).await;
    assert_eq!(
        (
            state.leader,
            state.leader_epoch,
            state.isr,
            state.controller_epoch,
            version
        ),
        (2, 0, vec![2, 3, 1], 1, 0)
    );
}

#[tokio::test]
async fn broker_loss_elects_in_assignment_order_and_broker_return_gets_the_cluster_first() {
    let mut h = Harness::new(&[1, 2, 3]).await;
    let mut c = h.controller(1);
    c.process(ControllerEvent::Startup).await;
    h.create_topic("t", &[&[2, 3, 1], &[3, 1, 2]]).await;
    c.process(ControllerEvent::TopicChange).await;
    h.sent(9).await;

    h.kill_broker(2).await;
    c.process(ControllerEvent::BrokerChange).await;
    let sent = h.sent(4).await;
    assert!(sent.iter().all(|(b, _)| *b != 2), "{:?}", summary(&sent));
    // Partition 0 was led by 2: 3 is next in assignment order (the ISR lists 2, 3, 1).
    let (state, version) = h.state(&TopicPartition::new("t", 0)).await;
    assert_eq!(
        (state.leader, state.leader_epoch, &state.isr[..]),
        (3, 1, &[3, 1][..])
    );
    assert_eq!(version, 1);
    // Partition 1 keeps its leader; 2 leaves its ISR with a new epoch.
    let (state, _) = h.state(&TopicPartition::new("t", 1)).await;
    assert_eq!(
        (state.leader, state.leader_epoch, &state.isr[..]),
        (3, 1, &[3, 1][..])
    );
    let first_to_3 = sent.iter().find(|(b, _)| *b == 3).unwrap();
    assert_eq!(
        leader_and_isr_partitions(&first_to_3.1),
        vec![(0, 3, false)]
    );

    h.start_broker(2).await;
    c.process(ControllerEvent::BrokerChange).await;
    let sent = h.sent(4).await;
    let to_2: Vec<&str> = sent
        .iter()
        .filter(|(b, _)| *b == 2)
        .map(|(_, r)| r.api_name())
        .collect();
    // The returning broker learns the whole cluster first, then its replicas' leadership.
    assert_eq!(to_2[0], "UpdateMetadata");
    let full = sent.iter().find(|(b, _)| *b == 2).unwrap();
    assert_eq!(update_metadata(&full.1).0, vec![(0, 3), (1, 3)]);
    assert_eq!(to_2[1], "LeaderAndIsr");
    // The others get a brokers-only UpdateMetadata naming 2 again.
    let to_1 = sent.iter().find(|(b, _)| *b == 1).unwrap();
    assert_eq!(update_metadata(&to_1.1), (vec![], vec![1, 2, 3]));
}

#[tokio::test]
async fn a_new_controller_takes_over_with_a_new_epoch_and_fences_the_old_one() {
    let mut h = Harness::new(&[1, 2, 3]).await;
    let mut old = h.controller(1);
    old.process(ControllerEvent::Startup).await;
    h.create_topic("t", &[&[1, 2, 3]]).await;
    old.process(ControllerEvent::TopicChange).await;
    let mut new = h.controller(3);
    new.process(ControllerEvent::Startup).await;
    assert!(!new.is_active());
    h.sent(6).await;

    // Broker 1 goes (its session with it): 3 wins the election and fails over.
    let old_epoch = old.ctx.fencing_epoch();
    h.kill_broker(1).await;
    new.process(ControllerEvent::Reelect).await;
    assert!(new.is_active());
    assert_eq!(new.ctx.epoch, 2);
    let sent = h.sent(4).await;
    // Each live broker first hears of the brokers (the queues run side by side, so only the
    // order per broker is fixed).
    for broker in [2, 3] {
        let first = sent.iter().find(|(b, _)| *b == broker).unwrap();
        assert_eq!(update_metadata(&first.1), (vec![], vec![2, 3]));
    }
    assert!(sent.iter().all(|(b, _)| *b != 1));
    // Failover re-sends every replica's leadership, then elects for what 1 led.
    let (state, _) = h.state(&TopicPartition::new("t", 0)).await;
    assert_eq!((state.leader, state.controller_epoch), (2, 2));
    // The old controller's fenced writes now fail.
    let fresh = KafkaZkClient::new(Arc::new(h.store.session()));
    assert!(matches!(
        fresh.check_controller_epoch(old_epoch).await,
        Err(KafkaZkError::ControllerMoved { .. })
    ));
}

#[tokio::test]
async fn deletion_tells_brokers_leader_minus_two_stops_then_deletes_replicas() {
    let h = Harness::new(&[1, 2]).await;
    let mut c = h.controller(1);
    c.process(ControllerEvent::Startup).await;
    h.create_topic("t", &[&[1, 2]]).await;
    c.process(ControllerEvent::TopicChange).await;
    h.sent(6).await;
    let zk = KafkaZkClient::new(Arc::new(h.store.session()));
    zk.create_delete_topic_path("t").await.unwrap();
    c.process(ControllerEvent::TopicDeletion).await;
    let sent = h.sent(6).await;
    let to_1: Vec<&ControllerRequest> = sent
        .iter()
        .filter(|(b, _)| *b == 1)
        .map(|(_, r)| r)
        .collect();
    assert_eq!(update_metadata(to_1[0]).0, vec![(0, -2)]);
    let deletes: Vec<bool> = to_1
        .iter()
        .filter_map(|r| match r {
            ControllerRequest::StopReplica { request, .. } => request
                .topic_states
                .first()
                .and_then(|t| t.partition_states.first())
                .map(|p| {
                    assert_eq!(p.leader_epoch, -2);
                    p.delete_partition
                }),
            _ => None,
        })
        .collect();
    assert_eq!(deletes, vec![false, true]);
    // The StopReplica answers come back as events; once both replicas are deleted the znodes go.
    c.process_pending_for_test().await;
    assert!(zk.get_all_topics(false).await.unwrap().is_empty());
    assert!(zk.get_topic_deletions(false).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_broker_that_died_with_the_controller_leaves_every_isr_at_failover() {
    let mut h = Harness::new(&[1, 2, 3]).await;
    let mut old = h.controller(1);
    old.process(ControllerEvent::Startup).await;
    // Partition 0 is led by 2 and followed by the controller; partition 1 is led by it.
    h.create_topic("t", &[&[2, 3, 1], &[1, 2, 3]]).await;
    old.process(ControllerEvent::TopicChange).await;
    let mut new = h.controller(3);
    new.process(ControllerEvent::Startup).await;
    h.sent(8).await;

    // No broker change ever reports broker 1 to the new controller: it was gone before.
    h.kill_broker(1).await;
    new.process(ControllerEvent::Reelect).await;
    assert!(new.is_active());
    for p in 0..2 {
        let (state, _) = h.state(&TopicPartition::new("t", p)).await;
        assert_eq!((state.leader, state.isr), (2, vec![2, 3]), "partition {p}");
    }
    // The live replicas of partition 0 hear of its shrunk ISR, and its leader stays.
    let sent = h.sent(6).await;
    for broker in [2, 3] {
        let told: Vec<Vec<BrokerId>> = sent
            .iter()
            .filter(|(b, _)| *b == broker)
            .filter_map(|(_, r)| match r {
                ControllerRequest::LeaderAndIsr { request, .. } => Some(request),
                _ => None,
            })
            .flat_map(|r| {
                r.topic_states
                    .iter()
                    .flat_map(|t| t.partition_states.iter())
            })
            .filter(|p| p.partition_index == 0)
            .map(|p| p.isr.clone())
            .collect();
        assert_eq!(told.last(), Some(&vec![2, 3]), "broker {broker}: {told:?}");
    }
}
