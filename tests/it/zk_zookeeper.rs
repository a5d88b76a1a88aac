//! The `ZkClient` conformance scenario, run against the embedded store and against a real
//! ZooKeeper (Debian's `zookeeper` package, started here on 127.0.0.1 with a free port and a
//! temp dir by `support::zookeeper`), so both implementations keep the same semantics; and the
//! partition state's epochs through `KafkaZkClient` on both.

use std::sync::Arc;
use std::time::Duration;

use kcli::cluster::TopicPartition;
use kcli::zk::kafka_zk_client::{KafkaZkClient, StateWrite};
use kcli::zk::recipes::ensure_persistent_paths;
use kcli::zk::zk_data::PartitionState;
use kcli::zk::zookeeper::ZooKeeperClient;
use kcli::zk::{
    CreateMode, EmbeddedStore, Op, OpResult, WatchedEvent, WatchedEventType, ZkClient, ZkError,
};

use crate::support::zookeeper::ZkServer;

async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<WatchedEvent>) -> WatchedEvent {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap()
        .unwrap()
}

/// The shared scenario: `a` and `b` are two sessions on the same store or ensemble.
async fn conformance(a: Arc<dyn ZkClient>, b: Arc<dyn ZkClient>) {
    const P: CreateMode = CreateMode::Persistent;
    assert_ne!(a.session_id(), b.session_id());
    let mut events = a.take_events().unwrap();
    // CRUD and versions.
    assert_eq!(
        a.create("/k/x", b"", P).await,
        Err(ZkError::NoNode("/k/x".into()))
    );
    let (path, st) = a.create("/k", b"one", P).await.unwrap();
    assert_eq!((path.as_str(), st.version, st.data_length), ("/k", 0, 3));
    assert_eq!(
        b.create("/k", b"", P).await,
        Err(ZkError::NodeExists("/k".into()))
    );
    assert_eq!(
        b.set_data("/k", b"two", 3).await,
        Err(ZkError::BadVersion("/k".into()))
    );
    let st = b.set_data("/k", b"two", 0).await.unwrap();
    assert_eq!(st.version, 1);
    assert_eq!(a.get_data("/k", false).await.unwrap().0, b"two");
    // Sequential names from the parent's cversion.
    let (s0, _) = a
        .create("/k/c_", b"", CreateMode::PersistentSequential)
        .await
        .unwrap();
    let (s1, _) = a
        .create("/k/c_", b"", CreateMode::PersistentSequential)
        .await
        .unwrap();
    assert_eq!(
        (s0.as_str(), s1.as_str()),
        ("/k/c_0000000000", "/k/c_0000000001")
    );
    assert_eq!(
        a.delete("/k", -1).await,
        Err(ZkError::NotEmpty("/k".into()))
    );
    let (kids, st) = a.get_children("/k", false).await.unwrap();
    assert_eq!(
        (kids, st.num_children),
        (
            vec!["c_0000000000".to_string(), "c_0000000001".to_string()],
            2
        )
    );
    // Multi: all or nothing.
    let failing = vec![
        Op::Create {
            path: "/k/m".into(),
            data: vec![],
            mode: P,
        },
        Op::Check {
            path: "/k".into(),
            version: 9,
        },
    ];
    assert_eq!(
        a.multi(failing).await,
        Err(ZkError::BadVersion("/k".into()))
    );
    assert!(a.exists("/k/m", false).await.unwrap().is_none());
    let ok = vec![
        Op::Check {
            path: "/k".into(),
            version: 1,
        },
        Op::Create {
            path: "/k/m".into(),
            data: b"d".to_vec(),
            mode: P,
        },
        Op::SetData {
            path: "/k".into(),
            data: b"3".to_vec(),
            version: 1,
        },
        Op::Delete {
            path: s0.clone(),
            version: 0,
        },
    ];
    let res = a.multi(ok).await.unwrap();
    assert!(matches!(&res[1], OpResult::Create { path, .. } if path == "/k/m"));
    assert!(matches!(&res[2], OpResult::SetData { stat } if stat.version == 2));
    // Ephemerals and watches: b's ephemeral vanishes when b closes, and a's watches fire once.
    let (_, st) = b.create("/k/e", b"", CreateMode::Ephemeral).await.unwrap();
    assert_eq!(st.ephemeral_owner, b.session_id());
    assert_eq!(
        b.create("/k/e/x", b"", P).await,
        Err(ZkError::NoChildrenForEphemerals("/k/e/x".into()))
    );
    a.exists("/k/e", true).await.unwrap();
    b.close().await.unwrap();
    assert_eq!(
        next(&mut events).await,
        WatchedEvent {
            event_type: WatchedEventType::NodeDeleted,
            path: "/k/e".into()
        }
    );
    assert!(a.exists("/k/e", false).await.unwrap().is_none());
    a.get_data("/k/m", true).await.unwrap();
    a.set_data("/k/m", b"1", -1).await.unwrap();
    a.set_data("/k/m", b"2", -1).await.unwrap();
    assert_eq!(
        next(&mut events).await,
        WatchedEvent {
            event_type: WatchedEventType::NodeDataChanged,
            path: "/k/m".into()
        }
    );
    a.get_children("/k", true).await.unwrap();
    a.create("/k/n", b"", P).await.unwrap();
    assert_eq!(
        next(&mut events).await,
        WatchedEvent {
            event_type: WatchedEventType::NodeChildrenChanged,
            path: "/k".into()
        }
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(events.try_recv().is_err(), "each watch fires once");
}

#[tokio::test]
async fn embedded_store_conforms() {
    let store = EmbeddedStore::in_memory();
    conformance(Arc::new(store.session()), Arc::new(store.session())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_zookeeper_conforms() {
    let server = ZkServer::start_async().await;
    let connect = server.connect_string();
    let a = ZooKeeperClient::connect(&connect, Duration::from_secs(6))
        .await
        .unwrap();
    let b = ZooKeeperClient::connect(&connect, Duration::from_secs(6))
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        conformance(Arc::new(a), Arc::new(b)),
    )
    .await
    .unwrap();
    drop(server);
}

/// A new partition's epoch is the version its state znode reads at (0), so the leader's first
/// AlterPartition, sent at that epoch, is a conditional write that a later controller can check
/// against the znode; a write at an epoch it has moved past, or at none (-1, which ZooKeeper
/// would take as any version), is refused.
async fn partition_state_epochs(zk: Arc<dyn ZkClient>) {
    ensure_persistent_paths(zk.as_ref()).await.unwrap();
    let client = KafkaZkClient::new(zk.clone());
    let epoch = client
        .register_controller_and_increment_controller_epoch(1, 0)
        .await
        .unwrap();
    zk.create("/brokers/topics/t", b"{}", CreateMode::Persistent)
        .await
        .unwrap();
    let tp = TopicPartition::new("t", 0);
    let state = |isr: Vec<i32>| PartitionState {
        leader: 1,
        leader_epoch: 0,
        isr,
        controller_epoch: epoch.epoch,
        leader_recovery_state: 0,
    };
    let created = client
        .create_topic_partition_state(epoch, &tp, &state(vec![1, 2, 3]))
        .await
        .unwrap();
    let (_, read) = client
        .get_topic_partition_state(&tp)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((created, read), (0, 0));
    assert_eq!(
        client
            .update_leader_and_isr(epoch, &tp, &state(vec![1, 2]), created)
            .await
            .unwrap(),
        StateWrite::Written { partition_epoch: 1 }
    );
    for stale in [created, -1] {
        assert_eq!(
            client
                .update_leader_and_isr(epoch, &tp, &state(vec![1]), stale)
                .await
                .unwrap(),
            StateWrite::Stale,
            "at partition epoch {stale}"
        );
    }
    let (now, version) = client
        .get_topic_partition_state(&tp)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((now.isr, version), (vec![1, 2], 1));
}

#[tokio::test]
async fn embedded_store_partition_state_epochs() {
    partition_state_epochs(Arc::new(EmbeddedStore::in_memory().session())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_zookeeper_partition_state_epochs() {
    let server = ZkServer::start_async().await;
    let zk = ZooKeeperClient::connect(&server.connect_string(), Duration::from_secs(6))
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        partition_state_epochs(Arc::new(zk)),
    )
    .await
    .unwrap();
    drop(server);
}
