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
//! Fetch sessions (KIP-227) are `server::fetch_session`'s: its context says which partitions
//! to read (an incremental fetch's are its session's) and which of the reads the response
//! carries (only those with news), and gives the session id and top-level error. The records
//! of those left out are never sent: their file ranges are dropped with them.
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
use crate::protocol::codec::{Message, StrBytes, Uuid};
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

use super::super::fetch_session::{
    FetchContext, FetchManager, FetchPartition, PartitionKey, PartitionNews,
};
use super::super::kafka_apis::KafkaApis;
use super::super::metadata_cache::MetadataCache;
use super::super::quota::request_quotas::{fetch_max_bytes_for_quota, now_ms, throttle_fetch};
use super::super::request_context::RequestContext;
use super::partition_error;

/// One partition to answer: refused by the handler (an unknown topic id), or read by the
/// replica manager at this index of its partitions.
enum Slot {
    Refused(ErrorCode),
    Read(usize, TopicPartition),
}

/// What the response needs besides the reads: the context, and each partition's request and
/// slot (`slots[i]` is `partitions[i]`'s), in the response's order.
struct Layout {
    version: i16,
    /// A replica's fetch (`replica_id >= 0`): never refused down-conversion, as in Kafka.
    from_follower: bool,
    read_committed: bool,
    context: FetchContext,
    partitions: Vec<FetchPartition>,
    slots: Vec<Slot>,
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
    let from_follower = replica_id >= 0;
    let (fetch_data, to_forget) = fetch_data(&apis.metadata_cache, version, &request);
    // Fetch v0-6 have no session fields: a full fetch that wants no session.
    let (session_id, epoch) = if version >= 7 {
        (request.session_id, request.session_epoch)
    } else {
        (0, -1)
    };
    let mut context = apis.fetch_manager.new_context(
        version,
        session_id,
        epoch,
        from_follower,
        fetch_data,
        &to_forget,
        now_ms(),
    );
    let requested = context.partitions(|id| apis.metadata_cache.topic_name(id));
    let follower_allowed = from_follower
        && apis
            .auth
            .authorize_cluster(ctx, AclOperation::ClusterAction);
    let mut partitions = Vec::new();
    let mut layout = Layout {
        version,
        from_follower,
        read_committed: request.isolation_level == 1,
        context,
        slots: Vec::with_capacity(requested.len()),
        partitions: Vec::new(),
    };
    // Partitions of a topic come together: authorize each run of them once.
    let mut last_authorized: Option<(String, bool)> = None;
    for p in &requested {
        let slot = match &p.topic {
            None => Slot::Refused(ErrorCode::UnknownTopicId),
            Some(name) => {
                let allowed = match &last_authorized {
                    Some((n, allowed)) if n == name => *allowed,
                    _ => {
                        let allowed = if from_follower {
                            follower_allowed
                        } else {
                            apis.auth
                                .authorize(ctx, AclOperation::Read, ResourceType::Topic, name)
                        };
                        last_authorized = Some((name.clone(), allowed));
                        allowed
                    }
                };
                if allowed {
                    let tp = TopicPartition::new(name.clone(), p.partition);
                    partitions.push(FetchPartitionInfo {
                        topic_partition: tp.clone(),
                        fetch_offset: p.fetch_offset,
                        current_leader_epoch: p.current_leader_epoch,
                        // Kafka's `optionalEpoch`: -1 (and below v12, always -1) is none.
                        last_fetched_epoch: (p.last_fetched_epoch >= 0)
                            .then_some(p.last_fetched_epoch),
                        log_start_offset: p.log_start_offset,
                        partition_max_bytes: p.max_bytes,
                    });
                    Slot::Read(partitions.len() - 1, tp)
                } else {
                    Slot::Refused(ErrorCode::TopicAuthorizationFailed)
                }
            }
        };
        layout.slots.push(slot);
    }
    layout.partitions = requested;
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
            &apis.fetch_manager,
            &layout,
            build(&apis.replica_manager, &apis.metadata_cache, &layout, reads),
        ),
        FetchResult::Delayed(delayed) => {
            let ctx = ctx.deferred();
            let replica_manager = std::sync::Arc::clone(&apis.replica_manager);
            let metadata_cache = std::sync::Arc::clone(&apis.metadata_cache);
            let fetch_manager = std::sync::Arc::clone(&apis.fetch_manager);
            Response::Deferred(Box::pin(async move {
                let reads = delayed.complete().await;
                let answers = build(&replica_manager, &metadata_cache, &layout, reads);
                respond(&ctx, &fetch_manager, &layout, answers)
            }))
        }
    }
}

/// The request's partitions (topic names resolved from their ids at v13+; `None` for an
/// unknown id) and the forgotten ones (Kafka's `fetchData` and `forgottenTopics`).
fn fetch_data(
    metadata_cache: &MetadataCache,
    version: i16,
    request: &FetchRequest,
) -> (Vec<FetchPartition>, Vec<PartitionKey>) {
    let by_id = version >= 13;
    let mut fetch_data = Vec::new();
    for t in &request.topics {
        let (topic, topic_id) = if by_id {
            (metadata_cache.topic_name(t.topic_id), t.topic_id)
        } else {
            (Some(t.topic.to_string_lossy().into_owned()), Uuid::nil())
        };
        fetch_data.extend(t.partitions.iter().map(|p| FetchPartition {
            topic: topic.clone(),
            topic_id,
            partition: p.partition,
            fetch_offset: p.fetch_offset,
            log_start_offset: p.log_start_offset,
            max_bytes: p.partition_max_bytes,
            current_leader_epoch: p.current_leader_epoch,
            last_fetched_epoch: p.last_fetched_epoch,
        }));
    }
    let to_forget = request
        .forgotten_topics_data
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |&p| {
                if by_id {
                    PartitionKey::Id(t.topic_id, p)
                } else {
                    PartitionKey::Name(t.topic.to_string_lossy().into_owned(), p)
                }
            })
        })
        .collect();
    (fetch_data, to_forget)
}

/// Each partition's answer, in the layout's order: its data (records as a placeholder at v4+)
/// and the file range the placeholder stands for.
type Answers = Vec<(PartitionData, Option<FileSlice>)>;

fn build(
    replica_manager: &ReplicaManager,
    metadata_cache: &MetadataCache,
    layout: &Layout,
    reads: Vec<FetchPartitionData>,
) -> Answers {
    let mut reads: Vec<Option<FetchPartitionData>> = reads.into_iter().map(Some).collect();
    let version = layout.version;
    let mut answers = Vec::with_capacity(layout.partitions.len());
    for (request, slot) in layout.partitions.iter().zip(&layout.slots) {
        let mut data = PartitionData {
            partition_index: request.partition,
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
                answers.push((data, None));
                continue;
            }
            Slot::Read(i, tp) => (reads.get_mut(*i).and_then(Option::take), tp),
        };
        let Some(read) = read else {
            data.error_code = ErrorCode::UnknownServerError.code();
            answers.push((data, None));
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
            answers.push((data, None));
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
        let mut file = None;
        if let Some(slice) = read.records {
            match records_for(version, slice, replica_manager, tp) {
                Ok((records, slice)) => {
                    data.records = Some(records);
                    file = slice;
                }
                Err(code) => data.error_code = code.code(),
            }
        }
        answers.push((data, file));
    }
    answers
}

/// What a session compares of an answer (Kafka's `FetchResponse.recordsSize`,
/// `isDivergingEpoch` and `isPreferredReplica`).
fn news(data: &PartitionData) -> PartitionNews {
    PartitionNews {
        records_size: data.records.as_ref().map_or(0, |r| r.len() as u64),
        high_watermark: data.high_watermark,
        log_start_offset: data.log_start_offset,
        error_code: data.error_code,
        diverging_epoch: data.diverging_epoch.epoch >= 0,
        preferred_read_replica: data.preferred_read_replica >= 0,
    }
}

/// A response with placeholders, and the file ranges to send in their place, in encoding order.
struct FetchRead {
    response: FetchResponse,
    files: Vec<FileSlice>,
}

/// The response of the answers the context keeps (`respond`), a topic's consecutive partitions
/// under one topic entry (Kafka's `FetchResponse.of`).
fn assemble(
    version: i16,
    layout: &Layout,
    answers: impl IntoIterator<Item = (PartitionData, Option<FileSlice>)>,
    respond: &[bool],
) -> FetchRead {
    let mut responses: Vec<FetchableTopicResponse> = Vec::new();
    let mut files = Vec::new();
    let mut previous: Option<&FetchPartition> = None;
    for ((request, (data, file)), keep) in layout.partitions.iter().zip(answers).zip(respond) {
        if !keep {
            continue;
        }
        let same_topic = previous.is_some_and(|p| {
            if version >= 13 {
                p.topic_id == request.topic_id
            } else {
                p.topic == request.topic
            }
        });
        if !same_topic || responses.is_empty() {
            responses.push(FetchableTopicResponse {
                topic: if version < 13 {
                    StrBytes::from(request.topic.clone().unwrap_or_default())
                } else {
                    StrBytes::default()
                },
                topic_id: if version >= 13 {
                    request.topic_id
                } else {
                    Uuid::nil()
                },
                ..FetchableTopicResponse::default()
            });
        }
        previous = Some(request);
        if let Some(topic) = responses.last_mut() {
            topic.partitions.push(data);
        }
        if let Some(file) = file {
            files.push(file);
        }
    }
    FetchRead {
        response: FetchResponse {
            responses,
            ..FetchResponse::default()
        },
        files,
    }
}

/// The records field for a read: at v4+ a placeholder of the slice's length, and the slice; at
/// v0-3 the down-converted bytes.
fn records_for(
    version: i16,
    slice: FileSlice,
    replica_manager: &ReplicaManager,
    tp: &TopicPartition,
) -> Result<(Bytes, Option<FileSlice>), ErrorCode> {
    if version >= 4 {
        let placeholder = placeholder(usize::try_from(slice.size).unwrap_or(0));
        return Ok((placeholder, Some(slice)));
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
    Ok((converted, None))
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

/// The response on the wire: the context's choice of the answers, with its session id and
/// error. A consumer over its fetch or request quota is answered with no partitions and the
/// throttle time instead, and its connection is muted (Kafka's `getThrottledResponse`); the
/// bytes it would have had are not counted against it, and its session does not take them as
/// sent (the quota is checked on a dry run before the session is updated).
fn respond(
    ctx: &RequestContext,
    fetch_manager: &FetchManager,
    layout: &Layout,
    answers: Answers,
) -> Response {
    let version = layout.version;
    let requested = &layout.partitions;
    let news: Vec<PartitionNews> = answers.iter().map(|(data, _)| news(data)).collect();
    let now = now_ms();
    let context = &layout.context;
    let cache = &fetch_manager.cache;
    // A follower is never throttled: its response is assembled once, from the session's update.
    let (generated, mut read) = if layout.from_follower {
        let generated = context.generate(cache, now, requested, &news, true);
        let read = assemble(version, layout, answers, &generated.respond);
        (generated, read)
    } else {
        // A consumer's quota is charged for the response it would get, measured on a dry run
        // that leaves the session as it was, so a throttled response loses no news.
        let dry = context.generate(cache, now, requested, &news, false);
        let read = assemble(version, layout, answers.iter().cloned(), &dry.respond);
        // The frame: size, correlation id and (flexible versions) the header's tagged fields.
        let size = read.response.compute_size(version).unwrap_or(0) + 9;
        let throttle_ms = throttle_fetch(ctx, size);
        if throttle_ms > 0 {
            let (error_code, session_id) = context.throttled();
            let throttled = ResponseKind::Fetch(FetchResponse {
                throttle_time_ms: throttle_ms,
                error_code: error_code.code(),
                session_id,
                ..FetchResponse::default()
            });
            ctx.count_errors(&throttled);
            return ctx.respond_segments(&throttled, ResponsePart::Bytes);
        }
        let generated = context.generate(cache, now, requested, &news, true);
        let read = if generated.respond == dry.respond {
            read
        } else {
            assemble(version, layout, answers, &generated.respond)
        };
        (generated, read)
    };
    read.response.error_code = generated.error_code.code();
    read.response.session_id = generated.session_id;
    let body = ResponseKind::Fetch(read.response);
    let mut files = read.files.into_iter();
    let response = ctx.respond_segments(&body, |placeholder| match files.next() {
        Some(FileSlice {
            file: Some(file),
            position,
            size,
        }) => ResponsePart::File(FileRange {
            file,
            position,
            len: size,
        }),
        // An empty slice: its placeholder is empty too.
        Some(FileSlice { file: None, .. }) => ResponsePart::Bytes(placeholder),
        // Only the placeholders are non-empty records at v4+, one per slice; below v4 the
        // records are the down-converted bytes themselves.
        None => ResponsePart::Bytes(placeholder),
    });
    ctx.count_errors(&body);
    response
}
