//! Fetch (Kafka's `handleFetchRequest`, `ReplicaManager.fetchMessages` and `DelayedFetch`).
//!
//! Reads stop at the high watermark for consumers and at the log end for followers, and start at
//! the whole batch that holds the fetch offset. Limits follow KIP-74: partitions are read in
//! request order under the request's `max_bytes`, each under its `partition_max_bytes`, and the
//! first partition with data returns its first batch even when it is larger (not at v0-2, whose
//! limits are hard).
//!
//! v4 and later are the fast path: each partition's records are a range of a segment file,
//! sent with `sendfile(2)` by the network layer; the response is encoded around placeholders
//! whose lengths are the ranges', never copied. v0-3 read the bytes and down-convert them to
//! magic 0/1 (`protocol::record::convert`); a consumer fetching a topic with
//! `message.downconversion.enable=false` that way gets UNSUPPORTED_VERSION for the partition
//! instead, as from Kafka (whose logs are always v2 since the 3.0 format).
//!
//! Fetch sessions (KIP-227) are answered sessionless: session id 0 gets a full response and no
//! session; an incremental fetch (epoch > 0) gets FETCH_SESSION_ID_NOT_FOUND, so the client
//! falls back to full fetches; epoch -1 closes a session, which is a full fetch too.
//!
//! When less than `min_bytes` is available the request waits in the purgatory (on the
//! connection's task) until one of its partitions moves or `max_wait_ms` passes, then reads
//! again.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;
use crate::network::{FileRange, Response, ResponsePart};
use crate::protocol::codec::{StrBytes, Uuid};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::fetch_request::{FetchPartition, FetchRequest};
use crate::protocol::messages::fetch_response::{
    FetchResponse, FetchableTopicResponse, PartitionData,
};
use crate::replication::Partition;
use crate::replication::delayed::PartitionWatch;
use crate::storage::file_records::FileSlice;
use crate::storage::log_reads::FetchIsolation;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use crate::protocol::record::convert::batches_to_message_set;

/// One partition of the request, resolved once and re-read after each wait.
struct PartitionPlan {
    fetch: FetchPartition,
    partition: Result<Arc<Partition>, ErrorCode>,
}

struct TopicPlan {
    name: StrBytes,
    topic_id: Uuid,
    partitions: Vec<PartitionPlan>,
}

/// The request, resolved against the hosted partitions.
struct FetchPlan {
    version: i16,
    /// A replica's fetch (`replica_id >= 0`): never refused down-conversion, as in Kafka.
    from_follower: bool,
    isolation: FetchIsolation,
    read_committed: bool,
    max_bytes: usize,
    min_bytes: usize,
    topics: Vec<TopicPlan>,
}

/// A read of every partition: the response with placeholders, and the file ranges to send in
/// their place, in encoding order.
struct FetchRead {
    response: FetchResponse,
    files: Vec<FileSlice>,
    bytes: usize,
    has_error: bool,
}

pub async fn handle(apis: &KafkaApis, ctx: &RequestContext, request: FetchRequest) -> Response {
    let version = ctx.api_version;
    if version >= 7 && request.session_epoch > 0 {
        let response = FetchResponse {
            error_code: ErrorCode::FetchSessionIdNotFound.code(),
            ..FetchResponse::default()
        };
        return ctx.respond(ResponseKind::Fetch(response));
    }
    let replica_id = if version >= 15 {
        request.replica_state.replica_id
    } else {
        request.replica_id
    };
    let plan = resolve(apis, version, replica_id, &request);
    let read = read_all(&plan);
    let wait_ms = u64::try_from(request.max_wait_ms).unwrap_or(0);
    if wait_ms == 0 || read.bytes >= plan.min_bytes || read.has_error || plan.is_empty() {
        return respond(ctx, read);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
    let ctx = ctx.clone();
    let shutting_down = apis.replica_manager.shutting_down().clone();
    Response::Deferred(Box::pin(async move {
        loop {
            let watch = PartitionWatch::register(plan.hosted());
            let read = read_all(&plan);
            if read.bytes >= plan.min_bytes || read.has_error {
                return respond(&ctx, read);
            }
            if !watch.wait(deadline, &shutting_down).await {
                return respond(&ctx, read_all(&plan));
            }
        }
    }))
}

fn resolve(apis: &KafkaApis, version: i16, replica_id: i32, request: &FetchRequest) -> FetchPlan {
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let name = if version >= 13 {
                apis.metadata_cache.topic_name(t.topic_id)
            } else {
                Some(t.topic.to_string_lossy().into_owned())
            };
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let partition = match &name {
                        None => Err(ErrorCode::UnknownTopicId),
                        Some(name) => apis
                            .replica_manager
                            .get_partition_or_error(&TopicPartition::new(name.clone(), p.partition))
                            .map_err(|e| e.error_code()),
                    };
                    PartitionPlan {
                        fetch: p.clone(),
                        partition,
                    }
                })
                .collect();
            TopicPlan {
                name: t.topic.clone(),
                topic_id: t.topic_id,
                partitions,
            }
        })
        .collect();
    FetchPlan {
        version,
        from_follower: replica_id >= 0,
        isolation: if replica_id >= 0 {
            FetchIsolation::LogEnd
        } else {
            FetchIsolation::HighWatermark
        },
        read_committed: request.isolation_level == 1,
        // v0-2 have no request-level limit.
        max_bytes: if version >= 3 {
            usize::try_from(request.max_bytes).unwrap_or(0)
        } else {
            usize::MAX
        },
        min_bytes: usize::try_from(request.min_bytes).unwrap_or(0),
        topics,
    }
}

impl FetchPlan {
    fn is_empty(&self) -> bool {
        self.topics.iter().all(|t| t.partitions.is_empty())
    }

    /// Kafka's `maybeConvertFetchedData`: whether the partition's answer is UNSUPPORTED_VERSION
    /// because it would need down-conversion (v0-3) that its topic config disables.
    fn refuses_down_conversion(&self, partition: &Result<Arc<Partition>, ErrorCode>) -> bool {
        self.version <= 3
            && !self.from_follower
            && partition
                .as_ref()
                .is_ok_and(|p| !lock(p.log()).config().message_downconversion_enable)
    }

    fn hosted(&self) -> impl Iterator<Item = &Arc<Partition>> {
        self.topics
            .iter()
            .flat_map(|t| &t.partitions)
            .filter_map(|p| p.partition.as_ref().ok())
    }
}

fn read_all(plan: &FetchPlan) -> FetchRead {
    let mut limit = plan.max_bytes;
    let mut min_one_message = plan.version > 2;
    let mut files = Vec::new();
    let mut total = 0usize;
    let mut has_error = false;
    let mut responses = Vec::with_capacity(plan.topics.len());
    for topic in &plan.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in &topic.partitions {
            let refused = plan.refuses_down_conversion(&p.partition);
            let mut data = PartitionData {
                partition_index: p.fetch.partition,
                high_watermark: -1,
                last_stable_offset: -1,
                log_start_offset: -1,
                aborted_transactions: plan.read_committed.then(Vec::new),
                records: Some(Bytes::new()),
                ..PartitionData::default()
            };
            let read = p.partition.as_ref().map_err(|c| *c).and_then(|partition| {
                let max = usize::try_from(p.fetch.partition_max_bytes)
                    .unwrap_or(0)
                    .min(limit);
                partition
                    .read_records(
                        p.fetch.fetch_offset,
                        p.fetch.current_leader_epoch,
                        max,
                        plan.isolation,
                        min_one_message,
                    )
                    // Kafka answers every read error with -1 offsets (`createLogReadResult`);
                    // an out-of-range consumer resets through ListOffsets.
                    .map_err(|e| e.error_code())
            });
            match read {
                Ok(result) => {
                    let o = result.offsets;
                    data.high_watermark = o.high_watermark;
                    data.last_stable_offset = o.high_watermark;
                    data.log_start_offset = o.log_start_offset;
                    let size = usize::try_from(result.records.size).unwrap_or(0);
                    if size > 0 {
                        min_one_message = false;
                        limit = limit.saturating_sub(size);
                        total += size;
                    }
                    // A refused partition still counts what it read towards `min_bytes`, as
                    // Kafka converts (or refuses) only once the read completes.
                    if size > 0 && !refused {
                        match records_for(plan.version, result.records, &mut files) {
                            Ok(records) => data.records = Some(records),
                            Err(code) => {
                                has_error = true;
                                data.error_code = code.code();
                            }
                        }
                    }
                }
                Err(code) => {
                    has_error = true;
                    data.error_code = code.code();
                }
            }
            if refused {
                // Kafka's `FetchResponse.partitionResponse(tp, UNSUPPORTED_VERSION)`, in place of
                // whatever the read gave.
                data = PartitionData {
                    partition_index: p.fetch.partition,
                    error_code: ErrorCode::UnsupportedVersion.code(),
                    high_watermark: -1,
                    last_stable_offset: -1,
                    log_start_offset: -1,
                    records: Some(Bytes::new()),
                    ..PartitionData::default()
                };
            }
            partitions.push(data);
        }
        responses.push(FetchableTopicResponse {
            topic: if plan.version < 13 {
                topic.name.clone()
            } else {
                StrBytes::default()
            },
            topic_id: if plan.version >= 13 {
                topic.topic_id
            } else {
                Uuid::nil()
            },
            partitions,
            ..FetchableTopicResponse::default()
        });
    }
    FetchRead {
        response: FetchResponse {
            responses,
            ..FetchResponse::default()
        },
        files,
        bytes: total,
        has_error,
    }
}

/// The records field for a read: at v4+ a placeholder of the slice's length (the slice goes to
/// `files`); at v0-3 the down-converted bytes.
fn records_for(
    version: i16,
    slice: FileSlice,
    files: &mut Vec<FileSlice>,
) -> Result<Bytes, ErrorCode> {
    if version >= 4 {
        let placeholder = placeholder(usize::try_from(slice.size).unwrap_or(0));
        files.push(slice);
        return Ok(placeholder);
    }
    let bytes = slice.read_to_vec().map_err(|err| {
        tracing::error!(%err, "cannot read a segment for down-conversion");
        ErrorCode::KafkaStorageError
    })?;
    let magic = if version <= 1 { 0 } else { 1 };
    batches_to_message_set(&bytes, magic)
        .map(Bytes::from)
        .map_err(|e| e.code)
}

/// Bytes that only stand for a file range's length: the encoder writes their length prefix and
/// passes them through by reference; the network layer sends the file range instead. Up to 1 MiB
/// they are a static zero page run; beyond it a zeroed allocation the kernel maps lazily (never
/// touched, so it costs no memory).
fn placeholder(len: usize) -> Bytes {
    static ZEROS: [u8; 1 << 20] = [0; 1 << 20];
    match ZEROS.get(..len) {
        Some(z) => Bytes::from_static(z),
        None => Bytes::from(vec![0u8; len]),
    }
}

fn respond(ctx: &RequestContext, read: FetchRead) -> Response {
    let body = ResponseKind::Fetch(read.response);
    if ctx.api_version < 4 {
        return ctx.respond(body);
    }
    let mut files = read.files.into_iter();
    ctx.respond_segments(&body, |placeholder| match files.next() {
        Some(slice) => ResponsePart::File(FileRange {
            file: slice.file,
            position: slice.position,
            len: slice.size,
        }),
        // Only the placeholders are non-empty records at v4+, one per slice.
        None => ResponsePart::Bytes(placeholder),
    })
}
