//! `kcli assign` as a process: offline proposals (Kafka's documented examples through the
//! binary, text and JSON, the draws printed and repeatable), its errors (exit 2, one line naming
//! the culprit); Kafka 3.9's own AdminUtils as the oracle (`kafka_oracle.rs`); live inputs and
//! the legacy znode against a real ZooKeeper (`zookeeper.rs`); proposals, bytes moved and
//! reassignments on a live kcli cluster (`cluster.rs`).

mod cluster;
mod kafka_oracle;
mod zookeeper;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::serve_support::run_within;

/// Generous for a process on a shared machine; network calls are bounded by the command.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Runs `kcli assign <args>`: (exit code, stdout, stderr).
pub fn assign(args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("assign").args(args);
    run_within(cmd, b"", RUN_LIMIT)
}

/// The proposal of a `--format json` run, as partition → replicas, after checking Kafka's
/// layout (key order, log_dirs "any", sorted by topic then partition).
pub fn proposal(stdout: &str) -> Vec<(String, i64, Vec<i64>)> {
    let line = stdout.trim_end();
    assert!(
        line.starts_with(r#"{"version":1,"partitions":["#),
        "{stdout}"
    );
    let json: Value = serde_json::from_str(line).unwrap();
    let mut out = Vec::new();
    for p in json["partitions"].as_array().unwrap() {
        let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 4, "{p}");
        let replicas: Vec<i64> = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_i64().unwrap())
            .collect();
        let dirs = p["log_dirs"].as_array().unwrap();
        assert_eq!(dirs.len(), replicas.len());
        assert!(dirs.iter().all(|d| d == "any"));
        out.push((
            p["topic"].as_str().unwrap().to_string(),
            p["partition"].as_i64().unwrap(),
            replicas,
        ));
    }
    let mut sorted = out.clone();
    sorted.sort();
    assert_eq!(out, sorted, "sorted by topic then partition");
    out
}

fn replicas_of(stdout: &str) -> Vec<Vec<i64>> {
    proposal(stdout).into_iter().map(|(_, _, r)| r).collect()
}

#[test]
fn kafkas_documented_examples_through_the_binary() {
    let (code, out, err) = assign(&[
        "--brokers",
        "0,1,2,3,4",
        "--partitions",
        "10",
        "--replication-factor",
        "3",
        "--start-index",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        replicas_of(&out),
        [
            [0, 1, 2],
            [1, 2, 3],
            [2, 3, 4],
            [3, 4, 0],
            [4, 0, 1],
            [0, 2, 3],
            [1, 3, 4],
            [2, 4, 0],
            [3, 0, 1],
            [4, 1, 2]
        ]
    );
    assert!(
        err.contains("Topic topic: start index 0, replica shift 0"),
        "{err}"
    );
    assert!(!err.contains("Seed"), "nothing was drawn: {err}");

    let (code, out, err) = assign(&[
        "--racks",
        "0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1",
        "--partitions",
        "7",
        "--replication-factor",
        "3",
        "--start-index",
        "0",
        "--topic",
        "orders",
    ]);
    assert_eq!(code, 0, "{err}");
    for row in [
        "│ orders ┆         0 ┆ 0,3,1    ┆ rack1,rack2,rack3 │",
        "│ orders ┆         5 ┆ 2,0,3    ┆ rack3,rack1,rack2 │",
        "│ orders ┆         6 ┆ 0,4,2    ┆ rack1,rack2,rack3 │",
    ] {
        assert!(out.contains(row), "{row} missing:\n{out}");
    }
    assert!(
        out.contains("│ rack1 ┆       2 ┆        7 ┆       3 │"),
        "{out}"
    );
    assert!(
        out.contains("Largest skew between brokers: 1 replica and 1 leader; between racks: 0 replicas and 1 leader"),
        "{out}"
    );
    let json = out
        .lines()
        .skip_while(|l| *l != "Proposed partition reassignment configuration")
        .nth(1)
        .unwrap();
    assert_eq!(replicas_of(json)[6], [0, 4, 2]);
}

#[test]
fn kafkas_unbalanced_output_with_uneven_racks_is_reproduced_and_shown() {
    let (code, out, err) = assign(&[
        "--racks",
        "0:a,1:a,2:b",
        "--partitions",
        "6",
        "--replication-factor",
        "2",
        "--seed",
        "11",
    ]);
    assert_eq!(code, 0, "{err}");
    // Broker 2 is alone on rack b, which every partition needs.
    assert!(out.contains("│      2 ┆ b    ┆        6 ┆"), "{out}");
    assert!(
        out.contains("Largest skew between brokers: 4 replicas"),
        "{out}"
    );
}

#[test]
fn draws_are_printed_and_repeat() {
    let base = [
        "--brokers",
        "1,2,3,4,5,6,7",
        "--partitions",
        "20",
        "--replication-factor",
        "3",
        "--format",
        "json",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let (code, out, err) = assign(&args);
        assert_eq!(code, 0, "{err}");
        (out, err)
    };
    let (first, err) = with(&["--seed", "-7"]);
    let (again, _) = with(&["--seed", "-7"]);
    assert_eq!(first, again);
    assert!(
        err.contains("Seed: -7 (--seed -7 repeats these draws)"),
        "{err}"
    );
    // The printed draws give the same proposal when fixed.
    let draws = err
        .lines()
        .find_map(|l| l.strip_prefix("Topic topic: start index "))
        .unwrap();
    let (start, shift) = draws.split_once(", replica shift ").unwrap();
    let (fixed, _) = with(&["--start-index", start, "--replica-shift", shift]);
    assert_eq!(fixed, first);
    // Unseeded runs print the seed they drew, which repeats them.
    let (random, err) = with(&[]);
    let seed = err
        .lines()
        .find_map(|l| l.strip_prefix("Seed: "))
        .and_then(|l| l.split(' ').next())
        .unwrap()
        .to_string();
    let (repeated, _) = with(&["--seed", &seed]);
    assert_eq!(repeated, random);
    // --replica-shift alone fixes the shift only.
    let (_, err) = with(&["--seed", "5", "--replica-shift", "4"]);
    assert!(err.contains(", replica shift 4"), "{err}");
}

#[test]
fn errors_exit_2_with_one_line_naming_the_culprit() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--brokers",
                "0,1",
                "--partitions",
                "3",
                "--replication-factor",
                "3",
            ],
            "Replication factor: 3 larger than available brokers: 2.",
        ),
        (
            &[
                "--brokers",
                "0,1,0",
                "--partitions",
                "3",
                "--replication-factor",
                "1",
            ],
            "--brokers: broker 0 is listed twice",
        ),
        (
            &[
                "--racks",
                "0:a,0:b",
                "--partitions",
                "3",
                "--replication-factor",
                "1",
            ],
            "--racks: broker 0 is listed twice",
        ),
        (
            &[
                "--racks",
                "0:a,1",
                "--partitions",
                "3",
                "--replication-factor",
                "1",
            ],
            "--racks: '1' is not BROKER:RACK",
        ),
        (
            &[
                "--brokers",
                "0,1,2",
                "--racks",
                "0:a,1:b",
                "--partitions",
                "3",
                "--replication-factor",
                "1",
            ],
            "not all brokers have rack information (no rack: 2)",
        ),
        (
            &[
                "--brokers",
                "0,1",
                "--partitions",
                "0",
                "--replication-factor",
                "1",
            ],
            "--partitions",
        ),
        (
            &[
                "--brokers",
                "0,1",
                "--partitions",
                "2",
                "--replication-factor",
                "0",
            ],
            "--replication-factor",
        ),
        (
            &["--brokers", "0,1"],
            "--partitions and --replication-factor are required",
        ),
        (
            &["--partitions", "1", "--replication-factor", "1"],
            "no brokers",
        ),
    ];
    for (args, expected) in cases {
        let (code, out, err) = assign(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        // Ours are one line; clap's usage errors add their usage lines.
        if err.starts_with("kcli: ") {
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("topics.json");
    std::fs::write(&bad, r#"{"topics":[{"topic":"a"}],"version":2}"#).unwrap();
    let (code, _, err) = assign(&[
        "--topics-to-move-json",
        bad.to_str().unwrap(),
        "--zookeeper",
        "127.0.0.1:1",
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        format!(
            "kcli: --topics-to-move-json {}: Not supported version field value 2",
            bad.display()
        )
    );
    std::fs::write(&bad, "{").unwrap();
    let (code, _, err) = assign(&[
        "--topics-to-move-json",
        bad.to_str().unwrap(),
        "--bootstrap-server",
        "127.0.0.1:1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not valid JSON"), "{err}");
    let (code, _, err) = assign(&["--topics-to-move-json", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("needs --zookeeper or --bootstrap-server"),
        "{err}"
    );
    // A reassignment file with a real log dir, one Kafka's checks refuse, and one for a broker
    // that is not there (nothing listens on port 1): each an exit 2 naming the culprit.
    let plan = dir.path().join("plan.json");
    let run_plan = |json: &str, mode: &str| {
        std::fs::write(&plan, json).unwrap();
        assign(&[
            mode,
            "--reassignment-json",
            plan.to_str().unwrap(),
            "--bootstrap-server",
            "127.0.0.1:1",
            "--connection-timeout-ms",
            "2000",
        ])
    };
    let (code, _, err) = run_plan(
        r#"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/data"]}]}"#,
        "--execute",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("t-0: log_dirs other than \"any\" are not supported"),
        "{err}"
    );
    let (code, _, err) = run_plan(
        r#"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}"#,
        "--execute",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1"),
        "{err}"
    );
    let (code, _, err) = run_plan(
        r#"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}"#,
        "--verify",
    );
    assert_eq!(code, 2);
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
