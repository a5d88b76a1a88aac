//! A kcli broker's failed log dir under Kafka 3.9.1's controller: the kcli broker writes
//! `/log_dir_event_notification` as Kafka's brokers do, Kafka's controller asks it about its
//! replicas with LeaderAndIsr, reads KAFKA_STORAGE_ERROR for the one on the failed dir, and
//! elects the Kafka replica in its place.

use std::time::Duration;

use super::create_topic;
use crate::cluster::log_dirs::{
    partition_metadata, produce_until_the_disk_fails, wait_for_leader_with_offline_replica,
};
use crate::serve_support::KafkaConn;
use crate::storage_support::SmallFs;
use crate::support::cluster::wait_until;
use crate::support::mixed_cluster::MixedCluster;

#[test]
fn kafkas_controller_moves_the_leadership_off_a_kcli_brokers_failed_log_dir() {
    let mut cluster = MixedCluster::start(&[1], &[3], &[]);
    assert_eq!(cluster.controller_id(), Some(1), "Kafka is the controller");
    let fs = SmallFs::mount("4m");
    let small = fs.path().join("b");
    cluster.port_of(2); // Makes broker 2's home, so its log dir is known before it starts.
    let dirs = format!("{},{}", cluster.log_dir(2).display(), small.display());
    cluster.start_kcli_with(2, &[("log.dirs", &dirs)]);
    cluster.wait_all_listed();
    // "ok" goes to broker 2's first dir, "doomed" to the small one.
    create_topic(&cluster, "ok", &[&[2, 1, 3]], &[]);
    create_topic(&cluster, "doomed", &[&[2, 1, 3]], &[]);
    assert!(
        small.join("doomed-0").is_dir(),
        "doomed-0 on the small disk"
    );

    let mut leader = KafkaConn::connect(cluster.port(2));
    let acknowledged = produce_until_the_disk_fails(&mut leader, "doomed", &fs, || cluster.logs());

    let state = wait_until(
        "Kafka's controller moved doomed-0",
        Duration::from_secs(30),
        || {
            cluster
                .partition_state("doomed", 0)
                .filter(|(s, _)| s["leader"] != 2)
                .map(|(s, _)| s)
        },
    );
    assert_eq!(state["leader"], 1, "{state}");
    assert_eq!(state["isr"], serde_json::json!([1, 3]), "{state}");
    let ports: Vec<u16> = (1..=3).map(|id| cluster.port(id)).collect();
    wait_for_leader_with_offline_replica(&ports, "doomed", 1, 2, &[1, 3]);
    // Kafka's leader has every acknowledged record: its log end is where a new record goes.
    let mut kafka = KafkaConn::connect(cluster.port(1));
    let (error, base) = crate::serve_support::produce_result(&kafka.call(
        &crate::serve_support::produce_request(
            "doomed",
            0,
            crate::serve_support::batch_of(&[vec![1u8; 10]]),
            1,
        ),
        9,
    ));
    assert_eq!((error, base), (0, acknowledged), "{}", cluster.logs());
    let p = partition_metadata(cluster.port(1), "ok");
    assert_eq!((p.leader_id, p.offline_replicas.len()), (2, 0), "{p:?}");
}
