//! Slow links: one broker's links to the other brokers delayed, each way, past
//! `replica.socket.timeout.ms`, so that no fetch over them is answered in time (the brokers in
//! network namespaces of their own; since this kernel has no `sch_netem`, every connection
//! between two brokers goes through a relay from the start, `support::delay_relay`, and the
//! fault delays the slow broker's). Its links to ZooKeeper and to clients stay fast. The load and the probe are those of [`super::partitions`]
//! (RF 3, `min.insync.replicas=2`, an idempotent acks=all producer), and so are the checks after
//! healing: every acknowledged record read back at its offset, once, the replicas' logs
//! identical, every ISR whole again. The cases:
//! - a follower behind a slow link leaves every ISR, and writes go on;
//! - a leader behind a slow link: its followers' fetches time out, so its partition
//!   acknowledges no acks=all write until the link heals; it leaves the other partitions'
//!   ISRs, and they stay writable.
//!
//! Each runs on kcli's brokers and on Kafka 3.9.1's with the same schedule and checks.

use std::time::{Duration, Instant};

use super::partitions::{
    LOAD, ONE_EACH, PARTITIONS, PROBE, RECOVERY, SETTINGS, Start, THREE_FOLLOWS, heal_and_check,
    host, off_phase, produce_acks_all_to, start,
};
use crate::support::availability::time_until_writable_on;
use crate::support::cluster::{TestCluster, wait_until};
use crate::support::produce_load::ProduceLoad;

/// `replica.socket.timeout.ms`: Kafka's floor is `replica.fetch.wait.max.ms` (500 ms).
const SOCKET_TIMEOUT: &str = "2000";
/// Each way, so a fetch's round trip is twice this, three times the socket timeout.
const DELAY: Duration = Duration::from_secs(3);

fn settings() -> Vec<(&'static str, &'static str)> {
    let mut all = SETTINGS.to_vec();
    all.push(("replica.socket.timeout.ms", SOCKET_TIMEOUT));
    all
}

fn kcli_brokers() -> TestCluster {
    TestCluster::start_slowable(3, &settings())
}

fn kafka_brokers() -> TestCluster {
    TestCluster::start_slowable_kafka(3, &settings())
}

macro_rules! cases {
    ($kind:ident, $start:expr) => {
        mod $kind {
            #[test]
            fn a_follower_behind_a_slow_link_leaves_the_isrs_and_writes_go_on() {
                super::slow_follower($start);
            }

            #[test]
            fn a_leader_behind_a_slow_link_acknowledges_nothing_and_the_others_write_on() {
                super::slow_leader($start);
            }
        }
    };
}

cases!(kcli, super::kcli_brokers);
cases!(kafka, super::kafka_brokers);

/// Delays everything between `slow` and the other brokers by [`DELAY`] each way.
fn slow_down(cluster: &TestCluster, slow: i32) {
    cluster.network().slow_down(host(slow), DELAY);
}

/// Whether `broker` is in no ISR of either topic but those of `except` (partitions).
fn out_of_isrs(cluster: &TestCluster, broker: i32, except: &[i32]) -> bool {
    [LOAD, PROBE].iter().all(|t| {
        (0..PARTITIONS)
            .filter(|p| !except.contains(p))
            .all(|p| cluster.isr(t, p).is_some_and(|isr| !isr.contains(&broker)))
    })
}

fn slow_follower(brokers: Start) {
    let cluster = start(brokers, THREE_FOLLOWS);
    let follower = 3;
    let load = ProduceLoad::start(&cluster.bootstrap(), LOAD, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);

    off_phase();
    let fault = Instant::now();
    slow_down(&cluster, follower);
    let all: Vec<i32> = (0..PARTITIONS).collect();
    let after_fault = time_until_writable_on(&cluster, PROBE, &all, fault, RECOVERY);
    wait_until("the slow follower out of every ISR", RECOVERY, || {
        out_of_isrs(&cluster, follower, &[]).then_some(())
    });
    load.wait_for_more_acks(200, RECOVERY);
    heal_and_check(
        &cluster,
        load,
        ("follower behind a slow link", fault),
        after_fault,
    );
}

fn slow_leader(brokers: Start) {
    let cluster = start(brokers, ONE_EACH);
    let controller = cluster.controller_id().unwrap();
    // Broker p + 1 leads partition p; slow down a leader that is not the controller, so the
    // ISR changes reach ZooKeeper without waiting on the slow link's round trips.
    let slow = (1..=3).find(|id| *id != controller).unwrap();
    let its_partition = slow - 1;
    let others: Vec<i32> = (0..PARTITIONS).filter(|p| *p != its_partition).collect();
    let load = ProduceLoad::start(&cluster.bootstrap(), LOAD, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);

    off_phase();
    let fault = Instant::now();
    slow_down(&cluster, slow);
    let after_fault = time_until_writable_on(&cluster, PROBE, &others, fault, RECOVERY);
    wait_until("the slow leader out of the others' ISRs", RECOVERY, || {
        out_of_isrs(&cluster, slow, &[its_partition]).then_some(())
    });
    // Its followers' fetches reach it but their answers do not come back in time, so their
    // fetch offsets stay and its high watermark with them. It takes them back into its ISR
    // whenever they reach the high watermark (Kafka's `isFollowerInSync`) and drops them again
    // after the lag time, so its ISR flaps; either way no acks=all write is acknowledged.
    let code = produce_acks_all_to(&cluster, slow, PROBE, its_partition);
    assert_ne!(
        code, 0,
        "a leader whose followers cannot fetch acknowledged acks=all"
    );
    load.wait_for_more_acks(200, RECOVERY);
    heal_and_check(
        &cluster,
        load,
        ("leader behind a slow link (the others' partitions)", fault),
        after_fault,
    );
}
