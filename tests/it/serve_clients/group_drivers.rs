//! Consumer groups through the real-client drivers of tests/clients/: kafka-python and
//! confluent-kafka (group_check.py), kafkajs (kafkajs_check.js --group) and the Java client with
//! default settings (java/GroupCheck.java: an idempotent producer, members that rebalance,
//! commits, and the admin's group calls).

use super::drivers::{kafkajs_check, run_driver, run_java_driver, venv_python};
use super::*;

fn group_broker() -> TestBroker {
    TestBroker::start(&[
        ("message.max.bytes", "2000000"),
        ("group.initial.rebalance.delay.ms", "0"),
        ("offsets.topic.num.partitions", "4"),
    ])
}

fn python_groups(client: &str) {
    let python = venv_python();
    let broker = group_broker();
    let mut cmd = Command::new(python);
    cmd.arg("tests/clients/group_check.py").args([
        "--client",
        client,
        "--bootstrap",
        &broker.bootstrap(),
        "--topic",
        "gt",
        "--group",
        "gg",
    ]);
    let s = run_driver(cmd, &format!("group_check.py --client {client}"));
    assert_eq!(s["consumed"], 400, "{s}");
}

#[test]
fn kafka_python_consumer_groups() {
    python_groups("kafka-python");
}

#[test]
fn confluent_kafka_consumer_groups() {
    python_groups("confluent-kafka");
}

#[test]
fn kafkajs_consumer_group() {
    let broker = group_broker();
    let cmd = kafkajs_check(&broker, &["--topic", "kjg", "--group", "kjgroup"]);
    let s = run_driver(cmd, "kafkajs_check.js --group");
    assert_eq!(s["consumed"], 30, "{s}");
}

#[test]
fn java_default_producer_and_consumer_groups() {
    let broker = group_broker();
    let s = run_java_driver(
        "GroupCheck",
        &[&broker.bootstrap(), "jg", "jgroup"],
        broker.scratch(),
    );
    assert_eq!(s["consumed"], 400, "{s}");
}
