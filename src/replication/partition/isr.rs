//! The leader's view of its followers, the ISR changes that follow from it, and the high
//! watermark (Kafka's `updateFollowerFetchState`, `maybeExpandIsr`, `maybeShrinkIsr`,
//! `submitAlterPartition`, `handleAlterPartitionUpdate` and `maybeIncrementLeaderHW`).
//!
//! - A follower that fetches from at least the high watermark and the current leader epoch's
//!   start offset joins the ISR (expand), if it is ISR-eligible (an alive broker). One that has not been caught up for
//!   `replica.lag.time.max.ms` leaves it (shrink, checked on the replica manager's schedule).
//! - Either change is only proposed: an AlterPartition goes to the controller, and the
//!   committed ISR changes when it answers. One proposal is in flight at a time; meanwhile the
//!   *maximal ISR* (the committed ISR plus a replica being added; the committed ISR, not yet
//!   shrunk, while one is being removed) is what the high watermark and acks=-1 count, so
//!   nothing is acknowledged on the strength of a change ZooKeeper may refuse.
//! - The high watermark is the smallest log end among the leader, the maximal ISR and the
//!   followers that are caught up, alive and about to join it (Kafka's
//!   `shouldWaitForReplicaToJoinIsr`), and it does not move while the committed ISR is smaller
//!   than the effective min ISR (Kafka 3.7+, KIP-966).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, LeaderAndIsr, LeaderRecoveryState};
use crate::protocol::errors::ErrorCode;
use crate::replication::alter_partition::{AlterPartitionItem, AlterPartitionResult};
use crate::replication::error::PartitionError;
use crate::storage::unified_log::UnifiedLog;

use super::{Partition, PartitionState};

/// An ISR change sent to the controller and not answered yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PendingIsrChange {
    /// Adding `new_replica`; `sent` is the proposal.
    Expand {
        new_replica: BrokerId,
        sent: LeaderAndIsr,
    },
    /// Removing the committed ISR's members missing from `sent`, the proposal.
    Shrink { sent: LeaderAndIsr },
}

impl PendingIsrChange {
    fn sent(&self) -> &LeaderAndIsr {
        match self {
            PendingIsrChange::Expand { sent, .. } | PendingIsrChange::Shrink { sent } => sent,
        }
    }
}

impl PartitionState {
    /// The replica being added by an expansion in flight.
    fn joining(&self) -> Option<BrokerId> {
        match &self.pending_isr {
            Some(PendingIsrChange::Expand { new_replica, .. })
                if !self.leader_and_isr.isr.contains(new_replica) =>
            {
                Some(*new_replica)
            }
            _ => None,
        }
    }

    /// Kafka's `maximalIsr`: the ISR counted while a change is in flight.
    pub(super) fn maximal_isr(&self) -> Vec<BrokerId> {
        let mut isr = self.leader_and_isr.isr.clone();
        isr.extend(self.joining());
        isr
    }

    /// Whether `id` is in the maximal ISR, without building it (the high watermark's hot path).
    pub(super) fn in_maximal_isr(&self, id: BrokerId) -> bool {
        self.leader_and_isr.isr.contains(&id) || self.joining() == Some(id)
    }

    /// The size of the maximal ISR.
    pub(super) fn maximal_isr_len(&self) -> usize {
        self.leader_and_isr.isr.len() + usize::from(self.joining().is_some())
    }
}

impl Partition {
    /// Kafka's `updateFollowerFetchState`: a follower fetched from `fetch_offset`, its log end,
    /// when this leader's log end was `leader_end_offset`; its log starts at
    /// `follower_log_start_offset`. The follower may join the ISR, and
    /// the high watermark may move; when it does, parked acks=all produces re-check. A replica
    /// not assigned to the partition is NOT_LEADER_OR_FOLLOWER, as Kafka refuses to record it.
    pub fn update_follower_fetch_state(
        self: &Arc<Self>,
        follower_id: BrokerId,
        fetch_offset: i64,
        leader_end_offset: i64,
        follower_log_start_offset: i64,
    ) -> Result<(), PartitionError> {
        let now_ms = self.partition_context.time.milliseconds();
        let (moved, expand) = {
            let mut state = lock(&self.state);
            let Some(replica) = state.followers.get_mut(&follower_id) else {
                return Err(PartitionError::NotLeaderOrFollower {
                    topic_partition: self.topic_partition.clone(),
                    broker_id: self.local_broker_id,
                });
            };
            replica.update_fetch_state(
                fetch_offset,
                now_ms,
                leader_end_offset,
                follower_log_start_offset,
            );
            let mut log = lock(&self.log);
            let expand = self.prepare_isr_expand(&log, &mut state, follower_id);
            let moved = self.maybe_increment_leader_hw_locked(&mut log, &state, now_ms);
            (moved, expand)
        };
        if let Some(item) = expand {
            self.submit_alter_partition(item);
        }
        if moved {
            self.wake_waiters();
        }
        Ok(())
    }

    /// The followers' log ends as this leader knows them, for tests and tools.
    pub fn follower_log_end_offset(&self, follower_id: BrokerId) -> Option<i64> {
        lock(&self.state)
            .followers
            .get(&follower_id)
            .map(|r| r.log_end_offset)
            .filter(|leo| *leo >= 0)
    }

    /// The ISR the high watermark and acks=-1 count now (the committed one while nothing is in
    /// flight).
    pub fn maximal_isr(&self) -> Vec<BrokerId> {
        lock(&self.state).maximal_isr()
    }

    /// Whether `id` is in the committed ISR (Kafka's `inSyncReplicaIds`), which a replication
    /// throttle never holds back.
    pub fn is_in_sync_replica(&self, id: BrokerId) -> bool {
        lock(&self.state).leader_and_isr.isr.contains(&id)
    }

    /// Whether an ISR change is waiting for the controller.
    pub fn is_isr_change_in_flight(&self) -> bool {
        lock(&self.state).pending_isr.is_some()
    }

    /// Kafka's `maybeExpandIsr` check and `prepareIsrExpand`: the proposal to add
    /// `follower_id`, when it is in sync and no change is in flight.
    fn prepare_isr_expand(
        &self,
        log: &UnifiedLog,
        state: &mut PartitionState,
        follower_id: BrokerId,
    ) -> Option<AlterPartitionItem> {
        let leadership = &state.leader_and_isr;
        if leadership.leader != self.local_broker_id
            || state.pending_isr.is_some()
            || leadership.isr.contains(&follower_id)
            || !self
                .partition_context
                .eligibility
                .is_replica_isr_eligible(follower_id)
        {
            return None;
        }
        let follower_end = state.followers.get(&follower_id)?.log_end_offset;
        let epoch_start = state.leader_epoch_start_offset?;
        if follower_end < log.high_watermark() || follower_end < epoch_start {
            return None;
        }
        let mut isr = leadership.isr.clone();
        isr.push(follower_id);
        let sent = LeaderAndIsr {
            isr,
            leader_recovery_state: LeaderRecoveryState::Recovered,
            ..leadership.clone()
        };
        tracing::info!(topic_partition = %self.topic_partition, from = ?leadership.isr,
            to = ?sent.isr, high_watermark = log.high_watermark(), follower_end,
            "expanding the ISR");
        state.pending_isr = Some(PendingIsrChange::Expand {
            new_replica: follower_id,
            sent: sent.clone(),
        });
        Some(self.item(sent))
    }

    /// Kafka's `maybeShrinkIsr` (the replica manager's `isr-expiration` task): proposes to drop
    /// the ISR members that have not been caught up for `replica.lag.time.max.ms`. Nothing
    /// happens while a change is in flight or on a follower.
    pub fn maybe_shrink_isr(self: &Arc<Self>) {
        let now_ms = self.partition_context.time.milliseconds();
        let max_lag = self.partition_context.replica_lag_time_max_ms;
        let item = {
            let mut state = lock(&self.state);
            let leadership = &state.leader_and_isr;
            if leadership.leader != self.local_broker_id || state.pending_isr.is_some() {
                return;
            }
            let log = lock(&self.log);
            let leader_end = log.log_end_offset();
            let out_of_sync: Vec<BrokerId> = leadership
                .isr
                .iter()
                .copied()
                .filter(|id| *id != self.local_broker_id)
                .filter(|id| {
                    state
                        .followers
                        .get(id)
                        .is_none_or(|r| !r.is_caught_up(leader_end, now_ms, max_lag))
                })
                .collect();
            if out_of_sync.is_empty() {
                return;
            }
            let sent = LeaderAndIsr {
                isr: leadership
                    .isr
                    .iter()
                    .copied()
                    .filter(|id| !out_of_sync.contains(id))
                    .collect(),
                ..leadership.clone()
            };
            let lags: Vec<(BrokerId, i64, i64)> = out_of_sync
                .iter()
                .map(|id| {
                    let r = state.followers.get(id);
                    (
                        *id,
                        r.map_or(-1, |r| r.log_end_offset),
                        r.map_or(0, |r| now_ms - r.last_caught_up_time_ms),
                    )
                })
                .collect();
            tracing::info!(topic_partition = %self.topic_partition, from = ?leadership.isr,
                to = ?sent.isr, high_watermark = log.high_watermark(), leader_end,
                out_of_sync = ?lags, "shrinking the ISR (replica, log end, ms since caught up)");
            state.pending_isr = Some(PendingIsrChange::Shrink { sent: sent.clone() });
            self.item(sent)
        };
        self.submit_alter_partition(item);
    }

    fn item(&self, leader_and_isr: LeaderAndIsr) -> AlterPartitionItem {
        let granted = self.granted_broker_epoch.load(Ordering::SeqCst);
        AlterPartitionItem {
            topic_partition: self.topic_partition.clone(),
            topic_id: self.topic_id(),
            leader_and_isr,
            broker_epoch: (granted >= 0).then_some(granted),
        }
    }

    /// Kafka's `submitAlterPartition`: hands the proposal to the controller channel; the answer
    /// comes back to [`Partition::handle_alter_partition_update`]. The callback holds the
    /// partition weakly: a partition dropped meanwhile has nothing to update.
    fn submit_alter_partition(self: &Arc<Self>, item: AlterPartitionItem) {
        let partition: Weak<Partition> = Arc::downgrade(self);
        let sent = item.leader_and_isr.clone();
        self.partition_context.alter_partition.submit(
            item,
            Box::new(move |result| {
                if let Some(partition) = partition.upgrade() {
                    partition.handle_alter_partition_update(&sent, result);
                }
            }),
        );
    }

    /// Kafka's `handleAlterPartitionUpdate` and `handleAlterPartitionError`. An answer to a
    /// proposal no longer pending (a LeaderAndIsr replaced it) is ignored. Success commits the
    /// controller's state unless it is of an older leader or partition epoch. OPERATION_NOT_ATTEMPTED
    /// and INELIGIBLE_REPLICA roll back to the committed state (the controller says it did not
    /// apply it, so another proposal may follow). Errors that mean this leader's view is stale
    /// (STALE_BROKER_EPOCH: the leadership was granted to an earlier registration of this
    /// broker; FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_OR_PARTITION,
    /// UNKNOWN_TOPIC_ID, NEW_LEADER_ELECTED) keep the proposal pending until the controller's
    /// next LeaderAndIsr. Any other error sends the proposal again.
    pub fn handle_alter_partition_update(
        self: &Arc<Self>,
        sent: &LeaderAndIsr,
        result: AlterPartitionResult,
    ) {
        let now_ms = self.partition_context.time.milliseconds();
        let resend = {
            let mut state = lock(&self.state);
            if state.pending_isr.as_ref().map(PendingIsrChange::sent) != Some(sent) {
                tracing::debug!(topic_partition = %self.topic_partition, ?result,
                    "ignoring the answer to an AlterPartition no longer pending");
                return;
            }
            if result.is_err() {
                // Kafka's `handleAlterPartitionError` counts every error, retried or not.
                self.partition_context.isr_meters.failed.mark(1);
            }
            match result {
                Ok(committed) => {
                    let current = &state.leader_and_isr;
                    if committed.leader_epoch != current.leader_epoch
                        || committed.partition_epoch < current.partition_epoch
                    {
                        self.partition_context.isr_meters.failed.mark(1);
                        tracing::debug!(topic_partition = %self.topic_partition, ?committed,
                            "ignoring an AlterPartition answer of another epoch");
                        return;
                    }
                    tracing::info!(topic_partition = %self.topic_partition, isr = ?committed.isr,
                        partition_epoch = committed.partition_epoch, "ISR updated");
                    state.leader_and_isr = LeaderAndIsr {
                        leader: current.leader,
                        ..committed
                    };
                    // Kafka's `notifyListener`: counted once the controller committed it.
                    let meters = &self.partition_context.isr_meters;
                    match state.pending_isr.take() {
                        Some(PendingIsrChange::Expand { .. }) => meters.expands.mark(1),
                        Some(PendingIsrChange::Shrink { .. }) => meters.shrinks.mark(1),
                        None => {}
                    }
                    // The ISR may have lost its slowest member: the high watermark may move.
                    let moved = {
                        let mut log = lock(&self.log);
                        self.maybe_increment_leader_hw_locked(&mut log, &state, now_ms)
                    };
                    drop(state);
                    if moved {
                        self.wake_waiters();
                    }
                    return;
                }
                Err(ErrorCode::OperationNotAttempted | ErrorCode::IneligibleReplica) => {
                    tracing::info!(topic_partition = %self.topic_partition, ?sent,
                        "the controller did not apply the ISR change; back to the committed ISR");
                    state.pending_isr = None;
                    None
                }
                Err(
                    code @ (ErrorCode::StaleBrokerEpoch
                    | ErrorCode::FencedLeaderEpoch
                    | ErrorCode::InvalidUpdateVersion
                    | ErrorCode::UnknownTopicOrPartition
                    | ErrorCode::UnknownTopicId
                    | ErrorCode::NewLeaderElected),
                ) => {
                    tracing::info!(topic_partition = %self.topic_partition, error = ?code,
                        "ISR change refused; waiting for the controller's next LeaderAndIsr");
                    None
                }
                Err(code) => {
                    tracing::warn!(topic_partition = %self.topic_partition, error = ?code,
                        "ISR change failed; sending it again");
                    Some(self.item(sent.clone()))
                }
            }
        };
        if let Some(item) = resend {
            self.submit_alter_partition(item);
        }
    }

    pub(super) fn maybe_increment_leader_hw(&self) {
        let now_ms = self.partition_context.time.milliseconds();
        let state = lock(&self.state);
        let mut log = lock(&self.log);
        self.maybe_increment_leader_hw_locked(&mut log, &state, now_ms);
    }

    /// Kafka's `maybeIncrementLeaderHW`: the smallest log end among this leader, the maximal
    /// ISR, and the followers caught up (within the lag) that may join it; held while the
    /// committed ISR is under the effective min ISR. A follower counted that has not fetched
    /// since this broker became leader holds it where it is. It only moves up; `true` when it
    /// moved.
    pub(super) fn maybe_increment_leader_hw_locked(
        &self,
        log: &mut UnifiedLog,
        state: &PartitionState,
        now_ms: i64,
    ) -> bool {
        let leadership = &state.leader_and_isr;
        if leadership.leader != self.local_broker_id
            || leadership.isr.len() < self.effective_min_isr(log, state)
        {
            return false;
        }
        let leo = log.log_end_offset();
        let max_lag = self.partition_context.replica_lag_time_max_ms;
        let mut new_hw = leo;
        for replica in state.followers.values() {
            let counted = state.in_maximal_isr(replica.broker_id)
                || (replica.is_caught_up(leo, now_ms, max_lag)
                    && self
                        .partition_context
                        .eligibility
                        .is_replica_isr_eligible(replica.broker_id));
            if counted && replica.log_end_offset < new_hw {
                new_hw = replica.log_end_offset;
            }
        }
        if new_hw <= log.high_watermark() {
            return false;
        }
        match log.update_high_watermark(new_hw) {
            Ok(_) => true,
            Err(err) => {
                tracing::error!(topic_partition = %self.topic_partition, %err, "cannot move the high watermark");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests;
