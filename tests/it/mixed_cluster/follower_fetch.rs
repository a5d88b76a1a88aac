//! Follower fetching (KIP-392) across kinds: a Kafka 3.9.1 broker in rack-1 and a kcli broker
//! in rack-2, both with `replica.selector.class=RackAwareReplicaSelector`. A kcli leader points
//! consumers in rack-1 at its Kafka follower, and a Kafka leader points consumers in rack-2 at
//! its kcli follower: librdkafka's per-broker `rxbytes` show every record came from the
//! follower and almost nothing from the leader; the kcli broker's `BytesOutPerSec` shows it
//! sent the Java consumer (ConsumerPerformance) every record as a follower and none as the
//! leader. Then the kcli follower is killed:
//! the librdkafka consumer reads what follows from the Kafka leader, nothing lost.

use std::time::{Duration, Instant};

use rdkafka::consumer::Consumer;

use super::create_topic;
use crate::cluster::follower_fetch::{
    OVERHEAD, PAYLOAD, RACK_AWARE, RECORDS, bytes_out, java_consumer, java_metric, poll_nothing,
    produce, rack_consumer, read_up_to, wait_rx,
};
use crate::serve_support::free_port;
use crate::support::mixed_cluster::MixedCluster;

/// ConsumerPerformance reads every record of `topic` in `rack`.
fn java_reads(cluster: &MixedCluster, topic: &str, rack: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let client = format!("{topic}-java");
    let (code, stdout, stderr) = java_consumer(
        &cluster.bootstrap(),
        topic,
        rack,
        &client,
        RECORDS,
        scratch.path(),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let consumed = java_metric(
        &stdout,
        "consumer-fetch-manager-metrics:records-consumed-total",
        &format!("{{client-id={client}}}"),
    );
    assert_eq!(consumed, RECORDS as f64, "{stdout}");
}

#[test]
fn leaders_of_either_kind_point_consumers_at_a_follower_of_the_other() {
    let metrics = free_port();
    let listener = format!("127.0.0.1:{metrics}");
    let mut cluster = MixedCluster::start_with_own_settings(
        &[1],
        &[2],
        &[
            ("replica.selector.class", RACK_AWARE),
            ("offsets.topic.replication.factor", "2"),
        ],
        &[
            (1, &[("broker.rack", "rack-1")]),
            (
                2,
                &[
                    ("broker.rack", "rack-2"),
                    ("kcli.metrics.listener", &listener),
                ],
            ),
        ],
    );
    create_topic(&cluster, "kcli-led", &[&[2, 1]], &[]);
    create_topic(&cluster, "kafka-led", &[&[1, 2]], &[]);
    let bootstrap = cluster.bootstrap();
    produce(&bootstrap, "kcli-led", 0..RECORDS);
    produce(&bootstrap, "kafka-led", 0..RECORDS);

    // kcli leads; the consumer in rack-1 reads from Kafka's follower.
    let consumer = rack_consumer(&bootstrap, "kcli-led", "rack-1");
    let mut read = Vec::new();
    read_up_to(&consumer, &mut read, RECORDS, Duration::from_secs(60));
    wait_rx(&consumer, "Kafka's follower sent the records", |rx| {
        rx.of(1) >= PAYLOAD
    });
    let from_leader = consumer.context().of(2);
    assert!(
        from_leader < OVERHEAD,
        "the kcli leader sent {from_leader} bytes"
    );
    drop(consumer);
    java_reads(&cluster, "kcli-led", "rack-1");
    assert_eq!(
        bytes_out(metrics, "kcli-led"),
        0.0,
        "the kcli leader sent none of its records to either consumer"
    );

    // Kafka leads; the consumers in rack-2 read from kcli's follower.
    java_reads(&cluster, "kafka-led", "rack-2");
    assert!(
        bytes_out(metrics, "kafka-led") >= PAYLOAD as f64,
        "kcli's follower sent the Java consumer the records"
    );
    let consumer = rack_consumer(&bootstrap, "kafka-led", "rack-2");
    let mut read = Vec::new();
    read_up_to(&consumer, &mut read, RECORDS, Duration::from_secs(60));
    wait_rx(&consumer, "kcli's follower sent the records", |rx| {
        rx.of(2) >= PAYLOAD
    });
    let from_leader = consumer.context().of(1);
    assert!(
        from_leader < OVERHEAD,
        "the Kafka leader sent {from_leader} bytes"
    );

    // The kcli follower dies: once Kafka's controller drops it from the ISR, what follows
    // comes from the Kafka leader.
    cluster.kill9(2);
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster.isr("kafka-led", 0) != Some(vec![1]) {
        assert!(
            Instant::now() < deadline,
            "the ISR never shrank to the leader"
        );
        poll_nothing(&consumer);
    }
    produce(
        &format!("127.0.0.1:{}", cluster.port(1)),
        "kafka-led",
        RECORDS..2 * RECORDS,
    );
    read_up_to(&consumer, &mut read, 2 * RECORDS, Duration::from_secs(90));
    wait_rx(
        &consumer,
        "the Kafka leader sent the second records",
        |rx| rx.of(1) >= PAYLOAD,
    );
}
