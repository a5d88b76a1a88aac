//! Kafka 3.9's own generated classes as the oracle: random values of every message of every
//! spec (clients, group and transaction coordinators), at every version, encoded by kcli, are read and re-written by Kafka's
//! `*Data` classes (via `tests/fixtures/java/KafkaOracle.java`), which must give back the same
//! bytes, and Kafka's `*JsonConverter` must print the same JSON as ours. This covers what the
//! kafka-protocol crate cannot: the ZooKeeper-era messages and the versions Kafka 4 dropped.
//!
//! Needs a JDK and Kafka's jars: `tests/install-kafka-tools` (run by `tests/run`) puts Apache
//! Kafka 3.9.1's jars in `.tools/kafka-3.9.1/`; `KCLI_KAFKA_CLIENTS_CP` overrides the classpath.
//! Without them the test fails with that instruction; it never skips.

// Test code: a failed expectation panics with the message, version and value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::messages::visit_all;
use crate::protocol_arb::{Arb, Gen, Visit};
use kcli::protocol::codec::{Message, MessageKind, cx};
use std::fmt::Write as _;
use std::io::Write as _;

struct Cases {
    seeds: u64,
    lines: String,
    expected: Vec<(String, i16, String, String)>,
}

impl Visit for Cases {
    fn visit<M: Message + Arb>(&mut self) {
        let class = match M::KIND {
            MessageKind::Request | MessageKind::Response | MessageKind::Header => {
                format!("{}Data", M::NAME)
            }
            MessageKind::Data => M::NAME.to_string(),
        };
        for v in M::VERSIONS.min..=M::VERSIONS.max {
            for seed in 0..self.seeds {
                let mut g = Gen::new(seed * 31 + v as u64);
                g.utf8_only = true;
                let x = M::arb(&mut g, cx(v, false));
                let bytes = x.encode_to_bytes(v).unwrap();
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                writeln!(self.lines, "{class} {v} {hex}").unwrap();
                self.expected
                    .push((M::NAME.to_string(), v, hex, x.to_json_string(v)));
            }
        }
    }
}

/// The classpath of Kafka's jars: `KCLI_KAFKA_CLIENTS_CP`, else what tests/install-kafka-tools
/// installed.
fn kafka_classpath() -> String {
    if let Ok(cp) = std::env::var("KCLI_KAFKA_CLIENTS_CP") {
        return cp;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/kafka-3.9.1");
    assert!(
        dir.join("kafka-clients-3.9.1.jar").exists(),
        "Kafka 3.9.1's jars are missing from {}: run tests/install-kafka-tools",
        dir.display()
    );
    format!("{}/*", dir.display())
}

#[test]
fn java_oracle_agrees_on_bytes_and_json() {
    let cp = kafka_classpath();
    // KCLI_ORACLE_SEEDS: values per message version (8 by default).
    let seeds = std::env::var("KCLI_ORACLE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut cases = Cases {
        seeds: seeds.unwrap_or(8),
        lines: String::new(),
        expected: Vec::new(),
    };
    visit_all(&mut cases);
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/java/KafkaOracle.java"
    );
    let mut child = std::process::Command::new("java")
        .args(["-cp", &cp, src])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = std::mem::take(&mut cases.lines);
    let writer = std::thread::spawn(move || stdin.write_all(lines.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for ((name, v, hex, json), line) in cases.expected.iter().zip(out.lines()) {
        compared += 1;
        let Some(rest) = line.strip_prefix("OK ") else {
            failures.push(format!("{name} v{v}: {line}\n  ours {hex}"));
            continue;
        };
        let (theirs, their_json) = rest.split_once(' ').unwrap();
        if theirs != hex {
            failures.push(format!(
                "{name} v{v} bytes:\n  ours   {hex}\n  kafka  {theirs}"
            ));
        } else if their_json != json {
            failures.push(format!(
                "{name} v{v} json:\n  ours   {json}\n  kafka  {their_json}"
            ));
        }
    }
    assert_eq!(compared, cases.expected.len(), "the oracle stopped early");
    assert!(
        failures.is_empty(),
        "{} of {compared} differ:\n{}",
        failures.len(),
        failures
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
