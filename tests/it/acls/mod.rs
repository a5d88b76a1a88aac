//! Authorization with ACLs against real processes: `kcli acls` (through a broker and through
//! ZooKeeper) beside Kafka 3.9.1's own `kafka.admin.AclCommand`; distinct users by TLS client
//! certificates producing through confluent-kafka (`tls.rs`); ACL changes reaching every
//! broker of a 3-broker cluster over a real ZooKeeper (`cluster.rs`); SASL users authorized on
//! a SASL cluster with kcat, confluent-kafka, kafka-python and the Java client (`sasl.rs`); the
//! refusals on the wire (`raw.rs`).

mod cluster;
mod raw;
mod sasl;
mod tls;
mod transactions;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::kafka_tools::support::java;
use crate::serve_support::run_within;

/// Generous for a process on a shared machine; network calls are bounded by the command.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// A JVM start is seconds; the machine is shared.
const TOOL_LIMIT: Duration = Duration::from_secs(120);

/// The authorizer's `authorizer.class.name`.
pub const ACL_AUTHORIZER: &str = "kafka.security.authorizer.AclAuthorizer";

/// Runs `kcli acls <args>`: (exit code, stdout, stderr).
pub fn acls(args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("acls").args(args);
    run_within(cmd, b"", RUN_LIMIT)
}

/// `kcli acls <args>` that must succeed: its stdout.
pub fn acls_ok(args: &[&str]) -> String {
    let (code, stdout, stderr) = acls(args);
    assert_eq!(code, 0, "kcli acls {args:?}: {stdout}{stderr}");
    stdout
}

/// Kafka 3.9.1's `kafka-acls` (AclCommand) with `args`: (exit code, stdout, stderr).
pub fn kafka_acls(args: &[&str]) -> (i32, String, String) {
    let mut cmd = java("kafka.admin.AclCommand");
    cmd.args(args);
    run_within(cmd, b"", TOOL_LIMIT)
}

/// A `--format json` output under `key` as sorted
/// (type, name, pattern, principal, host, operation, permission) rows.
pub fn rows(stdout: &str, key: &str) -> Vec<[String; 7]> {
    let json: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    let mut out: Vec<[String; 7]> = json[key]
        .as_array()
        .unwrap_or_else(|| panic!("{stdout}"))
        .iter()
        .map(|r| {
            [
                "resourceType",
                "name",
                "patternType",
                "principal",
                "host",
                "operation",
                "permissionType",
            ]
            .map(|k| r[k].as_str().unwrap().to_string())
        })
        .collect();
    out.sort();
    out
}

/// One expected row.
pub fn row(
    t: &str,
    name: &str,
    pattern: &str,
    principal: &str,
    op: &str,
    perm: &str,
) -> [String; 7] {
    [t, name, pattern, principal, "*", op, perm].map(str::to_string)
}

#[test]
fn bad_invocations_exit_2_naming_the_culprit() {
    // A port nothing listens on: errors before any connection are what is checked.
    let bs = "127.0.0.1:1";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "add",
                "--topic",
                "t",
                "--allow-principal",
                "alice",
                "--operation",
                "Write",
                "--bootstrap-server",
                bs,
            ],
            "principal \"alice\" is not TYPE:NAME",
        ),
        (
            vec![
                "add",
                "--topic",
                "t",
                "--allow-principal",
                "User:a",
                "--operation",
                "Fly",
                "--bootstrap-server",
                bs,
            ],
            "--operation \"Fly\" is not an ACL operation",
        ),
        (
            vec![
                "add",
                "--group",
                "g",
                "--allow-principal",
                "User:a",
                "--operation",
                "Write",
                "--bootstrap-server",
                bs,
            ],
            "operation Write is not valid on Group resources",
        ),
        (
            vec![
                "add",
                "--allow-principal",
                "User:a",
                "--operation",
                "Write",
                "--bootstrap-server",
                bs,
            ],
            "name a resource",
        ),
        (
            vec![
                "add",
                "--topic",
                "t",
                "--operation",
                "Write",
                "--bootstrap-server",
                bs,
            ],
            "give --allow-principal or --deny-principal",
        ),
        (
            vec![
                "add",
                "--topic",
                "t",
                "--allow-principal",
                "User:a",
                "--operation",
                "Write",
                "--resource-pattern-type",
                "match",
                "--bootstrap-server",
                bs,
            ],
            "--resource-pattern-type must be literal or prefixed",
        ),
        (
            vec![
                "list",
                "--bootstrap-server",
                bs,
                "--connection-timeout-ms",
                "2000",
            ],
            "127.0.0.1:1",
        ),
    ];
    for (args, want) in cases {
        let (code, stdout, stderr) = acls(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    }
}
