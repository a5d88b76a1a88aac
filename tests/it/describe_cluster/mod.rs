//! `kcli describe-cluster` as a process against a real ZooKeeper: hand-written znodes of every
//! version Kafka has written (brokers v1-v5, topics v1-v3, controller v1/v2, under a chroot),
//! every flag, the min ISR precedence, the filters, exit codes, JSON and text, an unreachable
//! ZooKeeper and malformed znodes (here); znodes written by a real Kafka 3.9.1 broker
//! (`kafka.rs`); a default `kcli serve` through `--data-dir` and `--bootstrap-server`
//! (`serve.rs`).

mod kafka;
mod serve;

use std::process::Command;
use std::time::{Duration, Instant};

use kcli::zk::ZkClient;
use serde_json::Value;

use crate::serve_support::run_within;
use crate::support::zookeeper::{ZkServer, write_znode};

/// Generous for a process on a shared machine; the command itself is bounded by its timeout.
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Runs `kcli describe-cluster --zookeeper <connect> <args>`: (exit code, stdout, stderr).
pub fn describe(connect: &str, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.args(["describe-cluster", "--zookeeper", connect])
        .args(args);
    run_within(cmd, b"", RUN_LIMIT)
}

/// [`describe`] with `--format json`, parsed; also returns the exit code.
pub fn describe_json(connect: &str, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = describe(connect, &all);
    let json = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, json)
}

/// The partition `p` of topic `t` in describe-cluster's JSON.
pub fn partition<'a>(json: &'a Value, t: &str, p: i64) -> &'a Value {
    json["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == t)
        .unwrap_or_else(|| panic!("no topic {t} in {json}"))["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["partition"] == p)
        .unwrap_or_else(|| panic!("no partition {t}-{p}"))
}

pub fn flags(json: &Value, t: &str, p: i64) -> Vec<String> {
    partition(json, t, p)["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

fn shown(json: &Value) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for t in json["topics"].as_array().unwrap() {
        for p in t["partitions"].as_array().unwrap() {
            out.push((
                t["name"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
            ));
        }
    }
    out
}

fn state(leader: i32, epoch: i32, isr: &str) -> String {
    format!(
        r#"{{"controller_epoch":7,"leader":{leader},"version":1,"leader_epoch":{epoch},"isr":{isr}}}"#
    )
}

/// The hand-written cluster under `/hw`: five brokers of versions 1 to 5, topics of versions 1
/// to 3 whose partitions carry every flag, topic and cluster-default configs.
async fn write_cluster(zk: &dyn ZkClient) {
    let w = |p: &'static str, d: String| async move { write_znode(zk, p, d.as_bytes()).await };
    w(
        "/cluster/id",
        r#"{"version":"1","id":"hand-written"}"#.into(),
    )
    .await;
    w(
        "/controller",
        r#"{"version":1,"brokerid":1,"timestamp":"1000"}"#.into(),
    )
    .await;
    w("/controller_epoch", "7".into()).await;
    w(
        "/brokers/ids/1",
        r#"{"version":1,"host":"h1","port":9091,"jmx_port":-1,"timestamp":"1001"}"#.into(),
    )
    .await;
    w("/brokers/ids/2", r#"{"version":2,"host":"h2","port":9092,"jmx_port":9999,"timestamp":"1002","endpoints":["PLAINTEXT://h2:9092"]}"#.into()).await;
    w("/brokers/ids/3", r#"{"version":3,"host":"h3","port":9093,"jmx_port":-1,"timestamp":"1003","endpoints":["PLAINTEXT://h3:9093"],"rack":"r3"}"#.into()).await;
    w("/brokers/ids/4", r#"{"listener_security_protocol_map":{"INTERNAL":"SASL_PLAINTEXT"},"endpoints":["INTERNAL://h4:9094"],"rack":"r4","jmx_port":-1,"host":null,"timestamp":"1004","port":-1,"version":4}"#.into()).await;
    w("/brokers/ids/5", r#"{"features":{"metadata.version":{"min_version":1,"max_version":21}},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},"endpoints":["PLAINTEXT://h5:9095","SSL://h5:9195"],"jmx_port":-1,"port":9095,"host":"h5","version":5,"timestamp":"1005"}"#.into()).await;
    // "old" (v1): healthy.
    w(
        "/brokers/topics/old",
        r#"{"version":1,"partitions":{"0":[1,2],"1":[2,1]}}"#.into(),
    )
    .await;
    w(
        "/brokers/topics/old/partitions/0/state",
        state(1, 3, "[1,2]"),
    )
    .await;
    w(
        "/brokers/topics/old/partitions/1/state",
        state(2, 0, "[2,1]"),
    )
    .await;
    // "mid" (v2): a reassignment adding 3 and removing 1.
    w("/brokers/topics/mid", r#"{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}}"#.into()).await;
    w(
        "/brokers/topics/mid/partitions/0/state",
        state(1, 1, "[1,2]"),
    )
    .await;
    // "new" (v3) with min.insync.replicas=3 of its own.
    w("/brokers/topics/new", r#"{"removing_replicas":{},"partitions":{"0":[1,2],"1":[9,1],"2":[1,2,3],"3":[1,2],"4":[1,2],"5":[1,2]},"topic_id":"ASNFZ4mrze8P7cuph2VDIQ","adding_replicas":{},"version":3}"#.into()).await;
    w(
        "/brokers/topics/new/partitions/0/state",
        state(-1, 2, "[1]"),
    )
    .await;
    w(
        "/brokers/topics/new/partitions/1/state",
        state(9, 1, "[9,1]"),
    )
    .await;
    w(
        "/brokers/topics/new/partitions/2/state",
        state(1, 0, "[1,2]"),
    )
    .await;
    w(
        "/brokers/topics/new/partitions/3/state",
        state(2, 4, "[1,2]"),
    )
    .await;
    w("/brokers/topics/new/partitions/4/state", r#"{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":5,"isr":[1],"leader_recovery_state":1}"#.into()).await;
    // new-5 has no state yet.
    w(
        "/config/topics/new",
        r#"{"version":1,"config":{"min.insync.replicas":"3","retention.ms":"1000"}}"#.into(),
    )
    .await;
    // "cfg": no topic override, so the cluster default (2) decides, not --min-isr.
    w(
        "/brokers/topics/cfg",
        r#"{"version":3,"partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{}}"#
            .into(),
    )
    .await;
    w("/brokers/topics/cfg/partitions/0/state", state(1, 0, "[1]")).await;
    w(
        "/config/brokers/<default>",
        r#"{"version":1,"config":{"min.insync.replicas":"2"}}"#.into(),
    )
    .await;
    // "gone": marked for deletion.
    w(
        "/brokers/topics/gone",
        r#"{"version":3,"partitions":{"0":[3]},"adding_replicas":{},"removing_replicas":{}}"#
            .into(),
    )
    .await;
    w(
        "/brokers/topics/gone/partitions/0/state",
        state(3, 0, "[3]"),
    )
    .await;
    w("/admin/delete_topics/gone", String::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_written_znodes_of_every_version_and_every_flag() {
    let server = ZkServer::start_async().await;
    let root = server.client("").await;
    write_znode(&root, "/hw", b"").await;
    let zk = server.client("/hw").await;
    write_cluster(&zk).await;
    // A second write makes old-0's partition epoch (its zkVersion) 1.
    write_znode(
        &zk,
        "/brokers/topics/old/partitions/0/state",
        state(1, 3, "[1,2]").as_bytes(),
    )
    .await;
    let connect = format!("{}/hw", server.connect_string());
    let (code, json) = tokio::task::spawn_blocking({
        let connect = connect.clone();
        move || describe_json(&connect, &[])
    })
    .await
    .unwrap();
    assert_eq!(code, 1, "offline and under-min-ISR partitions: {json}");
    assert_eq!(json["cluster_id"], "hand-written");
    assert_eq!(json["controller"], serde_json::json!({"id": 1, "epoch": 7}));
    let brokers = json["brokers"].as_array().unwrap();
    let ids: Vec<i64> = brokers.iter().map(|b| b["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    let czxid = zk
        .exists("/brokers/ids/3", false)
        .await
        .unwrap()
        .unwrap()
        .czxid;
    assert_eq!(
        brokers[2],
        serde_json::json!({"id": 3, "host": "h3", "port": 9093, "rack": "r3",
            "endpoints": ["PLAINTEXT://h3:9093"], "registration_time": 1003, "broker_epoch": czxid})
    );
    assert_eq!(
        brokers[0]["endpoints"],
        serde_json::json!(["PLAINTEXT://h1:9091"])
    );
    assert_eq!(
        (&brokers[3]["host"], &brokers[3]["port"]),
        (&Value::Null, &serde_json::json!(-1))
    );
    assert_eq!(
        brokers[3]["endpoints"],
        serde_json::json!(["INTERNAL://h4:9094"])
    );
    assert_eq!(
        brokers[4]["endpoints"],
        serde_json::json!(["PLAINTEXT://h5:9095", "SSL://h5:9195"])
    );
    assert_eq!(brokers[1]["rack"], Value::Null);
    // Topics by name, every field of one partition as in the znodes.
    let names: Vec<&str> = json["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cfg", "gone", "mid", "new", "old"]);
    assert_eq!(
        *partition(&json, "old", 0),
        serde_json::json!({"partition": 0, "leader": 1, "leader_epoch": 3, "partition_epoch": 1,
            "replicas": [1, 2], "isr": [1, 2], "adding_replicas": [], "removing_replicas": [],
            "leader_recovery_state": 0, "flags": []})
    );
    let new = json["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "new")
        .unwrap();
    assert_eq!(new["topic_id"], "ASNFZ4mrze8P7cuph2VDIQ");
    assert_eq!(
        new["configs"],
        serde_json::json!({"min.insync.replicas": "3", "retention.ms": "1000"})
    );
    let old = json["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "old")
        .unwrap();
    assert_eq!(
        (&old["topic_id"], &old["configs"]),
        (&Value::Null, &serde_json::json!({}))
    );
    // Every flag.
    assert!(flags(&json, "old", 1).is_empty());
    assert_eq!(flags(&json, "mid", 0), ["REASSIGNING"]);
    assert_eq!(
        partition(&json, "mid", 0)["adding_replicas"],
        serde_json::json!([3])
    );
    assert_eq!(
        partition(&json, "mid", 0)["removing_replicas"],
        serde_json::json!([1])
    );
    assert_eq!(
        flags(&json, "new", 0),
        ["OFFLINE", "UNDER-REPLICATED", "UNDER-MIN-ISR"]
    );
    // Leader 9 is not in /brokers/ids: offline, though its ISR is full.
    assert_eq!(flags(&json, "new", 1), ["OFFLINE"]);
    // Topic override 3 > cluster default 2: RF 3 with an ISR of 2 is under its min ISR.
    assert_eq!(
        flags(&json, "new", 2),
        ["UNDER-REPLICATED", "UNDER-MIN-ISR"]
    );
    assert_eq!(flags(&json, "new", 3), ["PREFERRED-NOT-LEADER"]);
    assert_eq!(
        flags(&json, "new", 4),
        ["UNDER-REPLICATED", "UNDER-MIN-ISR", "RECOVERING"]
    );
    assert_eq!(partition(&json, "new", 4)["leader_recovery_state"], 1);
    assert_eq!(
        flags(&json, "new", 5),
        ["OFFLINE", "UNDER-REPLICATED", "UNDER-MIN-ISR"]
    );
    assert_eq!(partition(&json, "new", 5)["leader"], Value::Null);
    // The cluster default (2) beats --min-isr's default (1).
    assert_eq!(
        flags(&json, "cfg", 0),
        ["UNDER-REPLICATED", "UNDER-MIN-ISR"]
    );
    assert_eq!(flags(&json, "gone", 0), ["MARKED-FOR-DELETION"]);

    // The filters and exit codes.
    let run = |args: &'static [&'static str]| {
        let connect = connect.clone();
        tokio::task::spawn_blocking(move || describe_json(&connect, args))
    };
    let (code, json) = run(&["--topic", "old", "--topic", "mid"]).await.unwrap();
    assert_eq!(
        (code, shown(&json)),
        (
            0,
            vec![("mid".into(), 0), ("old".into(), 0), ("old".into(), 1)]
        )
    );
    assert_eq!(
        json["brokers"].as_array().unwrap().len(),
        5,
        "brokers are always shown"
    );
    let (code, json) = run(&["--offline"]).await.unwrap();
    assert_eq!(
        (code, shown(&json)),
        (
            1,
            vec![("new".into(), 0), ("new".into(), 1), ("new".into(), 5)]
        )
    );
    let (code, json) = run(&["--under-replicated", "--topic", "new"])
        .await
        .unwrap();
    assert_eq!(
        (code, shown(&json)),
        (
            1,
            vec![
                ("new".into(), 0),
                ("new".into(), 2),
                ("new".into(), 4),
                ("new".into(), 5)
            ]
        )
    );
    let (code, json) = run(&["--offline", "--topic", "old"]).await.unwrap();
    assert_eq!((code, shown(&json)), (0, vec![]));
    let (code, json) = run(&[
        "--under-replicated",
        "--offline",
        "--topic",
        "cfg",
        "--topic",
        "gone",
    ])
    .await
    .unwrap();
    assert_eq!((code, shown(&json)), (1, vec![("cfg".into(), 0)]));
    let (code, _, err) = tokio::task::spawn_blocking({
        let connect = connect.clone();
        move || describe(&connect, &["--topic", "nope"])
    })
    .await
    .unwrap();
    assert_eq!(code, 2);
    assert!(err.contains("/brokers/topics/nope"), "{err}");

    // Text: the header, the tables and the flags.
    let (code, text, _) = tokio::task::spawn_blocking({
        let connect = connect.clone();
        move || describe(&connect, &[])
    })
    .await
    .unwrap();
    assert_eq!(code, 1);
    assert!(text.contains("Cluster id: hand-written"), "{text}");
    assert!(text.contains("Controller: broker 1 (epoch 7)"), "{text}");
    for needle in [
        "INTERNAL://h4:9094",
        "ASNFZ4mrze8P7cuph2VDIQ",
        "min.insync.replicas=3",
        "PREFERRED-NOT-LEADER",
        "MARKED-FOR-DELETION",
        "RECOVERING",
        "REASSIGNING",
        "1970-01-01T00:00:01.003Z",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    assert!(text.contains(
        "11 partitions shown: 3 OFFLINE, 5 UNDER-REPLICATED, 5 UNDER-MIN-ISR, 1 PREFERRED-NOT-LEADER, \
         1 RECOVERING, 1 REASSIGNING, 1 MARKED-FOR-DELETION"
    ), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains(" new ") && l.contains(" 3 ") && l.contains("PREFERRED"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("1,2"), "{row}");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_isr_precedence_controller_v2_and_no_controller() {
    let server = ZkServer::start_async().await;
    let root = server.client("").await;
    // No cluster default here: --min-isr decides where the topic has no override.
    let w = |p: &'static str, d: &'static str| write_znode(&root, p, d.as_bytes());
    w(
        "/controller",
        r#"{"version":2,"brokerid":3000,"timestamp":"1","kraftControllerEpoch":5}"#,
    )
    .await;
    w("/controller_epoch", "12").await;
    w("/brokers/ids/1", r#"{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h1:9092"],"jmx_port":-1,"port":9092,"host":"h1","version":5,"timestamp":"7"}"#).await;
    w(
        "/brokers/topics/t",
        r#"{"version":3,"partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{}}"#,
    )
    .await;
    w(
        "/brokers/topics/t/partitions/0/state",
        r#"{"controller_epoch":12,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}"#,
    )
    .await;
    w(
        "/brokers/topics/own",
        r#"{"version":3,"partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{}}"#,
    )
    .await;
    w(
        "/brokers/topics/own/partitions/0/state",
        r#"{"controller_epoch":12,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}"#,
    )
    .await;
    w(
        "/config/topics/own",
        r#"{"version":1,"config":{"min.insync.replicas":"1"}}"#,
    )
    .await;
    let connect = server.connect_string();
    let run = |args: &'static [&'static str]| {
        let connect = connect.clone();
        tokio::task::spawn_blocking(move || describe_json(&connect, args))
    };
    let (code, json) = run(&[]).await.unwrap();
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["cluster_id"], Value::Null);
    // A KRaft controller (migration): its id, though no broker has it.
    assert_eq!(
        json["controller"],
        serde_json::json!({"id": 3000, "epoch": 12})
    );
    assert_eq!(flags(&json, "t", 0), ["UNDER-REPLICATED"]);
    let (code, json) = run(&["--min-isr", "3"]).await.unwrap();
    assert_eq!(code, 1);
    assert_eq!(flags(&json, "t", 0), ["UNDER-REPLICATED", "UNDER-MIN-ISR"]);
    assert_eq!(
        flags(&json, "own", 0),
        ["UNDER-REPLICATED"],
        "the topic's own 1 beats --min-isr"
    );
    // The controller goes: id null, the last epoch kept.
    root.delete("/controller", -1).await.unwrap();
    let (_, json) = run(&[]).await.unwrap();
    assert_eq!(
        json["controller"],
        serde_json::json!({"id": null, "epoch": 12})
    );
    let (_, text, _) = tokio::task::spawn_blocking({
        let connect = connect.clone();
        move || describe(&connect, &[])
    })
    .await
    .unwrap();
    assert!(
        text.contains("Controller: no controller (last epoch 12)"),
        "{text}"
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_znodes_and_missing_chroot_exit_2_naming_the_path() {
    let server = ZkServer::start_async().await;
    let root = server.client("").await;
    let cases: [(&str, &str, &str); 5] = [
        (
            "/a",
            "/brokers/ids/1",
            r#"{"version":1,"port":1,"jmx_port":-1}"#,
        ),
        (
            "/b",
            "/brokers/topics/t",
            r#"{"version":3,"partitions":{"0":"x"}}"#,
        ),
        ("/c", "/controller", "not json"),
        (
            "/d",
            "/config/brokers/<default>",
            r#"{"version":1,"config":{"min.insync.replicas":"many"}}"#,
        ),
        (
            "/e",
            "/brokers/ids/x",
            r#"{"version":1,"host":"h","port":1,"jmx_port":-1}"#,
        ),
    ];
    for (chroot, path, data) in cases {
        write_znode(&root, &format!("{chroot}{path}"), data.as_bytes()).await;
    }
    // A topic for /d, so the bad default is consulted.
    write_znode(
        &root,
        "/d/brokers/topics/t",
        br#"{"version":1,"partitions":{"0":[1]}}"#,
    )
    .await;
    // A state that is not JSON.
    write_znode(
        &root,
        "/f/brokers/topics/t",
        br#"{"version":1,"partitions":{"0":[1]}}"#,
    )
    .await;
    write_znode(&root, "/f/brokers/topics/t/partitions/0/state", b"{").await;
    let mut expected: Vec<(String, String)> = cases
        .iter()
        .map(|(c, p, _)| (c.to_string(), p.to_string()))
        .collect();
    expected.push(("/f".into(), "/brokers/topics/t/partitions/0/state".into()));
    expected.push(("/missing".into(), "/missing".into()));
    for (chroot, path) in expected {
        let connect = format!("{}{chroot}", server.connect_string());
        let (code, out, err) = tokio::task::spawn_blocking(move || describe(&connect, &[]))
            .await
            .unwrap();
        assert_eq!(code, 2, "{chroot}: {out}{err}");
        assert!(err.contains(&path), "{chroot}: {err}");
        assert!(out.is_empty(), "{chroot}: nothing on stdout: {out}");
    }
    drop(server);
}

#[test]
fn unreachable_zookeeper_exits_2_within_the_timeout_naming_it() {
    // Nothing listens on the first; the second accepts connections and never answers.
    let closed = crate::serve_support::free_port();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    for port in [closed, silent_port] {
        let connect = format!("127.0.0.1:{port}");
        let start = Instant::now();
        let (code, out, err) = describe(&connect, &["--connection-timeout-ms", "1500"]);
        let took = start.elapsed();
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains(&connect) && err.contains("1500 ms"), "{err}");
        assert!(took < Duration::from_secs(10), "took {took:?}");
        assert!(
            took >= Duration::from_millis(1400),
            "gave up early: {took:?}"
        );
    }
    drop(silent);
}
