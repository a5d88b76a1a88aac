//! `kcli users` as a process: SCRAM credentials through ZooKeeper, read and written beside
//! Kafka 3.9.1's own `kafka-configs --zookeeper` (`zookeeper.rs`), and through a 2-broker kcli
//! cluster, beside `kafka-configs --bootstrap-server` and with NOT_CONTROLLER from the broker that
//! is not the controller (`cluster.rs`); the CLI's errors (exit 2, one line naming the culprit).

mod cluster;
mod zookeeper;

use std::process::Command;
use std::time::Duration;

use kcli::security::scram_credential::{ScramCredential, ScramMechanism};
use serde_json::Value;

use crate::kafka_tools::CONFIGS;
use crate::kafka_tools::support::java;
use crate::serve_support::run_within;

/// Generous for a process on a shared machine; network calls are bounded by the command.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// A JVM start is seconds; the machine is shared.
const TOOL_LIMIT: Duration = Duration::from_secs(120);

/// Runs `kcli users <args>` with `stdin`: (exit code, stdout, stderr).
pub fn users(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("users").args(args);
    run_within(cmd, stdin, RUN_LIMIT)
}

/// `kcli users <args>` that must succeed: its stdout.
pub fn users_ok(args: &[&str], stdin: &[u8]) -> String {
    let (code, stdout, stderr) = users(args, stdin);
    assert_eq!(code, 0, "kcli users {args:?}: {stdout}{stderr}");
    stdout
}

/// Kafka 3.9.1's `kafka-configs` (ConfigCommand) with `args`: (exit code, stdout, stderr).
pub fn kafka_configs(args: &[&str]) -> (i32, String, String) {
    let mut cmd = java(CONFIGS);
    cmd.args(args);
    run_within(cmd, b"", TOOL_LIMIT)
}

/// `kcli users list --format json` as user → [(mechanism, iterations)].
pub fn listed(stdout: &str) -> Vec<(String, Vec<(String, i64)>)> {
    let json: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    json["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let credentials = u["credentials"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["mechanism"].as_str().unwrap().to_string(),
                        c["iterations"].as_i64().unwrap(),
                    )
                })
                .collect();
            (u["user"].as_str().unwrap().to_string(), credentials)
        })
        .collect()
}

/// Checks that `stored` (a credential string from ZooKeeper) is the one `password` gives with
/// its salt and iterations.
pub fn assert_credential(mechanism: ScramMechanism, stored: &str, password: &str, iterations: u32) {
    let c = ScramCredential::from_credential_string(stored).unwrap();
    assert_eq!(c.iterations, iterations, "{stored}");
    let expected = ScramCredential::generate(mechanism, password, &c.salt, iterations).unwrap();
    assert_eq!(c, expected, "{stored} is not {mechanism} of the password");
}

/// No secret of a `kcli users` run reaches its output.
pub fn assert_no_secret(output: &str, password: &str) {
    assert!(!output.contains(password), "{output}");
    for key in ["salt=", "stored_key", "server_key"] {
        assert!(!output.contains(key), "{output}");
    }
}

#[test]
fn bad_invocations_exit_2_naming_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-password");
    let missing = missing.to_str().unwrap();
    // A port nothing listens on: errors before any connection are what is checked.
    let zk = "127.0.0.1:1";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "add",
                "u",
                "--mechanism",
                "SCRAM-SHA-512",
                "--iterations",
                "100",
                "--password-stdin",
                "--zookeeper",
                zk,
            ],
            "--iterations 100 is outside 4096..=16384",
        ),
        (
            vec![
                "add",
                "u",
                "--mechanism",
                "SCRAM-SHA-512",
                "--iterations",
                "16385",
                "--password-stdin",
                "--zookeeper",
                zk,
            ],
            "--iterations 16385",
        ),
        (
            vec![
                "add",
                "u",
                "--mechanism",
                "SCRAM-SHA-512",
                "--password-file",
                missing,
                "--zookeeper",
                zk,
            ],
            "no-such-password",
        ),
        (
            vec![
                "add",
                "u",
                "--mechanism",
                "SCRAM-SHA-1",
                "--password-stdin",
                "--zookeeper",
                zk,
            ],
            "SCRAM-SHA-1",
        ),
        (
            vec![
                "add",
                "u",
                "--mechanism",
                "SCRAM-SHA-256",
                "--zookeeper",
                zk,
            ],
            "--password-file",
        ),
        (
            vec![
                "list",
                "--zookeeper",
                zk,
                "--bootstrap-server",
                "127.0.0.1:1",
            ],
            "--bootstrap-server",
        ),
        (vec!["list"], "--zookeeper"),
        (
            vec![
                "add",
                "",
                "--mechanism",
                "SCRAM-SHA-256",
                "--password-stdin",
                "--zookeeper",
                zk,
            ],
            "user name is empty",
        ),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = users(&args, b"pw\n");
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // An empty password from stdin is refused before ZooKeeper is asked.
    let (code, _, stderr) = users(
        &[
            "add",
            "u",
            "--mechanism",
            "SCRAM-SHA-256",
            "--password-stdin",
            "--zookeeper",
            zk,
        ],
        b"\n",
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("password is empty"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
