//! Fetch sessions (KIP-227; Kafka's `FetchSession`, `CachedPartition`, `FetchManager` and the
//! four `FetchContext`s): what a fetch reads and which of its partitions the response carries.
//!
//! A fetch's metadata is (session id, epoch). Epoch 0 (or -1) is a full fetch: it names every
//! partition, removes the session it names if any, and (at epoch 0) asks for a new one, whose
//! id the response carries (0 when the cache has no room). Epoch n > 0 is an incremental fetch
//! of session `id`, whose epoch must be n: it names only the partitions added or changed since
//! the last fetch, and `forgotten_topics_data` the ones to drop; the broker reads all the
//! session's partitions and answers only those with news (records, a changed high watermark or
//! log start offset, an error, a diverging epoch, a preferred read replica). A partition that
//! returned records moves to the end of the session's order, so that under `max_bytes` the
//! others get their turn. Fetch v7 and later have sessions; v13 and later name topics by id,
//! and a session keeps to the one or the other (FETCH_SESSION_TOPIC_ID_ERROR otherwise).
//!
//! Errors, as Kafka answers them: an incremental fetch of an unknown session gets
//! FETCH_SESSION_ID_NOT_FOUND, one with the wrong epoch INVALID_FETCH_SESSION_EPOCH; both with
//! no partitions, and the client goes back to a full fetch.
//!
//! The cache, its eviction and its metrics are in `fetch_session_cache`. Lock order: a cache
//! shard, then a session; a context locks its session alone.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::cluster::sync::lock;
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;

use super::fetch_session_cache::FetchSessionCache;

/// Kafka's `FetchMetadata.nextEpoch`: after a full fetch (0) comes 1; -1 stays final; the
/// epoch wraps from `i32::MAX` to 1.
pub(crate) fn next_epoch(epoch: i32) -> i32 {
    match epoch {
        e if e < 0 => -1,
        i32::MAX => 1,
        e => e + 1,
    }
}

/// A partition's identity in a session: its topic id when it has one (fetch v13+), else its
/// topic name (Kafka's `CachedPartition.equals`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum PartitionKey {
    Id(Uuid, i32),
    Name(String, i32),
}

/// One partition of a fetch (Kafka's `TopicIdPartition` with `FetchRequest.PartitionData`).
/// `topic` is `None` for a topic id this broker does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FetchPartition {
    pub(crate) topic: Option<String>,
    /// Nil below fetch v13.
    pub(crate) topic_id: Uuid,
    pub(crate) partition: i32,
    pub(crate) fetch_offset: i64,
    /// The fetcher's log start offset (followers; -1 from consumers).
    pub(crate) log_start_offset: i64,
    pub(crate) max_bytes: i32,
    /// The fetcher's view of the leader epoch; -1 skips the check.
    pub(crate) current_leader_epoch: i32,
    /// The epoch of the fetcher's last batch (v12+), -1 for none.
    pub(crate) last_fetched_epoch: i32,
}

impl FetchPartition {
    pub(crate) fn key(&self) -> PartitionKey {
        if self.topic_id.is_nil() {
            PartitionKey::Name(self.topic.clone().unwrap_or_default(), self.partition)
        } else {
            PartitionKey::Id(self.topic_id, self.partition)
        }
    }
}

/// What a partition's read answered, as far as a session cares (see
/// [`CachedPartition::maybe_update_response_data`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionNews {
    pub(crate) records_size: u64,
    pub(crate) high_watermark: i64,
    pub(crate) log_start_offset: i64,
    pub(crate) error_code: i16,
    pub(crate) diverging_epoch: bool,
    pub(crate) preferred_read_replica: bool,
}

/// A session's partition (Kafka's `CachedPartition`): the fetcher's last request parameters,
/// and the high watermark and log start offset it was last told (-1 when never, or after an
/// error, so the next answer carries them again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedPartition {
    pub(crate) request: FetchPartition,
    pub(crate) high_watermark: i64,
    pub(crate) local_log_start_offset: i64,
}

impl CachedPartition {
    /// A partition as a full fetch asked for it and its first answer.
    pub(crate) fn new(request: FetchPartition, news: Option<&PartitionNews>) -> Self {
        CachedPartition {
            request,
            high_watermark: news.map_or(-1, |n| n.high_watermark),
            local_log_start_offset: news.map_or(-1, |n| n.log_start_offset),
        }
    }

    /// Whether the answer has news for the fetcher, and (with `update`) remembers what it was
    /// told (Kafka's `maybeUpdateResponseData`). The last stable offset is not compared, as in
    /// Kafka: it moves only with a transaction marker, which moves the high watermark too.
    pub(crate) fn maybe_update_response_data(
        &mut self,
        news: &PartitionNews,
        update: bool,
    ) -> bool {
        let mut must_respond = news.records_size > 0;
        if self.high_watermark != news.high_watermark {
            must_respond = true;
            if update {
                self.high_watermark = news.high_watermark;
            }
        }
        if self.local_log_start_offset != news.log_start_offset {
            must_respond = true;
            if update {
                self.local_log_start_offset = news.log_start_offset;
            }
        }
        if news.error_code != ErrorCode::None.code() {
            if update {
                self.high_watermark = -1;
            }
            must_respond = true;
        }
        must_respond || news.preferred_read_replica || news.diverging_epoch
    }
}

/// A session's partitions in their order (Kafka's `ImplicitLinkedHashCollection`): found by key,
/// appended at the end, and moved to the end in O(log n). `seq` maps each key to its place in
/// `order`, which holds the partitions by ascending place.
#[derive(Debug, Clone, Default)]
pub(crate) struct CachedPartitions {
    seq: HashMap<PartitionKey, u64>,
    order: BTreeMap<u64, CachedPartition>,
    next: u64,
}

impl CachedPartitions {
    pub(crate) fn len(&self) -> usize {
        self.seq.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    /// Adds a partition at the end, or replaces it where it is.
    pub(crate) fn insert(&mut self, key: PartitionKey, partition: CachedPartition) {
        let seq = *self.seq.entry(key).or_insert_with(|| {
            self.next += 1;
            self.next
        });
        self.order.insert(seq, partition);
    }

    pub(crate) fn get_mut(&mut self, key: &PartitionKey) -> Option<&mut CachedPartition> {
        self.order.get_mut(self.seq.get(key)?)
    }

    pub(crate) fn remove(&mut self, key: &PartitionKey) -> bool {
        match self.seq.remove(key) {
            Some(seq) => self.order.remove(&seq).is_some(),
            None => false,
        }
    }

    pub(crate) fn move_to_end(&mut self, key: &PartitionKey) {
        if let Some(seq) = self.seq.get_mut(key)
            && let Some(partition) = self.order.remove(seq)
        {
            self.next += 1;
            *seq = self.next;
            self.order.insert(self.next, partition);
        }
    }

    /// The partitions in order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut CachedPartition> {
        self.order.values_mut()
    }
}

/// An incremental fetch session (Kafka's `FetchSession`): its id, the epoch its next fetch must
/// carry, whether it names topics by id, and its partitions.
#[derive(Debug)]
pub(crate) struct FetchSession {
    pub(crate) id: i32,
    pub(crate) epoch: i32,
    pub(crate) uses_topic_ids: bool,
    pub(crate) partitions: CachedPartitions,
}

impl FetchSession {
    /// A new session: its first incremental fetch carries epoch 1.
    pub(crate) fn new(id: i32, uses_topic_ids: bool, partitions: CachedPartitions) -> Self {
        FetchSession {
            id,
            epoch: next_epoch(0),
            uses_topic_ids,
            partitions,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.partitions.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }

    /// Adds or updates the fetch's partitions and drops the forgotten ones (Kafka's `update`).
    fn update(&mut self, fetch_data: Vec<FetchPartition>, to_forget: &[PartitionKey]) {
        for request in fetch_data {
            let key = request.key();
            match self.partitions.get_mut(&key) {
                Some(cached) => {
                    // Kafka's `updateRequestParams`: the topic name stays as resolved.
                    let topic = cached.request.topic.take();
                    cached.request = FetchPartition {
                        topic: request.topic.or(topic),
                        ..request
                    };
                }
                None => self
                    .partitions
                    .insert(key, CachedPartition::new(request, None)),
            }
        }
        for key in to_forget {
            self.partitions.remove(key);
        }
    }
}

/// How a fetch is answered (Kafka's `FetchContext` implementations).
#[derive(Debug)]
pub(crate) enum FetchContext {
    /// The session named is unknown or its epoch is wrong: no partitions, this error.
    SessionError(ErrorCode),
    /// A full fetch that wants no session (epoch -1, or fetch v0-6).
    Sessionless(Vec<FetchPartition>),
    /// A full fetch that asks for a session, created when the response is generated. Its
    /// `fetch_data` is taken by [`FetchContext::partitions`].
    Full {
        fetch_data: Vec<FetchPartition>,
        uses_topic_ids: bool,
        /// A follower's: its session is privileged in eviction.
        privileged: bool,
    },
    /// An incremental fetch of this session, whose fetch carried `request_epoch`.
    Incremental {
        session: Arc<Mutex<FetchSession>>,
        request_epoch: i32,
    },
}

/// What a context answers: the top-level error, the session id, and for each partition read
/// whether the response carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Generated {
    pub(crate) error_code: ErrorCode,
    pub(crate) session_id: i32,
    pub(crate) respond: Vec<bool>,
}

impl FetchContext {
    /// The partitions to read, in the response's order: the request's (taken: asked once per
    /// fetch), or for an incremental fetch the session's (topic names resolved from their ids
    /// now, by `topic_name`).
    pub(crate) fn partitions(
        &mut self,
        topic_name: impl Fn(Uuid) -> Option<String>,
    ) -> Vec<FetchPartition> {
        match self {
            FetchContext::SessionError(_) => Vec::new(),
            FetchContext::Sessionless(fetch_data) | FetchContext::Full { fetch_data, .. } => {
                std::mem::take(fetch_data)
            }
            FetchContext::Incremental { session, .. } => {
                let mut session = lock(session);
                let uses_topic_ids = session.uses_topic_ids;
                session
                    .partitions
                    .iter_mut()
                    .map(|cached| {
                        // Resolved on every fetch, not only while unknown as in Kafka: kcli's
                        // reads go by name, so a topic deleted and created again under the
                        // same name must not be read under the old id (UNKNOWN_TOPIC_ID).
                        if uses_topic_ids {
                            cached.request.topic = topic_name(cached.request.topic_id);
                        }
                        cached.request.clone()
                    })
                    .collect()
            }
        }
    }

    /// Which of the reads (`news[i]` answers `partitions[i]`) the response carries. With
    /// `update`, the session remembers what it answered and a full fetch's session is created
    /// (Kafka's `updateAndGenerateResponseData`); without, nothing changes (its
    /// `getResponseSize`, for the quota check before the response is committed).
    pub(crate) fn generate(
        &self,
        cache: &FetchSessionCache,
        now_ms: i64,
        partitions: &[FetchPartition],
        news: &[PartitionNews],
        update: bool,
    ) -> Generated {
        let all = || vec![true; partitions.len()];
        match self {
            FetchContext::SessionError(error_code) => Generated {
                error_code: *error_code,
                session_id: 0,
                respond: vec![false; partitions.len()],
            },
            FetchContext::Sessionless(_) => Generated {
                error_code: ErrorCode::None,
                session_id: 0,
                respond: all(),
            },
            FetchContext::Full {
                uses_topic_ids,
                privileged,
                ..
            } => {
                let session_id = if update {
                    cache.next_shard().maybe_create_session(
                        now_ms,
                        *privileged,
                        partitions.len(),
                        *uses_topic_ids,
                        || {
                            let mut cached = CachedPartitions::default();
                            for (p, n) in partitions.iter().zip(news) {
                                cached.insert(p.key(), CachedPartition::new(p.clone(), Some(n)));
                            }
                            cached
                        },
                    )
                } else {
                    0
                };
                Generated {
                    error_code: ErrorCode::None,
                    session_id,
                    respond: all(),
                }
            }
            FetchContext::Incremental {
                session,
                request_epoch,
            } => {
                let mut session = lock(session);
                if session.epoch != next_epoch(*request_epoch) {
                    tracing::info!(
                        session = session.id,
                        expected = next_epoch(*request_epoch),
                        epoch = session.epoch,
                        "possible duplicate incremental fetch"
                    );
                    return Generated {
                        error_code: ErrorCode::InvalidFetchSessionEpoch,
                        session_id: session.id,
                        respond: vec![false; partitions.len()],
                    };
                }
                let respond = partitions
                    .iter()
                    .zip(news)
                    .map(|(p, n)| {
                        let key = p.key();
                        let Some(cached) = session.partitions.get_mut(&key) else {
                            return true;
                        };
                        let must = cached.maybe_update_response_data(n, update);
                        if must && update && n.records_size > 0 {
                            session.partitions.move_to_end(&key);
                        }
                        must
                    })
                    .collect();
                Generated {
                    error_code: ErrorCode::None,
                    session_id: session.id,
                    respond,
                }
            }
        }
    }

    /// The top-level error and session id of a throttled response, which carries no
    /// partitions (Kafka's `getThrottledResponse`): no session is created for a full fetch.
    pub(crate) fn throttled(&self) -> (ErrorCode, i32) {
        match self {
            FetchContext::Incremental {
                session,
                request_epoch,
            } => {
                let session = lock(session);
                if session.epoch != next_epoch(*request_epoch) {
                    (ErrorCode::InvalidFetchSessionEpoch, session.id)
                } else {
                    (ErrorCode::None, session.id)
                }
            }
            _ => (ErrorCode::None, 0),
        }
    }
}

/// Kafka's `FetchManager`: makes each fetch's context from its metadata and the cache.
#[derive(Debug)]
pub(crate) struct FetchManager {
    pub(crate) cache: Arc<FetchSessionCache>,
}

impl FetchManager {
    pub(crate) fn new(cache: Arc<FetchSessionCache>) -> Self {
        FetchManager { cache }
    }

    /// A manager over a cache of `max.incremental.fetch.session.cache.slots` sessions.
    pub(crate) fn with_slots(slots: i32) -> Self {
        let slots = usize::try_from(slots).unwrap_or(0);
        Self::new(Arc::new(FetchSessionCache::new(slots)))
    }

    /// Kafka's `newContext`; see the module doc.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_context(
        &self,
        version: i16,
        session_id: i32,
        epoch: i32,
        is_follower: bool,
        fetch_data: Vec<FetchPartition>,
        to_forget: &[PartitionKey],
        now_ms: i64,
    ) -> FetchContext {
        if epoch == 0 || epoch == -1 {
            if session_id != 0
                && let Some(shard) = self.cache.shard_of(session_id)
            {
                shard.remove(session_id);
            }
            return if epoch == -1 {
                FetchContext::Sessionless(fetch_data)
            } else {
                FetchContext::Full {
                    fetch_data,
                    uses_topic_ids: version >= 13,
                    privileged: is_follower,
                }
            };
        }
        let found = self
            .cache
            .shard_of(session_id)
            .and_then(|shard| shard.get(session_id).map(|s| (shard, s)));
        let Some((shard, session)) = found else {
            return FetchContext::SessionError(ErrorCode::FetchSessionIdNotFound);
        };
        let empty = {
            let mut s = lock(&session);
            if s.epoch != epoch {
                return FetchContext::SessionError(ErrorCode::InvalidFetchSessionEpoch);
            }
            if s.uses_topic_ids != (version >= 13) {
                return FetchContext::SessionError(ErrorCode::FetchSessionTopicIdError);
            }
            s.update(fetch_data.clone(), to_forget);
            if !s.is_empty() {
                s.epoch = next_epoch(s.epoch);
            }
            s.is_empty()
        };
        if empty {
            shard.remove(session_id);
            return FetchContext::Sessionless(fetch_data);
        }
        shard.touch(session_id, now_ms);
        FetchContext::Incremental {
            session,
            request_epoch: epoch,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
