//! No acknowledged record is lost through repeated kill -9: three brokers, an RF-3 topic with
//! `min.insync.replicas=2`, an idempotent acks=-1 producer with librdkafka's default retries;
//! while it sends, the leader of a partition and then the controller are killed, alternately,
//! each restarted once its registration has left ZooKeeper and back in every ISR before the
//! next kill. Afterwards every acknowledged record is consumed, in order within its partition
//! and once, and the replicas' logs are identical batch for batch (headers and CRCs included).
//!
//! Five faults in CI; `KCLI_SOAK_FAULTS=100` runs the soak (outside CI).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientContext, Message, Offset, TopicPartitionList};

use super::create_topic;
use crate::serve_support::KafkaConn;
use crate::serve_support::list_offset;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, log_batches, metadata, wait_until};

const TOPIC: &str = "durable";
const PARTITIONS: i32 = 3;

/// The producer's delivery reports: per partition, (offset, sequence) of each acknowledged
/// record, and the number of records that failed for good.
#[derive(Default)]
struct Deliveries {
    acked: Mutex<BTreeMap<i32, Vec<(i64, u64)>>>,
    failed: Mutex<Vec<String>>,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = Box<u64>;

    fn delivery(&self, result: &DeliveryResult<'_>, sequence: Box<u64>) {
        match result {
            Ok(m) => self
                .acked
                .lock()
                .unwrap()
                .entry(m.partition())
                .or_default()
                .push((m.offset(), *sequence)),
            Err((e, _)) => self.failed.lock().unwrap().push(e.to_string()),
        }
    }
}

/// Every record of each partition, as (offset, sequence), read from the start to `ends`.
fn consume(bootstrap: &str, ends: &BTreeMap<i32, i64>) -> BTreeMap<i32, Vec<(i64, u64)>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kcli-durability-unused")
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "100")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        tpl.add_partition_offset(TOPIC, p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let mut seen: BTreeMap<i32, Vec<(i64, u64)>> = BTreeMap::new();
    let done = |seen: &BTreeMap<i32, Vec<(i64, u64)>>| {
        ends.iter().all(|(p, end)| {
            seen.get(p)
                .and_then(|v| v.last())
                .map_or(*end == 0, |(o, _)| o + 1 >= *end)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done(&seen) && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let sequence: u64 = std::str::from_utf8(m.payload().unwrap())
                .unwrap()
                .parse()
                .unwrap();
            seen.entry(m.partition())
                .or_default()
                .push((m.offset(), sequence));
        }
    }
    assert!(done(&seen), "not every record consumed within 120 s");
    seen
}

/// The broker ids in every ISR of the topic, from ZooKeeper.
fn in_every_isr(cluster: &TestCluster, id: i32) -> bool {
    (0..PARTITIONS).all(|p| cluster.isr(TOPIC, p).is_some_and(|isr| isr.contains(&id)))
}

#[test]
fn acknowledged_records_survive_alternating_kills_of_leaders_and_the_controller() {
    let faults: usize = std::env::var("KCLI_SOAK_FAULTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    // A dead broker the new controller still finds in an ISR (the old controller, say) leaves it
    // when its leaders' lag check drops it; kept short so acks=-1 waits seconds, not 30.
    let mut cluster = TestCluster::start(
        3,
        &[
            ("min.insync.replicas", "2"),
            ("replica.lag.time.max.ms", "5000"),
        ],
    );
    create_topic(&cluster, TOPIC, PARTITIONS, 3);

    let producer: ThreadedProducer<Deliveries> = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "180000")
        .create_with_context(Deliveries::default())
        .unwrap();
    let producer = Arc::new(producer);
    let deliveries = producer.context();
    let stop = Arc::new(AtomicBool::new(false));
    let sender = {
        let (producer, stop) = (Arc::clone(&producer), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut next = [0u64; PARTITIONS as usize];
            let mut sent = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let p = (sent % PARTITIONS as u64) as i32;
                let sequence = next[p as usize];
                let payload = sequence.to_string();
                let record: BaseRecord<(), String, Box<u64>> =
                    BaseRecord::with_opaque_to(TOPIC, Box::new(sequence))
                        .partition(p)
                        .payload(&payload);
                match producer.send(record) {
                    Ok(()) => {
                        next[p as usize] += 1;
                        sent += 1;
                    }
                    // The local queue is full: let deliveries drain.
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
                if sent.is_multiple_of(50) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            sent
        })
    };

    let acked_count = || -> usize {
        deliveries
            .acked
            .lock()
            .unwrap()
            .values()
            .map(Vec::len)
            .sum()
    };
    let mut victims = Vec::new();
    for fault in 0..faults {
        let before = acked_count();
        wait_until(
            "records acknowledged since the last fault",
            Duration::from_secs(60),
            || (acked_count() >= before + 200).then_some(()),
        );
        let controller = wait_until("a controller", Duration::from_secs(30), || {
            cluster.controller_id()
        });
        let victim = if fault % 2 == 0 {
            // A partition leader that is not the controller.
            let m = metadata(cluster.port(controller)).unwrap();
            m.topics[TOPIC]
                .1
                .values()
                .map(|p| p.leader)
                .find(|l| *l != controller && *l >= 0)
                .unwrap_or(controller)
        } else {
            controller
        };
        victims.push(victim);
        cluster.broker(victim).kill9();
        cluster.restart_once_deregistered(victim, SESSION_TIMEOUT + Duration::from_secs(10));
        wait_until(
            "the victim back in every ISR",
            Duration::from_secs(60),
            || in_every_isr(&cluster, victim).then_some(()),
        );
    }
    stop.store(true, Ordering::SeqCst);
    let sent = sender.join().unwrap();
    producer.flush(Duration::from_secs(180)).unwrap();
    let failed = deliveries.failed.lock().unwrap().clone();
    assert!(
        failed.is_empty(),
        "deliveries failed: {failed:?}\n{}",
        cluster.logs()
    );
    let acked = deliveries.acked.lock().unwrap().clone();
    assert_eq!(acked.values().map(Vec::len).sum::<usize>() as u64, sent);
    assert!(victims.len() == faults, "{victims:?}");
    eprintln!("{sent} records acknowledged through kill -9 of brokers {victims:?}");

    // Every acknowledged record is there, at the offset it was acknowledged with, once, and in
    // the order it was sent.
    let ends: BTreeMap<i32, i64> = (0..PARTITIONS)
        .map(|p| {
            let end = acked
                .get(&p)
                .and_then(|v| v.iter().map(|(o, _)| o + 1).max())
                .unwrap_or(0);
            (p, end)
        })
        .collect();
    let consumed = consume(&cluster.bootstrap(), &ends);
    for p in 0..PARTITIONS {
        let records = &consumed[&p];
        let sequences: Vec<u64> = records.iter().map(|(_, s)| *s).collect();
        assert!(
            sequences.windows(2).all(|w| w[0] < w[1]),
            "partition {p}: out of order or duplicated"
        );
        let at: BTreeMap<i64, u64> = records.iter().copied().collect();
        for (offset, sequence) in &acked[&p] {
            assert_eq!(
                at.get(offset),
                Some(sequence),
                "partition {p}: acknowledged record {sequence} at offset {offset} lost"
            );
        }
    }

    // Once every replica's log end is the high watermark, the logs are one log.
    for p in 0..PARTITIONS {
        let dirs: Vec<_> = cluster
            .brokers
            .iter()
            .map(|b| b.data_dir().join(format!("{TOPIC}-{p}")))
            .collect();
        wait_until(
            "every replica's log identical",
            Duration::from_secs(60),
            || {
                let leader = metadata(cluster.port(1))?
                    .topics
                    .get(TOPIC)?
                    .1
                    .get(&p)?
                    .leader;
                let mut conn = KafkaConn::connect(cluster.port(leader));
                let (code, high_watermark, _) = list_offset(&mut conn, TOPIC, p, -1);
                let logs: Vec<_> = dirs.iter().map(|d| log_batches(d)).collect();
                let end = |log: &Vec<crate::support::cluster::Batch>| {
                    log.last().map_or(0, |(base, _, _, bytes)| {
                        let header =
                            kcli::protocol::record::batch::RecordBatchHeader::parse(bytes).unwrap();
                        base + i64::from(header.last_offset_delta) + 1
                    })
                };
                (code == 0
                    && logs.iter().all(|l| end(l) == high_watermark)
                    && logs.iter().all(|l| *l == logs[0]))
                .then_some(())
            },
        );
    }
}
