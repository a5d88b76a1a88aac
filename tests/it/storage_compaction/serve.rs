//! The log cleaner in `kcli serve`: a topic produced over the raw protocol compacts within a
//! bounded time; every key keeps its latest value across kill -9 in the middle of (throttled)
//! cleanings and across a clean restart, which reads `cleaner-offset-checkpoint`; the cleaned
//! segments pass `rebuild-index --verify` and `dump-segment`; librdkafka consumes a compacted
//! topic with tombstones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use kcli::protocol::messages::ResponseKind;
use kcli::protocol::record::batch::RecordBatchHeader;
use kcli::protocol::record::batch_iter::BatchIter;
use kcli::protocol::record::compression::CompressionType;
use kcli::protocol::record::records::{batch_records, for_each_record};

use super::keyed_batch;
use crate::serve_support::{
    KafkaConn, TestBroker, auto_create_request, fetch_once, produce_request, produce_result,
};

const TOPIC: &str = "compacted";
const KEYS: usize = 40;

fn broker_overrides() -> Vec<(&'static str, &'static str)> {
    vec![
        ("log.cleanup.policy", "compact"),
        ("log.segment.bytes", "4096"),
        ("log.cleaner.min.cleanable.ratio", "0.01"),
        ("log.cleaner.backoff.ms", "50"),
        ("log.segment.delete.delay.ms", "0"),
        ("log.cleaner.dedupe.buffer.size", "4194304"),
    ]
}

/// Creates the topic through Metadata's auto-creation (the broker's defaults make it
/// compacted).
fn create_topic(conn: &mut KafkaConn) {
    let request = auto_create_request(TOPIC);
    let start = Instant::now();
    loop {
        let ResponseKind::Metadata(md) = conn.call(&request, 12) else {
            unreachable!()
        };
        let t = &md.topics[0];
        if t.error_code == 0 && t.partitions.first().is_some_and(|p| p.leader_id == 0) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{md:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Produces `rounds` batches of one update to each of `KEYS` keys; returns the last value of
/// each key.
fn produce_updates(
    conn: &mut KafkaConn,
    rounds: usize,
    tag: &str,
    latest: &mut BTreeMap<String, String>,
) {
    for round in 0..rounds {
        let records: Vec<_> = (0..KEYS)
            .map(|k| {
                (
                    format!("key-{k:03}"),
                    Some(format!("{tag}-{round}-{k}-{}", "p".repeat(20))),
                )
            })
            .collect();
        let batch = keyed_batch(
            &records,
            crate::serve_support::now_ms(),
            CompressionType::Lz4,
        );
        let (error, _) = produce_result(&conn.call(&produce_request(TOPIC, 0, batch, -1), 9));
        assert_eq!(error, 0);
        for (k, v) in records {
            latest.insert(k, v.unwrap());
        }
    }
}

/// Every record of the partition over Fetch: (offset, key, value); offsets must increase.
fn fetch_all(conn: &mut KafkaConn) -> Vec<(i64, String, String)> {
    let mut out: Vec<(i64, String, String)> = Vec::new();
    let mut next = 0;
    let start = Instant::now();
    loop {
        let (error, hw, bytes) = fetch_once(conn, TOPIC, 0, next);
        assert_eq!(error, 0, "fetch at {next}");
        if next >= hw {
            return out;
        }
        assert!(start.elapsed() < Duration::from_secs(30));
        for entry in BatchIter::new(&bytes) {
            let Ok(entry) = entry else { break };
            assert!(entry.is_valid(), "bad CRC");
            let h = RecordBatchHeader::parse(entry.bytes).unwrap();
            let records = batch_records(entry.bytes, &h, 64 << 20).unwrap();
            for_each_record(&records, h.records_count, |_, r| {
                let offset = r.offset(h.base_offset);
                if offset >= next {
                    assert!(out.last().is_none_or(|l| l.0 < offset), "offsets go back");
                    let text = |b: Option<&[u8]>| {
                        String::from_utf8(b.unwrap_or_default().to_vec()).unwrap()
                    };
                    out.push((offset, text(r.key), text(r.value)));
                }
            })
            .unwrap();
            next = next.max(h.next_offset());
        }
    }
}

fn assert_latest_values(conn: &mut KafkaConn, latest: &BTreeMap<String, String>) -> usize {
    let records = fetch_all(conn);
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (_, k, v) in &records {
        seen.insert(k.clone(), v.clone());
    }
    assert_eq!(&seen, latest, "latest value per key");
    records.len()
}

fn partition_dir(broker: &TestBroker) -> PathBuf {
    broker.data_dir().join(format!("{TOPIC}-0"))
}

fn kcli(args: &[&dyn AsRef<std::ffi::OsStr>]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kcli"))
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The first segment with data (a cleaning can leave an empty segment where every record was
/// superseded, as Kafka's does; the next cleaning merges it).
fn first_segment(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .filter(|p| std::fs::metadata(p).unwrap().len() > 0)
        .collect();
    logs.sort();
    logs.remove(0)
}

#[test]
fn serve_compacts_a_topic_and_keeps_the_latest_values_across_kill9_during_cleaning() {
    // Throttled, so that a cleaning takes long enough to be killed in the middle.
    let mut overrides = broker_overrides();
    overrides.push(("log.cleaner.io.max.bytes.per.second", "100000"));
    let mut broker = TestBroker::start(&overrides);
    let mut conn = KafkaConn::connect(broker.port());
    create_topic(&mut conn);
    let mut latest = BTreeMap::new();
    produce_updates(&mut conn, 60, "a", &mut latest);
    let produced = 60 * KEYS;
    // Compaction shows within a bounded time.
    let start = Instant::now();
    loop {
        let count = assert_latest_values(&mut conn, &latest);
        if count < produced / 2 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not compacted: {count} of {produced}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // kill -9 at moments spread over the cleanings that new updates trigger.
    for (i, delay_ms) in [30u64, 170, 90, 260].into_iter().enumerate() {
        produce_updates(&mut conn, 20, &format!("r{i}"), &mut latest);
        std::thread::sleep(Duration::from_millis(delay_ms));
        broker.kill9();
        broker.restart();
        conn = KafkaConn::connect(broker.port());
        assert_latest_values(&mut conn, &latest);
    }
    broker.stop();
    let dir = partition_dir(&broker);
    let (ok, out) = kcli(&[&"rebuild-index", &dir.as_os_str(), &"--verify"]);
    assert!(ok, "{out}");
    let (ok, out) = kcli(&[
        &"dump-segment",
        &first_segment(&dir).as_os_str(),
        &"--deep-iteration",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("compresscodec: lz4"), "{out}");
}

#[test]
fn serve_compacts_without_throttle_and_a_clean_restart_reads_the_checkpoint() {
    let mut broker = TestBroker::start(&broker_overrides());
    let mut conn = KafkaConn::connect(broker.port());
    create_topic(&mut conn);
    let mut latest = BTreeMap::new();
    produce_updates(&mut conn, 40, "a", &mut latest);
    let start = Instant::now();
    while assert_latest_values(&mut conn, &latest) >= 40 * KEYS / 2 {
        assert!(start.elapsed() < Duration::from_secs(20), "not compacted");
        std::thread::sleep(Duration::from_millis(100));
    }
    broker.stop();
    let checkpoint =
        std::fs::read_to_string(broker.data_dir().join("cleaner-offset-checkpoint")).unwrap();
    assert!(checkpoint.contains(&format!("{TOPIC} 0 ")), "{checkpoint}");
    broker.restart();
    let mut conn = KafkaConn::connect(broker.port());
    assert_latest_values(&mut conn, &latest);
    broker.stop();
}

/// librdkafka produces keyed updates and tombstones (lz4) and, once the topic is compacted,
/// consumes it from the start: offsets increase across the gaps, every key reads its latest
/// value, and the kept tombstones (in batches with a delete horizon) read as null values.
#[test]
fn rdkafka_consumes_a_compacted_topic_with_tombstones() {
    use rdkafka::ClientConfig;
    use rdkafka::Message;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    use rdkafka::{Offset, TopicPartitionList};

    let broker = TestBroker::start(&broker_overrides());
    let mut conn = KafkaConn::connect(broker.port());
    create_topic(&mut conn);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("enable.idempotence", "false")
        .set("compression.codec", "lz4")
        .set("linger.ms", "2")
        // Batches must fit the 4 KiB segments.
        .set("batch.size", "3000")
        .create()
        .unwrap();
    let mut latest: BTreeMap<String, Option<String>> = BTreeMap::new();
    for round in 0..60 {
        for k in 0..KEYS {
            let key = format!("key-{k:03}");
            // Every 7th key ends deleted.
            let value =
                (!(k % 7 == 0 && round == 59)).then(|| format!("{round}-{}", "q".repeat(30)));
            let mut record = BaseRecord::<str, str>::to(TOPIC).partition(0).key(&key);
            if let Some(v) = &value {
                record = record.payload(v);
            }
            producer.send(record).map_err(|(e, _)| e).unwrap();
            latest.insert(key, value);
        }
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(20)).unwrap();
    let produced = 60 * KEYS;
    // Every record was taken (BaseProducer reports failed deliveries only to a callback).
    assert_eq!(list_end(&mut conn), produced as i64);
    let start = Instant::now();
    while fetch_all(&mut conn).len() >= produced / 2 {
        assert!(start.elapsed() < Duration::from_secs(20), "not compacted");
        std::thread::sleep(Duration::from_millis(100));
    }
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", "kcli-compaction-test-unused")
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "100")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(TOPIC, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let end = produced as i64;
    let mut seen: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut last_offset = -1;
    let start = Instant::now();
    while last_offset < end - 1 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "consumed up to {last_offset} of {end}"
        );
        let Some(message) = consumer.poll(Duration::from_millis(100)) else {
            continue;
        };
        let message = message.unwrap();
        assert!(message.offset() > last_offset, "offsets go back");
        last_offset = message.offset();
        let key = String::from_utf8(message.key().unwrap().to_vec()).unwrap();
        let value = message
            .payload()
            .map(|v| String::from_utf8(v.to_vec()).unwrap());
        seen.insert(key, value);
    }
    assert_eq!(seen, latest);
    assert!(seen.values().any(Option::is_none));
}

/// The partition's log end offset (ListOffsets latest).
fn list_end(conn: &mut KafkaConn) -> i64 {
    let (error, offset, _) = crate::serve_support::list_offset(conn, TOPIC, 0, -1);
    assert_eq!(error, 0);
    offset
}
