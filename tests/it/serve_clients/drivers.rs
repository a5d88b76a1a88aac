//! The driver programs of tests/clients/ against `kcli serve`: kafka-python (both modes),
//! confluent-kafka and the Java client.

use super::*;

/// The venv's Python, or a failure saying how to make it.
pub(crate) fn venv_python() -> PathBuf {
    let venv = repo().join(".venv");
    assert!(
        venv.join(".complete").exists(),
        "the Python clients' venv is missing from {}: run tests/install-python-clients",
        venv.display()
    );
    venv.join("bin/python")
}

/// Runs a driver (it prints one JSON line and exits 0, or one FAIL line on stderr) and returns
/// its summary, which must say ok.
pub(crate) fn run_driver(mut cmd: Command, what: &str) -> serde_json::Value {
    cmd.current_dir(repo());
    let (code, out, err) = run_within(cmd, b"", CLIENT_LIMIT);
    assert_eq!(code, 0, "{what} exited with {code}:\n{err}\n{out}");
    let line = out.lines().last().unwrap_or_default();
    let summary: serde_json::Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{what}: no JSON summary ({e}):\n{out}\n{err}"));
    assert_eq!(summary["ok"], true, "{what}: {summary}");
    summary
}

/// The brokers of the driver tests: the drivers were validated against Kafka 3.9.1 with this
/// limit (confluent-kafka sends a 1 MiB record).
fn driver_broker() -> TestBroker {
    TestBroker::start(&[
        ("message.max.bytes", "2000000"),
        ("kcli.metrics.listener", "127.0.0.1:{port2}"),
    ])
}

#[test]
fn kafka_python_default_mode() {
    let python = venv_python();
    let broker = driver_broker();
    let mut cmd = Command::new(python);
    cmd.arg("tests/clients/kafka_python_check.py").args([
        "--bootstrap",
        &broker.bootstrap(),
        "--topic",
        "kp",
    ]);
    let s = run_driver(cmd, "kafka_python_check.py");
    assert_eq!(s["partitions"], 3, "{s}");
    assert_eq!(s["produced"], s["consumed"], "{s}");
}

/// `--api-version 0.10.1`: Produce v2 and Fetch v3 with message format v1, so the broker
/// up-converts on the way in and down-converts on the way out.
#[test]
fn kafka_python_api_version_0_10_1_down_conversion() {
    let python = venv_python();
    let broker = driver_broker();
    let mut cmd = Command::new(python);
    cmd.arg("tests/clients/kafka_python_check.py").args([
        "--bootstrap",
        &broker.bootstrap(),
        "--topic",
        "kp-old",
        "--api-version",
        "0.10.1",
    ]);
    let s = run_driver(cmd, "kafka_python_check.py --api-version 0.10.1");
    assert_eq!(s["mode"], "api_version=0.10.1", "{s}");
    assert_eq!(s["produced"], s["consumed"], "{s}");
    // Every record went up on the way in and down on the way out, and the meters say so.
    let metrics = crate::support::exposition::scrape(broker.port2()).unwrap();
    for (name, count) in [
        (
            "kafka_server_brokertopicmetrics_producemessageconversions_total",
            &s["produced"],
        ),
        (
            "kafka_server_brokertopicmetrics_fetchmessageconversions_total",
            &s["consumed"],
        ),
    ] {
        let served = metrics.value(name, &[("topic", "kp-old")]);
        assert!(
            served.is_some_and(|v| v >= count.as_f64().unwrap()),
            "{name}: {served:?}, {count} records"
        );
    }
}

#[test]
fn confluent_kafka_every_codec() {
    let python = venv_python();
    let broker = driver_broker();
    let mut cmd = Command::new(python);
    cmd.arg("tests/clients/confluent_kafka_check.py").args([
        "--bootstrap",
        &broker.bootstrap(),
        "--topic",
        "ck",
    ]);
    let s = run_driver(cmd, "confluent_kafka_check.py");
    assert_eq!(s["produced"], s["consumed"], "{s}");
}

/// confluent-kafka's transactions (tests/clients/transactions_check.py): commits, an abort,
/// offsets sent to transactions; read_committed reads exactly the committed records and the
/// group's offsets are the committed transaction's.
#[test]
fn confluent_kafka_transactions() {
    let python = venv_python();
    let broker = driver_broker();
    let mut cmd = Command::new(python);
    cmd.arg("tests/clients/transactions_check.py").args([
        "--bootstrap",
        &broker.bootstrap(),
        "--topic",
        "cktx",
    ]);
    let s = run_driver(cmd, "transactions_check.py");
    assert_eq!(s["committed"], 2 * 5, "{s}");
    assert_eq!(s["read_uncommitted"], 2 * 7, "{s}");
}

/// Kafka 3.9.1's jars as a classpath, or a failure saying how to get them.
fn kafka_jars_classpath() -> String {
    let jars = repo().join(".tools/kafka-3.9.1");
    assert!(
        jars.join(".complete").exists(),
        "Kafka 3.9.1's jars are missing from {}: run tests/install-kafka-tools",
        jars.display()
    );
    format!("{}/*", jars.display())
}

/// Compiles tests/clients/java/`class`.java against Kafka 3.9.1's jars into `scratch`; returns
/// the classpath that runs it.
pub(crate) fn compile_java_driver(class: &str, scratch: &Path) -> String {
    let classpath = kafka_jars_classpath();
    let classes = scratch.join("classes");
    let mut javac = Command::new("javac");
    javac
        .args(["-nowarn", "-cp", &classpath, "-d"])
        .arg(&classes)
        .arg(repo().join(format!("tests/clients/java/{class}.java")));
    let (code, _, err) = run_within(javac, b"", CLIENT_LIMIT);
    assert_eq!(code, 0, "javac {class}: {err}");
    format!("{}:{classpath}", classes.display())
}

/// `java` running `class` on `classpath` with `args`, with a small heap and the quick compiler.
pub(crate) fn java_command(classpath: &str, class: &str, args: &[&str]) -> Command {
    let mut java = Command::new("java");
    java.args([
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xmx256m",
        "-cp",
        classpath,
        class,
    ])
    .args(args)
    .current_dir(repo());
    java
}

/// Compiles tests/clients/java/`class`.java against Kafka 3.9.1's jars into `scratch` and runs
/// it with `args`; returns its summary, which must say ok.
pub(crate) fn run_java_driver(class: &str, args: &[&str], scratch: &Path) -> serde_json::Value {
    let classpath = compile_java_driver(class, scratch);
    run_driver(java_command(&classpath, class, args), class)
}

/// Starts a Java driver that runs until it is killed (one compiled by [`compile_java_driver`]),
/// the caller killing it by its PID. Its stdout and stderr are appended to `dir`/java.log, so a
/// restart keeps what the killed one said, and RocksDB unpacks its native library into `dir`
/// rather than /tmp, where a killed JVM would leave it.
pub(crate) fn spawn_java_driver(
    classpath: &str,
    class: &str,
    args: &[&str],
    dir: &Path,
) -> std::process::Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("java.log"))
        .unwrap();
    java_command(classpath, class, args)
        .env("ROCKSDB_SHAREDLIB_DIR", dir)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("java {class}: {e} (tests/run installs the tools the tests run)")
        })
}

/// Starts `class` from Kafka 3.9.1's jars (a tool such as
/// `org.apache.kafka.tools.TransactionalMessageCopier`) with `args` in a JVM of its own, its
/// stdout piped and its stderr appended to `stderr`, and returns it running, for a test that
/// reads it as it goes and kills it (SIGKILL by its PID) mid-work. The caller waits for it.
pub(crate) fn spawn_java(class: &str, args: &[&str], stderr: &Path) -> std::process::Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(stderr)
        .unwrap();
    java_command(&kafka_jars_classpath(), class, args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("java {class}: {e}"))
}

/// kafka-clients 3.9.1: AdminClient, KafkaProducer with default settings (idempotent), a
/// transactional producer's initTransactions, and a group-less KafkaConsumer
/// (tests/clients/java/ClientCheck.java, compiled here against Kafka's jars).
#[test]
fn java_client_check() {
    let broker = driver_broker();
    let s = run_java_driver(
        "ClientCheck",
        &[&broker.bootstrap(), "jc"],
        broker.scratch(),
    );
    // The default producer is idempotent: its batches carry a producer id, epoch 0 and
    // consecutive sequences from 0.
    let batches = crate::serve_support::batch_headers(&broker.data_dir().join("jc-idem-0"));
    assert!(!batches.is_empty(), "{s}");
    let mut next_seq = 0;
    for h in &batches {
        assert!(h.producer_id >= 0, "not idempotent: {h:?}");
        assert_eq!((h.producer_epoch, h.base_sequence), (0, next_seq), "{h:?}");
        next_seq = h.last_sequence() + 1;
    }
    assert_eq!(next_seq, 3, "{batches:?}");
    // The transactional producer found its coordinator (the first lookup created
    // `__transaction_state`) and got its producer id, within its 10 s max.block.ms.
    assert_eq!(s["txn_error"], "none", "{s}");
    assert!(
        broker.data_dir().join("__transaction_state-0").is_dir(),
        "{s}"
    );
}

/// kafka-clients 3.9.1's transactions on one broker (tests/clients/java/TransactionsCheck.java):
/// commits, an abort, an open transaction holding the last stable offset back, and fencing by a
/// second producer with the same transactional id; read_committed sees exactly the committed
/// records, read_uncommitted the aborted ones too. Every transaction left one marker per
/// partition it wrote to, at the producer's epoch, as a control batch in the log.
#[test]
fn java_transactions_check() {
    let broker = driver_broker();
    let s = run_java_driver(
        "TransactionsCheck",
        &[&broker.bootstrap(), "jtx", "1", "1"],
        broker.scratch(),
    );
    // Per partition: 4 + 2 committed, 1 more on partition 0, and 1 from the second producer.
    assert_eq!(s["committed"], 3 * (4 + 2 + 1) + 1, "{s}");
    assert_eq!(s["read_uncommitted"], 3 * (4 + 2 + 1) + 1 + 3 * 3, "{s}");
    for (partition, transactions) in [(0, 5), (1, 4), (2, 4)] {
        let batches = crate::serve_support::batch_headers(
            &broker.data_dir().join(format!("jtx-{partition}")),
        );
        let markers: Vec<_> = batches.iter().filter(|h| h.is_control()).collect();
        assert_eq!(
            markers.len(),
            transactions,
            "partition {partition}: {batches:?}"
        );
        assert!(
            batches.iter().all(|h| h.is_transactional()),
            "partition {partition}: {batches:?}"
        );
    }
}

/// `node tests/clients/kafkajs_check.js --bootstrap B` with kafkajs from .tools/node and `args`.
pub(super) fn kafkajs_check(broker: &TestBroker, args: &[&str]) -> Command {
    kafkajs_driver("kafkajs_check.js", broker, args)
}

/// `node tests/clients/<script> --bootstrap B` with kafkajs from .tools/node and `args`.
fn kafkajs_driver(script: &str, broker: &TestBroker, args: &[&str]) -> Command {
    let node_modules = repo().join(".tools/node/node_modules");
    assert!(
        repo().join(".tools/node/.complete").exists(),
        "kafkajs is missing from {}: run tests/install-node-clients",
        node_modules.display()
    );
    let mut cmd = Command::new("node");
    cmd.env("NODE_PATH", &node_modules)
        .env("KAFKAJS_NO_PARTITIONER_WARNING", "1")
        .arg(format!("tests/clients/{script}"))
        .args(["--bootstrap", &broker.bootstrap()])
        .args(args);
    cmd
}

/// kafkajs 2.2.4's transactions (tests/clients/kafkajs_transactions_check.js): commits, an
/// abort and sendOffsets; its read_committed consumer reads exactly the committed records.
#[test]
fn kafkajs_transactions() {
    let broker = driver_broker();
    let s = run_driver(
        kafkajs_driver(
            "kafkajs_transactions_check.js",
            &broker,
            &["--topic", "kjtx"],
        ),
        "kafkajs_transactions_check.js",
    );
    assert_eq!(s["committed"], 10, "{s}");
}

/// kafkajs 2.2.4 (tests/clients/kafkajs_check.js): admin, and the producer with and without
/// gzip.
#[test]
fn kafkajs_admin_and_producer() {
    let broker = driver_broker();
    let s = run_driver(
        kafkajs_check(&broker, &["--topic", "kj"]),
        "kafkajs_check.js",
    );
    assert_eq!(s["produced"], 30, "{s}");
}
