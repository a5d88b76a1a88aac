//! Offsets committed in a transaction (Kafka's `handleTxnCommitOffsets` and
//! `scheduleHandleTxnCompletion`): TxnOffsetCommit writes the offsets as a transactional batch
//! of the producer into the group's offsets partition, where they wait, pending, for their
//! transaction's marker; a COMMIT makes them the group's committed offsets (unless a plain
//! commit was written after them), an ABORT drops them.
//!
//! A missing group is created (Empty). A commit without member information is accepted into a
//! group with members, as a transactional producer may not be one; with member information
//! the member and generation are checked as for OffsetCommit (KIP-447). While pending, an
//! OffsetFetch with `RequireStable` gets UNSTABLE_OFFSET_COMMIT for the partition.

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::builder::SimpleRecord;
use crate::replication::VerificationGuard;

use super::group_coordinator::{GroupApi, GroupCoordinator};
use super::group_metadata::PendingTxnOffset;
use super::group_metadata_manager::{commit_error, committed, settled};
use super::group_offsets::CommitParams;

/// One TxnOffsetCommit: the commit's offsets and member information, and the producer whose
/// transaction writes them.
#[derive(Debug, Clone)]
pub struct TxnCommitParams {
    pub commit: CommitParams,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// With transaction verification on (KIP-890): the guard the offsets partition gave when
    /// its verification started, or the sentinel (the transaction is open there already).
    pub verification_guard: Option<VerificationGuard>,
}

impl GroupCoordinator {
    /// Kafka's `handleTxnCommitOffsets`: each partition's error, once the offsets are written.
    pub async fn commit_transactional_offsets(
        &self,
        p: TxnCommitParams,
    ) -> Vec<(TopicPartition, ErrorCode)> {
        let c = &p.commit;
        let all = |e: ErrorCode| {
            c.offsets
                .iter()
                .map(|(tp, _)| (tp.clone(), e))
                .collect::<Vec<_>>()
        };
        if let Some(e) = self.validate_group_status(&c.group_id, GroupApi::OffsetCommit) {
            return all(e);
        }
        let shared = self.manager.get_or_create_group(&c.group_id);
        let max = self.manager.config.metadata_max_bytes;
        let (mut results, written, result) = {
            let mut group = lock(&shared);
            if let Some(e) = Self::validate_offset_commit(&group, c, true) {
                return all(e);
            }
            let mut results = Vec::with_capacity(c.offsets.len());
            let mut records: Vec<SimpleRecord> = Vec::new();
            let mut written = Vec::new();
            for (tp, o) in &c.offsets {
                if o.metadata.len() > max {
                    results.push((tp.clone(), ErrorCode::OffsetMetadataTooLarge));
                    continue;
                }
                match self.manager.offset_record(&c.group_id, tp, o) {
                    Some(r) => {
                        records.push(r);
                        written.push(tp.clone());
                        results.push((tp.clone(), ErrorCode::None));
                    }
                    None => results.push((tp.clone(), ErrorCode::UnknownServerError)),
                }
            }
            if records.is_empty() {
                return results;
            }
            // Pending before the append (Kafka's `prepareTxnOffsetCommit`), so a marker that
            // follows at once finds them.
            let pending = group.pending_txn_offsets.entry(p.producer_id).or_default();
            for (tp, o) in &c.offsets {
                if written.contains(tp) {
                    pending.insert(
                        tp.clone(),
                        PendingTxnOffset {
                            offset: o.clone(),
                            position: None,
                        },
                    );
                }
            }
            self.manager.add_open_group(p.producer_id, &c.group_id);
            let position = self.manager.log_end_offset(&c.group_id);
            let appended = self.manager.append_transactional(
                &c.group_id,
                records,
                p.producer_id,
                p.producer_epoch,
                p.verification_guard,
            );
            (results, written, (position, settled(appended)))
        };
        let (position, appended) = result;
        let error = commit_error(match appended {
            Ok(code) => code,
            Err(delayed) => committed(delayed, &self.shutdown).await,
        });
        let mut group = lock(&shared);
        if let Some(pending) = group.pending_txn_offsets.get_mut(&p.producer_id) {
            for tp in &written {
                if error == ErrorCode::None {
                    // Kafka's `onTxnOffsetCommitAppend`.
                    if let Some(entry) = pending.get_mut(tp) {
                        entry.position = Some(position);
                    }
                } else {
                    // Kafka's `failPendingTxnOffsetCommit`.
                    pending.remove(tp);
                }
            }
            if pending.is_empty() {
                group.pending_txn_offsets.remove(&p.producer_id);
            }
        }
        if error != ErrorCode::None {
            for (tp, code) in &mut results {
                if written.contains(tp) {
                    *code = error;
                }
            }
        }
        results
    }

    /// Which of `tps` an open transaction of the group wrote an offset of (OffsetFetch with
    /// `RequireStable` answers UNSTABLE_OFFSET_COMMIT for them).
    pub fn unstable_offsets(&self, group_id: &str, tps: &[TopicPartition]) -> Vec<TopicPartition> {
        let Some(shared) = self.manager.get_group(group_id) else {
            return Vec::new();
        };
        let group = lock(&shared);
        tps.iter()
            .filter(|tp| group.has_pending_txn_offset(tp))
            .cloned()
            .collect()
    }

    /// Kafka's `onTransactionCompleted`: `producer_id`'s marker was written to offsets
    /// partitions `partitions`; the groups there with offsets of its transaction commit or
    /// drop them.
    pub fn on_transaction_completed(&self, producer_id: i64, partitions: &[i32], commit: bool) {
        for shared in self.manager.take_open_groups(producer_id, partitions) {
            lock(&shared).complete_pending_txn_offset_commit(producer_id, commit);
        }
    }
}
