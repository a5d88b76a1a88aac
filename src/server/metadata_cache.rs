//! Kafka's `MetadataCache`: what this broker knows of the cluster, for Metadata, DescribeCluster
//! and the topic-id lookups of Fetch and DeleteTopics. It is written by whoever learns of a
//! change (the topic manager in single-node mode, UpdateMetadata in a cluster) and read by every
//! request handler. Readers get cloned snapshots of what they ask for; no lock is held by a
//! caller.

use std::collections::{BTreeMap, HashMap};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use uuid::Uuid;

use crate::cluster::BrokerId;
use crate::cluster::sync::{read, write};

/// One partition's leadership as the cluster last published it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// -1 when the partition has no leader.
    pub leader: BrokerId,
    pub leader_epoch: i32,
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    /// Replicas on a failed log dir of a live broker (offline, as those of dead brokers are).
    pub offline_replicas: Vec<BrokerId>,
}

/// A topic: its id, whether it is internal (`__consumer_offsets`), and its partitions by index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMetadata {
    pub name: String,
    pub topic_id: Uuid,
    pub is_internal: bool,
    pub partitions: BTreeMap<i32, PartitionMetadata>,
}

/// One listener of a live broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerEndPoint {
    pub listener_name: String,
    pub host: String,
    pub port: i32,
}

/// A live broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerMetadata {
    pub id: BrokerId,
    pub rack: Option<String>,
    pub endpoints: Vec<BrokerEndPoint>,
}

impl BrokerMetadata {
    /// The broker's endpoint on `listener_name`, the listener the request came in on: Kafka
    /// answers each client with the addresses of the listener it used.
    pub fn endpoint(&self, listener_name: &str) -> Option<&BrokerEndPoint> {
        self.endpoints
            .iter()
            .find(|e| e.listener_name == listener_name)
    }
}

/// One partition of an UpdateMetadata: its new metadata, or `None` to drop it.
#[derive(Debug, Clone)]
pub struct PartitionUpdate {
    pub topic: String,
    /// Nil when the request version carries no topic ids.
    pub topic_id: Uuid,
    pub is_internal: bool,
    pub partition: i32,
    pub metadata: Option<PartitionMetadata>,
}

#[derive(Debug, Default)]
struct Snapshot {
    cluster_id: String,
    controller_id: Option<BrokerId>,
    brokers: BTreeMap<BrokerId, BrokerMetadata>,
    topics: BTreeMap<String, TopicMetadata>,
    topic_names: HashMap<Uuid, String>,
}

/// The cache. Invariant: `topic_names` is exactly the inverse of `topics`' ids.
#[derive(Debug, Default)]
pub struct MetadataCache {
    inner: RwLock<Snapshot>,
    /// Bumped after every change, so admin requests can wait for the controller's decisions
    /// to reach this broker (Kafka's DelayedCreatePartitions / DelayedDeleteTopics).
    changes: tokio::sync::watch::Sender<u64>,
}

impl MetadataCache {
    pub fn new(cluster_id: String) -> Self {
        MetadataCache {
            inner: RwLock::new(Snapshot {
                cluster_id,
                ..Snapshot::default()
            }),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Snapshot> {
        read(&self.inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Snapshot> {
        write(&self.inner)
    }

    pub fn cluster_id(&self) -> String {
        self.read().cluster_id.clone()
    }

    pub fn controller_id(&self) -> Option<BrokerId> {
        self.read().controller_id
    }

    /// Live brokers in id order.
    pub fn alive_brokers(&self) -> Vec<BrokerMetadata> {
        self.read().brokers.values().cloned().collect()
    }

    /// Kafka's `hasAliveBroker`.
    pub fn has_alive_broker(&self, id: BrokerId) -> bool {
        self.read().brokers.contains_key(&id)
    }

    pub fn alive_broker_ids(&self) -> Vec<BrokerId> {
        self.read().brokers.keys().copied().collect()
    }

    pub fn set_brokers(&self, brokers: Vec<BrokerMetadata>) {
        self.write().brokers = brokers.into_iter().map(|b| (b.id, b)).collect();
    }

    pub fn contains_topic(&self, name: &str) -> bool {
        self.read().topics.contains_key(name)
    }

    pub fn topic(&self, name: &str) -> Option<TopicMetadata> {
        self.read().topics.get(name).cloned()
    }

    pub fn topic_id(&self, name: &str) -> Option<Uuid> {
        self.read().topics.get(name).map(|t| t.topic_id)
    }

    pub fn topic_name(&self, id: Uuid) -> Option<String> {
        self.read().topic_names.get(&id).cloned()
    }

    /// Every topic, in name order.
    pub fn all_topics(&self) -> Vec<TopicMetadata> {
        self.read().topics.values().cloned().collect()
    }

    pub fn topic_names(&self) -> Vec<String> {
        self.read().topics.keys().cloned().collect()
    }

    pub fn partition(&self, topic: &str, partition: i32) -> Option<PartitionMetadata> {
        self.read()
            .topics
            .get(topic)
            .and_then(|t| t.partitions.get(&partition))
            .cloned()
    }

    /// Adds or replaces a topic.
    pub fn update_topic(&self, topic: TopicMetadata) {
        let mut s = self.write();
        if let Some(old) = s.topics.get(&topic.name).map(|t| t.topic_id) {
            s.topic_names.remove(&old);
        }
        s.topic_names.insert(topic.topic_id, topic.name.clone());
        s.topics.insert(topic.name.clone(), topic);
    }

    /// Applies an UpdateMetadata (Kafka's `ZkMetadataCache.updateMetadata`): the live brokers
    /// and the controller are replaced; each partition is set, or removed when its leader is
    /// -2 (its topic is being deleted), a topic going with its last partition.
    pub fn apply_update_metadata(
        &self,
        controller_id: BrokerId,
        brokers: Vec<BrokerMetadata>,
        partitions: Vec<PartitionUpdate>,
    ) {
        let mut s = self.write();
        s.controller_id = (controller_id >= 0).then_some(controller_id);
        s.brokers = brokers.into_iter().map(|b| (b.id, b)).collect();
        for update in partitions {
            match update.metadata {
                Some(metadata) => {
                    let snapshot = &mut *s;
                    let topic = snapshot
                        .topics
                        .entry(update.topic.clone())
                        .or_insert_with(|| TopicMetadata {
                            name: update.topic.clone(),
                            topic_id: update.topic_id,
                            is_internal: update.is_internal,
                            partitions: BTreeMap::new(),
                        });
                    if !update.topic_id.is_nil() && topic.topic_id != update.topic_id {
                        snapshot.topic_names.remove(&topic.topic_id);
                        topic.topic_id = update.topic_id;
                    }
                    topic.partitions.insert(update.partition, metadata);
                    let id = topic.topic_id;
                    snapshot.topic_names.insert(id, update.topic);
                }
                None => {
                    let emptied = match s.topics.get_mut(&update.topic) {
                        Some(t) => {
                            t.partitions.remove(&update.partition);
                            t.partitions.is_empty().then_some(t.topic_id)
                        }
                        None => None,
                    };
                    if let Some(id) = emptied {
                        s.topics.remove(&update.topic);
                        s.topic_names.remove(&id);
                    }
                }
            }
        }
        drop(s);
        self.changed();
    }

    /// Waits until `done` holds for the cache, at most `timeout`; whether it did.
    pub async fn wait_for(
        &self,
        timeout: std::time::Duration,
        done: impl Fn(&MetadataCache) -> bool,
    ) -> bool {
        let mut changes = self.changes.subscribe();
        let wait = async {
            loop {
                if done(self) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok() && done(self)
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub fn remove_topic(&self, name: &str) -> Option<TopicMetadata> {
        let mut s = self.write();
        let removed = s.topics.remove(name)?;
        s.topic_names.remove(&removed.topic_id);
        Some(removed)
    }
}

/// ZooKeeper mode's ISR eligibility (Kafka's `ZkMetadataCache.hasAliveBroker`): a follower may
/// join an ISR, or hold a high watermark while about to, only while the controller lists its
/// broker as live.
impl crate::replication::alter_partition::ReplicaEligibility for MetadataCache {
    fn is_replica_isr_eligible(&self, broker_id: BrokerId) -> bool {
        self.has_alive_broker(broker_id)
    }
}

/// Kafka's `getPartitionReplicaEndpoints`, one replica at a time: where a leader may point a
/// consumer (KIP-392) is a live broker with an endpoint on the consumer's listener.
impl crate::replication::ReplicaEndpoints for MetadataCache {
    fn replica_endpoint(
        &self,
        broker_id: BrokerId,
        listener_name: &str,
    ) -> Option<crate::replication::ReplicaEndpoint> {
        let state = self.read();
        let broker = state.brokers.get(&broker_id)?;
        broker
            .endpoint(listener_name)
            .map(|_| crate::replication::ReplicaEndpoint {
                rack: broker.rack.clone(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_stay_inverse() {
        let cache = MetadataCache::new("c".into());
        let a = Uuid::new_v4();
        let b = Uuid::new_v4();
        let topic = |id| TopicMetadata {
            name: "t".into(),
            topic_id: id,
            is_internal: false,
            partitions: BTreeMap::new(),
        };
        cache.update_topic(topic(a));
        cache.update_topic(topic(b));
        assert_eq!(cache.topic_name(a), None);
        assert_eq!(cache.topic_name(b).as_deref(), Some("t"));
        assert!(cache.remove_topic("t").is_some());
        assert_eq!(cache.topic_name(b), None);
        assert!(cache.all_topics().is_empty());
    }
}
