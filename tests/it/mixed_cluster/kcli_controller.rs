//! A kcli controller driving a Kafka 3.9.1 broker: the Kafka broker (the controller, and the
//! leader of a partition) is killed, a kcli broker takes over as controller and moves the
//! partition to a kcli leader; Kafka restarts on its log dir, takes the kcli controller's
//! UpdateMetadata and LeaderAndIsr in the versions IBP 3.9 selects, fetches from the kcli
//! leaders until it is back in every ISR (its AlterPartition accepted by the kcli controller),
//! and leads its partition again after Kafka's own `kafka-leader-election --election-type
//! preferred`, sent to the kcli controller, with the kcli brokers following it. An idempotent
//! acks=-1 load runs throughout: every acknowledged record is consumed, and the three replicas
//! of each partition end as one log.

use std::time::Duration;

use super::{create_topic, finish_and_check, kafka_tool, wait_for_preferred_leaders_in_sync};
use crate::support::cluster::wait_until;
use crate::support::mixed_cluster::MixedCluster;
use crate::support::produce_load::ProduceLoad;

const TOPIC: &str = "mixed";
/// Partition p is led by broker p+1 first: Kafka leads partition 0, kcli 1 and 2.
const ASSIGNMENT: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];

#[test]
fn a_kafka_broker_rejoins_under_a_kcli_controller_and_leads_again() {
    let mut cluster = MixedCluster::start(
        &[1],
        &[2, 3],
        &[
            // A dead replica leaves the ISRs of the partitions it followed within the lag.
            ("replica.lag.time.max.ms", "4000"),
            // A new controller checks the leader imbalance 5 s after it takes over (Kafka's
            // first auto-rebalance), which could move partition 0 back before the tool runs.
            ("auto.leader.rebalance.enable", "false"),
        ],
    );
    assert_eq!(cluster.controller_id(), Some(1), "Kafka is the controller");
    let kafka_epoch = cluster.controller_epoch();
    create_topic(&cluster, TOPIC, ASSIGNMENT, &[("min.insync.replicas", "2")]);

    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, 3);
    load.wait_for_more_acks(500, Duration::from_secs(60));

    cluster.kill9(1);
    let controller = wait_until("a kcli controller", Duration::from_secs(30), || {
        cluster.controller_id().filter(|c| *c != 1)
    });
    assert!(cluster.controller_epoch() > kafka_epoch);
    wait_until(
        "partition 0 led by a kcli broker, and broker 1 out of every ISR",
        Duration::from_secs(30),
        || {
            let moved = cluster.leader(TOPIC, 0).is_some_and(|l| l == 2 || l == 3);
            let out = (0..3).all(|p| cluster.isr(TOPIC, p).is_some_and(|isr| !isr.contains(&1)));
            (moved && out).then_some(())
        },
    );
    load.wait_for_more_acks(500, Duration::from_secs(60));

    // Back on its log dir: it serves only once the kcli controller's UpdateMetadata has come.
    cluster.restart(1);
    wait_until(
        "broker 1 back in every ISR",
        Duration::from_secs(60),
        || {
            (0..3)
                .all(|p| cluster.isr(TOPIC, p).is_some_and(|isr| isr.len() == 3))
                .then_some(())
        },
    );
    assert_eq!(cluster.controller_id(), Some(controller));

    // Kafka's own tool asks the kcli controller for a preferred election.
    let bootstrap = cluster.bootstrap();
    let stdout = kafka_tool(
        "org.apache.kafka.tools.LeaderElectionCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--election-type",
            "preferred",
            "--all-topic-partitions",
        ],
    );
    assert!(
        stdout.contains(&format!("{TOPIC}-0")),
        "the election moved {TOPIC}-0: {stdout}\nstate: {:?}\n{}",
        cluster.partition_state(TOPIC, 0),
        cluster.logs()
    );
    wait_for_preferred_leaders_in_sync(&cluster, TOPIC, ASSIGNMENT);

    // Kafka leads partition 0 again, with the kcli brokers following it.
    load.wait_for_more_acks(500, Duration::from_secs(60));
    finish_and_check(&cluster, load, TOPIC, 3, &[1, 2, 3]);
    assert_eq!(cluster.controller_id(), Some(controller));
}
