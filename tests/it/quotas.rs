//! Client quota configs on a 2-broker kcli cluster over a real ZooKeeper, with Kafka 3.9.1's
//! `kafka-configs`: `--bootstrap-server` alters users, user and client id, client-id defaults
//! and IPs through one broker (AlterClientQuotas) and describes them through the other
//! (DescribeClientQuotas), in Kafka's znodes; `--delete-config`; `--zookeeper` (which Kafka
//! 3.9's tool allows only to describe quotas, of users) reads what the brokers wrote, and a
//! quota written straight into ZooKeeper is served and delivered; every broker's quota
//! handler receives each change within a deadline (its "quota config updated" log line); a
//! SCRAM user keeps its credential through a quota added and removed, and `kcli users list`
//! shows the quota beside it; per-entry errors and validate_only on the wire.

use std::time::Duration;

use kcli::protocol::errors::ErrorCode;
use kcli::protocol::messages::alter_client_quotas_request::{
    AlterClientQuotasRequest, EntityData, EntryData, OpData,
};
use kcli::protocol::messages::describe_client_quotas_request::{
    ComponentData, DescribeClientQuotasRequest,
};
use kcli::protocol::messages::{RequestKind, ResponseKind};
use kcli::security::scram_credential::ScramMechanism;
use kcli::zk::{CreateMode, ZkClient};

use crate::support::cluster::{TestCluster, wait_until, with_zk};
use crate::support::zookeeper::write_znode;
use crate::users::{assert_credential, kafka_configs, users_ok};

/// A change reaches the other broker's handler within this (a notification and a read).
const DELIVERY: Duration = Duration::from_secs(30);

fn configs_ok(cluster: &TestCluster, args: &[&str]) -> String {
    let (code, stdout, stderr) = kafka_configs(args);
    assert_eq!(
        code,
        0,
        "kafka-configs {args:?}: {stdout}{stderr}\n{}",
        cluster.logs()
    );
    stdout
}

fn config_of(cluster: &TestCluster, path: &str) -> serde_json::Map<String, serde_json::Value> {
    let (data, _) = cluster
        .get(path)
        .unwrap_or_else(|| panic!("no znode {path}"));
    let v: serde_json::Value = serde_json::from_str(&data).unwrap();
    assert_eq!(v["version"], 1, "{data}");
    v["config"].as_object().unwrap().clone()
}

/// The `Quota configs for <entity> are k=v, ...` line of `kafka-configs --describe`, its
/// entries sorted (Kafka prints them in hash order).
fn quota_line(stdout: &str, entity: &str) -> Vec<String> {
    let prefix = format!("Quota configs for {entity} are ");
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in {stdout}"));
    let mut entries: Vec<String> = line.split(", ").map(str::to_string).collect();
    entries.sort();
    entries
}

/// Waits until broker `id` logged the delivery of `entity` with `values` to its quota handler.
fn delivered(cluster: &mut TestCluster, id: i32, entity: &str, values: &str) {
    let broker = cluster.broker(id);
    wait_until(
        &format!("broker {id} delivering {entity} {values}"),
        DELIVERY,
        || {
            broker
                .stderr()
                .lines()
                .any(|l| {
                    l.contains("quota config updated")
                        && l.contains(&format!("entity={entity} "))
                        && l.contains(values)
                })
                .then_some(())
        },
    );
}

#[test]
fn kafkas_config_command_alters_and_describes_quotas_through_any_broker() {
    let mut cluster = TestCluster::start(2, &[]);
    let one = format!("127.0.0.1:{}", cluster.port(1));
    let two = format!("127.0.0.1:{}", cluster.port(2));
    let alter = |bootstrap: &str, entity: &[&str], op: &[&str]| {
        let mut args = vec!["--bootstrap-server", bootstrap, "--alter"];
        args.extend_from_slice(entity);
        args.extend_from_slice(op);
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let run = |cluster: &TestCluster, args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        configs_ok(cluster, &args)
    };
    let alice = ["--entity-type", "users", "--entity-name", "alice"];
    let alice_app = [
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
        "--entity-type",
        "clients",
        "--entity-name",
        "app",
    ];
    let default_client = ["--entity-type", "clients", "--entity-default"];
    let ip = ["--entity-type", "ips", "--entity-name", "10.1.2.3"];

    // Altered through broker 1.
    let out = run(
        &cluster,
        alter(
            &one,
            &alice,
            &[
                "--add-config",
                "producer_byte_rate=1024,consumer_byte_rate=2048",
            ],
        ),
    );
    assert!(
        out.contains("Completed updating config for user alice."),
        "{out}"
    );
    run(
        &cluster,
        alter(
            &one,
            &alice_app,
            &["--add-config", "request_percentage=12.5"],
        ),
    );
    run(
        &cluster,
        alter(
            &one,
            &default_client,
            &["--add-config", "producer_byte_rate=100"],
        ),
    );
    run(
        &cluster,
        alter(&one, &ip, &["--add-config", "connection_creation_rate=7"]),
    );

    // Kafka's znodes.
    let config = config_of(&cluster, "/config/users/alice");
    assert_eq!(config["producer_byte_rate"], "1024");
    assert_eq!(config["consumer_byte_rate"], "2048");
    assert_eq!(
        config_of(&cluster, "/config/users/alice/clients/app")["request_percentage"],
        "12.5"
    );
    assert_eq!(
        config_of(&cluster, "/config/clients/<default>")["producer_byte_rate"],
        "100"
    );
    assert_eq!(
        config_of(&cluster, "/config/ips/10.1.2.3")["connection_creation_rate"],
        "7"
    );

    // Described through broker 2.
    let describe = |cluster: &TestCluster, bootstrap: &str, entity: &[&str]| {
        let mut args = vec!["--bootstrap-server", bootstrap, "--describe"];
        args.extend_from_slice(entity);
        configs_ok(cluster, &args)
    };
    assert_eq!(
        quota_line(&describe(&cluster, &two, &alice), "user-principal 'alice'"),
        ["consumer_byte_rate=2048.0", "producer_byte_rate=1024.0"]
    );
    assert_eq!(
        quota_line(
            &describe(&cluster, &two, &alice_app),
            "user-principal 'alice', client-id 'app'"
        ),
        ["request_percentage=12.5"]
    );
    assert_eq!(
        quota_line(
            &describe(&cluster, &two, &default_client),
            "the default client-id"
        ),
        ["producer_byte_rate=100.0"]
    );
    assert_eq!(
        quota_line(&describe(&cluster, &two, &ip), "ip '10.1.2.3'"),
        ["connection_creation_rate=7.0"]
    );

    // Each change reached both brokers' quota handlers.
    for id in [1, 2] {
        delivered(
            &mut cluster,
            id,
            "user=alice",
            "(ProducerByteRate, Some(1024.0))",
        );
        delivered(
            &mut cluster,
            id,
            "user=alice,client-id=app",
            "(RequestPercentage, Some(12.5))",
        );
        delivered(
            &mut cluster,
            id,
            "client-id=<default>",
            "(ProducerByteRate, Some(100.0))",
        );
        delivered(
            &mut cluster,
            id,
            "ip=10.1.2.3",
            "(ConnectionCreationRate, Some(7.0))",
        );
    }

    // A key deleted through broker 2 is gone from broker 1's answer and handler.
    run(
        &cluster,
        alter(&two, &alice, &["--delete-config", "producer_byte_rate"]),
    );
    assert_eq!(
        quota_line(&describe(&cluster, &one, &alice), "user-principal 'alice'"),
        ["consumer_byte_rate=2048.0"]
    );
    delivered(
        &mut cluster,
        1,
        "user=alice",
        "(ProducerByteRate, None), (ConsumerByteRate, Some(2048.0))",
    );

    // `--zookeeper`: Kafka 3.9's tool refuses to alter quotas through it (and refuses client
    // ids), but reads what the brokers wrote; a quota written straight into ZooKeeper is
    // served and delivered by the brokers.
    let connect = cluster.connect();
    let bob = ["--entity-type", "users", "--entity-name", "bob"];
    let mut args = vec!["--zookeeper", connect.as_str(), "--alter"];
    args.extend_from_slice(&bob);
    args.extend_from_slice(&["--add-config", "consumer_byte_rate=4096"]);
    let (code, out, err) = kafka_configs(&args);
    assert!(
        code != 0 && err.contains("only supported for SCRAM credential updates"),
        "{code} {out}{err}"
    );
    // What Kafka's AdminZkClient writes for it, straight into ZooKeeper.
    with_zk(&connect, async |zk: &dyn ZkClient| {
        write_znode(
            zk,
            "/config/users/bob",
            br#"{"version":1,"config":{"consumer_byte_rate":"4096"}}"#,
        )
        .await;
        zk.create(
            "/config/changes/config_change_",
            br#"{"version":2,"entity_path":"users/bob"}"#,
            CreateMode::PersistentSequential,
        )
        .await
        .unwrap();
    });
    assert_eq!(
        quota_line(&describe(&cluster, &two, &bob), "user-principal 'bob'"),
        ["consumer_byte_rate=4096.0"]
    );
    for id in [1, 2] {
        delivered(
            &mut cluster,
            id,
            "user=bob",
            "(ConsumerByteRate, Some(4096.0))",
        );
    }
    let mut args = vec!["--zookeeper", connect.as_str(), "--describe"];
    args.extend_from_slice(&alice);
    let out = configs_ok(&cluster, &args);
    assert!(
        out.contains("Configs for user-principal 'alice' are consumer_byte_rate=2048"),
        "{out}"
    );
    let (code, out, err) = kafka_configs(&[
        "--zookeeper",
        &connect,
        "--describe",
        "--entity-type",
        "clients",
        "--entity-name",
        "app",
    ]);
    assert!(
        code != 0 && err.contains("must be one of users, brokers with a --zookeeper argument"),
        "{code} {out}{err}"
    );

    // A SCRAM user keeps its credential through a quota added and removed.
    let carol = ["--entity-type", "users", "--entity-name", "carol"];
    run(
        &cluster,
        alter(
            &two,
            &carol,
            &[
                "--add-config",
                "SCRAM-SHA-256=[iterations=4096,password=carol-pw]",
            ],
        ),
    );
    run(
        &cluster,
        alter(&one, &carol, &["--add-config", "producer_byte_rate=10"]),
    );
    let config = config_of(&cluster, "/config/users/carol");
    assert_eq!(config["producer_byte_rate"], "10");
    assert_credential(
        ScramMechanism::ScramSha256,
        config["SCRAM-SHA-256"].as_str().unwrap(),
        "carol-pw",
        4096,
    );
    // `kcli users list` shows the quota beside the credential, through a broker and through
    // ZooKeeper; users with quotas and no credential are not listed.
    for source in [
        ["--bootstrap-server", two.as_str()],
        ["--zookeeper", connect.as_str()],
    ] {
        let out = users_ok(&["list", source[0], source[1], "--format", "json"], b"");
        let v: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
        assert_eq!(v["users"].as_array().map(Vec::len), Some(1), "{out}");
        assert_eq!(v["users"][0]["user"], "carol", "{out}");
        assert_eq!(
            v["users"][0]["quotas"],
            serde_json::json!([{"client_id": null, "values": {"producer_byte_rate": 10.0}}]),
            "{out}"
        );
    }
    let out = users_ok(&["list", "carol", "--bootstrap-server", &two], b"");
    assert!(
        out.contains("Quotas:\n")
            && out.lines().any(|l| l.contains("carol")
                && l.contains("producer_byte_rate")
                && l.contains("10.0")),
        "{out}"
    );
    run(
        &cluster,
        alter(&one, &carol, &["--delete-config", "producer_byte_rate"]),
    );
    let config = config_of(&cluster, "/config/users/carol");
    assert!(!config.contains_key("producer_byte_rate"), "{config:?}");
    assert_credential(
        ScramMechanism::ScramSha256,
        config["SCRAM-SHA-256"].as_str().unwrap(),
        "carol-pw",
        4096,
    );
    let out = describe(&cluster, &two, &carol);
    assert!(
        out.contains(
            "SCRAM credential configs for user-principal 'carol' are SCRAM-SHA-256=iterations=4096"
        ),
        "{out}"
    );
    assert!(
        !out.contains("Quota configs for user-principal 'carol'"),
        "{out}"
    );

    // On the wire: per-entry errors beside a validated entry that writes nothing; a bad match
    // type fails the whole describe.
    let port = cluster.port(1);
    let entry = |entity: &[(&str, Option<&str>)], key: &str, value: f64| EntryData {
        entity: entity
            .iter()
            .map(|(t, n)| EntityData {
                entity_type: (*t).into(),
                entity_name: n.map(Into::into),
                ..EntityData::default()
            })
            .collect(),
        ops: vec![OpData {
            key: key.into(),
            value,
            ..OpData::default()
        }],
        ..EntryData::default()
    };
    let request = RequestKind::AlterClientQuotas(AlterClientQuotasRequest {
        entries: vec![
            entry(
                &[("ip", Some("10.0.0.9")), ("user", Some("x"))],
                "producer_byte_rate",
                1.0,
            ),
            entry(&[("client-id", Some("c"))], "bogus", 1.0),
            entry(&[("client-id", Some("valid"))], "producer_byte_rate", 5.0),
        ],
        validate_only: true,
        ..AlterClientQuotasRequest::default()
    });
    let ResponseKind::AlterClientQuotas(r) = send(port, request) else {
        panic!("not an AlterClientQuotas response");
    };
    let got: Vec<(i16, Option<String>)> = r
        .entries
        .iter()
        .map(|e| {
            (
                e.error_code,
                e.error_message.as_ref().map(ToString::to_string),
            )
        })
        .collect();
    let invalid = ErrorCode::InvalidRequest.code();
    assert_eq!(
        got,
        [
            (
                invalid,
                Some(
                    "Invalid quota entity combination, IP entity should not be used with \
                     user/client ID entity."
                        .to_string()
                )
            ),
            (invalid, Some("Invalid configuration key bogus".to_string())),
            (0, None),
        ]
    );
    assert!(cluster.get("/config/clients/valid").is_none());
    let request = RequestKind::DescribeClientQuotas(DescribeClientQuotasRequest {
        components: vec![ComponentData {
            entity_type: "user".into(),
            match_type: 7,
            ..ComponentData::default()
        }],
        ..DescribeClientQuotasRequest::default()
    });
    let ResponseKind::DescribeClientQuotas(r) = send(port, request) else {
        panic!("not a DescribeClientQuotas response");
    };
    assert_eq!(r.error_code, ErrorCode::UnknownServerError.code());
    assert_eq!(r.entries, None);
}

fn send(port: u16, request: RequestKind) -> ResponseKind {
    crate::support::requests::send_request(port, &request, 1)
}
