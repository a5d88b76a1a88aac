//! Follower fetching (KIP-392) on three kcli brokers in three racks with
//! `replica.selector.class=RackAwareReplicaSelector`: Metadata tells a Java client each broker's
//! rack; on the wire the leader answers a consumer's Fetch with the preferred read replica of
//! its rack and no records, and a follower serves Fetch v11+ but not v10; a librdkafka consumer
//! with `client.rack` of a follower's rack and Kafka 3.9.1's Java consumer with the other
//! follower's read every record from the follower in their rack: each client's own per-broker
//! byte counters (librdkafka's `rxbytes`, the Java client's `consumer-node-metrics`
//! `incoming-byte-total`, tests/clients/java/RackConsumer.java) and the brokers'
//! `BytesOutPerSec` of the topic show it, and the leader sends none of the topic's bytes. Then
//! both followers are killed (kill -9) while both consumers wait at the end of the log: records
//! produced after that reach both from the leader, nothing lost, once the controller drops the
//! followers from the ISR.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::statistics::Statistics;
use rdkafka::{Message, Offset, TopicPartitionList};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::fetch_request::{FetchPartition, FetchRequest, FetchTopic};
use kcli::protocol::messages::fetch_response::PartitionData;
use kcli::protocol::messages::{RequestKind, ResponseKind};

use super::create_topic_assigned;
use crate::kafka_tools::support::java;
use crate::serve_clients::drivers::{compile_java_driver, java_command};
use crate::serve_support::{KafkaConn, run_within};
use crate::support::cluster::{TestCluster, wait_until};
use crate::support::exposition::{get_metrics, samples};

pub(crate) const RACK_AWARE: &str = "org.apache.kafka.common.replica.RackAwareReplicaSelector";
/// Records per phase, each [`VALUE`] bytes: some 2 MB, far above what metadata and the
/// leader's answers pointing at a follower add.
pub(crate) const RECORDS: usize = 2_000;
const VALUE: usize = 1_000;
/// The payload of one phase: what a consumer must receive from whoever served it.
pub(crate) const PAYLOAD: u64 = (RECORDS * VALUE) as u64;
/// What a consumer may receive from a broker that served it no records: metadata, the
/// answers naming the preferred replica, a group's coordinator traffic.
pub(crate) const OVERHEAD: u64 = PAYLOAD / 20;

/// Record `i`'s value: its number, padded to [`VALUE`] bytes.
fn value(i: usize) -> String {
    format!("{i:0width$}", width = VALUE)
}

/// Produces records `range` to partition 0 of `topic` (acks=all), waiting for every one.
pub(crate) fn produce(bootstrap: &str, topic: &str, range: std::ops::Range<usize>) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "90000")
        .create()
        .unwrap();
    for i in range {
        let v = value(i);
        let mut record = BaseRecord::<(), _>::to(topic).partition(0).payload(&v);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((_, r)) => {
                    record = r;
                    producer.poll(Duration::from_millis(10));
                }
            }
        }
    }
    producer.flush(Duration::from_secs(120)).unwrap();
    assert_eq!(producer.in_flight_count(), 0, "records not acknowledged");
}

/// The latest statistics' bytes received per broker id.
#[derive(Clone, Default)]
pub(crate) struct RxBytes(Arc<Mutex<BTreeMap<i32, u64>>>);

impl RxBytes {
    pub(crate) fn of(&self, id: i32) -> u64 {
        self.0.lock().unwrap().get(&id).copied().unwrap_or(0)
    }
}

impl ClientContext for RxBytes {
    fn stats(&self, statistics: Statistics) {
        let mut by_id = self.0.lock().unwrap();
        for b in statistics.brokers.values().filter(|b| b.nodeid >= 0) {
            by_id.insert(b.nodeid, b.rxbytes);
        }
    }
}

impl ConsumerContext for RxBytes {}

/// A librdkafka consumer of partition 0 of `topic` from the start, in `rack`, whose
/// statistics come every 200 ms.
pub(crate) fn rack_consumer(bootstrap: &str, topic: &str, rack: &str) -> BaseConsumer<RxBytes> {
    let consumer: BaseConsumer<RxBytes> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "follower-fetch-unused")
        .set("enable.auto.commit", "false")
        .set("client.rack", rack)
        .set("statistics.interval.ms", "200")
        .set("fetch.wait.max.ms", "200")
        .create_with_context(RxBytes::default())
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    consumer
}

/// Polls until `consumer` has read `count` records in all (`read` holds what it read), or
/// `limit` passes; each record's value must be the next record's.
pub(crate) fn read_up_to(
    consumer: &BaseConsumer<RxBytes>,
    read: &mut Vec<usize>,
    count: usize,
    limit: Duration,
) {
    let deadline = Instant::now() + limit;
    while read.len() < count && Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                let v = std::str::from_utf8(m.payload().unwrap()).unwrap();
                read.push(v.parse().unwrap());
            }
            Some(Err(e)) => eprintln!("librdkafka consumer: {e}"),
            None => {}
        }
    }
    let want: Vec<usize> = (0..count).collect();
    assert_eq!(
        read.len(),
        count,
        "librdkafka read {} of {count} records",
        read.len()
    );
    assert_eq!(*read, want, "librdkafka read every record once, in order");
}

/// Polls `consumer` (serving its statistics) until `ok` holds for its bytes, or 20 s.
pub(crate) fn wait_rx(consumer: &BaseConsumer<RxBytes>, what: &str, ok: impl Fn(&RxBytes) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok(consumer.context()) {
        assert!(Instant::now() < deadline, "librdkafka's statistics: {what}");
        poll_nothing(consumer);
    }
}

/// Polls `consumer` once, expecting no record (errors of brokers going down are fine).
pub(crate) fn poll_nothing(consumer: &BaseConsumer<RxBytes>) {
    if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
        panic!("an unexpected record at offset {}", m.offset());
    }
}

/// What the Java consumer (tests/clients/java/RackConsumer.java) reported: the bytes it read
/// from each broker by its own per-node counters, once it had read the first phase and at the
/// end.
pub(crate) struct JavaRead {
    pub(crate) first: serde_json::Value,
    pub(crate) end: serde_json::Value,
}

impl JavaRead {
    /// Bytes read from broker `id` by the first phase's end (`first`) or by the end.
    pub(crate) fn from(report: &serde_json::Value, id: i32) -> u64 {
        report["node_bytes"][id.to_string()].as_u64().unwrap_or(0)
    }
}

/// Kafka 3.9.1's Java consumer with `client.rack` = `rack` (`client.id` and group `client`)
/// reading `total` records of `topic`, reporting its per-broker bytes after `first` of them and
/// at the end.
pub(crate) fn java_consumer(
    bootstrap: &str,
    topic: &str,
    rack: &str,
    client: &str,
    (first, total): (usize, usize),
    scratch: &std::path::Path,
) -> JavaRead {
    let classpath = compile_java_driver("RackConsumer", scratch);
    let (first, total) = (first.to_string(), total.to_string());
    let cmd = java_command(
        &classpath,
        "RackConsumer",
        &[bootstrap, topic, rack, client, &first, &total, "180000"],
    );
    let (code, out, err) = run_within(cmd, b"", Duration::from_secs(240));
    assert_eq!(code, 0, "RackConsumer:\n{out}\n{err}");
    let reports: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let [first, end] = reports.as_slice() else {
        panic!("RackConsumer: two reports expected:\n{out}\n{err}")
    };
    assert_eq!(end["ok"], true, "{out}");
    assert_eq!(
        end["consumed"].as_u64(),
        Some(total.parse().unwrap()),
        "{out}"
    );
    JavaRead {
        first: first.clone(),
        end: end.clone(),
    }
}

/// `kafka_server_brokertopicmetrics_bytesout_total` of `topic` on the broker serving its
/// metrics on `port` (0 before any was sent).
pub(crate) fn bytes_out(port: u16, topic: &str) -> f64 {
    let (_, text) = get_metrics(port, Duration::from_secs(10)).expect("metrics answer");
    samples(&text)
        .get(&format!(
            "kafka_server_brokertopicmetrics_bytesout_total{{topic=\"{topic}\"}}"
        ))
        .copied()
        .unwrap_or(0.0)
}

/// A consumer's raw Fetch of partition 0 of `topic` from offset 0 at `version`, with `rack`
/// (v11+): the partition's answer.
fn raw_fetch(addr: std::net::SocketAddr, version: i16, rack: &str) -> PartitionData {
    let body = RequestKind::Fetch(FetchRequest {
        replica_id: -1,
        max_wait_ms: 0,
        min_bytes: 1,
        max_bytes: 1 << 20,
        session_epoch: -1,
        topics: vec![FetchTopic {
            topic: StrBytes::from("ff".to_string()),
            partitions: vec![FetchPartition {
                partition: 0,
                current_leader_epoch: -1,
                fetch_offset: 0,
                last_fetched_epoch: -1,
                log_start_offset: -1,
                partition_max_bytes: 1 << 20,
                ..FetchPartition::default()
            }],
            ..FetchTopic::default()
        }],
        rack_id: StrBytes::from(rack.to_string()),
        ..FetchRequest::default()
    });
    let ResponseKind::Fetch(r) = KafkaConn::connect_to(addr).call(&body, version) else {
        panic!("not a Fetch response");
    };
    r.responses[0].partitions[0].clone()
}

/// What Kafka's own BrokerApiVersionsCommand (a Java admin client) prints of each broker:
/// `(id: N rack: R)`.
pub(crate) fn java_sees_racks(bootstrap: &str) -> String {
    let mut cmd = java("kafka.admin.BrokerApiVersionsCommand");
    cmd.args(["--bootstrap-server", bootstrap]);
    let (code, out, err) = run_within(cmd, b"", Duration::from_secs(60));
    assert_eq!(code, 0, "{out}\n{err}");
    out
}

#[test]
fn consumers_read_from_the_follower_in_their_rack_and_from_the_leader_once_it_is_gone() {
    let mut cluster = TestCluster::start_in_racks(
        &[
            ("replica.selector.class", RACK_AWARE),
            ("kcli.metrics.listener", "127.0.0.1:{port2}"),
        ],
        &["rack-1", "rack-2", "rack-3"],
    );
    let metrics: Vec<u16> = cluster.brokers.iter().map(|b| b.port2()).collect();
    let out = |id: i32| bytes_out(metrics[usize::try_from(id - 1).unwrap()], "ff");
    let racks = java_sees_racks(&cluster.bootstrap());
    for id in 1..=3 {
        assert!(
            racks.contains(&format!("(id: {id} rack: rack-{id})")),
            "Metadata gives broker {id}'s rack:\n{racks}"
        );
    }
    create_topic_assigned(&cluster, "ff", &[&[1, 2, 3]]);
    let bootstrap = cluster.bootstrap();
    produce(&bootstrap, "ff", 0..RECORDS);
    // On the wire: the leader names the follower in the consumer's rack and sends no records;
    // the follower serves a v11+ fetch (client metadata) and refuses an older one.
    let has_records = |p: &PartitionData| p.records.as_ref().is_some_and(|r| !r.is_empty());
    let pointed = raw_fetch(cluster.addr(1), 12, "rack-2");
    assert_eq!((pointed.error_code, pointed.preferred_read_replica), (0, 2));
    assert!(!has_records(&pointed) && pointed.high_watermark == RECORDS as i64);
    let here = raw_fetch(cluster.addr(1), 12, "rack-1");
    assert_eq!((here.error_code, here.preferred_read_replica), (0, -1));
    assert!(has_records(&here));
    // The follower learns the leader's high watermark at its next fetch (within
    // `replica.fetch.wait.max.ms`), then serves up to it.
    let served = wait_until(
        "the follower serves a consumer up to its high watermark",
        Duration::from_secs(10),
        || {
            let served = raw_fetch(cluster.addr(2), 11, "rack-2");
            assert_eq!((served.error_code, served.preferred_read_replica), (0, -1));
            (served.high_watermark == RECORDS as i64).then_some(served)
        },
    );
    assert!(has_records(&served), "{served:?}");
    assert_eq!(raw_fetch(cluster.addr(2), 10, "").error_code, 6);
    // What the leader sent the raw fetch in its own rack; the consumers add nothing to it.
    let sent_by_leader = out(1);
    let scratch = tempfile::tempdir().unwrap();
    std::thread::scope(|s| {
        let java = s.spawn(|| {
            java_consumer(
                &bootstrap,
                "ff",
                "rack-3",
                "ff-java",
                (RECORDS, 2 * RECORDS),
                scratch.path(),
            )
        });
        let consumer = rack_consumer(&bootstrap, "ff", "rack-2");
        let mut read = Vec::new();
        read_up_to(&consumer, &mut read, RECORDS, Duration::from_secs(60));
        wait_rx(&consumer, "the follower in rack-2 sent the records", |rx| {
            rx.of(2) >= PAYLOAD
        });
        assert!(
            consumer.context().of(1) < OVERHEAD,
            "the leader sent librdkafka {} bytes",
            consumer.context().of(1)
        );
        // The Java consumer has read the first records from its follower.
        wait_until(
            "broker 3 sent the Java consumer the first records",
            Duration::from_secs(60),
            || (out(3) >= PAYLOAD as f64).then_some(()),
        );
        assert!(out(2) >= PAYLOAD as f64);
        assert_eq!(
            out(1),
            sent_by_leader,
            "the leader sent the consumers none of the topic's records"
        );
        // Both followers die while both consumers wait at the end of the log.
        cluster.kill9(2);
        cluster.kill9(3);
        let deadline = Instant::now() + Duration::from_secs(60);
        while cluster.isr("ff", 0) != Some(vec![1]) {
            assert!(
                Instant::now() < deadline,
                "the ISR never shrank to the leader"
            );
            poll_nothing(&consumer);
        }
        produce(&bootstrap, "ff", RECORDS..2 * RECORDS);
        read_up_to(&consumer, &mut read, 2 * RECORDS, Duration::from_secs(90));
        wait_rx(&consumer, "the leader sent the second records", |rx| {
            rx.of(1) >= PAYLOAD
        });
        // The Java consumer's own per-node counters: the first records from its follower
        // (broker 3), next to nothing from the leader; the rest from the leader.
        let java = java.join().unwrap();
        let (from_follower, from_leader) = (
            JavaRead::from(&java.first, 3),
            JavaRead::from(&java.first, 1),
        );
        assert!(from_follower >= PAYLOAD, "{}", java.first);
        assert!(from_leader < OVERHEAD, "{}", java.first);
        assert!(
            JavaRead::from(&java.end, 1) >= from_leader + PAYLOAD,
            "{}",
            java.end
        );
    });
    // The second records, to both consumers.
    assert!(
        out(1) >= sent_by_leader + 2.0 * PAYLOAD as f64,
        "the leader served both"
    );
}
