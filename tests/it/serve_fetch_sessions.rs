//! Incremental fetch sessions (KIP-227) on `kcli serve`: over the raw protocol (a full fetch
//! opens a session, incremental fetches answer only partitions with news, the session errors
//! as Kafka answers them, a long poll answered as soon as one partition has data), the cache's
//! eviction with `max.incremental.fetch.session.cache.slots`, and real consumers of 2,000
//! partitions: Kafka 3.9.1's Java consumer goes incremental (its fetch requests shrink, seen in
//! the broker's `RequestBytes` histogram, and its session in the FetchSessionCache gauges),
//! librdkafka's stays sessionless (it always sends session 0, epoch -1); both read everything.

use std::time::{Duration, Instant};

use bytes::Bytes;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::fetch_request as fr;
use kcli::protocol::messages::fetch_response::FetchResponse;
use kcli::protocol::messages::produce_request as pr;
use kcli::protocol::messages::{RequestKind, ResponseKind};
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use crate::kafka_tools::CONSUMER_PERF;
use crate::kafka_tools::support::java;
use crate::serve_support::{KafkaConn, TestBroker, create_topic_with, run_within};
use crate::support::exposition::{Exposition, scrape};

const METRICS: (&str, &str) = ("kcli.metrics.listener", "127.0.0.1:{port2}");
const SESSIONS: &str = "kafka_server_fetchsessioncache_numincrementalfetchsessions";
const CACHED: &str = "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached";
const EVICTIONS: &str = "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total";
const REQUEST_BYTES: &str = "kafka_network_requestmetrics_requestbytes";
const FETCH_SESSION_ID_NOT_FOUND: i16 = 70;
const INVALID_FETCH_SESSION_EPOCH: i16 = 71;
const FETCH_SESSION_TOPIC_ID_ERROR: i16 = 106;
const PARTITIONS: i32 = 2_000;
const PER_PARTITION: usize = 2;

/// Produces `n` records into each of `partitions` partitions of `topic`.
fn produce_all(conn: &mut KafkaConn, topic: &str, partitions: std::ops::Range<i32>, n: usize) {
    let parts: Vec<i32> = partitions.collect();
    assert_eq!(try_produce(conn, topic, &parts, n), Vec::<i32>::new());
}

/// Produces `n` records into each of `parts` of `topic`, one Produce (v9, acks=1) per 500
/// partitions; the partitions that refused them (nothing written there).
fn try_produce(conn: &mut KafkaConn, topic: &str, parts: &[i32], n: usize) -> Vec<i32> {
    let mut failed = Vec::new();
    for chunk in parts.chunks(500) {
        let partition_data = chunk
            .iter()
            .map(|&index| {
                let mut batch = RecordBatchBuilder::new(CompressionType::None);
                batch.records = (0..n)
                    .map(|i| {
                        let value = format!("{topic}-{index}-{i}").into_bytes();
                        SimpleRecord::new(1_700_000_000_000, None, Some(value))
                    })
                    .collect();
                pr::PartitionProduceData {
                    index,
                    records: Some(Bytes::from(batch.build().unwrap())),
                    ..Default::default()
                }
            })
            .collect();
        let body = RequestKind::Produce(pr::ProduceRequest {
            acks: 1,
            timeout_ms: 10_000,
            topic_data: vec![pr::TopicProduceData {
                name: StrBytes::from(topic),
                partition_data,
                ..Default::default()
            }],
            ..Default::default()
        });
        let ResponseKind::Produce(r) = conn.call(&body, 9) else {
            unreachable!()
        };
        failed.extend(
            r.responses[0]
                .partition_responses
                .iter()
                .filter(|p| p.error_code != 0)
                .map(|p| p.index),
        );
    }
    failed
}

/// A Fetch v12 (topics by name) of session `(id, epoch)` naming `partitions` (index, offset)
/// of `topic`, forgetting `forget`, as a consumer or (`replica_id` >= 0) a follower.
fn fetch(
    conn: &mut KafkaConn,
    session: (i32, i32),
    topic: &str,
    partitions: &[(i32, i64)],
    forget: &[i32],
    max_wait_ms: i32,
    replica_id: i32,
) -> FetchResponse {
    let topics = if partitions.is_empty() {
        Vec::new()
    } else {
        vec![fr::FetchTopic {
            topic: StrBytes::from(topic),
            partitions: partitions
                .iter()
                .map(|&(partition, fetch_offset)| fr::FetchPartition {
                    partition,
                    fetch_offset,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }]
    };
    let forgotten_topics_data = if forget.is_empty() {
        Vec::new()
    } else {
        vec![fr::ForgottenTopic {
            topic: StrBytes::from(topic),
            partitions: forget.to_vec(),
            ..Default::default()
        }]
    };
    let body = RequestKind::Fetch(fr::FetchRequest {
        replica_id,
        max_wait_ms,
        min_bytes: 1,
        max_bytes: 50 << 20,
        session_id: session.0,
        session_epoch: session.1,
        topics,
        forgotten_topics_data,
        ..Default::default()
    });
    let ResponseKind::Fetch(r) = conn.call(&body, 12) else {
        unreachable!()
    };
    r
}

/// The (partition, high watermark, record bytes) a response carries, in order.
fn answered(r: &FetchResponse) -> Vec<(i32, i64, usize)> {
    r.responses
        .iter()
        .flat_map(|t| &t.partitions)
        .map(|p| {
            (
                p.partition_index,
                p.high_watermark,
                p.records.as_ref().map_or(0, Bytes::len),
            )
        })
        .collect()
}

#[test]
fn a_session_answers_only_partitions_with_news_and_its_errors_as_kafka() {
    let broker = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(broker.port());
    create_topic_with(&mut conn, "fs", 3, &[]);
    produce_all(&mut conn, "fs", 0..1, 3);

    // A full fetch (epoch 0) opens a session and answers every partition.
    let all = [(0, 0), (1, 0), (2, 0)];
    let r = fetch(&mut conn, (0, 0), "fs", &all, &[], 0, -1);
    assert_eq!(r.error_code, 0);
    let id = r.session_id;
    assert_ne!(id, 0, "a session was created");
    let first = answered(&r);
    assert_eq!(first.len(), 3);
    assert!(first[0].2 > 0 && first[0].1 == 3, "{first:?}");

    // Epoch 1 moves partition 0 past its records: nothing is news, nothing is answered.
    let r = fetch(&mut conn, (id, 1), "fs", &[(0, 3)], &[], 0, -1);
    assert_eq!((r.error_code, r.session_id), (0, id));
    assert_eq!(answered(&r), vec![], "no partition has news");

    // Records in partition 1: epoch 2 names nothing, and only partition 1 comes back.
    produce_all(&mut conn, "fs", 1..2, 2);
    let r = fetch(&mut conn, (id, 2), "fs", &[], &[], 0, -1);
    let news = answered(&r);
    assert_eq!(news.len(), 1, "{news:?}");
    assert_eq!((news[0].0, news[0].1), (1, 2));
    assert!(news[0].2 > 0);

    // The errors, each with no partitions.
    let stale = fetch(&mut conn, (id, 2), "fs", &[], &[], 0, -1);
    assert_eq!(stale.error_code, INVALID_FETCH_SESSION_EPOCH);
    assert!(stale.responses.is_empty());
    let unknown = id.wrapping_add(1).max(1);
    let r = fetch(&mut conn, (unknown, 1), "fs", &[], &[], 0, -1);
    assert_eq!(r.error_code, FETCH_SESSION_ID_NOT_FOUND);
    let body = RequestKind::Fetch(fr::FetchRequest {
        replica_id: -1,
        max_bytes: 1 << 20,
        session_id: id,
        session_epoch: 3,
        ..Default::default()
    });
    let ResponseKind::Fetch(r) = conn.call(&body, 13) else {
        unreachable!()
    };
    assert_eq!(
        r.error_code, FETCH_SESSION_TOPIC_ID_ERROR,
        "a v12 session at v13"
    );

    // A long poll on the session (partitions 0 and 2 idle, 1 read to its end) answers as soon
    // as partition 2 gets a record, with partition 2 alone.
    let r = fetch(&mut conn, (id, 3), "fs", &[(1, 2)], &[0], 0, -1);
    assert_eq!(answered(&r), vec![]);
    let port = broker.port();
    let producer = std::thread::spawn(move || {
        let mut conn = KafkaConn::connect(port);
        std::thread::sleep(Duration::from_millis(300));
        produce_all(&mut conn, "fs", 2..3, 1);
    });
    let started = Instant::now();
    let r = fetch(&mut conn, (id, 4), "fs", &[], &[], 20_000, -1);
    producer.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let news = answered(&r);
    assert_eq!(
        news.iter().map(|n| n.0).collect::<Vec<_>>(),
        vec![2],
        "{news:?}"
    );

    // Forgetting every partition closes the session; epoch -1 fetches stay sessionless.
    let r = fetch(&mut conn, (id, 5), "fs", &[], &[1, 2], 0, -1);
    assert_eq!((r.error_code, r.session_id), (0, 0));
    let r = fetch(&mut conn, (id, 6), "fs", &[], &[], 0, -1);
    assert_eq!(r.error_code, FETCH_SESSION_ID_NOT_FOUND);
    let r = fetch(&mut conn, (0, -1), "fs", &all, &[], 0, -1);
    assert_eq!((r.error_code, r.session_id, answered(&r).len()), (0, 0, 3));
}

/// The FetchSessionCache series of a scrape: (sessions, partitions cached, evictions).
fn cache_figures(broker: &TestBroker) -> (f64, f64, f64) {
    let e = scrape(broker.port2()).expect("metrics endpoint");
    let v = |name| {
        e.value(name, &[])
            .unwrap_or_else(|| panic!("{name} not served"))
    };
    (v(SESSIONS), v(CACHED), v(EVICTIONS))
}

/// 8 slots: one session in each of Kafka's 8 shards. A ninth consumer gets no session (young
/// sessions are safe from consumers); a follower evicts the consumer session of the shard its
/// own goes to, whose next fetch finds it gone.
#[test]
fn a_full_cache_refuses_consumers_and_evicts_for_followers() {
    let broker = TestBroker::start(&[METRICS, ("max.incremental.fetch.session.cache.slots", "8")]);
    let mut conn = KafkaConn::connect(broker.port());
    create_topic_with(&mut conn, "ev", 2, &[]);
    let ids: Vec<i32> = (0..8)
        .map(|_| fetch(&mut conn, (0, 0), "ev", &[(0, 0)], &[], 0, -1).session_id)
        .collect();
    assert!(ids.iter().all(|&id| id != 0), "{ids:?}");
    assert_eq!(cache_figures(&broker), (8.0, 8.0, 0.0));

    let r = fetch(&mut conn, (0, 0), "ev", &[(0, 0)], &[], 0, -1);
    assert_eq!(
        (r.error_code, r.session_id),
        (0, 0),
        "no room for a consumer"
    );
    assert_eq!(answered(&r).len(), 1, "still answered, sessionless");

    // A follower's full fetch (replica 7) is privileged: it evicts a consumer session.
    let r = fetch(&mut conn, (0, 0), "ev", &[(0, 0), (1, 0)], &[], 0, 7);
    let follower = r.session_id;
    assert_ne!(follower, 0);
    assert_eq!(cache_figures(&broker), (8.0, 9.0, 1.0));
    let shard = |id: i32| id / (i32::MAX / 8);
    let gone: Vec<i32> = ids
        .iter()
        .copied()
        .filter(|&id| {
            fetch(&mut conn, (id, 1), "ev", &[], &[], 0, -1).error_code
                == FETCH_SESSION_ID_NOT_FOUND
        })
        .collect();
    assert_eq!(gone.len(), 1, "{ids:?} {follower}");
    assert_eq!(shard(gone[0]), shard(follower), "evicted within its shard");
}

/// The Fetch `RequestBytes` quantile `q` kcli serves.
fn fetch_request_bytes(e: &Exposition, q: &str) -> f64 {
    e.value(REQUEST_BYTES, &[("quantile", q), ("request", "Fetch")])
        .unwrap_or_else(|| panic!("no {REQUEST_BYTES} {q}"))
}

/// A topic of 2,000 partitions with two records in each. Creating them takes a debug build
/// longer than CreateTopics' 10 s timeout (REQUEST_TIMED_OUT, 7, while it goes on): the
/// produce waits until every partition leads.
fn big_topic(broker: &TestBroker, topic: &str) {
    use kcli::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
    let mut conn = KafkaConn::connect(broker.port());
    let request = RequestKind::CreateTopics(CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: StrBytes::from(topic),
            num_partitions: PARTITIONS,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ResponseKind::CreateTopics(r) = conn.call(&request, 7) else {
            unreachable!()
        };
        match r.topics[0].error_code {
            0 | 7 => break,
            // NOT_CONTROLLER until the broker won the election.
            41 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            code => panic!("{topic}: {code}"),
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut conn = KafkaConn::connect(broker.port());
    let mut left: Vec<i32> = (0..PARTITIONS).collect();
    while !left.is_empty() {
        assert!(
            Instant::now() < deadline,
            "{topic}: {} not ready",
            left.len()
        );
        left = try_produce(&mut conn, topic, &left, PER_PARTITION);
        if !left.is_empty() {
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

#[test]
fn the_java_consumer_of_2000_partitions_goes_incremental_and_reads_everything() {
    let broker = TestBroker::start(&[METRICS]);
    big_topic(&broker, "big-java");
    let total = PARTITIONS as usize * PER_PARTITION;
    // One more than there is: the tool reads everything, then fetches with nothing new until
    // its 6 s timeout; those fetches are incremental and name no partition.
    let mut cmd = java(CONSUMER_PERF);
    cmd.args([
        "--bootstrap-server",
        &broker.bootstrap(),
        "--topic",
        "big-java",
        "--messages",
        &(total + 1).to_string(),
        "--timeout",
        "6000",
    ]);
    let done = std::sync::atomic::AtomicBool::new(false);
    let watch = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut most = (0.0f64, 0.0f64);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(e) = scrape(broker.port2()) {
                    let sessions = e.value(SESSIONS, &[]).unwrap_or(0.0);
                    let cached = e.value(CACHED, &[]).unwrap_or(0.0);
                    most = (most.0.max(sessions), most.1.max(cached));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            most
        });
        let (code, stdout, stderr) = run_within(cmd, b"", Duration::from_secs(120));
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        // The values line: data.consumed.in.nMsg is the fifth column.
        let values = stdout
            .lines()
            .rfind(|l| l.split(", ").count() >= 6 && !l.starts_with("start.time"))
            .unwrap_or_else(|| panic!("no result line in:\n{stdout}\n{stderr}"));
        let read: usize = values.split(", ").nth(4).unwrap().trim().parse().unwrap();
        assert_eq!(read, total, "every record read:\n{stdout}");
        watcher.join().unwrap()
    });
    assert_eq!(watch.0, 1.0, "one session, the consumer's");
    assert_eq!(watch.1, f64::from(PARTITIONS), "of every partition");
    let e = scrape(broker.port2()).unwrap();
    let (median, p999) = (
        fetch_request_bytes(&e, "0.50"),
        fetch_request_bytes(&e, "0.999"),
    );
    eprintln!("java: sessions {watch:?}, Fetch RequestBytes p50 {median} p99.9 {p999}");
    // A full fetch names 2,000 partitions (over 50 KB); the incremental ones a handful.
    assert!(p999 > 50_000.0, "the full fetch: {p999}");
    assert!(median < 1_000.0, "incremental fetches: median {median}");
}

#[test]
fn librdkafka_reads_2000_partitions_sessionless() {
    let broker = TestBroker::start(&[METRICS]);
    big_topic(&broker, "big-rd");
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", "big-rd")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        assignment
            .add_partition_offset("big-rd", p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&assignment).unwrap();
    let total = PARTITIONS as usize * PER_PARTITION;
    let mut seen = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < total && Instant::now() < deadline {
        if let Some(m) = consumer.poll(Duration::from_millis(200)) {
            let m = m.unwrap();
            seen.insert((
                rdkafka::Message::partition(&m),
                rdkafka::Message::offset(&m),
            ));
        }
    }
    assert_eq!(seen.len(), total, "every record read");
    let e = scrape(broker.port2()).unwrap();
    assert_eq!(
        e.value(SESSIONS, &[]),
        Some(0.0),
        "librdkafka asks for none"
    );
    // Every fetch names every partition it has a position for: once all 2,000 have one, each
    // request is a full one. (Not the median: under load librdkafka resolves the positions
    // over many fetches, each naming only the partitions resolved so far.)
    let p99 = fetch_request_bytes(&e, "0.99");
    eprintln!("librdkafka: Fetch RequestBytes p99 {p99}");
    assert!(p99 > 20_000.0, "{p99}");
}
