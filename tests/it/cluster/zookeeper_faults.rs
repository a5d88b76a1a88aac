//! ZooKeeper itself failing under a cluster: three brokers on a three-server ensemble
//! (`support::zk_ensemble`), an RF-3 topic with `min.insync.replicas=2`, and an idempotent
//! acks=all producer that runs through every fault. The ensemble's leader killed -9, a server
//! paused past the brokers' session timeout, and quorum lost for longer than a session and then
//! restored. Brokers move to the servers that serve; ZooKeeper keeps their sessions through a
//! leader change, a paused server and a quorum lost past the session (a new leader gives every
//! session a fresh timeout), and so do the brokers: their registrations keep their czxids, so
//! their broker epochs, the controller stays, and its watches are armed again (a topic created
//! afterwards gets its leaders). Writes go on throughout: while the ensemble has no quorum too,
//! since no ISR has to change. Afterwards every acknowledged record is read back at
//! its offset, once, and the replicas' logs are identical. Each case runs on kcli's brokers
//! ([`kcli`]) and on Kafka 3.9.1's ([`kafka`]) with the same schedule and checks.

use std::time::{Duration, Instant};

use super::{create_topic, wait_for_identical_replica_logs};
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata_at, wait_until};
use crate::support::produce_load::{ProduceLoad, assert_every_acknowledged_record_consumed};
use crate::support::zk_ensemble::ClusterZk;

const TOPIC: &str = "zkf";
const PARTITIONS: i32 = 3;

const SETTINGS: &[(&str, &str)] = &[
    ("min.insync.replicas", "2"),
    ("replica.lag.time.max.ms", "5000"),
];

/// Three kcli brokers or three Kafka brokers on a three-server ensemble.
type Start = fn() -> TestCluster;

fn kcli_brokers() -> TestCluster {
    TestCluster::start_on_ensemble(3, SETTINGS)
}

fn kafka_brokers() -> TestCluster {
    TestCluster::start_kafka_on_ensemble(3, SETTINGS)
}

/// The cases, once per kind of broker.
macro_rules! cases {
    ($kind:ident, $start:expr) => {
        mod $kind {
            #[test]
            fn the_ensemble_leader_killed_and_a_server_paused_keep_sessions_and_writes() {
                super::leader_killed_and_server_paused($start);
            }

            #[test]
            fn quorum_lost_past_the_session_and_restored_loses_nothing_and_writes_go_on() {
                super::quorum_lost_past_the_session($start);
            }
        }
    };
}

cases!(kcli, super::kcli_brokers);
cases!(kafka, super::kafka_brokers);

fn start(brokers: Start) -> TestCluster {
    let cluster = brokers();
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    cluster
}

/// The brokers' logs and the tail of each ZooKeeper server's, for failure messages.
fn all_logs(cluster: &TestCluster) -> String {
    let zk = match &cluster.zk {
        ClusterZk::Ensemble(ensemble) => ensemble.logs(),
        ClusterZk::Standalone(_) => String::new(),
    };
    cluster.logs() + &zk
}

/// Prints the load's longest gap between acknowledgements since `faults` began (for
/// docs/faults.md), stops it, checks every acknowledged record, and that the replicas hold one
/// log.
fn finish(cluster: &TestCluster, load: ProduceLoad, what: &str, faults: Instant) {
    let gap = load.longest_ack_gap(faults, Instant::now());
    let kind = cluster.kind();
    eprintln!(
        "availability ({kind}): {what}: longest gap between acks {:.1} s",
        gap.as_secs_f64()
    );
    let acked = load.finish(|| all_logs(cluster));
    let total: usize = acked.values().map(Vec::len).sum();
    eprintln!("{total} records acknowledged through the ZooKeeper faults");
    assert_every_acknowledged_record_consumed(&cluster.bootstrap(), TOPIC, &acked, || {
        all_logs(cluster)
    });
    for p in 0..PARTITIONS {
        wait_for_identical_replica_logs(cluster, TOPIC, p, &[1, 2, 3]);
    }
}

fn leader_killed_and_server_paused(brokers: Start) {
    let mut cluster = start(brokers);
    let before = cluster.registrations(3);
    assert_eq!(before.len(), 3);
    let controller_epoch = cluster.controller_epoch();
    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, PARTITIONS);
    load.wait_for_more_acks(200, Duration::from_secs(30));

    // The ensemble's leader killed: the other two elect a leader; sessions live on.
    let faults = Instant::now();
    let old_leader = cluster.ensemble().leader();
    cluster.ensemble().kill9(old_leader);
    let new_leader = cluster.ensemble().leader();
    assert_ne!(new_leader, old_leader);
    load.wait_for_more_acks(200, Duration::from_secs(30));
    cluster.ensemble().restart(old_leader);
    cluster.ensemble().wait_serving(&[1, 2, 3]);

    // A follower paused past the brokers' session: those connected to it move to the others
    // within the session, and keep it.
    let leader = cluster.ensemble().leader();
    let paused = (1..=3).find(|id| *id != leader).unwrap();
    cluster.ensemble().pause(paused);
    let started = Instant::now();
    while started.elapsed() < SESSION_TIMEOUT + Duration::from_secs(2) {
        load.wait_for_more_acks(50, Duration::from_secs(30));
    }
    cluster.ensemble().resume(paused);
    cluster.ensemble().wait_serving(&[1, 2, 3]);
    load.wait_for_more_acks(200, Duration::from_secs(30));

    assert_eq!(cluster.registrations(3), before, "every session kept");
    assert_eq!(
        cluster.controller_epoch(),
        controller_epoch,
        "no new controller"
    );
    finish(
        &cluster,
        load,
        "the ensemble's leader killed, then a server paused",
        faults,
    );
}

fn quorum_lost_past_the_session(brokers: Start) {
    let mut cluster = start(brokers);
    let before = cluster.registrations(3);
    let controller_epoch = cluster.controller_epoch();
    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, PARTITIONS);
    load.wait_for_more_acks(200, Duration::from_secs(30));

    // Two of three down: no quorum. The brokers keep serving what needs no ZooKeeper write.
    let faults = Instant::now();
    let leader = cluster.ensemble().leader();
    let down: Vec<usize> = (1..=3).filter(|id| *id != leader).collect();
    for id in &down {
        cluster.ensemble().kill9(*id);
    }
    wait_until(
        "the ensemble without quorum",
        Duration::from_secs(10),
        || (!cluster.ensemble().serving(leader)).then_some(()),
    );
    let lost = Instant::now();
    while lost.elapsed() < SESSION_TIMEOUT + Duration::from_secs(4) {
        load.wait_for_more_acks(50, Duration::from_secs(10));
    }

    for id in &down {
        cluster.ensemble().restart(*id);
    }
    cluster.ensemble().wait_serving(&[1, 2, 3]);
    // ZooKeeper kept every session (a new leader gives each a fresh timeout), and so do the
    // brokers: the same registrations, the same controller, every partition led with its whole
    // ISR.
    let all = (1..=3).collect();
    wait_until(
        "every broker registered, a controller, every ISR whole",
        SESSION_TIMEOUT + Duration::from_secs(30),
        || {
            let whole =
                (0..PARTITIONS).all(|p| cluster.isr(TOPIC, p).is_some_and(|isr| isr.len() == 3));
            (cluster.registrations(3).len() == 3 && cluster.controller_id().is_some() && whole)
                .then_some(())
        },
    );
    for id in 1..=3 {
        wait_until(
            "every broker's Metadata lists every broker and leader",
            Duration::from_secs(30),
            || {
                metadata_at(cluster.addr(id))
                    .filter(|m| m.broker_ids() == all && m.led_partitions(TOPIC, 3, &all).is_some())
            },
        );
    }
    load.wait_for_more_acks(300, Duration::from_secs(30));
    assert_eq!(cluster.registrations(3), before, "every session kept");
    assert_eq!(
        cluster.controller_epoch(),
        controller_epoch,
        "no new controller"
    );
    // The controller's watches live on: a topic created now gets its leaders.
    create_topic(&cluster, "after", 3, 3);
    finish(&cluster, load, "quorum lost past the session", faults);
}
