//! Slow links: one broker's links to the other brokers delayed 3 s each way, past
//! `replica.socket.timeout.ms` (2 s here). The brokers run in network namespaces of their own;
//! since this kernel has no `sch_netem`, every connection between two brokers goes through a
//! relay from the start (`support::delay_relay`), and the fault delays the slow broker's. Its
//! links to ZooKeeper and to clients stay fast.
//!
//! As in Kafka, `replica.socket.timeout.ms` bounds only a follower's connecting; a fetch waits
//! for its answer up to `request.timeout.ms` (30 s). So a follower behind the slow link still
//! replicates, one 6 s round trip at a time: it falls out of sync, leaves the ISRs, and may come
//! back into them whenever its log end reaches the high watermark, then leave again. The load and
//! the probe are those of [`super::partitions`] (RF 3, `min.insync.replicas=2`, an idempotent
//! acks=all producer), and so are the checks after healing: every acknowledged record read back
//! at its offset, once, the replicas' logs identical, every ISR whole again. The cases:
//! - a follower behind a slow link leaves each of the load's ISRs, and writes go on;
//! - a leader behind a slow link: its partition acknowledges no acks=all write within a second
//!   (its followers' fetches take the link's round trip); it leaves each of the other
//!   partitions' ISRs, and they stay writable.
//!
//! Each runs on kcli's brokers and on Kafka 3.9.1's with the same schedule and checks, and
//! prints its availability figures for docs/faults.md.

use std::time::{Duration, Instant};

use super::partitions::{
    LOAD, ONE_EACH, PARTITIONS, PROBE, RECOVERY, SETTINGS, Start, THREE_FOLLOWS, heal_and_check,
    host, off_phase, produce_acks_all_to, start,
};
use crate::support::availability::time_until_writable_on;
use crate::support::cluster::TestCluster;
use crate::support::produce_load::ProduceLoad;

/// `replica.socket.timeout.ms`: Kafka's floor is `replica.fetch.wait.max.ms` (500 ms).
const SOCKET_TIMEOUT: &str = "2000";
/// Each way, so a fetch's round trip is twice this, three times the socket timeout.
const DELAY: Duration = Duration::from_secs(3);
/// How long a fault lasts, whatever its checks took: the healing falls at the same point for
/// both kinds of broker, not earlier for the one quicker to drop the slow broker from the ISRs,
/// which would catch more of the slow broker's own ISR changes still on their way through the
/// slow link and so measure a slower recovery.
const HOLD: Duration = Duration::from_secs(12);

/// Keeps the fault until `HOLD` after `fault`, the load going on.
fn hold(load: &ProduceLoad, fault: Instant) {
    while fault.elapsed() < HOLD {
        load.wait_for_more_acks(50, RECOVERY);
    }
}

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
            fn a_follower_behind_a_slow_link_leaves_each_isr_and_writes_go_on() {
                super::slow_follower($start);
            }

            #[test]
            fn a_leader_behind_a_slow_link_acknowledges_nothing_within_a_second_and_the_others_write_on() {
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

/// The probe's time from `fault` until `writable` partitions of [`PROBE`] take acks=all
/// writes, printing beside it when `slow` had been out of each of the [`LOAD`] ISRs it must
/// leave (all but `except`'s) at least once, as ZooKeeper showed them, polled every 50 ms: the
/// probe's writes each wait up to their 1 s timeout, so it is the coarser figure. (The probe
/// topic is idle until the probe writes, and a follower at an idle leader's log end stays in
/// sync: only the load's ISRs show when the lag was noticed.) Fails the test when some ISR kept
/// `slow` for [`RECOVERY`].
fn probe_timing_the_isr_changes(
    cluster: &TestCluster,
    slow: i32,
    except: &[i32],
    writable: &[i32],
    fault: Instant,
) -> Duration {
    let (after_fault, isr_changes) = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut left: Vec<i32> = Vec::new();
            let must_leave = (0..PARTITIONS).filter(|p| !except.contains(p)).count();
            while fault.elapsed() < RECOVERY {
                for p in 0..PARTITIONS {
                    if !except.contains(&p)
                        && !left.contains(&p)
                        && cluster.isr(LOAD, p).is_some_and(|isr| !isr.contains(&slow))
                    {
                        left.push(p);
                    }
                }
                if left.len() == must_leave {
                    return Some(fault.elapsed());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            None
        });
        let after_fault = time_until_writable_on(cluster, PROBE, writable, fault, RECOVERY);
        (after_fault, watcher.join().unwrap())
    });
    let Some(isr_changes) = isr_changes else {
        panic!(
            "broker {slow} stayed in a load ISR for {RECOVERY:?}: {:?}\n{}",
            (0..PARTITIONS)
                .map(|p| cluster.isr(LOAD, p))
                .collect::<Vec<_>>(),
            cluster.logs()
        );
    };
    let kind = cluster.kind();
    eprintln!(
        "availability ({kind}): broker {slow} out of each of the load's ISRs by {:.2} s after \
         the fault",
        isr_changes.as_secs_f64()
    );
    after_fault
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
    let after_fault = probe_timing_the_isr_changes(&cluster, follower, &[], &all, fault);
    load.wait_for_more_acks(200, RECOVERY);
    hold(&load, fault);
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
    let after_fault =
        probe_timing_the_isr_changes(&cluster, slow, &[its_partition], &others, fault);
    // Its followers' fetches take the link's round trip, 6 s, and its high watermark waits for
    // them (or, with them out of its ISR, for min.insync.replicas): no acks=all write to it is
    // acknowledged within a second.
    let code = produce_acks_all_to(&cluster, slow, PROBE, its_partition);
    assert_ne!(
        code, 0,
        "a leader behind a slow link acknowledged acks=all within 1 s"
    );
    load.wait_for_more_acks(200, RECOVERY);
    hold(&load, fault);
    heal_and_check(
        &cluster,
        load,
        ("leader behind a slow link (the others' partitions)", fault),
        after_fault,
    );
}
