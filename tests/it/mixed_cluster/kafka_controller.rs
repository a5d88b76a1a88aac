//! Kafka 3.9.1 as the controller of kcli brokers: one Kafka broker (the controller) and two kcli
//! brokers share a chroot. The kcli brokers take Kafka's LeaderAndIsr and UpdateMetadata (they
//! lead and follow as told, with Kafka following them), their AllocateProducerIds get blocks
//! that never overlap Kafka's, their AlterPartition requests shrink and expand ISRs through
//! Kafka's controller, and Kafka's StopReplica deletes their replicas of a deleted topic. An
//! idempotent acks=-1 load runs throughout: every acknowledged record is consumed, and the
//! three replicas of each partition end as one log.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::{create_topic, delete_topic, finish_and_check};
use crate::cluster::membership::init_producer_id;
use crate::serve_support::KafkaConn;
use crate::support::cluster::{signal, wait_until};
use crate::support::mixed_cluster::MixedCluster;
use crate::support::produce_load::ProduceLoad;

const TOPIC: &str = "mixed";
/// Partition p is led by broker p+1 first: Kafka leads partition 0, kcli 1 and 2.
const ASSIGNMENT: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];
const LAG_MS: u64 = 3000;

#[test]
fn kcli_brokers_lead_follow_and_change_isrs_under_a_kafka_controller() {
    let lag = LAG_MS.to_string();
    let cluster = MixedCluster::start(
        &[1],
        &[2, 3],
        &[
            ("replica.lag.time.max.ms", lag.as_str()),
            // The pause below outlasts the lag, not the session.
            ("zookeeper.session.timeout.ms", "10000"),
        ],
    );
    assert_eq!(cluster.controller_id(), Some(1), "Kafka is the controller");
    let kafka_epoch = cluster.controller_epoch();

    create_topic(&cluster, TOPIC, ASSIGNMENT, &[("min.insync.replicas", "2")]);

    // Producer ids: each kcli broker asks Kafka's controller for a block (AllocateProducerIds);
    // no two brokers' ids share a block of 1000.
    let ids: Vec<i64> = [1, 2, 3]
        .iter()
        .map(|b| init_producer_id(&mut KafkaConn::connect(cluster.port(*b))))
        .collect();
    let blocks: BTreeSet<i64> = ids.iter().map(|id| id / 1000).collect();
    assert_eq!(blocks.len(), 3, "producer ids {ids:?} from distinct blocks");
    let block = cluster
        .get_json("/latest_producer_id_block")
        .expect("/latest_producer_id_block");
    let block_end: i64 = block["block_end"].as_str().unwrap().parse().unwrap();
    assert!(
        ids.iter().all(|id| *id <= block_end),
        "{block} covers {ids:?}"
    );

    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, 3);
    load.wait_for_more_acks(500, Duration::from_secs(60));

    // A paused kcli follower leaves the ISR of the partitions led by Kafka (its own
    // AlterPartition) and by the other kcli broker (kcli's AlterPartition, accepted by Kafka's
    // controller), and comes back into both.
    let (_, epoch_before) = cluster.partition_state(TOPIC, 1).unwrap();
    let pid = cluster.node(3).pid();
    signal(pid, "STOP");
    let paused = Instant::now();
    let shrink_limit = Duration::from_millis(LAG_MS * 3 / 2) + Duration::from_secs(2);
    for p in [0, 1] {
        wait_until(
            &format!("partition {p}'s ISR without the paused broker 3"),
            shrink_limit.saturating_sub(paused.elapsed()) + Duration::from_secs(1),
            || {
                cluster
                    .isr(TOPIC, p)
                    .filter(|isr| !isr.contains(&3) && isr.len() == 2)
            },
        );
    }
    signal(pid, "CONT");
    for p in [0, 1] {
        wait_until(
            &format!("partition {p}'s ISR with broker 3 again"),
            Duration::from_secs(20),
            || cluster.isr(TOPIC, p).filter(|isr| isr.len() == 3),
        );
    }
    let (state, epoch_after) = cluster.partition_state(TOPIC, 1).unwrap();
    assert!(
        epoch_after >= epoch_before + 2,
        "kcli's shrink and expand each bumped the partition epoch: {epoch_before} -> {epoch_after}"
    );
    assert_eq!(state["leader"], 2, "{state}");
    assert_eq!(
        state["controller_epoch"], kafka_epoch,
        "the ISR changes were written by Kafka's controller: {state}"
    );
    assert_eq!(cluster.controller_id(), Some(1));

    load.wait_for_more_acks(500, Duration::from_secs(60));
    finish_and_check(&cluster, load, TOPIC, 3, &[1, 2, 3]);

    // Kafka's StopReplica (with deletion) removes the kcli brokers' replicas of a deleted topic.
    create_topic(&cluster, "doomed", &[&[2, 3, 1]], &[]);
    delete_topic(&cluster, "doomed", 1);
}
