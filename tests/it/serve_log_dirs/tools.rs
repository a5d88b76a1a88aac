//! Kafka's own tools and Admin client on the log dirs: `kafka-log-dirs.sh --describe`
//! (`org.apache.kafka.tools.LogDirsCommand`), the Java Admin client's `describeLogDirs`,
//! `describeReplicaLogDirs` and `alterReplicaLogDirs` (tests/clients/java/LogDirsCheck.java),
//! and `kafka-reassign-partitions.sh --execute` with a `log_dirs` plan.

use std::process::Command;

use super::*;
use crate::serve_clients::drivers::run_java_driver;
use crate::serve_support::{batch_of, produce_request, produce_result, run_within};

const TOOL_LIMIT: Duration = Duration::from_secs(120);

fn kafka_tool(class: &str, args: &[&str]) -> (i32, String, String) {
    let jars = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/kafka-3.9.1");
    assert!(
        jars.join(".complete").exists(),
        "Kafka 3.9.1's jars are missing from {}: run tests/install-kafka-tools",
        jars.display()
    );
    let mut cmd = Command::new("java");
    cmd.args([
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xmx256m",
        "-cp",
    ])
    .arg(format!("{}/*", jars.display()))
    .arg(class)
    .args(args);
    run_within(cmd, b"", TOOL_LIMIT)
}

#[test]
fn kafka_log_dirs_and_the_java_admin_client_describe_and_move() {
    let (tmp, a, b) = two_dirs();
    let mut broker = broker_on(&[&a, &b], &[]);
    let mut c = KafkaConn::connect(broker.port());
    auto_create_topic(&mut c, "tooled");
    let values: Vec<Vec<u8>> = (0..5).map(|i| vec![i; 100]).collect();
    assert_eq!(
        produce_result(&c.call(&produce_request("tooled", 0, batch_of(&values), 1), 9)),
        (0, 0)
    );

    let (code, out, err) = kafka_tool(
        "org.apache.kafka.tools.LogDirsCommand",
        &[
            "--bootstrap-server",
            &broker.bootstrap(),
            "--describe",
            "--topic-list",
            "tooled",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Querying brokers for log directories information"),
        "{out}"
    );
    assert!(
        out.contains("Received log directory information from brokers 0"),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(json["version"], 1, "{json}");
    assert_eq!(json["brokers"][0]["broker"], 0, "{json}");
    let dirs = json["brokers"][0]["logDirs"].as_array().unwrap();
    let by_path = |p: &Path| {
        dirs.iter()
            .find(|d| d["logDir"] == p.display().to_string())
            .unwrap_or_else(|| panic!("{} missing: {json}", p.display()))
    };
    assert_eq!(by_path(&a)["error"], serde_json::Value::Null, "{json}");
    let partitions = by_path(&a)["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 1, "{json}");
    assert_eq!(partitions[0]["partition"], "tooled-0");
    assert_eq!(partitions[0]["offsetLag"], 0);
    assert_eq!(partitions[0]["isFuture"], false);
    assert!(partitions[0]["size"].as_i64().unwrap() > 500, "{json}");
    assert!(
        by_path(&b)["partitions"].as_array().unwrap().is_empty(),
        "{json}"
    );

    let s = run_java_driver(
        "LogDirsCheck",
        &[
            &broker.bootstrap(),
            "tooled",
            &a.display().to_string(),
            &b.display().to_string(),
        ],
        tmp.path(),
    );
    assert_eq!(s["bad_dir_error"], "LogDirNotFoundException", "{s}");
    assert!(partition_entries(&b).contains(&"tooled-0".to_string()));
    broker.stop();
}

/// `kafka-reassign-partitions.sh --execute` with a plan that only changes a log dir: the tool
/// lists the reassignments in progress (ListPartitionReassignments), submits the unchanged
/// replicas (AlterPartitionReassignments, which completes at once), then moves the replica
/// between log dirs (AlterReplicaLogDirs), and `--verify` sees both done.
#[test]
fn kafka_reassign_partitions_moves_a_replica_to_the_log_dir_of_its_plan() {
    let (tmp, a, b) = two_dirs();
    let mut broker = broker_on(&[&a, &b], &[]);
    let mut c = KafkaConn::connect(broker.port());
    auto_create_topic(&mut c, "planned");
    let plan = tmp.path().join("plan.json");
    std::fs::write(
        &plan,
        format!(
            r#"{{"version":1,"partitions":[{{"topic":"planned","partition":0,"replicas":[0],"log_dirs":["{}"]}}]}}"#,
            b.display()
        ),
    )
    .unwrap();
    let plan = plan.display().to_string();
    let reassign = |mode: &str| {
        kafka_tool(
            "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
            &[
                "--bootstrap-server",
                &broker.bootstrap(),
                "--reassignment-json-file",
                &plan,
                mode,
            ],
        )
    };
    let (code, out, err) = reassign("--execute");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Successfully started partition reassignment for planned-0"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "Successfully started moving log directory to {} for replica planned-0 with broker 0",
            b.display()
        )),
        "{out}"
    );
    wait_moved(&mut c, "planned", 0, &b, Duration::from_secs(30));
    let (code, out, err) = reassign("--verify");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Reassignment of partition planned-0 is completed."),
        "{out}"
    );
    assert!(
        out.contains("Reassignment of replica planned-0-0 completed successfully."),
        "{out}"
    );
    broker.stop();
}
