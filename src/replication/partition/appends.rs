//! The write side of a [`Partition`]: appends as leader (with the acks=all refusal below the
//! min ISR and the wait's completion check) and as follower (the leader's batches unchanged).

use std::sync::atomic::Ordering;

use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;
use crate::storage::log_validator::AppendOrigin;
use crate::storage::producer_state::VerificationGuard;
use crate::storage::records_source::RecordsSource;
use crate::storage::unified_log::{LogAppendInfo, UnifiedLog};

use super::{FollowerAppend, LeaderAppend, Partition, PartitionState, ReplicationCheck};
use crate::replication::error::PartitionError;

/// The leader's batches as a follower receives them.
pub enum FollowerRecords<'a> {
    /// In memory.
    Bytes(&'a [u8]),
    /// Still to be read (a fetch response's records in a pipe): written into the log in place
    /// and read back into `scratch` to be checked (`UnifiedLog::append_as_follower_from`).
    Source {
        source: &'a mut dyn RecordsSource,
        scratch: &'a mut Vec<u8>,
    },
}

impl std::fmt::Debug for FollowerRecords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FollowerRecords::Bytes(bytes) => write!(f, "Bytes({} bytes)", bytes.len()),
            FollowerRecords::Source { source, .. } => write!(f, "Source({} bytes)", source.len()),
        }
    }
}

impl Partition {
    /// Kafka's `appendRecordsToFollowerOrFutureReplica` and the rest of the fetcher's
    /// `processPartitionData`: appends the leader's batches as they are (offsets, epochs, CRCs
    /// untouched), then takes the leader's high watermark capped at the new log end, and the
    /// leader's log start offset where the high watermark allows it.
    pub fn append_records_to_follower(
        &self,
        records: FollowerRecords<'_>,
        leader_high_watermark: i64,
        leader_log_start_offset: i64,
        now_ms: i64,
    ) -> Result<FollowerAppend, PartitionError> {
        if self.is_offline() {
            return Err(PartitionError::KafkaStorage {
                topic_partition: self.topic_partition.clone(),
            });
        }
        let size = match &records {
            FollowerRecords::Bytes(bytes) => bytes.len(),
            FollowerRecords::Source { source, .. } => source.len(),
        };
        let outcome = {
            let mut log = lock(&self.log);
            let appended = match records {
                FollowerRecords::Bytes([]) => None,
                FollowerRecords::Bytes(bytes) => Some(log.append_as_follower(bytes, now_ms)),
                FollowerRecords::Source { source, scratch } => {
                    Some(log.append_as_follower_from(source, scratch, now_ms))
                }
            };
            if let Some(appended) = appended {
                self.checked(&log, appended)?;
                self.topic_stats().replication_bytes_in().mark(size as u64);
            }
            let hw = leader_high_watermark.min(log.log_end_offset());
            if hw >= 0 && hw != log.high_watermark() {
                let updated = log.update_high_watermark(hw);
                self.checked(&log, updated)?;
            }
            if leader_log_start_offset > log.log_start_offset()
                && leader_log_start_offset <= log.high_watermark()
            {
                let moved = log.maybe_increment_log_start_offset(leader_log_start_offset);
                self.checked(&log, moved)?;
            }
            FollowerAppend {
                log_end_offset: log.log_end_offset(),
                high_watermark: log.high_watermark(),
            }
        };
        self.wake_waiters();
        Ok(outcome)
    }

    /// Kafka's `effectiveMinIsr`: `min.insync.replicas`, capped at the replica count, so a
    /// topic with fewer replicas than the setting can still commit with all of them in sync.
    pub(super) fn effective_min_isr(&self, log: &UnifiedLog, state: &PartitionState) -> usize {
        let configured = usize::try_from(log.config().min_insync_replicas).unwrap_or(1);
        configured.min(state.assignment.len().max(1))
    }

    /// Kafka's `checkEnoughReplicasReachOffset` for an acks=all append made under `append`'s
    /// leadership: done once the high watermark reaches the append's end with at least the
    /// effective min ISR in sync; failed when this broker has not led the partition throughout
    /// since (the append may be truncated away by a new leader, so it must never be
    /// acknowledged). A re-election at a new epoch while leading is not a break: failing then
    /// would tell the producer a batch in the log was not written, and an idempotent producer
    /// that renumbers its unacknowledged records (librdkafka after an epoch bump) would write it
    /// twice.
    pub fn check_enough_replicas_reach_offset(&self, append: LeaderAppend) -> ReplicationCheck {
        if self.is_offline() {
            return ReplicationCheck::Failed(ErrorCode::KafkaStorageError);
        }
        let state = lock(&self.state).clone();
        let leadership = &state.leader_and_isr;
        if self.stopped.load(Ordering::SeqCst)
            || leadership.leader != self.local_broker_id
            || state.leader_term != append.leader_term
        {
            return ReplicationCheck::Failed(ErrorCode::NotLeaderOrFollower);
        }
        let log = lock(&self.log);
        if log.high_watermark() < append.required_offset {
            return ReplicationCheck::Pending;
        }
        if state.maximal_isr_len() < self.effective_min_isr(&log, &state) {
            return ReplicationCheck::Failed(ErrorCode::NotEnoughReplicasAfterAppend);
        }
        ReplicationCheck::Done
    }

    /// Kafka's `appendRecordsToLeader`: validates and appends one produced batch with the
    /// current leader epoch. acks=all is refused when the ISR is smaller than the effective min
    /// ISR (`min.insync.replicas` capped at the replica count), before anything is written.
    /// With `verification` set (KIP-890 on), a transaction's first batch here must bring its
    /// producer's guard (see [`maybe_start_transaction_verification`](Self::maybe_start_transaction_verification)).
    pub fn append_records_to_leader(
        &self,
        records: &[u8],
        origin: AppendOrigin,
        required_acks: i16,
        verification: Option<VerificationGuard>,
        now_ms: i64,
    ) -> Result<(LogAppendInfo, LeaderAppend), PartitionError> {
        let state = self.leader_state(-1)?;
        let leadership = &state.leader_and_isr;
        let info = {
            let mut log = lock(&self.log);
            let min_isr = self.effective_min_isr(&log, &state);
            if required_acks == -1 && leadership.isr.len() < min_isr {
                return Err(PartitionError::NotEnoughReplicas {
                    topic_partition: self.topic_partition.clone(),
                    isr_size: leadership.isr.len(),
                    min_isr,
                });
            }
            let appended = log.append_as_leader_verified(
                records,
                leadership.leader_epoch,
                origin,
                verification,
                now_ms,
            );
            self.checked(&log, appended)?
        };
        // With the log's lock released: the state's lock comes first.
        self.maybe_increment_leader_hw();
        self.wake_waiters();
        let append = LeaderAppend {
            leader_term: state.leader_term,
            required_offset: info.last_offset + 1,
        };
        Ok((info, append))
    }

    /// Kafka's `Partition.maybeStartTransactionVerification`, on the leader only: the guard a
    /// producer's transactional batch must bring (the sentinel when its transaction is already
    /// open here, so nothing needs verifying).
    pub fn maybe_start_transaction_verification(
        &self,
        producer_id: i64,
        sequence: i32,
        epoch: i16,
        now_ms: i64,
    ) -> Result<VerificationGuard, PartitionError> {
        self.leader_state(-1)?;
        Ok(lock(&self.log).maybe_start_transaction_verification(
            producer_id,
            sequence,
            epoch,
            now_ms,
        ))
    }
}
