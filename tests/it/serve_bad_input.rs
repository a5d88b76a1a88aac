//! Hostile and malformed input to `kcli serve` over raw TCP: random bytes, truncated frames,
//! negative and huge size prefixes, huge and negative array counts, unknown API keys and
//! versions; each closes its own connection only (a fresh connection still gets correct
//! answers, and the process keeps running), and the broker's memory stays bounded after a storm
//! of them. Also what must be answered rather than closed: an ApiVersions request of a future
//! version (KIP-511: a v0 response with UNSUPPORTED_VERSION and the key list), a batch one byte
//! over `message.max.bytes` (MESSAGE_TOO_LARGE), a corrupt CRC (CORRUPT_MESSAGE), and a
//! default-valued request of every API and version the broker advertises.
//!
//! Here: the shared helpers and what closes connections; serve_bad_input/answered.rs: what is
//! answered; serve_bad_input/memory.rs: memory under a storm and under decompression bombs.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use kcli::protocol::codec::{Message, MessageKind, Reader, StrBytes};
use kcli::protocol::messages::api_versions_request::ApiVersionsRequest;
use kcli::protocol::messages::{
    ApiKey, MetadataRequest, RequestKind, ResponseKind, metadata_request,
};

use crate::protocol_arb::{Arb, Gen, Visit};
use crate::serve_support::{
    KafkaConn, PRODUCE_VERSION, TestBroker, batch_of, closed_within, decode_response,
    produce_request, produce_result, read_frame,
};

/// How long the broker may take to close a connection it should close.
const CLOSE_LIMIT: Duration = Duration::from_secs(5);
/// The resident memory the broker may use after the storm.
const RSS_LIMIT_KIB: u64 = 200 * 1024;

fn api_versions() -> RequestKind {
    RequestKind::ApiVersions(ApiVersionsRequest {
        client_software_name: StrBytes::from("kcli-serve-test"),
        client_software_version: StrBytes::from("1"),
        ..Default::default()
    })
}

/// The (key, min, max) the broker advertises, from ApiVersions v3.
fn advertised(port: u16) -> Vec<(i16, i16, i16)> {
    let ResponseKind::ApiVersions(av) = KafkaConn::connect(port).call(&api_versions(), 3) else {
        unreachable!()
    };
    assert_eq!(av.error_code, 0);
    av.api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect()
}

/// The process runs and a fresh connection gets correct answers: ApiVersions (v0 and v3, the
/// same list as before) and Metadata v1 naming this broker at its port as the controller.
fn assert_healthy(broker: &mut TestBroker, expected: &[(i16, i16, i16)], after: &str) {
    assert!(broker.is_running(), "the broker died after {after}");
    let mut conn = KafkaConn::connect(broker.port());
    for version in [0, 3] {
        let ResponseKind::ApiVersions(av) = conn.call(&api_versions(), version) else {
            unreachable!()
        };
        assert_eq!(av.error_code, 0, "after {after}");
        let keys: Vec<(i16, i16, i16)> = av
            .api_keys
            .iter()
            .map(|k| (k.api_key, k.min_version, k.max_version))
            .collect();
        assert_eq!(keys, expected, "after {after}");
    }
    let request = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![]),
        ..Default::default()
    });
    let ResponseKind::Metadata(md) = conn.call(&request, 1) else {
        unreachable!()
    };
    assert_eq!(md.controller_id, 0, "after {after}");
    assert_eq!(md.brokers.len(), 1, "after {after}");
    assert_eq!(
        (md.brokers[0].node_id, md.brokers[0].port),
        (0, i32::from(broker.port())),
        "after {after}"
    );
}

/// Writes `bytes` on a fresh connection (a write the broker cuts short is fine), half-closes it
/// when `half_close`, and returns whether the broker closed it within the limit.
fn closes(port: u16, bytes: &[u8], half_close: bool) -> bool {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_write_timeout(Some(CLOSE_LIMIT)).unwrap();
    let _ = s.write_all(bytes);
    if half_close {
        let _ = s.shutdown(Shutdown::Write);
    }
    closed_within(&mut s, CLOSE_LIMIT)
}

/// `size | key | version | correlation 7 | client id "t"` and, for a flexible header, its empty
/// tagged fields; then `body`.
fn frame(key: i16, version: i16, flexible_header: bool, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&key.to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&7i32.to_be_bytes());
    f.extend_from_slice(&[0, 1, b't']);
    if flexible_header {
        f.push(0);
    }
    f.extend_from_slice(body);
    let mut out = (f.len() as i32).to_be_bytes().to_vec();
    out.extend(f);
    out
}

/// Frames whose counts or lengths claim far more than the frame holds (or are negative), each
/// of which must close its connection without an answer.
fn hostile_count_frames() -> Vec<(&'static str, Vec<u8>)> {
    let max = i32::MAX.to_be_bytes();
    let mut produce_v3_prefix = vec![0xff, 0xff, 0, 1, 0, 0, 0x27, 0x10];
    let mut v = vec![
        ("Metadata v1 with 2^31-1 topics", frame(3, 1, false, &max)),
        (
            "Metadata v0 with -2 topics",
            frame(3, 0, false, &(-2i32).to_be_bytes()),
        ),
        ("Metadata v9 with a compact count of 2^31", {
            frame(3, 9, true, &[0x80, 0x80, 0x80, 0x80, 0x08, 0, 0, 0])
        }),
        ("Produce v3 with 2^31-1 topics", {
            let mut b = produce_v3_prefix.clone();
            b.extend_from_slice(&max);
            frame(0, 3, false, &b)
        }),
        ("Produce v3 with 2^31-1 partitions", {
            let mut b = produce_v3_prefix.clone();
            b.extend_from_slice(&[0, 0, 0, 1, 0, 1, b't']);
            b.extend_from_slice(&max);
            frame(0, 3, false, &b)
        }),
        ("Produce v3 with records of 2^31-1 bytes", {
            produce_v3_prefix.extend_from_slice(&[0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0]);
            produce_v3_prefix.extend_from_slice(&max);
            produce_v3_prefix.extend_from_slice(&[0; 61]);
            frame(0, 3, false, &produce_v3_prefix)
        }),
        ("Produce v9 with a compact topic count of 2^32-1", {
            frame(
                0,
                9,
                true,
                &[0, 0, 1, 0, 0, 0x27, 0x10, 0xff, 0xff, 0xff, 0xff, 0x0f, 0],
            )
        }),
        ("Fetch v4 with 2^31-1 topics", {
            let mut b = vec![
                0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x10, 0, 0,
            ];
            b.extend_from_slice(&max);
            frame(1, 4, false, &b)
        }),
        ("ListOffsets v1 with -7 topics", {
            let mut b = vec![0xff, 0xff, 0xff, 0xff];
            b.extend_from_slice(&(-7i32).to_be_bytes());
            frame(2, 1, false, &b)
        }),
        ("ApiVersions v3 with a client name of 2^31 bytes", {
            frame(18, 3, true, &[0x80, 0x80, 0x80, 0x80, 0x08, b'x'])
        }),
        ("FindCoordinator v0 with a key of 32767 bytes", {
            frame(10, 0, false, &[0x7f, 0xff, b'g'])
        }),
    ];
    v.push((
        "a header whose client id runs past the frame",
        vec![0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, 0x7f, 0xff],
    ));
    v.push((
        "a 5-byte frame cut inside its header",
        vec![0, 0, 0, 5, 0, 18, 0, 0, 0],
    ));
    v
}

#[test]
fn hostile_counts_lengths_and_prefixes_close_only_their_connection() {
    let mut broker = TestBroker::start(&[]);
    let port = broker.port();
    let expected = advertised(port);
    for (what, bytes) in hostile_count_frames() {
        assert!(closes(port, &bytes, false), "{what}: connection left open");
        assert_healthy(&mut broker, &expected, what);
    }
    // Size prefixes: negative, zero, too small for a header, over socket.request.max.bytes
    // (100 MiB by default); each is refused before any body is read.
    for size in [-1i32, i32::MIN, 0, 3, 104_857_601, i32::MAX] {
        let mut bytes = size.to_be_bytes().to_vec();
        if size == 3 {
            bytes.extend_from_slice(&[0, 18, 0]); // all of it, still no room for a header
        }
        assert!(
            closes(port, &bytes, false),
            "size {size}: connection left open"
        );
        assert_healthy(&mut broker, &expected, &format!("size prefix {size}"));
    }
    // Unknown API keys, with an otherwise fine ApiVersions body.
    for key in [-1i16, 999, 32767] {
        assert!(
            closes(port, &frame(key, 0, false, &[]), false),
            "API key {key}: connection left open"
        );
        assert_healthy(&mut broker, &expected, &format!("API key {key}"));
    }
    // Known to Kafka but never served by a ZooKeeper-mode broker, or not (yet) by this one.
    let mut unserved = vec![ApiKey::BrokerRegistration as i16];
    unserved.extend(
        kcli::protocol::messages::API_INFO
            .iter()
            .filter(|i| i.zk_broker() && !expected.iter().any(|a| a.0 == i.key))
            .map(|i| i.key)
            .take(3),
    );
    for key in unserved {
        assert!(
            closes(port, &frame(key, 0, false, &[0; 64]), false),
            "unadvertised API key {key}: connection left open"
        );
        assert_healthy(
            &mut broker,
            &expected,
            &format!("unadvertised API key {key}"),
        );
    }
    // Versions outside the advertised range of advertised APIs.
    for &(key, min, max) in &expected {
        if key == ApiKey::ApiVersions as i16 {
            continue; // answered instead: see the KIP-511 test
        }
        for version in [min - 1, max + 1, i16::MAX] {
            let flexible = version > max;
            assert!(
                closes(port, &frame(key, version, flexible, &[0; 32]), false),
                "API {key} v{version}: connection left open"
            );
        }
        assert_healthy(&mut broker, &expected, &format!("API {key} bad versions"));
    }
}

/// Every strict prefix of valid Metadata, Produce and Fetch frames, sent with a size prefix
/// that matches it (so the frame is complete but its body is cut short): closed, never
/// answered; and a frame whose size prefix promises more than comes before the client stops
/// sending is closed when the client closes its side.
#[test]
fn truncated_frames_close_their_connection() {
    use kcli::protocol::messages::{RequestHeader, encode_request_frame};
    let mut broker = TestBroker::start(&[]);
    let port = broker.port();
    let expected = advertised(port);
    let header = |key: ApiKey, version| RequestHeader {
        request_api_key: key as i16,
        request_api_version: version,
        correlation_id: 3,
        client_id: Some(StrBytes::from("trunc")),
        ..Default::default()
    };
    let metadata = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![
            metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("one")),
                ..Default::default()
            },
            metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("two")),
                ..Default::default()
            },
        ]),
        ..Default::default()
    });
    let produce = produce_request("t", 0, batch_of(&[b"a value".to_vec()]), 1);
    let fetch = {
        use kcli::protocol::messages::fetch_request::{FetchPartition, FetchRequest, FetchTopic};
        RequestKind::Fetch(FetchRequest {
            topics: vec![FetchTopic {
                topic: StrBytes::from("t"),
                partitions: vec![FetchPartition {
                    partition_max_bytes: 1000,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        })
    };
    let frames = [
        (ApiKey::Metadata, 12, metadata.clone()),
        (ApiKey::Metadata, 1, metadata),
        (ApiKey::Produce, PRODUCE_VERSION, produce.clone()),
        (ApiKey::Produce, 3, produce),
        (ApiKey::Fetch, 12, fetch.clone()),
        (ApiKey::Fetch, 4, fetch),
    ];
    for (key, version, body) in frames {
        let full = encode_request_frame(&header(key, version), &body).unwrap();
        let body_len = full.len() - 4;
        for cut in 0..body_len {
            let mut bytes = (cut as i32).to_be_bytes().to_vec();
            bytes.extend_from_slice(&full[4..4 + cut]);
            assert!(
                closes(port, &bytes, false),
                "{key:?} v{version} cut to {cut} of {body_len} bytes: left open"
            );
        }
        // The whole frame, cut short of its size prefix, then the client's side closed.
        assert!(
            closes(port, &full[..full.len() / 2], true),
            "{key:?} v{version} half frame"
        );
        assert_healthy(
            &mut broker,
            &expected,
            &format!("truncated {key:?} v{version}"),
        );
    }
}

mod answered;
mod memory;
