//! Round trips and differential tests of the generated codec, for every message of Kafka 3.9's
//! specs at every valid version: random values (proptest picks the seeds) encode, decode back
//! to the same value, re-encode to the same bytes, and agree with `compute_size` and the
//! segmented encoding; where the kafka-protocol crate also has the API and version, it reads
//! our bytes and writes back the very same bytes.

// Test code: a failed expectation panics with the message, version and value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::messages::visit_all;
use crate::protocol_arb::{Arb, Gen, Visit};
use bytes::Bytes;
use kcli::protocol::codec::{Message, MessageKind, Segment, cx};
use kcli::protocol::messages::ApiKey;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

fn concat(segments: &[Segment]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in segments {
        match s {
            Segment::Inline(b) | Segment::Records(b) => out.extend_from_slice(b),
        }
    }
    out
}

fn round_trip<M: Message + Arb>(seed: u64, v: i16) -> Result<(), TestCaseError> {
    let mut g = Gen::new(seed);
    let x = M::arb(&mut g, cx(v, false));
    let bytes = x
        .encode_to_bytes(v)
        .map_err(|e| TestCaseError::fail(format!("{e} for {x:?}")))?
        .freeze();
    prop_assert_eq!(x.compute_size(v).unwrap(), bytes.len());
    let y = M::decode_bytes(bytes.clone(), v)
        .map_err(|e| TestCaseError::fail(format!("{e}: {bytes:?} from {x:?}")))?;
    prop_assert_eq!(&y, &x, "{} v{} decoded differently", M::NAME, v);
    let again = y.encode_to_bytes(v).unwrap();
    prop_assert_eq!(&again[..], &bytes[..]);
    let segments = x.encode_segments(v).unwrap();
    prop_assert_eq!(&concat(&segments)[..], &bytes[..]);
    Ok(())
}

struct RoundTrips {
    cases: u32,
    versions: usize,
}

impl Visit for RoundTrips {
    fn visit<M: Message + Arb>(&mut self) {
        for v in M::VERSIONS.min..=M::VERSIONS.max {
            self.versions += 1;
            runner(self.cases)
                .run(&any::<u64>(), |seed| round_trip::<M>(seed, v))
                .unwrap_or_else(|e| panic!("{} v{v}: {e}", M::NAME));
        }
    }
}

#[test]
fn every_message_and_version_round_trips() {
    let mut rt = RoundTrips {
        cases: 48,
        versions: 0,
    };
    visit_all(&mut rt);
    // 210 specs; a regression in the visitor would silently test nothing.
    assert!(
        rt.versions > 600,
        "only {} message versions visited",
        rt.versions
    );
}

/// Our bytes, read and re-written by the kafka-protocol crate (Kafka 4.1's specs), must come
/// back unchanged.
struct Differential {
    compared: usize,
}

fn kp_reencode<M: Message>(key: i16, bytes: &Bytes, v: i16) -> Result<Vec<u8>, String> {
    use kafka_protocol::messages::{ApiKey as KpKey, RequestKind, ResponseKind};
    let kp_key = KpKey::try_from(key).map_err(|()| format!("kafka-protocol lacks key {key}"))?;
    let mut buf = bytes.clone();
    let mut out = bytes::BytesMut::new();
    match M::KIND {
        MessageKind::Request => RequestKind::decode(kp_key, &mut buf, v)
            .and_then(|m| m.encode(&mut out, v))
            .map_err(|e| format!("kafka-protocol: {e}"))?,
        _ => ResponseKind::decode(kp_key, &mut buf, v)
            .and_then(|m| m.encode(&mut out, v))
            .map_err(|e| format!("kafka-protocol: {e}"))?,
    }
    if !buf.is_empty() {
        return Err(format!("kafka-protocol left {} bytes", buf.len()));
    }
    Ok(out.to_vec())
}

impl Visit for Differential {
    fn visit<M: Message + Arb>(&mut self) {
        let Some(key) = M::API_KEY else { return };
        if !matches!(M::KIND, MessageKind::Request | MessageKind::Response) {
            return;
        }
        let Ok(kp_key) = kafka_protocol::messages::ApiKey::try_from(key) else {
            return;
        };
        let info = ApiKey::from_i16(key).unwrap().info();
        let kp = kp_key.valid_versions();
        let lo = kp.min.max(M::VERSIONS.min);
        let hi = kp.max.min(info.max_stable_version());
        for v in lo..=hi {
            self.compared += 1;
            runner(24)
                .run(&any::<u64>(), |seed| {
                    let mut g = Gen::new(seed);
                    g.utf8_only = true;
                    let x = M::arb(&mut g, cx(v, false));
                    let ours = x.encode_to_bytes(v).unwrap().freeze();
                    let theirs = kp_reencode::<M>(key, &ours, v)
                        .map_err(|e| TestCaseError::fail(format!("{e}: {ours:?} from {x:?}")))?;
                    prop_assert_eq!(&theirs[..], &ours[..], "{:?}", x);
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{} v{v}: {e}", M::NAME));
        }
    }
}

#[test]
fn bytes_agree_with_the_kafka_protocol_crate() {
    let mut d = Differential { compared: 0 };
    visit_all(&mut d);
    assert!(
        d.compared > 300,
        "only {} message versions compared",
        d.compared
    );
}

/// kafka-protocol's reading and re-writing of a non-API message (headers, data types).
fn kp_data<K>(bytes: &Bytes, v: i16) -> Option<Result<Vec<u8>, String>>
where
    K: kafka_protocol::protocol::Decodable
        + kafka_protocol::protocol::Encodable
        + kafka_protocol::protocol::Message,
{
    if !(K::VERSIONS.min..=K::VERSIONS.max).contains(&v) {
        return None;
    }
    let mut buf = bytes.clone();
    let mut out = bytes::BytesMut::new();
    Some(
        K::decode(&mut buf, v)
            .and_then(|m| m.encode(&mut out, v))
            .map_err(|e| format!("kafka-protocol: {e}"))
            .map(|()| out.to_vec()),
    )
}

/// The KRaft record types are left out: kafka-protocol checks their self-describing `Version`
/// field against the encoding version, which the specs do not ask for.
struct DataDifferential {
    compared: usize,
}

impl Visit for DataDifferential {
    fn visit<M: Message + Arb>(&mut self) {
        use kafka_protocol::messages as kp;
        if matches!(M::KIND, MessageKind::Request | MessageKind::Response) {
            return;
        }
        for v in M::VERSIONS.min..=M::VERSIONS.max {
            runner(24)
                .run(&any::<u64>(), |seed| {
                    let mut g = Gen::new(seed);
                    g.utf8_only = true;
                    let x = M::arb(&mut g, cx(v, false));
                    let ours = x.encode_to_bytes(v).unwrap().freeze();
                    let theirs = match M::NAME {
                        "RequestHeader" => kp_data::<kp::RequestHeader>(&ours, v),
                        "ResponseHeader" => kp_data::<kp::ResponseHeader>(&ours, v),
                        "ConsumerProtocolAssignment" => {
                            kp_data::<kp::ConsumerProtocolAssignment>(&ours, v)
                        }
                        "ConsumerProtocolSubscription" => {
                            kp_data::<kp::ConsumerProtocolSubscription>(&ours, v)
                        }
                        "DefaultPrincipalData" => kp_data::<kp::DefaultPrincipalData>(&ours, v),
                        "SnapshotFooterRecord" => kp_data::<kp::SnapshotFooterRecord>(&ours, v),
                        "SnapshotHeaderRecord" => kp_data::<kp::SnapshotHeaderRecord>(&ours, v),
                        _ => None,
                    };
                    let Some(theirs) = theirs else { return Ok(()) };
                    let theirs = theirs.map_err(|e| TestCaseError::fail(format!("{e}: {x:?}")))?;
                    prop_assert_eq!(&theirs[..], &ours[..], "{:?}", x);
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{} v{v}: {e}", M::NAME));
            self.compared += 1;
        }
    }
}

#[test]
fn headers_and_data_types_agree_with_the_kafka_protocol_crate() {
    let mut d = DataDifferential { compared: 0 };
    visit_all(&mut d);
    assert!(d.compared > 10, "only {} compared", d.compared);
}
