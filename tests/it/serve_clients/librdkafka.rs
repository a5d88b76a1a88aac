//! The rdkafka crate (librdkafka 2.12, in-process) against `kcli serve`: keys, null values and
//! repeated headers, 32 partitions, 1 MiB records, acks=0, long polls, offset resets,
//! LogAppendTime and fetch limits below the record size, transactions.

use super::*;

struct Rec {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(&'static str, Option<&'static [u8]>)>,
    timestamp: i64,
}

/// A FutureProducer (acks=1, then acks=all) and a group-less BaseConsumer: keys (null, empty,
/// binary), null and empty values, headers with repeated keys and a null header value,
/// explicit timestamps; offsets from the delivery reports match what is read back.
#[test]
fn rdkafka_keys_null_values_and_repeated_headers() {
    let broker = TestBroker::start(&[]);
    let base = now_ms() - 10_000;
    let mut recs = vec![
        Rec {
            key: Some(b"k0".to_vec()),
            value: Some(b"v0".to_vec()),
            headers: vec![
                ("h", Some(b"1")),
                ("h", Some(b"2")),
                ("x", None),
                ("h", Some(b"")),
            ],
            timestamp: base,
        },
        Rec {
            key: None,
            value: None,
            headers: vec![],
            timestamp: base + 1,
        },
        Rec {
            key: Some(Vec::new()),
            value: Some(Vec::new()),
            headers: vec![("", Some(b"empty name"))],
            timestamp: base + 2,
        },
        Rec {
            key: Some((0..=255).collect()),
            value: None,
            headers: vec![("bin", Some(b"\x00\xff\x00"))],
            timestamp: base - 5_000, // out of order: allowed
        },
    ];
    for i in 0..200 {
        recs.push(Rec {
            key: Some(format!("key-{i}").into_bytes()),
            value: Some(format!("value-{i}-{}", "z".repeat(i)).into_bytes()),
            headers: vec![("seq", Some(b"n")), ("seq", Some(b"m"))],
            timestamp: base + 100 + i as i64,
        });
    }
    fn to_record(r: &Rec) -> FutureRecord<'_, [u8], [u8]> {
        let mut headers = OwnedHeaders::new();
        for (k, v) in &r.headers {
            headers = headers.insert(Header {
                key: k,
                value: v.as_ref().map(|v| &v[..]),
            });
        }
        let mut f = FutureRecord::<[u8], [u8]>::to("rk")
            .partition(0)
            .timestamp(r.timestamp)
            .headers(headers);
        if let Some(k) = &r.key {
            f = f.key(&k[..]);
        }
        if let Some(v) = &r.value {
            f = f.payload(&v[..]);
        }
        f
    }
    let half = recs.len() / 2;
    let acks1 = producer(&broker, &[("acks", "1"), ("compression.codec", "lz4")]);
    let mut sent = send_all(&acks1, recs[..half].iter().map(to_record));
    drop(acks1);
    let all = producer(&broker, &[("acks", "all"), ("compression.codec", "zstd")]);
    sent.extend(send_all(&all, recs[half..].iter().map(to_record)));
    for (i, r) in sent.iter().enumerate() {
        assert_eq!(r.as_ref().unwrap(), &(0, i as i64), "delivery {i}");
    }
    let got = consume(&consumer(&broker, &[]), "rk", 0..1, recs.len());
    for (i, (m, r)) in got.iter().zip(&recs).enumerate() {
        assert_eq!(m.offset(), i as i64);
        assert_eq!(m.key(), r.key.as_deref(), "key of {i}");
        assert_eq!(m.payload(), r.value.as_deref(), "value of {i}");
        assert_eq!(m.timestamp(), Timestamp::CreateTime(r.timestamp), "{i}");
        let want: Vec<(String, Option<Vec<u8>>)> = r
            .headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(<[u8]>::to_vec)))
            .collect();
        assert_eq!(headers_of(m), want, "headers of {i}");
    }
}

/// `num.partitions=32` on the broker: auto-creation makes 32 partitions, all led by it; each
/// gets its own records, read back by assigning all 32 at once.
#[test]
fn rdkafka_many_partitions_by_auto_creation() {
    const N: i32 = 32;
    let broker = TestBroker::start(&[("num.partitions", "32")]);
    let producer = producer(&broker, &[("acks", "all")]);
    let values: Vec<(i32, String)> = (0..N)
        .flat_map(|p| (0..5).map(move |i| (p, format!("p{p}-r{i}"))))
        .collect();
    let sent = send_all(
        &producer,
        values.iter().map(|(p, v)| {
            FutureRecord::<[u8], [u8]>::to("wide")
                .partition(*p)
                .key(v.as_bytes())
                .payload(v.as_bytes())
        }),
    );
    let mut next: BTreeMap<i32, i64> = BTreeMap::new();
    for ((p, v), r) in values.iter().zip(&sent) {
        let offset = next.entry(*p).or_default();
        assert_eq!(r.as_ref().unwrap(), &(*p, *offset), "{v}");
        *offset += 1;
    }
    let md = producer
        .client()
        .fetch_metadata(Some("wide"), Duration::from_secs(10))
        .unwrap();
    let topic = &md.topics()[0];
    assert_eq!(topic.name(), "wide");
    assert!(topic.error().is_none());
    assert_eq!(topic.partitions().len(), N as usize);
    for (i, p) in topic.partitions().iter().enumerate() {
        assert_eq!(
            (p.id(), p.leader(), p.replicas(), p.isr()),
            (i as i32, 0, &[0][..], &[0][..])
        );
    }
    let got = consume(&consumer(&broker, &[]), "wide", 0..N, values.len());
    let read: Vec<(i32, String)> = got
        .iter()
        .map(|m| {
            assert_eq!(m.key(), m.payload());
            (
                m.partition(),
                String::from_utf8(m.payload().unwrap().to_vec()).unwrap(),
            )
        })
        .collect();
    assert_eq!(read, values);
}

/// Records of 1 MiB with `message.max.bytes` raised on the broker and the clients:
/// incompressible ones uncompressed, a compressible one through zstd, and one over the
/// broker's limit (but under the producer's), refused with MESSAGE_TOO_LARGE while the
/// partition goes on.
#[test]
fn rdkafka_one_mib_records_with_raised_limits() {
    const MIB: usize = 1 << 20;
    let broker = TestBroker::start(&[("message.max.bytes", "1200000")]);
    let limits = [
        ("message.max.bytes", "8000000"),
        ("batch.size", "8000000"),
        ("acks", "all"),
    ];
    let plain = producer(&broker, &limits);
    let mut seed = 0x1234_5678_9abc_def0_u64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect()
    };
    let mut values: Vec<Vec<u8>> = (0..3).map(|_| noise(MIB)).collect();
    // One at a time: the limit is per batch, and librdkafka would batch them together.
    for (i, v) in values.iter().enumerate() {
        let sent = send_all(
            &plain,
            [FutureRecord::<[u8], [u8]>::to("big")
                .partition(0)
                .key(&b"k"[..])
                .payload(&v[..])],
        );
        assert_eq!(sent[0].as_ref().unwrap(), &(0, i as i64));
    }
    let too_big = noise(MIB + MIB / 4);
    let refused = send_all(
        &plain,
        [FutureRecord::<[u8], [u8]>::to("big")
            .partition(0)
            .payload(&too_big[..])],
    );
    assert_eq!(
        refused[0],
        Err(KafkaError::MessageProduction(
            RDKafkaErrorCode::MessageSizeTooLarge
        ))
    );
    let mut zstd_limits = limits.to_vec();
    zstd_limits.push(("compression.codec", "zstd"));
    let zstd = producer(&broker, &zstd_limits);
    let compressible: Vec<u8> = (0..MIB).map(|i| (i / 1000) as u8).collect();
    let sent = send_all(
        &zstd,
        [FutureRecord::<[u8], [u8]>::to("big")
            .partition(0)
            .payload(&compressible[..])],
    );
    assert_eq!(sent[0].as_ref().unwrap(), &(0, 3));
    values.push(compressible);
    let got = consume(
        &consumer(
            &broker,
            &[
                ("fetch.message.max.bytes", "2000000"),
                ("fetch.max.bytes", "8000000"),
                ("receive.message.max.bytes", "9000000"),
            ],
        ),
        "big",
        0..1,
        values.len(),
    );
    for (i, (m, v)) in got.iter().zip(&values).enumerate() {
        assert_eq!(m.offset(), i as i64);
        assert_eq!(m.payload().map(<[u8]>::len), Some(MIB), "record {i}");
        assert!(m.payload() == Some(&v[..]), "record {i}: contents differ");
    }
}

/// Everything produced with acks=0 (no answers at all) is there, in order.
#[test]
fn rdkafka_acks_0_produces_everything() {
    let broker = TestBroker::start(&[]);
    let producer = producer(&broker, &[("acks", "0")]);
    let values: Vec<String> = (0..2000).map(|i| format!("fire and forget {i}")).collect();
    let sent = send_all(
        &producer,
        values.iter().map(|v| {
            FutureRecord::<[u8], [u8]>::to("acks0")
                .partition(0)
                .payload(v.as_bytes())
        }),
    );
    // acks=0: librdkafka reports success with no offset.
    assert!(
        sent.iter().all(Result::is_ok),
        "{:?}",
        sent.iter().find(|r| r.is_err())
    );
    let got = consume(&consumer(&broker, &[]), "acks0", 0..1, values.len());
    for (i, (m, v)) in got.iter().zip(&values).enumerate() {
        assert_eq!((m.offset(), m.payload()), (i as i64, Some(v.as_bytes())));
    }
}

/// A consumer waiting at the end of a partition in a long poll (fetch.wait.max.ms=10 s) gets a
/// new record as soon as it is appended, not when its poll times out.
#[test]
fn rdkafka_long_poll_wakes_on_append() {
    let broker = TestBroker::start(&[]);
    let producer = producer(&broker, &[("acks", "1"), ("linger.ms", "0")]);
    let first = send_all(
        &producer,
        [FutureRecord::<[u8], [u8]>::to("poll")
            .partition(0)
            .payload(&b"first"[..])],
    );
    assert_eq!(first[0].as_ref().unwrap(), &(0, 0));
    let consumer = consumer(
        &broker,
        &[("fetch.wait.max.ms", "10000"), ("fetch.min.bytes", "1")],
    );
    consume(&consumer, "poll", 0..1, 1);
    // The consumer is now parked in a long poll at offset 1.
    std::thread::sleep(Duration::from_millis(1500));
    for i in 0..3 {
        let value = format!("late {i}");
        let sent_at = Instant::now();
        let sent = send_all(
            &producer,
            [FutureRecord::<[u8], [u8]>::to("poll")
                .partition(0)
                .payload(value.as_bytes())],
        );
        assert_eq!(sent[0].as_ref().unwrap(), &(0, 1 + i));
        let m = loop {
            assert!(
                sent_at.elapsed() < CONSUME_LIMIT,
                "record {i} never arrived"
            );
            if let Some(m) = consumer.poll(Duration::from_millis(50)) {
                break m.unwrap().detach();
            }
        };
        let latency = sent_at.elapsed();
        assert_eq!((m.offset(), m.payload()), (1 + i, Some(value.as_bytes())));
        assert!(
            latency < Duration::from_secs(3),
            "record {i} took {latency:?}: the long poll did not wake on the append"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A consumer assigned an offset past the end resets by `auto.offset.reset`: earliest reads
/// from 0, latest waits for new records only.
#[test]
fn rdkafka_offset_out_of_range_resets() {
    let broker = TestBroker::start(&[]);
    let producer = producer(&broker, &[("acks", "all")]);
    let values: Vec<String> = (0..10).map(|i| format!("r{i}")).collect();
    send_all(
        &producer,
        values.iter().map(|v| {
            FutureRecord::<[u8], [u8]>::to("reset")
                .partition(0)
                .payload(v.as_bytes())
        }),
    );
    let assign_at = |consumer: &BaseConsumer, offset| {
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("reset", 0, Offset::Offset(offset))
            .unwrap();
        consumer.assign(&tpl).unwrap();
    };
    let next = |consumer: &BaseConsumer, limit: Duration| -> Option<OwnedMessage> {
        let start = Instant::now();
        while start.elapsed() < limit {
            // The reset is reported as an error event on some versions; keep polling.
            if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
                return Some(m.detach());
            }
        }
        None
    };
    let earliest = consumer(&broker, &[("auto.offset.reset", "earliest")]);
    assign_at(&earliest, 1000);
    let m = next(&earliest, CONSUME_LIMIT).expect("nothing read after a reset to earliest");
    assert_eq!((m.offset(), m.payload()), (0, Some(&b"r0"[..])));

    let latest = consumer(&broker, &[("auto.offset.reset", "latest")]);
    assign_at(&latest, 1000);
    assert!(
        next(&latest, Duration::from_secs(2)).is_none(),
        "read old records"
    );
    send_all(
        &producer,
        [FutureRecord::<[u8], [u8]>::to("reset")
            .partition(0)
            .payload(&b"new"[..])],
    );
    let m = next(&latest, CONSUME_LIMIT).expect("nothing read after a reset to latest");
    assert_eq!((m.offset(), m.payload()), (10, Some(&b"new"[..])));
}

/// `log.message.timestamp.type=LogAppendTime`: whatever timestamps the producer set, each
/// batch (uncompressed or compressed) is stamped with the broker's clock, consumers see
/// LogAppendTime, and ListOffsets by time finds records by that time.
#[test]
fn rdkafka_log_append_time_overrides_producer_timestamps() {
    let broker = TestBroker::start(&[("log.message.timestamp.type", "LogAppendTime")]);
    let old = now_ms() - 86_400_000;
    let before = now_ms();
    let mut values = Vec::new();
    for codec in ["none", "lz4", "zstd", "gzip"] {
        let producer = producer(&broker, &[("acks", "all"), ("compression.codec", codec)]);
        let batch: Vec<String> = (0..50)
            .map(|i| format!("{codec} {i} {}", "t".repeat(i)))
            .collect();
        let sent = send_all(
            &producer,
            batch.iter().map(|v| {
                FutureRecord::<[u8], [u8]>::to("lat")
                    .partition(0)
                    .payload(v.as_bytes())
                    .timestamp(old)
            }),
        );
        assert!(sent.iter().all(Result::is_ok), "{codec}: {sent:?}");
        values.extend(batch);
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = now_ms();
    let got = consume(&consumer(&broker, &[]), "lat", 0..1, values.len());
    let mut stamps = Vec::new();
    for (m, v) in got.iter().zip(&values) {
        assert_eq!(m.payload(), Some(v.as_bytes()));
        let Timestamp::LogAppendTime(ts) = m.timestamp() else {
            panic!(
                "offset {}: {:?}, not LogAppendTime",
                m.offset(),
                m.timestamp()
            )
        };
        assert!(
            (before..=after).contains(&ts),
            "offset {}: {ts}",
            m.offset()
        );
        stamps.push(ts);
    }
    assert!(
        stamps.windows(2).all(|w| w[0] <= w[1]),
        "append times go back"
    );
    // kcat's offsets-for-times finds the first record at or after a time.
    let q = kcat(
        &broker,
        &["-Q", "-t", &format!("lat:0:{}", stamps[100])],
        b"",
    );
    let first = stamps.iter().position(|t| *t >= stamps[100]).unwrap();
    assert!(q.contains(&format!("lat [0] offset {first}")), "{q}");
    let q = kcat(&broker, &["-Q", "-t", &format!("lat:0:{old}")], b"");
    assert!(q.contains("lat [0] offset 0"), "{q}");
}

/// A consumer whose fetch limit is far below the record size still reads 1 MiB records: the
/// broker returns the first batch whole (KIP-74).
#[test]
fn rdkafka_small_fetch_limits_still_read_large_records() {
    let broker = TestBroker::start(&[("message.max.bytes", "2000000")]);
    let producer = producer(&broker, &[("acks", "1"), ("message.max.bytes", "2000000")]);
    let values: Vec<Vec<u8>> = (0..3u8).map(|i| vec![b'a' + i; 1 << 20]).collect();
    for (i, v) in values.iter().enumerate() {
        let sent = send_all(
            &producer,
            [FutureRecord::<[u8], [u8]>::to("kip74")
                .partition(0)
                .payload(&v[..])],
        );
        assert_eq!(sent[0].as_ref().unwrap(), &(0, i as i64));
    }
    let got = consume(
        &consumer(
            &broker,
            &[
                ("fetch.message.max.bytes", "1000"),
                ("message.max.bytes", "1000"),
                ("fetch.max.bytes", "1000"),
                ("receive.message.max.bytes", "3000000"),
            ],
        ),
        "kip74",
        0..1,
        values.len(),
    );
    for (m, v) in got.iter().zip(&values) {
        assert!(m.payload() == Some(&v[..]), "offset {}", m.offset());
    }
}

/// Every value of partition 0 of `topic` up to its end for `isolation`, read by a group-less
/// BaseConsumer (librdkafka's own filtering of aborted transactions included).
fn read_to_end(bootstrap: &str, topic: &str, isolation: &str) -> Vec<String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "unused")
        .set("isolation.level", isolation)
        .set("enable.partition.eof", "true")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut out = Vec::new();
    while Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned())
            }
            Some(Err(KafkaError::PartitionEOF(_))) => return out,
            Some(Err(e)) => panic!("{isolation} consumer: {e}"),
            None => {}
        }
    }
    panic!("{isolation} consumer did not reach the end of {topic}: {out:?}");
}

/// librdkafka's transactional producer (the rdkafka crate): commits and an abort, then a second
/// producer with the same transactional id fences the first. A read_committed consumer
/// (librdkafka's default) reads exactly the committed records, using the aborted transactions
/// the broker lists; a read_uncommitted one reads them all.
#[test]
fn rdkafka_transactions_commit_abort_and_fence() {
    use rdkafka::producer::{BaseProducer, BaseRecord};
    let broker = TestBroker::start(&[]);
    let topic = "rdtx";
    let producer = |id: &str| -> BaseProducer {
        ClientConfig::new()
            .set("bootstrap.servers", broker.bootstrap())
            .set("transactional.id", "rd-txn")
            .set("client.id", id)
            .create()
            .unwrap()
    };
    let timeout = Duration::from_secs(30);
    let first = producer("first");
    first.init_transactions(timeout).unwrap();
    for (tag, count, commit) in [("c1", 5, true), ("a1", 4, false), ("c2", 3, true)] {
        first.begin_transaction().unwrap();
        for i in 0..count {
            first
                .send(
                    BaseRecord::<(), str>::to(topic)
                        .partition(0)
                        .payload(&format!("{tag}-{i}")),
                )
                .unwrap();
        }
        first.flush(timeout).unwrap();
        if commit {
            first.commit_transaction(timeout).unwrap();
        } else {
            first.abort_transaction(timeout).unwrap();
        }
    }
    let second = producer("second");
    second.init_transactions(timeout).unwrap();
    first.begin_transaction().unwrap();
    let _ = first.send(
        BaseRecord::<(), str>::to(topic)
            .partition(0)
            .payload("zombie"),
    );
    let fenced = first.commit_transaction(timeout).unwrap_err();
    assert!(
        fenced.to_string().to_lowercase().contains("fenced"),
        "the first producer was not fenced: {fenced}"
    );
    let committed = read_to_end(&broker.bootstrap(), topic, "read_committed");
    let expected: Vec<String> = (0..5)
        .map(|i| format!("c1-{i}"))
        .chain((0..3).map(|i| format!("c2-{i}")))
        .collect();
    assert_eq!(committed, expected);
    let all = read_to_end(&broker.bootstrap(), topic, "read_uncommitted");
    assert_eq!(all.len(), 5 + 4 + 3, "{all:?}");
    assert!(all.iter().all(|v| v != "zombie"), "{all:?}");
    // The coordinator's records, decoded by kcli's dump-segment as by Kafka's DumpLogSegments.
    let partition = kcli::coordinator::internal_topic::partition_for("rd-txn", 50);
    let dir = broker
        .data_dir()
        .join(format!("__transaction_state-{partition}"));
    let out = crate::dump_segment::support::same_as_kafka(
        &dir,
        &["00000000000000000000.log"],
        &["--transaction-log-decoder"],
    );
    let text = crate::dump_segment::support::text(&out.stdout);
    assert!(
        text.contains("key: transaction_metadata::transactionalId=rd-txn payload: producerId:")
            && text.contains("state=CompleteAbort,partitions=[]")
            && text.contains("state=Ongoing,partitions=[rdtx-0]"),
        "{text}"
    );
}
