//! Kafka 3.9.1's own `AdminUtils` (and `ReassignPartitionsCommand.formatAsReassignmentJson`)
//! as the oracle, through `tests/fixtures/java/AssignmentOracle.java`: seeded random cases
//! (brokers in any order, with and without racks, uneven racks, fixed start indexes, partition
//! ids from an existing count) give the same assignment as kcli's; Kafka's own random draws
//! land on one of kcli's (start, shift) pairs; the rack-alternated lists and the JSON agree; so
//! do the refusals. Needs a JDK and Kafka's jars (tests/install-kafka-tools); never skips.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::Stdio;

use kcli::admin::rack_aware::get_rack_alternated_broker_list;
use kcli::admin::random::{AssignmentStart, JavaRandom};
use kcli::admin::reassignment_json::format_reassignment_json;
use kcli::admin::replica_assignment::{Assignment, BrokerMetadata, assign_replicas_to_brokers};
use kcli::cluster::TopicPartition;

use crate::kafka_tools::support::{java, repo};

/// Runs the oracle over `lines`, one answer per line.
fn oracle(lines: &[String]) -> Vec<String> {
    let src = repo().join("tests/fixtures/java/AssignmentOracle.java");
    let mut child = java(src.to_str().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let answers: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(answers.len(), lines.len(), "the oracle stopped early");
    answers
}

fn brokers_arg(brokers: &[BrokerMetadata]) -> String {
    brokers
        .iter()
        .map(|b| match &b.rack {
            Some(r) => format!("{}:{r}", b.id),
            None => b.id.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn answer(result: Result<Assignment, impl std::fmt::Display>) -> String {
    match result {
        Ok(a) => a
            .iter()
            .map(|(p, r)| {
                let ids: Vec<String> = r.iter().map(i32::to_string).collect();
                format!("{p}={}", ids.join(","))
            })
            .collect::<Vec<_>>()
            .join(";"),
        Err(e) => format!("ERR {e}"),
    }
}

/// A seeded random broker list: distinct ids in shuffled order, racks none, all (often uneven),
/// or (rarely) only some.
fn brokers(rng: &mut JavaRandom) -> Vec<BrokerMetadata> {
    let n = 1 + rng.next_index(9);
    let racks = rng.next_index(5);
    let partial = rng.next_index(10) == 0;
    let mut ids: Vec<i32> = (0..30).collect();
    let mut out = Vec::new();
    for i in 0..n {
        let id = ids.remove(rng.next_index(ids.len()));
        let rack = if racks == 0 || (partial && i == 0) {
            None
        } else {
            Some(format!("rack-{}", rng.next_index(racks)))
        };
        out.push(BrokerMetadata { id, rack });
    }
    out
}

#[test]
fn kafkas_admin_utils_agrees() {
    let mut rng = JavaRandom::new(2024);
    let mut lines = Vec::new();
    let mut ours = Vec::new();
    let mut random_cases = Vec::new();
    for case in 0..1500 {
        let list = brokers(&mut rng);
        let n = list.len();
        let partitions = 1 + rng.next_index(40);
        let rf = 1 + rng.next_index(n + 1);
        let start_partition = rng.next_index(25) as i32 - 1;
        let partitions = i32::try_from(partitions).unwrap();
        let rf_i = i32::try_from(rf).unwrap();
        if case % 5 == 4 {
            // Kafka's own random draws: one of kcli's (start, shift) pairs must give them.
            lines.push(format!(
                "ASSIGN {} {partitions} {rf_i} -1 {start_partition}",
                brokers_arg(&list)
            ));
            random_cases.push((lines.len() - 1, list, partitions, rf_i, start_partition));
            ours.push(None);
            continue;
        }
        let fixed = rng.next_index(2 * n);
        lines.push(format!(
            "ASSIGN {} {partitions} {rf_i} {fixed} {start_partition}",
            brokers_arg(&list)
        ));
        ours.push(Some(answer(assign_replicas_to_brokers(
            &list,
            partitions,
            rf_i,
            AssignmentStart::fixed(fixed),
            start_partition,
        ))));
    }
    let answers = oracle(&lines);
    let mut failures = Vec::new();
    for ((line, theirs), ours) in lines.iter().zip(&answers).zip(&ours) {
        if let Some(ours) = ours
            && ours != theirs
        {
            failures.push(format!("{line}\n  kafka {theirs}\n  kcli  {ours}"));
        }
    }
    for (i, list, partitions, rf, first) in &random_cases {
        let theirs = &answers[*i];
        if theirs.starts_with("ERR ") {
            let ours = answer(assign_replicas_to_brokers(
                list,
                *partitions,
                *rf,
                AssignmentStart::fixed(0),
                *first,
            ));
            if &ours != theirs {
                failures.push(format!("{}\n  kafka {theirs}\n  kcli  {ours}", lines[*i]));
            }
            continue;
        }
        let n = list.len();
        let found = (0..n).any(|start_index| {
            (0..n).any(|replica_shift| {
                let start = AssignmentStart {
                    start_index,
                    replica_shift,
                };
                let ours = assign_replicas_to_brokers(list, *partitions, *rf, start, *first);
                answer(ours) == *theirs
            })
        });
        if !found {
            failures.push(format!("{}: no draws give Kafka's {theirs}", lines[*i]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        lines.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    // The refusals were exercised too.
    assert!(
        answers
            .iter()
            .any(|a| a.starts_with("ERR Replication factor"))
    );
    assert!(answers.iter().any(|a| a.starts_with("ERR Not all brokers")));
}

#[test]
fn rack_alternated_lists_and_reassignment_json_agree() {
    let mut rng = JavaRandom::new(77);
    let mut lines = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..200 {
        let mut racks = BTreeMap::new();
        for b in brokers(&mut rng) {
            let rack = b.rack.unwrap_or_else(|| "r".into());
            racks.insert(b.id, rack);
        }
        let pairs: Vec<String> = racks.iter().map(|(id, r)| format!("{id}:{r}")).collect();
        lines.push(format!("ALT {}", pairs.join(",")));
        let alternated: Vec<String> = get_rack_alternated_broker_list(&racks)
            .iter()
            .map(i32::to_string)
            .collect();
        ours.push(alternated.join(","));
    }
    for _ in 0..50 {
        let mut parts = BTreeMap::new();
        for _ in 0..rng.next_index(6) {
            let topic = ["a", "b.x", "c-1", "_d"][rng.next_index(4)];
            let replicas: Vec<i32> = (0..1 + rng.next_index(3))
                .map(|_| i32::try_from(rng.next_index(9)).unwrap())
                .collect();
            let partition = i32::try_from(rng.next_index(12)).unwrap();
            parts.insert(TopicPartition::new(topic, partition), replicas);
        }
        let spec: Vec<String> = parts
            .iter()
            .map(|(tp, r)| {
                let ids: Vec<String> = r.iter().map(i32::to_string).collect();
                format!("{}:{}={}", tp.topic, tp.partition, ids.join(","))
            })
            .collect();
        lines.push(format!("JSON {}", spec.join(";")));
        ours.push(format_reassignment_json(&parts));
    }
    let answers = oracle(&lines);
    for ((line, theirs), ours) in lines.iter().zip(&answers).zip(&ours) {
        assert_eq!(theirs, ours, "{line}");
    }
}
