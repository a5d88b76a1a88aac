//! Broker-side recompression (`compression.type` a codec) against `kcli serve`: kcat producing
//! with every codec to topics of every target, the rdkafka crate with exact timestamps under
//! CreateTime and LogAppendTime, read back record by record; the stored batches carry the
//! target codec (dump-segment, and the same output as Kafka's DumpLogSegments); DescribeConfigs
//! reports the topic's and the broker's `compression.type` with their sources.

use super::*;
use crate::serve_support::{KafkaConn, create_topic_with};
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::describe_configs_request::{
    DescribeConfigsRequest, DescribeConfigsResource,
};
use kcli::protocol::messages::{RequestKind, ResponseKind};

const CODECS: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];
const TARGETS: [&str; 5] = ["uncompressed", "gzip", "snappy", "lz4", "zstd"];

/// (value, source, synonym sources) of `key` on a topic (2) or broker (4) resource.
fn described(conn: &mut KafkaConn, kind: i8, name: &str, key: &str) -> (String, i8, Vec<i8>) {
    let r = conn.call(
        &RequestKind::DescribeConfigs(DescribeConfigsRequest {
            resources: vec![DescribeConfigsResource {
                resource_type: kind,
                resource_name: StrBytes::from(name),
                configuration_keys: Some(vec![StrBytes::from(key)]),
                ..Default::default()
            }],
            include_synonyms: true,
            ..Default::default()
        }),
        4,
    );
    let ResponseKind::DescribeConfigs(r) = r else {
        panic!("{r:?}")
    };
    let e = &r.results[0].configs[0];
    assert_eq!(e.name.to_string(), key);
    (
        e.value.as_ref().map(|v| v.to_string()).unwrap_or_default(),
        e.config_source,
        e.synonyms.iter().map(|s| s.source).collect(),
    )
}

/// The codec name dump-segment shows for a target.
fn stored(target: &str) -> &str {
    if target == "uncompressed" {
        "none"
    } else {
        target
    }
}

/// Every codec kcat produces to every target codec: keys (one null), repeated headers, values
/// that compress and values that do not, read back exactly; every stored batch is of the
/// target codec.
#[test]
fn kcat_every_codec_to_every_target() {
    let broker = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(broker.port());
    let before = now_ms();
    for target in TARGETS {
        for codec in CODECS {
            let topic = format!("rc-{codec}-to-{target}");
            create_topic_with(&mut conn, &topic, 1, &[("compression.type", target)]);
            let mut expected = Vec::new();
            for i in 0..60 {
                let value = if i % 2 == 0 {
                    format!("{codec}>{target} {i} {}", "xyz".repeat(i % 40))
                } else {
                    format!("{i} {:x}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                };
                // A null key at 5.
                let key = (i != 5).then(|| format!("k{i}"));
                expected.push((key, value));
            }
            kcat_round_trip(&broker, &topic, codec, &["h=1", "h=2"], &expected, before);
            let batches = stored_batches(&broker, &topic);
            assert_eq!(batches.iter().map(|b| b.1).sum::<i64>(), 60, "{topic}");
            for (c, _) in &batches {
                assert_eq!(c, stored(target), "{topic}: {batches:?}");
            }
        }
    }
    // The topic's value is a topic config (DYNAMIC_TOPIC_CONFIG, 1) over the broker default.
    let (value, source, synonyms) = described(&mut conn, 2, "rc-gzip-to-zstd", "compression.type");
    assert_eq!((value.as_str(), source, synonyms), ("zstd", 1, vec![1, 5]));
    let (value, source, _) = described(&mut conn, 2, "rc-gzip-to-zstd", "compression.zstd.level");
    assert_eq!((value.as_str(), source), ("3", 5));
}

/// A broker-wide `compression.type` (a static config) applies to topics without their own,
/// and DescribeConfigs says where it comes from; a topic's level applies to its codec.
#[test]
fn broker_default_target_and_levels() {
    let broker = TestBroker::start(&[("compression.type", "lz4"), ("compression.lz4.level", "12")]);
    let mut conn = KafkaConn::connect(broker.port());
    create_topic_with(&mut conn, "rc-default", 1, &[]);
    create_topic_with(
        &mut conn,
        "rc-leveled",
        1,
        &[
            ("compression.type", "gzip"),
            ("compression.gzip.level", "1"),
        ],
    );
    // STATIC_BROKER_CONFIG (4) on the topic, with the static and default synonyms.
    let (value, source, synonyms) = described(&mut conn, 2, "rc-default", "compression.type");
    assert_eq!((value.as_str(), source, synonyms), ("lz4", 4, vec![4, 5]));
    let (value, source, _) = described(&mut conn, 2, "rc-default", "compression.lz4.level");
    assert_eq!((value.as_str(), source), ("12", 4));
    let (value, source, _) = described(&mut conn, 4, "0", "compression.type");
    assert_eq!((value.as_str(), source), ("lz4", 4));
    let (value, source, _) = described(&mut conn, 2, "rc-leveled", "compression.gzip.level");
    assert_eq!((value.as_str(), source), ("1", 1));
    let input: String = (0..500)
        .map(|i| format!("value {i} {}\n", "ab".repeat(i % 30)))
        .collect();
    for topic in ["rc-default", "rc-leveled"] {
        kcat(
            &broker,
            &["-P", "-t", topic, "-z", "zstd"],
            input.as_bytes(),
        );
        let out = kcat(
            &broker,
            &["-C", "-t", topic, "-o", "beginning", "-e", "-f", "%s\n"],
            b"",
        );
        assert_eq!(out, input, "{topic}");
    }
    let want = |t: &str| stored_batches(&broker, t).iter().all(|(c, _)| c == "lz4");
    assert!(want("rc-default"));
    assert!(
        stored_batches(&broker, "rc-leveled")
            .iter()
            .all(|(c, _)| c == "gzip")
    );
    // Kafka's DumpLogSegments reads the rebuilt segments as kcli does, line for line.
    for topic in ["rc-default", "rc-leveled"] {
        let dir = broker.data_dir().join(format!("{topic}-0"));
        crate::dump_segment::support::same_as_kafka(
            &dir,
            &["00000000000000000000.log"],
            &["--deep-iteration", "--print-data-log"],
        );
    }
}

/// The rdkafka crate with exact timestamps, keys, null values and headers, gzip to zstd under
/// CreateTime (the producer's timestamps kept) and snappy to lz4 under LogAppendTime (every
/// record stamped with the broker's clock at append, as the batch's max timestamp).
#[test]
fn rdkafka_records_keep_their_timestamps_or_get_the_append_time() {
    let broker = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(broker.port());
    create_topic_with(&mut conn, "rc-create", 1, &[("compression.type", "zstd")]);
    create_topic_with(
        &mut conn,
        "rc-append",
        1,
        &[
            ("compression.type", "lz4"),
            ("message.timestamp.type", "LogAppendTime"),
        ],
    );
    let base = now_ms() - 60_000;
    for (topic, codec) in [("rc-create", "gzip"), ("rc-append", "snappy")] {
        let p = producer(
            &broker,
            &[("compression.codec", codec), ("linger.ms", "50")],
        );
        let keys: Vec<Vec<u8>> = (0..200).map(|i| format!("key{i}").into_bytes()).collect();
        let values: Vec<Vec<u8>> = (0..200)
            .map(|i| vec![b'a' + (i % 26) as u8; i * 3])
            .collect();
        let headers = OwnedHeaders::new()
            .insert(Header {
                key: "x",
                value: Some(&b"1"[..]),
            })
            .insert(Header {
                key: "x",
                value: None::<&[u8]>,
            });
        let before = now_ms();
        let sent = send_all(
            &p,
            (0..200).map(|i| {
                let r = FutureRecord::to(topic)
                    .key(&keys[i][..])
                    .timestamp(base + (i as i64 * 37) % 1000)
                    .headers(headers.clone());
                if i % 10 == 3 {
                    r
                } else {
                    r.payload(&values[i][..])
                }
            }),
        );
        let after = now_ms();
        assert!(sent.iter().all(Result::is_ok), "{topic}: {sent:?}");
        let c = consumer(&broker, &[]);
        let got = consume(&c, topic, 0..1, 200);
        for (i, m) in got.iter().enumerate() {
            assert_eq!(m.key(), Some(&keys[i][..]), "{topic}");
            let want = if i % 10 == 3 {
                None
            } else {
                Some(&values[i][..])
            };
            assert_eq!(m.payload(), want, "{topic} {i}");
            assert_eq!(
                headers_of(m),
                vec![
                    ("x".to_string(), Some(b"1".to_vec())),
                    ("x".to_string(), None)
                ]
            );
            match (topic, m.timestamp()) {
                ("rc-create", Timestamp::CreateTime(t)) => {
                    assert_eq!(t, base + (i as i64 * 37) % 1000, "{i}")
                }
                ("rc-append", Timestamp::LogAppendTime(t)) => {
                    assert!(t >= before && t <= after, "{t} not in [{before}, {after}]")
                }
                other => panic!("{topic}: {other:?}"),
            }
        }
    }
    let batches = crate::serve_support::batch_headers(&broker.data_dir().join("rc-create-0"));
    assert!(batches.iter().all(|h| h.attributes & 7 == 4), "{batches:?}");
    let batches = crate::serve_support::batch_headers(&broker.data_dir().join("rc-append-0"));
    assert!(
        batches
            .iter()
            .all(|h| h.attributes & 7 == 3 && h.attributes & 8 != 0),
        "{batches:?}"
    );
}

/// kafka-clients 3.9.1 (tests/clients/java/RecompressCheck.java): four codec pairs, one under
/// LogAppendTime, every record compared by the client; here, the stored batches are of the
/// target codec and keep the idempotent producer's id, epoch and consecutive sequences.
#[test]
fn java_client_through_recompression() {
    let broker = TestBroker::start(&[]);
    let s = super::drivers::run_java_driver(
        "RecompressCheck",
        &[&broker.bootstrap(), "jrc"],
        broker.scratch(),
    );
    assert_eq!(
        (s["pairs"].as_i64(), s["records"].as_i64()),
        (Some(4), Some(480)),
        "{s}"
    );
    for (topic, id) in [
        ("jrc-gzip-lz4", 3),
        ("jrc-none-zstd", 4),
        ("jrc-zstd-uncompressed", 0),
        ("jrc-lz4-snappy", 2),
    ] {
        let batches =
            crate::serve_support::batch_headers(&broker.data_dir().join(format!("{topic}-0")));
        assert!(!batches.is_empty(), "{topic}");
        let mut next_seq = 0;
        for h in &batches {
            assert_eq!(h.attributes & 7, id, "{topic}: {h:?}");
            assert!(h.producer_id >= 0, "{topic}: not idempotent: {h:?}");
            assert_eq!(
                (h.producer_epoch, h.base_sequence),
                (0, next_seq),
                "{topic}: {h:?}"
            );
            next_seq = h.last_sequence() + 1;
        }
        assert_eq!(next_seq, 120, "{topic}");
    }
}
