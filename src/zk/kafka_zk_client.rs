//! `KafkaZkClient`: the typed znode operations of Kafka's `KafkaZkClient.scala`, over any
//! [`ZkClient`] (a real ensemble or the embedded store).
//!
//! Controller writes are fenced as Kafka fences them: each is one `multi([check
//! /controller_epoch at epochZkVersion, op])` (`wrapRequestWithControllerEpochCheck`). A
//! BADVERSION from the check means another controller has been elected since; the caller gets
//! [`KafkaZkError::ControllerMoved`] and must resign, so a controller paused past its session
//! can never overwrite its successor's decisions.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::cluster::{BrokerId, TopicPartition};

use super::client::{CreateMode, Op, OpResult, Stat, ZkClient, ZkError};

mod log_dir_events;
mod partition_states;
use super::recipes;
use super::zk_data::{
    self, BrokerRegistration, ControllerRegistration, TopicAssignment, ZkDataError,
};

/// Why a typed operation failed.
#[derive(Debug, thiserror::Error)]
pub enum KafkaZkError {
    #[error(transparent)]
    Zk(#[from] ZkError),
    #[error("malformed znode {path}")]
    Malformed {
        path: String,
        #[source]
        source: ZkDataError,
    },
    /// The controller epoch moved on: this broker is no longer the controller.
    #[error("controller moved: /controller_epoch is no longer at zkVersion {expected_zk_version}")]
    ControllerMoved { expected_zk_version: i32 },
}

/// The fencing token of the active controller: its epoch and the zkVersion of
/// `/controller_epoch` that its election wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerEpoch {
    pub epoch: i32,
    pub zk_version: i32,
}

/// The outcome of one conditional partition-state write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateWrite {
    /// Written; the znode's new zkVersion (the partition's new epoch).
    Written { partition_epoch: i32 },
    /// The znode changed under us (its zkVersion was not the one expected): read it again.
    Stale,
}

/// A topic's assignment and id as `/brokers/topics/<t>` holds them, with the zkVersion.
#[derive(Debug, Clone)]
pub struct TopicZNode {
    pub name: String,
    pub assignment: TopicAssignment,
    pub zk_version: i32,
}

/// Kafka's `zookeeper.max.in.flight.requests` default: how many requests a batch pipelines.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 10;

/// Typed operations over one ZooKeeper session.
#[derive(Debug, Clone)]
pub struct KafkaZkClient {
    zk: std::sync::Arc<dyn ZkClient>,
    /// How many requests a batch operation keeps on the session at once (at least 1).
    max_in_flight: usize,
}

fn malformed(path: &str) -> impl FnOnce(ZkDataError) -> KafkaZkError + '_ {
    move |source| KafkaZkError::Malformed {
        path: path.to_string(),
        source,
    }
}

impl KafkaZkClient {
    pub fn new(zk: std::sync::Arc<dyn ZkClient>) -> Self {
        KafkaZkClient {
            zk,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }

    /// This client with batches pipelining up to `max_in_flight` requests (Kafka's
    /// `zookeeper.max.in.flight.requests`; values below 1 count as 1).
    pub fn with_max_in_flight(mut self, max_in_flight: i32) -> Self {
        self.max_in_flight = usize::try_from(max_in_flight).unwrap_or(1).max(1);
        self
    }

    /// How many requests a batch operation keeps on the session at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// The raw client, for the operations not typed here.
    pub fn zk(&self) -> &std::sync::Arc<dyn ZkClient> {
        &self.zk
    }

    async fn get_opt(&self, path: &str, watch: bool) -> Result<Option<(Vec<u8>, Stat)>, ZkError> {
        match self.zk.get_data(path, watch).await {
            Ok(found) => Ok(Some(found)),
            Err(ZkError::NoNode(_)) => {
                if watch {
                    // An existence watch, so the node's creation fires it.
                    self.zk.exists(path, true).await?;
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    // ---- /controller and /controller_epoch ------------------------------------------------

    /// The id in `/controller`, watched when `watch` (creation, change and deletion fire it).
    pub async fn get_controller_id(&self, watch: bool) -> Result<Option<BrokerId>, KafkaZkError> {
        let path = zk_data::CONTROLLER_PATH;
        match self.get_opt(path, watch).await? {
            Some((data, _)) => Ok(Some(
                ControllerRegistration::decode(&data)
                    .map_err(malformed(path))?
                    .broker_id,
            )),
            None => Ok(None),
        }
    }

    /// `/controller_epoch` and its zkVersion, if it exists.
    pub async fn get_controller_epoch(&self) -> Result<Option<ControllerEpoch>, KafkaZkError> {
        let path = zk_data::CONTROLLER_EPOCH_PATH;
        match self.get_opt(path, false).await? {
            Some((data, stat)) => Ok(Some(ControllerEpoch {
                epoch: zk_data::decode_controller_epoch(&data).map_err(malformed(path))?,
                zk_version: stat.version,
            })),
            None => Ok(None),
        }
    }

    /// Kafka's `registerControllerAndIncrementControllerEpoch`: one multi creates the ephemeral
    /// `/controller` and bumps `/controller_epoch` at the zkVersion just read (creating it with
    /// epoch 0 first if missing). `ControllerMoved` when another broker won.
    pub async fn register_controller_and_increment_controller_epoch(
        &self,
        controller_id: BrokerId,
        timestamp_ms: i64,
    ) -> Result<ControllerEpoch, KafkaZkError> {
        let current = match self.get_controller_epoch().await? {
            Some(current) => current,
            None => {
                match self
                    .zk
                    .create(
                        zk_data::CONTROLLER_EPOCH_PATH,
                        &zk_data::encode_controller_epoch(0),
                        CreateMode::Persistent,
                    )
                    .await
                {
                    Ok(_) | Err(ZkError::NodeExists(_)) => {}
                    Err(e) => return Err(e.into()),
                }
                self.get_controller_epoch()
                    .await?
                    .unwrap_or(ControllerEpoch {
                        epoch: 0,
                        zk_version: 0,
                    })
            }
        };
        let new_epoch = current.epoch + 1;
        let registration = ControllerRegistration {
            broker_id: controller_id,
            timestamp_ms,
            kraft_controller_epoch: -1,
        };
        let ops = vec![
            Op::Create {
                path: zk_data::CONTROLLER_PATH.into(),
                data: registration.encode(),
                mode: CreateMode::Ephemeral,
            },
            Op::SetData {
                path: zk_data::CONTROLLER_EPOCH_PATH.into(),
                data: zk_data::encode_controller_epoch(new_epoch),
                version: current.zk_version,
            },
        ];
        match self.zk.multi(ops).await {
            Ok(results) => {
                let zk_version = results
                    .iter()
                    .find_map(|r| match r {
                        OpResult::SetData { stat } => Some(stat.version),
                        _ => None,
                    })
                    .unwrap_or(current.zk_version + 1);
                Ok(ControllerEpoch {
                    epoch: new_epoch,
                    zk_version,
                })
            }
            // The multi may have committed before a connection loss hid its answer: it is ours
            // if /controller names us and the epoch is the one we wrote.
            Err(ZkError::NodeExists(_) | ZkError::BadVersion(_) | ZkError::ConnectionLoss) => {
                let ours = self.get_controller_id(false).await? == Some(controller_id);
                match self.get_controller_epoch().await? {
                    Some(now) if ours && now.epoch == new_epoch => Ok(now),
                    _ => Err(KafkaZkError::ControllerMoved {
                        expected_zk_version: current.zk_version,
                    }),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Runs `op` fenced by the controller epoch; BADVERSION on the check is `ControllerMoved`.
    async fn fenced(&self, epoch: ControllerEpoch, op: Op) -> Result<OpResult, KafkaZkError> {
        let ops = vec![
            Op::Check {
                path: zk_data::CONTROLLER_EPOCH_PATH.into(),
                version: epoch.zk_version,
            },
            op,
        ];
        match self.zk.multi(ops).await {
            Ok(mut results) => Ok(results.pop().unwrap_or(OpResult::Check)),
            Err(ZkError::BadVersion(path)) if path == zk_data::CONTROLLER_EPOCH_PATH => {
                Err(KafkaZkError::ControllerMoved {
                    expected_zk_version: epoch.zk_version,
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Whether `epoch` still fences: `/controller_epoch` is at its zkVersion.
    pub async fn check_controller_epoch(&self, epoch: ControllerEpoch) -> Result<(), KafkaZkError> {
        match self.get_controller_epoch().await? {
            Some(now) if now.zk_version == epoch.zk_version => Ok(()),
            _ => Err(KafkaZkError::ControllerMoved {
                expected_zk_version: epoch.zk_version,
            }),
        }
    }

    // ---- /brokers/ids ----------------------------------------------------------------------

    /// Every registered broker with its epoch (the czxid of its registration), watching the
    /// children when `watch`.
    pub async fn get_all_brokers_and_epochs(
        &self,
        watch: bool,
    ) -> Result<BTreeMap<BrokerId, (BrokerRegistration, i64)>, KafkaZkError> {
        let (children, _) = self
            .zk
            .get_children(zk_data::BROKER_IDS_PATH, watch)
            .await?;
        let mut out = BTreeMap::new();
        for child in children {
            let Ok(id) = child.parse::<BrokerId>() else {
                continue;
            };
            let path = zk_data::broker_id_path(id);
            // A broker may go between the listing and the read.
            if let Some((data, stat)) = self.get_opt(&path, false).await? {
                let registration = BrokerRegistration::decode(&data).map_err(malformed(&path))?;
                out.insert(id, (registration, stat.czxid));
            }
        }
        Ok(out)
    }

    // ---- /brokers/topics -------------------------------------------------------------------

    /// The topic names, watching the children when `watch`.
    pub async fn get_all_topics(&self, watch: bool) -> Result<Vec<String>, KafkaZkError> {
        Ok(self.zk.get_children(zk_data::TOPICS_PATH, watch).await?.0)
    }

    /// `/brokers/topics/<t>`, watching its data when `watch` (CreatePartitions changes it).
    pub async fn get_topic(
        &self,
        topic: &str,
        watch: bool,
    ) -> Result<Option<TopicZNode>, KafkaZkError> {
        let path = zk_data::topic_path(topic);
        match self.get_opt(&path, watch).await? {
            Some((data, stat)) => Ok(Some(TopicZNode {
                name: topic.to_string(),
                assignment: TopicAssignment::decode(&data).map_err(malformed(&path))?,
                zk_version: stat.version,
            })),
            None => Ok(None),
        }
    }

    /// Writes a topic's assignment znode fenced by the controller epoch (the controller adding a
    /// topic id, or finishing a reassignment), at `zk_version` (-1: any).
    pub async fn set_topic_assignment(
        &self,
        epoch: ControllerEpoch,
        topic: &str,
        assignment: &TopicAssignment,
        zk_version: i32,
    ) -> Result<(), KafkaZkError> {
        self.fenced(
            epoch,
            Op::SetData {
                path: zk_data::topic_path(topic),
                data: assignment.encode(),
                version: zk_version,
            },
        )
        .await
        .map(|_| ())
    }

    // ---- topic configs and deletion -------------------------------------------------------

    /// `/config/topics/<t>`'s overrides (empty when the znode is missing).
    pub async fn get_topic_config(
        &self,
        topic: &str,
    ) -> Result<BTreeMap<String, String>, KafkaZkError> {
        let path = zk_data::topic_config_path(topic);
        match self.get_opt(&path, false).await? {
            Some((data, _)) => zk_data::decode_entity_config(&data).map_err(malformed(&path)),
            None => Ok(BTreeMap::new()),
        }
    }

    /// The topics marked in `/admin/delete_topics`, watching the children when `watch`.
    pub async fn get_topic_deletions(&self, watch: bool) -> Result<Vec<String>, KafkaZkError> {
        Ok(self
            .zk
            .get_children(zk_data::DELETE_TOPICS_PATH, watch)
            .await?
            .0)
    }

    /// Marks a topic for deletion (`createDeleteTopicPath`): an empty persistent child of
    /// `/admin/delete_topics`. Marking twice is not an error.
    pub async fn create_delete_topic_path(&self, topic: &str) -> Result<(), KafkaZkError> {
        match recipes::create_recursive(self.zk.as_ref(), &zk_data::delete_topic_path(topic), b"")
            .await
        {
            Ok(()) | Err(ZkError::NodeExists(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The controller's last step of a deletion: the topic's znodes (`/brokers/topics/<t>`
    /// recursively, `/config/topics/<t>`), then its mark; each delete fenced.
    pub async fn delete_topic_znodes(
        &self,
        epoch: ControllerEpoch,
        topic: &str,
    ) -> Result<(), KafkaZkError> {
        let mut paths = Vec::new();
        collect_subtree(self.zk.as_ref(), &zk_data::topic_path(topic), &mut paths).await?;
        paths.push(zk_data::topic_config_path(topic));
        paths.push(zk_data::delete_topic_path(topic));
        for path in paths {
            match self.fenced(epoch, Op::Delete { path, version: -1 }).await {
                Ok(_) | Err(KafkaZkError::Zk(ZkError::NoNode(_))) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Unmarks a topic that does not exist (`deleteTopicDeletions`), fenced.
    pub async fn delete_topic_deletion(
        &self,
        epoch: ControllerEpoch,
        topic: &str,
    ) -> Result<(), KafkaZkError> {
        let op = Op::Delete {
            path: zk_data::delete_topic_path(topic),
            version: -1,
        };
        match self.fenced(epoch, op).await {
            Ok(_) | Err(KafkaZkError::Zk(ZkError::NoNode(_))) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The partitions `/admin/preferred_replica_election` names, `None` when it does not
    /// exist; either way watched (data or existence), so the next request is seen.
    pub async fn get_partitions_for_preferred_replica_election(
        &self,
    ) -> Result<Option<Vec<TopicPartition>>, KafkaZkError> {
        let path = zk_data::PREFERRED_REPLICA_ELECTION_PATH;
        match self.get_opt(path, true).await? {
            Some((data, _)) => Ok(Some(
                zk_data::decode_preferred_replica_election(&data).map_err(malformed(path))?,
            )),
            None => Ok(None),
        }
    }

    /// Removes `/admin/preferred_replica_election` once served (`deletePreferredReplicaElection`),
    /// fenced; already gone is fine.
    pub async fn delete_preferred_replica_election(
        &self,
        epoch: ControllerEpoch,
    ) -> Result<(), KafkaZkError> {
        let op = Op::Delete {
            path: zk_data::PREFERRED_REPLICA_ELECTION_PATH.to_string(),
            version: -1,
        };
        match self.fenced(epoch, op).await {
            Ok(_) | Err(KafkaZkError::Zk(ZkError::NoNode(_))) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The partitions and target replicas `/admin/reassign_partitions` names, `None` when it
    /// does not exist; with `watch`, watched either way (data or existence), so the controller
    /// sees the next one (`registerZNodeChangeHandlerAndCheckExistence`).
    pub async fn get_partition_reassignment(
        &self,
        watch: bool,
    ) -> Result<Option<Vec<(TopicPartition, Vec<BrokerId>)>>, KafkaZkError> {
        let path = zk_data::REASSIGN_PARTITIONS_PATH;
        match self.get_opt(path, watch).await? {
            Some((data, _)) => Ok(Some(
                zk_data::decode_partition_reassignment(&data).map_err(malformed(path))?,
            )),
            None => Ok(None),
        }
    }

    /// Starts a reassignment the legacy way, as an admin tool does: creates
    /// `/admin/reassign_partitions` (and `/admin` if missing). `NodeExists` when one is in
    /// progress: the controller removes the znode once every partition in it completed.
    pub async fn create_partition_reassignment(
        &self,
        partitions: &[(TopicPartition, Vec<BrokerId>)],
    ) -> Result<(), KafkaZkError> {
        let data = zk_data::encode_partition_reassignment(partitions);
        recipes::create_recursive(self.zk.as_ref(), zk_data::REASSIGN_PARTITIONS_PATH, &data)
            .await?;
        Ok(())
    }

    /// Rewrites `/admin/reassign_partitions` with the partitions still to do, fenced
    /// (`setOrCreatePartitionReassignment`).
    pub async fn set_or_create_partition_reassignment(
        &self,
        epoch: ControllerEpoch,
        partitions: &[(TopicPartition, Vec<BrokerId>)],
    ) -> Result<(), KafkaZkError> {
        let path = zk_data::REASSIGN_PARTITIONS_PATH.to_string();
        let data = zk_data::encode_partition_reassignment(partitions);
        let set = Op::SetData {
            path: path.clone(),
            data: data.clone(),
            version: -1,
        };
        match self.fenced(epoch, set).await {
            Ok(_) => Ok(()),
            Err(KafkaZkError::Zk(ZkError::NoNode(_))) => {
                let create = Op::Create {
                    path,
                    data,
                    mode: CreateMode::Persistent,
                };
                self.fenced(epoch, create).await.map(|_| ())
            }
            Err(e) => Err(e),
        }
    }

    /// Removes `/admin/reassign_partitions` once nothing in it is left to do, fenced; already
    /// gone is fine.
    pub async fn delete_partition_reassignment(
        &self,
        epoch: ControllerEpoch,
    ) -> Result<(), KafkaZkError> {
        let op = Op::Delete {
            path: zk_data::REASSIGN_PARTITIONS_PATH.to_string(),
            version: -1,
        };
        match self.fenced(epoch, op).await {
            Ok(_) | Err(KafkaZkError::Zk(ZkError::NoNode(_))) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Adds a topic id to a topic written without one (IBP ≥ 2.8 controllers do), fenced.
    pub async fn add_topic_id(
        &self,
        epoch: ControllerEpoch,
        topic: &TopicZNode,
    ) -> Result<Uuid, KafkaZkError> {
        let id = zk_data::random_uuid();
        let mut with_id = topic.assignment.clone();
        with_id.topic_id = Some(id);
        self.set_topic_assignment(epoch, &topic.name, &with_id, topic.zk_version)
            .await?;
        Ok(id)
    }
}

/// Every path of the subtree under `root`, children before their parents.
async fn collect_subtree(
    zk: &dyn ZkClient,
    root: &str,
    out: &mut Vec<String>,
) -> Result<(), ZkError> {
    let mut stack = vec![(root.to_string(), false)];
    while let Some((path, expanded)) = stack.pop() {
        if expanded {
            out.push(path);
            continue;
        }
        let children = match zk.get_children(&path, false).await {
            Ok((children, _)) => children,
            Err(ZkError::NoNode(_)) => continue,
            Err(e) => return Err(e),
        };
        stack.push((path.clone(), true));
        for child in children {
            stack.push((format!("{path}/{child}"), false));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::EmbeddedStore;
    use crate::zk::recipes::ensure_persistent_paths;
    use crate::zk::zk_data::PartitionState;
    use std::sync::Arc;

    async fn client(store: &EmbeddedStore) -> KafkaZkClient {
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        ensure_persistent_paths(zk.as_ref()).await.unwrap();
        KafkaZkClient::new(zk)
    }

    fn state(leader: BrokerId, epoch: i32) -> PartitionState {
        PartitionState {
            leader,
            leader_epoch: epoch,
            isr: vec![leader],
            controller_epoch: 1,
            leader_recovery_state: 0,
        }
    }

    #[tokio::test]
    async fn election_creates_the_epoch_then_bumps_it_and_the_loser_is_told() {
        let store = EmbeddedStore::in_memory();
        let a = client(&store).await;
        let b = client(&store).await;
        let won = a
            .register_controller_and_increment_controller_epoch(1, 0)
            .await
            .unwrap();
        assert_eq!(won.epoch, 1);
        assert_eq!(
            a.zk().get_data("/controller_epoch", false).await.unwrap().0,
            b"1"
        );
        assert!(matches!(
            b.register_controller_and_increment_controller_epoch(2, 0)
                .await,
            Err(KafkaZkError::ControllerMoved { .. })
        ));
        assert_eq!(b.get_controller_id(false).await.unwrap(), Some(1));
        // The first controller goes; the second wins with the next epoch.
        a.zk().close().await.unwrap();
        let second = b
            .register_controller_and_increment_controller_epoch(2, 0)
            .await
            .unwrap();
        assert_eq!(second.epoch, 2);
        assert_eq!(second.zk_version, won.zk_version + 1);
    }

    #[tokio::test]
    async fn a_superseded_controller_cannot_write_partition_state() {
        let store = EmbeddedStore::in_memory();
        let a = client(&store).await;
        let b = client(&store).await;
        let old = a
            .register_controller_and_increment_controller_epoch(1, 0)
            .await
            .unwrap();
        let tp = TopicPartition::new("t", 0);
        a.zk()
            .create("/brokers/topics/t", b"{}", CreateMode::Persistent)
            .await
            .unwrap();
        assert_eq!(
            a.create_topic_partition_state(old, &tp, &state(1, 0))
                .await
                .unwrap(),
            0
        );
        // Broker 2 takes over (as if 1 had paused past its session).
        a.zk().delete("/controller", -1).await.unwrap();
        let new = b
            .register_controller_and_increment_controller_epoch(2, 0)
            .await
            .unwrap();
        assert!(matches!(
            a.update_leader_and_isr(old, &tp, &state(1, 1), 0).await,
            Err(KafkaZkError::ControllerMoved { .. })
        ));
        assert!(a.check_controller_epoch(old).await.is_err());
        assert_eq!(
            b.update_leader_and_isr(new, &tp, &state(2, 1), 0)
                .await
                .unwrap(),
            StateWrite::Written { partition_epoch: 1 }
        );
        // A write at a stale partition epoch is refused, not applied.
        assert_eq!(
            b.update_leader_and_isr(new, &tp, &state(2, 2), 0)
                .await
                .unwrap(),
            StateWrite::Stale
        );
        let (now, version) = b.get_topic_partition_state(&tp).await.unwrap().unwrap();
        assert_eq!((now.leader, now.leader_epoch, version), (2, 1, 1));
    }

    #[tokio::test]
    async fn topic_deletion_removes_the_subtree_config_and_mark() {
        let store = EmbeddedStore::in_memory();
        let a = client(&store).await;
        let epoch = a
            .register_controller_and_increment_controller_epoch(1, 0)
            .await
            .unwrap();
        let assignment = TopicAssignment {
            topic_id: Some(Uuid::new_v4()),
            partitions: [(0, vec![1])].into_iter().collect(),
            ..TopicAssignment::default()
        };
        recipes::create_recursive(a.zk().as_ref(), "/brokers/topics/t", &assignment.encode())
            .await
            .unwrap();
        recipes::create_recursive(a.zk().as_ref(), "/config/topics/t", b"{}")
            .await
            .unwrap();
        a.create_topic_partition_state(epoch, &TopicPartition::new("t", 0), &state(1, 0))
            .await
            .unwrap();
        a.create_delete_topic_path("t").await.unwrap();
        a.create_delete_topic_path("t").await.unwrap();
        assert_eq!(a.get_topic_deletions(false).await.unwrap(), vec!["t"]);
        let topic = a.get_topic("t", false).await.unwrap().unwrap();
        assert_eq!(topic.assignment, assignment);
        a.delete_topic_znodes(epoch, "t").await.unwrap();
        assert!(a.get_all_topics(false).await.unwrap().is_empty());
        assert!(a.get_topic_deletions(false).await.unwrap().is_empty());
        assert!(a.get_topic_config("t").await.unwrap().is_empty());
    }
}
