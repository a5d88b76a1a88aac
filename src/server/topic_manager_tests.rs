//! Tests of the topic manager's replica assignment over the embedded store: CreateTopics lays
//! a topic out with Kafka's algorithm over the live brokers and their racks (and fails, as
//! Kafka does, when only some have one); CreatePartitions starts from partition 0's first
//! replica in the id-sorted `/brokers/ids`, applies that index to the rack-alternated list and
//! numbers from the existing count.

use crate::admin::replica_assignment::{Assignment, BrokerMetadata as Broker};
use crate::server::metadata_cache::{
    BrokerMetadata as CachedBroker, PartitionMetadata, TopicMetadata,
};
use crate::storage::log_manager::{LogManager, LogManagerConfig, now_ms};
use crate::zk::EmbeddedStore;
use crate::zk::recipes::ensure_persistent_paths;
use crate::zk::zk_data::BrokerRegistration;

use super::*;

/// The racks of AdminUtils' documented example: alternated as 0,3,1,5,4,2.
const RACKS: &[(BrokerId, &str)] = &[
    (0, "rack1"),
    (1, "rack3"),
    (2, "rack3"),
    (3, "rack2"),
    (4, "rack2"),
    (5, "rack1"),
];

struct Fixture {
    _dir: tempfile::TempDir,
    zk: Arc<dyn ZkClient>,
    cache: Arc<MetadataCache>,
    manager: TopicManager,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::in_memory();
    let zk: Arc<dyn ZkClient> = Arc::new(store.session());
    ensure_persistent_paths(zk.as_ref()).await.unwrap();
    let config = Arc::new(BrokerConfig::load(None, &["broker.id=0".to_string()]).unwrap());
    let log_manager = Arc::new(
        LogManager::startup(
            LogManagerConfig::new(vec![dir.path().join("data")], 0, "cluster"),
            now_ms(),
        )
        .unwrap(),
    );
    let replica_manager = Arc::new(ReplicaManager::new(0, log_manager));
    let cache = Arc::new(MetadataCache::new("cluster".into()));
    let manager = TopicManager::new(Arc::clone(&zk), config, Arc::clone(&cache), replica_manager);
    Fixture {
        _dir: dir,
        zk,
        cache,
        manager,
    }
}

/// The brokers as UpdateMetadata would have told the cache.
fn cache_brokers(f: &Fixture, racks: &[(BrokerId, Option<&str>)]) {
    f.cache.set_brokers(
        racks
            .iter()
            .map(|(id, rack)| CachedBroker {
                id: *id,
                rack: rack.map(str::to_string),
                endpoints: Vec::new(),
            })
            .collect(),
    );
}

/// The brokers' registrations in `/brokers/ids`.
async fn register(f: &Fixture, racks: &[(BrokerId, Option<&str>)]) {
    for (id, rack) in racks {
        let registration = BrokerRegistration {
            endpoints: Vec::new(),
            rack: rack.map(str::to_string),
            jmx_port: -1,
            timestamp_ms: 1,
        };
        f.zk.create(
            &zk_data::broker_id_path(*id),
            &registration.encode(),
            CreateMode::Ephemeral,
        )
        .await
        .unwrap();
    }
}

fn racked() -> Vec<(BrokerId, Option<&'static str>)> {
    RACKS.iter().map(|(id, r)| (*id, Some(*r))).collect()
}

async fn stored(f: &Fixture, topic: &str) -> Assignment {
    let (data, _) =
        f.zk.get_data(&zk_data::topic_path(topic), false)
            .await
            .unwrap();
    TopicAssignment::decode(&data).unwrap().partitions
}

fn kafka(
    racks: &[(BrokerId, Option<&str>)],
    n: i32,
    rf: i32,
    start: AssignmentStart,
    from: i32,
) -> Assignment {
    let brokers: Vec<Broker> = racks.iter().map(|(id, r)| Broker::new(*id, *r)).collect();
    assign_replicas_to_brokers(&brokers, n, rf, start, from).unwrap()
}

#[tokio::test]
async fn create_topics_assigns_with_kafkas_rack_aware_algorithm() {
    let f = fixture().await;
    cache_brokers(&f, &racked());
    let topic = NewTopic {
        name: "orders".into(),
        num_partitions: 12,
        replication_factor: 3,
        ..NewTopic::default()
    };
    f.manager
        .create_topic(&topic, false, &mut ControllerMutationQuota::unbounded())
        .await
        .unwrap();
    let got = stored(&f, "orders").await;
    // Some pair of Kafka's draws gives exactly this.
    let draws = (0..6).flat_map(|s| (0..6).map(move |shift| (s, shift)));
    let matching = draws
        .filter(|(s, shift)| {
            let start = AssignmentStart {
                start_index: *s,
                replica_shift: *shift,
            };
            kafka(&racked(), 12, 3, start, 0) == got
        })
        .count();
    assert!(matching > 0, "{got:?}");
    let rack = |b: &BrokerId| RACKS.iter().find(|(id, _)| id == b).unwrap().1;
    for replicas in got.values() {
        let racks: std::collections::BTreeSet<&str> = replicas.iter().map(rack).collect();
        assert_eq!(racks.len(), 3, "{replicas:?}");
    }
}

#[tokio::test]
async fn create_topics_fails_when_only_some_brokers_have_a_rack() {
    let f = fixture().await;
    cache_brokers(&f, &[(0, Some("a")), (1, None), (2, Some("b"))]);
    let topic = NewTopic {
        name: "t".into(),
        num_partitions: 3,
        replication_factor: 2,
        ..NewTopic::default()
    };
    let err = f
        .manager
        .create_topic(&topic, false, &mut ControllerMutationQuota::unbounded())
        .await
        .unwrap_err();
    assert_eq!(err.error_code(), ErrorCode::UnknownServerError);
    assert_eq!(
        err.to_string(),
        "Not all brokers have rack information for replica rack aware assignment."
    );
    assert!(f.zk.get_data("/brokers/topics/t", false).await.is_err());
}

/// Topic `t` with the `existing` assignment, in ZooKeeper and in the cache.
async fn cache_topic(f: &Fixture, existing: &Assignment) {
    let znode = TopicAssignment {
        partitions: existing.clone(),
        ..TopicAssignment::default()
    };
    recipes::create_recursive(f.zk.as_ref(), &zk_data::topic_path("t"), &znode.encode())
        .await
        .unwrap();
    let partitions = existing
        .iter()
        .map(|(p, replicas)| {
            (
                *p,
                PartitionMetadata {
                    leader: replicas[0],
                    leader_epoch: 0,
                    replicas: replicas.clone(),
                    isr: replicas.clone(),
                    offline_replicas: Vec::new(),
                },
            )
        })
        .collect();
    f.cache.update_topic(TopicMetadata {
        name: "t".into(),
        topic_id: Uuid::new_v4(),
        is_internal: false,
        partitions,
    });
}

#[tokio::test]
async fn create_partitions_start_at_partition_0s_leader_in_the_rack_alternated_list() {
    let f = fixture().await;
    register(&f, &racked()).await;
    // Partition 0 on broker 3 first: broker 3 is at index 3 of the id-sorted list 0..5, and
    // Kafka applies that index to the alternated list 0,3,1,5,4,2: partition p leads at
    // index (p + 3) % 6, so partition 4 on broker 3 (the id-sorted list would give broker 1).
    let existing: Assignment = [(0, vec![3, 1, 0]), (1, vec![1, 0, 3]), (2, vec![0, 3, 1])]
        .into_iter()
        .collect();
    cache_topic(&f, &existing).await;
    f.manager
        .create_partitions(
            "t",
            7,
            None,
            false,
            &mut ControllerMutationQuota::unbounded(),
        )
        .await
        .unwrap();
    let got = stored(&f, "t").await;
    let added: Assignment = got.range(3..).map(|(p, r)| (*p, r.clone())).collect();
    assert_eq!(added, kafka(&racked(), 4, 3, AssignmentStart::fixed(3), 3));
    assert_eq!(added[&4][0], 3, "{added:?}");
    assert_eq!(got.range(..3).count(), 3);
    assert_eq!(got[&0], existing[&0]);
}

#[tokio::test]
async fn create_partitions_enforce_racks_on_every_registered_broker() {
    let f = fixture().await;
    register(&f, &[(0, Some("a")), (1, None), (2, Some("b"))]).await;
    let existing: Assignment = [(0, vec![1, 2])].into_iter().collect();
    cache_topic(&f, &existing).await;
    let err = f
        .manager
        .create_partitions(
            "t",
            2,
            None,
            false,
            &mut ControllerMutationQuota::unbounded(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.error_code(), ErrorCode::UnknownServerError);
    assert!(
        err.to_string()
            .starts_with("Not all brokers have rack information.")
    );
    // A manual assignment is checked against the registered brokers.
    let err = f
        .manager
        .create_partitions(
            "t",
            2,
            Some(vec![vec![0, 9]]),
            false,
            &mut ControllerMutationQuota::unbounded(),
        )
        .await;
    assert!(err.is_err());
}

#[tokio::test]
async fn create_partitions_without_racks_number_from_the_existing_count() {
    let f = fixture().await;
    let plain: Vec<(BrokerId, Option<&str>)> = (0..5).map(|id| (id, None)).collect();
    register(&f, &plain).await;
    let existing: Assignment = (0..5)
        .map(|p| (p, vec![(p + 2) % 5, (p + 3) % 5]))
        .collect();
    cache_topic(&f, &existing).await;
    f.manager
        .create_partitions(
            "t",
            8,
            None,
            false,
            &mut ControllerMutationQuota::unbounded(),
        )
        .await
        .unwrap();
    let got = stored(&f, "t").await;
    let added: Assignment = got.range(5..).map(|(p, r)| (*p, r.clone())).collect();
    // Partition 0's first replica is broker 2: start index 2, shift 2, then one more for
    // partition 5 (a new round).
    assert_eq!(added, kafka(&plain, 3, 2, AssignmentStart::fixed(2), 5));
    assert_eq!(added[&5], vec![2, 1]);
}
