//! Real network partitions (`support::netns`: each broker in a namespace of its own, links cut
//! with nftables, every cut probed before the test relies on it). Three brokers, an RF-3 load
//! topic with `min.insync.replicas=2` under an idempotent acks=all producer, and a probe topic
//! of the same shape that measures availability: the time from each fault, and from its
//! healing, until acks=all writes succeed on every partition. The cases:
//! - a leader cut off from ZooKeeper and from the other brokers while clients still reach it:
//!   it acknowledges no acks=all write (its followers fetch nothing), and the controller gives
//!   its partitions to a new leader once its session is gone;
//! - a follower cut off from everything: it leaves the ISRs, writes go on;
//! - the controller cut off from ZooKeeper only: another broker takes over;
//! - every broker cut off from ZooKeeper for less than the session (nothing changes: same
//!   registrations, same controller), then for more (each registers again after healing);
//! - a bridge partition: two followers that cannot see each other, both seeing the controller.
//!
//! After each: every acknowledged record read back at its offset, once, the replicas' logs
//! identical, and every ISR whole again. Each case runs on kcli's brokers ([`kcli`]) and on
//! Kafka 3.9.1's ([`kafka`]) with the same schedule and checks, and prints its availability
//! figures for docs/faults.md.

use std::time::{Duration, Instant};

use super::{create_topic_assigned, wait_for_identical_replica_logs};
use crate::serve_support::{KafkaConn, batch_of, produce_request, produce_result};
use crate::support::availability::time_until_writable;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata_at, wait_until};
use crate::support::netns::Peer;
use crate::support::produce_load::{ProduceLoad, assert_every_acknowledged_record_consumed};
use crate::support::zk_ensemble::ClusterZk;

pub(super) const LOAD: &str = "load";
pub(super) const PROBE: &str = "probe";
pub(super) const PARTITIONS: i32 = 3;

/// Long enough for a session to go, leaders to be elected and clients to find them.
pub(super) const RECOVERY: Duration = Duration::from_secs(60);

/// Every broker leads one partition, its preferred replica.
pub(super) const ONE_EACH: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];
/// Broker 3 follows every partition and leads none.
pub(super) const THREE_FOLLOWS: &[&[i32]] = &[&[1, 2, 3], &[2, 1, 3], &[1, 2, 3]];

/// The settings of both kinds of broker.
pub(super) const SETTINGS: &[(&str, &str)] = &[
    ("min.insync.replicas", "2"),
    ("replica.lag.time.max.ms", "3000"),
];

/// A cluster of three kcli brokers or three Kafka brokers.
pub(super) type Start = fn() -> TestCluster;

fn kcli_brokers() -> TestCluster {
    TestCluster::start_partitionable(3, SETTINGS)
}

fn kafka_brokers() -> TestCluster {
    TestCluster::start_partitionable_kafka(3, SETTINGS)
}

pub(super) fn start(brokers: Start, assignment: &[&[i32]]) -> TestCluster {
    let cluster = brokers();
    create_topic_assigned(&cluster, LOAD, assignment);
    create_topic_assigned(&cluster, PROBE, assignment);
    cluster
}

/// A pause of up to one ZooKeeper ping interval (a third of the session) before a fault. How
/// soon a cut-off broker's session ends depends on when it last pinged, and each kind of broker
/// pings on its own phase from startup: without this the figures of one kind would always fall
/// on the same side of the interval.
pub(super) fn off_phase() {
    use rand::Rng;
    let max = u64::try_from((SESSION_TIMEOUT / 3).as_millis()).unwrap();
    std::thread::sleep(Duration::from_millis(rand::rng().random_range(0..max)));
}

/// The cases, once per kind of broker.
macro_rules! cases {
    ($kind:ident, $start:expr) => {
        mod $kind {
            #[test]
            fn an_isolated_leader_acknowledges_nothing_and_loses_its_partitions() {
                super::isolated_leader($start);
            }

            #[test]
            fn a_follower_cut_off_leaves_the_isrs_and_writes_go_on() {
                super::isolated_follower($start);
            }

            #[test]
            fn the_controller_cut_off_from_zookeeper_is_replaced() {
                super::controller_cut_from_zookeeper($start);
            }

            #[test]
            fn every_broker_cut_off_from_zookeeper_within_the_session_then_past_it() {
                super::every_broker_cut_from_zookeeper($start);
            }

            #[test]
            fn a_bridge_partition_between_two_followers_keeps_every_partition_writable() {
                super::bridge_partition($start);
            }
        }
    };
}

cases!(kcli, super::kcli_brokers);
cases!(kafka, super::kafka_brokers);

fn zk_port(cluster: &TestCluster) -> u16 {
    match &cluster.zk {
        ClusterZk::Standalone(server) => server.port(),
        ClusterZk::Ensemble(_) => panic!("a partitionable cluster has one ZooKeeper server"),
    }
}

pub(super) fn host(id: i32) -> usize {
    usize::try_from(id).unwrap()
}

/// One cut of a fault.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// A broker from ZooKeeper.
    FromZooKeeper(i32),
    /// Two brokers from each other.
    Between(i32, i32),
}

/// Makes every cut of a fault, then probes each: the fault starts at once, and is known to
/// drop what it should before the test relies on it.
fn make_cuts(cluster: &TestCluster, cuts: &[Cut]) {
    let network = cluster.network();
    let zk = zk_port(cluster);
    for c in cuts {
        match *c {
            Cut::FromZooKeeper(id) => network.cut(host(id), Peer::TestPort(zk)),
            Cut::Between(a, b) => network.cut(host(a), Peer::Host(host(b))),
        }
    }
    for c in cuts {
        let (id, addr, port) = match *c {
            Cut::FromZooKeeper(id) => (id, network.test_addr(), zk),
            Cut::Between(a, b) => (a, network.addr(host(b)), cluster.addr(b).port()),
        };
        assert!(
            !network.connects(host(id), addr, port),
            "broker {id} still reaches {addr}:{port} through {c:?}"
        );
    }
}

/// The brokers in every ISR of both topics, from ZooKeeper.
fn isrs_whole(cluster: &TestCluster) -> bool {
    [LOAD, PROBE]
        .iter()
        .all(|t| (0..PARTITIONS).all(|p| cluster.isr(t, p).is_some_and(|isr| isr.len() == 3)))
}

/// Heals every cut of a fault made at `fault`, waits for every ISR to be whole, stops the load
/// and checks it; prints what the fault cost: the probe's time until every partition took an
/// acks=all write after the fault (`after_fault`, measured by the test) and after healing, and
/// the load's longest gap between acknowledgements on any partition in each period.
pub(super) fn heal_and_check(
    cluster: &TestCluster,
    load: ProduceLoad,
    fault: (&str, Instant),
    after_fault: Duration,
) {
    let (what, at) = fault;
    let healed = Instant::now();
    cluster.network().heal_all();
    let after_heal = time_until_writable(cluster, PROBE, PARTITIONS, healed, RECOVERY);
    wait_until("every ISR whole again", RECOVERY, || {
        isrs_whole(cluster).then_some(())
    });
    load.wait_for_more_acks(100, RECOVERY);
    let gap_during = load.longest_ack_gap(at, healed);
    let gap_after = load.longest_ack_gap(healed, Instant::now());
    let kind = cluster.kind();
    eprintln!(
        "availability ({kind}): {what}: probe writable {:.1} s after the fault and {:.1} s after \
         healing; longest gap between acks {:.1} s during the fault, {:.1} s after healing",
        after_fault.as_secs_f64(),
        after_heal.as_secs_f64(),
        gap_during.as_secs_f64(),
        gap_after.as_secs_f64()
    );
    let acked = load.finish(|| cluster.logs());
    assert_every_acknowledged_record_consumed(&cluster.bootstrap(), LOAD, &acked, || {
        cluster.logs()
    });
    for p in 0..PARTITIONS {
        wait_for_identical_replica_logs(cluster, LOAD, p, &[1, 2, 3]);
    }
}

/// `(error code, offset)` of one acks=-1 record to broker `id`, with a 1 s timeout.
pub(super) fn produce_acks_all_to(
    cluster: &TestCluster,
    id: i32,
    topic: &str,
    partition: i32,
) -> i16 {
    let mut request = produce_request(topic, partition, batch_of(&[b"isolated".to_vec()]), -1);
    if let ::kcli::protocol::messages::RequestKind::Produce(p) = &mut request {
        p.timeout_ms = 1_000;
    }
    produce_result(&KafkaConn::connect_to(cluster.addr(id)).call(&request, 9)).0
}

fn isolated_leader(brokers: Start) {
    let cluster = start(brokers, ONE_EACH);
    let controller = cluster.controller_id().unwrap();
    // Broker p + 1 leads partition p; isolate a leader that is not the controller.
    let isolated = (1..=3).find(|id| *id != controller).unwrap();
    let its_partition = isolated - 1;
    let load = ProduceLoad::start(&cluster.bootstrap(), LOAD, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);

    off_phase();
    let cut = Instant::now();
    let others: Vec<i32> = (1..=3).filter(|id| *id != isolated).collect();
    make_cuts(
        &cluster,
        &[
            Cut::FromZooKeeper(isolated),
            Cut::Between(isolated, others[0]),
            Cut::Between(isolated, others[1]),
        ],
    );
    // Clients still reach it, and it still takes writes, but acknowledges none at acks=all:
    // its followers cannot fetch them.
    assert!(metadata_at(cluster.addr(isolated)).is_some());
    let code = produce_acks_all_to(&cluster, isolated, PROBE, its_partition);
    assert_ne!(code, 0, "an isolated leader acknowledged an acks=all write");
    let after_fault = time_until_writable(&cluster, PROBE, PARTITIONS, cut, RECOVERY);
    // Its session ran from its last ping, up to a third of the session before the cut.
    assert!(
        after_fault >= SESSION_TIMEOUT / 2,
        "its partition was writable before its session ended: {after_fault:?}"
    );
    load.wait_for_more_acks(200, RECOVERY);
    heal_and_check(&cluster, load, ("leader isolated", cut), after_fault);
}

fn isolated_follower(brokers: Start) {
    let cluster = start(brokers, THREE_FOLLOWS);
    let follower = 3;
    let load = ProduceLoad::start(&cluster.bootstrap(), LOAD, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);

    off_phase();
    let cut = Instant::now();
    make_cuts(
        &cluster,
        &[
            Cut::FromZooKeeper(follower),
            Cut::Between(follower, 1),
            Cut::Between(follower, 2),
        ],
    );
    let after_fault = time_until_writable(&cluster, PROBE, PARTITIONS, cut, RECOVERY);
    wait_until("the follower out of every ISR", RECOVERY, || {
        (0..PARTITIONS)
            .all(|p| {
                cluster
                    .isr(LOAD, p)
                    .is_some_and(|isr| !isr.contains(&follower))
            })
            .then_some(())
    });
    load.wait_for_more_acks(200, RECOVERY);
    heal_and_check(&cluster, load, ("follower isolated", cut), after_fault);
}

fn controller_cut_from_zookeeper(brokers: Start) {
    let cluster = start(brokers, ONE_EACH);
    let controller = cluster.controller_id().unwrap();
    let epoch = cluster.controller_epoch();
    let load = ProduceLoad::start(&cluster.bootstrap(), LOAD, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);

    off_phase();
    let cut = Instant::now();
    make_cuts(&cluster, &[Cut::FromZooKeeper(controller)]);
    let after_fault = time_until_writable(&cluster, PROBE, PARTITIONS, cut, RECOVERY);
    let other = (1..=3).find(|id| *id != controller).unwrap();
    let network = cluster.network();
    assert!(
        network.connects(
            host(controller),
            network.addr(host(other)),
            cluster.addr(other).port()
        ),
        "the controller must still reach the other brokers"
    );
    let new = wait_until("another controller", RECOVERY, || {
        cluster.controller_id().filter(|id| *id != controller)
    });
    assert_eq!(cluster.controller_epoch(), epoch + 1, "controller {new}");
    // Its partition moves to another leader once its session is gone.
    wait_until("the old controller leading nothing", RECOVERY, || {
        (0..PARTITIONS)
            .all(|p| {
                [LOAD, PROBE].iter().all(|t| {
                    metadata_at(cluster.addr(new))
                        .and_then(|m| {
                            m.topics
                                .get(*t)
                                .and_then(|(_, ps)| ps.get(&p).map(|v| v.leader))
                        })
                        .is_some_and(|leader| leader != controller && leader >= 0)
                })
            })
            .then_some(())
    });
    load.wait_for_more_acks(200, RECOVERY);
    heal_and_check(
        &cluster,
        load,
        ("controller cut from ZooKeeper", cut),
        after_fault,
    );
    assert_eq!(
        cluster.controller_id(),
        Some(new),
        "the old one takes nothing back"
    );
}

fn every_broker_cut_from_zookeeper(brokers: Start) {
    let cluster = start(brokers, ONE_EACH);
    let before = cluster.registrations(3);
    let epoch = cluster.controller_epoch();
    let load = ProduceLoad::start(&cluster.bootstrap(), LOAD, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);

    // Within the session (which ran from each broker's last ping, up to a third of it before
    // the cut): writes go on, and nothing changes in ZooKeeper.
    off_phase();
    let cut = Instant::now();
    make_cuts(
        &cluster,
        &[
            Cut::FromZooKeeper(1),
            Cut::FromZooKeeper(2),
            Cut::FromZooKeeper(3),
        ],
    );
    while cut.elapsed() < SESSION_TIMEOUT / 3 {
        load.wait_for_more_acks(50, RECOVERY);
    }
    cluster.network().heal_all();
    load.wait_for_more_acks(200, RECOVERY);
    wait_until("every broker connected", RECOVERY, || {
        (cluster.registrations(3).len() == 3).then_some(())
    });
    assert_eq!(cluster.registrations(3), before, "every session kept");
    assert_eq!(cluster.controller_epoch(), epoch, "the same controller");

    // Past the session: writes go on while the ISRs need no change; after healing every
    // broker finds its session expired and registers again.
    off_phase();
    let cut = Instant::now();
    make_cuts(
        &cluster,
        &[
            Cut::FromZooKeeper(1),
            Cut::FromZooKeeper(2),
            Cut::FromZooKeeper(3),
        ],
    );
    let after_fault = time_until_writable(&cluster, PROBE, PARTITIONS, cut, RECOVERY);
    while cut.elapsed() < SESSION_TIMEOUT + Duration::from_secs(3) {
        load.wait_for_more_acks(50, RECOVERY);
    }
    heal_and_check(
        &cluster,
        load,
        ("every broker cut from ZooKeeper past the session", cut),
        after_fault,
    );
    wait_until("every broker registered again", RECOVERY, || {
        let now = cluster.registrations(3);
        (now.len() == 3 && now.iter().all(|(id, czxid)| before[id] != *czxid)).then_some(())
    });
    assert!(cluster.controller_epoch() > epoch);
}

fn bridge_partition(brokers: Start) {
    let cluster = start(brokers, ONE_EACH);
    let controller = cluster.controller_id().unwrap();
    let others: Vec<i32> = (1..=3).filter(|id| *id != controller).collect();
    let load = ProduceLoad::start(&cluster.bootstrap(), LOAD, PARTITIONS);
    load.wait_for_more_acks(200, RECOVERY);

    // The controller sees both halves; the two others cannot see each other.
    off_phase();
    let cut = Instant::now();
    make_cuts(&cluster, &[Cut::Between(others[0], others[1])]);
    let network = cluster.network();
    assert!(network.connects(
        host(others[0]),
        network.addr(host(controller)),
        cluster.addr(controller).port()
    ));
    let after_fault = time_until_writable(&cluster, PROBE, PARTITIONS, cut, RECOVERY);
    load.wait_for_more_acks(200, RECOVERY);
    heal_and_check(&cluster, load, ("bridge partition", cut), after_fault);
}
