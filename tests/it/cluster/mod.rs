//! Cluster mode over a real ZooKeeper, every broker a separate `kcli serve` process
//! (`support::cluster::TestCluster`): membership and topic creation ([`membership`]); the
//! controller and brokers dying, stopping and coming back ([`failover`]); records replicated
//! through a leader's kill -9 ([`replication`]); the ISR shrinking and growing with followers
//! that stop and resume, and min ISR ([`isr`]); a dead leader's unreplicated records
//! truncated away when it comes back ([`truncation`]); controlled shutdown and elections on
//! request ([`leadership`]); a consumer group moving to a new coordinator with its commits
//! when its coordinator is killed ([`coordinator`]); nothing acknowledged lost through
//! alternating kills of leaders and the controller ([`durability`]); partitions moved to new
//! brokers by Kafka's reassign tool under produce load ([`reassignment`]); an inter-broker
//! listener on SASL_PLAINTEXT with SCRAM-SHA-512 ([`sasl`]); a broker's failed log dir handed to
//! the controller ([`log_dirs`]); a broker out of file descriptors refusing its replicas of a
//! topic, which go offline once ([`open_files`]); transactions committed, aborted and fenced
//! across brokers, their markers and aborts replicated ([`transactions`]); a Kafka Streams
//! application with exactly_once_v2 counting exactly once through the kill -9 of one of its
//! instances and of a transaction coordinator ([`streams_eos`]); Kafka's transactional copier
//! test, exactly once through kill -9 of the copiers and of the brokers ([`copier`]); consumers
//! reading from the follower in their rack, and from the leader once it dies
//! ([`follower_fetch`]). The load
//! and its check are in `support::produce_load`.

mod coordinator;
mod copier;
mod dashboards;
mod durability;
mod failover;
pub(crate) mod follower_fetch;
mod isr;
mod leadership;
pub(crate) mod log_dirs;
pub(crate) mod membership;
mod open_files;
mod partition_soak;
mod partitions;
mod reassignment;
mod replication;
mod replication_throttle;
mod sasl;
mod slow_links;
mod stays_dead;
mod streams_eos;
mod tls;
mod transactions;
mod truncation;
mod zookeeper_faults;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
use kcli::protocol::messages::{RequestKind, ResponseKind};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Message, Offset, TopicPartitionList};

use crate::serve_support::{KafkaConn, list_offset};
use crate::support::cluster::{Batch, TestCluster, log_batches, metadata_at, wait_until};

/// Creates `topic` with `partitions` partitions of `rf` replicas with an admin client (librdkafka's,
/// which sends CreateTopics to the controller), and waits until every broker's Metadata shows a
/// leader for each.
pub fn create_topic(cluster: &TestCluster, topic: &str, partitions: i32, rf: i32) {
    use rdkafka::admin::{NewTopic, TopicReplication};
    create(
        cluster,
        NewTopic::new(topic, partitions, TopicReplication::Fixed(rf)),
        partitions,
    );
}

/// Creates `topic` with partition `p` on the brokers `assignment[p]`, the first its preferred
/// leader, as [`create_topic`] does.
pub fn create_topic_assigned(cluster: &TestCluster, topic: &str, assignment: &[&[i32]]) {
    use rdkafka::admin::{NewTopic, TopicReplication};
    let partitions = i32::try_from(assignment.len()).unwrap();
    create(
        cluster,
        NewTopic::new(topic, partitions, TopicReplication::Variable(assignment)),
        partitions,
    );
}

fn create(cluster: &TestCluster, new: rdkafka::admin::NewTopic<'_>, partitions: i32) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let topic = new.name.to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .create()
        .unwrap();
    let results = runtime
        .block_on(admin.create_topics(
            &[new],
            &AdminOptions::new().request_timeout(Some(Duration::from_secs(30))),
        ))
        .unwrap();
    for r in results {
        r.unwrap_or_else(|(t, e)| panic!("creating {t}: {e}\n{}", cluster.logs()));
    }
    let alive = cluster.ids().into_iter().collect();
    for id in cluster.ids() {
        wait_until(
            "every broker's Metadata shows a leader for every partition",
            Duration::from_secs(30),
            || {
                let count = usize::try_from(partitions).unwrap();
                metadata_at(cluster.addr(id))
                    .filter(|m| m.led_partitions(&topic, count, &alive).is_some())
            },
        );
    }
}

/// Waits (60 s at most) until the replicas of `topic`-`partition` on `brokers` all end at the
/// leader's high watermark and are one log, batch for batch (headers and CRCs included), read
/// with the storage reader over all segments, since replicas may roll at different offsets.
pub fn wait_for_identical_replica_logs(
    cluster: &TestCluster,
    topic: &str,
    partition: i32,
    brokers: &[i32],
) {
    let dirs: Vec<_> = brokers
        .iter()
        .map(|id| cluster.data_dir(*id).join(format!("{topic}-{partition}")))
        .collect();
    let end = |log: &Vec<Batch>| {
        log.last().map_or(0, |(base, _, _, bytes)| {
            let header = kcli::protocol::record::batch::RecordBatchHeader::parse(bytes).unwrap();
            base + i64::from(header.last_offset_delta) + 1
        })
    };
    wait_until(
        "every replica's log identical",
        Duration::from_secs(60),
        || {
            let leader = metadata_at(cluster.addr(brokers[0]))?
                .topics
                .get(topic)?
                .1
                .get(&partition)?
                .leader;
            let mut conn = KafkaConn::connect_to(cluster.addr(leader));
            let (code, high_watermark, _) = list_offset(&mut conn, topic, partition, -1);
            let logs: Vec<_> = dirs.iter().map(|d| log_batches(d)).collect();
            (code == 0
                && logs.iter().all(|l| end(l) == high_watermark)
                && logs.iter().all(|l| *l == logs[0]))
            .then_some(())
        },
    );
}

/// Reads `partitions` of `topic` from the start until every key of `want` was seen (or 60 s).
pub fn consume_keys(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    want: &BTreeSet<String>,
) -> BTreeSet<String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kcli-cluster-test-unused")
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "100")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !want.is_subset(&seen) && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200))
            && let Some(key) = m.key()
        {
            seen.insert(String::from_utf8_lossy(key).into_owned());
        }
    }
    seen
}

/// A raw CreateTopics v7 to the broker on `port`; the topic's error code.
pub fn create_topics_raw(port: u16, topic: &str) -> i16 {
    let mut conn = KafkaConn::connect(port);
    let body = RequestKind::CreateTopics(CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: StrBytes::from(topic.to_string()),
            num_partitions: 1,
            replication_factor: 1,
            ..CreatableTopic::default()
        }],
        timeout_ms: 10_000,
        ..CreateTopicsRequest::default()
    });
    match conn.call(&body, 7) {
        ResponseKind::CreateTopics(r) => r.topics[0].error_code,
        other => panic!("{other:?}"),
    }
}
