//! Reading the cluster from ZooKeeper into plain structs: `/cluster/id`, `/controller`,
//! `/controller_epoch`, every `/brokers/ids/<id>` (its czxid is the broker epoch), every topic's
//! assignment, partition states (their zkVersion is the partition epoch) and config overrides,
//! `/config/brokers/<default>` and `/admin/delete_topics`. A node that vanishes between listing
//! and reading (a broker deregistering, a topic being deleted) is skipped, as a reader racing
//! the controller would see it a moment later; a node that is there but not what Kafka writes
//! is an error naming its path.

use std::collections::{BTreeMap, BTreeSet};

use crate::zk::zk_data::{
    self, BROKER_IDS_PATH, BrokerZNode, CLUSTER_ID_PATH, CONTROLLER_EPOCH_PATH, CONTROLLER_PATH,
    ControllerRegistration, DELETE_TOPICS_PATH, PartitionState, TOPICS_PATH, TopicAssignment,
    ZkDataError,
};
use crate::zk::{ZkClient, ZkError};

/// Where `/config/brokers/<default>` lives: the cluster-wide dynamic broker defaults.
pub(super) const BROKER_DEFAULT_CONFIG_PATH: &str = "/config/brokers/<default>";

/// A failure to read the snapshot, naming the path.
#[derive(Debug, thiserror::Error)]
pub(super) enum SnapshotError {
    #[error("reading {path} from ZooKeeper: {source}")]
    Zk {
        path: String,
        #[source]
        source: ZkError,
    },
    #[error("malformed znode {path}: {source}")]
    Malformed {
        path: String,
        #[source]
        source: ZkDataError,
    },
}

/// A registered broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BrokerSnapshot {
    pub id: i32,
    pub znode: BrokerZNode,
    /// The registration's czxid: Kafka's broker epoch.
    pub broker_epoch: i64,
}

/// A partition's state znode and its zkVersion (the partition epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StateSnapshot {
    pub state: PartitionState,
    pub partition_epoch: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PartitionSnapshot {
    pub partition: i32,
    pub replicas: Vec<i32>,
    pub adding_replicas: Vec<i32>,
    pub removing_replicas: Vec<i32>,
    /// `None` when the controller has not written the state yet (or it was removed).
    pub state: Option<StateSnapshot>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TopicSnapshot {
    pub name: String,
    pub topic_id: Option<uuid::Uuid>,
    /// The overrides at `/config/topics/<t>`: the topic's non-default configs.
    pub configs: BTreeMap<String, String>,
    pub marked_for_deletion: bool,
    pub partitions: Vec<PartitionSnapshot>,
}

/// Where a snapshot was read, which decides what it can know. The fields a source cannot know
/// hold placeholders that are never shown (the renderers ask the source).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Source {
    /// Every znode describe-cluster reads.
    #[default]
    ZooKeeper,
    /// The embedded store's files: the persistent znodes only. Brokers are the one whose
    /// data dir lock is held (the broker running there), with no registration details; the
    /// controller's id is not known.
    DataDir,
    /// A broker's Metadata and DescribeConfigs: the live brokers' host, port and rack, the
    /// controller's id, leaders, leader epochs and ISRs, and config overrides; no znode state
    /// (epochs of the controller and partitions, reassignments, recovery, deletion marks).
    Broker,
}

impl Source {
    /// Broker registrations as ZooKeeper holds them: endpoints, registration time, broker epoch.
    pub(super) fn knows_registrations(self) -> bool {
        self == Source::ZooKeeper
    }

    /// The live brokers' host, port and rack, and the controller's id.
    pub(super) fn knows_live_brokers(self) -> bool {
        self != Source::DataDir
    }

    /// What only znodes hold: the controller epoch, partition epochs, reassignments in flight,
    /// leader recovery states and topics marked for deletion.
    pub(super) fn knows_znode_state(self) -> bool {
        self != Source::Broker
    }
}

/// Everything describe-cluster shows, as read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct ClusterSnapshot {
    pub source: Source,
    pub cluster_id: Option<String>,
    pub controller: Option<ControllerRegistration>,
    pub controller_epoch: Option<i32>,
    /// By id.
    pub brokers: Vec<BrokerSnapshot>,
    /// By name.
    pub topics: Vec<TopicSnapshot>,
    /// `/config/brokers/<default>`.
    pub broker_defaults: BTreeMap<String, String>,
}

fn zk_err(path: &str) -> impl FnOnce(ZkError) -> SnapshotError + '_ {
    move |source| SnapshotError::Zk {
        path: path.to_string(),
        source,
    }
}

fn malformed(path: &str) -> impl FnOnce(ZkDataError) -> SnapshotError + '_ {
    move |source| SnapshotError::Malformed {
        path: path.to_string(),
        source,
    }
}

/// The node's data and zkVersion, `None` if it does not exist.
async fn read(
    client: &dyn ZkClient,
    path: &str,
) -> Result<Option<(Vec<u8>, i32, i64)>, SnapshotError> {
    match client.get_data(path, false).await {
        Ok((data, stat)) => Ok(Some((data, stat.version, stat.czxid))),
        Err(ZkError::NoNode(_)) => Ok(None),
        Err(e) => Err(zk_err(path)(e)),
    }
}

/// The children's names, none if the node does not exist.
async fn children(client: &dyn ZkClient, path: &str) -> Result<Vec<String>, SnapshotError> {
    match client.get_children(path, false).await {
        Ok((kids, _)) => Ok(kids),
        Err(ZkError::NoNode(_)) => Ok(Vec::new()),
        Err(e) => Err(zk_err(path)(e)),
    }
}

async fn read_config(
    client: &dyn ZkClient,
    path: &str,
) -> Result<BTreeMap<String, String>, SnapshotError> {
    match read(client, path).await? {
        Some((data, _, _)) => zk_data::decode_entity_config(&data).map_err(malformed(path)),
        None => Ok(BTreeMap::new()),
    }
}

/// Reads the whole snapshot over `client` (already rooted at the chroot).
pub(super) async fn read_snapshot(client: &dyn ZkClient) -> Result<ClusterSnapshot, SnapshotError> {
    let cluster_id = match read(client, CLUSTER_ID_PATH).await? {
        Some((data, _, _)) => {
            Some(zk_data::decode_cluster_id(&data).map_err(malformed(CLUSTER_ID_PATH))?)
        }
        None => None,
    };
    let controller = match read(client, CONTROLLER_PATH).await? {
        Some((data, _, _)) => {
            Some(ControllerRegistration::decode(&data).map_err(malformed(CONTROLLER_PATH))?)
        }
        None => None,
    };
    let controller_epoch = match read(client, CONTROLLER_EPOCH_PATH).await? {
        Some((data, _, _)) => Some(
            zk_data::decode_controller_epoch(&data).map_err(malformed(CONTROLLER_EPOCH_PATH))?,
        ),
        None => None,
    };
    let brokers = read_brokers(client).await?;
    let deleting: BTreeSet<String> = children(client, DELETE_TOPICS_PATH)
        .await?
        .into_iter()
        .collect();
    let mut topics = Vec::new();
    for name in children(client, TOPICS_PATH).await? {
        if let Some(topic) = read_topic(client, &name, deleting.contains(&name)).await? {
            topics.push(topic);
        }
    }
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    let broker_defaults = read_config(client, BROKER_DEFAULT_CONFIG_PATH).await?;
    Ok(ClusterSnapshot {
        source: Source::ZooKeeper,
        cluster_id,
        controller,
        controller_epoch,
        brokers,
        topics,
        broker_defaults,
    })
}

async fn read_brokers(client: &dyn ZkClient) -> Result<Vec<BrokerSnapshot>, SnapshotError> {
    let mut brokers = Vec::new();
    for child in children(client, BROKER_IDS_PATH).await? {
        let path = format!("{BROKER_IDS_PATH}/{child}");
        let id: i32 = child.parse().map_err(|_| SnapshotError::Malformed {
            path: path.clone(),
            source: ZkDataError::Invalid(format!("broker id {child:?} is not an integer")),
        })?;
        let Some((data, _, czxid)) = read(client, &path).await? else {
            continue;
        };
        let znode = BrokerZNode::decode(&data).map_err(malformed(&path))?;
        brokers.push(BrokerSnapshot {
            id,
            znode,
            broker_epoch: czxid,
        });
    }
    brokers.sort_by_key(|b| b.id);
    Ok(brokers)
}

async fn read_topic(
    client: &dyn ZkClient,
    name: &str,
    marked_for_deletion: bool,
) -> Result<Option<TopicSnapshot>, SnapshotError> {
    let path = zk_data::topic_path(name);
    let Some((data, _, _)) = read(client, &path).await? else {
        return Ok(None);
    };
    let assignment = TopicAssignment::decode(&data).map_err(malformed(&path))?;
    let mut partitions = Vec::new();
    for (&partition, replicas) in &assignment.partitions {
        let state_path = format!("{path}/partitions/{partition}/state");
        let state = match read(client, &state_path).await? {
            Some((data, version, _)) => Some(StateSnapshot {
                state: PartitionState::decode(&data).map_err(malformed(&state_path))?,
                partition_epoch: version,
            }),
            None => None,
        };
        let list = |m: &BTreeMap<i32, Vec<i32>>| m.get(&partition).cloned().unwrap_or_default();
        partitions.push(PartitionSnapshot {
            partition,
            replicas: replicas.clone(),
            adding_replicas: list(&assignment.adding_replicas),
            removing_replicas: list(&assignment.removing_replicas),
            state,
        });
    }
    Ok(Some(TopicSnapshot {
        name: name.to_string(),
        topic_id: assignment.topic_id,
        configs: read_config(client, &zk_data::topic_config_path(name)).await?,
        marked_for_deletion,
        partitions,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::recipes::create_recursive;
    use crate::zk::{EmbeddedStore, ZkClient};

    #[tokio::test]
    async fn an_empty_store_reads_as_an_empty_cluster() {
        let store = EmbeddedStore::in_memory();
        let s = read_snapshot(&store.session()).await.unwrap();
        assert_eq!(s, ClusterSnapshot::default());
    }

    #[tokio::test]
    async fn epochs_come_from_the_stats_and_missing_states_are_none() {
        let store = EmbeddedStore::in_memory();
        let zk = store.session();
        let w = async |p: &str, d: &str| create_recursive(&zk, p, d.as_bytes()).await.unwrap();
        w(
            "/brokers/ids/2",
            r#"{"version":1,"host":"h","port":1,"jmx_port":-1}"#,
        )
        .await;
        w(
            "/brokers/topics/t",
            r#"{"version":1,"partitions":{"0":[2],"1":[2]}}"#,
        )
        .await;
        w(
            "/brokers/topics/t/partitions/0/state",
            r#"{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":0,"isr":[2]}"#,
        )
        .await;
        zk.set_data(
            "/brokers/topics/t/partitions/0/state",
            br#"{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":1,"isr":[2]}"#,
            -1,
        )
        .await
        .unwrap();
        w("/admin/delete_topics/t", "").await;
        let czxid = zk
            .exists("/brokers/ids/2", false)
            .await
            .unwrap()
            .unwrap()
            .czxid;
        let s = read_snapshot(&zk).await.unwrap();
        assert_eq!(s.brokers.len(), 1);
        assert_eq!((s.brokers[0].id, s.brokers[0].broker_epoch), (2, czxid));
        let t = &s.topics[0];
        assert!(t.marked_for_deletion);
        let state = t.partitions[0].state.as_ref().unwrap();
        assert_eq!((state.partition_epoch, state.state.leader_epoch), (1, 1));
        assert_eq!(t.partitions[1].state, None);
        w("/brokers/topics/t/partitions/1/state", "{").await;
        match read_snapshot(&zk).await {
            Err(SnapshotError::Malformed { path, .. }) => {
                assert_eq!(path, "/brokers/topics/t/partitions/1/state");
            }
            other => panic!("{other:?}"),
        }
    }
}
