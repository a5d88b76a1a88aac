//! The controller and brokers dying and coming back: kill -9 of the controller (a new one, with
//! a new epoch, within the session timeout; leaders of its partitions from the ISR in assignment
//! order), a restart once the old registration is gone, every broker down (describe-cluster
//! exits 1 with every partition OFFLINE), and SIGSTOP of the controller past its session (it
//! loses registration and controllership, acknowledges no acks=-1 write as the replaced leader,
//! then registers again with a new czxid and stays a plain broker), and a plain broker's session expiry (it registers again; its producer-id
//! manager and group coordinator keep working).

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use super::create_topic;
use super::membership::init_producer_id;
use crate::describe_cluster::describe_json;
use crate::serve_support::{KafkaConn, batch_of, produce_request, produce_result, run_within};
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata, signal, wait_until};

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
    cluster.restart_once_deregistered(old, failover_limit());
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
    // A partition the stopped controller led.
    let led = metadata(cluster.port(old)).unwrap().topics["t"]
        .1
        .iter()
        .find(|(_, p)| p.leader == old)
        .map(|(index, _)| *index)
        .unwrap();
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
    let alive: BTreeSet<i32> = (1..=3).filter(|id| *id != old).collect();
    wait_until("the partition has a new leader", failover_limit(), || {
        metadata(cluster.port(new)).filter(|m| m.led_partitions("t", 3, &alive).is_some())
    });
    // Resumed, the replaced leader may still believe it leads; it must not acknowledge an
    // acks=-1 write (its followers now fetch from the new leader), only refuse or time out.
    let mut conn = KafkaConn::connect(cluster.port(old));
    let mut request = produce_request("t", led, batch_of(&[b"late".to_vec()]), -1);
    if let kcli::protocol::messages::RequestKind::Produce(p) = &mut request {
        // Well inside the connection's read limit.
        p.timeout_ms = 3_000;
    }
    let sent = conn.send(&request, 9).unwrap();
    signal(pid, "CONT");
    let (correlation, response) = conn
        .recv(kcli::protocol::messages::ApiKey::Produce, 9)
        .unwrap();
    assert_eq!(correlation, sent);
    let (code, _) = produce_result(&response);
    assert_ne!(code, 0, "the replaced leader acknowledged an acks=-1 write");
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

#[test]
fn a_plain_brokers_session_expiry_re_registers_and_its_coordinators_keep_working() {
    let mut cluster = TestCluster::start(3, &[]);
    create_topic(&cluster, "t", 3, 3);
    let controller = cluster.controller_id().unwrap();
    let plain = (1..=3).find(|id| *id != controller).unwrap();
    let (_, registration) = cluster.get(&format!("/brokers/ids/{plain}")).unwrap();
    let first_id = init_producer_id(&mut KafkaConn::connect(cluster.port(plain)));
    let pid = cluster.broker(plain).pid();
    // Stopped past its session, the broker's session expires and its registration goes.
    signal(pid, "STOP");
    wait_until(
        "the stopped broker's registration gone",
        failover_limit(),
        || {
            cluster
                .get(&format!("/brokers/ids/{plain}"))
                .is_none()
                .then_some(())
        },
    );
    signal(pid, "CONT");
    let (_, again) = wait_until(
        "registered again with a new session",
        failover_limit(),
        || cluster.get(&format!("/brokers/ids/{plain}")),
    );
    assert!(again.czxid > registration.czxid, "a new broker epoch");
    assert_eq!(cluster.controller_id(), Some(controller));
    let all: BTreeSet<i32> = (1..=3).collect();
    for id in 1..=3 {
        wait_until("every broker lists it again", failover_limit(), || {
            metadata(cluster.port(id)).filter(|m| m.broker_ids() == all)
        });
    }
    // The producer-id manager still hands out fresh ids, and the group coordinator answers a
    // consumer group: a consumer of the group reads what was produced through the broker.
    let next = init_producer_id(&mut KafkaConn::connect(cluster.port(plain)));
    assert_ne!(next, first_id);
    let topic_leaders = metadata(cluster.port(plain)).unwrap().topics["t"].1.clone();
    assert!(topic_leaders.values().all(|p| all.contains(&p.leader)));
    let bootstrap = format!("127.0.0.1:{}", cluster.port(plain));
    let (code, out, err) = run_within(
        {
            let mut cmd = Command::new("kcat");
            cmd.args(["-P", "-b", &bootstrap, "-t", "t", "-X", "acks=all"]);
            cmd
        },
        b"one\ntwo\nthree\n",
        Duration::from_secs(60),
    );
    assert_eq!(code, 0, "{out}{err}");
    let consume = |group: &str| {
        let mut cmd = Command::new("kcat");
        cmd.args([
            "-b",
            &bootstrap,
            "-G",
            group,
            "-X",
            "auto.offset.reset=earliest",
            "-e",
            "-q",
            "t",
        ]);
        run_within(cmd, b"", Duration::from_secs(90))
    };
    // The first group creates __consumer_offsets (RF 3); then a group whose coordinator is
    // the broker whose session expired.
    let (code, _, err) = consume("warm-up");
    assert_eq!(code, 0, "{err}\n{}", cluster.logs());
    let offsets = wait_until("__consumer_offsets led", failover_limit(), || {
        metadata(cluster.port(plain))
            .and_then(|m| m.led_partitions("__consumer_offsets", 50, &all).cloned())
    });
    let group = (0..)
        .map(|i| format!("after-expiry-{i}"))
        .find(|g| offsets[&offsets_partition(g)].leader == plain)
        .unwrap();
    let (code, out, err) = consume(&group);
    assert_eq!(code, 0, "{err}\n{}", cluster.logs());
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["one", "three", "two"], "{err}");
}

/// Kafka's `partitionFor(groupId)`: `abs(groupId.hashCode) % 50`, Java's `String.hashCode`.
fn offsets_partition(group: &str) -> i32 {
    let hash = group
        .encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (hash & 0x7fff_ffff) % 50
}
