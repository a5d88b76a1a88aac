//! `kcli assign` against a live cluster of three kcli brokers: a topic crowded onto two of them
//! gets a `--minimize-movement` proposal that moves only what the third must take, the same from
//! Metadata (`--bootstrap-server`, with bytes moved from DescribeLogDirs) and from ZooKeeper;
//! `--execute --throttle` through the controller's AlterPartitionReassignments (the rates and
//! throttled replicas set as Kafka's tool sets them), `--verify` until the controller has
//! carried it out (then the throttle cleared) (and Kafka 3.9.1's `kafka-reassign-partitions --verify` reads
//! kcli's JSON and agrees), the rollback through the legacy znode, and `--cancel` with nothing in
//! progress.

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};

use super::{assign, proposal};
use crate::cluster::create_topic_assigned;
use crate::kafka_tools::support::java;
use crate::serve_support::run_within;
use crate::support::cluster::TestCluster;

const TOPIC: &str = "crowded";

/// Sends `per_partition` records of 100 bytes to each partition, acks=all, and waits for them.
fn produce(bootstrap: &str, partitions: i32, per_partition: usize) {
    let producer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .create()
        .unwrap();
    let payload = [b'x'; 100];
    for p in 0..partitions {
        for _ in 0..per_partition {
            while producer
                .send(
                    BaseRecord::<(), [u8]>::to(TOPIC)
                        .partition(p)
                        .payload(&payload[..]),
                )
                .is_err()
            {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    producer.flush(Duration::from_secs(60)).unwrap();
}

fn number_after(text: &str, prefix: &str) -> i64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in {text}"));
    line[prefix.len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Runs `--verify` until it exits 0 (within 90 s); in between it must exit 1.
fn verify_until_complete(args: &[&str], cluster: &TestCluster) -> String {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let mut all = vec!["--verify"];
        all.extend_from_slice(args);
        let (code, out, err) = assign(&all);
        if code == 0 {
            return out;
        }
        assert_eq!(code, 1, "{out}{err}");
        assert!(
            out.contains("is still in progress.")
                || out.contains("There is no active reassignment"),
            "{out}"
        );
        assert!(
            Instant::now() < deadline,
            "not completed in 90 s: {out}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn minimal_moves_are_proposed_executed_and_verified_on_a_live_cluster() {
    let cluster = TestCluster::start(3, &[]);
    create_topic_assigned(&cluster, TOPIC, &[&[1, 2], &[2, 1], &[1, 2]]);
    produce(&cluster.bootstrap(), 3, 200);
    let dir = tempfile::tempdir().unwrap();
    let topics = dir.path().join("topics.json");
    std::fs::write(&topics, format!(r#"{{"topics":[{{"topic":"{TOPIC}"}}]}}"#)).unwrap();
    let topics = topics.to_str().unwrap();
    let bootstrap = cluster.bootstrap();
    let connect = cluster.connect();

    // Kafka's balance for 3 partitions x 2 replicas on 3 brokers: 2 replicas and 1 leader each,
    // so broker 3 takes two replicas and nothing else moves.
    let generate = [
        "--topics-to-move-json",
        topics,
        "--minimize-movement",
        "--seed",
        "1",
        "--format",
        "json",
    ];
    let mut args = vec!["--bootstrap-server", bootstrap.as_str()];
    args.extend_from_slice(&generate);
    let (code, plan, err) = assign(&args);
    assert_eq!(code, 0, "{err}\n{}", cluster.logs());
    assert_eq!(number_after(&err, "Replicas moved: "), 2, "{err}");
    assert!(
        number_after(&err, "Bytes moved: ") >= 2 * 200 * 100,
        "{err}"
    );
    let proposed = proposal(&plan);
    let on_3 = proposed.iter().filter(|(_, _, r)| r.contains(&3)).count();
    assert_eq!(on_3, 2, "{plan}");
    let leaders: Vec<i64> = proposed.iter().map(|(_, _, r)| r[0]).collect();
    let mut sorted = leaders.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [1, 2, 3], "one leader each: {plan}");

    // ZooKeeper gives the same inputs, so the same proposal; no sizes without a broker.
    let mut args = vec!["--zookeeper", connect.as_str()];
    args.extend_from_slice(&generate);
    let (code, from_zk, err) = assign(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(from_zk, plan);
    assert!(err.contains("Bytes moved: unknown"), "{err}");

    // --execute through the controller, then --verify until it is carried out.
    let plan_file = dir.path().join("plan.json");
    std::fs::write(&plan_file, &plan).unwrap();
    let plan_file = plan_file.to_str().unwrap();
    let (code, out, err) = assign(&[
        "--execute",
        "--reassignment-json",
        plan_file,
        "--bootstrap-server",
        &bootstrap,
        "--throttle",
        "50000000",
    ]);
    assert_eq!(code, 0, "{err}\n{}", cluster.logs());
    // The throttle, as Kafka's tool sets it: the rates on every broker a move touches, the
    // moving partitions' replicas on their topic.
    assert!(
        out.contains("Warning: You must run --verify periodically")
            && out.contains("The inter-broker throttle limit was set to 50000000 B/s"),
        "{out}"
    );
    let config_of = |path: &str| -> serde_json::Value {
        cluster
            .get(path)
            .map(|(data, _)| {
                serde_json::from_str::<serde_json::Value>(&data).unwrap()["config"].clone()
            })
            .unwrap_or_default()
    };
    for broker in 1..=3 {
        let config = config_of(&format!("/config/brokers/{broker}"));
        assert_eq!(
            config["leader.replication.throttled.rate"], "50000000",
            "{config}"
        );
        assert_eq!(
            config["follower.replication.throttled.rate"], "50000000",
            "{config}"
        );
    }
    let topic_config = config_of(&format!("/config/topics/{TOPIC}"));
    assert!(
        topic_config["leader.replication.throttled.replicas"].is_string()
            && topic_config["follower.replication.throttled.replicas"].is_string(),
        "{topic_config}"
    );
    assert!(
        out.contains(&format!(
            "Successfully started partition reassignments for {TOPIC}-0,{TOPIC}-1,{TOPIC}-2"
        )),
        "{out}"
    );
    let rollback = out
        .lines()
        .nth(2)
        .filter(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no rollback JSON: {out}"))
        .to_string();
    assert_eq!(
        proposal(&rollback)
            .into_iter()
            .map(|(_, _, r)| r)
            .collect::<Vec<_>>(),
        [vec![1, 2], vec![2, 1], vec![1, 2]]
    );
    let verify_args = [
        "--reassignment-json",
        plan_file,
        "--bootstrap-server",
        &bootstrap,
    ];
    // --preserve-throttles leaves them, as Kafka's tool does.
    let mut preserving = verify_args.to_vec();
    preserving.push("--preserve-throttles");
    let out = verify_until_complete(&preserving, &cluster);
    assert!(!out.contains("Clearing"), "{out}");
    assert_eq!(
        config_of("/config/brokers/1")["leader.replication.throttled.rate"],
        "50000000"
    );
    let out = verify_until_complete(&verify_args, &cluster);
    assert_eq!(out.matches("is completed.").count(), 3, "{out}");
    // Done: --verify cleared the throttle everywhere, as Kafka's does.
    assert!(
        out.contains("Clearing broker-level throttles on brokers 1,2,3")
            && out.contains(&format!("Clearing topic-level throttles on topic {TOPIC}")),
        "{out}"
    );
    for path in [
        "/config/brokers/1".to_string(),
        "/config/brokers/2".to_string(),
        "/config/brokers/3".to_string(),
        format!("/config/topics/{TOPIC}"),
    ] {
        let config = config_of(&path);
        assert!(
            config
                .as_object()
                .is_none_or(|c| c.keys().all(|k| !k.contains("replication.throttled"))),
            "{path}: {config}"
        );
    }
    let (data, _) = cluster.get(&format!("/brokers/topics/{TOPIC}")).unwrap();
    let znode: serde_json::Value = serde_json::from_str(&data).unwrap();
    for (_, p, replicas) in &proposed {
        assert_eq!(
            znode["partitions"][p.to_string()],
            serde_json::json!(replicas),
            "{data}"
        );
    }

    // Kafka's own tool reads kcli's JSON and agrees.
    let mut kafka = java("org.apache.kafka.tools.reassign.ReassignPartitionsCommand");
    kafka.args([
        "--bootstrap-server",
        &bootstrap,
        "--reassignment-json-file",
        plan_file,
        "--verify",
    ]);
    let (code, out, err) = run_within(kafka, b"", Duration::from_secs(120));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("is completed.").count(), 3, "{out}");

    // Nothing left to cancel.
    let (code, out, err) = assign(&[
        "--cancel",
        "--reassignment-json",
        plan_file,
        "--bootstrap-server",
        &bootstrap,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "None of the specified partition reassignments are active.\n"
    );

    // The rollback, through the legacy znode.
    let rollback_file = dir.path().join("rollback.json");
    std::fs::write(&rollback_file, &rollback).unwrap();
    let rollback_file = rollback_file.to_str().unwrap();
    let (code, out, err) = assign(&[
        "--execute",
        "--reassignment-json",
        rollback_file,
        "--zookeeper",
        &connect,
    ]);
    assert_eq!(code, 0, "{err}\n{}", cluster.logs());
    assert!(
        out.contains("Successfully started partition reassignments for"),
        "{out}"
    );
    let out = verify_until_complete(
        &[
            "--reassignment-json",
            rollback_file,
            "--zookeeper",
            &connect,
        ],
        &cluster,
    );
    assert_eq!(out.matches("is completed.").count(), 3, "{out}");
    assert!(
        cluster.get("/admin/reassign_partitions").is_none(),
        "the controller removes the znode once done"
    );
}
