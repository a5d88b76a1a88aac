//! Kafka's `LeaderEndPoint`: the seam between a replica fetcher and the broker that leads its
//! partitions. The fetcher asks it for records from given offsets and, when a fetch offset is
//! out of the leader's range, for the leader's earliest and latest offsets.
//!
//! `server` implements it over the outbound inter-broker client (Fetch and ListOffsets at the
//! versions `inter.broker.protocol.version` selects, each partition's records spliced from the
//! socket into the follower's log where the connection allows); tests implement it over a
//! second in-process replica manager. This module names no transport.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use uuid::Uuid;

use crate::cluster::{BrokerId, TopicPartition};
use crate::storage::records_source::RecordsSource;

use super::partition::EpochEndOffset;

/// One partition of a follower's fetch (Kafka's `FetchRequest.PartitionData` as the fetcher
/// builds it): read from `fetch_offset`, the follower's log end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPartition {
    pub topic_partition: TopicPartition,
    /// The topic id, when the follower's partition knows it (Fetch v13+ names topics by id).
    pub topic_id: Option<Uuid>,
    pub fetch_offset: i64,
    /// The follower's log start offset (Fetch v5+ tells the leader).
    pub log_start_offset: i64,
    /// The leader epoch the follower last heard from the controller; the leader refuses a
    /// stale one (FENCED_LEADER_EPOCH) or a newer one (UNKNOWN_LEADER_EPOCH).
    pub current_leader_epoch: i32,
    /// The latest epoch of the follower's leader-epoch cache (`LastFetchedEpoch`, Fetch v12+;
    /// `None` for a log without epochs): the leader answers a diverging epoch when the
    /// follower's log does not match its own.
    pub last_fetched_epoch: Option<i32>,
}

/// The leader's answer for one partition (Kafka's `FetchResponseData.PartitionData`).
/// `records` are whole batches exactly as the leader's log holds them (empty when there is
/// nothing new, on an error, when the follower diverged, or when the records come separately
/// as a [`RecordsSource`]); on an error the offsets are -1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPartitionResult {
    /// The wire's error code (`ErrorCode::None.code()` when the read succeeded).
    pub error_code: i16,
    pub high_watermark: i64,
    pub log_start_offset: i64,
    pub records: Bytes,
    /// The follower's log diverged from the leader's (`DivergingEpoch`, v12+): the follower
    /// truncates and fetches again, taking nothing else from this answer.
    pub diverging_epoch: Option<EpochEndOffset>,
}

/// Why a request to the leader got no usable answer. The fetcher backs off and retries.
#[derive(Debug, thiserror::Error)]
pub enum LeaderEndPointError {
    /// No answer: the connection failed, timed out or the response was undecodable.
    #[error("no answer from broker {broker} at {address}: {reason}")]
    Unreachable {
        broker: BrokerId,
        address: String,
        reason: String,
    },
    /// The whole request was refused with an error code.
    #[error("broker {broker} refused the request with error code {error_code}")]
    Refused { broker: BrokerId, error_code: i16 },
    /// The leader answered for the partition with an error code.
    #[error("broker {broker} answered {topic_partition} with error code {error_code}")]
    Partition {
        broker: BrokerId,
        topic_partition: TopicPartition,
        error_code: i16,
    },
}

/// A fetch's answers, one per partition the leader answered, keyed by partition.
pub(crate) type FetchFuture<'a> = Pin<
    Box<
        dyn Future<
                Output = Result<Vec<(TopicPartition, FetchPartitionResult)>, LeaderEndPointError>,
            > + Send
            + 'a,
    >,
>;

/// A fetch whose answers went to a [`FetchAnswerHandler`].
pub(crate) type FetchIntoFuture<'a> =
    Pin<Box<dyn Future<Output = Result<(), LeaderEndPointError>> + Send + 'a>>;

/// What a fetcher does with each partition's answer, as the answer is read: on a blocking
/// thread, in the order the leader answered.
pub trait FetchAnswerHandler: Send {
    /// One partition's answer. `records` is set when the records are not in `answer.records`
    /// but still to be read (a pipe the response was spliced into): the handler writes them
    /// into its log or reads them; what it leaves is discarded after the call.
    fn answer(
        &mut self,
        tp: TopicPartition,
        answer: FetchPartitionResult,
        records: Option<&mut dyn RecordsSource>,
    );
}

/// An offset the leader reported.
pub(crate) type OffsetFuture<'a> =
    Pin<Box<dyn Future<Output = Result<i64, LeaderEndPointError>> + Send + 'a>>;

/// The leader of some partitions, as one fetcher reaches it.
pub trait LeaderEndPoint: Send + Sync + fmt::Debug {
    /// The leader's broker id.
    fn broker_id(&self) -> BrokerId;

    /// Where the leader is reached (`host:port`); a fetcher whose leader moved to another
    /// address is restarted on the new one.
    fn address(&self) -> String;

    /// One fetch of `partitions` as a follower; long-polls on the leader up to the
    /// implementation's `replica.fetch.wait.max.ms`. In a fetch session (KIP-227) the leader
    /// answers only the partitions with news: the others are absent from the answer.
    fn fetch<'a>(&'a self, partitions: &'a [FetchPartition]) -> FetchFuture<'a>;

    /// [`fetch`](Self::fetch), each partition's answer handed to `handler` as it is read, on a
    /// blocking thread. This default reads the whole answer first.
    fn fetch_into<'a>(
        &'a self,
        partitions: &'a [FetchPartition],
        mut handler: Box<dyn FetchAnswerHandler>,
    ) -> FetchIntoFuture<'a> {
        Box::pin(async move {
            let answers = self.fetch(partitions).await?;
            tokio::task::spawn_blocking(move || {
                for (tp, answer) in answers {
                    handler.answer(tp, answer, None);
                }
            })
            .await
            .map_err(|err| LeaderEndPointError::Unreachable {
                broker: self.broker_id(),
                address: self.address(),
                reason: format!("applying the answer failed: {err}"),
            })
        })
    }

    /// The leader's log start offset of `tp` (ListOffsets, earliest timestamp).
    fn fetch_earliest_offset<'a>(
        &'a self,
        tp: &'a TopicPartition,
        current_leader_epoch: i32,
    ) -> OffsetFuture<'a>;

    /// The leader's log end offset of `tp` (ListOffsets as a replica, latest timestamp).
    fn fetch_latest_offset<'a>(
        &'a self,
        tp: &'a TopicPartition,
        current_leader_epoch: i32,
    ) -> OffsetFuture<'a>;
}

/// How the replica manager reaches a broker: the server resolves a broker id to its
/// inter-broker listener through the metadata cache.
pub trait LeaderEndPointFactory: Send + Sync + fmt::Debug {
    /// The end point of `broker` for fetcher `fetcher_id` (each fetcher has its own
    /// connection, as each of Kafka's fetcher threads has its own sender); `None` when the
    /// broker is not known to be alive (its partitions are not fetched until the next
    /// LeaderAndIsr).
    fn end_point(&self, broker: BrokerId, fetcher_id: i32) -> Option<Arc<dyn LeaderEndPoint>>;
}
