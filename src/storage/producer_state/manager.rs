//! A partition's producer state (Kafka's `ProducerStateManager` with `ProducerAppendInfo`'s
//! checks for single-batch appends): producer id → [`ProducerStateEntry`], the snapshot files
//! of the partition directory, and the offsets that say how far the state reaches.
//!
//! Invariants: the state reflects every batch below `last_map_offset` (Kafka's `mapEndOffset`)
//! and none at or above it; `last_snap_offset` is the offset of the newest snapshot written or
//! loaded (or where the state started); `snapshots` lists exactly the `<offset>.snapshot` files
//! in the directory.
//!
//! Leader rules (`ProducerAppendInfo.checkProducerEpoch` / `checkSequence`, origin client):
//! a batch whose epoch is older than the producer's → `INVALID_PRODUCER_EPOCH`; a new epoch of a
//! known producer must start at sequence 0; the same epoch must continue at `last_seq + 1`
//! (`i32::MAX` wraps to 0); otherwise `OUT_OF_ORDER_SEQUENCE_NUMBER`. A producer id the
//! partition does not know (never seen, or expired) is accepted at any sequence (KIP-360). A
//! batch equal in epoch and sequence range to one of the producer's last five is a duplicate:
//! the log appends nothing and answers with the original offsets (Kafka 3.9 answers NONE, never
//! `DUPLICATE_SEQUENCE_NUMBER`, for these). Followers apply batches without the checks.
//!
//! A transaction marker (a control batch the coordinator writes) is checked for its producer
//! epoch (older: `INVALID_PRODUCER_EPOCH`) and its coordinator epoch (older than the last
//! marker's: `TRANSACTION_COORDINATOR_FENCED`, Kafka's `appendEndTxnMarker`); it ends the
//! producer's transaction and records the coordinator epoch.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::protocol::record::batch::{NO_PRODUCER_EPOCH, RecordBatchHeader};
use crate::protocol::record::control::EndTxnMarker;

use super::super::StorageError;
use super::super::file_names::{self, PRODUCER_SNAPSHOT_FILE_SUFFIX};
use super::super::log_validator::AppendOrigin;
use super::entry::{BatchMetadata, ProducerStateEntry};
use super::snapshot::{self, ProducerSnapshotEntry};
use super::transactions::{CompletedTxn, Transactions};
use super::verification::{VerificationGuard, VerificationStateEntry};

/// Kafka's default `producer.id.expiration.ms`: one day.
pub const DEFAULT_PRODUCER_ID_EXPIRATION_MS: i64 = 86_400_000;

/// Why a leader refused a batch with a producer id, with Kafka's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProducerStateError {
    /// `OUT_OF_ORDER_SEQUENCE_NUMBER` (45): a gap, or a new epoch not starting at 0.
    #[error("{message}")]
    OutOfOrderSequence { message: String },
    /// `INVALID_PRODUCER_EPOCH` (47): an epoch older than the producer's.
    #[error("{message}")]
    InvalidProducerEpoch { message: String },
    /// `TRANSACTION_COORDINATOR_FENCED` (52): a marker from an older coordinator epoch than the
    /// producer's last marker.
    #[error("{message}")]
    CoordinatorFenced { message: String },
    /// `INVALID_TXN_STATE` (48): a plain batch from a producer whose transaction is open.
    #[error("{message}")]
    InvalidTxnState { message: String },
}

/// What a leader append of a producer's batch must do after the checks passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderBatchCheck {
    /// A new batch: append it, then [`ProducerStateManager::apply_batch`].
    Append,
    /// A retry of an appended batch: append nothing, answer with its offsets.
    Duplicate(BatchMetadata),
}

/// One partition's producer state; see the module doc.
#[derive(Debug)]
pub struct ProducerStateManager {
    dir: PathBuf,
    topic_partition: String,
    producers: BTreeMap<i64, ProducerStateEntry>,
    snapshots: BTreeMap<i64, PathBuf>,
    last_map_offset: i64,
    last_snap_offset: i64,
    producer_id_expiration_ms: i64,
    transactions: Transactions,
    /// Verifications in progress, by producer id (in memory only, as in Kafka).
    verification_states: HashMap<i64, VerificationStateEntry>,
}

/// `nextSeq` follows `lastSeq`, wrapping from `i32::MAX` to 0.
fn in_sequence(last_seq: i32, next_seq: i32) -> bool {
    i64::from(next_seq) == i64::from(last_seq) + 1 || (next_seq == 0 && last_seq == i32::MAX)
}

impl ProducerStateManager {
    /// A manager for the partition directory `dir`, listing its snapshot files; the state is
    /// empty until [`truncate_and_reload`](Self::truncate_and_reload) loads one.
    pub fn new(
        dir: &Path,
        topic_partition: String,
        producer_id_expiration_ms: i64,
    ) -> Result<Self, StorageError> {
        Ok(ProducerStateManager {
            dir: dir.to_path_buf(),
            topic_partition,
            producers: BTreeMap::new(),
            snapshots: list_snapshots(dir)?,
            last_map_offset: 0,
            last_snap_offset: 0,
            producer_id_expiration_ms,
            transactions: Transactions::default(),
            verification_states: HashMap::new(),
        })
    }

    pub(super) fn verification_states(&self) -> &HashMap<i64, VerificationStateEntry> {
        &self.verification_states
    }

    pub(super) fn verification_states_mut(&mut self) -> &mut HashMap<i64, VerificationStateEntry> {
        &mut self.verification_states
    }

    pub fn topic_partition(&self) -> &str {
        &self.topic_partition
    }

    pub fn producer_id_expiration_ms(&self) -> i64 {
        self.producer_id_expiration_ms
    }

    pub fn set_producer_id_expiration_ms(&mut self, ms: i64) {
        self.producer_id_expiration_ms = ms;
    }

    /// Kafka's `mapEndOffset`.
    pub fn map_end_offset(&self) -> i64 {
        self.last_map_offset
    }

    pub fn update_map_end_offset(&mut self, offset: i64) {
        self.last_map_offset = offset;
    }

    pub fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }

    pub fn last_entry(&self, producer_id: i64) -> Option<&ProducerStateEntry> {
        self.producers.get(&producer_id)
    }

    pub fn active_producers(&self) -> impl Iterator<Item = &ProducerStateEntry> {
        self.producers.values()
    }

    /// The offsets of the snapshot files, ascending.
    pub fn snapshot_offsets(&self) -> Vec<i64> {
        self.snapshots.keys().copied().collect()
    }

    pub fn latest_snapshot_offset(&self) -> Option<i64> {
        self.snapshots.keys().next_back().copied()
    }

    /// The snapshot file at `offset`, if there is one.
    pub fn snapshot_file(&self, offset: i64) -> Option<&Path> {
        self.snapshots.get(&offset).map(PathBuf::as_path)
    }

    /// The checks of a leader append of one batch with a producer id (`header`), to be
    /// appended at `first_offset` (used in messages only). Nothing is changed.
    pub fn check_leader_batch(
        &self,
        header: &RecordBatchHeader,
        first_offset: i64,
        origin: AppendOrigin,
        marker: Option<EndTxnMarker>,
        verification: Option<VerificationGuard>,
    ) -> Result<LeaderBatchCheck, ProducerStateError> {
        let producer_id = header.producer_id;
        let epoch = header.producer_epoch;
        let first_seq = header.base_sequence;
        if let Some(marker) = marker {
            self.check_end_txn_marker(header, marker, first_offset, origin)?;
            return Ok(LeaderBatchCheck::Append);
        }
        let current = self.producers.get(&producer_id);
        if !header.is_transactional()
            && origin != AppendOrigin::Replication
            && current.is_some_and(|e| e.current_txn_first_offset.is_some())
        {
            return Err(ProducerStateError::InvalidTxnState {
                message: format!(
                    "Expected transactional write from producer {producer_id} at offset {first_offset} in partition {}",
                    self.topic_partition
                ),
            });
        }
        if origin == AppendOrigin::Client
            && let Some(duplicate) = current
                .and_then(|e| e.find_duplicate_batch(epoch, first_seq, header.last_sequence()))
        {
            return Ok(LeaderBatchCheck::Duplicate(duplicate));
        }
        // KIP-890: a transactional batch that opens the producer's transaction here must bring
        // the guard its verification with the coordinator was made under (see `verification`).
        if let Some(request_guard) = verification
            && origin != AppendOrigin::Replication
            && header.is_transactional()
            && !header.is_control()
            && current.is_none_or(|e| e.current_txn_first_offset.is_none())
            && !self.verification_guard(producer_id).verify(request_guard)
        {
            return Err(ProducerStateError::InvalidTxnState {
                message: "Record was not part of an ongoing transaction".to_string(),
            });
        }
        let current_epoch = current.map_or(NO_PRODUCER_EPOCH, |e| e.producer_epoch);
        if epoch < current_epoch && origin != AppendOrigin::Replication {
            return Err(ProducerStateError::InvalidProducerEpoch {
                message: format!(
                    "Epoch of producer {producer_id} at offset {first_offset} in {} is {epoch}, which is smaller than the last seen epoch {current_epoch}",
                    self.topic_partition
                ),
            });
        }
        if origin != AppendOrigin::Client {
            return Ok(LeaderBatchCheck::Append);
        }
        if let Some(verifying) = self.verification_states.get(&producer_id)
            && first_seq > verifying.lowest_sequence
        {
            return Err(ProducerStateError::OutOfOrderSequence {
                message: format!(
                    "Out of order sequence number for producer {producer_id} at offset {first_offset} in partition {}: {first_seq} (incoming seq. number), {} (earliest seen sequence)",
                    self.topic_partition, verifying.lowest_sequence
                ),
            });
        }
        if epoch != current_epoch {
            if first_seq != 0 && current_epoch == NO_PRODUCER_EPOCH {
                // KIP-360's acceptance of a producer this partition does not know: rare (an
                // expired producer), and a retry this partition forgot would be duplicated.
                tracing::info!(
                    topic_partition = %self.topic_partition,
                    producer_id,
                    epoch,
                    first_seq,
                    first_offset,
                    "accepting a batch of a producer unknown to this partition"
                );
            }
            if first_seq != 0 && current_epoch != NO_PRODUCER_EPOCH {
                return Err(ProducerStateError::OutOfOrderSequence {
                    message: format!(
                        "Invalid sequence number for new epoch of producer {producer_id} at offset {first_offset} in partition {}: {epoch} (request epoch), {first_seq} (seq. number), {current_epoch} (current producer epoch)",
                        self.topic_partition
                    ),
                });
            }
        } else {
            let current_last_seq = current.map_or(-1, ProducerStateEntry::last_seq);
            if !(current_epoch == NO_PRODUCER_EPOCH || in_sequence(current_last_seq, first_seq)) {
                return Err(ProducerStateError::OutOfOrderSequence {
                    message: format!(
                        "Out of order sequence number for producer {producer_id} at offset {first_offset} in partition {}: {first_seq} (incoming seq. number), {current_last_seq} (current end sequence number)",
                        self.topic_partition
                    ),
                });
            }
        }
        Ok(LeaderBatchCheck::Append)
    }

    /// Kafka's `checkProducerEpoch` and `checkCoordinatorEpoch` for a marker; a follower
    /// takes it as it is.
    fn check_end_txn_marker(
        &self,
        header: &RecordBatchHeader,
        marker: EndTxnMarker,
        offset: i64,
        origin: AppendOrigin,
    ) -> Result<(), ProducerStateError> {
        if origin == AppendOrigin::Replication {
            return Ok(());
        }
        let producer_id = header.producer_id;
        let Some(current) = self.producers.get(&producer_id) else {
            return Ok(());
        };
        if header.producer_epoch < current.producer_epoch {
            return Err(ProducerStateError::InvalidProducerEpoch {
                message: format!(
                    "Epoch of producer {producer_id} at offset {offset} in {} is {}, which is smaller than the last seen epoch {}",
                    self.topic_partition, header.producer_epoch, current.producer_epoch
                ),
            });
        }
        if current.coordinator_epoch > marker.coordinator_epoch {
            return Err(ProducerStateError::CoordinatorFenced {
                message: format!(
                    "Invalid coordinator epoch for producerId {producer_id} at offset {offset} in partition {}: {} (zombie), {} (current)",
                    self.topic_partition, marker.coordinator_epoch, current.coordinator_epoch
                ),
            });
        }
        Ok(())
    }

    /// Records an appended batch with a producer id (`ProducerAppendInfo.append` followed by
    /// `update`): data batches join the producer's last five; control batches (replicated
    /// transaction markers) end its transaction. An older epoch from a follower append is
    /// taken as it is, as Kafka does after warning.
    pub fn apply_batch(
        &mut self,
        header: &RecordBatchHeader,
        first_offset: i64,
        last_offset: i64,
        marker: Option<EndTxnMarker>,
    ) -> Option<CompletedTxn> {
        if header.is_transactional() {
            // The transaction is open here now, or complete: either way verified.
            self.verification_states.remove(&header.producer_id);
        }
        let entry = self
            .producers
            .entry(header.producer_id)
            .or_insert_with(|| ProducerStateEntry::empty(header.producer_id));
        if header.producer_epoch < entry.producer_epoch {
            tracing::warn!(
                topic_partition = %self.topic_partition,
                producer_id = header.producer_id,
                epoch = header.producer_epoch,
                last_epoch = entry.producer_epoch,
                "replicated batch with an older producer epoch"
            );
        }
        if header.is_control() {
            // Only a transaction marker ends a transaction; other control types carry no
            // producer state.
            let marker = marker?;
            entry.maybe_update_producer_epoch(header.producer_epoch);
            let completed = entry
                .current_txn_first_offset
                .take()
                .map(|first| CompletedTxn {
                    producer_id: header.producer_id,
                    first_offset: first,
                    last_offset: first_offset,
                    is_aborted: !marker.is_commit(),
                });
            entry.coordinator_epoch = marker.coordinator_epoch;
            entry.last_timestamp = header.max_timestamp;
            return completed;
        }
        let offset_delta = i32::try_from(last_offset - first_offset).unwrap_or(i32::MAX);
        entry.add_batch(
            header.producer_epoch,
            header.last_sequence(),
            last_offset,
            offset_delta,
            header.max_timestamp,
        );
        if header.is_transactional() && entry.current_txn_first_offset.is_none() {
            entry.current_txn_first_offset = Some(first_offset);
            self.transactions.start(header.producer_id, first_offset);
        }
        None
    }

    /// Kafka's `lastStableOffset(completedTxn)`: what the `.txnindex` entry of an aborted
    /// transaction records.
    pub fn last_stable_offset(&self, completed: &CompletedTxn) -> i64 {
        self.transactions.last_stable_offset(completed)
    }

    /// Kafka's `completeTxn`: once its `.txnindex` entry (if aborted) is written.
    pub fn complete_txn(&mut self, completed: &CompletedTxn) {
        self.transactions.complete(completed);
    }

    /// The completed transactions below the new high watermark are forgotten.
    pub fn on_high_watermark_updated(&mut self, high_watermark: i64) {
        self.transactions.on_high_watermark_updated(high_watermark);
    }

    /// Kafka's `firstUnstableOffset`: the first offset of the earliest transaction still open
    /// or not yet replicated.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        self.transactions.first_unstable_offset()
    }

    fn is_producer_expired(&self, now_ms: i64, entry: &ProducerStateEntry) -> bool {
        entry.current_txn_first_offset.is_none()
            && now_ms.saturating_sub(entry.last_timestamp) >= self.producer_id_expiration_ms
    }

    /// Forgets the producers idle for `producer.id.expiration.ms` (by their batches'
    /// timestamps) with no transaction open. Returns how many went.
    pub fn remove_expired_producers(&mut self, now_ms: i64) -> usize {
        let before = self.producers.len();
        let expiration = self.producer_id_expiration_ms;
        self.remove_expired_verification_states(now_ms, expiration);
        self.producers.retain(|_, e| {
            !(e.current_txn_first_offset.is_none()
                && now_ms.saturating_sub(e.last_timestamp) >= expiration)
        });
        before - self.producers.len()
    }

    /// Writes `<last_map_offset>.snapshot` unless a snapshot at or above it exists
    /// (`takeSnapshot`); fsynced when `sync`. Returns the file written.
    pub fn take_snapshot(&mut self, sync: bool) -> Result<Option<PathBuf>, StorageError> {
        if self.last_map_offset <= self.last_snap_offset {
            return Ok(None);
        }
        let path = file_names::segment_file(
            &self.dir,
            self.last_map_offset,
            PRODUCER_SNAPSHOT_FILE_SUFFIX,
        );
        let entries: Vec<ProducerSnapshotEntry> = self
            .producers
            .values()
            .map(ProducerStateEntry::to_snapshot)
            .collect();
        snapshot::write_snapshot(&path, &entries, sync)?;
        tracing::debug!(
            topic_partition = %self.topic_partition,
            offset = self.last_map_offset,
            producers = entries.len(),
            "wrote producer snapshot"
        );
        self.snapshots.insert(self.last_map_offset, path.clone());
        self.last_snap_offset = self.last_map_offset;
        Ok(Some(path))
    }

    /// Deletes the snapshot file at `offset`, if any.
    pub fn remove_and_delete_snapshot(&mut self, offset: i64) -> Result<(), StorageError> {
        if let Some(path) = self.snapshots.remove(&offset) {
            delete_file(&path)?;
        }
        Ok(())
    }

    /// Deletes every snapshot below `offset` (`deleteSnapshotsBefore`).
    pub fn delete_snapshots_before(&mut self, offset: i64) -> Result<(), StorageError> {
        let doomed: Vec<i64> = self.snapshots.range(..offset).map(|(o, _)| *o).collect();
        for o in doomed {
            self.remove_and_delete_snapshot(o)?;
        }
        Ok(())
    }

    /// The log start moved up (`onLogStartOffsetIncremented`).
    pub fn on_log_start_offset_incremented(&mut self, log_start_offset: i64) {
        self.transactions
            .on_high_watermark_updated(log_start_offset);
        if self.last_map_offset < log_start_offset {
            self.last_map_offset = log_start_offset;
        }
        self.last_snap_offset = self.latest_snapshot_offset().unwrap_or(log_start_offset);
    }

    /// Forgets every producer and snapshot; the state starts at `offset`.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<(), StorageError> {
        self.producers.clear();
        self.transactions.clear();
        self.delete_snapshots_before(i64::MAX)?;
        self.last_map_offset = offset;
        self.last_snap_offset = offset;
        Ok(())
    }

    /// `removeStraySnapshots`: keeps the snapshots at segment base offsets and the newest other
    /// one only if it lies above every segment base.
    pub fn remove_stray_snapshots(
        &mut self,
        segment_base_offsets: &[i64],
    ) -> Result<(), StorageError> {
        self.snapshots = list_snapshots(&self.dir)?;
        let max_base = segment_base_offsets.iter().copied().max();
        let mut latest_stray: Option<i64> = None;
        let offsets: Vec<i64> = self.snapshots.keys().copied().collect();
        for offset in offsets {
            if segment_base_offsets.contains(&offset) {
                continue;
            }
            if let Some(prev) = latest_stray.replace(offset) {
                self.remove_and_delete_snapshot(prev)?;
            }
        }
        if let (Some(stray), Some(max)) = (latest_stray, max_base)
            && stray < max
        {
            self.remove_and_delete_snapshot(stray)?;
        }
        Ok(())
    }

    /// `truncateAndReload`: deletes the snapshots above `log_end_offset` or at/below
    /// `log_start_offset`; unless the state already ends at `log_end_offset`, reloads it from
    /// the newest snapshot left (skipping corrupt ones, which are deleted, and expired
    /// producers).
    pub fn truncate_and_reload(
        &mut self,
        log_start_offset: i64,
        log_end_offset: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        let doomed: Vec<i64> = self
            .snapshots
            .keys()
            .copied()
            .filter(|o| *o > log_end_offset || *o <= log_start_offset)
            .collect();
        for o in doomed {
            self.remove_and_delete_snapshot(o)?;
        }
        if log_end_offset != self.last_map_offset {
            self.producers.clear();
            self.transactions.clear();
            self.load_from_snapshot(log_start_offset, now_ms)?;
        } else {
            self.on_log_start_offset_incremented(log_start_offset);
        }
        Ok(())
    }

    fn load_from_snapshot(
        &mut self,
        log_start_offset: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        while let Some((offset, path)) = self
            .snapshots
            .iter()
            .next_back()
            .map(|(o, p)| (*o, p.clone()))
        {
            let bytes = std::fs::read(&path).map_err(|e| StorageError::io(&path, e))?;
            match snapshot::read_snapshot(&bytes) {
                Ok(entries) => {
                    for e in &entries {
                        let entry = ProducerStateEntry::from_snapshot(e);
                        if !self.is_producer_expired(now_ms, &entry) {
                            // Kafka's `loadProducerEntry`: an open transaction is open again.
                            if let Some(first) = entry.current_txn_first_offset {
                                self.transactions.start(entry.producer_id, first);
                            }
                            self.producers.insert(entry.producer_id, entry);
                        }
                    }
                    self.last_snap_offset = offset;
                    self.last_map_offset = offset;
                    return Ok(());
                }
                Err(message) => {
                    tracing::warn!(file = %path.display(), %message, "failed to load producer snapshot");
                    self.remove_and_delete_snapshot(offset)?;
                }
            }
        }
        self.last_snap_offset = log_start_offset;
        self.last_map_offset = log_start_offset;
        Ok(())
    }
}

/// The `<offset>.snapshot` files of `dir`.
fn list_snapshots(dir: &Path) -> Result<BTreeMap<i64, PathBuf>, StorageError> {
    let mut snapshots = BTreeMap::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(snapshots),
        Err(e) => return Err(StorageError::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        if let Some(name) = entry.file_name().to_str()
            && name.ends_with(PRODUCER_SNAPSHOT_FILE_SUFFIX)
            && let Some(offset) = file_names::offset_from_file_name(name)
        {
            snapshots.insert(offset, entry.path());
        }
    }
    Ok(snapshots)
}

fn delete_file(path: &Path) -> Result<(), StorageError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(path, e)),
    }
}

#[cfg(test)]
#[path = "manager_tests.rs"]
mod tests;
