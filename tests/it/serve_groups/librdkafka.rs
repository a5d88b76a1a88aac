//! The rdkafka crate (librdkafka 2.12, in-process) as a group consumer: it subscribes, reads
//! everything, commits synchronously, and a second consumer of the group starts where the
//! first committed; the commits are visible over the raw protocol.

use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};

use super::*;

fn group_consumer(broker: &TestBroker, group: &str) -> BaseConsumer {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("fetch.wait.max.ms", "100")
        .create()
        .unwrap();
    consumer.subscribe(&["rdk"]).unwrap();
    consumer
}

/// Polls until `n` records came (bounded); returns their values.
fn read(consumer: &BaseConsumer, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut out = Vec::new();
    while out.len() < n {
        assert!(Instant::now() < deadline, "{} of {n} records", out.len());
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned())
            }
            Some(Err(e)) => panic!("consumer error: {e}"),
            None => {}
        }
    }
    out
}

#[test]
fn rdkafka_group_consumer_commits_and_a_successor_resumes() {
    let broker = TestBroker::start(&[
        ("group.initial.rebalance.delay.ms", "0"),
        ("offsets.topic.num.partitions", "3"),
    ]);
    let mut conn = KafkaConn::connect(broker.port());
    produce(&mut conn, "rdk", 3);
    let first = group_consumer(&broker, "rdk-group");
    assert_eq!(read(&first, 3), vec!["x"; 3]);
    first.commit_consumer_state(CommitMode::Sync).unwrap();
    let (e, rows) = fetch_offsets(&mut conn, 7, "rdk-group", "rdk", &[0, 1, 2]);
    assert_eq!(e, 0);
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 1, 1]);
    drop(first);
    let second = group_consumer(&broker, "rdk-group");
    let mut more = KafkaConn::connect(broker.port());
    for p in 0..3 {
        let r = more.call(
            &produce_request("rdk", p, batch_of(&[format!("y{p}").into_bytes()]), 1),
            9,
        );
        assert_eq!(produce_result(&r).0, 0);
    }
    let mut got = read(&second, 3);
    got.sort();
    assert_eq!(
        got,
        vec!["y0", "y1", "y2"],
        "the successor read only what was not committed"
    );
}
