//! More partitions than descriptors: a single broker under `ulimit -n` 400 (soft and hard, so
//! its raise at start cannot lift it) keeps at most 272 segment files open (four fifths of the
//! limit less 64 each way) and closes idle ones. A topic of 1,000 partitions and then 600
//! partitions more are created, every partition is written and read back, twice over (every
//! closed file opened again), with the process's descriptors under the limit throughout; after
//! a kill -9 the broker recovers all 1,600 logs under the same limit, nothing lost. The log dir
//! stays online and a fresh connection is accepted. Kafka, at a descriptor per segment, cannot
//! host them under this limit.

use super::*;
use crate::serve_support::{Launch, batch_of, produce_request, produce_result, read_partition};

use kcli::protocol::messages::create_partitions_request::{
    CreatePartitionsRequest, CreatePartitionsTopic,
};
use kcli::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};

/// The broker's `ulimit -n`.
const LIMIT: u64 = 400;

/// The segment files the broker keeps open under [`LIMIT`]: the limit less a fifth (at least
/// 128).
const OPEN_LOG_FILES: u64 = LIMIT - 128;

/// Partitions of the first topic, and what CreatePartitions grows it to.
const PARTITIONS: i32 = 1_000;
const GROWN: i32 = 1_600;

/// CreateTopics v7 of `topic` with `partitions` partitions of one replica: (code, message).
fn create_topic_answer(conn: &mut KafkaConn, topic: &str, partitions: i32) -> (i16, String) {
    let request = RequestKind::CreateTopics(CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: StrBytes::from(topic),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
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
        timeout_ms: 30_000,
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

/// The descriptors process `pid` has open.
fn open_descriptors(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64
}

/// Produces a record of value `round` to every partition of `topic` in `partitions` (acks=1),
/// then reads each back from offset 0: the records of values 1 to `round`. The broker's
/// descriptors are checked every 50 partitions.
fn write_and_read_every_partition(
    broker: &TestBroker,
    conn: &mut KafkaConn,
    topic: &str,
    partitions: std::ops::Range<i32>,
    round: u8,
) {
    let most_open = |most: &mut u64| *most = (*most).max(open_descriptors(broker.pid()));
    let mut most = 0;
    for p in partitions.clone() {
        let (error, _) =
            produce_result(&conn.call(&produce_request(topic, p, batch_of(&[vec![round]]), 1), 9));
        assert_eq!(error, 0, "produce to {topic}-{p}\n{}", broker.stderr());
        if p % 50 == 0 {
            most_open(&mut most);
        }
    }
    for p in partitions {
        let records = read_partition(conn, topic, p);
        let values: Vec<u8> = records.iter().flat_map(|(_, v)| v.clone()).collect();
        let want: Vec<u8> = (1..=round).collect();
        assert_eq!(values, want, "{topic}-{p}\n{}", broker.stderr());
        if p % 50 == 0 {
            most_open(&mut most);
        }
    }
    assert!(
        most < LIMIT,
        "{most} descriptors open under a limit of {LIMIT}"
    );
}

#[test]
fn a_broker_hosts_more_partitions_than_its_open_file_limit() {
    let mut broker = TestBroker::start_with(
        &[],
        Launch {
            open_file_limit: Some(LIMIT),
            ..Launch::default()
        },
    );
    let started = broker.stderr();
    for want in [
        format!("soft_limit={LIMIT} hard_limit={LIMIT}"),
        format!("open_log_files={OPEN_LOG_FILES}"),
    ] {
        assert!(
            started.contains(&want),
            "{want:?} logged at start\n{started}"
        );
    }
    let mut c = KafkaConn::connect(broker.port());
    let (code, message) = create_topic_answer(&mut c, "big", PARTITIONS);
    assert_eq!(code, 0, "{message}\n{}", broker.stderr());
    let (code, message) = create_partitions_answer(&mut c, "big", GROWN);
    assert_eq!(code, 0, "{message}\n{}", broker.stderr());
    let (code, leaders) = topic_leaders(&mut c, "big");
    assert_eq!((code, leaders.len()), (0, GROWN as usize));
    assert!(leaders.iter().all(|l| *l == 0), "{leaders:?}");
    assert_eq!(
        partition_entries(&broker.data_dir())
            .iter()
            .filter(|n| n.starts_with("big-"))
            .count(),
        GROWN as usize
    );

    // Twice over every partition: the second round finds most files closed and opens them.
    write_and_read_every_partition(&broker, &mut c, "big", 0..GROWN, 1);
    write_and_read_every_partition(&broker, &mut c, "big", 0..GROWN, 2);

    // A kill -9: every log is recovered under the same limit, every record there.
    drop(c);
    broker.kill9();
    broker.restart();
    let mut c = KafkaConn::connect(broker.port());
    write_and_read_every_partition(&broker, &mut c, "big", 0..GROWN, 3);

    // The dir is online; a fresh connection is accepted: descriptors were kept free.
    let r = describe(&mut c, 4, None);
    assert_eq!(r.results.len(), 1, "{r:?}");
    assert_eq!(r.results[0].error_code, 0, "{r:?}");
    let mut fresh = KafkaConn::connect(broker.port());
    assert_eq!(topic_leaders(&mut fresh, "big").0, 0);
    assert!(broker.is_running());
    let log = broker.stderr();
    for unwanted in ["log dir failed", "refused", "too many open files"] {
        assert!(!log.contains(unwanted), "{unwanted:?}\n{log}");
    }
    broker.stop();
}
