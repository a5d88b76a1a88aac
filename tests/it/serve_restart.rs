//! `kcli serve` across restarts: a clean stop (SIGTERM) and restart keeps every record, every
//! topic id and partition, and leaves the clean-shutdown marker so the restart recovers
//! nothing; topic config overrides survive a restart; a kill -9 in the middle of a continuous
//! acks=1 produce loses no acknowledged record, and the log (and its time index) goes on after
//! the last record that survived; SIGTERM while producers stream and consumers sit in long polls
//! stops the broker promptly and loses nothing.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kcli::protocol::codec::{StrBytes, Uuid};
use kcli::protocol::messages::{MetadataRequest, RequestKind, ResponseKind, metadata_request};

use crate::serve_support::{
    KafkaConn, PRODUCE_VERSION, TestBroker, batch_at, batch_of, create_topic_with, list_offset,
    produce_request, produce_result, read_partition,
};

/// (topic id, partition count) of each topic, from Metadata v12, which auto-creates them when
/// `create` (as clients do before they produce: Produce never creates a topic).
fn metadata(
    conn: &mut KafkaConn,
    topics: &[&str],
    create: bool,
) -> BTreeMap<String, (Uuid, usize)> {
    let request = RequestKind::Metadata(MetadataRequest {
        topics: Some(
            topics
                .iter()
                .map(|t| metadata_request::MetadataRequestTopic {
                    name: Some(StrBytes::from(*t)),
                    ..Default::default()
                })
                .collect(),
        ),
        allow_auto_topic_creation: create,
        ..Default::default()
    });
    let ResponseKind::Metadata(md) = conn.call(&request, 12) else {
        unreachable!()
    };
    md.topics
        .iter()
        .map(|t| {
            assert_eq!(t.error_code, 0, "{t:?}");
            for p in &t.partitions {
                assert_eq!((p.error_code, p.leader_id), (0, 0), "{t:?}");
            }
            (
                t.name.as_ref().unwrap().to_string_lossy().into_owned(),
                (t.topic_id, t.partitions.len()),
            )
        })
        .collect()
}

fn topic_ids(conn: &mut KafkaConn, topics: &[&str]) -> BTreeMap<String, (Uuid, usize)> {
    metadata(conn, topics, false)
}

/// What was produced to one partition: the values by offset, and each batch's (timestamp,
/// base offset, record count); batch `b` has timestamp `base_ts + 1000 b`.
#[derive(Default)]
struct Produced {
    values: Vec<Vec<u8>>,
    batches: Vec<(i64, i64, usize)>,
}

/// Produces `batches` batches of 1..=7 records to the partition (acks=all).
fn produce_some(
    conn: &mut KafkaConn,
    topic: &str,
    partition: i32,
    batches: usize,
    base_ts: i64,
) -> Produced {
    let mut out = Produced::default();
    for b in 0..batches {
        let batch: Vec<Vec<u8>> = (0..1 + b % 7)
            .map(|i| {
                format!("{topic}-{partition}-{b}-{i}-{}", "x".repeat(b * 13 % 700)).into_bytes()
            })
            .collect();
        let ts = base_ts + 1000 * b as i64;
        let response = conn.call(
            &produce_request(topic, partition, batch_at(&batch, ts), -1),
            PRODUCE_VERSION,
        );
        let base = out.values.len() as i64;
        assert_eq!(
            produce_result(&response),
            (0, base),
            "{topic}-{partition} batch {b}"
        );
        out.batches.push((ts, base, batch.len()));
        out.values.extend(batch);
    }
    out
}

/// ListOffsets by time finds each batch (by its own timestamp and by a time just after the
/// previous batch's), and earliest, latest and max-timestamp are right.
fn assert_time_lookups(conn: &mut KafkaConn, topic: &str, partition: i32, p: &Produced) {
    let end = p.values.len() as i64;
    let tp = format!("{topic}-{partition}");
    assert_eq!(
        list_offset(conn, topic, partition, -2).1,
        0,
        "{tp}: earliest"
    );
    assert_eq!(
        list_offset(conn, topic, partition, -1).1,
        end,
        "{tp}: latest"
    );
    for (i, &(ts, base, _)) in p.batches.iter().enumerate() {
        assert_eq!(
            list_offset(conn, topic, partition, ts),
            (0, base, ts),
            "{tp}: batch {i} by its timestamp"
        );
        assert_eq!(
            list_offset(conn, topic, partition, ts - 999).1,
            base,
            "{tp}: batch {i} by a time after the previous batch"
        );
    }
    let &(last_ts, last_base, _) = p.batches.last().unwrap();
    assert_eq!(
        list_offset(conn, topic, partition, last_ts + 1),
        (0, -1, -1),
        "{tp}: after the last timestamp"
    );
    assert_eq!(
        list_offset(conn, topic, partition, -3),
        (0, last_base, last_ts),
        "{tp}: max timestamp"
    );
}

fn assert_partition(conn: &mut KafkaConn, topic: &str, partition: i32, want: &[Vec<u8>]) {
    let got = read_partition(conn, topic, partition);
    assert_eq!(got.len(), want.len(), "{topic}-{partition}: record count");
    for ((offset, value), want) in got.iter().zip(want) {
        assert!(value == want, "{topic}-{partition} offset {offset} differs");
    }
}

/// Produce to two auto-created topics over several segments, stop with SIGTERM, restart twice:
/// the same topic ids and partitions, every record, no log recovery after a clean stop, and
/// appends continue at the old end.
#[test]
fn clean_stop_and_restart_keeps_records_and_topic_ids() {
    let mut broker = TestBroker::start(&[("num.partitions", "3"), ("log.segment.bytes", "65536")]);
    let topics = ["alpha", "beta"];
    let mut conn = KafkaConn::connect(broker.port());
    metadata(&mut conn, &topics, true);
    let base_ts = crate::serve_support::now_ms() / 1000 * 1000 - 3_600_000;
    let mut data: BTreeMap<(&str, i32), Produced> = BTreeMap::new();
    for topic in topics {
        for p in 0..3 {
            let produced = produce_some(&mut conn, topic, p, 60, base_ts);
            assert_time_lookups(&mut conn, topic, p, &produced);
            data.insert((topic, p), produced);
        }
    }
    let ids = topic_ids(&mut conn, &topics);
    assert_eq!(ids.len(), 2);
    assert!(
        ids.values().all(|(id, n)| *id != Uuid::nil() && *n == 3),
        "{ids:?}"
    );
    let segments = std::fs::read_dir(broker.data_dir().join("alpha-0"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "log")
        })
        .count();
    assert!(segments >= 2, "want several segments, got {segments}");
    drop(conn);

    for round in 0..2 {
        broker.stop();
        assert!(
            broker.data_dir().join(".kafka_cleanshutdown").exists(),
            "no clean-shutdown marker after SIGTERM"
        );
        broker.restart();
        let last_start = broker.stderr();
        let last_start = last_start.rsplit("--- kcli serve stderr").next().unwrap();
        assert!(
            !last_start.contains("recovering logs"),
            "round {round}: logs recovered after a clean shutdown:\n{last_start}"
        );
        let mut conn = KafkaConn::connect(broker.port());
        assert_eq!(
            topic_ids(&mut conn, &topics),
            ids,
            "round {round}: topic ids"
        );
        for ((topic, p), produced) in data.iter_mut() {
            assert_partition(&mut conn, topic, *p, &produced.values);
            assert_time_lookups(&mut conn, topic, *p, produced);
            // The log continues at its end.
            let more = vec![format!("after restart {round}").into_bytes()];
            let (last_ts, _, _) = *produced.batches.last().unwrap();
            let ts = last_ts + 1000;
            let response = conn.call(
                &produce_request(topic, *p, batch_at(&more, ts), 1),
                PRODUCE_VERSION,
            );
            let end = produced.values.len() as i64;
            assert_eq!(produce_result(&response), (0, end));
            produced.batches.push((ts, end, 1));
            produced.values.extend(more);
        }
    }
}

/// A topic created with config overrides (CreateTopics) keeps them across a restart: the
/// overrides are described as the topic's own, and `max.message.bytes` is still enforced.
#[test]
fn topic_config_overrides_survive_a_restart() {
    use kcli::protocol::messages::describe_configs_request::{
        DescribeConfigsRequest, DescribeConfigsResource,
    };
    let mut broker = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(broker.port());
    let configs = [
        ("max.message.bytes", "2000"),
        ("retention.ms", "123456789"),
        ("min.compaction.lag.ms", "1000"),
        ("message.downconversion.enable", "false"),
    ];
    let id = create_topic_with(&mut conn, "cfg", 2, &configs).topic_id;
    drop(conn);
    broker.stop();
    broker.restart();

    let mut conn = KafkaConn::connect(broker.port());
    assert_eq!(topic_ids(&mut conn, &["cfg"])["cfg"], (id, 2));
    let describe = RequestKind::DescribeConfigs(DescribeConfigsRequest {
        resources: vec![DescribeConfigsResource {
            resource_type: 2, // TOPIC
            resource_name: StrBytes::from("cfg"),
            configuration_keys: None,
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::DescribeConfigs(described) = conn.call(&describe, 4) else {
        unreachable!()
    };
    let result = &described.results[0];
    assert_eq!(result.error_code, 0, "{result:?}");
    for (key, value) in configs {
        let entry = result
            .configs
            .iter()
            .find(|c| c.name == key)
            .unwrap_or_else(|| panic!("{key} not described: {result:?}"));
        assert_eq!(
            entry.value.as_ref().map(|v| v.to_string()),
            Some(value.to_string())
        );
        assert_eq!(entry.config_source, 1, "{key}: TOPIC_CONFIG source");
    }
    // Enforced: a 3000-byte batch is over the topic's limit, not the broker's.
    let big = batch_of(&[vec![7u8; 3000]]);
    let response = conn.call(&produce_request("cfg", 0, big.clone(), 1), PRODUCE_VERSION);
    assert_eq!(produce_result(&response).0, 10, "MESSAGE_TOO_LARGE");
    metadata(&mut conn, &["other"], true);
    let response = conn.call(&produce_request("other", 0, big, 1), PRODUCE_VERSION);
    assert_eq!(produce_result(&response), (0, 0));
}

/// What one producer thread saw: the batches acknowledged (base offset, values), and the one
/// in flight when the connection broke, if any.
#[derive(Default)]
struct ProduceLog {
    /// (base offset, timestamp, values).
    acked: Vec<(i64, i64, Vec<Vec<u8>>)>,
    in_flight: Option<(i64, Vec<Vec<u8>>)>,
}

/// Produces acks=1 batches to one partition in a loop until `stop` or until the connection
/// breaks; batch `n` has timestamp `base_ts + n`.
fn produce_until_broken(
    port: u16,
    partition: i32,
    base_ts: i64,
    stop: Arc<AtomicBool>,
) -> ProduceLog {
    let mut log = ProduceLog::default();
    let mut conn = KafkaConn::connect(port);
    let mut seq = 0usize;
    while !stop.load(Ordering::SeqCst) {
        let batch: Vec<Vec<u8>> = (0..1 + seq % 9)
            .map(|i| {
                format!("p{partition}-b{seq}-r{i}-{}", "v".repeat(seq * 31 % 900)).into_bytes()
            })
            .collect();
        let ts = base_ts + seq as i64;
        seq += 1;
        log.in_flight = Some((ts, batch.clone()));
        let request = produce_request("crash", partition, batch_at(&batch, ts), 1);
        let Ok(sent) = conn.send(&request, PRODUCE_VERSION) else {
            break;
        };
        let Ok((correlation, response)) =
            conn.recv(kcli::protocol::messages::ApiKey::Produce, PRODUCE_VERSION)
        else {
            break;
        };
        assert_eq!(correlation, sent);
        let (error, base) = produce_result(&response);
        assert_eq!(error, 0, "p{partition}: produce failed");
        log.acked.push((base, ts, batch));
        log.in_flight = None;
    }
    log
}

/// kill -9 while three connections produce acks=1 batches as fast as they can, twice: after
/// each restart every acknowledged batch is at the offsets it was acknowledged with, anything
/// beyond is the one batch that was in flight (whole, or not at all), and appends continue at
/// the end of what survived.
#[test]
fn kill9_during_acks1_produce_keeps_every_acknowledged_record() {
    let mut broker = TestBroker::start(&[("num.partitions", "3"), ("log.segment.bytes", "200000")]);
    // A brand-new data dir has no clean-shutdown marker but nothing to recover either.
    assert!(
        !broker.stderr().contains("recovering logs"),
        "{}",
        broker.stderr()
    );
    metadata(&mut KafkaConn::connect(broker.port()), &["crash"], true);
    let base_ts = crate::serve_support::now_ms() - 3_600_000;
    let mut expected: BTreeMap<i32, Vec<Vec<u8>>> = BTreeMap::new();
    for round in 0..2 {
        let round_ts = base_ts + round * 10_000_000;
        let stop = Arc::new(AtomicBool::new(false));
        let port = broker.port();
        let producers: Vec<_> = (0..3)
            .map(|p| {
                let stop = stop.clone();
                std::thread::spawn(move || produce_until_broken(port, p, round_ts, stop))
            })
            .collect();
        // Let them run, then kill in the middle of the stream.
        std::thread::sleep(Duration::from_millis(1500));
        broker.kill9();
        stop.store(true, Ordering::SeqCst);
        let logs: Vec<ProduceLog> = producers.into_iter().map(|t| t.join().unwrap()).collect();
        let acked: usize = logs.iter().map(|l| l.acked.len()).sum();
        assert!(
            acked > 50,
            "round {round}: only {acked} batches acknowledged"
        );

        let start = Instant::now();
        broker.restart();
        let restart_time = start.elapsed();
        let restart_log = broker.stderr();
        let restart_log = restart_log.rsplit("--- kcli serve stderr").next().unwrap();
        assert!(
            restart_log.contains("recovering logs"),
            "round {round}: no log recovery after kill -9:\n{restart_log}"
        );
        let mut conn = KafkaConn::connect(broker.port());
        for (p, log) in logs.iter().enumerate() {
            let p = p as i32;
            let values = expected.entry(p).or_default();
            let round_start = values.len();
            for (base, _, batch) in &log.acked {
                assert_eq!(
                    *base,
                    values.len() as i64,
                    "round {round} p{p}: acked base offset"
                );
                values.extend(batch.iter().cloned());
            }
            let got = read_partition(&mut conn, "crash", p);
            assert!(
                got.len() >= values.len(),
                "round {round} p{p}: {} records after the kill, {} acknowledged",
                got.len(),
                values.len()
            );
            for (offset, value) in &got[..values.len()] {
                assert!(
                    *value == values[*offset as usize],
                    "round {round} p{p}: acknowledged offset {offset} differs"
                );
            }
            let extra: Vec<Vec<u8>> = got[values.len()..].iter().map(|(_, v)| v.clone()).collect();
            let mut last = log.acked.last().map(|(b, ts, _)| (*b, *ts));
            if !extra.is_empty() {
                let (ts, batch) = log.in_flight.as_ref().unwrap_or_else(|| {
                    panic!("round {round} p{p}: records beyond the acknowledged ones")
                });
                assert_eq!(&extra, batch, "round {round} p{p}: the batch in flight");
                last = Some((values.len() as i64, *ts));
            }
            values.extend(extra);
            // The time index came back with the log: every 25th batch of the round by its
            // timestamp, and the max timestamp.
            for (base, ts, _) in log.acked.iter().step_by(25) {
                assert_eq!(
                    list_offset(&mut conn, "crash", p, *ts),
                    (0, *base, *ts),
                    "round {round} p{p}: offset for time {ts}"
                );
            }
            let (last_base, last_ts) = last.unwrap();
            assert_eq!(
                list_offset(&mut conn, "crash", p, -3),
                (0, last_base, last_ts),
                "round {round} p{p}: max timestamp"
            );
            assert_eq!(
                list_offset(&mut conn, "crash", p, -1).1,
                values.len() as i64
            );
            assert!(values.len() > round_start);
            // Appends continue after what survived.
            let more = vec![format!("after kill {round}").into_bytes()];
            let response = conn.call(
                &produce_request("crash", p, batch_at(&more, last_ts + 1), 1),
                PRODUCE_VERSION,
            );
            assert_eq!(produce_result(&response), (0, values.len() as i64));
            values.extend(more);
        }
        eprintln!(
            "round {round}: {acked} batches acknowledged, {} records kept; restart took {restart_time:?}",
            expected.values().map(Vec::len).sum::<usize>()
        );
    }
}

/// SIGTERM while three connections stream acks=1 batches and two consumers are parked in
/// 60 s long polls: the broker stops within a few seconds (it does not wait out the polls),
/// cleanly, and after a restart every acknowledged batch is there and nothing was recovered.
#[test]
fn sigterm_during_produce_and_long_polls_is_prompt_and_loses_nothing() {
    use kcli::protocol::messages::fetch_request::{FetchPartition, FetchRequest, FetchTopic};
    let mut broker = TestBroker::start(&[("num.partitions", "3")]);
    let port = broker.port();
    metadata(&mut KafkaConn::connect(port), &["term", "idle"], true);
    let pollers: Vec<_> = (0..2)
        .map(|_| {
            let mut conn = KafkaConn::connect(port);
            let request = RequestKind::Fetch(FetchRequest {
                max_wait_ms: 60_000,
                min_bytes: 1,
                max_bytes: 1 << 20,
                session_epoch: -1,
                topics: vec![FetchTopic {
                    topic: StrBytes::from("idle"),
                    partitions: vec![FetchPartition {
                        partition: 0,
                        fetch_offset: 0,
                        partition_max_bytes: 1 << 20,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            });
            conn.send(&request, crate::serve_support::FETCH_VERSION)
                .unwrap();
            conn
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let base_ts = crate::serve_support::now_ms();
    let producers: Vec<_> = (0..3)
        .map(|p| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut log = ProduceLog::default();
                let mut conn = KafkaConn::connect(port);
                let mut seq = 0;
                while !stop.load(Ordering::SeqCst) {
                    let batch = vec![format!("term p{p} {seq}").into_bytes()];
                    let request = produce_request("term", p, batch_at(&batch, base_ts + seq), 1);
                    seq += 1;
                    if conn.send(&request, PRODUCE_VERSION).is_err() {
                        break;
                    }
                    match conn.recv(kcli::protocol::messages::ApiKey::Produce, PRODUCE_VERSION) {
                        Ok((_, r)) => {
                            let (error, base) = produce_result(&r);
                            assert_eq!(error, 0);
                            log.acked.push((base, 0, batch));
                        }
                        Err(_) => break,
                    }
                }
                log
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    let start = Instant::now();
    // Kafka does not wait for its purgatories at shutdown: it closes the connections under
    // them. Ten seconds is ample for everything else.
    broker.stop_within(Duration::from_secs(10));
    let took = start.elapsed();
    stop.store(true, Ordering::SeqCst);
    let logs: Vec<ProduceLog> = producers.into_iter().map(|t| t.join().unwrap()).collect();
    drop(pollers);
    broker.restart();
    let restart_log = broker.stderr();
    let restart_log = restart_log.rsplit("--- kcli serve stderr").next().unwrap();
    assert!(
        !restart_log.contains("recovering logs"),
        "logs recovered after SIGTERM:\n{restart_log}"
    );
    let mut conn = KafkaConn::connect(broker.port());
    for (p, log) in logs.iter().enumerate() {
        let got = read_partition(&mut conn, "term", p as i32);
        assert!(
            got.len() >= log.acked.len(),
            "p{p}: acknowledged records lost"
        );
        for (base, _, batch) in &log.acked {
            assert!(
                got[*base as usize].1 == batch[0],
                "p{p}: offset {base} differs"
            );
        }
    }
    eprintln!(
        "SIGTERM took {took:?}; {} batches acknowledged",
        logs.iter().map(|l| l.acked.len()).sum::<usize>()
    );
}
