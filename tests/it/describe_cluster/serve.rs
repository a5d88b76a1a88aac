//! `kcli describe-cluster` on a default `kcli serve` (its metadata in the embedded store of its
//! data dir, no ZooKeeper): `--data-dir` while the broker runs and after it stopped, and
//! `--bootstrap-server` through the broker itself; what each cannot know is left out.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

use serde_json::Value;

use super::RUN_LIMIT;
use crate::serve_support::{KafkaConn, TestBroker, create_topic_with, run_within};

fn describe_with(args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("describe-cluster").args(args);
    run_within(cmd, b"", RUN_LIMIT)
}

fn json_with(args: &[&str]) -> (i32, Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = describe_with(&all);
    let json = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, json)
}

/// Every entry of the data dir with its length and modification time: describe-cluster must
/// leave them all as they are.
fn entries(dir: &Path) -> BTreeMap<String, (u64, SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                (meta.len(), meta.modified().unwrap()),
            )
        })
        .collect()
}

/// Topic → partition → (leader, isr) in describe-cluster's JSON.
fn leaders(json: &Value) -> BTreeMap<(String, i64), (Value, Value)> {
    let mut out = BTreeMap::new();
    for t in json["topics"].as_array().unwrap() {
        for p in t["partitions"].as_array().unwrap() {
            out.insert(
                (
                    t["name"].as_str().unwrap().to_string(),
                    p["partition"].as_i64().unwrap(),
                ),
                (p["leader"].clone(), p["isr"].clone()),
            );
        }
    }
    out
}

fn topic<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no topic {name}: {json}"))
}

#[test]
fn a_single_node_broker_is_described_from_its_data_dir_and_through_itself() {
    let mut broker = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(broker.port());
    create_topic_with(&mut conn, "orders", 2, &[("min.insync.replicas", "1")]);
    create_topic_with(&mut conn, "plain", 1, &[]);
    drop(conn);
    let data = broker.data_dir();
    let dir = data.to_str().unwrap();
    let before = entries(&data);

    // On disk, beside the running broker.
    let (code, out, err) = describe_with(&["--data-dir", dir]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Brokers: broker 0 runs on this dir"), "{out}");
    assert!(out.contains("Controller: not kept on disk"), "{out}");
    assert!(out.contains("3 partitions shown\n"), "{out}");
    let (code, on_disk) = json_with(&["--data-dir", dir]);
    assert_eq!(code, 0);
    assert_eq!(on_disk["brokers"], serde_json::json!([{"id": 0}]));
    assert!(on_disk["controller"].get("id").is_none(), "{on_disk}");
    assert!(
        on_disk["controller"]["epoch"].as_i64().unwrap() >= 1,
        "{on_disk}"
    );
    let orders = topic(&on_disk, "orders");
    assert_eq!(orders["configs"]["min.insync.replicas"], "1");
    assert!(
        orders["partitions"][0]["partition_epoch"].is_i64(),
        "{orders}"
    );
    assert!(orders["topic_id"].is_string());

    // Through the broker: the same partitions, leaders and configs.
    let bootstrap = broker.bootstrap();
    let (code, out, err) = describe_with(&["--bootstrap-server", &bootstrap]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Controller: broker 0\n"), "{out}");
    assert!(!out.contains("broker epoch"), "{out}");
    let (code, live) = json_with(&["--bootstrap-server", &bootstrap]);
    assert_eq!(code, 0);
    assert_eq!(live["cluster_id"], on_disk["cluster_id"]);
    assert_eq!(live["controller"], serde_json::json!({"id": 0}));
    assert_eq!(
        live["brokers"],
        serde_json::json!([{"id": 0, "host": "127.0.0.1", "port": broker.port(), "rack": null}])
    );
    assert_eq!(leaders(&live), leaders(&on_disk));
    let orders = topic(&live, "orders");
    assert_eq!(orders["topic_id"], topic(&on_disk, "orders")["topic_id"]);
    assert_eq!(orders["configs"], topic(&on_disk, "orders")["configs"]);
    for key in [
        "partition_epoch",
        "adding_replicas",
        "removing_replicas",
        "leader_recovery_state",
    ] {
        assert!(
            orders["partitions"][0].get(key).is_none(),
            "{key}: {orders}"
        );
    }
    assert_eq!(orders["partitions"][0]["leader"], 0);

    assert_eq!(
        entries(&data),
        before,
        "describe-cluster changed the data dir"
    );

    // Stopped: the store is all there is, and no broker leads the partitions.
    broker.stop();
    let stopped = entries(&data);
    let (code, out, err) = describe_with(&["--data-dir", dir]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("Brokers: none runs on this dir"), "{out}");
    assert!(out.contains("3 OFFLINE"), "{out}");
    let (_, after) = json_with(&["--data-dir", dir]);
    assert_eq!(after["brokers"], serde_json::json!([]));
    assert_eq!(leaders(&after), leaders(&on_disk));
    assert_eq!(
        entries(&data),
        stopped,
        "describe-cluster changed the data dir"
    );
    // The broker starts again on the dir describe-cluster read: no lock was left behind.
    broker.restart();
}

#[test]
fn exactly_one_source_is_given() {
    let (code, _, err) =
        describe_with(&["--data-dir", "/nonexistent", "--bootstrap-server", "h:1"]);
    assert_eq!(code, 2);
    let first = err.lines().next().unwrap();
    assert!(
        first.contains("--data-dir") && first.contains("--bootstrap-server"),
        "{err}"
    );
    let (code, _, err) = describe_with(&[]);
    assert_eq!(code, 2);
    for flag in ["--zookeeper", "--data-dir", "--bootstrap-server"] {
        assert!(err.contains(flag), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = describe_with(&["--data-dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no embedded metadata store"), "{err}");
}
