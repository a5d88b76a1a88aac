//! Victims that never come back. A broker killed -9 for good, the controller or another, must
//! leave no partition waiting for it: the controller elects leaders for the partitions it led,
//! and accepts the other leaders' ISR shrinks (AlterPartition at the partition epoch they hold),
//! so the dead broker leaves every ISR in ZooKeeper and idempotent acks=all writes go on through
//! the live brokers. With two of three dead and `min.insync.replicas=2`, acks=all is refused with
//! NOT_ENOUGH_REPLICAS, and served again once one of them returns. A partition whose only
//! replica died is answered by every live broker with no leader, not the dead one. Each case runs on kcli's
//! brokers ([`kcli`]) and on Kafka 3.9.1's ([`kafka`]) with the same schedule and checks.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::{create_topic, create_topic_assigned};
use crate::serve_support::{KafkaConn, batch_of, produce_request, produce_result};
use crate::support::availability::time_until_writable;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata_at, wait_until};
use crate::support::produce_load::{ProduceLoad, assert_every_acknowledged_record_consumed};

const TOPIC: &str = "t";
/// A topic of the same shape that measures availability, apart from the load's records.
const PROBE: &str = "probe";
const PARTITIONS: i32 = 6;
const PARTITION_COUNT: usize = 6;
const NOT_ENOUGH_REPLICAS: i16 = 19;
const LEADER_NOT_AVAILABLE: i16 = 5;
/// A one-replica topic on the broker killed for good.
const SOLO: &str = "solo";

/// Three kcli brokers or three Kafka brokers with these settings.
type Start = fn(&[(&str, &str)]) -> TestCluster;

fn kcli_brokers(settings: &[(&str, &str)]) -> TestCluster {
    TestCluster::start(3, settings)
}

fn kafka_brokers(settings: &[(&str, &str)]) -> TestCluster {
    TestCluster::start_kafka(3, settings)
}

/// The cases, once per kind of broker.
macro_rules! cases {
    ($kind:ident, $start:expr) => {
        mod $kind {
            #[test]
            fn a_controller_killed_for_good_leaves_every_isr_and_acks_all_goes_on() {
                super::controller_killed_for_good($start);
            }

            #[test]
            fn a_broker_killed_for_good_leaves_every_isr_and_its_partitions_get_leaders() {
                super::broker_killed_for_good($start);
            }

            #[test]
            fn two_of_three_dead_refuse_acks_all_under_min_isr_and_serve_again_when_one_returns() {
                super::two_of_three_dead($start);
            }
        }
    };
}

cases!(kcli, super::kcli_brokers);
cases!(kafka, super::kafka_brokers);

/// The session, then the lag check, then the AlterPartition round trip; Kafka 3.9.1 is done
/// within 5 s of the session's end on this machine.
fn recovery_limit() -> Duration {
    SESSION_TIMEOUT + Duration::from_secs(15)
}

/// (leader, ISR) of every partition of [`TOPIC`] in ZooKeeper, once every state znode reads.
fn leaderships(cluster: &TestCluster) -> Option<Vec<(i32, Vec<i32>)>> {
    (0..PARTITIONS)
        .map(|p| {
            let (data, _) =
                cluster.get(&format!("/brokers/topics/{TOPIC}/partitions/{p}/state"))?;
            let state: serde_json::Value = serde_json::from_str(&data).ok()?;
            let leader = i32::try_from(state["leader"].as_i64()?).ok()?;
            let isr = state["isr"]
                .as_array()?
                .iter()
                .map(|v| v.as_i64().and_then(|id| i32::try_from(id).ok()))
                .collect::<Option<Vec<i32>>>()?;
            Some((leader, isr))
        })
        .collect()
}

/// Waits until ZooKeeper has every partition led by a broker of `alive` with exactly `alive` as
/// its ISR, and every live broker's Metadata has those leaders.
fn wait_for_isrs_of(cluster: &TestCluster, alive: &BTreeSet<i32>) {
    wait_until(
        "every partition led by a live broker with the live ones as its ISR",
        recovery_limit(),
        || {
            leaderships(cluster).filter(|all| {
                all.iter().all(|(leader, isr)| {
                    alive.contains(leader) && isr.iter().copied().collect::<BTreeSet<_>>() == *alive
                })
            })
        },
    );
    for id in alive {
        wait_until(
            "every live broker's Metadata has the new leaders",
            recovery_limit(),
            || {
                metadata_at(cluster.addr(*id))
                    .filter(|m| m.led_partitions(TOPIC, PARTITION_COUNT, alive).is_some())
            },
        );
    }
}

/// Prints the time from `killed` until acks=all writes succeed on every partition of
/// [`PROBE`], for docs/faults.md.
fn report_availability(cluster: &TestCluster, what: &str, killed: Instant) {
    let writable = time_until_writable(cluster, PROBE, PARTITIONS, killed, recovery_limit());
    let kind = cluster.kind();
    eprintln!(
        "availability ({kind}): {what}: probe writable {:.1} s after the kill",
        writable.as_secs_f64()
    );
}

/// Idempotent acks=all on every partition through the brokers of `alive` only: some records
/// acknowledged on each, and every acknowledged one read back at its offset.
fn assert_acks_all_goes_on(cluster: &TestCluster, alive: &BTreeSet<i32>) {
    let bootstrap = alive
        .iter()
        .map(|id| cluster.addr(*id).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let load = ProduceLoad::start(&bootstrap, TOPIC, PARTITIONS);
    load.wait_for_more_acks(600, Duration::from_secs(30));
    let acked = load.finish(|| cluster.logs());
    for p in 0..PARTITIONS {
        assert!(
            acked.get(&p).is_some_and(|records| !records.is_empty()),
            "partition {p}: nothing acknowledged\n{}",
            cluster.logs()
        );
    }
    assert_every_acknowledged_record_consumed(&bootstrap, TOPIC, &acked, || cluster.logs());
}

fn controller_killed_for_good(brokers: Start) {
    let mut cluster = brokers(&[("replica.lag.time.max.ms", "3000")]);
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    create_topic(&cluster, PROBE, PARTITIONS, 3);
    let dead = cluster.controller_id().unwrap();
    let alive: BTreeSet<i32> = (1..=3).filter(|id| *id != dead).collect();
    let killed = Instant::now();
    cluster.kill9(dead);

    report_availability(&cluster, "the controller killed for good", killed);
    wait_for_isrs_of(&cluster, &alive);
    let controller = cluster.controller_id().unwrap();
    assert!(alive.contains(&controller), "controller {controller}");
    assert_acks_all_goes_on(&cluster, &alive);
}

fn broker_killed_for_good(brokers: Start) {
    let mut cluster = brokers(&[("replica.lag.time.max.ms", "3000")]);
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    create_topic(&cluster, PROBE, PARTITIONS, 3);
    let controller = cluster.controller_id().unwrap();
    // A leader of some partitions and a follower of the others, not the controller.
    let dead = (1..=3).find(|id| *id != controller).unwrap();
    let alive: BTreeSet<i32> = (1..=3).filter(|id| *id != dead).collect();
    let led = leaderships(&cluster)
        .unwrap()
        .iter()
        .filter(|(leader, _)| *leader == dead)
        .count();
    assert!(
        led > 0 && led < PARTITION_COUNT,
        "broker {dead} leads {led}"
    );
    // A partition with no replica but the victim: nobody can lead it.
    create_topic_assigned(&cluster, SOLO, &[&[dead]]);
    wait_until("the solo partition led", recovery_limit(), || {
        let view = metadata_at(cluster.addr(controller))?;
        (view.topics.get(SOLO)?.1.get(&0)?.leader == dead).then_some(())
    });
    let killed = Instant::now();
    cluster.kill9(dead);

    report_availability(&cluster, "a leader and follower killed for good", killed);
    wait_for_isrs_of(&cluster, &alive);
    assert_eq!(cluster.controller_id(), Some(controller));
    assert_acks_all_goes_on(&cluster, &alive);
    // Every live broker answers it with no leader (-1, LEADER_NOT_AVAILABLE), never the dead
    // broker's id, which clients would keep connecting to.
    for id in &alive {
        wait_until("the solo partition leaderless", recovery_limit(), || {
            let view = metadata_at(cluster.addr(*id))?;
            let p = view.topics.get(SOLO)?.1.get(&0)?.clone();
            (p.leader == -1 && p.error_code == LEADER_NOT_AVAILABLE).then_some(())
        });
    }
}

/// `(error code, base offset)` of one acks=-1 produce of `value` to the broker at `at`.
fn produce_acks_all(at: std::net::SocketAddr, partition: i32, value: &str) -> (i16, i64) {
    let mut request = produce_request(TOPIC, partition, batch_of(&[value.into()]), -1);
    if let ::kcli::protocol::messages::RequestKind::Produce(p) = &mut request {
        p.timeout_ms = 1_000;
    }
    produce_result(&KafkaConn::connect_to(at).call(&request, 9))
}

fn two_of_three_dead(brokers: Start) {
    let mut cluster = brokers(&[
        ("replica.lag.time.max.ms", "3000"),
        ("min.insync.replicas", "2"),
    ]);
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    let survivor = cluster.controller_id().unwrap();
    let dead: Vec<i32> = (1..=3).filter(|id| *id != survivor).collect();
    for id in &dead {
        cluster.kill9(*id);
    }
    let alone = BTreeSet::from([survivor]);
    wait_for_isrs_of(&cluster, &alone);
    // Every partition refuses acks=all, and appends nothing for it.
    for p in 0..PARTITIONS {
        let code = wait_until("NOT_ENOUGH_REPLICAS", Duration::from_secs(10), || {
            let (code, _) = produce_acks_all(cluster.addr(survivor), p, "refused");
            (code == NOT_ENOUGH_REPLICAS).then_some(code)
        });
        assert_eq!(code, NOT_ENOUGH_REPLICAS, "partition {p}");
    }

    // One comes back: it catches up, rejoins every ISR, and acks=all is served again.
    let back = dead[0];
    cluster.restart_once_deregistered(back, recovery_limit());
    let alive = BTreeSet::from([survivor, back]);
    wait_until("the returned broker in every ISR", recovery_limit(), || {
        leaderships(&cluster).filter(|all| all.iter().all(|(_, isr)| isr.contains(&back)))
    });
    for p in 0..PARTITIONS {
        let leader = leaderships(&cluster).unwrap()[usize::try_from(p).unwrap()].0;
        assert!(alive.contains(&leader), "partition {p}: leader {leader}");
        wait_until("acks=all accepted again", recovery_limit(), || {
            let (code, _) = produce_acks_all(cluster.addr(leader), p, "accepted");
            (code == 0).then_some(())
        });
    }
}
