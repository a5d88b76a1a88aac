//! The replica fetchers' [`LeaderEndPoint`] over the outbound inter-broker client (Kafka's
//! `RemoteLeaderEndPoint` over `BrokerBlockingSender`), and the factory that resolves a leader's
//! broker id to its inter-broker listener through the metadata cache.
//!
//! A fetch is one Fetch in the end point's fetch session (KIP-227; `replication::
//! fetch_session_handler`, from v7): the first is full, the next ones incremental (only the
//! partitions whose request changed, the others forgotten, and the leader answers only those
//! with news); a session error makes the next one full again, at once. It goes at the version
//! `inter.broker.protocol.version` selects (3.9-IV0: v17, topics by id), with this broker's id and broker epoch as the replica (`ReplicaState` from v15, the
//! `ReplicaId` field before), read_uncommitted, and Kafka's `replica.fetch.*` defaults: wait 500
//! ms for 1 byte, 10 MiB per response, 1 MiB per partition. The fetcher's rounds go through
//! `NetworkClient::fetch_streaming`: each partition is handed to the fetcher as the response is
//! read, its records still in a pipe on a plain connection (the follower splices them into its
//! log), or a `Bytes` slice of the response frame over TLS; never decoded here. Each partition carries the
//! follower's `LastFetchedEpoch` (v12+), and a `DivergingEpoch` in the answer is passed on for
//! the fetcher to truncate. Out-of-range offsets are
//! resolved with ListOffsets as a replica (earliest -2, latest -1).
//!
//! One `NetworkClient` per leader address and fetcher id, with one request in flight (the
//! fetcher waits for each answer), its client id `broker-<id>-fetcher-<fetcher id>` as Kafka
//! names its fetchers' senders.

use std::collections::HashMap;
use std::fs::File;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use uuid::Uuid;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, TopicPartition};
use crate::controller::inter_broker_versions::{
    InterBrokerProtocolVersion, ReplicaFetcherRequestVersions,
};
use crate::network::ClientSecurity;
use crate::network::fetch_response_reader::{
    FetchResponseHandler, FetchedRecords, FetchedTopic, PipedRecords,
};
use crate::network::network_client::{NetworkClient, NetworkClientConfig};
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::fetch_request::{
    FetchPartition as WirePartition, FetchRequest, FetchTopic, ForgottenTopic, ReplicaState,
};
use crate::protocol::messages::fetch_response::PartitionData;
use crate::protocol::messages::list_offsets_request::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic,
};
use crate::protocol::messages::{RequestKind, ResponseKind};
use crate::replication::EpochEndOffset;
use crate::replication::fetch_session_handler::{FetchRequestData, FetchSessionHandler};
use crate::replication::leader_end_point::{
    FetchAnswerHandler, FetchFuture, FetchIntoFuture, FetchPartition, FetchPartitionResult,
    LeaderEndPoint, LeaderEndPointError, LeaderEndPointFactory, OffsetFuture,
};
use crate::storage::records_source::RecordsSource;

use super::broker_epoch_manager::BrokerEpochManager;
use super::metadata_cache::MetadataCache;

/// ListOffsets' timestamps for the log start and the log end.
const EARLIEST_TIMESTAMP: i64 = -2;
const LATEST_TIMESTAMP: i64 = -1;

/// The fetch request's settings (Kafka's `replica.fetch.*`, `replica.socket.timeout.ms` and
/// `request.timeout.ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplicaFetchSettings {
    /// `replica.fetch.wait.max.ms`.
    pub max_wait_ms: i32,
    /// `replica.fetch.min.bytes`.
    pub min_bytes: i32,
    /// `replica.fetch.response.max.bytes`.
    pub max_bytes: i32,
    /// `replica.fetch.max.bytes`, per partition.
    pub partition_max_bytes: i32,
    /// `replica.socket.timeout.ms`: how long connecting to the leader may take (Kafka's
    /// `BrokerBlockingSender` waits this long for the connection to be ready).
    pub socket_timeout: Duration,
    /// `request.timeout.ms`: how long one request may wait for its answer (the
    /// `NetworkClient`'s request timeout in Kafka's `BrokerBlockingSender`, not the socket
    /// timeout: a slow link slows the follower down rather than cutting every fetch off).
    pub request_timeout: Duration,
}

impl Default for ReplicaFetchSettings {
    /// Kafka 3.9's defaults.
    fn default() -> Self {
        ReplicaFetchSettings {
            max_wait_ms: 500,
            min_bytes: 1,
            max_bytes: 10 * 1024 * 1024,
            partition_max_bytes: 1024 * 1024,
            socket_timeout: Duration::from_millis(30_000),
            request_timeout: Duration::from_millis(30_000),
        }
    }
}

/// What every end point of this broker shares.
#[derive(Debug)]
struct Local {
    broker_id: BrokerId,
    epochs: Arc<BrokerEpochManager>,
    metadata_cache: Arc<MetadataCache>,
    versions: ReplicaFetcherRequestVersions,
    settings: ReplicaFetchSettings,
}

/// The factory the replica manager resolves leaders with.
#[derive(Debug)]
pub(crate) struct RemoteLeaderEndPoints {
    local: Arc<Local>,
    /// The listener whose address other brokers are reached at.
    inter_broker_listener: String,
    /// By (leader, address, fetcher id).
    clients: Mutex<HashMap<(BrokerId, String, i32), Arc<NetworkClient>>>,
    /// TLS and SASL for the connections to other brokers (the inter-broker listener's).
    security: ClientSecurity,
}

impl RemoteLeaderEndPoints {
    pub(crate) fn new(
        broker_id: BrokerId,
        inter_broker_listener: impl Into<String>,
        ibp: InterBrokerProtocolVersion,
        settings: ReplicaFetchSettings,
        epochs: Arc<BrokerEpochManager>,
        metadata_cache: Arc<MetadataCache>,
    ) -> Self {
        RemoteLeaderEndPoints {
            local: Arc::new(Local {
                broker_id,
                epochs,
                metadata_cache,
                versions: ReplicaFetcherRequestVersions::for_ibp(ibp),
                settings,
            }),
            inter_broker_listener: inter_broker_listener.into(),
            clients: Mutex::new(HashMap::new()),
            security: ClientSecurity::default(),
        }
    }

    /// The same, securing its connections to other brokers with `security`.
    pub(crate) fn with_client_security(mut self, security: ClientSecurity) -> Self {
        self.security = security;
        self
    }
}

impl LeaderEndPointFactory for RemoteLeaderEndPoints {
    fn end_point(&self, broker: BrokerId, fetcher_id: i32) -> Option<Arc<dyn LeaderEndPoint>> {
        if broker == self.local.broker_id {
            return None;
        }
        let node = self
            .local
            .metadata_cache
            .alive_brokers()
            .into_iter()
            .find(|b| b.id == broker)?;
        let endpoint = node.endpoint(&self.inter_broker_listener)?;
        let address = format!("{}:{}", endpoint.host, endpoint.port);
        let client = Arc::clone(
            lock(&self.clients)
                .entry((broker, address.clone(), fetcher_id))
                .or_insert_with(|| {
                    let config = NetworkClientConfig {
                        client_id: format!("broker-{}-fetcher-{fetcher_id}", self.local.broker_id),
                        request_timeout: self.local.settings.request_timeout,
                        connect_timeout: self.local.settings.socket_timeout,
                        authenticator: self.security.authenticator.clone(),
                        tls: self.security.tls.clone(),
                        ..NetworkClientConfig::default()
                    };
                    Arc::new(NetworkClient::new(address.clone(), config))
                }),
        );
        Some(Arc::new(RemoteLeaderEndPoint {
            broker,
            address,
            client,
            local: Arc::clone(&self.local),
            session: Mutex::new(FetchSessionHandler::new()),
        }))
    }
}

/// One leader, reached over the wire.
#[derive(Debug)]
pub(crate) struct RemoteLeaderEndPoint {
    broker: BrokerId,
    address: String,
    client: Arc<NetworkClient>,
    local: Arc<Local>,
    /// This fetcher's session with the leader; one request at a time uses it.
    session: Mutex<FetchSessionHandler>,
}

impl RemoteLeaderEndPoint {
    fn unreachable(&self, reason: impl ToString) -> LeaderEndPointError {
        LeaderEndPointError::Unreachable {
            broker: self.broker,
            address: self.address.clone(),
            reason: reason.to_string(),
        }
    }

    /// The topic id of `tp`: the follower's own, else the metadata cache's.
    fn topic_id(&self, p: &FetchPartition) -> Option<Uuid> {
        p.topic_id
            .filter(|id| !id.is_nil())
            .or_else(|| self.local.metadata_cache.topic_id(&p.topic_partition.topic))
    }

    /// Kafka's `buildFetch`: the request (through the session), the partitions answered here
    /// without asking (no topic id for a version that needs one), and the session's partitions
    /// (the ones the answer may name).
    fn build_fetch(&self, partitions: &[FetchPartition]) -> BuiltFetch {
        let version = self.local.versions.fetch;
        let settings = &self.local.settings;
        let mut unanswerable = Vec::new();
        let mut fetched = Vec::with_capacity(partitions.len());
        for p in partitions {
            let topic_id = self.topic_id(p);
            if version >= 13 && topic_id.is_none() {
                unanswerable.push((
                    p.topic_partition.clone(),
                    error_result(ErrorCode::UnknownTopicId.code()),
                ));
                continue;
            }
            fetched.push(FetchPartition {
                // Below v13 the wire has no ids, and a session knows partitions by name.
                topic_id: topic_id.filter(|_| version >= 13),
                ..p.clone()
            });
        }
        // Fetch v0-6 have no sessions: every fetch is full and wants none.
        let data = if version >= 7 {
            lock(&self.session).build(&fetched)
        } else {
            FetchRequestData {
                session_id: 0,
                epoch: -1,
                to_send: fetched.clone(),
                to_forget: Vec::new(),
            }
        };
        let mut topics: Vec<FetchTopic> = Vec::new();
        for p in &data.to_send {
            let wire = WirePartition {
                partition: p.topic_partition.partition,
                current_leader_epoch: p.current_leader_epoch,
                fetch_offset: p.fetch_offset,
                // The field exists from v12 (truncation on fetch, IBP 2.7-IV1); below, it must
                // keep its default.
                last_fetched_epoch: match p.last_fetched_epoch {
                    Some(epoch) if version >= 12 => epoch,
                    _ => -1,
                },
                log_start_offset: p.log_start_offset,
                partition_max_bytes: settings.partition_max_bytes,
                ..WirePartition::default()
            };
            let (name, topic_id) = wire_topic(p, version);
            match topics
                .iter_mut()
                .find(|t| t.topic_id == topic_id && t.topic.to_string_lossy() == name)
            {
                Some(t) => t.partitions.push(wire),
                None => topics.push(FetchTopic {
                    topic: StrBytes::from(name),
                    topic_id,
                    partitions: vec![wire],
                    ..FetchTopic::default()
                }),
            }
        }
        let mut forgotten: Vec<ForgottenTopic> = Vec::new();
        for p in &data.to_forget {
            let (name, topic_id) = wire_topic(p, version);
            let index = p.topic_partition.partition;
            match forgotten
                .iter_mut()
                .find(|t| t.topic_id == topic_id && t.topic.to_string_lossy() == name)
            {
                Some(t) => t.partitions.push(index),
                None => forgotten.push(ForgottenTopic {
                    topic: StrBytes::from(name),
                    topic_id,
                    partitions: vec![index],
                    ..ForgottenTopic::default()
                }),
            }
        }
        // KIP-903 moved the replica's id into `ReplicaState` at v15; the field of the other
        // versions must keep its default or the request does not encode.
        let (replica_id, replica_state) = if version >= 15 {
            let state = ReplicaState {
                replica_id: self.local.broker_id,
                replica_epoch: self.local.epochs.broker_epoch(),
                ..ReplicaState::default()
            };
            (-1, state)
        } else {
            (self.local.broker_id, ReplicaState::default())
        };
        let request = FetchRequest {
            replica_id,
            replica_state,
            max_wait_ms: settings.max_wait_ms,
            min_bytes: settings.min_bytes,
            max_bytes: settings.max_bytes,
            isolation_level: 0,
            session_id: data.session_id,
            session_epoch: data.epoch,
            topics,
            forgotten_topics_data: forgotten,
            ..FetchRequest::default()
        };
        BuiltFetch {
            request,
            // An incremental fetch naming nothing still reads the whole session.
            empty: fetched.is_empty() || (data.is_full() && data.to_send.is_empty()),
            unanswerable,
            session: fetched,
        }
    }

    /// Kafka's `fetch` (`processFetchRequest`'s request), each partition handed to `handler`
    /// as the response is read (`NetworkClient::fetch_streaming`): over a plain connection its
    /// records are still in pipes, for the follower to splice into its log. A session error
    /// answers nothing and the next fetch is full (Kafka's `fetch` returns an empty map), but
    /// FETCH_SESSION_TOPIC_ID_ERROR, which is an error as in Kafka.
    async fn send_fetch_into(
        &self,
        partitions: &[FetchPartition],
        mut handler: Box<dyn FetchAnswerHandler>,
    ) -> Result<(), LeaderEndPointError> {
        let version = self.local.versions.fetch;
        let built = self.build_fetch(partitions);
        // Errors without records: nothing to write, so handled here.
        for (tp, answer) in built.unanswerable {
            handler.answer(tp, answer, None);
        }
        if built.empty {
            return Ok(());
        }
        let adapter = AnswerAdapter {
            names: TopicNames::of(&built.session, version),
            broker: self.broker,
            inner: handler,
        };
        let sent = self
            .client
            .fetch_streaming(
                &RequestKind::Fetch(built.request),
                version,
                Box::new(adapter),
            )
            .await;
        let head = match sent {
            Ok((head, _)) => head,
            Err(e) => {
                lock(&self.session).handle_error();
                return Err(self.unreachable(e));
            }
        };
        let in_session =
            version < 7 || lock(&self.session).handle_response(head.error_code, head.session_id);
        let session_error = [
            ErrorCode::FetchSessionIdNotFound.code(),
            ErrorCode::InvalidFetchSessionEpoch.code(),
        ]
        .contains(&head.error_code);
        if !in_session && session_error {
            tracing::info!(
                leader = self.broker,
                error_code = head.error_code,
                "fetch session error; the next fetch is full"
            );
            return Ok(());
        }
        if head.error_code != ErrorCode::None.code() {
            return Err(LeaderEndPointError::Refused {
                broker: self.broker,
                error_code: head.error_code,
            });
        }
        Ok(())
    }

    /// ListOffsets as a replica for one partition at `timestamp`.
    async fn list_offset(
        &self,
        tp: &TopicPartition,
        current_leader_epoch: i32,
        timestamp: i64,
    ) -> Result<i64, LeaderEndPointError> {
        let request = ListOffsetsRequest {
            replica_id: self.local.broker_id,
            isolation_level: 0,
            topics: vec![ListOffsetsTopic {
                name: StrBytes::from(tp.topic.as_str()),
                partitions: vec![ListOffsetsPartition {
                    partition_index: tp.partition,
                    current_leader_epoch,
                    timestamp,
                    ..ListOffsetsPartition::default()
                }],
                ..ListOffsetsTopic::default()
            }],
            ..ListOffsetsRequest::default()
        };
        let response = self
            .client
            .send(
                &RequestKind::ListOffsets(request),
                self.local.versions.list_offsets,
            )
            .await
            .map_err(|e| self.unreachable(e))?;
        let ResponseKind::ListOffsets(response) = response else {
            return Err(self.unreachable("answered ListOffsets with another API's response"));
        };
        let answer = response
            .topics
            .iter()
            .filter(|t| t.name.to_string_lossy() == tp.topic.as_str())
            .flat_map(|t| t.partitions.iter())
            .find(|p| p.partition_index == tp.partition)
            .ok_or_else(|| self.unreachable(format!("ListOffsets has no answer for {tp}")))?;
        if answer.error_code != ErrorCode::None.code() {
            return Err(LeaderEndPointError::Partition {
                broker: self.broker,
                topic_partition: tp.clone(),
                error_code: answer.error_code,
            });
        }
        Ok(answer.offset)
    }
}

/// The request's topics by the key the response names them with: the id from v13, the name
/// before.
struct TopicNames {
    version: i16,
    names: HashMap<(Uuid, String), String>,
}

impl TopicNames {
    /// The names of the session's partitions' topics, by the key the answer names them by.
    fn of(partitions: &[FetchPartition], version: i16) -> TopicNames {
        let names = partitions
            .iter()
            .map(|p| {
                let (name, topic_id) = wire_topic(p, version);
                let key = if version >= 13 {
                    (topic_id, String::new())
                } else {
                    (Uuid::nil(), name.to_string())
                };
                (key, name.to_string())
            })
            .collect();
        TopicNames { version, names }
    }

    /// The name of an answered topic; `None` (logged) for one not asked for.
    fn name(&self, topic: &FetchedTopic, leader: BrokerId) -> Option<&str> {
        let key = if self.version >= 13 {
            (topic.topic_id, String::new())
        } else {
            (Uuid::nil(), topic.name.to_string_lossy().into_owned())
        };
        let name = self.names.get(&key).map(String::as_str);
        if name.is_none() {
            tracing::warn!(leader, topic_id = %topic.topic_id, "the leader answered a topic not asked for");
        }
        name
    }
}

/// A fetch as built: the request, whether there is nothing to send, the partitions answered
/// without asking, and the session's partitions.
struct BuiltFetch {
    request: FetchRequest,
    empty: bool,
    unanswerable: Vec<(TopicPartition, FetchPartitionResult)>,
    session: Vec<FetchPartition>,
}

/// A partition's topic as the wire names it: its name, and its id at v13+ (nil below).
fn wire_topic(p: &FetchPartition, version: i16) -> (&str, Uuid) {
    let id = match p.topic_id {
        Some(id) if version >= 13 => id,
        _ => Uuid::nil(),
    };
    (p.topic_partition.topic.as_str(), id)
}

/// A partition's answer as the fetcher takes it, with `records`.
fn partition_result(p: &PartitionData, records: Bytes) -> FetchPartitionResult {
    FetchPartitionResult {
        error_code: p.error_code,
        high_watermark: p.high_watermark,
        log_start_offset: p.log_start_offset,
        records,
        // Kafka's `FetchResponse.isDivergingEpoch`: an epoch >= 0.
        diverging_epoch: (p.diverging_epoch.epoch >= 0).then_some(EpochEndOffset {
            leader_epoch: p.diverging_epoch.epoch,
            end_offset: p.diverging_epoch.end_offset,
        }),
    }
}

/// Hands each partition the network reads to the fetcher's handler: the topic's name back
/// from its id, piped records as a [`RecordsSource`].
struct AnswerAdapter {
    names: TopicNames,
    broker: BrokerId,
    inner: Box<dyn FetchAnswerHandler>,
}

impl FetchResponseHandler for AnswerAdapter {
    fn partition(
        &mut self,
        topic: &FetchedTopic,
        p: &PartitionData,
        records: &mut FetchedRecords<'_>,
    ) {
        let Some(name) = self.names.name(topic, self.broker) else {
            return;
        };
        let tp = TopicPartition::new(name.to_string(), p.partition_index);
        match records {
            FetchedRecords::None => self
                .inner
                .answer(tp, partition_result(p, Bytes::new()), None),
            FetchedRecords::Memory(bytes) => {
                self.inner
                    .answer(tp, partition_result(p, bytes.clone()), None);
            }
            FetchedRecords::Piped(piped) => {
                let mut source = PipedSource(piped);
                self.inner
                    .answer(tp, partition_result(p, Bytes::new()), Some(&mut source));
            }
        }
    }
}

/// Collects a fetch's answers with their records in memory (`LeaderEndPoint::fetch`). An answer
/// whose piped records cannot be read is left out: its partition is fetched again.
struct Collect(Arc<Mutex<Vec<(TopicPartition, FetchPartitionResult)>>>);

impl FetchAnswerHandler for Collect {
    fn answer(
        &mut self,
        tp: TopicPartition,
        mut answer: FetchPartitionResult,
        records: Option<&mut dyn RecordsSource>,
    ) {
        if let Some(source) = records {
            let mut bytes = Vec::with_capacity(source.len());
            if let Err(err) = source.read_into(&mut bytes) {
                tracing::warn!(topic_partition = %tp, %err, "cannot read a fetched partition's records");
                return;
            }
            answer.records = Bytes::from(bytes);
        }
        lock(&self.0).push((tp, answer));
    }
}

/// Records in the fetch response's pipe, as the log takes them.
struct PipedSource<'p, 'a>(&'p mut PipedRecords<'a>);

impl RecordsSource for PipedSource<'_, '_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn write_to(&mut self, file: &File, position: u64) -> std::io::Result<()> {
        self.0.splice_to(file, position)
    }

    fn read_into(&mut self, buf: &mut Vec<u8>) -> std::io::Result<()> {
        self.0.read_into(buf)
    }
}

fn error_result(error_code: i16) -> FetchPartitionResult {
    FetchPartitionResult {
        error_code,
        high_watermark: -1,
        log_start_offset: -1,
        records: Bytes::new(),
        diverging_epoch: None,
    }
}

impl LeaderEndPoint for RemoteLeaderEndPoint {
    fn broker_id(&self) -> BrokerId {
        self.broker
    }

    fn address(&self) -> String {
        self.address.clone()
    }

    fn fetch_into<'a>(
        &'a self,
        partitions: &'a [FetchPartition],
        handler: Box<dyn FetchAnswerHandler>,
    ) -> FetchIntoFuture<'a> {
        Box::pin(self.send_fetch_into(partitions, handler))
    }

    fn fetch<'a>(&'a self, partitions: &'a [FetchPartition]) -> FetchFuture<'a> {
        Box::pin(async move {
            let answers = Arc::new(Mutex::new(Vec::new()));
            let collect = Collect(Arc::clone(&answers));
            self.send_fetch_into(partitions, Box::new(collect)).await?;
            Ok(std::mem::take(&mut *lock(&answers)))
        })
    }

    fn fetch_earliest_offset<'a>(
        &'a self,
        tp: &'a TopicPartition,
        current_leader_epoch: i32,
    ) -> OffsetFuture<'a> {
        Box::pin(self.list_offset(tp, current_leader_epoch, EARLIEST_TIMESTAMP))
    }

    fn fetch_latest_offset<'a>(
        &'a self,
        tp: &'a TopicPartition,
        current_leader_epoch: i32,
    ) -> OffsetFuture<'a> {
        Box::pin(self.list_offset(tp, current_leader_epoch, LATEST_TIMESTAMP))
    }
}

#[cfg(test)]
mod tests;
