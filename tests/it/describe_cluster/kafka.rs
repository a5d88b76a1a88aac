//! describe-cluster against the znodes a real Kafka 3.9.1 broker writes (ZooKeeper mode, under
//! a chroot): every field agrees with the znodes as the test reads them itself; after the broker
//! stops, there is no controller, every partition is OFFLINE and the exit code is 1.

use std::time::{Duration, Instant};

use kcli::zk::ZkClient;
use kcli::zk::zk_data::{self, BrokerZNode, PartitionState, TopicAssignment};
use serde_json::{Value, json};

use super::{describe, describe_json, partition};
use crate::serve_support::{KafkaConn, create_topic_with};
use crate::support::kafka_broker::KafkaBroker;
use crate::support::zookeeper::ZkServer;

const TOPIC: &str = "real";
const PARTITIONS: i64 = 3;
const DEADLINE: Duration = Duration::from_secs(60);

async fn data(zk: &dyn ZkClient, path: &str) -> (Vec<u8>, kcli::zk::Stat) {
    zk.get_data(path, false).await.unwrap()
}

/// Polls `check` every 100 ms until it holds, failing after [`DEADLINE`].
async fn until(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < DEADLINE, "{what} within {DEADLINE:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn znodes_written_by_kafka_3_9_1() {
    let server = ZkServer::start_async().await;
    // Kafka creates the missing chroot itself; describe-cluster then reads under it.
    let connect = format!("{}/kafka391", server.connect_string());
    let zk = server.client("/kafka391").await;
    let mut broker = KafkaBroker::start(1, &connect, &[("broker.rack", "rack-a")], &zk).await;
    let created = tokio::task::spawn_blocking({
        let port = broker.port();
        move || {
            let mut conn = KafkaConn::connect(port);
            create_topic_with(
                &mut conn,
                TOPIC,
                3,
                &[("min.insync.replicas", "1"), ("retention.ms", "123456")],
            )
        }
    })
    .await
    .unwrap();
    until("every partition state written", async || {
        for p in 0..PARTITIONS {
            let path = format!("/brokers/topics/{TOPIC}/partitions/{p}/state");
            if zk.exists(&path, false).await.unwrap().is_none() {
                return false;
            }
        }
        true
    })
    .await;

    let (code, got) = {
        let connect = connect.clone();
        tokio::task::spawn_blocking(move || describe_json(&connect, &[]))
            .await
            .unwrap()
    };
    assert_eq!(code, 0, "{got}\n{}", broker.log());
    // The cluster, the controller and the broker, field by field from the znodes.
    let cluster_id = zk_data::decode_cluster_id(&data(&zk, "/cluster/id").await.0).unwrap();
    assert_eq!(got["cluster_id"], cluster_id.as_str());
    let epoch = zk_data::decode_controller_epoch(&data(&zk, "/controller_epoch").await.0).unwrap();
    let controller =
        zk_data::ControllerRegistration::decode(&data(&zk, "/controller").await.0).unwrap();
    assert_eq!(controller.broker_id, 1);
    assert_eq!(got["controller"], json!({"id": 1, "epoch": epoch}));
    let (bytes, stat) = data(&zk, &format!("/brokers/ids/{}", broker.id())).await;
    let reg = BrokerZNode::decode(&bytes).unwrap();
    assert_eq!(
        reg.version,
        5,
        "Kafka 3.9 writes version 5: {}",
        String::from_utf8_lossy(&bytes)
    );
    assert_eq!(
        got["brokers"],
        json!([{"id": 1, "host": "127.0.0.1", "port": broker.port(), "rack": "rack-a",
            "endpoints": [format!("PLAINTEXT://{}", broker.bootstrap())],
            "registration_time": reg.registration.timestamp_ms, "broker_epoch": stat.czxid}])
    );
    // The topic: its id (as CreateTopics returned it), configs and every partition's state.
    let assignment =
        TopicAssignment::decode(&data(&zk, &format!("/brokers/topics/{TOPIC}")).await.0).unwrap();
    let topic_id = zk_data::topic_id_to_string(assignment.topic_id.unwrap());
    assert_eq!(topic_id, zk_data::topic_id_to_string(created.topic_id));
    let topic = got["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == TOPIC)
        .unwrap();
    assert_eq!(topic["topic_id"], topic_id.as_str());
    assert_eq!(
        topic["configs"],
        json!({"min.insync.replicas": "1", "retention.ms": "123456"})
    );
    for p in 0..PARTITIONS {
        let (bytes, stat) = data(
            &zk,
            &format!("/brokers/topics/{TOPIC}/partitions/{p}/state"),
        )
        .await;
        let state = PartitionState::decode(&bytes).unwrap();
        let replicas = assignment
            .partitions
            .get(&i32::try_from(p).unwrap())
            .unwrap();
        assert_eq!(
            *partition(&got, TOPIC, p),
            json!({"partition": p, "leader": state.leader, "leader_epoch": state.leader_epoch,
                "partition_epoch": stat.version, "replicas": replicas, "isr": state.isr,
                "adding_replicas": [], "removing_replicas": [],
                "leader_recovery_state": state.leader_recovery_state, "flags": []})
        );
        assert_eq!(state.leader, 1);
    }

    for p in 0..PARTITIONS {
        let dir = broker.log_dir().join(format!("{TOPIC}-{p}"));
        assert!(
            dir.is_dir(),
            "Kafka (pid {}) hosts {}",
            broker.pid(),
            dir.display()
        );
    }

    // Every broker down: no controller, the last epoch, every partition OFFLINE, exit 1.
    broker.stop();
    until("/brokers/ids/1 and /controller gone", async || {
        zk.exists("/brokers/ids/1", false).await.unwrap().is_none()
            && zk.exists("/controller", false).await.unwrap().is_none()
    })
    .await;
    let (code, got) = {
        let connect = connect.clone();
        tokio::task::spawn_blocking(move || describe_json(&connect, &[]))
            .await
            .unwrap()
    };
    assert_eq!(code, 1, "{got}");
    assert_eq!(got["controller"], json!({"id": null, "epoch": epoch}));
    assert_eq!(got["brokers"], json!([]));
    for p in 0..PARTITIONS {
        let flags = &partition(&got, TOPIC, p)["flags"];
        assert!(
            flags.as_array().unwrap().contains(&Value::from("OFFLINE")),
            "{TOPIC}-{p}: {flags}"
        );
    }
    let (code, text, _) = tokio::task::spawn_blocking(move || describe(&connect, &["--offline"]))
        .await
        .unwrap();
    assert_eq!(code, 1);
    assert!(text.contains("no controller"), "{text}");
    assert!(
        text.contains(&format!(
            "{PARTITIONS} partitions shown: {PARTITIONS} OFFLINE"
        )),
        "{text}"
    );
    drop(server);
}
