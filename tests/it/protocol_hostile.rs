//! Known bytes and hostile input for the protocol codec: exact frames checked byte by byte
//! (headers, ApiVersions, the 18-byte Metadata frame that declares 2^31-1 topics), Kafka's
//! encode-time errors, and every message's encodings truncated and corrupted, which must give
//! errors naming message, version and field, never a panic.

// Test code: a failed expectation panics with the message, version and value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::messages::visit_all;
use crate::protocol_arb::{Arb, Gen, Visit};
use bytes::Bytes;
use kcli::protocol::codec::{
    DecodeErrorKind, EncodeErrorKind, Message, Reader, StrBytes, Writer, cx,
};
use kcli::protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, ProduceRequest,
    RequestHeader, RequestKind, ResponseKind, api_versions_response, decode_request,
    encode_request_frame, encode_response_frame,
};

#[test]
fn the_18_byte_metadata_frame_with_2_pow_31_topics_is_rejected_without_allocating() {
    // size 14 | key 3, version 1, correlation 7, client id null | topics count i32::MAX
    let frame: &[u8] = &[
        0, 0, 0, 14, 0, 3, 0, 1, 0, 0, 0, 7, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff,
    ];
    assert_eq!(frame.len(), 18);
    let err = decode_request(Bytes::copy_from_slice(&frame[4..])).unwrap_err();
    assert_eq!(err.message, "MetadataRequest");
    assert_eq!(err.version, 1);
    assert_eq!(err.field, "MetadataRequest.topics");
    assert_eq!(
        err.kind,
        DecodeErrorKind::CountTooLarge {
            count: i64::from(i32::MAX),
            remaining: 0
        }
    );
}

#[test]
fn an_api_versions_v3_request_frame_decodes_and_reencodes_exactly() {
    let frame: &[u8] = &[
        0, 0, 0, 23, // size
        0, 18, 0, 3, 0, 0, 0, 1, // key 18, v3, correlation 1
        0, 7, b'r', b'd', b'k', b'a', b'f', b'k', b'a', // client id: int16 length even in v2
        0,    // header tagged fields
        2, b'a', 2, b'1', 0, // software name, version, tagged fields
    ];
    let (header, body) = decode_request(Bytes::copy_from_slice(&frame[4..])).unwrap();
    assert_eq!(header.client_id.as_ref().unwrap(), "rdkafka");
    assert_eq!(header.correlation_id, 1);
    let RequestKind::ApiVersions(req) = &body else {
        panic!("{body:?}")
    };
    assert_eq!(req.client_software_name, "a");
    assert_eq!(&encode_request_frame(&header, &body).unwrap()[..], frame);
}

#[test]
fn api_versions_responses_use_header_v0_and_omit_default_tagged_fields() {
    let body = ApiVersionsResponse {
        api_keys: vec![api_versions_response::ApiVersion {
            api_key: 18,
            min_version: 0,
            max_version: 3,
            ..Default::default()
        }],
        ..Default::default()
    };
    let frame = encode_response_frame(9, &ResponseKind::ApiVersions(body), 3).unwrap();
    let expected: &[u8] = &[
        0, 0, 0, 19, 0, 0, 0, 9, // size, correlation id; no header tagged fields
        0, 0, 2, 0, 18, 0, 0, 0, 3, 0, // error, api_keys (compact), entry with empty tags
        0, 0, 0, 0, 0, // throttle, no tagged fields (all at their defaults)
    ];
    assert_eq!(&frame[..], expected);
    assert_eq!(ApiKey::ApiVersions.info().response_header_version(3), 0);
    assert_eq!(ApiKey::Metadata.info().response_header_version(9), 1);
    assert_eq!(
        ApiKey::ControlledShutdown.info().request_header_version(0),
        0
    );
    assert_eq!(
        ApiKey::ControlledShutdown.info().request_header_version(1),
        1
    );
}

#[test]
fn invalid_utf8_and_unknown_tagged_fields_are_kept_byte_for_byte() {
    // ApiVersionsRequest v3: name = ff fe (not UTF-8), version "1", one unknown tag 5 of 2 bytes
    let body: &[u8] = &[3, 0xff, 0xfe, 2, b'1', 1, 5, 2, 0xab, 0xcd];
    let m = ApiVersionsRequest::decode_bytes(Bytes::copy_from_slice(body), 3).unwrap();
    assert!(m.client_software_name.to_str().is_err());
    assert_eq!(m.unknown_tagged_fields.len(), 1);
    assert_eq!(m.unknown_tagged_fields[0].tag, 5);
    assert_eq!(&m.encode_to_bytes(3).unwrap()[..], body);
}

#[test]
fn kafka_encode_errors_name_the_field() {
    let m = ProduceRequest {
        transactional_id: Some(StrBytes::from("tx")),
        ..Default::default()
    };
    let err = m.encode_to_bytes(2).unwrap_err();
    assert_eq!(err.kind, EncodeErrorKind::NonDefault);
    assert_eq!(err.field, "ProduceRequest.transactional_id");
    assert_eq!(err.message, "ProduceRequest");
    // Topics is nullable from v1 only.
    let all_topics = MetadataRequest {
        topics: None,
        ..Default::default()
    };
    let err = all_topics.encode_to_bytes(0).unwrap_err();
    assert_eq!(err.kind, EncodeErrorKind::NullNotAllowed);
    assert_eq!(err.field, "MetadataRequest.topics");
    assert!(all_topics.encode_to_bytes(1).is_ok());
    let err = MetadataRequest::decode_bytes(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff]), 0)
        .unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::NullNotAllowed);
    assert!(
        ProduceRequest::default()
            .encode_to_bytes(12)
            .is_err_and(|e| e.kind == EncodeErrorKind::UnsupportedVersion)
    );
}

#[test]
fn malformed_lengths_and_varints_are_errors() {
    // Compact array count as a 6-byte varint.
    let err = MetadataRequest::decode_bytes(Bytes::from_static(&[0xff; 6]), 9).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::VarintTooLong);
    // Compact count 0xffffffff - 1 reads as a negative int in Java, so null, which v9 allows;
    // then the tagged fields are missing.
    assert!(
        MetadataRequest::decode_bytes(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x0f]), 9)
            .is_err()
    );
    // A string claiming 0x7ffe bytes with 3 present.
    let err = ApiVersionsRequest::decode_bytes(Bytes::from_static(&[0xff, 0xff, 0x01, b'a']), 3)
        .unwrap_err();
    assert!(
        matches!(err.kind, DecodeErrorKind::CountTooLarge { .. }),
        "{err}"
    );
    assert_eq!(err.field, "ApiVersionsRequest.client_software_name");
    // Any negative int16 length in a nullable string is null, as in Java.
    let err =
        RequestHeader::decode_bytes(Bytes::from_static(&[0, 3, 0, 1, 0, 0, 0, 1, 0x80, 0]), 1);
    assert!(err.is_ok(), "client id is nullable: {err:?}");
    // Unknown API keys.
    let err = decode_request(Bytes::from_static(&[0x7f, 0, 0, 0, 0, 0, 0, 0])).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::UnknownApiKey(0x7f00));
    // A known tagged field whose declared size is wrong.
    let body: &[u8] = &[1, 1, 1, 0, 1, 0, 2, 0, 0];
    assert!(ApiVersionsRequest::decode_bytes(Bytes::copy_from_slice(body), 3).is_err());
    let mut w = Writer::new();
    w.put_uvarint(u32::MAX);
    assert_eq!(&w.into_bytes()[..], &[0xff, 0xff, 0xff, 0xff, 0x0f]);
    let mut r = Reader::new(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x0f]));
    assert_eq!(r.uvarint().unwrap(), u32::MAX);
}

/// Every prefix of a valid encoding fails to decode; corrupting any of the first bytes never
/// panics, and whatever still decodes re-encodes.
struct Hostile {
    frames: usize,
}

impl Visit for Hostile {
    fn visit<M: Message + Arb>(&mut self) {
        for v in M::VERSIONS.min..=M::VERSIONS.max {
            for seed in 0..3u64 {
                let mut g = Gen::new(seed * 7919 + v as u64);
                let bytes = M::arb(&mut g, cx(v, false))
                    .encode_to_bytes(v)
                    .unwrap()
                    .freeze();
                for cut in 0..bytes.len() {
                    self.frames += 1;
                    let err = M::decode_bytes(bytes.slice(..cut), v);
                    if let Ok(m) = err {
                        // A prefix can only be a whole message when it is one.
                        let again = m.encode_to_bytes(v).unwrap();
                        assert_eq!(&again[..], &bytes[..cut], "{} v{v}", M::NAME);
                    }
                }
                for at in 0..bytes.len().min(48) {
                    for b in [0x00, 0x7f, 0x80, 0xff] {
                        self.frames += 1;
                        let mut copy = bytes.to_vec();
                        copy[at] = b;
                        if let Ok(m) = M::decode_bytes(Bytes::from(copy), v) {
                            let _ = m.encode_to_bytes(v);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn truncated_and_corrupted_frames_of_every_message_are_errors_not_panics() {
    let mut h = Hostile { frames: 0 };
    visit_all(&mut h);
    assert!(h.frames > 10_000, "only {} frames", h.frames);
}
