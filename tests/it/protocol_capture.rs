//! Real-client frames: a small capture listener that plays a one-broker cluster for a client,
//! answers ApiVersions, Metadata, Produce, InitProducerId and FindCoordinator with the generated
//! codec, and saves every request frame; the test that decodes every committed frame under
//! `tests/fixtures/frames/` and re-encodes it byte for byte; and a live run of kcat (a real
//! librdkafka client) against the listener on every test run. How the fixtures were made is in
//! that folder's README.md.

// Test code: a failed expectation panics with the file and the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;
use kcli::protocol::codec::{StrBytes, Uuid};
use kcli::protocol::messages::{
    API_INFO, ApiKey, ApiVersionsResponse, FetchResponse, FindCoordinatorResponse,
    InitProducerIdResponse, ListOffsetsResponse, MetadataResponse, OffsetForLeaderEpochResponse,
    ProduceResponse, RequestKind, ResponseKind, api_versions_response, decode_request,
    decode_request_header, encode_request_frame, encode_response_frame, fetch_response,
    find_coordinator_response, list_offsets_response, metadata_response,
    offset_for_leader_epoch_response, produce_response,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/frames")
}

fn frames_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            frames_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "bin") {
            out.push(path);
        }
    }
}

#[test]
fn captured_client_frames_decode_and_reencode_byte_for_byte() {
    let mut files = Vec::new();
    frames_under(&fixtures(), &mut files);
    assert!(
        !files.is_empty(),
        "no frames under {}",
        fixtures().display()
    );
    for path in files {
        let frame = std::fs::read(&path).unwrap();
        let (header, body) = decode_request(Bytes::from(frame.clone()))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let again = encode_request_frame(&header, &body).unwrap();
        assert_eq!(&again[4..], &frame[..], "{}", path.display());
    }
}

fn api_versions(version: i16) -> (ResponseKind, i16) {
    let api_keys = API_INFO
        .iter()
        .filter(|i| i.zk_broker())
        .map(|i| api_versions_response::ApiVersion {
            api_key: i.key,
            min_version: i.valid.min,
            max_version: i.max_stable_version(),
            ..Default::default()
        })
        .collect();
    let max = ApiKey::ApiVersions.info().valid.max;
    let (v, error_code) = if version > max { (0, 35) } else { (version, 0) };
    let body = ApiVersionsResponse {
        error_code,
        api_keys,
        ..Default::default()
    };
    (ResponseKind::ApiVersions(body), v)
}

fn respond(req: &RequestKind, version: i16, port: i32) -> Option<(ResponseKind, i16)> {
    let host = StrBytes::from("127.0.0.1");
    Some((
        match req {
            RequestKind::ApiVersions(_) => return Some(api_versions(version)),
            RequestKind::Metadata(m) => {
                let names: Vec<StrBytes> = match &m.topics {
                    Some(t) if !t.is_empty() => t.iter().filter_map(|t| t.name.clone()).collect(),
                    _ => vec![StrBytes::from("capture")],
                };
                let body = MetadataResponse {
                    brokers: vec![metadata_response::MetadataResponseBroker {
                        node_id: 0,
                        host,
                        port,
                        ..Default::default()
                    }],
                    cluster_id: Some(StrBytes::from("kcli-capture")),
                    controller_id: 0,
                    topics: names
                        .into_iter()
                        .map(|name| metadata_response::MetadataResponseTopic {
                            name: Some(name),
                            topic_id: Uuid::nil(),
                            partitions: vec![metadata_response::MetadataResponsePartition {
                                partition_index: 0,
                                leader_id: 0,
                                replica_nodes: vec![0],
                                isr_nodes: vec![0],
                                ..Default::default()
                            }],
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                };
                ResponseKind::Metadata(body)
            }
            RequestKind::Produce(p) => ResponseKind::Produce(ProduceResponse {
                responses: p
                    .topic_data
                    .iter()
                    .map(|t| produce_response::TopicProduceResponse {
                        name: t.name.clone(),
                        partition_responses: t
                            .partition_data
                            .iter()
                            .map(|pd| produce_response::PartitionProduceResponse {
                                index: pd.index,
                                base_offset: 0,
                                log_append_time_ms: -1,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            RequestKind::InitProducerId(_) => {
                ResponseKind::InitProducerId(InitProducerIdResponse {
                    producer_id: 1000,
                    ..Default::default()
                })
            }
            RequestKind::FindCoordinator(f) => {
                ResponseKind::FindCoordinator(FindCoordinatorResponse {
                    node_id: 0,
                    host: host.clone(),
                    port,
                    coordinators: f
                        .coordinator_keys
                        .iter()
                        .map(|k| find_coordinator_response::Coordinator {
                            key: k.clone(),
                            node_id: 0,
                            host: host.clone(),
                            port,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
            }
            RequestKind::ListOffsets(l) => ResponseKind::ListOffsets(ListOffsetsResponse {
                topics: l
                    .topics
                    .iter()
                    .map(|t| list_offsets_response::ListOffsetsTopicResponse {
                        name: t.name.clone(),
                        partitions: t
                            .partitions
                            .iter()
                            .map(|p| list_offsets_response::ListOffsetsPartitionResponse {
                                partition_index: p.partition_index,
                                offset: 0,
                                // Not ignorable: a non-default value below v4 is an error.
                                leader_epoch: if version >= 4 { 0 } else { -1 },
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            RequestKind::OffsetForLeaderEpoch(o) => {
                ResponseKind::OffsetForLeaderEpoch(OffsetForLeaderEpochResponse {
                    topics: o
                        .topics
                        .iter()
                        .map(
                            |t| offset_for_leader_epoch_response::OffsetForLeaderTopicResult {
                                topic: t.topic.clone(),
                                partitions: t
                                    .partitions
                                    .iter()
                                    .map(|p| offset_for_leader_epoch_response::EpochEndOffset {
                                        partition: p.partition,
                                        leader_epoch: 0,
                                        end_offset: 0,
                                        ..Default::default()
                                    })
                                    .collect(),
                                ..Default::default()
                            },
                        )
                        .collect(),
                    ..Default::default()
                })
            }
            RequestKind::Fetch(f) => {
                // Nothing to fetch: wait as a broker would before answering empty.
                std::thread::sleep(std::time::Duration::from_millis(100));
                ResponseKind::Fetch(FetchResponse {
                    responses: f
                        .topics
                        .iter()
                        .map(|t| fetch_response::FetchableTopicResponse {
                            topic: t.topic.clone(),
                            topic_id: t.topic_id,
                            partitions: t
                                .partitions
                                .iter()
                                .map(|p| fetch_response::PartitionData {
                                    partition_index: p.partition,
                                    records: Some(Bytes::new()),
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
            }
            _ => return None,
        },
        version,
    ))
}

fn serve(mut s: TcpStream, dir: &Path, port: i32, seq: &std::sync::atomic::AtomicUsize) {
    loop {
        let mut size = [0u8; 4];
        if s.read_exact(&mut size).is_err() {
            return;
        }
        let mut frame = vec![0u8; i32::from_be_bytes(size) as usize];
        s.read_exact(&mut frame).unwrap();
        let frame = Bytes::from(frame);
        let mut r = kcli::protocol::codec::Reader::new(frame.clone());
        let header = decode_request_header(&mut r).unwrap();
        let key = ApiKey::from_i16(header.request_api_key).unwrap();
        let version = header.request_api_version;
        let n = seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("{n:02}-{:?}-v{version}.bin", key);
        let body = match RequestKind::decode(key, &mut r, version) {
            Ok(b) => b,
            Err(_) if key == ApiKey::ApiVersions => {
                // A version newer than ours: answer v0 with UNSUPPORTED_VERSION (KIP-511).
                let (resp, v) = api_versions(version);
                let out = encode_response_frame(header.correlation_id, &resp, v).unwrap();
                if s.write_all(&out).is_err() {
                    return;
                }
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        // Clients repeat Fetch and Metadata while idle; a few of each are enough.
        if n < 40 && std::fs::read_dir(dir).unwrap().count() < 40 {
            let same = std::fs::read_dir(dir)
                .unwrap()
                .filter(|e| {
                    let f = e.as_ref().unwrap().file_name();
                    f.to_string_lossy().contains(&format!("-{key:?}-"))
                })
                .count();
            if same < 3 {
                std::fs::write(dir.join(&name), &frame).unwrap();
            }
        }
        let Some((resp, v)) = respond(&body, version, port) else {
            eprintln!("{name}: no response; closing");
            return;
        };
        if let RequestKind::Produce(p) = &body
            && p.acks == 0
        {
            continue;
        }
        let out = encode_response_frame(header.correlation_id, &resp, v).unwrap();
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

/// Runs a real client against the capture listener and checks that every frame it sent decodes
/// and re-encodes byte for byte. By default the client is kcat (`tests/fixtures/frames/kcat.sh`)
/// and the frames go to a temporary dir; to add fixtures for another client, set
/// `KCLI_CAPTURE_NAME=<folder>` and `KCLI_CAPTURE_CMD=<command reading $BOOTSTRAP>` and the frames
/// are saved under `tests/fixtures/frames/<folder>/`.
#[test]
fn live_client_frames_round_trip() {
    let scratch = tempfile::tempdir().unwrap();
    let (dir, cmd) = match (
        std::env::var("KCLI_CAPTURE_NAME"),
        std::env::var("KCLI_CAPTURE_CMD"),
    ) {
        (Ok(name), Ok(cmd)) => (fixtures().join(name), cmd),
        _ => (
            scratch.path().to_path_buf(),
            format!("sh {}", fixtures().join("kcat.sh").display()),
        ),
    };
    capture(&dir, move |bootstrap| {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .env("BOOTSTRAP", bootstrap)
            .status()
            .unwrap();
        assert!(status.success(), "client failed: {status}");
    });
    assert_frames_round_trip(&dir, &["ApiVersions", "Metadata", "Produce", "Fetch"]);
}

/// The rdkafka crate (librdkafka 2.12.1, built from source) producing with every codec: its
/// frames decode and re-encode byte for byte.
#[test]
fn rdkafka_crate_frames_round_trip() {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let dir = tempfile::tempdir().unwrap();
    capture(dir.path(), |bootstrap| {
        for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
            let producer: BaseProducer = ClientConfig::new()
                .set("bootstrap.servers", bootstrap)
                .set("compression.codec", codec)
                .set("enable.idempotence", "false")
                .set("linger.ms", "5")
                .create()
                .unwrap();
            for i in 0..20 {
                let value = format!("{codec} record {i} {}", "x".repeat(100));
                producer
                    .send(BaseRecord::to("capture").key("k").payload(&value))
                    .unwrap();
            }
            producer.flush(std::time::Duration::from_secs(20)).unwrap();
        }
    });
    assert_frames_round_trip(dir.path(), &["ApiVersions", "Metadata", "Produce"]);
}

/// Every frame under `dir` decodes and re-encodes to the same bytes, and each of `apis` was
/// seen.
fn assert_frames_round_trip(dir: &Path, apis: &[&str]) {
    let mut files = Vec::new();
    frames_under(dir, &mut files);
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for api in apis {
        assert!(
            names.iter().any(|n| n.contains(&format!("-{api}-"))),
            "no {api} frame captured: {names:?}"
        );
    }
    for path in files {
        let frame = std::fs::read(&path).unwrap();
        let (header, body) = decode_request(Bytes::from(frame.clone()))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            &encode_request_frame(&header, &body).unwrap()[4..],
            &frame[..],
            "{}",
            path.display()
        );
    }
}

/// Runs `client` with the listener's `127.0.0.1:<port>` on a thread of its own, saving the
/// request frames it sends under `dir`, until the client returns (60 s at most).
fn capture(dir: &Path, client: impl FnOnce(&str) + Send + 'static) {
    std::fs::create_dir_all(dir).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bootstrap = format!("127.0.0.1:{port}");
    let child = std::thread::spawn(move || client(&bootstrap));
    listener.set_nonblocking(true).unwrap();
    let seq = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if child.is_finished() {
            if let Err(panic) = child.join() {
                std::panic::resume_unwind(panic);
            }
            return;
        }
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                let dir = dir.to_path_buf();
                let seq = seq.clone();
                std::thread::spawn(move || serve(s, &dir, i32::from(port), &seq));
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
    panic!("client did not finish within 60 s");
}
