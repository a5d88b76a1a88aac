//! Real clients against `kcli serve`, a fresh broker each (tests/it/serve_support.rs): kcat
//! (Debian's, librdkafka 2.0), the rdkafka crate (librdkafka 2.12, in-process), kafka-python
//! and confluent-kafka through the drivers in tests/clients/ (venv from
//! tests/install-python-clients), and the Java client (kafka-clients 3.9.1) through
//! tests/clients/java/ClientCheck.java, and kafkajs. Every record that comes back is checked
//! exactly: keys (null and empty too), values (null too), headers (repeated keys, null values),
//! partitions, offsets and timestamps. Clients run without idempotence except the Java producer
//! (default settings: idempotent); consumer groups through the same drivers are in
//! group_drivers.rs.
//!
//! One file per kind of client under serve_clients/ (kcat.rs, librdkafka.rs, drivers.rs,
//! group_drivers.rs); the helpers they share are here. A missing tool fails its test with the
//! command that installs it (tests/run runs them all).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, Headers, OwnedHeaders, OwnedMessage};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::{Message, Offset, Timestamp, TopicPartitionList};

use crate::serve_support::{TestBroker, now_ms, run_within};

/// The limit of one client run (the Python drivers give up after 60 s, Java after 90 s).
const CLIENT_LIMIT: Duration = Duration::from_secs(120);
/// How long a consumer may take to read what was produced.
const CONSUME_LIMIT: Duration = Duration::from_secs(30);

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn kcat(broker: &TestBroker, args: &[&str], input: &[u8]) -> String {
    let mut cmd = Command::new("kcat");
    cmd.arg("-b").arg(broker.bootstrap()).args(args);
    let (code, out, err) = run_within(cmd, input, CLIENT_LIMIT);
    assert_eq!(code, 0, "kcat {args:?} failed:\n{err}");
    out
}

fn producer(broker: &TestBroker, extra: &[(&str, &str)]) -> FutureProducer {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", broker.bootstrap())
        .set("enable.idempotence", "false")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "20000");
    for (k, v) in extra {
        config.set(*k, *v);
    }
    config.create().unwrap()
}

/// Sends every record, then waits for every delivery (within the message timeout): the
/// (partition, offset) of each, or its error.
fn send_all<'a>(
    producer: &FutureProducer,
    records: impl IntoIterator<Item = FutureRecord<'a, [u8], [u8]>>,
) -> Vec<Result<(i32, i64), KafkaError>> {
    let futures: Vec<_> = records
        .into_iter()
        .map(|r| producer.send_result(r).map_err(|(e, _)| e).unwrap())
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut out = Vec::new();
        for f in futures {
            let delivery = tokio::time::timeout(Duration::from_secs(60), f)
                .await
                .expect("no delivery report within 60 s")
                .expect("delivery future dropped");
            out.push(
                delivery
                    .map(|d| (d.partition, d.offset))
                    .map_err(|(e, _)| e),
            );
        }
        out
    })
}

fn consumer(broker: &TestBroker, extra: &[(&str, &str)]) -> BaseConsumer {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", broker.bootstrap())
        // librdkafka's assign needs a group id; it is never joined (no subscribe, no commit).
        .set("group.id", "kcli-serve-test-unused")
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "100");
    for (k, v) in extra {
        config.set(*k, *v);
    }
    config.create().unwrap()
}

/// Assigns `partitions` of `topic` from the beginning (no group) and reads until `expected`
/// records came, then a little longer to see that no more come; returns them by partition
/// and offset.
fn consume(
    consumer: &BaseConsumer,
    topic: &str,
    partitions: std::ops::Range<i32>,
    expected: usize,
) -> Vec<OwnedMessage> {
    let mut tpl = TopicPartitionList::new();
    for p in partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let mut out = Vec::new();
    let start = Instant::now();
    let mut quiet_until = None;
    loop {
        if out.len() >= expected && quiet_until.is_none() {
            quiet_until = Some(Instant::now() + Duration::from_millis(300));
        }
        if quiet_until.is_some_and(|t| Instant::now() > t) {
            break;
        }
        assert!(
            start.elapsed() < CONSUME_LIMIT,
            "{topic}: {} of {expected} records after {CONSUME_LIMIT:?}",
            out.len()
        );
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => out.push(m.detach()),
            Some(Err(e)) => panic!("{topic}: consumer error: {e}"),
            None => {}
        }
    }
    assert_eq!(out.len(), expected, "{topic}: records read");
    out.sort_by_key(|m| (m.partition(), m.offset()));
    out
}

fn headers_of(m: &OwnedMessage) -> Vec<(String, Option<Vec<u8>>)> {
    m.headers()
        .map(|h| {
            h.iter()
                .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                .collect()
        })
        .unwrap_or_default()
}

/// Produces `records` (key, value; `None` a null key) to `topic` with kcat in `codec`, every
/// record with `headers` (`name=value`, a name may repeat), then reads the topic from the
/// beginning with kcat and checks every record: partition 0, offsets from 0, the key (or null),
/// the headers in order, a timestamp between `before` and now, the value.
fn kcat_round_trip(
    broker: &TestBroker,
    topic: &str,
    codec: &str,
    headers: &[&str],
    records: &[(Option<String>, String)],
    before: i64,
) {
    // A line without the key delimiter is a record with a null key.
    let input: String = records
        .iter()
        .map(|(key, value)| match key {
            Some(k) => format!("{k}:{value}\n"),
            None => format!("{value}\n"),
        })
        .collect();
    let mut args = vec!["-P", "-t", topic, "-K", ":", "-z", codec];
    for h in headers {
        args.extend(["-H", h]);
    }
    args.extend(["-X", "linger.ms=20"]);
    kcat(broker, &args, input.as_bytes());
    let out = kcat(
        broker,
        &[
            "-C",
            "-t",
            topic,
            "-o",
            "beginning",
            "-e",
            "-f",
            "%p|%o|%K|%k|%h|%T|%s\n",
        ],
        b"",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), records.len(), "{topic}: {out}");
    let headers = headers.join(",");
    for (i, (line, (key, value))) in lines.iter().zip(records).enumerate() {
        let f: Vec<&str> = line.splitn(7, '|').collect();
        assert_eq!(f[..2], ["0", &i.to_string()], "{topic}: {line}");
        match key {
            Some(k) => assert_eq!(f[2..4], [&k.len().to_string(), k.as_str()], "{line}"),
            None => assert_eq!(f[2], "-1", "{topic}: a null key: {line}"),
        }
        assert_eq!(f[4], headers, "{topic}: {line}");
        let ts: i64 = f[5].parse().unwrap();
        assert!(ts >= before && ts <= now_ms(), "{topic}: timestamp {ts}");
        assert_eq!(f[6], value, "{topic}: {line}");
    }
}

/// The batch lines of `kcli dump-segment --format json` of a partition's first segment.
fn dumped_batches(broker: &TestBroker, topic: &str) -> Vec<serde_json::Value> {
    let segment = broker
        .data_dir()
        .join(format!("{topic}-0/00000000000000000000.log"));
    let mut dump = Command::new(env!("CARGO_BIN_EXE_kcli"));
    dump.args(["dump-segment", "--format", "json"])
        .arg(&segment);
    let (code, out, err) = run_within(dump, b"", CLIENT_LIMIT);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "batch")
        .collect()
}

/// (codec, count) of each batch of a partition's first segment (dump-segment), every batch
/// valid.
fn stored_batches(broker: &TestBroker, topic: &str) -> Vec<(String, i64)> {
    dumped_batches(broker, topic)
        .into_iter()
        .map(|b| {
            assert_eq!(b["is_valid"], true, "{b}");
            (
                b["compression"].as_str().unwrap().to_string(),
                b["count"].as_i64().unwrap(),
            )
        })
        .collect()
}

pub(crate) mod drivers;
mod group_drivers;
mod kcat;
mod librdkafka;
mod recompress;
