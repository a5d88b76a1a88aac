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

pub(crate) mod drivers;
mod group_drivers;
mod kcat;
mod librdkafka;
mod recompress;
