//! A broker out of file descriptors in a cluster: broker 3 runs under `ulimit -n` 300 (soft and
//! hard) and is given a replica of every partition of a topic whose logs cannot fit there. It
//! answers the controller's LeaderAndIsr with KAFKA_STORAGE_ERROR for each, once; the controller
//! marks those replicas offline, elects the other replica of each partition, and does not ask
//! broker 3 again. Broker 3's log dir stays online, it keeps serving the topics it hosts, and
//! the rest of the cluster works.

use std::time::Duration;

use super::log_dirs::partitions_metadata;
use super::{create_topic, create_topic_assigned};
use crate::serve_support::{KafkaConn, batch_of, fetch_once, produce_request, produce_result};
use crate::support::cluster::{TestCluster, wait_until};

const LIMITED: i32 = 3;
const LIMIT: u64 = 300;
/// 300 descriptors on broker 3 for this topic alone (one per log): more than its limit leaves.
const PARTITIONS: i32 = 300;
const LEADER_AND_ISR_REFUSED: &str = "LeaderAndIsr: refused";

/// Produces one record to `topic`-`partition` at the broker on `port` (acks=-1), then fetches
/// from offset 0 there.
fn produce_and_fetch(port: u16, topic: &str, partition: i32, logs: impl Fn() -> String) {
    let mut c = KafkaConn::connect(port);
    let (error, _) = produce_result(&c.call(
        &produce_request(topic, partition, batch_of(&[b"x".to_vec()]), -1),
        9,
    ));
    assert_eq!(error, 0, "produce to {topic}-{partition}\n{}", logs());
    let (error, high_watermark, _) = fetch_once(&mut c, topic, partition, 0);
    assert_eq!(error, 0, "fetch from {topic}-{partition}\n{}", logs());
    assert!(high_watermark >= 1, "{topic}-{partition}: {high_watermark}");
}

#[test]
fn replicas_beyond_a_brokers_open_file_limit_go_offline_once_and_the_cluster_serves_on() {
    let mut cluster = TestCluster::start_with_open_file_limits(3, &[], &[(LIMITED, LIMIT)]);
    create_topic(&cluster, "before", 3, 3);

    // Broker 3 is the first replica (the preferred leader) of every partition, with 1 or 2.
    let assignment: Vec<[i32; 2]> = (0..PARTITIONS).map(|p| [LIMITED, 1 + p % 2]).collect();
    let assignment: Vec<&[i32]> = assignment.iter().map(|a| a.as_slice()).collect();
    create_topic_assigned(&cluster, "big", &assignment);

    // Every broker's Metadata: led by the other replica, broker 3 offline and out of the ISR.
    for id in 1..=3 {
        let port = cluster.port(id);
        wait_until(
            "every partition of big led by broker 1 or 2 with broker 3 offline",
            Duration::from_secs(30),
            || {
                let ps = partitions_metadata(port, "big");
                (ps.len() == PARTITIONS as usize
                    && ps.iter().all(|p| {
                        p.leader_id == 1 + p.partition_index % 2
                            && p.isr_nodes == [p.leader_id]
                            && p.offline_replicas == [LIMITED]
                    }))
                .then_some(())
            },
        );
    }
    let refusals = || {
        cluster.brokers[2]
            .stderr()
            .matches(LEADER_AND_ISR_REFUSED)
            .count()
    };
    assert_eq!(refusals(), 1, "{}", cluster.brokers[2].stderr());
    let log = cluster.brokers[2].stderr();
    assert!(log.contains("raise ulimit -n"), "{log}");
    assert!(log.contains(&format!("soft_limit={LIMIT}")), "{log}");
    assert!(!log.contains("log dir failed"), "{log}");
    let data = cluster.brokers[2].data_dir();
    let left: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("big-"))
        .collect();
    assert!(left.is_empty(), "half-created logs left: {left:?}");

    // The cluster serves on: the refused topic through its new leaders, the old topic (broker
    // 3's replicas included), a new topic with a replica on broker 3.
    let logs = || cluster.logs();
    for p in [0, 1, PARTITIONS - 1] {
        produce_and_fetch(cluster.port(1 + p % 2), "big", p, logs);
    }
    for p in 0..3 {
        let leader = partitions_metadata(cluster.port(1), "before")[p as usize].leader_id;
        produce_and_fetch(cluster.port(leader), "before", p, logs);
    }
    create_topic_assigned(&cluster, "after", &[&[LIMITED, 1, 2]]);
    produce_and_fetch(cluster.port(LIMITED), "after", 0, logs);

    // Nothing asked broker 3 for the refused replicas again meanwhile.
    assert_eq!(refusals(), 1, "{}", cluster.brokers[2].stderr());
    assert!(cluster.broker(LIMITED).is_running());
}
