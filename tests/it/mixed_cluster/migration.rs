//! A rolling migration from Kafka 3.9.1 to kcli and back: three Kafka brokers with an RF-3 topic
//! (`min.insync.replicas=2`) under an idempotent acks=-1 producer and a consumer group; each
//! broker in turn is stopped cleanly and replaced by kcli on the same `broker.id`, port and log
//! dir (kcli loads Kafka's segments, indexes, checkpoints, `meta.properties`, producer snapshots
//! and leader-epoch checkpoints as they are), once every ISR is whole again; then each is
//! replaced by Kafka again on the dir kcli wrote. The controller moves from Kafka to kcli and
//! back on the way. Nothing acknowledged is lost, the group sees every record, and at the end
//! the replicas of every partition are one log.
//!
//! A transactional producer (kafka-clients 3.9.1, tests/clients/java/TransactionalLoad.java)
//! writes to another RF-3 topic all along, committing three transactions of four and aborting
//! the fourth, its `__transaction_state` partition moving between the kinds with the brokers
//! (each loading what the other wrote) and its markers written by leaders of both kinds: read
//! committed at the end, every partition holds exactly the committed transactions, each once,
//! in order.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};

use super::{create_topic, finish_and_check};
use crate::serve_clients::drivers::{compile_java_driver, java_command};
use crate::support::cluster::wait_until;
use crate::support::mixed_cluster::MixedCluster;
use crate::support::produce_load::ProduceLoad;

const TOPIC: &str = "migrating";
const ASSIGNMENT: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];
const OFFSETS_TOPIC: &str = "__consumer_offsets";
const TXN_TOPIC: &str = "migrating-txns";
const TXN_STATE: &str = "__transaction_state";

/// A consumer group member reading `TOPIC` in a thread (committing as librdkafka does by
/// default, here every 500 ms) until stopped; what it read, as (partition, offset).
struct GroupReader {
    stop: Arc<AtomicBool>,
    seen: Arc<std::sync::Mutex<BTreeSet<(i32, i64)>>>,
    thread: Option<JoinHandle<()>>,
}

impl GroupReader {
    fn start(bootstrap: &str) -> GroupReader {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", "migrating-group")
            .set("auto.offset.reset", "earliest")
            .set("auto.commit.interval.ms", "500")
            .set("session.timeout.ms", "10000")
            .set("fetch.wait.max.ms", "100")
            .create()
            .unwrap();
        consumer.subscribe(&[TOPIC]).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(std::sync::Mutex::new(BTreeSet::new()));
        let thread = std::thread::spawn({
            let stop = Arc::clone(&stop);
            let seen = Arc::clone(&seen);
            move || {
                while !stop.load(Ordering::SeqCst) {
                    if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
                        seen.lock().unwrap().insert((m.partition(), m.offset()));
                    }
                }
            }
        });
        GroupReader {
            stop,
            seen,
            thread: Some(thread),
        }
    }

    fn has_seen(&self, records: &BTreeSet<(i32, i64)>) -> bool {
        records.is_subset(&self.seen.lock().unwrap())
    }
}

impl Drop for GroupReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Waits until every partition of the topic and of the offsets topic has all three replicas
/// in its ISR (in ZooKeeper), so the next broker may go.
fn wait_for_whole_isrs(cluster: &MixedCluster) {
    let start = Instant::now();
    loop {
        let whole =
            |topic: &str| (0..3).all(|p| cluster.isr(topic, p).is_some_and(|isr| isr.len() == 3));
        if whole(TOPIC) && whole(OFFSETS_TOPIC) && whole(TXN_TOPIC) && whole(TXN_STATE) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "every ISR whole within 90 s\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_kafka_cluster_migrates_to_kcli_and_back_one_broker_at_a_time() {
    let mut cluster = MixedCluster::start(
        &[1, 2, 3],
        &[],
        &[
            ("transaction.state.log.num.partitions", "3"),
            ("transaction.state.log.replication.factor", "3"),
            ("transaction.state.log.min.isr", "2"),
        ],
    );
    create_topic(&cluster, TOPIC, ASSIGNMENT, &[("min.insync.replicas", "2")]);
    create_topic(
        &cluster,
        TXN_TOPIC,
        ASSIGNMENT,
        &[("min.insync.replicas", "2")],
    );
    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, 3);
    let group = GroupReader::start(&cluster.bootstrap());
    let scratch = tempfile::tempdir().unwrap();
    let stop = scratch.path().join("stop");
    let classpath = compile_java_driver("TransactionalLoad", scratch.path());
    let mut transactions = java_command(
        &classpath,
        "TransactionalLoad",
        &[
            &cluster.bootstrap(),
            TXN_TOPIC,
            "3",
            &stop.display().to_string(),
        ],
    );
    transactions
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let transactions = transactions.spawn().unwrap();
    load.wait_for_more_acks(500, Duration::from_secs(60));
    wait_until("the group's offsets topic", Duration::from_secs(60), || {
        cluster.isr(OFFSETS_TOPIC, 2).map(|_| ())
    });
    wait_until("the transaction log", Duration::from_secs(60), || {
        cluster.isr(TXN_STATE, 2).map(|_| ())
    });
    wait_for_whole_isrs(&cluster);

    // To kcli, then back to Kafka, one broker at a time.
    for round in ["kcli", "Kafka"] {
        for id in [1, 2, 3] {
            cluster.replace(id);
            assert_eq!(
                cluster.node(id).is_kafka(),
                round == "Kafka",
                "broker {id} is {round} now"
            );
            wait_for_whole_isrs(&cluster);
            load.wait_for_more_acks(300, Duration::from_secs(60));
        }
        let controller = cluster.controller_id().expect("a controller");
        assert_eq!(
            cluster.node(controller).is_kafka(),
            round == "Kafka",
            "the controller is {round}"
        );
    }

    std::fs::write(&stop, b"").unwrap();
    let out = transactions.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "TransactionalLoad: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    let committed: Vec<String> = summary["committed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert!(committed.len() >= 30, "{summary}");
    let read = read_committed(&cluster.bootstrap(), TXN_TOPIC, 3);
    for (partition, values) in read.iter().enumerate() {
        assert_eq!(
            values, &committed,
            "partition {partition} read committed: exactly the committed transactions"
        );
    }

    let acked = finish_and_check(&cluster, load, TOPIC, 3, &[1, 2, 3]);
    let records: BTreeSet<(i32, i64)> = acked
        .iter()
        .flat_map(|(p, records)| records.iter().map(|(offset, _)| (*p, *offset)))
        .collect();
    wait_until(
        "the consumer group saw every acknowledged record",
        Duration::from_secs(120),
        || group.has_seen(&records).then_some(()),
    );
}

/// Every value of each of `topic`'s `partitions` partitions, read with read_committed from the
/// start to the end.
fn read_committed(bootstrap: &str, topic: &str, partitions: i32) -> Vec<Vec<String>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "migration-txn-reader")
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = rdkafka::TopicPartitionList::new();
    for p in 0..partitions {
        assignment
            .add_partition_offset(topic, p, rdkafka::Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&assignment).unwrap();
    let ends: Vec<i64> = (0..partitions)
        .map(|p| {
            consumer
                .fetch_watermarks(topic, p, Duration::from_secs(30))
                .unwrap()
                .1
        })
        .collect();
    let mut out = vec![Vec::new(); usize::try_from(partitions).unwrap()];
    let mut positions = vec![0i64; out.len()];
    let start = Instant::now();
    while positions.iter().zip(&ends).any(|(at, end)| at < end) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "read_committed to {ends:?} within 60 s: at {positions:?}"
        );
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            let p = usize::try_from(message.partition()).unwrap();
            positions[p] = positions[p].max(message.offset() + 1);
            out[p]
                .push(String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned());
        }
        // Markers and aborted records take offsets a read_committed consumer never gets: its
        // position moves past them.
        let list = consumer.position().unwrap();
        for (p, at) in positions.iter_mut().enumerate() {
            let partition = i32::try_from(p).unwrap();
            if let Some(position) = list
                .find_partition(topic, partition)
                .and_then(|e| e.offset().to_raw())
            {
                *at = (*at).max(position);
            }
        }
    }
    out
}
