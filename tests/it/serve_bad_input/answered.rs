//! What bad input gets an answer rather than a closed connection: an ApiVersions request of a
//! future version, a batch over `message.max.bytes`, a corrupt CRC, the produce errors Kafka
//! answers per partition, and a default-valued request of every advertised API and version.

use super::*;

/// KIP-511: an ApiVersions request newer than the broker knows is answered at v0 with
/// UNSUPPORTED_VERSION and the full key list, and the connection stays usable for the retry.
#[test]
fn api_versions_of_a_future_version_gets_a_v0_answer_with_error_35() {
    let mut broker = TestBroker::start(&[]);
    let expected = advertised(broker.port());
    let future = ApiKey::ApiVersions.info().valid.max + 1;
    for version in [future, 127, i16::MAX] {
        let mut s = TcpStream::connect(("127.0.0.1", broker.port())).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // A body of some future format: the broker must not care.
        s.write_all(&frame(18, version, true, &[2, b'x', 2, b'y', 0, 9, 9, 9]))
            .unwrap();
        let f = read_frame(&mut s).unwrap();
        let (correlation, body) = decode_response(ApiKey::ApiVersions, 0, f);
        assert_eq!(correlation, 7);
        let ResponseKind::ApiVersions(av) = body else {
            unreachable!()
        };
        assert_eq!(av.error_code, 35, "v{version}: UNSUPPORTED_VERSION");
        let keys: Vec<(i16, i16, i16)> = av
            .api_keys
            .iter()
            .map(|k| (k.api_key, k.min_version, k.max_version))
            .collect();
        assert_eq!(keys, expected, "v{version}");
        let own = keys.iter().find(|k| k.0 == 18).unwrap();
        assert_eq!(own.2, ApiKey::ApiVersions.info().max_stable_version());
        // The client retries on the same connection with a version both know.
        let mut conn = KafkaConn::from_stream(s, 8);
        let ResponseKind::ApiVersions(av) = conn.call(&api_versions(), own.2) else {
            unreachable!()
        };
        assert_eq!(av.error_code, 0);
    }
    assert_healthy(&mut broker, &expected, "future ApiVersions");
}

/// The smallest value length whose one-record batch is exactly `size` bytes.
fn batch_of_size(size: usize) -> Vec<u8> {
    for n in size.saturating_sub(100).. {
        let b = batch_of(&[vec![b'm'; n]]);
        if b.len() == size {
            return b;
        }
        assert!(b.len() < size, "no batch of exactly {size} bytes");
    }
    unreachable!()
}

/// A batch of exactly `message.max.bytes` is appended; one byte more is MESSAGE_TOO_LARGE at
/// every Produce version with magic-2 batches, and the partition goes on; the connection stays
/// open throughout (a partition error is not a protocol error).
#[test]
fn a_batch_one_byte_over_message_max_bytes_is_message_too_large() {
    let mut broker = TestBroker::start(&[("message.max.bytes", "10000")]);
    let expected = advertised(broker.port());
    let mut conn = KafkaConn::connect(broker.port());
    conn.call(
        &RequestKind::Metadata(MetadataRequest {
            topics: Some(vec![metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("limit")),
                ..Default::default()
            }]),
            allow_auto_topic_creation: true,
            ..Default::default()
        }),
        9,
    );
    for (next, version) in (0..).zip([3, 7, PRODUCE_VERSION, 11]) {
        let over = conn.call(
            &produce_request("limit", 0, batch_of_size(10_001), 1),
            version,
        );
        assert_eq!(produce_result(&over).0, 10, "v{version}: MESSAGE_TOO_LARGE");
        let at = conn.call(
            &produce_request("limit", 0, batch_of_size(10_000), 1),
            version,
        );
        assert_eq!(
            produce_result(&at),
            (0, next),
            "v{version}: a batch at the limit"
        );
    }
    assert_healthy(&mut broker, &expected, "MESSAGE_TOO_LARGE");
}

/// A batch whose CRC does not match (the CRC field changed, or a byte it covers) is
/// CORRUPT_MESSAGE, nothing is appended, and the connection stays usable.
#[test]
fn a_corrupt_crc_is_corrupt_message() {
    let mut broker = TestBroker::start(&[]);
    let expected = advertised(broker.port());
    let mut conn = KafkaConn::connect(broker.port());
    conn.call(
        &RequestKind::Metadata(MetadataRequest {
            topics: Some(vec![metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("crc")),
                ..Default::default()
            }]),
            allow_auto_topic_creation: true,
            ..Default::default()
        }),
        9,
    );
    let good = batch_of(&[b"first".to_vec(), b"second".to_vec()]);
    let mut bad_crc = good.clone();
    bad_crc[17] ^= 0x40; // the CRC field: bytes 17..21
    let mut bad_body = good.clone();
    *bad_body.last_mut().unwrap() ^= 0x01; // the last record's last byte
    let mut bad_attributes = good.clone();
    bad_attributes[22] ^= 0x08; // the timestamp type bit of the attributes, under the CRC
    for (what, batch) in [
        ("CRC field", bad_crc),
        ("record byte", bad_body),
        ("attributes", bad_attributes),
    ] {
        for version in [3, PRODUCE_VERSION] {
            let r = conn.call(&produce_request("crc", 0, batch.clone(), 1), version);
            assert_eq!(
                produce_result(&r).0,
                2,
                "{what} v{version}: CORRUPT_MESSAGE"
            );
        }
    }
    let r = conn.call(&produce_request("crc", 0, good, 1), PRODUCE_VERSION);
    assert_eq!(produce_result(&r), (0, 0), "nothing was appended before");
    assert_healthy(&mut broker, &expected, "CORRUPT_MESSAGE");
}

/// Default-valued requests, from the generated structs' `Default`, of every advertised API at
/// every advertised version.
struct DefaultRequests {
    advertised: Vec<(i16, i16, i16)>,
    out: Vec<(ApiKey, i16, RequestKind)>,
}

impl Visit for DefaultRequests {
    fn visit<M: Message + Arb>(&mut self) {
        if !matches!(M::KIND, MessageKind::Request) {
            return;
        }
        let Some(key) = M::API_KEY else { return };
        let Some(&(_, min, max)) = self.advertised.iter().find(|a| a.0 == key) else {
            return;
        };
        let api = ApiKey::from_i16(key).unwrap();
        for version in min..=max {
            let bytes = M::default().encode_to_bytes(version).unwrap().freeze();
            let body = RequestKind::decode(api, &mut Reader::new(bytes), version).unwrap();
            self.out.push((api, version, body));
        }
    }
}

/// Every API and version the broker advertises answers a default-valued request with a
/// response that decodes at that version (Produce with acks=0 answers nothing, by design; the
/// same with acks=1 is answered). Each request is followed on the same connection by an
/// ApiVersions probe, which must be answered next, so nothing is skipped or closed.
#[test]
fn every_advertised_api_and_version_answers_a_default_request() {
    let mut broker = TestBroker::start(&[]);
    let advertised = advertised(broker.port());
    let mut requests = DefaultRequests {
        advertised: advertised.clone(),
        out: Vec::new(),
    };
    crate::messages::visit_all(&mut requests);
    let mut extra = Vec::new();
    for (api, version, body) in &requests.out {
        if let RequestKind::Produce(p) = body {
            let mut p = p.clone();
            p.acks = 1;
            extra.push((*api, *version, RequestKind::Produce(p)));
        }
    }
    requests.out.extend(extra);
    // A default ControlledShutdown names broker 0, this broker, which would then lead no new
    // partition until it deregisters (as in Kafka); it names a broker that does not exist.
    for (_, _, body) in &mut requests.out {
        if let RequestKind::ControlledShutdown(r) = body {
            r.broker_id = 4242;
        }
    }
    let covered: Vec<i16> = {
        let mut k: Vec<i16> = requests.out.iter().map(|(a, _, _)| *a as i16).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    for (key, _, _) in &advertised {
        assert!(
            covered.contains(key),
            "no request struct for advertised API {key}"
        );
    }
    let mut conn = KafkaConn::connect(broker.port());
    for (api, version, body) in &requests.out {
        let sent = conn
            .send(body, *version)
            .unwrap_or_else(|e| panic!("{api:?} v{version}: {e}"));
        let probe = conn.send(&api_versions(), 0).unwrap();
        let silent = matches!(body, RequestKind::Produce(p) if p.acks == 0);
        if !silent {
            let (correlation, response) = conn
                .recv(*api, *version)
                .unwrap_or_else(|e| panic!("{api:?} v{version}: no answer: {e}"));
            assert_eq!(correlation, sent, "{api:?} v{version}");
            assert_eq!(response.api_key(), *api);
        }
        let (correlation, _) = conn
            .recv(ApiKey::ApiVersions, 0)
            .unwrap_or_else(|e| panic!("probe after {api:?} v{version}: {e}"));
        assert_eq!(correlation, probe, "probe after {api:?} v{version}");
    }
    eprintln!(
        "{} default requests answered over {} APIs",
        requests.out.len(),
        covered.len()
    );
    assert_healthy(&mut broker, &advertised, "default requests");
}

/// Produce requests Kafka answers with a partition error (its `ProduceRequest.validateRecords`
/// and `handleProduceRequest` checks), answered the same: more than one batch, no batch, a
/// magic-1 message set at v3+, zstd below v7, bad acks, an unknown partition or topic, an
/// internal topic, bytes that are no batch at all, a batch cut short. The connection stays
/// open through all of them and nothing is appended.
#[test]
fn produce_partition_errors_match_kafka() {
    use kcli::protocol::record::builder::{
        RecordBatchBuilder, SimpleRecord, build_legacy_message_set,
    };
    use kcli::protocol::record::compression::CompressionType;
    let mut broker = TestBroker::start(&[]);
    let expected = advertised(broker.port());
    let mut conn = KafkaConn::connect(broker.port());
    conn.call(
        &RequestKind::Metadata(MetadataRequest {
            topics: Some(vec![metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("pe")),
                ..Default::default()
            }]),
            allow_auto_topic_creation: true,
            ..Default::default()
        }),
        9,
    );
    let one = batch_of(&[b"a".to_vec()]);
    let mut two = one.clone();
    two.extend_from_slice(&batch_of(&[b"b".to_vec()]));
    let legacy = build_legacy_message_set(
        1,
        CompressionType::None,
        0,
        &[SimpleRecord::new(1, None, Some(b"x".to_vec()))],
    )
    .unwrap();
    let mut z = RecordBatchBuilder::new(CompressionType::Zstd);
    z.records = (0..20)
        .map(|i| SimpleRecord::new(1, None, Some(format!("zstd {i}").into_bytes())))
        .collect();
    let zstd = z.build().unwrap();
    let cut = one[..40].to_vec();
    // (what, topic, partition, records, acks, version, error code)
    type Case = (&'static str, &'static str, i32, Vec<u8>, i16, i16, i16);
    let cases: Vec<Case> = vec![
        ("two batches", "pe", 0, two, 1, PRODUCE_VERSION, 87),
        ("no batch", "pe", 0, Vec::new(), 1, PRODUCE_VERSION, 87),
        (
            "a magic-1 message set",
            "pe",
            0,
            legacy,
            1,
            PRODUCE_VERSION,
            87,
        ),
        ("zstd at v6", "pe", 0, zstd, 1, 6, 76),
        ("acks=5", "pe", 0, one.clone(), 5, PRODUCE_VERSION, 21),
        (
            "partition 7 of 1",
            "pe",
            7,
            one.clone(),
            1,
            PRODUCE_VERSION,
            3,
        ),
        (
            "an unknown topic",
            "nope",
            0,
            one.clone(),
            1,
            PRODUCE_VERSION,
            3,
        ),
        (
            "an internal topic",
            "__consumer_offsets",
            0,
            one.clone(),
            1,
            PRODUCE_VERSION,
            17,
        ),
        (
            "not a batch",
            "pe",
            0,
            b"garbage!".to_vec(),
            1,
            PRODUCE_VERSION,
            87,
        ),
        ("a batch cut short", "pe", 0, cut, 1, PRODUCE_VERSION, 87),
    ];
    for (what, topic, partition, records, acks, version, code) in cases {
        let r = conn.call(&produce_request(topic, partition, records, acks), version);
        assert_eq!(produce_result(&r), (code, -1), "{what}");
    }
    let r = conn.call(&produce_request("pe", 0, one, 1), PRODUCE_VERSION);
    assert_eq!(produce_result(&r), (0, 0), "something was appended before");
    assert_healthy(&mut broker, &expected, "produce partition errors");
}
