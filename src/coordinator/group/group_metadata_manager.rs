//! Kafka's `GroupMetadataManager`: the groups this broker coordinates, which `__consumer_offsets`
//! partitions are loaded, appending offset commits, group metadata and tombstones to those
//! partitions, and loading them back from the log.
//!
//! Durability: an append goes through the partition leader with acks=all semantics; a commit is
//! answered only once the high watermark passed it (within `offsets.commit.timeout.ms`), so an
//! acknowledged commit is in the log of every in-sync replica. With the single-node broker (RF 1)
//! the high watermark follows the append at once.
//!
//! Leadership of `__consumer_offsets` (Kafka's `onElection`/`onResignation`): a partition this
//! broker comes to lead is loaded ([`GroupMetadataManager::begin_loading`], then
//! [`GroupMetadataManager::load`]); one it stops leading or hosting is unloaded
//! ([`GroupMetadataManager::remove_groups_for_partition`]): its groups leave the cache and the
//! coordinator answers their parked requests NOT_COORDINATOR. Both carry the partition's leader
//! epoch (Kafka's coordinator epoch, `epochForPartitionId`): an election or resignation older
//! than the newest one seen changes nothing. A load that a resignation or a newer load
//! overtook installs nothing.
//!
//! Lock order: the partitions' states, then one group, then the groups map (removing a dead
//! group); nothing locks a group while holding the map, which is only held to look up, insert or
//! remove, and nothing takes the partitions' states while holding a group or the map. No lock is
//! held across an `.await`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::group_metadata_value::GroupMetadataValue;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;
use crate::replication::{
    AppendEntry, AppendParams, DelayedProduce, Partition, PartitionResponse, ProduceResult,
    ReplicaManager, VerificationGuard,
};

use super::super::partition_loads::{
    CoordinatorPartitions, LoadState, LoadedRecord, NoLoad, read_partition,
};
use super::group_metadata::{GroupMetadata, GroupState, PendingTxnOffset};
use super::member_metadata::MemberMetadata;
use super::offsets_records::{self as records, OffsetAndMetadata, OffsetsKey};
use crate::cluster::GROUP_METADATA_TOPIC_NAME;

/// The `offsets.*` settings the manager uses.
#[derive(Debug, Clone)]
pub struct OffsetsConfig {
    pub num_partitions: i32,
    pub commit_timeout_ms: i64,
    pub metadata_max_bytes: usize,
    pub compression: CompressionType,
    pub retention_ms: i64,
    pub retention_check_interval_ms: i64,
    pub load_buffer_size: usize,
}

/// One group, shared by the handlers and the timers.
pub(crate) type SharedGroup = Arc<Mutex<GroupMetadata>>;

/// The manager.
#[derive(Debug)]
pub struct GroupMetadataManager {
    pub config: OffsetsConfig,
    replica_manager: Arc<ReplicaManager>,
    groups: Mutex<HashMap<String, SharedGroup>>,
    partitions: Mutex<CoordinatorPartitions>,
    /// The groups each producer's open transaction wrote offsets of (Kafka's
    /// `openGroupsForProducer`).
    open_groups_for_producer: Mutex<HashMap<i64, HashSet<String>>>,
}

impl GroupMetadataManager {
    pub fn new(config: OffsetsConfig, replica_manager: Arc<ReplicaManager>) -> Self {
        GroupMetadataManager {
            config,
            replica_manager,
            groups: Mutex::new(HashMap::new()),
            partitions: Mutex::new(CoordinatorPartitions::default()),
            open_groups_for_producer: Mutex::new(HashMap::new()),
        }
    }

    pub fn partition_for(&self, group_id: &str) -> i32 {
        records::partition_for(group_id, self.config.num_partitions)
    }

    fn offsets_partition(&self, index: i32) -> Option<Arc<Partition>> {
        self.replica_manager
            .get_partition(&TopicPartition::new(GROUP_METADATA_TOPIC_NAME, index))
    }

    pub fn is_loading(&self, group_id: &str) -> bool {
        lock(&self.partitions).state(self.partition_for(group_id)) == Some(LoadState::Loading)
    }

    pub fn any_loading(&self) -> bool {
        lock(&self.partitions).any_loading()
    }

    /// This broker leads the group's offsets partition and has loaded it.
    pub fn is_coordinator_for(&self, group_id: &str) -> bool {
        let index = self.partition_for(group_id);
        lock(&self.partitions).state(index) == Some(LoadState::Loaded)
            && self.offsets_partition(index).is_some_and(|p| p.is_leader())
    }

    /// Whether the offsets partition `index` is loaded (owned) here.
    pub fn is_partition_loaded(&self, index: i32) -> bool {
        lock(&self.partitions).state(index) == Some(LoadState::Loaded)
    }

    /// Kafka's `onElection` up to the scheduled load (`maybeUpdateCoordinatorEpoch`, then
    /// `addLoadingPartition`): marks `index` loading at leader epoch `epoch` unless it is loaded
    /// already (an owned partition is not loaded twice) or the epoch is stale. The id to pass
    /// to [`GroupMetadataManager::load`], when the caller should load it.
    pub fn begin_loading(&self, index: i32, epoch: Option<i32>) -> Option<u64> {
        match lock(&self.partitions).begin_loading(index, epoch) {
            Ok(id) => Some(id),
            Err(NoLoad::Stale) => {
                tracing::info!(
                    partition = index,
                    ?epoch,
                    "not loading __consumer_offsets: the election is stale"
                );
                None
            }
            Err(NoLoad::Loaded) => None,
        }
    }

    /// Kafka's `removeGroupsForPartition` (`onResignation`) up to the callback: the partition
    /// is no longer loading or owned here and its groups leave the cache; they are returned for
    /// the coordinator to unload (parked answers NOT_COORDINATOR). `None` when `epoch` is older
    /// than the partition's newest election (that election stands).
    pub fn remove_groups_for_partition(
        &self,
        index: i32,
        epoch: Option<i32>,
    ) -> Option<Vec<SharedGroup>> {
        let mut partitions = lock(&self.partitions);
        if !partitions.resign(index, epoch) {
            tracing::info!(
                partition = index,
                ?epoch,
                "not unloading __consumer_offsets: the resignation is stale"
            );
            return None;
        }
        // Under the partitions' lock, so a load finishing now either installed before this or
        // finds its partition gone (Kafka's `partitionLock`).
        let mut groups = lock(&self.groups);
        let names: Vec<String> = groups
            .keys()
            .filter(|g| self.partition_for(g) == index)
            .cloned()
            .collect();
        let removed: Vec<SharedGroup> = names.iter().filter_map(|g| groups.remove(g)).collect();
        drop(groups);
        drop(partitions);
        if !removed.is_empty() {
            tracing::info!(
                partition = index,
                groups = removed.len(),
                "unloaded __consumer_offsets partition"
            );
        }
        Some(removed)
    }

    pub fn get_group(&self, group_id: &str) -> Option<SharedGroup> {
        lock(&self.groups).get(group_id).cloned()
    }

    /// The broker's clock, as the replica manager keeps it.
    pub fn now_ms(&self) -> i64 {
        self.replica_manager.time().milliseconds()
    }

    pub fn get_or_create_group(&self, group_id: &str) -> SharedGroup {
        Arc::clone(
            lock(&self.groups)
                .entry(group_id.to_string())
                .or_insert_with(|| {
                    Arc::new(Mutex::new(GroupMetadata::new(
                        group_id.to_string(),
                        GroupState::Empty,
                        self.now_ms(),
                    )))
                }),
        )
    }

    /// Removes `group_id` if it is still `group` (a new group of that id may have replaced it).
    pub fn remove_group(&self, group_id: &str, group: &SharedGroup) {
        let mut groups = lock(&self.groups);
        if groups.get(group_id).is_some_and(|g| Arc::ptr_eq(g, group)) {
            groups.remove(group_id);
        }
    }

    pub fn all_groups(&self) -> Vec<SharedGroup> {
        lock(&self.groups).values().cloned().collect()
    }

    /// Appends `records` to the group's offsets partition through the replica manager, as a
    /// coordinator at acks=-1 waiting up to `offsets.commit.timeout.ms` (Kafka's
    /// `appendForGroup`): the answer now, or the wait for the ISR. Errors are the partition's.
    pub fn append(&self, group_id: &str, records: Vec<SimpleRecord>) -> ProduceResult {
        self.append_batch(group_id, records, None, None)
    }

    /// Appends offset records of a producer's transaction (TxnOffsetCommit): a transactional
    /// batch with its producer id and epoch and base sequence 0, as Kafka writes it.
    pub fn append_transactional(
        &self,
        group_id: &str,
        records: Vec<SimpleRecord>,
        producer_id: i64,
        producer_epoch: i16,
        verification_guard: Option<VerificationGuard>,
    ) -> ProduceResult {
        self.append_batch(
            group_id,
            records,
            Some((producer_id, producer_epoch)),
            verification_guard,
        )
    }

    /// Where the group's offsets partition ends now: at or below the offset of the next batch
    /// appended to it.
    pub fn log_end_offset(&self, group_id: &str) -> i64 {
        self.offsets_partition(self.partition_for(group_id))
            .map_or(0, |p| p.offsets().log_end_offset)
    }

    /// Records that `producer_id`'s open transaction wrote offsets of `group_id`.
    pub fn add_open_group(&self, producer_id: i64, group_id: &str) {
        lock(&self.open_groups_for_producer)
            .entry(producer_id)
            .or_default()
            .insert(group_id.to_string());
    }

    /// The groups of offsets partitions `partitions` that `producer_id`'s transaction wrote
    /// offsets of, no longer open for it.
    pub fn take_open_groups(&self, producer_id: i64, partitions: &[i32]) -> Vec<SharedGroup> {
        let mut open = lock(&self.open_groups_for_producer);
        let Some(ids) = open.get_mut(&producer_id) else {
            return Vec::new();
        };
        let taken: Vec<String> = ids
            .iter()
            .filter(|g| partitions.contains(&self.partition_for(g)))
            .cloned()
            .collect();
        for g in &taken {
            ids.remove(g);
        }
        if ids.is_empty() {
            open.remove(&producer_id);
        }
        drop(open);
        taken.iter().filter_map(|g| self.get_group(g)).collect()
    }

    fn append_batch(
        &self,
        group_id: &str,
        records: Vec<SimpleRecord>,
        producer: Option<(i64, i16)>,
        verification_guard: Option<VerificationGuard>,
    ) -> ProduceResult {
        let mut builder = RecordBatchBuilder::new(self.config.compression);
        builder.records = records;
        if let Some((producer_id, producer_epoch)) = producer {
            builder.producer_id = producer_id;
            builder.producer_epoch = producer_epoch;
            builder.base_sequence = 0;
            builder.is_transactional = true;
        }
        let batch = match builder.build() {
            Ok(batch) => batch,
            Err(e) => {
                tracing::error!(%e, "cannot build a __consumer_offsets batch");
                return ProduceResult::Ready(vec![PartitionResponse::error(
                    ErrorCode::UnknownServerError,
                )]);
            }
        };
        let entry = AppendEntry {
            topic_partition: TopicPartition::new(
                GROUP_METADATA_TOPIC_NAME,
                self.partition_for(group_id),
            ),
            records: Bytes::from(batch),
            verification_guard,
        };
        self.replica_manager.append_records(
            AppendParams::coordinator(
                i32::try_from(self.config.commit_timeout_ms).unwrap_or(i32::MAX),
            ),
            vec![entry],
        )
    }

    /// The group's metadata record (Kafka's `groupMetadataValue` with the assignment given, or
    /// the members' current ones).
    pub fn group_metadata_record(
        &self,
        group: &GroupMetadata,
        assignment: Option<&HashMap<String, bytes::Bytes>>,
    ) -> Option<SimpleRecord> {
        use crate::protocol::codec::StrBytes;
        use crate::protocol::messages::group_metadata_value::MemberMetadata as M;
        let protocol = group.protocol_name.clone().unwrap_or_default();
        let value = GroupMetadataValue {
            protocol_type: StrBytes::from(group.protocol_type.clone().unwrap_or_default()),
            generation: group.generation_id,
            protocol: group.protocol_name.clone().map(StrBytes::from),
            leader: group.leader_id.clone().map(StrBytes::from),
            current_state_timestamp: group.current_state_timestamp.unwrap_or(-1),
            members: group
                .members
                .iter()
                .map(|m| M {
                    member_id: StrBytes::from(m.member_id.clone()),
                    group_instance_id: m.group_instance_id.clone().map(StrBytes::from),
                    client_id: StrBytes::from(m.client_id.clone()),
                    client_host: StrBytes::from(m.client_host.clone()),
                    rebalance_timeout: m.rebalance_timeout_ms,
                    session_timeout: m.session_timeout_ms,
                    subscription: m.metadata(&protocol),
                    assignment: assignment.map_or_else(
                        || m.assignment.clone(),
                        |a| a.get(&m.member_id).cloned().unwrap_or_default(),
                    ),
                    ..M::default()
                })
                .collect(),
            ..GroupMetadataValue::default()
        };
        let key = records::group_metadata_key(&group.group_id).ok()?;
        let value = records::group_metadata_value(&value).ok()?;
        Some(SimpleRecord::new(self.now_ms(), Some(key), Some(value)))
    }

    pub fn offset_record(
        &self,
        group_id: &str,
        tp: &TopicPartition,
        o: &OffsetAndMetadata,
    ) -> Option<SimpleRecord> {
        let key = records::offset_commit_key(group_id, tp).ok()?;
        let value = records::offset_commit_value(o).ok()?;
        Some(SimpleRecord::new(self.now_ms(), Some(key), Some(value)))
    }

    pub fn offset_tombstone(&self, group_id: &str, tp: &TopicPartition) -> Option<SimpleRecord> {
        let key = records::offset_commit_key(group_id, tp).ok()?;
        Some(SimpleRecord::new(self.now_ms(), Some(key), None))
    }

    pub fn group_tombstone(&self, group_id: &str) -> Option<SimpleRecord> {
        let key = records::group_metadata_key(group_id).ok()?;
        Some(SimpleRecord::new(self.now_ms(), Some(key), None))
    }

    /// Forgets an offsets partition this broker will not coordinate (its creation failed);
    /// it holds no groups yet.
    pub fn forget_partition(&self, index: i32) {
        lock(&self.partitions).forget(index);
    }

    /// Marks a partition as loading unless its state is known already (a concurrent creator
    /// of the offsets topic may have loaded it).
    pub fn mark_loading_if_unknown(&self, index: i32) {
        lock(&self.partitions).mark_loading_if_unknown(index);
    }

    pub fn mark_loading(&self, index: i32) {
        lock(&self.partitions).mark_loading(index);
    }

    /// Loads `index` now, whatever its state (a fresh load at no epoch). Blocking.
    pub fn load_partition(&self, index: i32) {
        let id = lock(&self.partitions).new_load(index);
        self.load(index, id);
    }

    /// Kafka's `loadGroupsAndOffsets`: reads the partition from its log start to its log end
    /// and installs the groups it holds, unless the load `load_id` (from
    /// [`GroupMetadataManager::begin_loading`]) was overtaken meanwhile by a resignation or a
    /// newer load. Blocking (file reads): run it off the runtime's workers.
    pub fn load(&self, index: i32, load_id: u64) {
        let loaded = match self.offsets_partition(index) {
            Some(p) => self.read_partition(&p),
            None => Ok(Loaded::default()),
        };
        let loaded = loaded.unwrap_or_else(|e| {
            tracing::error!(partition = index, err = %e, "loading __consumer_offsets stopped at a bad record; its groups are missing");
            Loaded::default()
        });
        let mut partitions = lock(&self.partitions);
        if !partitions.is_current(index, load_id) {
            tracing::info!(
                partition = index,
                "__consumer_offsets load overtaken by a resignation or a newer load; discarded"
            );
            return;
        }
        let count = self.install(loaded);
        partitions.finish(index, load_id);
        drop(partitions);
        if count > 0 {
            tracing::info!(
                partition = index,
                groups = count,
                "loaded __consumer_offsets partition"
            );
        }
    }

    fn read_partition(&self, partition: &Partition) -> Result<Loaded, String> {
        let mut loaded = Loaded::default();
        read_partition(partition, self.config.load_buffer_size, |record| {
            loaded.apply(record)
        })?;
        Ok(loaded)
    }

    /// Installs what a load found; returns how many groups it made.
    fn install(&self, loaded: Loaded) -> usize {
        let now = self.now_ms();
        let session_now = Instant::now();
        let mut by_group: HashMap<String, Vec<(TopicPartition, OffsetAndMetadata, i64)>> =
            HashMap::new();
        for ((group, tp), (o, position)) in loaded.offsets {
            if let Some(o) = o {
                by_group.entry(group).or_default().push((tp, o, position));
            }
        }
        // Offsets of transactions still open at the log end stay pending (Kafka's
        // `prepareTxnOffsetCommit` and `onTxnOffsetCommitAppend` at load).
        let mut pending_by_group: HashMap<String, Vec<(i64, TopicPartition, PendingTxnOffset)>> =
            HashMap::new();
        for (producer_id, offsets) in loaded.pending {
            for ((group, tp), (o, position)) in offsets {
                if let Some(offset) = o {
                    self.add_open_group(producer_id, &group);
                    let pending = PendingTxnOffset {
                        offset,
                        position: Some(position),
                    };
                    pending_by_group
                        .entry(group)
                        .or_default()
                        .push((producer_id, tp, pending));
                }
            }
        }
        let mut made = 0;
        let mut names: Vec<String> = loaded
            .groups
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        names.extend(by_group.keys().cloned());
        names.extend(pending_by_group.keys().cloned());
        names.sort();
        names.dedup();
        let mut groups = lock(&self.groups);
        for name in names {
            let mut group = GroupMetadata::new(name.clone(), GroupState::Empty, now);
            if let Some(Some(v)) = loaded.groups.get(&name) {
                load_group_value(&mut group, v, session_now);
            } else {
                group.current_state_timestamp = None;
            }
            for (tp, o, position) in by_group.remove(&name).unwrap_or_default() {
                group.commit_offset(tp, o, position);
            }
            for (producer_id, tp, pending) in pending_by_group.remove(&name).unwrap_or_default() {
                group
                    .pending_txn_offsets
                    .entry(producer_id)
                    .or_default()
                    .insert(tp, pending);
            }
            groups.insert(name, Arc::new(Mutex::new(group)));
            made += 1;
        }
        made
    }
}

/// Kafka's `GroupMetadata.loadGroup`: Stable with its members, or Empty.
fn load_group_value(group: &mut GroupMetadata, v: &GroupMetadataValue, now: Instant) {
    let protocol_type = v.protocol_type.to_string_lossy().into_owned();
    group.protocol_type = (!protocol_type.is_empty()).then_some(protocol_type.clone());
    group.generation_id = v.generation;
    group.protocol_name = v
        .protocol
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    group.leader_id = v.leader.as_ref().map(|p| p.to_string_lossy().into_owned());
    group.current_state_timestamp =
        (v.current_state_timestamp != -1).then_some(v.current_state_timestamp);
    let protocol = group.protocol_name.clone().unwrap_or_default();
    for m in &v.members {
        let mut member = MemberMetadata::new(
            m.member_id.to_string_lossy().into_owned(),
            m.group_instance_id
                .as_ref()
                .map(|i| i.to_string_lossy().into_owned()),
            m.client_id.to_string_lossy().into_owned(),
            m.client_host.to_string_lossy().into_owned(),
            m.rebalance_timeout,
            m.session_timeout,
            protocol_type.clone(),
            vec![(protocol.clone(), m.subscription.clone())],
        );
        member.assignment = m.assignment.clone();
        member.heartbeat_deadline =
            Some(now + Duration::from_millis(u64::try_from(m.session_timeout).unwrap_or(0)));
        let leader = group.leader_id.clone();
        group.add(member);
        group.leader_id = leader;
    }
    group.state = if group.members.is_empty() {
        GroupState::Empty
    } else {
        GroupState::Stable
    };
    group.subscribed_topics = group.compute_subscribed_topics();
}

/// A group and partition: an offset's key.
type OffsetKey = (String, TopicPartition);

/// An offset as a load found it (`None`: a tombstone) and the offset of its batch.
type LoadedOffset = (Option<OffsetAndMetadata>, i64);

/// What a load read: the last value of every key (`None`: a tombstone), and the offsets of
/// each producer's transaction not yet ended by a marker (Kafka's `doLoadGroupsAndOffsets`).
#[derive(Debug, Default)]
struct Loaded {
    offsets: HashMap<OffsetKey, LoadedOffset>,
    groups: HashMap<String, Option<GroupMetadataValue>>,
    pending: HashMap<i64, HashMap<OffsetKey, LoadedOffset>>,
}

impl Loaded {
    fn apply(&mut self, record: LoadedRecord<'_>) -> Result<(), String> {
        let (key, value, producer_id, transactional, batch_offset) = match record {
            LoadedRecord::Marker {
                producer_id,
                commit,
            } => {
                let Some(pending) = self.pending.remove(&producer_id) else {
                    return Ok(());
                };
                if commit {
                    for (k, (v, position)) in pending {
                        if self.offsets.get(&k).is_none_or(|(_, p)| *p < position) {
                            self.offsets.insert(k, (v, position));
                        }
                    }
                }
                return Ok(());
            }
            LoadedRecord::Data {
                key,
                value,
                producer_id,
                transactional,
                batch_offset,
            } => (key, value, producer_id, transactional, batch_offset),
        };
        let Some(key) = key else {
            return Err("a __consumer_offsets record without a key".into());
        };
        match records::read_key(key).map_err(|e| e.to_string())? {
            OffsetsKey::Offset {
                group,
                topic_partition,
            } => {
                let v = value
                    .map(records::read_offset_value)
                    .transpose()
                    .map_err(|e| e.to_string())?;
                let offsets = if transactional {
                    self.pending.entry(producer_id).or_default()
                } else {
                    &mut self.offsets
                };
                offsets.insert((group, topic_partition), (v, batch_offset));
            }
            OffsetsKey::GroupMetadata { group } => {
                let v = value
                    .map(records::read_group_value)
                    .transpose()
                    .map_err(|e| e.to_string())?;
                self.groups.insert(group, v);
            }
            OffsetsKey::Unknown(_) => {}
        }
        Ok(())
    }
}

/// A coordinator append's outcome: settled now (its error; NONE when committed), or the replica
/// manager's wait for the ISR.
pub(crate) fn settled(result: ProduceResult) -> Result<ErrorCode, DelayedProduce> {
    match result {
        ProduceResult::Ready(responses) => Ok(first_error(&responses)),
        ProduceResult::Delayed(delayed) => Err(delayed),
    }
}

/// Waits for a delayed append (see [`settled`]): its error (NONE once committed), or
/// NOT_COORDINATOR when the coordinator shuts down first.
pub(crate) async fn committed(delayed: DelayedProduce, shutdown: &CancellationToken) -> ErrorCode {
    tokio::select! {
        responses = delayed.complete() => first_error(&responses),
        _ = shutdown.cancelled() => ErrorCode::NotCoordinator,
    }
}

/// The error of a one-entry append.
fn first_error(responses: &[PartitionResponse]) -> ErrorCode {
    responses
        .first()
        .map_or(ErrorCode::UnknownServerError, |r| r.error_code)
}

/// Kafka's mapping of an append's or a transaction verification's error for offset commits
/// (`maybeConvertOffsetCommitError`).
pub(crate) fn commit_error(e: ErrorCode) -> ErrorCode {
    match e {
        // A verification's retriable error, which every client retries without looking the
        // coordinator up again.
        ErrorCode::NetworkException => ErrorCode::CoordinatorLoadInProgress,
        ErrorCode::UnknownTopicOrPartition
        | ErrorCode::NotEnoughReplicas
        | ErrorCode::NotEnoughReplicasAfterAppend => ErrorCode::CoordinatorNotAvailable,
        ErrorCode::NotLeaderOrFollower | ErrorCode::KafkaStorageError => ErrorCode::NotCoordinator,
        ErrorCode::MessageTooLarge
        | ErrorCode::RecordListTooLarge
        | ErrorCode::InvalidFetchSize => ErrorCode::InvalidCommitOffsetSize,
        other => other,
    }
}

/// Kafka's mapping of an append error for group metadata (`storeGroup`'s callback).
pub(crate) fn store_group_error(e: ErrorCode) -> ErrorCode {
    match e {
        ErrorCode::UnknownTopicOrPartition
        | ErrorCode::NotEnoughReplicas
        | ErrorCode::NotEnoughReplicasAfterAppend => ErrorCode::CoordinatorNotAvailable,
        ErrorCode::NotLeaderOrFollower | ErrorCode::KafkaStorageError => ErrorCode::NotCoordinator,
        ErrorCode::RequestTimedOut => ErrorCode::RebalanceInProgress,
        ErrorCode::MessageTooLarge
        | ErrorCode::RecordListTooLarge
        | ErrorCode::InvalidFetchSize => ErrorCode::UnknownServerError,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset(committed_offset: i64) -> OffsetAndMetadata {
        OffsetAndMetadata {
            committed_offset,
            leader_epoch: -1,
            metadata: String::new(),
            commit_timestamp_ms: 0,
            expire_timestamp_ms: None,
        }
    }

    /// Feeds one offset record of group `g`, partition `t-0`.
    fn data(loaded: &mut Loaded, committed: i64, producer_id: i64, batch_offset: i64) {
        let tp = TopicPartition::new("t", 0);
        let key = records::offset_commit_key("g", &tp).unwrap();
        let value = records::offset_commit_value(&offset(committed)).unwrap();
        loaded
            .apply(LoadedRecord::Data {
                key: Some(&key),
                value: Some(&value),
                producer_id,
                transactional: producer_id >= 0,
                batch_offset,
            })
            .unwrap();
    }

    fn marker(loaded: &mut Loaded, producer_id: i64, commit: bool) {
        loaded
            .apply(LoadedRecord::Marker {
                producer_id,
                commit,
            })
            .unwrap();
    }

    fn committed(loaded: &Loaded) -> Option<i64> {
        let key = ("g".to_string(), TopicPartition::new("t", 0));
        loaded
            .offsets
            .get(&key)
            .and_then(|(o, _)| o.as_ref().map(|o| o.committed_offset))
    }

    #[test]
    fn a_load_applies_committed_transactions_drops_aborted_ones_and_keeps_open_ones_pending() {
        let mut loaded = Loaded::default();
        data(&mut loaded, 10, -1, 0);
        data(&mut loaded, 20, 7, 1);
        assert_eq!(committed(&loaded), Some(10), "pending until its marker");
        marker(&mut loaded, 7, true);
        assert_eq!(committed(&loaded), Some(20));
        data(&mut loaded, 30, 8, 3);
        marker(&mut loaded, 8, false);
        assert_eq!(committed(&loaded), Some(20), "an abort drops it");
        // A plain commit written after a transaction's offset wins over it at the commit.
        data(&mut loaded, 40, 9, 5);
        data(&mut loaded, 50, -1, 6);
        marker(&mut loaded, 9, true);
        assert_eq!(committed(&loaded), Some(50));
        // Open at the log end: pending.
        data(&mut loaded, 60, 10, 8);
        assert_eq!(loaded.pending[&10].len(), 1);
    }
}
