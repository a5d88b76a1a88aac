//! Cluster mode over a real ZooKeeper, every broker a separate `kcli serve` process
//! (`support::cluster::TestCluster`): membership and topic creation ([`membership`]); the
//! controller and brokers dying, stopping and coming back ([`failover`]); records replicated
//! through a leader's kill -9 ([`replication`]); the ISR shrinking and growing with followers
//! that stop and resume, and min ISR ([`isr`]); a dead leader's unreplicated records
//! truncated away when it comes back ([`truncation`]); controlled shutdown and elections on
//! request ([`leadership`]); a consumer group moving to a new coordinator with its commits
//! when its coordinator is killed ([`coordinator`]); nothing acknowledged lost through
//! alternating kills of leaders and the controller ([`durability`]).

mod coordinator;
mod durability;
mod failover;
mod isr;
mod leadership;
mod membership;
mod replication;
mod truncation;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
use kcli::protocol::messages::{RequestKind, ResponseKind};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Message, Offset, TopicPartitionList};

use crate::serve_support::KafkaConn;
use crate::support::cluster::{TestCluster, metadata, wait_until};

/// Creates `topic` with `partitions` partitions of `rf` replicas with an admin client (librdkafka's,
/// which sends CreateTopics to the controller), and waits until every broker's Metadata shows a
/// leader for each.
pub fn create_topic(cluster: &TestCluster, topic: &str, partitions: i32, rf: i32) {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::config::ClientConfig;
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
            &[NewTopic::new(
                topic,
                partitions,
                TopicReplication::Fixed(rf),
            )],
            &AdminOptions::new().request_timeout(Some(Duration::from_secs(30))),
        ))
        .unwrap();
    for r in results {
        r.unwrap_or_else(|(t, e)| panic!("creating {t}: {e}\n{}", cluster.logs()));
    }
    let alive = (1..=i32::try_from(cluster.brokers.len()).unwrap()).collect();
    for b in &cluster.brokers {
        wait_until(
            "every broker's Metadata shows a leader for every partition",
            Duration::from_secs(30),
            || {
                let count = usize::try_from(partitions).unwrap();
                metadata(b.port()).filter(|m| m.led_partitions(topic, count, &alive).is_some())
            },
        );
    }
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
