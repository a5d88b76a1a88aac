//! Three brokers on a real ZooKeeper: registrations and the controller as Kafka writes them, a
//! topic created by an admin client (through the controller; the others answer NOT_CONTROLLER),
//! its znodes field by field, and describe-cluster agreeing with ZooKeeper and with every
//! broker's Metadata. Producer ids are unique across brokers. A broker without an id takes
//! Kafka's generated one (1001, 1002, ...) and keeps it in `meta.properties`.

use std::collections::BTreeSet;

use kcli::protocol::messages::init_producer_id_request::InitProducerIdRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};
use serde_json::Value;

use super::{create_topic, create_topics_raw};
use crate::describe_cluster::describe_json;
use crate::serve_support::{KafkaConn, TestBroker};
use crate::support::cluster::{TestCluster, metadata, wait_until};

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ids(v: &Value) -> Vec<i32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| i32::try_from(x.as_i64().unwrap()).unwrap())
        .collect()
}

/// InitProducerId for an idempotent producer, retried (as clients do) while the broker waits
/// for its first block from the controller (COORDINATOR_LOAD_IN_PROGRESS).
pub fn init_producer_id(conn: &mut KafkaConn) -> i64 {
    wait_until(
        "InitProducerId answered",
        std::time::Duration::from_secs(20),
        || {
            let body = RequestKind::InitProducerId(InitProducerIdRequest {
                transactional_id: None,
                transaction_timeout_ms: 60_000,
                producer_id: -1,
                producer_epoch: -1,
                ..InitProducerIdRequest::default()
            });
            let ResponseKind::InitProducerId(r) = conn.call(&body, 4) else {
                panic!("not an InitProducerId response");
            };
            match r.error_code {
                0 => Some(r.producer_id),
                14 => None,
                code => panic!("InitProducerId: error {code}"),
            }
        },
    )
}

#[test]
fn three_brokers_register_elect_a_controller_and_agree_on_a_new_topic() {
    let cluster = TestCluster::start(3, &[("broker.rack", "rack-a")]);
    // Registrations: Kafka's version 5 JSON; the broker epoch is the czxid.
    for id in 1..=3 {
        let (data, _) = cluster.get(&format!("/brokers/ids/{id}")).unwrap();
        let reg = json(&data);
        let port = cluster.port(id);
        assert_eq!(reg["version"], 5, "{data}");
        assert_eq!(reg["host"], "127.0.0.1");
        assert_eq!(reg["port"], port);
        assert_eq!(reg["jmx_port"], -1);
        assert_eq!(reg["rack"], "rack-a");
        assert_eq!(
            reg["endpoints"],
            serde_json::json!([format!("PLAINTEXT://127.0.0.1:{port}")])
        );
        assert_eq!(
            reg["listener_security_protocol_map"],
            serde_json::json!({"PLAINTEXT": "PLAINTEXT"})
        );
        assert_eq!(reg["features"], serde_json::json!({}));
        assert!(reg["timestamp"].as_str().unwrap().parse::<i64>().unwrap() > 0);
    }
    // The controller: version 2 with kraftControllerEpoch -1; the first epoch is 1.
    let (data, _) = cluster.get("/controller").unwrap();
    let controller = json(&data);
    assert_eq!(controller["version"], 2, "{data}");
    assert_eq!(controller["kraftControllerEpoch"], -1);
    let controller_id = cluster.controller_id().unwrap();
    assert!((1..=3).contains(&controller_id));
    assert_eq!(cluster.controller_epoch(), 1);
    for id in 1..=3 {
        assert_eq!(
            metadata(cluster.port(id)).unwrap().controller_id,
            controller_id
        );
    }

    // Only the controller creates topics.
    let other = (1..=3).find(|id| *id != controller_id).unwrap();
    assert_eq!(create_topics_raw(cluster.port(other), "refused"), 41);
    assert!(cluster.get("/brokers/topics/refused").is_none());

    create_topic(&cluster, "t", 6, 3);
    let (data, _) = cluster.get("/brokers/topics/t").unwrap();
    let topic = json(&data);
    assert_eq!(topic["version"], 3, "{data}");
    assert_eq!(topic["adding_replicas"], serde_json::json!({}));
    assert_eq!(topic["removing_replicas"], serde_json::json!({}));
    let topic_id = topic["topic_id"].as_str().unwrap().to_string();
    assert_eq!(topic_id.len(), 22, "{topic_id}");
    let partitions = topic["partitions"].as_object().unwrap();
    assert_eq!(partitions.len(), 6);
    let mut leaders = BTreeSet::new();
    for (p, replicas) in partitions {
        let replicas = ids(replicas);
        assert_eq!(
            replicas.iter().collect::<BTreeSet<_>>().len(),
            3,
            "partition {p}: {replicas:?}"
        );
        leaders.insert(replicas[0]);
        let (data, stat) = cluster
            .get(&format!("/brokers/topics/t/partitions/{p}/state"))
            .unwrap();
        let state = json(&data);
        // Kafka's initial state: the first live replica leads, every live replica in the ISR.
        assert_eq!(state["version"], 1, "{data}");
        assert_eq!(state["controller_epoch"], 1);
        assert_eq!(state["leader_epoch"], 0);
        assert_eq!(state["leader"], replicas[0]);
        assert_eq!(ids(&state["isr"]), replicas);
        assert_eq!(stat.version, 0);
    }
    // Round-robin from a start broker: every broker leads some partition.
    assert_eq!(leaders, (1..=3).collect());

    // describe-cluster reads the same from ZooKeeper, and every broker's Metadata agrees.
    let (code, described) = describe_json(&cluster.connect(), &[]);
    assert_eq!(code, 0, "{described}");
    assert_eq!(described["controller"]["id"], controller_id);
    assert_eq!(described["controller"]["epoch"], 1);
    let brokers = described["brokers"].as_array().unwrap();
    assert_eq!(brokers.len(), 3);
    for b in brokers {
        let id = i32::try_from(b["id"].as_i64().unwrap()).unwrap();
        let (_, stat) = cluster.get(&format!("/brokers/ids/{id}")).unwrap();
        assert_eq!(b["broker_epoch"], stat.czxid);
        assert_eq!(b["rack"], "rack-a");
        assert_eq!(b["port"], cluster.port(id));
    }
    let views: Vec<_> = (1..=3)
        .map(|id| metadata(cluster.port(id)).unwrap())
        .collect();
    let t = described["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t")
        .unwrap();
    assert_eq!(t["topic_id"], topic_id.as_str());
    for p in t["partitions"].as_array().unwrap() {
        let index = i32::try_from(p["partition"].as_i64().unwrap()).unwrap();
        assert_eq!(p["flags"], serde_json::json!([]), "{p}");
        for view in &views {
            let shown = &view.topics["t"].1[&index];
            assert_eq!(p["leader"], shown.leader, "partition {index}");
            assert_eq!(p["leader_epoch"], shown.leader_epoch);
            assert_eq!(ids(&p["replicas"]), shown.replicas);
            assert_eq!(ids(&p["isr"]), shown.isr);
        }
    }

    // Producer ids are unique across brokers (each takes its own block).
    let mut seen = BTreeSet::new();
    for id in 1..=3 {
        let mut conn = KafkaConn::connect(cluster.port(id));
        for _ in 0..3 {
            let producer_id = init_producer_id(&mut conn);
            assert!(seen.insert(producer_id), "id {producer_id} twice");
        }
    }
}

#[test]
fn a_broker_without_an_id_takes_1001_from_the_sequence_and_keeps_it_across_a_restart() {
    let _one = crate::support::cluster::exclusive();
    let zk = crate::support::zookeeper::ZkServer::start();
    let connect = format!("{}/gen", zk.connect_string());
    let session = ("zookeeper.session.timeout.ms", "6000");
    let mut first = TestBroker::start(&[("zookeeper.connect", connect.as_str()), session]);
    let registered = |id: i32| {
        crate::support::cluster::with_zk(&connect, async move |zk: &dyn kcli::zk::ZkClient| {
            zk.exists(&format!("/brokers/ids/{id}"), false)
                .await
                .unwrap()
                .is_some()
        })
    };
    assert!(registered(1001), "{}", first.stderr());
    let meta = std::fs::read_to_string(first.data_dir().join("meta.properties")).unwrap();
    assert!(meta.contains("broker.id=1001"), "{meta}");
    // A second broker takes the next id.
    let second = TestBroker::start(&[("zookeeper.connect", connect.as_str()), session]);
    assert!(registered(1002), "{}", second.stderr());
    // Restarted, the first keeps its id from meta.properties.
    first.stop();
    first.restart();
    assert!(registered(1001), "{}", first.stderr());
    assert!(!registered(1003));
    // Generated ids lead: a topic auto-created over both brokers takes acks=all writes on every
    // partition (a broker once refused each LeaderAndIsr naming its generated id).
    let bootstrap = format!("127.0.0.1:{},127.0.0.1:{}", first.port(), second.port());
    acked_on_every_partition(&bootstrap, "generated", 4);
}

/// Sends one acks=all record to each of `partitions` partitions of `topic` (auto-created with
/// them) and waits for every acknowledgement.
fn acked_on_every_partition(bootstrap: &str, topic: &str, partitions: i32) {
    use rdkafka::ClientConfig;
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .create()
            .unwrap();
        let topic_spec = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
        for result in admin
            .create_topics([&topic_spec], &AdminOptions::new())
            .await
            .unwrap()
        {
            result.unwrap();
        }
        let producer: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("acks", "all")
            .set("message.timeout.ms", "20000")
            .create()
            .unwrap();
        let mut deliveries = Vec::new();
        for partition in 0..partitions {
            let record = FutureRecord::<(), _>::to(topic)
                .payload("led")
                .partition(partition);
            deliveries.push(producer.send_result(record).unwrap());
        }
        for (partition, d) in deliveries.into_iter().enumerate() {
            if let Err((e, _)) = d.await.unwrap() {
                panic!("partition {partition}: {e}");
            }
        }
    });
}
