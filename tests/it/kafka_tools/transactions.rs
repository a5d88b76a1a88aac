//! Kafka's `kafka-transactions.sh` (`org.apache.kafka.tools.TransactionsCommand`) against a
//! kcli broker with a hanging transaction: a producer that wrote in a transaction and never
//! ended it. `list` and `describe` find it at its coordinator (ListTransactions,
//! FindCoordinator, DescribeTransactions), `describe-producers` shows its open transaction's
//! start offset on the partition (DescribeProducers), and `abort --start-offset` writes an ABORT
//! marker there (WriteTxnMarkers from the admin client): the partition's last stable offset
//! moves to its end and a read_committed consumer reads nothing of it. `find-hanging` finds a
//! transaction its coordinator does not know (written with verification off, 20 minutes old),
//! and `abort` releases it.

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use super::support;
use crate::serve_support::{KafkaConn, TestBroker, list_offset, run_within};

const TOOL: &str = "org.apache.kafka.tools.TransactionsCommand";
const TOPIC: &str = "hanging";

fn tool(broker: &TestBroker, args: &[&str]) -> String {
    let mut cmd = support::java(TOOL);
    cmd.args(["--bootstrap-server", &broker.bootstrap()])
        .args(args);
    let (code, out, err) = run_within(cmd, b"", Duration::from_secs(120));
    assert_eq!(code, 0, "{args:?}:\n{out}\n{err}");
    out
}

/// The read_committed end offset of partition 0 (librdkafka's watermark query: ListOffsets
/// with isolation read_committed).
fn read_committed_end(broker: &TestBroker) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", "unused")
        .set("isolation.level", "read_committed")
        .create()
        .unwrap();
    let (_, high) = consumer
        .fetch_watermarks(TOPIC, 0, Duration::from_secs(10))
        .unwrap();
    high
}

/// `abort --start-offset 0` on partition 0, then a wait until its read_committed end is `end`
/// (the ABORT marker written and the partition released).
fn abort_at_start_and_wait(broker: &TestBroker, end: i64) {
    tool(
        broker,
        &[
            "abort",
            "--topic",
            TOPIC,
            "--partition",
            "0",
            "--start-offset",
            "0",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while read_committed_end(broker) != end {
        assert!(
            Instant::now() < deadline,
            "the abort marker did not release the partition"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn kafka_transactions_tool_lists_describes_and_aborts_a_hanging_transaction() {
    let broker = TestBroker::start(support::BROKER);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("transactional.id", "hanging-txn")
        .create()
        .unwrap();
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout).unwrap();
    producer.begin_transaction().unwrap();
    for i in 0..3 {
        producer
            .send(
                BaseRecord::<(), str>::to(TOPIC)
                    .partition(0)
                    .payload(&format!("v{i}")),
            )
            .unwrap();
    }
    producer.flush(timeout).unwrap();

    let out = tool(&broker, &["list"]);
    assert!(
        out.lines()
            .any(|l| l.contains("hanging-txn") && l.contains("Ongoing")),
        "{out}"
    );
    let out = tool(&broker, &["describe", "--transactional-id", "hanging-txn"]);
    assert!(
        out.contains("Ongoing") && out.contains(&format!("{TOPIC}-0")),
        "{out}"
    );
    let out = tool(
        &broker,
        &["describe-producers", "--topic", TOPIC, "--partition", "0"],
    );
    // ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp
    // CurrentTransactionStartOffset: the open transaction starts at offset 0.
    let row: Vec<&str> = out
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row.get(3), Some(&"2"), "last sequence: {out}");
    assert_eq!(row.last(), Some(&"0"), "transaction start: {out}");

    let mut conn = KafkaConn::connect(broker.port());
    let (_, high_watermark, _) = list_offset(&mut conn, TOPIC, 0, -1);
    assert_eq!(high_watermark, 3);
    assert_eq!(
        read_committed_end(&broker),
        0,
        "held back by the open transaction"
    );
    abort_at_start_and_wait(&broker, 4);
    drop(producer);
}

/// A transaction only its partition knows: with `transaction.partition.verification.enable`
/// off, a batch under a transactional id whose coordinator never heard of the partition opens
/// it, and nothing will ever end it. `find-hanging` reports it once it is older than the
/// longest transaction timeout (its records are stamped 20 minutes ago; the default bound is
/// 15 minutes) and `abort` ends it.
#[test]
fn kafka_transactions_tool_finds_and_aborts_a_transaction_its_coordinator_does_not_know() {
    use crate::serve_txn_verification::{
        find_coordinator, init_producer_id, produce_to, settled, transactional_batch_at,
    };
    let mut overrides = support::BROKER.to_vec();
    overrides.push(("transaction.partition.verification.enable", "false"));
    let broker = TestBroker::start(&overrides);
    let mut conn = KafkaConn::connect(broker.port());
    crate::serve_support::auto_create_topic(&mut conn, TOPIC);
    settled("the coordinator", || {
        (find_coordinator(&mut conn, "ghost", 1), ())
    });
    let (pid, epoch) = init_producer_id(&mut conn, "ghost");
    let twenty_minutes_ago = crate::serve_support::now_ms() - 20 * 60_000;
    let batch = transactional_batch_at(pid, epoch, 0, "lost", twenty_minutes_ago);
    assert_eq!(produce_to(&mut conn, 11, TOPIC, "ghost", batch).0, 0);
    assert_eq!(
        read_committed_end(&broker),
        0,
        "pinned by the hanging transaction"
    );

    let out = tool(&broker, &["find-hanging", "--broker-id", "0"]);
    // Topic Partition ProducerId ProducerEpoch CoordinatorEpoch StartOffset LastTimestamp
    // Duration(min)
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0][..3], [TOPIC, "0", &pid.to_string()], "{out}");
    assert_eq!(rows[0][5], "0", "start offset: {out}");
    assert_eq!(rows[0][7], "20", "minutes open: {out}");
    // Within a longer bound it is not yet suspect.
    let out = tool(
        &broker,
        &[
            "find-hanging",
            "--broker-id",
            "0",
            "--max-transaction-timeout",
            "30",
        ],
    );
    assert_eq!(out.lines().count(), 1, "only the header: {out}");

    abort_at_start_and_wait(&broker, 2);
    let out = tool(&broker, &["find-hanging", "--broker-id", "0"]);
    assert_eq!(out.lines().count(), 1, "nothing hangs any more: {out}");
}
