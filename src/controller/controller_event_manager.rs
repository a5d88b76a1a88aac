//! The controller's queue as the rest of the broker sees it (Kafka's `ControllerEventManager`
//! and its events): [`ControllerEvent`]s, the [`ControllerHandle`] that puts them, and the
//! mapping of ZooKeeper watches to events. Requests that need the controller's answer (a
//! broker's AlterPartition, ControlledShutdown, ElectLeaders, AlterPartitionReassignments,
//! ListPartitionReassignments) carry a oneshot sender the controller answers on; if the controller
//! task has stopped, the sender is dropped and the caller answers NOT_CONTROLLER itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_request::AlterPartitionRequest;
use crate::protocol::messages::alter_partition_response::AlterPartitionResponse;
use crate::protocol::messages::controlled_shutdown_response::ControlledShutdownResponse;

use super::reassignment::{OngoingReassignments, ReassignmentResults};
use super::replica_leader_election::{ElectionResults, ElectionType};
use crate::zk::zk_data;

/// What the controller's queue carries.
#[derive(Debug)]
pub enum ControllerEvent {
    /// The broker started: watch `/controller` and try to become the controller.
    Startup,
    /// `/controller` was created or changed: perhaps another broker took over.
    ControllerChange,
    /// `/controller` was deleted: elect.
    Reelect,
    /// The children of `/brokers/ids` changed.
    BrokerChange,
    /// The children of `/brokers/topics` changed.
    TopicChange,
    /// `/brokers/topics/<t>` changed (CreatePartitions).
    PartitionModifications { topic: String },
    /// The children of `/admin/delete_topics` changed.
    TopicDeletion,
    /// A broker answered a StopReplica that deleted partitions.
    TopicDeletionStopReplicaResponseReceived {
        broker: BrokerId,
        errors: Vec<(TopicPartition, i16)>,
    },
    /// The children of `/log_dir_event_notification` changed: a broker lost a log dir.
    LogDirEventNotification,
    /// A broker answered a LeaderAndIsr: per partition, KAFKA_STORAGE_ERROR marks its replica
    /// as on a failed log dir.
    LeaderAndIsrResponseReceived {
        broker: BrokerId,
        error_code: i16,
        partition_errors: Vec<(TopicPartition, i16)>,
    },
    /// The ZooKeeper session expired: resign until the new session re-elects.
    Expire,
    /// A leader's AlterPartition (Kafka's `AlterPartitionReceived`), answered on `reply`.
    AlterPartitionReceived {
        request: AlterPartitionRequest,
        version: i16,
        reply: oneshot::Sender<AlterPartitionResponse>,
    },
    /// A broker's ControlledShutdown (Kafka's `ControlledShutdown`), answered on `reply`.
    ControlledShutdown {
        broker_id: BrokerId,
        broker_epoch: i64,
        reply: oneshot::Sender<ControlledShutdownResponse>,
    },
    /// An election of preferred or (for offline partitions) unclean leaders (Kafka's
    /// `ReplicaLeaderElection`): from ElectLeaders with `reply`, or from
    /// `/admin/preferred_replica_election` (`partitions` `None`: read the znode) without.
    ReplicaLeaderElection {
        partitions: Option<Vec<TopicPartition>>,
        election_type: ElectionType,
        reply: Option<oneshot::Sender<ElectionResults>>,
    },
    /// The periodic leader imbalance check (Kafka's `AutoPreferredReplicaLeaderElection`).
    AutoPreferredReplicaLeaderElection,
    /// A topic's `unclean.leader.election.enable` became true: elect its offline partitions.
    TopicUncleanLeaderElectionEnable { topic: String },
    /// `/admin/reassign_partitions` was created, or should be looked at again
    /// (Kafka's `ZkPartitionReassignment`).
    ZkPartitionReassignment,
    /// AlterPartitionReassignments (Kafka's `ApiPartitionReassignment`): per partition the
    /// target replicas, `None` to cancel; answered on `reply`.
    ApiPartitionReassignment {
        reassignments: Vec<(TopicPartition, Option<Vec<BrokerId>>)>,
        reply: oneshot::Sender<ReassignmentResults>,
    },
    /// ListPartitionReassignments (`None`: every partition being reassigned).
    ListPartitionReassignments {
        partitions: Option<Vec<TopicPartition>>,
        reply: oneshot::Sender<OngoingReassignments>,
    },
}

impl ControllerEvent {
    /// The event's name, for logs (the requests it may carry are not printed).
    pub fn name(&self) -> &'static str {
        match self {
            ControllerEvent::Startup => "Startup",
            ControllerEvent::ControllerChange => "ControllerChange",
            ControllerEvent::Reelect => "Reelect",
            ControllerEvent::BrokerChange => "BrokerChange",
            ControllerEvent::TopicChange => "TopicChange",
            ControllerEvent::PartitionModifications { .. } => "PartitionModifications",
            ControllerEvent::TopicDeletion => "TopicDeletion",
            ControllerEvent::LogDirEventNotification => "LogDirEventNotification",
            ControllerEvent::LeaderAndIsrResponseReceived { .. } => "LeaderAndIsrResponseReceived",
            ControllerEvent::TopicDeletionStopReplicaResponseReceived { .. } => {
                "TopicDeletionStopReplicaResponseReceived"
            }
            ControllerEvent::Expire => "Expire",
            ControllerEvent::AlterPartitionReceived { .. } => "AlterPartitionReceived",
            ControllerEvent::ControlledShutdown { .. } => "ControlledShutdown",
            ControllerEvent::ReplicaLeaderElection { .. } => "ReplicaLeaderElection",
            ControllerEvent::AutoPreferredReplicaLeaderElection => {
                "AutoPreferredReplicaLeaderElection"
            }
            ControllerEvent::TopicUncleanLeaderElectionEnable { .. } => {
                "TopicUncleanLeaderElectionEnable"
            }
            ControllerEvent::ZkPartitionReassignment => "ZkPartitionReassignment",
            ControllerEvent::ApiPartitionReassignment { .. } => "ApiPartitionReassignment",
            ControllerEvent::ListPartitionReassignments { .. } => "ListPartitionReassignments",
        }
    }
}

/// What the rest of the broker sees of its controller.
#[derive(Debug, Clone)]
pub struct ControllerHandle {
    events: UnboundedSender<ControllerEvent>,
    /// The broker id in `/controller` as this broker last read it; -1 when none.
    active_controller_id: Arc<AtomicI32>,
    local_broker_id: BrokerId,
}

impl ControllerHandle {
    pub(super) fn new(
        events: UnboundedSender<ControllerEvent>,
        active_controller_id: Arc<AtomicI32>,
        local_broker_id: BrokerId,
    ) -> Self {
        ControllerHandle {
            events,
            active_controller_id,
            local_broker_id,
        }
    }

    /// A handle to no controller: never active, every event refused (for tests of its users).
    #[cfg(test)]
    pub fn detached(local_broker_id: BrokerId) -> Self {
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        ControllerHandle::new(events, Arc::new(AtomicI32::new(-1)), local_broker_id)
    }

    /// Hands a leader's AlterPartition to the controller and waits for its answer; NOT_CONTROLLER
    /// when this broker is not the active controller or its controller stopped meanwhile.
    pub async fn alter_partition(
        &self,
        request: AlterPartitionRequest,
        version: i16,
    ) -> AlterPartitionResponse {
        let not_controller = || AlterPartitionResponse {
            error_code: ErrorCode::NotController.code(),
            ..AlterPartitionResponse::default()
        };
        if !self.is_active() {
            return not_controller();
        }
        let (reply, answer) = oneshot::channel();
        if !self.put(ControllerEvent::AlterPartitionReceived {
            request,
            version,
            reply,
        }) {
            return not_controller();
        }
        answer.await.unwrap_or_else(|_| not_controller())
    }

    /// Hands a broker's ControlledShutdown to the controller and waits for the partitions it
    /// still leads; NOT_CONTROLLER when this broker is not the active controller.
    pub async fn controlled_shutdown(
        &self,
        broker_id: BrokerId,
        broker_epoch: i64,
    ) -> ControlledShutdownResponse {
        let not_controller = || ControlledShutdownResponse {
            error_code: ErrorCode::NotController.code(),
            ..ControlledShutdownResponse::default()
        };
        if !self.is_active() {
            return not_controller();
        }
        let (reply, answer) = oneshot::channel();
        if !self.put(ControllerEvent::ControlledShutdown {
            broker_id,
            broker_epoch,
            reply,
        }) {
            return not_controller();
        }
        answer.await.unwrap_or_else(|_| not_controller())
    }

    /// Asks the controller to elect `partitions` (`None`: all it knows) and waits for the
    /// per-partition outcome: the elected leader, or an error. NOT_CONTROLLER for each
    /// partition when this broker is not the active controller.
    pub async fn elect_leaders(
        &self,
        partitions: Option<Vec<TopicPartition>>,
        election_type: ElectionType,
    ) -> Result<ElectionResults, ErrorCode> {
        if !self.is_active() {
            return Err(ErrorCode::NotController);
        }
        let (reply, answer) = oneshot::channel();
        if !self.put(ControllerEvent::ReplicaLeaderElection {
            partitions,
            election_type,
            reply: Some(reply),
        }) {
            return Err(ErrorCode::NotController);
        }
        answer.await.map_err(|_| ErrorCode::NotController)
    }

    /// Hands AlterPartitionReassignments to the controller and waits for the per-partition
    /// answers; NOT_CONTROLLER when this broker is not the active controller.
    pub async fn alter_partition_reassignments(
        &self,
        reassignments: Vec<(TopicPartition, Option<Vec<BrokerId>>)>,
    ) -> Result<ReassignmentResults, ErrorCode> {
        if !self.is_active() {
            return Err(ErrorCode::NotController);
        }
        let (reply, answer) = oneshot::channel();
        if !self.put(ControllerEvent::ApiPartitionReassignment {
            reassignments,
            reply,
        }) {
            return Err(ErrorCode::NotController);
        }
        answer.await.map_err(|_| ErrorCode::NotController)
    }

    /// The reassignments in progress among `partitions` (`None`: all); NOT_CONTROLLER when this
    /// broker is not the active controller.
    pub async fn list_partition_reassignments(
        &self,
        partitions: Option<Vec<TopicPartition>>,
    ) -> Result<OngoingReassignments, ErrorCode> {
        if !self.is_active() {
            return Err(ErrorCode::NotController);
        }
        let (reply, answer) = oneshot::channel();
        if !self.put(ControllerEvent::ListPartitionReassignments { partitions, reply }) {
            return Err(ErrorCode::NotController);
        }
        answer.await.map_err(|_| ErrorCode::NotController)
    }

    /// A topic's config change that enabled unclean leader election; only the active
    /// controller acts on it (Kafka's `enableTopicUncleanLeaderElection`).
    pub fn enable_topic_unclean_leader_election(&self, topic: &str) {
        if self.is_active() {
            self.put(ControllerEvent::TopicUncleanLeaderElectionEnable {
                topic: topic.to_string(),
            });
        }
    }

    /// Queues an event; `false` once the controller has stopped.
    pub fn put(&self, event: ControllerEvent) -> bool {
        self.events.send(event).is_ok()
    }

    /// Whether this broker is the active controller.
    pub fn is_active(&self) -> bool {
        self.active_controller_id() == Some(self.local_broker_id)
    }

    pub fn active_controller_id(&self) -> Option<BrokerId> {
        let id = self.active_controller_id.load(Ordering::Acquire);
        (id >= 0).then_some(id)
    }
}

/// The path → event mapping of the controller's ZooKeeper watches (Kafka's
/// `ControllerChangeHandler`, `BrokerChangeHandler`, `TopicChangeHandler`,
/// `PartitionModificationsHandler`, `TopicDeletionHandler`, `PreferredReplicaElectionHandler`,
/// `LogDirEventNotificationHandler`).
pub fn event_for_watch(
    path: &str,
    event_type: crate::zk::WatchedEventType,
) -> Option<ControllerEvent> {
    use crate::zk::WatchedEventType as T;
    match (path, event_type) {
        (zk_data::CONTROLLER_PATH, T::NodeDeleted) => Some(ControllerEvent::Reelect),
        (zk_data::CONTROLLER_PATH, _) => Some(ControllerEvent::ControllerChange),
        (zk_data::BROKER_IDS_PATH, T::NodeChildrenChanged) => Some(ControllerEvent::BrokerChange),
        (zk_data::TOPICS_PATH, T::NodeChildrenChanged) => Some(ControllerEvent::TopicChange),
        (zk_data::DELETE_TOPICS_PATH, T::NodeChildrenChanged) => {
            Some(ControllerEvent::TopicDeletion)
        }
        (zk_data::LOG_DIR_EVENT_NOTIFICATION_PATH, T::NodeChildrenChanged) => {
            Some(ControllerEvent::LogDirEventNotification)
        }
        // Kafka watches only the creation; a deletion by hand also re-arms the watch here.
        (zk_data::REASSIGN_PARTITIONS_PATH, T::NodeCreated | T::NodeDeleted) => {
            Some(ControllerEvent::ZkPartitionReassignment)
        }
        (zk_data::PREFERRED_REPLICA_ELECTION_PATH, T::NodeCreated) => {
            Some(ControllerEvent::ReplicaLeaderElection {
                partitions: None,
                election_type: ElectionType::Preferred,
                reply: None,
            })
        }
        (path, T::NodeDataChanged) => {
            let topic = path.strip_prefix(zk_data::TOPICS_PATH)?.strip_prefix('/')?;
            (!topic.contains('/')).then(|| ControllerEvent::PartitionModifications {
                topic: topic.to_string(),
            })
        }
        _ => None,
    }
}
