//! `kcli serve` under concurrent load on one partition, over raw connections: producers on
//! several connections (acks=1 and acks=all) while consumers long-poll the same partition, and
//! the log rolls a segment every few KiB while retention deletes the oldest ones. Every
//! acknowledged batch gets its own offsets, and every record a consumer reads is the one
//! acknowledged at that offset.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::fetch_request::{FetchPartition, FetchRequest, FetchTopic};
use kcli::protocol::messages::{MetadataRequest, RequestKind, ResponseKind, metadata_request};
use kcli::protocol::record::batch::RecordBatchHeader;
use kcli::protocol::record::batch_iter::BatchIter;
use kcli::protocol::record::records::{batch_records, for_each_record};

use crate::serve_support::{
    FETCH_VERSION, KafkaConn, PRODUCE_VERSION, TestBroker, batch_of, list_offset, produce_request,
    produce_result,
};

const PRODUCERS: usize = 6;
const BATCHES: usize = 250;

/// Long-poll fetches from offset 0 until `done` and caught up with the log end; an offset
/// below the log start (deleted by retention meanwhile) restarts at the log start. Returns the
/// (offset, value) pairs read, in order, and how many times it was reset. `pause` after each
/// fetch makes a slow consumer that retention overtakes.
fn consume_until_done(
    port: u16,
    done: Arc<AtomicBool>,
    pause: Duration,
) -> (Vec<(i64, Vec<u8>)>, usize) {
    let mut resets = 0;
    let mut conn = KafkaConn::connect(port);
    let mut out: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut next = 0i64;
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "consumer ran 60 s"
        );
        let finished = done.load(Ordering::SeqCst);
        let request = RequestKind::Fetch(FetchRequest {
            max_wait_ms: 100,
            min_bytes: 1,
            max_bytes: 1 << 20,
            session_epoch: -1,
            topics: vec![FetchTopic {
                topic: StrBytes::from("busy"),
                partitions: vec![FetchPartition {
                    partition: 0,
                    fetch_offset: next,
                    partition_max_bytes: 64 << 10,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        });
        let ResponseKind::Fetch(f) = conn.call(&request, FETCH_VERSION) else {
            unreachable!()
        };
        let p = &f.responses[0].partitions[0];
        if p.error_code == 1 {
            // OFFSET_OUT_OF_RANGE: retention passed us.
            let (error, earliest, _) = list_offset(&mut conn, "busy", 0, -2);
            assert_eq!(error, 0);
            assert!(
                earliest > next,
                "out of range at {next}, but the log starts at {earliest}"
            );
            next = earliest;
            resets += 1;
            continue;
        }
        assert_eq!(p.error_code, 0, "fetch at {next}");
        let records = p.records.clone().unwrap_or_default();
        for batch in BatchIter::new(&records) {
            let Ok(batch) = batch else { break };
            assert!(batch.is_valid(), "bad CRC in a batch fetched at {next}");
            let header = RecordBatchHeader::parse(batch.bytes).unwrap();
            let body = batch_records(batch.bytes, &header, 1 << 24).unwrap();
            for_each_record(&body, header.records_count, |_, r| {
                let offset = r.offset(header.base_offset);
                if offset >= next {
                    assert!(
                        offset < p.high_watermark,
                        "read {offset} above the high watermark"
                    );
                    out.push((offset, r.value.unwrap_or_default().to_vec()));
                    next = offset + 1;
                }
            })
            .unwrap();
        }
        if finished && next >= p.high_watermark {
            return (out, resets);
        }
        std::thread::sleep(pause);
    }
}

#[test]
fn concurrent_producers_and_consumers_across_segment_rolls_and_retention() {
    let broker = TestBroker::start(&[
        ("log.segment.bytes", "16384"),
        ("log.retention.bytes", "131072"),
        ("log.retention.check.interval.ms", "100"),
        ("log.segment.delete.delay.ms", "0"),
    ]);
    let port = broker.port();
    let mut conn = KafkaConn::connect(port);
    conn.call(
        &RequestKind::Metadata(MetadataRequest {
            topics: Some(vec![metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("busy")),
                ..Default::default()
            }]),
            allow_auto_topic_creation: true,
            ..Default::default()
        }),
        9,
    );
    let done = Arc::new(AtomicBool::new(false));
    let consumers: Vec<_> = [0, 0, 40]
        .into_iter()
        .map(|pause| {
            let done = done.clone();
            let pause = Duration::from_millis(pause);
            std::thread::spawn(move || consume_until_done(port, done, pause))
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|w| {
            std::thread::spawn(move || {
                let mut conn = KafkaConn::connect(port);
                let mut acked = Vec::new();
                for b in 0..BATCHES {
                    let batch: Vec<Vec<u8>> = (0..1 + (b + w) % 5)
                        .map(|i| format!("w{w}-b{b}-r{i}-{}", "p".repeat((b * 7 + w) % 300)))
                        .map(String::into_bytes)
                        .collect();
                    let acks = if b % 2 == 0 { 1 } else { -1 };
                    let r = conn.call(
                        &produce_request("busy", 0, batch_of(&batch), acks),
                        PRODUCE_VERSION,
                    );
                    let (error, base) = produce_result(&r);
                    assert_eq!(error, 0, "w{w} batch {b}");
                    acked.push((base, batch));
                }
                acked
            })
        })
        .collect();
    let mut by_offset: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
    for t in producers {
        for (base, batch) in t.join().unwrap() {
            for (i, v) in batch.into_iter().enumerate() {
                let offset = base + i as i64;
                assert!(
                    by_offset.insert(offset, v).is_none(),
                    "offset {offset} acknowledged twice"
                );
            }
        }
    }
    let end = by_offset.len() as i64;
    assert_eq!(
        by_offset.keys().copied().collect::<Vec<_>>(),
        (0..end).collect::<Vec<_>>(),
        "acknowledged offsets are not contiguous"
    );
    done.store(true, Ordering::SeqCst);
    for (c, t) in consumers.into_iter().enumerate() {
        let (read, resets) = t.join().unwrap();
        assert!(
            read.windows(2).all(|w| w[0].0 < w[1].0),
            "consumer {c}: offsets not increasing"
        );
        assert_eq!(read.last().map(|r| r.0), Some(end - 1), "consumer {c}: end");
        for (offset, value) in &read {
            assert!(
                by_offset.get(offset) == Some(value),
                "consumer {c}: offset {offset} is not the acknowledged record"
            );
        }
        eprintln!(
            "consumer {c}: {} of {end} records read, {resets} resets",
            read.len()
        );
    }
    let (_, start, _) = list_offset(&mut conn, "busy", 0, -2);
    let (_, latest, _) = list_offset(&mut conn, "busy", 0, -1);
    assert_eq!(latest, end);
    assert!(start > 0, "retention deleted nothing");
    eprintln!("log start {start}, end {end}");
}
