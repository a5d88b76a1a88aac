//! Client quotas enforced on `kcli serve`, set with Kafka 3.9.1's `kafka-configs`: a
//! librdkafka producer with `producer_byte_rate` 1 MiB/s for its client id, sending as fast as
//! it can beside an unthrottled producer, sees `throttle_time_ms` in its statistics, gets no
//! error, and is held to what Kafka's windowed rate allows it at every second. The other
//! producer keeps its speed. A consumer with `consumer_byte_rate` is held the same way while
//! another consumer of the same topic reads at full speed; so is a SCRAM user's producer with
//! the user's quota, beside a producer of no user. After a first burst of one window
//! (Kafka forgives ten), each is held within 10% of its quota in every second.

use std::collections::VecDeque;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::statistics::Statistics;

use crate::serve_clients::drivers::{run_driver, venv_python};
use crate::serve_sasl_clients::{add_scram_user, sasl_overrides};
use crate::serve_support::TestBroker;
use crate::support::client_quotas::{
    assert_converged, assert_within_windowed_allowance, rates, set_client_quota,
};
use crate::support::cluster::{exclusive, wait_until};
use crate::support::zookeeper::ZkServer;
use crate::users::kafka_configs;

const QUOTA: f64 = 1_048_576.0;
const RECORD: usize = 10 * 1024;
/// The largest batch the clients make (`batch.size`): the step in which bytes arrive, kept
/// small beside the quota so that a second's count is not decided by one batch more or less.
const BATCH: usize = 32 * 1024;
/// The most one request or fetch adds at once: a batch and its overhead.
const SLICE: f64 = (BATCH + 1024) as f64;
/// How long each client runs.
const RUN: Duration = Duration::from_secs(24);

/// What a client's callbacks saw: acknowledged bytes with their times, errors, and the largest
/// average throttle time its statistics reported.
#[derive(Default)]
struct Seen {
    acked: Mutex<Vec<(Instant, usize)>>,
    errors: Mutex<Vec<String>>,
    throttle_avg_ms: Mutex<i64>,
}

#[derive(Clone, Default)]
struct Observer(Arc<Seen>);

impl ClientContext for Observer {
    fn stats(&self, statistics: Statistics) {
        let avg = statistics
            .brokers
            .values()
            .filter_map(|b| b.throttle.as_ref().map(|w| w.avg))
            .max()
            .unwrap_or(0);
        let mut seen = self.0.throttle_avg_ms.lock().unwrap();
        *seen = (*seen).max(avg);
    }
}

impl ProducerContext for Observer {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(message) => self
                .0
                .acked
                .lock()
                .unwrap()
                .push((Instant::now(), message.payload_len())),
            Err((err, _)) => self.0.errors.lock().unwrap().push(err.to_string()),
        }
    }
}

impl rdkafka::consumer::ConsumerContext for Observer {}

/// Runs a producer with `client.id` `client` flat out for [`RUN`]; what it saw.
fn produce_flat_out(broker: &TestBroker, topic: &str, client: &str) -> (Arc<Seen>, Instant) {
    let observer = Observer::default();
    let producer: BaseProducer<Observer> = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("client.id", client)
        .set("acks", "1")
        .set("linger.ms", "5")
        .set("statistics.interval.ms", "1000")
        .set("queue.buffering.max.kbytes", "2048")
        .set("batch.size", BATCH.to_string())
        .create_with_context(observer.clone())
        .unwrap();
    let payload = vec![b'q'; RECORD];
    let start = Instant::now();
    while start.elapsed() < RUN {
        match producer.send(BaseRecord::<(), _>::to(topic).payload(&payload)) {
            Ok(()) => {
                producer.poll(Duration::ZERO);
            }
            Err(_) => {
                producer.poll(Duration::from_millis(5));
            }
        }
    }
    producer.flush(Duration::from_secs(30)).unwrap();
    (observer.0, start)
}

/// A producer without a quota, run beside a throttled one: no errors, no throttle, and more
/// than four times the quota on average once under way.
fn assert_unthrottled((seen, start): (Arc<Seen>, Instant)) {
    let per_second = rates(&seen.acked.lock().unwrap(), start, 2, RUN.as_secs() - 1);
    let mean = per_second.iter().sum::<f64>() / per_second.len() as f64;
    assert!(
        mean > 4.0 * QUOTA,
        "the producer without a quota got only {mean:.0} B/s: {per_second:?}"
    );
    assert!(seen.errors.lock().unwrap().is_empty(), "{:?}", seen.errors);
    assert_eq!(*seen.throttle_avg_ms.lock().unwrap(), 0);
}

#[test]
fn a_producer_over_its_byte_rate_is_throttled_to_it_and_others_are_not() {
    let broker = TestBroker::start(&[]);
    set_client_quota(
        &broker.bootstrap(),
        "throttled",
        "producer_byte_rate",
        "1048576",
    );
    let (throttled, free) = std::thread::scope(|s| {
        let throttled = s.spawn(|| produce_flat_out(&broker, "quota-p", "throttled"));
        let free = s.spawn(|| produce_flat_out(&broker, "quota-free", "unlimited"));
        (throttled.join().unwrap(), free.join().unwrap())
    });
    let (seen, start) = throttled;
    assert!(seen.errors.lock().unwrap().is_empty(), "{:?}", seen.errors);
    let throttle = *seen.throttle_avg_ms.lock().unwrap();
    assert!(throttle > 0, "librdkafka saw no throttle_time_ms");
    assert_within_windowed_allowance(&seen.acked.lock().unwrap(), start, RUN, QUOTA);
    assert_converged(&seen.acked.lock().unwrap(), start, RUN, QUOTA, SLICE);
    assert_unthrottled(free);
}

/// A SCRAM user's `producer_byte_rate`, set with `kafka-configs --entity-type users`: the
/// user's producer (any client id) is held to it, a producer of no user is not.
#[test]
fn a_scram_users_producer_over_its_byte_rate_is_throttled_to_it_and_others_are_not() {
    let _one = exclusive();
    let zk = ZkServer::start();
    let connect = zk.connect_string();
    add_scram_user(&connect, "alice", "alice-secret");
    let mut overrides = sasl_overrides();
    overrides.push(("zookeeper.connect", &connect));
    let broker = TestBroker::start(&overrides);
    let (code, out, err) = kafka_configs(&[
        "--bootstrap-server",
        &broker.bootstrap(),
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
        "--add-config",
        "producer_byte_rate=1048576",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // The change reaches the broker through a ZooKeeper notification.
    wait_until(
        "the broker applying alice's quota",
        Duration::from_secs(20),
        || broker.stderr().contains("changing quota").then_some(()),
    );
    // librdkafka as the rdkafka crate builds it has no SCRAM; confluent-kafka's has.
    let sasl = format!("127.0.0.1:{}", broker.port2());
    let mut driver = Command::new(venv_python());
    driver.arg("tests/clients/quota_producer.py").args([
        "--bootstrap",
        &sasl,
        "--topic",
        "quota-u",
        "--seconds",
        &RUN.as_secs().to_string(),
        "--mechanism",
        "SCRAM-SHA-512",
        "--username",
        "alice",
        "--password",
        "alice-secret",
    ]);
    let (summary, free) = std::thread::scope(|s| {
        let throttled = s.spawn(|| run_driver(driver, "quota_producer.py"));
        let free = s.spawn(|| produce_flat_out(&broker, "quota-u-free", "any-id"));
        (throttled.join().unwrap(), free.join().unwrap())
    });
    assert_eq!(summary["errors"], 0, "{summary}");
    assert!(
        summary["throttle_avg_ms"].as_i64().unwrap_or(0) > 0,
        "librdkafka saw no throttle_time_ms"
    );
    let start = Instant::now();
    let acked: Vec<(Instant, usize)> = summary["acked"]
        .as_array()
        .expect("acked")
        .iter()
        .map(|e| {
            let at = Duration::from_secs_f64(e[0].as_f64().unwrap_or(0.0));
            (start + at, e[1].as_u64().unwrap_or(0) as usize)
        })
        .collect();
    assert_within_windowed_allowance(&acked, start, RUN, QUOTA);
    assert_converged(&acked, start, RUN, QUOTA, SLICE);
    assert_unthrottled(free);
}

/// Reads `topic` for [`RUN`] as `client`: the bytes of each message with its time.
fn consume_for(broker: &TestBroker, topic: &str, client: &str) -> (Arc<Seen>, Instant) {
    let observer = Observer::default();
    let consumer: BaseConsumer<Observer> = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("client.id", client)
        .set("group.id", client)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("statistics.interval.ms", "1000")
        .create_with_context(observer.clone())
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let start = Instant::now();
    let mut window: VecDeque<(Instant, usize)> = VecDeque::new();
    while start.elapsed() < RUN {
        if let Some(message) = consumer.poll(Duration::from_millis(100)) {
            match message {
                Ok(m) => window.push_back((Instant::now(), m.payload_len())),
                Err(e) => observer.0.errors.lock().unwrap().push(e.to_string()),
            }
        }
    }
    observer.0.acked.lock().unwrap().extend(window);
    (observer.0, start)
}

#[test]
fn a_consumer_over_its_byte_rate_is_throttled_to_it_and_others_are_not() {
    let broker = TestBroker::start(&[]);
    // 64 MB to read: more than either consumer takes in the run.
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("acks", "1")
        .set("linger.ms", "5")
        .set("batch.size", BATCH.to_string())
        .create()
        .unwrap();
    let payload = vec![b'c'; RECORD];
    for _ in 0..6_400 {
        while producer
            .send(BaseRecord::<(), _>::to("quota-c").payload(&payload))
            .is_err()
        {
            producer.poll(Duration::from_millis(5));
        }
    }
    producer.flush(Duration::from_secs(60)).unwrap();
    set_client_quota(
        &broker.bootstrap(),
        "slow-reader",
        "consumer_byte_rate",
        "1048576",
    );
    let (slow, free) = std::thread::scope(|s| {
        let slow = s.spawn(|| consume_for(&broker, "quota-c", "slow-reader"));
        let free = s.spawn(|| consume_for(&broker, "quota-c", "fast-reader"));
        (slow.join().unwrap(), free.join().unwrap())
    });
    let (seen, start) = slow;
    assert!(seen.errors.lock().unwrap().is_empty(), "{:?}", seen.errors);
    assert!(
        *seen.throttle_avg_ms.lock().unwrap() > 0,
        "librdkafka saw no throttle_time_ms"
    );
    assert_within_windowed_allowance(&seen.acked.lock().unwrap(), start, RUN, QUOTA);
    assert_converged(&seen.acked.lock().unwrap(), start, RUN, QUOTA, SLICE);
    let (free_seen, _) = free;
    let free_total: usize = free_seen.acked.lock().unwrap().iter().map(|(_, n)| n).sum();
    assert!(
        free_total as f64 > 4.0 * QUOTA * RUN.as_secs_f64() || free_total >= 6_400 * RECORD,
        "the unthrottled consumer read only {free_total} bytes"
    );
}

/// Sends Metadata requests (no topics) one after another as `client`, over one connection,
/// for `run`: how many were answered, and the largest `throttle_time_ms` among them.
fn metadata_requests(broker: &TestBroker, client: &str, run: Duration) -> (usize, i32) {
    use kcli::network::{NetworkClient, NetworkClientConfig};
    use kcli::protocol::messages::metadata_request::MetadataRequest;
    use kcli::protocol::messages::{RequestKind, ResponseKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = NetworkClientConfig {
            client_id: client.into(),
            request_timeout: Duration::from_secs(10),
            ..NetworkClientConfig::default()
        };
        let network = NetworkClient::new(broker.bootstrap(), config);
        let request = RequestKind::Metadata(MetadataRequest {
            topics: Some(Vec::new()),
            ..MetadataRequest::default()
        });
        let started = Instant::now();
        let (mut answered, mut throttle) = (0, 0);
        while started.elapsed() < run {
            match network.send(&request, 12).await.unwrap() {
                ResponseKind::Metadata(m) => throttle = throttle.max(m.throttle_time_ms),
                other => panic!("{other:?}"),
            }
            answered += 1;
        }
        (answered, throttle)
    })
}

/// `request_percentage` bounds a client that sends many small requests: its answers carry a
/// throttle time and its connection is muted, so in the same time it gets far fewer answers
/// than a client without a quota, whose answers carry none.
///
/// The quota is far below what the client takes whatever the machine's speed: Kafka's rate
/// forgives ten windows' worth at first (here 1 ms of the broker's threads, a few hundred
/// Metadata requests at most), then allows 0.1 ms a second. A quota near what the client
/// takes (1%, 100 ms forgiven) throttles it or not depending on how busy the machine is.
#[test]
fn a_client_over_its_request_percentage_is_throttled_and_others_are_not() {
    let broker = TestBroker::start(&[]);
    set_client_quota(&broker.bootstrap(), "busy", "request_percentage", "0.01");
    let run = Duration::from_secs(3);
    let (free_answered, free_throttle) = metadata_requests(&broker, "idle", run);
    let (busy_answered, busy_throttle) = metadata_requests(&broker, "busy", run);
    eprintln!("in {run:?}: {busy_answered} answered over the quota, {free_answered} without one");
    assert_eq!(free_throttle, 0, "the client without a quota was throttled");
    assert!(
        busy_throttle > 0,
        "no throttle_time_ms for the client over its quota"
    );
    assert!(
        busy_answered * 3 < free_answered,
        "{busy_answered} requests answered in {run:?} over the quota, {free_answered} without one"
    );
}
