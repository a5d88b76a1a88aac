//! Criterion benchmarks of the generated protocol codec: decode and encode of Produce, Fetch
//! and Metadata requests and responses shaped like what real clients and brokers exchange
//! (librdkafka's Produce v9 with a 16 KiB batch, a Fetch v12 response over 10 partitions of
//! 16 KiB, a Metadata v12 response of 100 topics × 10 partitions). The Fetch response is also
//! encoded in segments, where record data is passed by reference. Figures and the commands
//! that made them are in docs/benchmarks.md.

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kcli::protocol::codec::{Message, Reader, StrBytes};
use kcli::protocol::messages::{
    FetchRequest, FetchResponse, MetadataRequest, MetadataResponse, ProduceRequest,
    ProduceResponse, fetch_request, fetch_response, metadata_request, metadata_response,
    produce_request, produce_response,
};
use std::hint::black_box;

fn records(len: usize) -> Bytes {
    Bytes::from((0..len).map(|i| i as u8).collect::<Vec<u8>>())
}

fn produce_request() -> ProduceRequest {
    ProduceRequest {
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![produce_request::TopicProduceData {
            name: StrBytes::from("bench-topic"),
            partition_data: vec![produce_request::PartitionProduceData {
                index: 0,
                records: Some(records(16 * 1024)),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn produce_response() -> ProduceResponse {
    ProduceResponse {
        responses: vec![produce_response::TopicProduceResponse {
            name: StrBytes::from("bench-topic"),
            partition_responses: vec![produce_response::PartitionProduceResponse {
                base_offset: 1_000,
                log_append_time_ms: -1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn fetch_request() -> FetchRequest {
    FetchRequest {
        replica_id: -1,
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 50 << 20,
        topics: vec![fetch_request::FetchTopic {
            topic: StrBytes::from("bench-topic"),
            partitions: (0..10)
                .map(|p| fetch_request::FetchPartition {
                    partition: p,
                    fetch_offset: 1_000,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn fetch_response() -> FetchResponse {
    FetchResponse {
        responses: vec![fetch_response::FetchableTopicResponse {
            topic: StrBytes::from("bench-topic"),
            partitions: (0..10)
                .map(|p| fetch_response::PartitionData {
                    partition_index: p,
                    high_watermark: 5_000,
                    last_stable_offset: 5_000,
                    records: Some(records(16 * 1024)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn metadata_request() -> MetadataRequest {
    MetadataRequest {
        topics: Some(
            (0..100)
                .map(|t| metadata_request::MetadataRequestTopic {
                    name: Some(StrBytes::from(format!("topic-{t}"))),
                    ..Default::default()
                })
                .collect(),
        ),
        ..Default::default()
    }
}

fn metadata_response() -> MetadataResponse {
    MetadataResponse {
        brokers: (0..3)
            .map(|b| metadata_response::MetadataResponseBroker {
                node_id: b,
                host: StrBytes::from("broker.example"),
                port: 9092,
                ..Default::default()
            })
            .collect(),
        cluster_id: Some(StrBytes::from("cluster")),
        controller_id: 0,
        topics: (0..100)
            .map(|t| metadata_response::MetadataResponseTopic {
                name: Some(StrBytes::from(format!("topic-{t}"))),
                partitions: (0..10)
                    .map(|p| metadata_response::MetadataResponsePartition {
                        partition_index: p,
                        leader_id: p % 3,
                        replica_nodes: vec![0, 1, 2],
                        isr_nodes: vec![0, 1, 2],
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn bench_message<M: Message>(c: &mut Criterion, name: &str, m: &M, version: i16) {
    let Ok(bytes) = m.encode_to_bytes(version) else {
        return;
    };
    let bytes = bytes.freeze();
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| M::decode(&mut Reader::new(black_box(bytes.clone())), version).map(drop))
    });
    g.bench_function("encode", |b| {
        b.iter(|| black_box(m).encode_to_bytes(version).map(drop))
    });
    g.bench_function("compute_size", |b| {
        b.iter(|| black_box(m).compute_size(version))
    });
    g.finish();
}

/// Request frames captured from real clients (tests/fixtures/frames), decoded and re-encoded
/// whole: header and body.
fn captured(c: &mut Criterion) {
    use kcli::protocol::messages::{decode_request, encode_request_frame};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/frames");
    for (name, file) in [
        (
            "java_produce_v11",
            "java-kafka-clients-3.9.0/04-Produce-v11.bin",
        ),
        (
            "librdkafka_produce_v10",
            "confluent-kafka-2.16.1/04-Produce-v10.bin",
        ),
        (
            "librdkafka_fetch_v12",
            "confluent-kafka-2.16.1-consumer/08-Fetch-v12.bin",
        ),
        (
            "java_metadata_v12",
            "java-kafka-clients-3.9.0/01-Metadata-v12.bin",
        ),
    ] {
        let Ok(frame) = std::fs::read(dir.join(file)) else {
            continue;
        };
        let frame = Bytes::from(frame);
        let Ok((header, body)) = decode_request(frame.clone()) else {
            continue;
        };
        let mut g = c.benchmark_group(format!("captured/{name}"));
        g.throughput(Throughput::Bytes(frame.len() as u64));
        g.bench_function("decode", |b| {
            b.iter(|| decode_request(black_box(frame.clone())).map(drop))
        });
        g.bench_function("encode", |b| {
            b.iter(|| encode_request_frame(black_box(&header), black_box(&body)).map(drop))
        });
        g.finish();
    }
}

fn codec(c: &mut Criterion) {
    bench_message(c, "produce_request_v9", &produce_request(), 9);
    bench_message(c, "produce_response_v9", &produce_response(), 9);
    bench_message(c, "fetch_request_v12", &fetch_request(), 12);
    bench_message(c, "fetch_response_v12", &fetch_response(), 12);
    bench_message(c, "metadata_request_v12", &metadata_request(), 12);
    bench_message(c, "metadata_response_v12", &metadata_response(), 12);
    let fetch = fetch_response();
    c.bench_function("fetch_response_v12/encode_segments", |b| {
        b.iter(|| black_box(&fetch).encode_segments(12).map(drop))
    });
}

criterion_group!(benches, codec, captured);
criterion_main!(benches);
