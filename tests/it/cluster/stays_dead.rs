//! Victims that never come back: a controller killed -9 for good must leave no partition waiting
//! for it. Its successor elects leaders for the partitions it led, and accepts the other leaders'
//! ISR shrinks (AlterPartition at the partition epoch they hold), so the dead broker leaves
//! every ISR in ZooKeeper and acks=all writes go on through the live brokers.

use std::collections::BTreeSet;
use std::time::Duration;

use super::create_topic;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata, wait_until};
use crate::support::produce_load::{ProduceLoad, assert_every_acknowledged_record_consumed};

const TOPIC: &str = "t";
const PARTITIONS: i32 = 6;
const PARTITION_COUNT: usize = 6;

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

#[test]
fn a_controller_killed_for_good_leaves_every_isr_and_acks_all_goes_on() {
    let mut cluster = TestCluster::start(3, &[("replica.lag.time.max.ms", "3000")]);
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    let dead = cluster.controller_id().unwrap();
    let alive: BTreeSet<i32> = (1..=3).filter(|id| *id != dead).collect();
    cluster.broker(dead).kill9();

    // Every partition led by a live broker, and the dead one in no ISR, in ZooKeeper.
    let settled = wait_until(
        "every partition led by a live broker with the dead one out of its ISR",
        recovery_limit(),
        || {
            leaderships(&cluster).filter(|all| {
                all.iter()
                    .all(|(leader, isr)| alive.contains(leader) && !isr.contains(&dead))
            })
        },
    );
    for (p, (_, isr)) in settled.iter().enumerate() {
        assert_eq!(
            isr.iter().copied().collect::<BTreeSet<_>>(),
            alive,
            "partition {p}"
        );
    }
    let controller = cluster.controller_id().unwrap();
    assert!(alive.contains(&controller), "controller {controller}");
    for id in &alive {
        wait_until(
            "every live broker's Metadata has the new leaders",
            recovery_limit(),
            || {
                metadata(cluster.port(*id))
                    .filter(|m| m.led_partitions(TOPIC, PARTITION_COUNT, &alive).is_some())
            },
        );
    }

    // acks=all, idempotent, on every partition, through the live brokers only.
    let bootstrap = alive
        .iter()
        .map(|id| format!("127.0.0.1:{}", cluster.port(*id)))
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
