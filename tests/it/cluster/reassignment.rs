//! Reassignment carried out by the controller on a live cluster of four brokers: `kcli assign`
//! proposes the plan from ZooKeeper, and Kafka 3.9.1's own `kafka-reassign-partitions` executes
//! and verifies it (AlterPartitionReassignments and ListPartitionReassignments through
//! `--bootstrap-server`) while an idempotent acks=-1 producer sends: the new replicas catch up and join the ISR, leadership leaves a removed broker, the
//! removed replicas are deleted from their brokers, ZooKeeper ends with the target and no
//! adding or removing replicas, and nothing acknowledged is lost.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{create_topic_assigned, wait_for_identical_replica_logs};
use crate::kafka_tools::support::java;
use crate::serve_support::run_within;
use crate::support::cluster::{TestCluster, metadata, wait_until};
use crate::support::produce_load::{ProduceLoad, assert_every_acknowledged_record_consumed};

const TOPIC: &str = "moving";
const REASSIGN: &str = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";

/// `kafka-reassign-partitions` with `args` against the cluster: (exit code, stdout + stderr).
fn reassign_tool(cluster: &TestCluster, args: &[&str]) -> (i32, String) {
    let mut cmd = java(REASSIGN);
    cmd.args(["--bootstrap-server", &cluster.bootstrap()])
        .args(args);
    let (code, out, err) = run_within(cmd, b"", Duration::from_secs(120));
    (code, format!("{out}{err}"))
}

/// The replicas of each partition in `/brokers/topics/<topic>`, and whether any partition still
/// lists adding or removing replicas.
fn assignment(cluster: &TestCluster) -> (serde_json::Value, bool) {
    let (data, _) = cluster.get(&format!("/brokers/topics/{TOPIC}")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&data).unwrap();
    let moving = ["adding_replicas", "removing_replicas"]
        .iter()
        .any(|k| json[k].as_object().is_some_and(|m| !m.is_empty()));
    (json["partitions"].clone(), moving)
}

#[test]
fn kafkas_reassign_tool_moves_partitions_under_load_and_nothing_acknowledged_is_lost() {
    let cluster = TestCluster::start(
        4,
        &[
            ("min.insync.replicas", "2"),
            // The controller's first imbalance check, 5 s after it took over, would move
            // partition 1 to its new preferred replica 3 if the reassignment finished before
            // it: the leaders asserted below are the reassignment's own choice.
            ("auto.leader.rebalance.enable", "false"),
        ],
    );
    create_topic_assigned(&cluster, TOPIC, &[&[1, 2, 3], &[2, 3, 1]]);
    let load = ProduceLoad::start(&cluster.bootstrap(), TOPIC, 2);
    load.wait_for_more_acks(500, Duration::from_secs(60));

    // The plan is kcli's: Kafka's algorithm over brokers 2-4 from start index 0. Partition 0
    // leaves broker 1, its leader; partition 1 keeps its leader 2 and swaps 1 for 4.
    let scratch = tempfile::tempdir().unwrap();
    let topics = scratch.path().join("topics.json");
    std::fs::write(
        &topics,
        format!(r#"{{"topics":[{{"topic":"{TOPIC}"}}],"version":1}}"#),
    )
    .unwrap();
    let connect = cluster.connect();
    let (code, proposal, err) = crate::assign::assign(&[
        "--zookeeper",
        &connect,
        "--topics-to-move-json",
        topics.to_str().unwrap(),
        "--broker-list",
        "2,3,4",
        "--start-index",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        proposal.trim(),
        format!(
            r#"{{"version":1,"partitions":[{{"topic":"{TOPIC}","partition":0,"replicas":[2,3,4],"log_dirs":["any","any","any"]}},{{"topic":"{TOPIC}","partition":1,"replicas":[3,4,2],"log_dirs":["any","any","any"]}}]}}"#
        )
    );
    let plan = scratch.path().join("plan.json");
    std::fs::write(&plan, proposal).unwrap();
    let plan = plan.display().to_string();
    let (code, out) = reassign_tool(&cluster, &["--reassignment-json-file", &plan, "--execute"]);
    assert_eq!(code, 0, "{out}\n{}", cluster.logs());
    assert!(
        out.contains(&format!(
            r#"{{"version":1,"partitions":[{{"topic":"{TOPIC}","partition":0,"replicas":[1,2,3],"log_dirs":["any","any","any"]}},{{"topic":"{TOPIC}","partition":1,"replicas":[2,3,1],"log_dirs":["any","any","any"]}}]}}"#
        )),
        "the rollback plan is the current assignment: {out}"
    );
    assert!(
        out.contains(&format!(
            "Successfully started partition reassignments for {TOPIC}-0,{TOPIC}-1"
        )),
        "{out}"
    );

    // --verify reports progress until both are done.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (code, out) = reassign_tool(&cluster, &["--reassignment-json-file", &plan, "--verify"]);
        assert_eq!(code, 0, "{out}");
        let done = [0, 1].iter().all(|p| {
            out.contains(&format!(
                "Reassignment of partition {TOPIC}-{p} is completed."
            ))
        });
        if done {
            break;
        }
        assert!(
            out.contains("is still in progress."),
            "neither completed nor in progress: {out}"
        );
        assert!(
            Instant::now() < deadline,
            "not completed in 120 s: {out}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    load.wait_for_more_acks(500, Duration::from_secs(60));
    let acked = load.finish(|| cluster.logs());

    let (partitions, moving) = assignment(&cluster);
    assert_eq!(
        partitions,
        serde_json::json!({"0": [2, 3, 4], "1": [3, 4, 2]})
    );
    assert!(!moving, "adding or removing replicas left in ZooKeeper");
    let mut isr0 = cluster.isr(TOPIC, 0).unwrap();
    isr0.sort();
    assert_eq!(isr0, vec![2, 3, 4]);
    let leader0 = metadata(cluster.port(2)).unwrap().topics[TOPIC].1[&0].leader;
    assert_eq!(leader0, 2, "the first target replica in the ISR leads");
    let leader1 = metadata(cluster.port(2)).unwrap().topics[TOPIC].1[&1].leader;
    assert_eq!(leader1, 2, "a leader inside the target keeps leading");
    // Broker 1 deleted the replicas it no longer hosts.
    for p in [0, 1] {
        let dir = cluster.brokers[0].data_dir().join(format!("{TOPIC}-{p}"));
        wait_until(
            "the removed replica deleted",
            Duration::from_secs(30),
            || (!Path::new(&dir).exists()).then_some(()),
        );
    }
    assert_every_acknowledged_record_consumed(&cluster.bootstrap(), TOPIC, &acked, || {
        cluster.logs()
    });
    wait_for_identical_replica_logs(&cluster, TOPIC, 0, &[2, 3, 4]);
    wait_for_identical_replica_logs(&cluster, TOPIC, 1, &[3, 4, 2]);

    // Nothing is in progress any more.
    let (code, out) = reassign_tool(&cluster, &["--list"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("No partition reassignments found."), "{out}");
}
