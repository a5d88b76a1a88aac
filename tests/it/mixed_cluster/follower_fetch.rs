//! Follower fetching (KIP-392) across kinds: a Kafka 3.9.1 broker in rack-1 and a kcli broker
//! in rack-2, both with `replica.selector.class=RackAwareReplicaSelector`. A kcli leader points
//! consumers in rack-1 at its Kafka follower, and a Kafka leader points consumers in rack-2 at
//! its kcli follower: librdkafka's per-broker `rxbytes` show every record came from the
//! follower and almost nothing from the leader, and so do the Java consumer's own per-node
//! counters (tests/clients/java/RackConsumer.java), with the kcli broker's `BytesOutPerSec`
//! (every record sent as a follower, none as the leader). Then the kcli follower is killed
//! while both consumers of the Kafka-led topic wait at its end: they read what follows from
//! the Kafka leader, nothing lost.

use std::time::{Duration, Instant};

use rdkafka::consumer::Consumer;

use super::create_topic;
use crate::cluster::follower_fetch::{
    JavaRead, OVERHEAD, PAYLOAD, RACK_AWARE, RECORDS, bytes_out, java_consumer, poll_nothing,
    produce, rack_consumer, read_up_to, wait_rx,
};
use crate::serve_support::free_port;
use crate::support::cluster::wait_until;
use crate::support::mixed_cluster::MixedCluster;

/// The Java consumer reads every record of `topic` in `rack`; by its own counters, at least
/// the records' bytes from broker `follower` and next to nothing from `leader`.
fn java_reads_from_follower(cluster: &MixedCluster, topic: &str, rack: &str, follower: i32) {
    let scratch = tempfile::tempdir().unwrap();
    let java = java_consumer(
        &cluster.bootstrap(),
        topic,
        rack,
        &format!("{topic}-java"),
        (RECORDS, RECORDS),
        scratch.path(),
    );
    let leader = 3 - follower;
    assert!(
        JavaRead::from(&java.end, follower) >= PAYLOAD,
        "{}",
        java.end
    );
    assert!(JavaRead::from(&java.end, leader) < OVERHEAD, "{}", java.end);
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
    java_reads_from_follower(&cluster, "kcli-led", "rack-1", 1);
    assert_eq!(
        bytes_out(metrics, "kcli-led"),
        0.0,
        "the kcli leader sent none of its records to either consumer"
    );

    // Kafka leads; the consumers in rack-2 read from kcli's follower.
    let scratch = tempfile::tempdir().unwrap();
    std::thread::scope(|s| {
        let java = s.spawn(|| {
            java_consumer(
                &bootstrap,
                "kafka-led",
                "rack-2",
                "kafka-led-java",
                (RECORDS, 2 * RECORDS),
                scratch.path(),
            )
        });
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
        // Both consumers have read the first records from kcli's follower.
        wait_until(
            "kcli's follower sent both consumers the records",
            Duration::from_secs(60),
            || (bytes_out(metrics, "kafka-led") >= 2.0 * PAYLOAD as f64).then_some(()),
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
        // The Java consumer by its own counters: the first records from kcli's follower, the
        // rest from the Kafka leader.
        let java = java.join().unwrap();
        let from_leader = JavaRead::from(&java.first, 1);
        assert!(JavaRead::from(&java.first, 2) >= PAYLOAD, "{}", java.first);
        assert!(from_leader < OVERHEAD, "{}", java.first);
        assert!(
            JavaRead::from(&java.end, 1) >= from_leader + PAYLOAD,
            "{}",
            java.end
        );
    });
}
