//! Mixed network faults back to back on one cluster, kcli's or Kafka 3.9.1's, under one
//! idempotent acks=all load: a leader isolated, any broker isolated, the controller cut from
//! ZooKeeper, every broker cut from ZooKeeper, and a bridge partition, drawn from a seeded
//! generator and each held 2 to 10 s (within the session or past it) before it heals and every
//! ISR is whole again. At the end every acknowledged record is read back at its offset, once,
//! and the replicas' logs are identical; per fault kind the load's longest gap between
//! acknowledgements (from the fault until the ISRs are whole again) is printed, median and
//! worst, for docs/faults.md.
//!
//! Three faults on kcli in CI. The soak: `KCLI_PARTITION_SOAK=100` (faults) with
//! `KCLI_PARTITION_SOAK_BROKERS=kcli|kafka` and optionally `KCLI_PARTITION_SOAK_SEED`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{create_topic_assigned, wait_for_identical_replica_logs};
use crate::support::cluster::TestCluster;
use crate::support::netns::Peer;
use crate::support::produce_load::{ProduceLoad, assert_every_acknowledged_record_consumed};
use crate::support::zk_ensemble::ClusterZk;

const TOPIC: &str = "soak";
const PARTITIONS: i32 = 3;
const RECOVERY: Duration = Duration::from_secs(90);
const SETTINGS: &[(&str, &str)] = &[
    ("min.insync.replicas", "2"),
    ("replica.lag.time.max.ms", "3000"),
];

/// The kinds of fault, as reported.
const KINDS: [&str; 5] = [
    "leader isolated",
    "any broker isolated",
    "controller cut from ZooKeeper",
    "every broker cut from ZooKeeper",
    "bridge partition",
];

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The leader of each partition of [`TOPIC`] in ZooKeeper.
fn leaders(cluster: &TestCluster) -> Vec<i32> {
    (0..PARTITIONS)
        .filter_map(|p| cluster.leader(TOPIC, p))
        .collect()
}

/// Applies fault `kind`; the hosts it cut, for the record.
fn apply(cluster: &TestCluster, kind: usize, rng: &mut StdRng) -> String {
    let network = cluster.network();
    let zk = match &cluster.zk {
        ClusterZk::Standalone(server) => server.port(),
        ClusterZk::Ensemble(_) => unreachable!("one ZooKeeper server"),
    };
    let host = |id: i32| usize::try_from(id).unwrap();
    let controller = cluster.controller_id().unwrap_or(1);
    let isolate = |id: i32| {
        network.cut(host(id), Peer::TestPort(zk));
        for other in (1..=3).filter(|o| *o != id) {
            network.cut(host(id), Peer::Host(host(other)));
        }
    };
    match kind {
        0 => {
            let led = leaders(cluster);
            let id = led[rng.random_range(0..led.len())];
            isolate(id);
            format!("leader {id}")
        }
        1 => {
            let id = rng.random_range(1..=3);
            isolate(id);
            format!("broker {id}")
        }
        2 => {
            network.cut(host(controller), Peer::TestPort(zk));
            format!("controller {controller}")
        }
        3 => {
            for id in 1..=3 {
                network.cut(host(id), Peer::TestPort(zk));
            }
            "all".to_string()
        }
        _ => {
            let others: Vec<i32> = (1..=3).filter(|id| *id != controller).collect();
            network.cut(host(others[0]), Peer::Host(host(others[1])));
            format!("{} | {}", others[0], others[1])
        }
    }
}

fn isrs_whole(cluster: &TestCluster) -> bool {
    (0..PARTITIONS).all(|p| cluster.isr(TOPIC, p).is_some_and(|isr| isr.len() == 3))
        && (1..=3).all(|id| cluster.get(&format!("/brokers/ids/{id}")).is_some())
}

fn soak(cluster: TestCluster, faults: usize, seed: u64) {
    create_topic_assigned(&cluster, TOPIC, &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]]);
    let kind_of_brokers = if cluster.is_kafka() {
        "Kafka 3.9.1"
    } else {
        "kcli"
    };
    eprintln!("soak on {kind_of_brokers}: {faults} faults, seed {seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);
    let mut gaps: BTreeMap<usize, Vec<Duration>> = BTreeMap::new();
    let started = Instant::now();
    for n in 0..faults {
        let kind = rng.random_range(0..KINDS.len());
        let hold = Duration::from_millis(rng.random_range(2_000..10_000));
        let at = Instant::now();
        let what = apply(&cluster, kind, &mut rng);
        std::thread::sleep(hold);
        cluster.network().heal_all();
        let healed = Instant::now();
        while !isrs_whole(&cluster) {
            assert!(
                healed.elapsed() < RECOVERY,
                "fault {n}: every ISR not whole, or a broker not registered, {RECOVERY:?} after \
                 healing {} ({what})\n{}",
                KINDS[kind],
                cluster.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        load.wait_for_more_acks(100, RECOVERY);
        let gap = load.longest_ack_gap(at, Instant::now());
        eprintln!(
            "fault {n}: {} ({what}) held {:.1} s: longest gap between acks {:.1} s",
            KINDS[kind],
            hold.as_secs_f64(),
            gap.as_secs_f64()
        );
        gaps.entry(kind).or_default().push(gap);
    }
    let acked = load.finish(|| cluster.logs());
    let total: usize = acked.values().map(Vec::len).sum();
    assert_every_acknowledged_record_consumed(&cluster.bootstrap(), TOPIC, &acked, || {
        cluster.logs()
    });
    for p in 0..PARTITIONS {
        wait_for_identical_replica_logs(&cluster, TOPIC, p, &[1, 2, 3]);
    }
    eprintln!(
        "soak on {kind_of_brokers}: {faults} faults in {:.0} s, {total} records acknowledged, none lost",
        started.elapsed().as_secs_f64()
    );
    for (kind, mut list) in gaps {
        list.sort();
        eprintln!(
            "soak on {kind_of_brokers}: {}: {} faults, longest gap between acks median {:.1} s, worst {:.1} s",
            KINDS[kind],
            list.len(),
            list[list.len() / 2].as_secs_f64(),
            list[list.len() - 1].as_secs_f64()
        );
    }
}

#[test]
fn mixed_network_faults_lose_nothing() {
    let faults = env("KCLI_PARTITION_SOAK").unwrap_or(3);
    let seed = env("KCLI_PARTITION_SOAK_SEED").unwrap_or(7);
    let cluster = match std::env::var("KCLI_PARTITION_SOAK_BROKERS").as_deref() {
        Ok("kafka") => TestCluster::start_partitionable_kafka(3, SETTINGS),
        Ok("kcli") | Err(_) => TestCluster::start_partitionable(3, SETTINGS),
        Ok(other) => panic!("KCLI_PARTITION_SOAK_BROKERS={other}: kcli or kafka"),
    };
    soak(cluster, faults, seed);
}
