//! The group coordinator follows `__consumer_offsets` leadership (Kafka's `onElection` and
//! `onResignation`): an rdkafka group consumer commits half of an RF-3 topic, the broker that
//! coordinates the group (found with FindCoordinator) is killed with kill -9, and a new
//! consumer of the group, talking to the survivors, resumes exactly at the committed offsets:
//! the new leader of the group's offsets partition loaded the group and its commits, nothing
//! committed is read again and nothing uncommitted is skipped. The brokers run two replica
//! fetchers per leader (`num.replica.fetchers=2`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Message, Offset};

use super::create_topic;
use crate::serve_groups::find_coordinator;
use crate::serve_support::KafkaConn;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, wait_until};

const TOPIC: &str = "coordinated";
const PARTITIONS: i32 = 3;
const RECORDS: usize = 300;

fn group_consumer(bootstrap: &str, group: &str) -> BaseConsumer {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("fetch.wait.max.ms", "100")
        .create()
        .unwrap();
    consumer.subscribe(&[TOPIC]).unwrap();
    consumer
}

/// (partition, offset) of each record `consumer` returns until it returned `n` or `limit`
/// passed. Errors (a broker gone, a coordinator moving) are retried by the client.
fn consume(consumer: &BaseConsumer, n: usize, limit: Duration) -> Vec<(i32, i64)> {
    let deadline = Instant::now() + limit;
    let mut out = Vec::new();
    while out.len() < n && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
            out.push((m.partition(), m.offset()));
        }
    }
    out
}

fn produce_all(bootstrap: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "30000")
        .create()
        .unwrap();
    runtime.block_on(async {
        let mut deliveries = Vec::new();
        for i in 0..RECORDS {
            let key = format!("k{i}");
            let partition = i32::try_from(i).unwrap() % PARTITIONS;
            let record = FutureRecord::to(TOPIC)
                .key(&key)
                .payload(&key)
                .partition(partition);
            deliveries.push(producer.send_result(record).unwrap());
        }
        for d in deliveries {
            d.await.unwrap().unwrap();
        }
    });
}

#[test]
fn a_groups_commits_survive_a_kill_9_of_its_coordinator_and_a_new_consumer_resumes_from_them() {
    let mut cluster = TestCluster::start(
        3,
        &[
            ("offsets.topic.replication.factor", "3"),
            ("offsets.topic.num.partitions", "6"),
            ("group.initial.rebalance.delay.ms", "0"),
            // Two fetchers per leader, so the offsets partitions replicate over both.
            ("num.replica.fetchers", "2"),
        ],
    );
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    produce_all(&cluster.bootstrap());
    assert!(
        cluster.logs().contains("starting a replica fetcher")
            && cluster.logs().contains("fetcher_id=1"),
        "a second fetcher per leader runs"
    );

    // A group coordinated by a broker that is not the controller, so the controller sees the
    // coordinator go and moves its partitions' leadership at once (see replication.rs).
    let controller = cluster.controller_id().unwrap();
    let mut conn = KafkaConn::connect(cluster.port(controller));
    let (group, victim) = (0..50)
        .map(|i| format!("migrating-{i}"))
        .find_map(|g| {
            let coordinator = find_coordinator(&mut conn, &g);
            (coordinator != controller).then_some((g, coordinator))
        })
        .expect("a group coordinated by a broker other than the controller");
    drop(conn);

    // The first consumer reads about half and commits what it read.
    let first = group_consumer(&cluster.bootstrap(), &group);
    let read_first = consume(&first, RECORDS / 2, Duration::from_secs(60));
    assert!(
        read_first.len() >= RECORDS / 2,
        "the first consumer read {} records\n{}",
        read_first.len(),
        cluster.logs()
    );
    first.commit_consumer_state(CommitMode::Sync).unwrap();
    let mut committed: BTreeMap<i32, i64> = BTreeMap::new();
    for (p, o) in &read_first {
        let next = committed.entry(*p).or_insert(0);
        *next = (*next).max(o + 1);
    }
    {
        // (A partition list from `committed` holds references that keep the consumer from
        // closing: it goes first.)
        let stored = first.committed(Duration::from_secs(10)).unwrap();
        for (p, o) in &committed {
            assert_eq!(
                stored.find_partition(TOPIC, *p).map(|e| e.offset()),
                Some(Offset::Offset(*o)),
                "committed on the first coordinator"
            );
        }
    }
    drop(first);

    cluster.broker(victim).kill9();
    let survivors: Vec<i32> = (1..=3).filter(|id| *id != victim).collect();
    let bootstrap: Vec<String> = survivors
        .iter()
        .map(|id| format!("127.0.0.1:{}", cluster.port(*id)))
        .collect();
    let bootstrap = bootstrap.join(",");

    // Once the victim's session expires, the controller makes a survivor lead the group's
    // offsets partition, which loads the group there.
    let mut conn = KafkaConn::connect(cluster.port(controller));
    let new_coordinator = wait_until(
        "a survivor coordinates the group",
        SESSION_TIMEOUT + Duration::from_secs(30),
        || {
            let c = find_coordinator(&mut conn, &group);
            (c != victim).then_some(c)
        },
    );
    assert!(survivors.contains(&new_coordinator));

    // A new consumer of the group resumes at the commits: nothing read twice, nothing skipped.
    let second = group_consumer(&bootstrap, &group);
    let rest = RECORDS - read_first.len();
    let read_second = consume(&second, rest, Duration::from_secs(90));
    assert_eq!(
        read_second.len(),
        rest,
        "the second consumer read {} of {rest} records\n{}",
        read_second.len(),
        cluster.logs()
    );
    // Nothing more: a re-read of committed records would come on top.
    let extra = consume(&second, 1, Duration::from_secs(2));
    assert!(extra.is_empty(), "read again: {extra:?}");
    for (p, o) in &read_second {
        let start = committed.get(p).copied().unwrap_or(0);
        assert!(
            *o >= start,
            "partition {p} offset {o} was committed (at {start}) before the kill"
        );
    }
    let firsts: BTreeSet<(i32, i64)> = read_first.iter().copied().collect();
    let seconds: BTreeSet<(i32, i64)> = read_second.iter().copied().collect();
    assert!(firsts.is_disjoint(&seconds));
    assert_eq!(
        firsts.len() + seconds.len(),
        RECORDS,
        "every record read once"
    );
    // And the new coordinator serves the first consumer's commits as they were.
    let stored = second.committed(Duration::from_secs(10)).unwrap();
    for p in 0..PARTITIONS {
        let found = stored
            .find_partition(TOPIC, p)
            .map_or(Offset::Invalid, |e| e.offset());
        let want = committed
            .get(&p)
            .map_or(Offset::Invalid, |o| Offset::Offset(*o));
        assert_eq!(found, want, "partition {p}'s commit on the new coordinator");
    }
    drop(stored);
}
