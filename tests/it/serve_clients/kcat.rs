//! kcat (Debian's, librdkafka 2.0) against `kcli serve`: metadata, every codec with keys and
//! headers, offsets by timestamp, and the pre-0.10 protocol with up- and down-conversion.

use super::*;

/// `kcat -L -J`: the one broker at its address (the controller), and the auto-created topic's
/// partitions led by it, with it as the only replica and ISR member.
#[test]
fn kcat_metadata_lists_the_broker_and_the_topic_partitions() {
    let broker = TestBroker::start(&[("num.partitions", "3")]);
    kcat(&broker, &["-P", "-t", "meta", "-p", "2"], b"one\n");
    let out = kcat(&broker, &["-L", "-J"], b"");
    let md: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(md["controllerid"], 0, "{md}");
    assert_eq!(
        md["brokers"],
        serde_json::json!([{"id": 0, "name": broker.bootstrap()}]),
        "{md}"
    );
    let topics = md["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 1, "{md}");
    assert_eq!(topics[0]["topic"], "meta");
    assert!(topics[0].get("error").is_none(), "{md}");
    let partitions = topics[0]["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 3, "{md}");
    for (i, p) in partitions.iter().enumerate() {
        assert_eq!(p["partition"], i, "{md}");
        assert_eq!(p["leader"], 0, "{md}");
        assert_eq!(p["replicas"], serde_json::json!([{"id": 0}]), "{md}");
        assert_eq!(p["isrs"], serde_json::json!([{"id": 0}]), "{md}");
        assert!(p.get("error").is_none(), "{md}");
    }
    // A named query of the same topic answers the same partitions.
    let out = kcat(&broker, &["-L", "-J", "-t", "meta"], b"");
    let one: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(one["topics"], md["topics"]);
}

/// Every codec through kcat: keys (`-K`), a null key, headers with a repeated key (`-H`),
/// values that compress well and values that do not; read back exactly, and stored on disk
/// as batches of the codec that was asked for.
#[test]
fn kcat_round_trips_every_codec_with_keys_and_headers() {
    let broker = TestBroker::start(&[]);
    let before = now_ms();
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let topic = format!("codec-{codec}");
        let mut expected = Vec::new();
        for i in 0..300 {
            let value = if i % 3 == 0 {
                format!("{codec} value {i} {}", "abc".repeat(i % 50))
            } else {
                format!(
                    "{codec} value {i} {:x}",
                    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                )
            };
            // A null key at 7.
            let key = (i != 7).then(|| format!("key-{i}"));
            expected.push((key, value));
        }
        kcat_round_trip(
            &broker,
            &topic,
            codec,
            &["h1=a", "h1=b", "h2=c"],
            &expected,
            before,
        );
        // From the middle of a batch: the client is sent the whole batch and skips ahead.
        let out = kcat(
            &broker,
            &["-C", "-t", &topic, "-o", "151", "-e", "-f", "%o|%s\n"],
            b"",
        );
        let want: String = expected[151..]
            .iter()
            .enumerate()
            .map(|(i, (_, v))| format!("{}|{v}\n", 151 + i))
            .collect();
        assert_eq!(out, want, "{codec}: from offset 151");
        // What the broker stored: the codec asked for, in every batch.
        let batches = dumped_batches(&broker, &topic);
        assert!(!batches.is_empty(), "{codec}");
        let count: i64 = batches.iter().map(|b| b["count"].as_i64().unwrap()).sum();
        assert_eq!(count, 300, "{codec}");
        for b in &batches {
            assert_stored_codec(b, codec);
            assert_eq!(b["is_valid"], true, "{b}");
        }
        assert!(
            batches.iter().any(|b| b["compression"] == codec),
            "{codec}: no batch of the codec: {batches:?}"
        );
    }
}

/// `-o s@<timestamp>` (and `e@`, and `-Q`) over records with known timestamps: kcat asks
/// ListOffsets for the first offset at or after the time and reads from there.
#[test]
fn kcat_consumes_from_offsets_by_timestamp() {
    let broker = TestBroker::start(&[]);
    let base = now_ms() - 3_600_000;
    let producer = producer(&broker, &[("acks", "all")]);
    let records: Vec<(i64, String)> = (0..10)
        .map(|i| (base + i * 1000, format!("at {i}")))
        .collect();
    let sent = send_all(
        &producer,
        records.iter().map(|(ts, v)| {
            FutureRecord::<[u8], [u8]>::to("ts")
                .partition(0)
                .payload(v.as_bytes())
                .timestamp(*ts)
        }),
    );
    for (i, r) in sent.iter().enumerate() {
        assert_eq!(r.as_ref().unwrap(), &(0, i as i64));
    }
    let from = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["-C", "-t", "ts", "-p", "0", "-e", "-f", "%o %T %s\n"];
        all.extend_from_slice(args);
        kcat(&broker, &all, b"")
            .lines()
            .map(str::to_string)
            .collect()
    };
    let line = |i: i64| format!("{i} {} at {i}", base + i * 1000);
    // Exactly on a record's timestamp, and between two.
    let at_3 = format!("s@{}", base + 3000);
    assert_eq!(from(&["-o", &at_3]), (3..10).map(line).collect::<Vec<_>>());
    let after_3 = format!("s@{}", base + 3001);
    assert_eq!(
        from(&["-o", &after_3]),
        (4..10).map(line).collect::<Vec<_>>()
    );
    // Before the first: everything.
    let early = format!("s@{}", base - 1);
    assert_eq!(from(&["-o", &early]), (0..10).map(line).collect::<Vec<_>>());
    // A start and an end (excluded).
    let until_6 = format!("e@{}", base + 6000);
    assert_eq!(
        from(&["-o", &at_3, "-o", &until_6]),
        (3..6).map(line).collect::<Vec<_>>()
    );
    // The query mode prints the offsets themselves; after the last record there is none.
    let q = kcat(
        &broker,
        &["-Q", "-t", &format!("ts:0:{}", base + 4500)],
        b"",
    );
    assert!(q.contains("ts [0] offset 5"), "{q}");
    let q = kcat(
        &broker,
        &["-Q", "-t", &format!("ts:0:{}", base + 60_000)],
        b"",
    );
    assert!(q.contains("ts [0] offset -1"), "{q}");
}

/// librdkafka on the pre-0.10 protocol (`api.version.request=false`,
/// `broker.version.fallback=0.9.0`: Produce and Fetch v0/v1 with magic-0 message sets) for
/// every codec it can use there: what it produces is up-converted to magic-2 batches of the
/// same codec and reads back exactly on both protocols; what a modern client produced is
/// down-converted for it (headers dropped), except zstd, which it cannot have
/// (UNSUPPORTED_COMPRESSION_TYPE, as Kafka answers).
#[test]
fn kcat_legacy_protocol_up_and_down_converts_every_codec() {
    const OLD: [&str; 4] = [
        "-X",
        "api.version.request=false",
        "-X",
        "broker.version.fallback=0.9.0",
    ];
    let broker = TestBroker::start(&[]);
    let input: String = (0..50)
        .map(|i| format!("k{i}:value {i} {}\n", "q".repeat(i)))
        .collect();
    let expected: String = (0..50)
        .map(|i| format!("{i}|k{i}|value {i} {}\n", "q".repeat(i)))
        .collect();
    let read = |topic: &str, old: bool| {
        let mut args = vec![
            "-C",
            "-t",
            topic,
            "-o",
            "beginning",
            "-e",
            "-f",
            "%o|%k|%s\n",
        ];
        if old {
            args.extend(OLD);
        }
        kcat(&broker, &args, b"")
    };
    for codec in ["none", "gzip", "snappy", "lz4"] {
        let topic = format!("old-{codec}");
        let mut args = vec!["-P", "-t", &topic, "-K", ":", "-z", codec];
        args.extend(OLD);
        kcat(&broker, &args, input.as_bytes());
        assert_eq!(
            read(&topic, true),
            expected,
            "{codec}: old producer, old consumer"
        );
        assert_eq!(
            read(&topic, false),
            expected,
            "{codec}: old producer, new consumer"
        );
        for v in dumped_batches(&broker, &topic) {
            assert_eq!(v["magic"], 2, "{v}");
            assert_stored_codec(&v, codec);
        }
        let topic = format!("new-{codec}");
        kcat(
            &broker,
            &["-P", "-t", &topic, "-K", ":", "-z", codec, "-H", "h=1"],
            input.as_bytes(),
        );
        assert_eq!(
            read(&topic, true),
            expected,
            "{codec}: new producer, old consumer"
        );
    }
    // Enough to compress (librdkafka sends a batch uncompressed when that is smaller).
    kcat(
        &broker,
        &["-P", "-t", "new-zstd", "-K", ":", "-z", "zstd"],
        input.as_bytes(),
    );
    let mut cmd = Command::new("kcat");
    cmd.arg("-b")
        .arg(broker.bootstrap())
        .args(["-C", "-t", "new-zstd", "-o", "beginning", "-e"])
        .args(OLD);
    let (code, out, err) = run_within(cmd, b"", CLIENT_LIMIT);
    assert_ne!(code, 0, "a magic-0 consumer read a zstd batch: {out} {err}");
    assert!(err.contains("Unsupported compression type"), "{err}");
}

/// A stored batch (dump-segment's JSON) has the codec kcat was asked for. librdkafka sends a
/// batch uncompressed when compressing it would make it larger (`rd_kafka_msgset_writer_compress`):
/// under load the first record may leave alone, and one short record never shrinks, so such a
/// batch may be uncompressed.
fn assert_stored_codec(batch: &serde_json::Value, codec: &str) {
    let lone_small_record = batch["count"] == 1 && batch["size"].as_i64().unwrap() < 256;
    if !(lone_small_record && batch["compression"] == "none") {
        assert_eq!(batch["compression"], codec, "{batch}");
    }
}
