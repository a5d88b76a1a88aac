//! No acknowledged record is lost through repeated kill -9: three brokers, an RF-3 topic with
//! `min.insync.replicas=2`, an idempotent acks=-1 producer with librdkafka's default retries;
//! while it sends, the leader of a partition and then the controller are killed, alternately,
//! each restarted once its registration has left ZooKeeper and back in every ISR before the
//! next kill. Afterwards every acknowledged record is consumed, in order within its partition
//! and once, and the replicas' logs are identical batch for batch (headers and CRCs included).
//!
//! Five faults in CI; `KCLI_SOAK_FAULTS=100` runs the soak (outside CI).

use std::time::Duration;

use super::{create_topic, wait_for_identical_replica_logs};
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata, wait_until};
use crate::support::produce_load::{ProduceLoad, assert_every_acknowledged_record_consumed};

const TOPIC: &str = "durable";
const PARTITIONS: i32 = 3;

/// The broker ids in every ISR of the topic, from ZooKeeper.
fn in_every_isr(cluster: &TestCluster, id: i32) -> bool {
    (0..PARTITIONS).all(|p| cluster.isr(TOPIC, p).is_some_and(|isr| isr.contains(&id)))
}

#[test]
fn acknowledged_records_survive_alternating_kills_of_leaders_and_the_controller() {
    let faults: usize = std::env::var("KCLI_SOAK_FAULTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    // A dead broker the new controller still finds in an ISR (the old controller, say) leaves it
    // when its leaders' lag check drops it; kept short so acks=-1 waits seconds, not 30.
    let mut cluster = TestCluster::start(
        3,
        &[
            ("min.insync.replicas", "2"),
            ("replica.lag.time.max.ms", "5000"),
        ],
    );
    create_topic(&cluster, TOPIC, PARTITIONS, 3);

    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, PARTITIONS);
    let mut victims = Vec::new();
    for fault in 0..faults {
        load.wait_for_more_acks(200, Duration::from_secs(60));
        let controller = wait_until("a controller", Duration::from_secs(30), || {
            cluster.controller_id()
        });
        let victim = if fault % 2 == 0 {
            // A partition leader that is not the controller.
            let m = metadata(cluster.port(controller)).unwrap();
            m.topics[TOPIC]
                .1
                .values()
                .map(|p| p.leader)
                .find(|l| *l != controller && *l >= 0)
                .unwrap_or(controller)
        } else {
            controller
        };
        victims.push(victim);
        cluster.broker(victim).kill9();
        cluster.restart_once_deregistered(victim, SESSION_TIMEOUT + Duration::from_secs(10));
        wait_until(
            "the victim back in every ISR",
            Duration::from_secs(60),
            || in_every_isr(&cluster, victim).then_some(()),
        );
    }
    let acked = load.finish(|| cluster.logs());
    assert!(victims.len() == faults, "{victims:?}");
    let total: usize = acked.values().map(Vec::len).sum();
    eprintln!("{total} records acknowledged through kill -9 of brokers {victims:?}");
    assert_every_acknowledged_record_consumed(&cluster.bootstrap(), TOPIC, &acked, || {
        cluster.logs() + &cluster.producer_sequence_breaks(TOPIC, PARTITIONS)
    });
    // Once every replica's log end is the high watermark, the logs are one log.
    for p in 0..PARTITIONS {
        wait_for_identical_replica_logs(&cluster, TOPIC, p, &[1, 2, 3]);
    }
}
