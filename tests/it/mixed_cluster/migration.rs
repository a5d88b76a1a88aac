//! A rolling migration from Kafka 3.9.1 to kcli and back: three Kafka brokers with an RF-3 topic
//! (`min.insync.replicas=2`) under an idempotent acks=-1 producer and a consumer group; each
//! broker in turn is stopped cleanly and replaced by kcli on the same `broker.id`, port and log
//! dir (kcli loads Kafka's segments, indexes, checkpoints, `meta.properties`, producer snapshots
//! and leader-epoch checkpoints as they are), once every ISR is whole again; then each is
//! replaced by Kafka again on the dir kcli wrote. The controller moves from Kafka to kcli and
//! back on the way. Nothing acknowledged is lost, the group sees every record, and at the end
//! the replicas of every partition are one log.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};

use super::{create_topic, finish_and_check};
use crate::support::cluster::wait_until;
use crate::support::mixed_cluster::MixedCluster;
use crate::support::produce_load::ProduceLoad;

const TOPIC: &str = "migrating";
const ASSIGNMENT: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];
const OFFSETS_TOPIC: &str = "__consumer_offsets";

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
        if whole(TOPIC) && whole(OFFSETS_TOPIC) {
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
    let mut cluster = MixedCluster::start(&[1, 2, 3], &[], &[]);
    create_topic(&cluster, TOPIC, ASSIGNMENT, &[("min.insync.replicas", "2")]);
    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, 3);
    let group = GroupReader::start(&cluster.bootstrap());
    load.wait_for_more_acks(500, Duration::from_secs(60));
    wait_until("the group's offsets topic", Duration::from_secs(60), || {
        cluster.isr(OFFSETS_TOPIC, 2).map(|_| ())
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
