//! Fetch (Kafka's `handleFetchRequest`): translates the request into
//! `ReplicaManager::fetch_messages` (which reads, bounds and long-polls; see
//! `replication::replica_manager::fetch`) and its reads back into the response.
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
//! A follower (or, from v12, a consumer) may send `LastFetchedEpoch`; a partition whose fetcher
//! diverged from this leader's log is answered with no records and `DivergingEpoch` (tagged
//! field 0, v12+), where the fetcher truncates.
//!
//! From v11 the request carries the consumer's rack: a leader with `replica.selector.class`
//! may answer a partition with `PreferredReadReplica` and no records, and a follower serves
//! such a consumer up to its high watermark (KIP-392; see `replication::replica_selector`).
//!
//! A long poll waits on the connection's task. A partition this broker does not host answers
//! NOT_LEADER_OR_FOLLOWER when the metadata cache knows it, else UNKNOWN_TOPIC_OR_PARTITION; a
//! topic id the cache does not know answers UNKNOWN_TOPIC_ID.
//!
//! Authorization: a follower's fetch needs ClusterAction on the cluster, else every partition
//! is TOPIC_AUTHORIZATION_FAILED; a consumer's needs Read on each topic, else its partitions
//! are (Kafka's `handleFetchRequest`).

use bytes::Bytes;

use crate::cluster::TopicPartition;
use crate::network::{FileRange, Response, ResponsePart};
use crate::protocol::codec::{StrBytes, Uuid};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::fetch_request::FetchRequest;
use crate::protocol::messages::fetch_response::{
    AbortedTransaction, EpochEndOffset, FetchResponse, FetchableTopicResponse, PartitionData,
};
use crate::protocol::record::batch::count_records;
use crate::protocol::record::down_convert::batches_to_message_set;
use crate::replication::{
    ClientMetadata, FetchParams, FetchPartitionData, FetchPartitionInfo, FetchResult, FileSlice,
    ReplicaManager,
};

use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::metadata_cache::MetadataCache;
use super::super::quota::request_quotas::{fetch_max_bytes_for_quota, throttle_fetch};
use super::super::request_context::RequestContext;
use super::partition_error;

/// One partition of the request: refused by the handler (an unknown topic id), or read by the
/// replica manager at this index of its partitions.
enum Slot {
    Refused(ErrorCode),
    Read(usize, TopicPartition),
}

/// What the response needs besides the reads: each topic's names and its partitions' slots.
struct Layout {
    version: i16,
    /// A replica's fetch (`replica_id >= 0`): never refused down-conversion, as in Kafka.
    from_follower: bool,
    read_committed: bool,
    topics: Vec<TopicLayout>,
}

/// A topic as the request names it, and its partitions' indexes and slots.
struct TopicLayout {
    name: StrBytes,
    topic_id: Uuid,
    partitions: Vec<(i32, Slot)>,
}

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: FetchRequest,
) -> Response {
    let version = ctx.api_version;
    let replica_id = if version >= 15 {
        request.replica_state.replica_id
    } else {
        request.replica_id
    };
    ctx.recorder.fetch_from_follower(replica_id >= 0);
    if version >= 7 && request.session_epoch > 0 {
        let response = FetchResponse {
            error_code: ErrorCode::FetchSessionIdNotFound.code(),
            ..FetchResponse::default()
        };
        return ctx.respond(ResponseKind::Fetch(response));
    }
    let mut partitions = Vec::new();
    let mut layout = Layout {
        version,
        from_follower: replica_id >= 0,
        read_committed: request.isolation_level == 1,
        topics: Vec::with_capacity(request.topics.len()),
    };
    let follower_allowed = layout.from_follower
        && apis
            .auth
            .authorize_cluster(ctx, AclOperation::ClusterAction);
    for t in &request.topics {
        let name = if version >= 13 {
            apis.metadata_cache.topic_name(t.topic_id)
        } else {
            Some(t.topic.to_string_lossy().into_owned())
        };
        let allowed = name.as_ref().is_some_and(|n| {
            if layout.from_follower {
                follower_allowed
            } else {
                apis.auth
                    .authorize(ctx, AclOperation::Read, ResourceType::Topic, n)
            }
        });
        let slots = t
            .partitions
            .iter()
            .map(|p| {
                let slot = match &name {
                    None => Slot::Refused(ErrorCode::UnknownTopicId),
                    Some(_) if !allowed => Slot::Refused(ErrorCode::TopicAuthorizationFailed),
                    Some(name) => {
                        let tp = TopicPartition::new(name.clone(), p.partition);
                        partitions.push(FetchPartitionInfo {
                            topic_partition: tp.clone(),
                            fetch_offset: p.fetch_offset,
                            current_leader_epoch: p.current_leader_epoch,
                            // Kafka's `optionalEpoch`: -1 (and below v12, always -1) is none.
                            last_fetched_epoch: (p.last_fetched_epoch >= 0)
                                .then_some(p.last_fetched_epoch),
                            log_start_offset: p.log_start_offset,
                            partition_max_bytes: p.partition_max_bytes,
                        });
                        Slot::Read(partitions.len() - 1, tp)
                    }
                };
                (p.partition, slot)
            })
            .collect();
        layout.topics.push(TopicLayout {
            name: t.topic.clone(),
            topic_id: t.topic_id,
            partitions: slots,
        });
    }
    // A consumer under a fetch quota takes a small slice of it per fetch, so that its bytes
    // arrive paced instead of a window's worth at once (Kafka caps it at `maxQuotaWindowBytes`).
    let quota_max_bytes = if layout.from_follower {
        i32::MAX
    } else {
        fetch_max_bytes_for_quota(ctx)
    };
    let params = FetchParams {
        replica_id,
        max_wait_ms: request.max_wait_ms,
        min_bytes: request.min_bytes.min(quota_max_bytes),
        // v0-2 have no request-level limit, and their partition limits are hard.
        max_bytes: if version >= 3 {
            usize::try_from(request.max_bytes.min(quota_max_bytes)).unwrap_or(0)
        } else if quota_max_bytes < i32::MAX {
            usize::try_from(quota_max_bytes).unwrap_or(0)
        } else {
            usize::MAX
        },
        isolation_level: request.isolation_level,
        min_one_message: version > 2,
        whole_batches: quota_max_bytes < i32::MAX,
        // Kafka's `clientMetadata`, from v11 (where `rack_id` exists) for every fetcher.
        client_metadata: (version >= 11).then(|| ClientMetadata {
            rack_id: request.rack_id.to_string_lossy().into_owned(),
            listener_name: ctx.listener_name.to_string(),
        }),
    };
    match apis.replica_manager.fetch_messages(params, partitions) {
        FetchResult::Ready(reads) => respond(
            ctx,
            build(&apis.replica_manager, &apis.metadata_cache, &layout, reads),
            layout.from_follower,
        ),
        FetchResult::Delayed(delayed) => {
            let ctx = ctx.deferred();
            let replica_manager = std::sync::Arc::clone(&apis.replica_manager);
            let metadata_cache = std::sync::Arc::clone(&apis.metadata_cache);
            Response::Deferred(Box::pin(async move {
                let reads = delayed.complete().await;
                let from_follower = layout.from_follower;
                respond(
                    &ctx,
                    build(&replica_manager, &metadata_cache, &layout, reads),
                    from_follower,
                )
            }))
        }
    }
}

/// A response with placeholders, and the file ranges to send in their place, in encoding order.
struct FetchRead {
    response: FetchResponse,
    files: Vec<FileSlice>,
}

fn build(
    replica_manager: &ReplicaManager,
    metadata_cache: &MetadataCache,
    layout: &Layout,
    reads: Vec<FetchPartitionData>,
) -> FetchRead {
    let mut reads: Vec<Option<FetchPartitionData>> = reads.into_iter().map(Some).collect();
    let mut files = Vec::new();
    let version = layout.version;
    let mut responses = Vec::with_capacity(layout.topics.len());
    for topic in &layout.topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for (index, slot) in &topic.partitions {
            let mut data = PartitionData {
                partition_index: *index,
                high_watermark: -1,
                last_stable_offset: -1,
                log_start_offset: -1,
                aborted_transactions: layout.read_committed.then(Vec::new),
                records: Some(Bytes::new()),
                ..PartitionData::default()
            };
            let (read, tp) = match slot {
                Slot::Refused(code) => {
                    data.error_code = code.code();
                    partitions.push(data);
                    continue;
                }
                Slot::Read(i, tp) => (reads.get_mut(*i).and_then(Option::take), tp),
            };
            let Some(read) = read else {
                data.error_code = ErrorCode::UnknownServerError.code();
                partitions.push(data);
                continue;
            };
            // Kafka's `maybeConvertFetchedData`: a consumer's v0-3 fetch of a topic that
            // disables down-conversion gets UNSUPPORTED_VERSION in place of whatever the read
            // gave (it still counted towards `min_bytes`).
            if version <= 3
                && !layout.from_follower
                && !replica_manager.message_downconversion_enable(tp)
            {
                data.error_code = ErrorCode::UnsupportedVersion.code();
                data.aborted_transactions = None;
                partitions.push(data);
                continue;
            }
            data.error_code =
                partition_error(metadata_cache, &tp.topic, tp.partition, read.error_code).code();
            data.high_watermark = read.high_watermark;
            data.last_stable_offset = read.last_stable_offset;
            data.log_start_offset = read.log_start_offset;
            // Only a consumer's v11+ fetch gets one, so the field exists.
            if let Some(replica) = read.preferred_read_replica {
                data.preferred_read_replica = replica;
            }
            // Only asked for at v12+, so only answered where the field exists.
            if let Some(diverging) = read.diverging_epoch {
                data.diverging_epoch = EpochEndOffset {
                    epoch: diverging.leader_epoch,
                    end_offset: diverging.end_offset,
                    ..EpochEndOffset::default()
                };
            }
            // Only read_committed reads carry them, and only v4+ has the field.
            if let (Some(aborted), true) = (read.aborted_transactions, version >= 4) {
                data.aborted_transactions = Some(
                    aborted
                        .into_iter()
                        .map(|t| AbortedTransaction {
                            producer_id: t.producer_id,
                            first_offset: t.first_offset,
                            ..AbortedTransaction::default()
                        })
                        .collect(),
                );
            }
            if let Some(slice) = read.records {
                match records_for(version, slice, &mut files, replica_manager, tp) {
                    Ok(records) => data.records = Some(records),
                    Err(code) => data.error_code = code.code(),
                }
            }
            partitions.push(data);
        }
        responses.push(FetchableTopicResponse {
            topic: if version < 13 {
                topic.name.clone()
            } else {
                StrBytes::default()
            },
            topic_id: if version >= 13 {
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
    }
}

/// The records field for a read: at v4+ a placeholder of the slice's length (the slice goes to
/// `files`); at v0-3 the down-converted bytes.
fn records_for(
    version: i16,
    slice: FileSlice,
    files: &mut Vec<FileSlice>,
    replica_manager: &ReplicaManager,
    tp: &TopicPartition,
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
    let converted = batches_to_message_set(&bytes, magic)
        .map(Bytes::from)
        .map_err(|e| e.code)?;
    let records = count_records(&bytes);
    let stats = replica_manager.topic_stats();
    stats
        .topic(&tp.topic)
        .fetch_message_conversions
        .mark(records);
    stats.all_topics().fetch_message_conversions.mark(records);
    Ok(converted)
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

/// The response on the wire. A consumer over its fetch or request quota is answered with no
/// partitions and the throttle time instead, and its connection is muted (Kafka's
/// `getThrottledResponse`); the bytes it would have had are not counted against it.
fn respond(ctx: &RequestContext, read: FetchRead, from_follower: bool) -> Response {
    let body = ResponseKind::Fetch(read.response);
    let mut files = read.files.into_iter();
    let response = ctx.respond_segments(&body, |placeholder| match files.next() {
        Some(slice) => ResponsePart::File(FileRange {
            file: slice.file,
            position: slice.position,
            len: slice.size,
        }),
        // Only the placeholders are non-empty records at v4+, one per slice; below v4 the
        // records are the down-converted bytes themselves.
        None => ResponsePart::Bytes(placeholder),
    });
    let throttle_ms = match (&response, from_follower) {
        (Response::Send(parts), false) => {
            let size: u64 = parts.iter().map(ResponsePart::len).sum();
            throttle_fetch(ctx, usize::try_from(size).unwrap_or(usize::MAX))
        }
        _ => 0,
    };
    if throttle_ms == 0 {
        ctx.count_errors(&body);
        return response;
    }
    let throttled = ResponseKind::Fetch(FetchResponse {
        throttle_time_ms: throttle_ms,
        ..FetchResponse::default()
    });
    ctx.count_errors(&throttled);
    ctx.respond_segments(&throttled, ResponsePart::Bytes)
}
