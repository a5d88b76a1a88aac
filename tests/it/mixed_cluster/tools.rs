//! Kafka 3.9.1's own tools and kcli's on one mixed cluster: `kcli assign` proposes spreading a
//! topic over every broker, `kafka-reassign-partitions --execute/--verify` carries the plan out
//! through Kafka's controller (the new replicas, one of them kcli, catch up from leaders of both
//! kinds), and `kafka-topics --describe` (over the brokers) and `kcli describe-cluster` (over
//! ZooKeeper) then agree on every partition's leader, replicas and ISR.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::{assert_identical_replicas, create_topic, kafka_tool, produce, reassign};
use crate::serve_support::run_within;
use crate::support::cluster::wait_until;
use crate::support::mixed_cluster::MixedCluster;

const TOPIC: &str = "placed";
/// Brokers 1 (Kafka) and 2 (kcli) only: broker 3 (kcli) holds nothing before the move.
const BEFORE: &[&[i32]] = &[&[1, 2], &[2, 1], &[1, 2], &[2, 1]];

/// Leader, replicas and ISR of each partition.
type Placement = BTreeMap<i32, (i32, Vec<i32>, Vec<i32>)>;

fn kcli(args: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.args(args);
    let (code, stdout, stderr) = run_within(cmd, b"", Duration::from_secs(60));
    assert_eq!(code, 0, "kcli {args:?}:\n{stdout}{stderr}");
    stdout
}

fn ints(v: &Value) -> Vec<i32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| i32::try_from(x.as_i64().unwrap()).unwrap())
        .collect()
}

/// `kcli describe-cluster --format json` of the topic.
fn described(cluster: &MixedCluster) -> Placement {
    let out = kcli(&[
        "describe-cluster",
        "--zookeeper",
        &cluster.connect(),
        "--topic",
        TOPIC,
        "--format",
        "json",
    ]);
    let json: Value = serde_json::from_str(&out).unwrap();
    json["topics"][0]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                i32::try_from(p["partition"].as_i64().unwrap()).unwrap(),
                (
                    i32::try_from(p["leader"].as_i64().unwrap()).unwrap(),
                    ints(&p["replicas"]),
                    ints(&p["isr"]),
                ),
            )
        })
        .collect()
}

/// `kafka-topics --describe` of the topic: its `Partition: N Leader: L Replicas: a,b Isr: a,b`
/// lines.
fn kafka_topics_describe(cluster: &MixedCluster) -> Placement {
    let bootstrap = cluster.bootstrap();
    let out = kafka_tool(
        "org.apache.kafka.tools.TopicCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--describe",
            "--topic",
            TOPIC,
        ],
    );
    let list = |s: &str| -> Vec<i32> { s.split(',').map(|x| x.parse().unwrap()).collect() };
    out.lines()
        .filter(|l| l.trim_start().starts_with("Topic:") && l.contains("Partition:"))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let after = |key: &str| {
                let at = words.iter().position(|w| *w == key).unwrap();
                words[at + 1]
            };
            (
                after("Partition:").parse().unwrap(),
                (
                    after("Leader:").parse().unwrap(),
                    list(after("Replicas:")),
                    list(after("Isr:")),
                ),
            )
        })
        .collect()
}

#[test]
fn kcli_assign_plans_kafkas_reassign_tool_moves_and_both_describe_alike() {
    let cluster = MixedCluster::start(&[1], &[2, 3], &[]);
    create_topic(&cluster, TOPIC, BEFORE, &[]);
    produce(&cluster, TOPIC, 4, 400);

    // kcli's proposal over all three brokers, from the live cluster's ZooKeeper.
    let dir = tempfile::tempdir().unwrap();
    let topics = dir.path().join("topics.json");
    std::fs::write(
        &topics,
        format!(r#"{{"topics":[{{"topic":"{TOPIC}"}}],"version":1}}"#),
    )
    .unwrap();
    let plan_text = kcli(&[
        "assign",
        "--zookeeper",
        &cluster.connect(),
        "--topics-to-move-json",
        &topics.display().to_string(),
        "--broker-list",
        "1,2,3",
        "--seed",
        "7",
        "--format",
        "json",
    ]);
    let plan: Value = serde_json::from_str(&plan_text).unwrap();
    let wanted: BTreeMap<i32, Vec<i32>> = plan["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                i32::try_from(p["partition"].as_i64().unwrap()).unwrap(),
                ints(&p["replicas"]),
            )
        })
        .collect();
    assert_eq!(wanted.len(), BEFORE.len(), "{plan_text}");
    assert!(
        wanted.values().any(|r| r.contains(&3)),
        "the plan uses broker 3: {plan_text}"
    );
    let plan_file = dir.path().join("plan.json");
    std::fs::write(&plan_file, &plan_text).unwrap();
    let moved: Vec<(&str, i32)> = (0..4).map(|p| (TOPIC, p)).collect();
    reassign(&cluster, &plan_file, &moved);

    // Both tools agree, and show the plan carried out with every replica in sync.
    let by_kcli = wait_until("every ISR whole", Duration::from_secs(60), || {
        let d = described(&cluster);
        d.values()
            .all(|(_, replicas, isr)| {
                let mut isr = isr.clone();
                isr.sort_unstable();
                let mut replicas = replicas.clone();
                replicas.sort_unstable();
                isr == replicas
            })
            .then_some(d)
    });
    for (p, (leader, replicas, _)) in &by_kcli {
        assert_eq!(replicas, &wanted[p], "partition {p} as planned");
        assert!(replicas.contains(leader), "partition {p} led by a replica");
    }
    let by_kafka = wait_until(
        "kafka-topics --describe as ZooKeeper has it",
        Duration::from_secs(30),
        || {
            let k = kafka_topics_describe(&cluster);
            let same = k.iter().all(|(p, (l, r, isr))| {
                let (dl, dr, disr) = &by_kcli[p];
                let mut a = isr.clone();
                a.sort_unstable();
                let mut b = disr.clone();
                b.sort_unstable();
                l == dl && r == dr && a == b
            });
            (k.len() == by_kcli.len() && same).then_some(k)
        },
    );
    assert_eq!(by_kafka.len(), 4);
    for (p, replicas) in &wanted {
        assert_identical_replicas(&cluster, TOPIC, *p, replicas);
    }
}
