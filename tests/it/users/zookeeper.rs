//! `kcli users --zookeeper` against a real ZooKeeper (under a chroot), beside Kafka 3.9.1's
//! `kafka-configs --zookeeper`: what kcli writes Kafka's tool reads, and the reverse; quota keys
//! kept; user names sanitized as Kafka's `Sanitizer`; removal of one mechanism or all.

use kcli::security::scram_credential::ScramMechanism;
use kcli::zk::ZkClient;
use kcli::zk::zk_data;

use super::{assert_credential, assert_no_secret, kafka_configs, listed, users, users_ok};
use crate::support::cluster::with_zk;
use crate::support::zookeeper::{ZkServer, write_znode};

/// The user configs' data, by znode name.
fn read(connect: &str, path: &str) -> Option<String> {
    let path = path.to_string();
    with_zk(connect, async move |zk: &dyn ZkClient| {
        zk.get_data(&path, false)
            .await
            .ok()
            .map(|(d, _)| String::from_utf8(d).unwrap())
    })
}

/// The entity paths of every change notification, oldest first.
fn notifications(connect: &str) -> Vec<String> {
    with_zk(connect, async |zk: &dyn ZkClient| {
        let (mut names, _) = zk.get_children("/config/changes", false).await.unwrap();
        names.sort();
        let mut out = Vec::new();
        for n in names {
            let (data, _) = zk
                .get_data(&format!("/config/changes/{n}"), false)
                .await
                .unwrap();
            out.push(zk_data::decode_config_change(&data).unwrap());
        }
        out
    })
}

fn config_of(data: &str) -> serde_json::Map<String, serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["version"], 1, "{data}");
    v["config"].as_object().unwrap().clone()
}

#[test]
fn kcli_writes_what_kafkas_config_command_reads_and_reads_what_it_writes() {
    let server = ZkServer::start();
    let connect = format!("{}/kafka", server.connect_string());
    with_zk(&server.connect_string(), async |zk: &dyn ZkClient| {
        // A quota already there, as `kafka-configs --alter --add-config producer_byte_rate=1024`
        // leaves it.
        write_znode(
            zk,
            "/kafka/config/users/User%3Aalice%20smith",
            br#"{"version":1,"config":{"producer_byte_rate":"1024"}}"#,
        )
        .await;
    });
    let dir = tempfile::tempdir().unwrap();
    let password_file = dir.path().join("pw");
    std::fs::write(&password_file, "alice-secret\n").unwrap();
    let user = "User:alice smith";

    let out = users_ok(
        &[
            "add",
            user,
            "--mechanism",
            "SCRAM-SHA-512",
            "--iterations",
            "8192",
            "--password-file",
            password_file.to_str().unwrap(),
            "--zookeeper",
            &connect,
        ],
        b"",
    );
    assert_no_secret(&out, "alice-secret");
    assert!(
        out.contains("SCRAM-SHA-512") && out.contains("8192"),
        "{out}"
    );
    let znode = read(&connect, "/config/users/User%3Aalice%20smith").unwrap();
    let config = config_of(&znode);
    assert_eq!(config["producer_byte_rate"], "1024", "{znode}");
    let stored = config["SCRAM-SHA-512"].as_str().unwrap();
    assert_credential(ScramMechanism::ScramSha512, stored, "alice-secret", 8192);
    assert_eq!(notifications(&connect), ["users/User%3Aalice%20smith"]);
    // A second mechanism from stdin joins the first.
    users_ok(
        &[
            "add",
            user,
            "--mechanism",
            "SCRAM-SHA-256",
            "--password-stdin",
            "--zookeeper",
            &connect,
        ],
        b"other-secret\n",
    );

    // Kafka's tool reads both credentials and the quota, under the sanitized name.
    let (code, stdout, stderr) = kafka_configs(&[
        "--zookeeper",
        &connect,
        "--describe",
        "--entity-type",
        "users",
        "--entity-name",
        user,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Configs for user-principal 'User:alice smith' are "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains(&format!("SCRAM-SHA-512={stored}")), "{line}");
    assert!(line.contains("SCRAM-SHA-256=salt="), "{line}");
    assert!(line.contains("iterations=4096"), "{line}");
    assert!(line.contains("producer_byte_rate=1024"), "{line}");

    // The reverse: Kafka's tool adds a credential (and quota-free user), kcli lists it.
    let (code, stdout, stderr) = kafka_configs(&[
        "--zookeeper",
        &connect,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "carol",
        "--add-config",
        "SCRAM-SHA-256=[iterations=4321,password=carol-pw]",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let carol = config_of(&read(&connect, "/config/users/carol").unwrap());
    assert_credential(
        ScramMechanism::ScramSha256,
        carol["SCRAM-SHA-256"].as_str().unwrap(),
        "carol-pw",
        4321,
    );
    let out = users_ok(&["list", "--zookeeper", &connect, "--format", "json"], b"");
    assert_no_secret(&out, "carol-pw");
    let s = |v: &str| v.to_string();
    assert_eq!(
        listed(&out),
        [
            (
                s("User:alice smith"),
                vec![(s("SCRAM-SHA-256"), 4096), (s("SCRAM-SHA-512"), 8192)]
            ),
            (s("carol"), vec![(s("SCRAM-SHA-256"), 4321)]),
        ]
    );
    let table = users_ok(&["list", "--zookeeper", &connect], b"");
    assert!(
        table
            .lines()
            .any(|l| l.contains("carol") && l.contains("4321")),
        "{table}"
    );
    let named = users_ok(
        &["list", "carol", "--zookeeper", &connect, "--format", "json"],
        b"",
    );
    assert_eq!(
        listed(&named),
        [(s("carol"), vec![(s("SCRAM-SHA-256"), 4321)])]
    );

    // Removing one mechanism keeps the other and the quota; removing all of a user that has
    // nothing else removes the znode, as Kafka's AdminZkClient does.
    users_ok(
        &[
            "remove",
            user,
            "--mechanism",
            "SCRAM-SHA-512",
            "--zookeeper",
            &connect,
        ],
        b"",
    );
    let config = config_of(&read(&connect, "/config/users/User%3Aalice%20smith").unwrap());
    let keys: Vec<&String> = config.keys().collect();
    assert_eq!(keys, ["SCRAM-SHA-256", "producer_byte_rate"]);
    let out = users_ok(
        &[
            "remove",
            "carol",
            "--zookeeper",
            &connect,
            "--format",
            "json",
        ],
        b"",
    );
    let v: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
    assert_eq!(v["removed"], serde_json::json!(["SCRAM-SHA-256"]), "{out}");
    assert!(read(&connect, "/config/users/carol").is_none());
    let (code, stdout, _) = kafka_configs(&[
        "--zookeeper",
        &connect,
        "--describe",
        "--entity-type",
        "users",
        "--entity-name",
        "carol",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_end() == "Configs for user-principal 'carol' are"),
        "{stdout}"
    );
    assert_eq!(
        notifications(&connect),
        [
            "users/User%3Aalice%20smith",
            "users/User%3Aalice%20smith",
            "users/carol",
            "users/User%3Aalice%20smith",
            "users/carol",
        ]
    );

    // What is not there is an error naming it (exit 2).
    for (args, expected) in [
        (
            vec!["remove", "carol"],
            "user \"carol\" has no SCRAM credential",
        ),
        (
            vec!["remove", user, "--mechanism", "SCRAM-SHA-512"],
            "has no SCRAM-SHA-512 credential",
        ),
        (vec!["list", "nobody"], "RESOURCE_NOT_FOUND"),
    ] {
        let mut args = args;
        args.extend(["--zookeeper", connect.as_str()]);
        let (code, stdout, stderr) = users(&args, b"");
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    let missing_chroot = format!("{}/nope", server.connect_string());
    let (code, _, stderr) = users(&["list", "--zookeeper", &missing_chroot], b"");
    assert_eq!(code, 2);
    assert!(stderr.contains("chroot"), "{stderr}");
}
