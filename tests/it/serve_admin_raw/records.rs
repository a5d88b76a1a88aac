//! DeleteRecords (then ListOffsets earliest), OffsetForLeaderEpoch and Fetch v12's diverging
//! epoch on produced records.

use super::*;

fn produce(c: &mut Conn, topic: &str, values: usize) {
    let mut batch = RecordBatchBuilder::new(CompressionType::None);
    batch.records = (0..values)
        .map(|i| SimpleRecord::new(1_700_000_000_000, None, Some(vec![b'v'; i + 1])))
        .collect();
    let body = RequestKind::Produce(pr::ProduceRequest {
        acks: -1,
        timeout_ms: 10_000,
        topic_data: vec![pr::TopicProduceData {
            name: s(topic),
            partition_data: vec![pr::PartitionProduceData {
                index: 0,
                records: Some(Bytes::from(batch.build().unwrap())),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::Produce(r) = c.call(body, 9) else {
        panic!()
    };
    assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
}

/// (low watermark, error) of DeleteRecords on partition `p` at version `v`.
fn delete_records(c: &mut Conn, v: i16, topic: &str, p: i32, offset: i64) -> (i64, i16) {
    let body = RequestKind::DeleteRecords(dr::DeleteRecordsRequest {
        topics: vec![dr::DeleteRecordsTopic {
            name: s(topic),
            partitions: vec![dr::DeleteRecordsPartition {
                partition_index: p,
                offset,
                ..Default::default()
            }],
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    });
    let ResponseKind::DeleteRecords(r) = c.call(body, v) else {
        panic!()
    };
    let p = &r.topics[0].partitions[0];
    (p.low_watermark, p.error_code)
}

fn earliest(c: &mut Conn, topic: &str) -> i64 {
    let body = RequestKind::ListOffsets(lo::ListOffsetsRequest {
        replica_id: -1,
        topics: vec![lo::ListOffsetsTopic {
            name: s(topic),
            partitions: vec![lo::ListOffsetsPartition {
                partition_index: 0,
                timestamp: -2,
                current_leader_epoch: -1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::ListOffsets(r) = c.call(body, 7) else {
        panic!()
    };
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.error_code, 0);
    p.offset
}

/// (error, leader epoch, end offset) of OffsetForLeaderEpoch at version `v`.
fn epoch_end(c: &mut Conn, v: i16, topic: &str, current: i32, epoch: i32) -> (i16, i32, i64) {
    let body = RequestKind::OffsetForLeaderEpoch(ofle::OffsetForLeaderEpochRequest {
        replica_id: if v >= 3 { -1 } else { -2 },
        topics: vec![ofle::OffsetForLeaderTopic {
            topic: s(topic),
            partitions: vec![ofle::OffsetForLeaderPartition {
                partition: 0,
                current_leader_epoch: if v >= 2 { current } else { -1 },
                leader_epoch: epoch,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::OffsetForLeaderEpoch(r) = c.call(body, v) else {
        panic!()
    };
    let p = &r.topics[0].partitions[0];
    (p.error_code, p.leader_epoch, p.end_offset)
}

#[test]
fn records_are_deleted_up_to_the_high_watermark_and_epochs_end_at_the_log_end() {
    let mut b = Broker::start(&[]);
    let mut c = b.connect();
    let r = create(
        &mut c,
        7,
        vec![
            new_topic("recs", 1, 1, &[]),
            new_topic("recs-compact", 1, 1, &[("cleanup.policy", Some("compact"))]),
        ],
        30_000,
        false,
    );
    assert!(r.iter().all(|t| t.error_code == 0), "{r:?}");
    produce(&mut c, "recs", 2);
    produce(&mut c, "recs", 3);
    produce(&mut c, "recs", 1);

    // Epoch 0 is the only (latest) epoch: it ends at the log end.
    assert_eq!(epoch_end(&mut c, 4, "recs", 0, 0), (0, 0, 6));
    assert_eq!(
        epoch_end(&mut c, 0, "recs", -1, 0),
        (0, -1, 6),
        "v0 has no epoch field"
    );
    assert_eq!(
        epoch_end(&mut c, 3, "recs", -1, 5),
        (0, -1, -1),
        "unknown epoch"
    );
    assert_eq!(
        epoch_end(&mut c, 4, "recs", 3, 0).0,
        75,
        "UNKNOWN_LEADER_EPOCH"
    );
    assert_eq!(epoch_end(&mut c, 4, "nope", -1, 0).0, 3);

    assert_eq!(delete_records(&mut c, 2, "recs", 0, 2), (2, 0));
    assert_eq!(earliest(&mut c, "recs"), 2);
    assert_eq!(
        delete_records(&mut c, 0, "recs", 0, 1),
        (2, 0),
        "never moves back"
    );
    assert_eq!(
        delete_records(&mut c, 1, "recs", 0, 7),
        (-1, 1),
        "above the high watermark"
    );
    assert_eq!(
        delete_records(&mut c, 2, "recs", 0, -1),
        (6, 0),
        "-1 is the high watermark"
    );
    assert_eq!(earliest(&mut c, "recs"), 6);
    assert_eq!(delete_records(&mut c, 2, "recs", 3, 0), (-1, 3));
    assert_eq!(
        delete_records(&mut c, 2, "recs-compact", 0, 0),
        (-1, 44),
        "POLICY_VIOLATION"
    );
    // The epoch cache still answers after the log start moved past every record.
    assert_eq!(epoch_end(&mut c, 4, "recs", -1, 0), (0, 0, 6));
    b.stop();
}

/// A consumer's Fetch v12 of partition 0 from `offset` claiming `last_fetched_epoch`, waiting up
/// to `max_wait_ms`: (error, diverging epoch, diverging end offset, record bytes).
fn fetch_with_epoch(
    c: &mut Conn,
    topic: &str,
    offset: i64,
    last_fetched_epoch: i32,
    max_wait_ms: i32,
) -> (i16, i32, i64, usize) {
    use kcli::protocol::messages::fetch_request as fr;
    let body = RequestKind::Fetch(fr::FetchRequest {
        replica_id: -1,
        max_wait_ms,
        min_bytes: 1,
        max_bytes: 1 << 20,
        session_epoch: -1,
        topics: vec![fr::FetchTopic {
            topic: s(topic),
            partitions: vec![fr::FetchPartition {
                partition: 0,
                current_leader_epoch: 0,
                fetch_offset: offset,
                last_fetched_epoch,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::Fetch(r) = c.call(body, 12) else {
        panic!()
    };
    let p = &r.responses[0].partitions[0];
    (
        p.error_code,
        p.diverging_epoch.epoch,
        p.diverging_epoch.end_offset,
        p.records.as_ref().map_or(0, Bytes::len),
    )
}

#[test]
fn a_fetch_with_a_last_fetched_epoch_past_its_end_gets_the_diverging_epoch_at_once() {
    let mut b = Broker::start(&[]);
    let mut c = b.connect();
    let r = create(&mut c, 7, vec![new_topic("div", 1, 1, &[])], 30_000, false);
    assert!(r.iter().all(|t| t.error_code == 0), "{r:?}");
    produce(&mut c, "div", 3);
    // Epoch 0 ends at the log end, 3: a fetcher claiming epoch 0 up to 5 diverged there,
    // answered without waiting for data (max_wait_ms 10 s, min_bytes 1).
    let started = Instant::now();
    assert_eq!(fetch_with_epoch(&mut c, "div", 5, 0, 10_000), (0, 0, 3, 0));
    assert!(started.elapsed() < Duration::from_secs(5));
    // At the end of its epoch it reads on: no diverging epoch on the wire (-1, -1).
    let (error, epoch, end, bytes) = fetch_with_epoch(&mut c, "div", 0, 0, 0);
    assert_eq!((error, epoch, end), (0, -1, -1));
    assert!(bytes > 0);
    // An epoch the leader never had (newer than its latest) cannot be placed.
    assert_eq!(
        fetch_with_epoch(&mut c, "div", 3, 1, 0).0,
        1,
        "OFFSET_OUT_OF_RANGE"
    );
    b.stop();
}
