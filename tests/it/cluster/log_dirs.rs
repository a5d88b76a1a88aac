//! A failed log dir on one broker of a cluster: the broker tells the controller through
//! `/log_dir_event_notification`, the controller learns which replicas went with the dir from
//! the KAFKA_STORAGE_ERROR answers to its LeaderAndIsr, elects another leader from the ISR and
//! lists the replica as offline in every broker's Metadata. The broker's other dir keeps
//! leading. Killed and restarted with the disk still full, the broker starts with the dir
//! offline rather than not at all. The failing disk is a small tmpfs filled up (the suite runs
//! as root).

use std::time::Duration;

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::metadata_request::{self, MetadataRequest};
use kcli::protocol::messages::metadata_response::MetadataResponsePartition;
use kcli::protocol::messages::{RequestKind, ResponseKind};

use super::create_topic_assigned;
use crate::serve_support::{KafkaConn, batch_of, produce_request, produce_result};
use crate::storage_support::SmallFs;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata, wait_until};

const KAFKA_STORAGE_ERROR: i16 = 56;

fn payload(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![i as u8; 1000]).collect()
}

/// Partition 0 of `topic` in a Metadata v12 answer from the broker on `port`.
pub(crate) fn partition_metadata(port: u16, topic: &str) -> MetadataResponsePartition {
    partitions_metadata(port, topic)[0].clone()
}

/// Every partition of `topic` in a Metadata v12 answer from the broker on `port`.
pub(crate) fn partitions_metadata(port: u16, topic: &str) -> Vec<MetadataResponsePartition> {
    let request = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![metadata_request::MetadataRequestTopic {
            name: Some(StrBytes::from(topic)),
            ..Default::default()
        }]),
        ..Default::default()
    });
    let ResponseKind::Metadata(md) = KafkaConn::connect(port).call(&request, 12) else {
        unreachable!()
    };
    md.topics[0].partitions.clone()
}

/// Waits until the Metadata of every broker in `ports` shows partition 0 of `topic` led by
/// `leader` with `offline` as its only offline replica, and checks its ISR is `isr`.
pub(crate) fn wait_for_leader_with_offline_replica(
    ports: &[u16],
    topic: &str,
    leader: i32,
    offline: i32,
    isr: &[i32],
) {
    for port in ports {
        let p = wait_until(
            "Metadata lists the offline replica",
            Duration::from_secs(20),
            || {
                let p = partition_metadata(*port, topic);
                (p.leader_id == leader && p.offline_replicas == [offline]).then_some(p)
            },
        );
        assert_eq!(p.isr_nodes, isr, "broker on port {port}: {p:?}");
    }
}

/// Acks=-1 produces of partition 0 of `topic` (on `fs`) through `leader`, before and after
/// `fs` fills up, until one fails with KAFKA_STORAGE_ERROR; the records acknowledged.
pub(crate) fn produce_until_the_disk_fails(
    leader: &mut KafkaConn,
    topic: &str,
    fs: &SmallFs,
    logs: impl Fn() -> String,
) -> i64 {
    let mut acknowledged = 0;
    for _ in 0..10 {
        let produced =
            produce_result(&leader.call(&produce_request(topic, 0, batch_of(&payload(10)), -1), 9));
        assert_eq!(produced.0, 0, "{}", logs());
        acknowledged += 10;
    }
    fs.fill();
    for _ in 0..20 {
        let error =
            produce_result(&leader.call(&produce_request(topic, 0, batch_of(&payload(10)), -1), 9))
                .0;
        match error {
            0 => acknowledged += 10,
            KAFKA_STORAGE_ERROR => return acknowledged,
            other => panic!("produce error {other}\n{}", logs()),
        }
    }
    panic!("no KAFKA_STORAGE_ERROR on a full disk\n{}", logs())
}

#[test]
fn a_failed_log_dir_moves_its_leaderships_through_the_controller() {
    let mut cluster = TestCluster::start(3, &[]);
    // Broker 2 gets a second log dir on a small disk.
    let fs = SmallFs::mount("4m");
    let small = fs.path().join("b");
    let data = cluster.brokers[1].data_dir();
    cluster.brokers[1].stop();
    let dirs = format!("{},{}", data.display(), small.display());
    cluster.brokers[1].add_overrides(&[("log.dirs", &dirs)]);
    cluster.brokers[1].restart();
    for id in 1..=3 {
        wait_until("broker 2 listed again", Duration::from_secs(30), || {
            metadata(cluster.port(id)).filter(|m| m.broker_ids().len() == 3)
        });
    }
    // Placement goes to the dir with the fewest partitions: "ok" to the first, "doomed" to the
    // small one.
    create_topic_assigned(&cluster, "ok", &[&[2, 1, 3]]);
    create_topic_assigned(&cluster, "doomed", &[&[2, 1, 3]]);
    assert!(
        small.join("doomed-0").is_dir(),
        "doomed-0 on the small disk"
    );
    assert!(data.join("ok-0").is_dir(), "ok-0 on the other dir");

    let mut leader = KafkaConn::connect(cluster.port(2));
    let acknowledged = produce_until_the_disk_fails(&mut leader, "doomed", &fs, || cluster.logs());

    // The controller moves the leadership to the next replica in the ISR and takes broker 2
    // out of it; every broker's Metadata lists broker 2's replica as offline.
    let (state, _) = wait_until(
        "doomed-0 led by another broker",
        Duration::from_secs(20),
        || {
            let (state, stat) = cluster.get("/brokers/topics/doomed/partitions/0/state")?;
            let state: serde_json::Value = serde_json::from_str(&state).ok()?;
            (state["leader"] != 2).then_some((state, stat))
        },
    );
    assert_eq!(state["leader"], 1, "{state}");
    assert_eq!(state["isr"], serde_json::json!([1, 3]), "{state}");
    let ports: Vec<u16> = (1..=3).map(|id| cluster.port(id)).collect();
    wait_for_leader_with_offline_replica(&ports, "doomed", 1, 2, &[1, 3]);
    let (children, _) = wait_until("the notification handled", Duration::from_secs(20), || {
        let children = crate::support::cluster::with_zk(&cluster.connect(), async |zk| {
            zk.get_children("/log_dir_event_notification", false).await
        })
        .ok()?;
        children.0.is_empty().then_some(children)
    });
    assert!(children.is_empty());
    assert!(
        cluster.brokers[1]
            .stderr()
            .contains("told the controller of the failed log dir"),
        "{}",
        cluster.brokers[1].stderr()
    );

    // The new leader has every acknowledged record and takes more.
    let mut new_leader = KafkaConn::connect(cluster.port(1));
    let (error, base) = produce_result(
        &new_leader.call(&produce_request("doomed", 0, batch_of(&payload(1)), 1), 9),
    );
    assert_eq!((error, base), (0, acknowledged), "{}", cluster.logs());
    // Broker 2's other dir still leads its partition, with its ISR whole.
    let p = partition_metadata(cluster.port(3), "ok");
    assert_eq!((p.leader_id, p.offline_replicas.len()), (2, 0), "{p:?}");
    let (code, _) =
        produce_result(&leader.call(&produce_request("ok", 0, batch_of(&payload(3)), -1), 9));
    assert_eq!(code, 0);

    // Killed and restarted with the small disk still full, broker 2 comes up with that dir
    // offline (Kafka's `loadLogs`) rather than not at all: it follows "ok" again, its "doomed"
    // replica stays offline, and no empty "doomed" log appears in its other dir.
    cluster.brokers[1].kill9();
    cluster.restart_once_deregistered(2, SESSION_TIMEOUT + Duration::from_secs(10));
    wait_until(
        "broker 2 back in ok-0's ISR",
        Duration::from_secs(30),
        || cluster.isr("ok", 0).filter(|isr| isr.contains(&2)),
    );
    wait_for_leader_with_offline_replica(&ports, "doomed", 1, 2, &[1, 3]);
    assert!(!data.join("doomed-0").exists(), "{}", cluster.logs());
    let (error, _) = produce_result(
        &new_leader.call(&produce_request("doomed", 0, batch_of(&payload(1)), -1), 9),
    );
    assert_eq!(error, 0, "{}", cluster.logs());

    // Nor does a first log dir that cannot even be made keep it down: with ZooKeeper the first
    // dir holds no metadata store.
    let blocker = fs.path().parent().unwrap().join("a-file");
    std::fs::write(&blocker, b"not a dir").unwrap();
    let unmakeable = blocker.join("logs");
    let dirs = format!(
        "{},{},{}",
        unmakeable.display(),
        data.display(),
        small.display()
    );
    cluster.brokers[1].kill9();
    cluster.brokers[1].add_overrides(&[("log.dirs", &dirs)]);
    wait_until("ok-0 without broker 2", Duration::from_secs(30), || {
        cluster.isr("ok", 0).filter(|isr| !isr.contains(&2))
    });
    cluster.restart_once_deregistered(2, SESSION_TIMEOUT + Duration::from_secs(10));
    wait_until(
        "broker 2 back in ok-0's ISR",
        Duration::from_secs(30),
        || cluster.isr("ok", 0).filter(|isr| isr.contains(&2)),
    );
}
