//! The controller and brokers dying and coming back: kill -9 of the controller (a new one, with
//! a new epoch, within the session timeout; leaders of its partitions from the ISR in assignment
//! order), a restart once the old registration is gone, every broker down (describe-cluster
//! exits 1 with every partition OFFLINE), and SIGSTOP of the controller past its session (it
//! loses registration and controllership, then registers again with a new czxid and stays a
//! plain broker).

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use super::create_topic;
use crate::describe_cluster::describe_json;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata, wait_until};

/// Session timeout plus the few seconds Kafka's controller needs after it.
fn failover_limit() -> Duration {
    SESSION_TIMEOUT + Duration::from_secs(10)
}

/// The replicas and ISR of `t`'s partitions in ZooKeeper: (partition, replicas, leader, isr).
fn states(cluster: &TestCluster, topic: &str, count: i32) -> Vec<(i32, Vec<i32>, i32, Vec<i32>)> {
    let (data, _) = cluster.get(&format!("/brokers/topics/{topic}")).unwrap();
    let assignment: serde_json::Value = serde_json::from_str(&data).unwrap();
    (0..count)
        .map(|p| {
            let to_ids = |v: &serde_json::Value| -> Vec<i32> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| i32::try_from(x.as_i64().unwrap()).unwrap())
                    .collect()
            };
            let replicas = to_ids(&assignment["partitions"][p.to_string()]);
            let (data, _) = cluster
                .get(&format!("/brokers/topics/{topic}/partitions/{p}/state"))
                .unwrap();
            let state: serde_json::Value = serde_json::from_str(&data).unwrap();
            let leader = i32::try_from(state["leader"].as_i64().unwrap()).unwrap();
            (p, replicas, leader, to_ids(&state["isr"]))
        })
        .collect()
}

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} {pid}");
}

#[test]
fn kill_9_of_the_controller_elects_another_restart_rejoins_and_all_down_is_offline() {
    let mut cluster = TestCluster::start(3, &[]);
    create_topic(&cluster, "t", 6, 3);
    let before = states(&cluster, "t", 6);
    let old = cluster.controller_id().unwrap();
    let epoch = cluster.controller_epoch();
    let (_, old_registration) = cluster.get(&format!("/brokers/ids/{old}")).unwrap();
    cluster.broker(old).kill9();

    let alive: BTreeSet<i32> = (1..=3).filter(|id| *id != old).collect();
    let new = wait_until("a new controller", failover_limit(), || {
        cluster.controller_id().filter(|id| *id != old)
    });
    assert!(alive.contains(&new));
    assert_eq!(cluster.controller_epoch(), epoch + 1);
    for id in &alive {
        wait_until(
            "every partition led by a live broker in every live broker's Metadata",
            failover_limit(),
            || {
                metadata(cluster.port(*id)).filter(|m| {
                    m.controller_id == new && m.led_partitions("t", 6, &alive).is_some()
                })
            },
        );
    }
    // The new leaders: the first replica in assignment order that is alive and in the ISR;
    // the dead broker left the ISR of the partitions that changed leader.
    for ((p, replicas, leader, isr), (_, _, old_leader, old_isr)) in
        states(&cluster, "t", 6).into_iter().zip(before)
    {
        if old_leader == old {
            let expected = replicas
                .iter()
                .copied()
                .find(|r| alive.contains(r) && old_isr.contains(r))
                .unwrap();
            assert_eq!(leader, expected, "partition {p}: replicas {replicas:?}");
            assert!(!isr.contains(&old), "partition {p}: isr {isr:?}");
        } else {
            assert_eq!(leader, old_leader, "partition {p}");
        }
    }

    // Restarted once its registration is gone, the old controller registers again (a new
    // czxid, so a new broker epoch) and every broker lists it.
    wait_until("the old registration gone", failover_limit(), || {
        cluster
            .get(&format!("/brokers/ids/{old}"))
            .is_none()
            .then_some(())
    });
    cluster.broker(old).restart();
    let (_, registration) = wait_until("registered again", failover_limit(), || {
        cluster.get(&format!("/brokers/ids/{old}"))
    });
    assert!(registration.czxid > old_registration.czxid);
    let all: BTreeSet<i32> = (1..=3).collect();
    for id in 1..=3 {
        wait_until(
            "every broker lists the restarted one",
            failover_limit(),
            || metadata(cluster.port(id)).filter(|m| m.broker_ids() == all),
        );
    }
    assert_eq!(
        cluster.controller_id(),
        Some(new),
        "a restart takes nothing over"
    );

    // Every broker down: no controller, every partition OFFLINE, exit 1.
    for id in 1..=3 {
        cluster.broker(id).kill9();
    }
    let last_epoch = cluster.controller_epoch();
    let described = wait_until(
        "no controller and no broker in ZooKeeper",
        failover_limit(),
        || {
            let (code, json) = describe_json(&cluster.connect(), &[]);
            (json["controller"]["id"].is_null() && json["brokers"] == serde_json::json!([]))
                .then_some((code, json))
        },
    );
    let (code, json) = described;
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["controller"]["epoch"], last_epoch);
    let t = &json["topics"][0];
    assert_eq!(t["name"], "t");
    for p in t["partitions"].as_array().unwrap() {
        assert!(
            p["flags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "OFFLINE"),
            "{p}"
        );
    }
}

#[test]
fn sigstop_of_the_controller_past_its_session_loses_it_for_good() {
    let mut cluster = TestCluster::start(3, &[]);
    create_topic(&cluster, "t", 3, 3);
    let old = cluster.controller_id().unwrap();
    let (_, registration) = cluster.get(&format!("/brokers/ids/{old}")).unwrap();
    let pid = cluster.broker(old).pid();
    signal(pid, "STOP");
    let new = wait_until("another controller", failover_limit(), || {
        cluster.controller_id().filter(|id| *id != old)
    });
    let epoch = cluster.controller_epoch();
    wait_until(
        "the stopped broker's registration gone",
        failover_limit(),
        || {
            cluster
                .get(&format!("/brokers/ids/{old}"))
                .is_none()
                .then_some(())
        },
    );
    signal(pid, "CONT");
    let (_, again) = wait_until("registered again after SIGCONT", failover_limit(), || {
        cluster.get(&format!("/brokers/ids/{old}"))
    });
    assert!(again.czxid > registration.czxid);
    let all: BTreeSet<i32> = (1..=3).collect();
    for id in 1..=3 {
        wait_until(
            "every broker lists every broker and the new controller",
            failover_limit(),
            || {
                metadata(cluster.port(id))
                    .filter(|m| m.broker_ids() == all && m.controller_id == new)
            },
        );
    }
    // The old controller did not take over again, nor move the epoch.
    assert_eq!(cluster.controller_id(), Some(new));
    assert_eq!(cluster.controller_epoch(), epoch);
    let log = cluster.broker(old).stderr();
    assert!(
        log.contains("registered again after the ZooKeeper session expired"),
        "{log}"
    );
}
