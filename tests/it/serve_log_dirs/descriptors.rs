//! A full descriptor table is not a failed disk: a single broker under `ulimit -n` 400 (soft and
//! hard, so its raise at start cannot lift it) is asked for a topic, then partitions, whose logs
//! do not fit. CreateTopics and CreatePartitions answer KAFKA_STORAGE_ERROR with a message naming
//! the limit, nothing of the refused topic is left on disk, the log dir stays online, and the
//! broker keeps serving: Metadata, an existing topic's produce and fetch, a small topic created
//! afterwards.

use super::*;
use crate::serve_support::{
    Launch, batch_of, create_topic_with, fetch_once, produce_request, produce_result,
};

use kcli::protocol::messages::create_partitions_request::{
    CreatePartitionsRequest, CreatePartitionsTopic,
};
use kcli::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};

/// The broker's `ulimit -n`: a tenth (64 at least) is kept free, one per log, the rest of
/// the broker (threads' epoll and event fds, listeners, the embedded store) takes some.
const LIMIT: u64 = 400;

/// A topic of this many partitions needs 400 descriptors: it cannot fit.
const TOO_MANY: i32 = 400;

const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;

/// CreateTopics v7 of `topic` with `partitions` partitions of one replica: (code, message).
fn create_topic_answer(conn: &mut KafkaConn, topic: &str, partitions: i32) -> (i16, String) {
    let request = RequestKind::CreateTopics(CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: StrBytes::from(topic),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    });
    let ResponseKind::CreateTopics(r) = conn.call(&request, 7) else {
        unreachable!()
    };
    let t = &r.topics[0];
    (
        t.error_code,
        t.error_message
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    )
}

/// CreatePartitions v3 growing `topic` to `count`: (code, message).
fn create_partitions_answer(conn: &mut KafkaConn, topic: &str, count: i32) -> (i16, String) {
    let request = RequestKind::CreatePartitions(CreatePartitionsRequest {
        topics: vec![CreatePartitionsTopic {
            name: StrBytes::from(topic),
            count,
            assignments: None,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    });
    let ResponseKind::CreatePartitions(r) = conn.call(&request, 3) else {
        unreachable!()
    };
    let t = &r.results[0];
    (
        t.error_code,
        t.error_message
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    )
}

/// Metadata v12 of `topic` (never auto-created): its error code and its partitions' leaders.
fn topic_leaders(conn: &mut KafkaConn, topic: &str) -> (i16, Vec<i32>) {
    let request = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![metadata_request::MetadataRequestTopic {
            name: Some(StrBytes::from(topic)),
            ..Default::default()
        }]),
        allow_auto_topic_creation: false,
        ..Default::default()
    });
    let ResponseKind::Metadata(md) = conn.call(&request, 12) else {
        unreachable!()
    };
    let t = &md.topics[0];
    (
        t.error_code,
        t.partitions.iter().map(|p| p.leader_id).collect(),
    )
}

/// Produces one record to `topic`-`partition` (acks=1) and fetches it back from offset 0.
fn produce_and_fetch(conn: &mut KafkaConn, topic: &str, partition: i32, logs: &str) {
    let (error, _) = produce_result(&conn.call(
        &produce_request(topic, partition, batch_of(&[b"x".to_vec()]), 1),
        9,
    ));
    assert_eq!(error, 0, "produce to {topic}-{partition}\n{logs}");
    let (error, high_watermark, _) = fetch_once(conn, topic, partition, 0);
    assert_eq!(error, 0, "fetch from {topic}-{partition}\n{logs}");
    assert!(high_watermark >= 1, "{topic}-{partition}: {high_watermark}");
}

#[test]
fn a_topic_beyond_the_open_file_limit_is_refused_and_the_broker_serves_on() {
    let mut broker = TestBroker::start_with(
        &[],
        Launch {
            open_file_limit: Some(LIMIT),
            ..Launch::default()
        },
    );
    assert!(
        broker
            .stderr()
            .contains(&format!("soft_limit={LIMIT} hard_limit={LIMIT}")),
        "the limits are logged at start\n{}",
        broker.stderr()
    );
    let mut c = KafkaConn::connect(broker.port());
    create_topic_with(&mut c, "before", 4, &[]);
    produce_and_fetch(&mut c, "before", 3, &broker.stderr());

    let (code, message) = create_topic_answer(&mut c, "big", TOO_MANY);
    assert_eq!(code, KAFKA_STORAGE_ERROR, "{message}\n{}", broker.stderr());
    for want in [
        "too many open files",
        "raise ulimit -n",
        &format!("open file limit {LIMIT}"),
    ] {
        assert!(message.contains(want), "{want:?} in {message:?}");
    }
    // Refused before anything was written: no topic, no partition dir.
    assert_eq!(topic_leaders(&mut c, "big").0, UNKNOWN_TOPIC_OR_PARTITION);
    let data = broker.data_dir();
    let left: Vec<String> = partition_entries(&data)
        .into_iter()
        .filter(|n| n.starts_with("big-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let (code, message) = create_partitions_answer(&mut c, "before", TOO_MANY);
    assert_eq!(code, KAFKA_STORAGE_ERROR, "{message}\n{}", broker.stderr());
    assert!(message.contains("raise ulimit -n"), "{message}");
    assert_eq!(topic_leaders(&mut c, "before"), (0, vec![0; 4]));

    // The dir is online and the broker serves: the old topic, a new small one.
    let r = describe(&mut c, 4, None);
    assert_eq!(r.results.len(), 1, "{r:?}");
    assert_eq!(r.results[0].error_code, 0, "{r:?}");
    assert_eq!(placement(&r, "before", 0).len(), 1, "{r:?}");
    create_topic_with(&mut c, "after", 2, &[]);
    produce_and_fetch(&mut c, "after", 1, &broker.stderr());
    produce_and_fetch(&mut c, "before", 0, &broker.stderr());
    // A fresh connection is accepted too: descriptors were kept free.
    let mut fresh = KafkaConn::connect(broker.port());
    assert_eq!(topic_leaders(&mut fresh, "after"), (0, vec![0, 0]));

    assert!(broker.is_running());
    let log = broker.stderr();
    assert_eq!(
        log.matches("refused new partitions").count(),
        2,
        "one line per refused request\n{log}"
    );
    assert!(!log.contains("log dir failed"), "{log}");
    broker.stop();
}
