//! The leader's view of its followers and the high watermark that follows from it (Kafka's
//! `updateFollowerFetchState` and `maybeIncrementLeaderHW`).

use crate::cluster::BrokerId;
use crate::cluster::sync::lock;
use crate::storage::unified_log::UnifiedLog;

use super::{Partition, PartitionState};
use crate::replication::error::PartitionError;

impl Partition {
    /// Kafka's `updateFollowerFetchState`: a follower fetched from `fetch_offset`, its log end.
    /// The high watermark may move; when it does, parked acks=all produces re-check. A replica
    /// not assigned to the partition is NOT_LEADER_OR_FOLLOWER, as Kafka refuses to record it.
    pub fn update_follower_fetch_state(
        &self,
        follower_id: BrokerId,
        fetch_offset: i64,
    ) -> Result<(), PartitionError> {
        let moved = {
            let mut state = lock(&self.state);
            if follower_id == self.local_broker_id || !state.assignment.contains(&follower_id) {
                return Err(PartitionError::NotLeaderOrFollower {
                    topic_partition: self.topic_partition.clone(),
                    broker_id: self.local_broker_id,
                });
            }
            state.follower_log_ends.insert(follower_id, fetch_offset);
            let mut log = lock(&self.log);
            self.maybe_increment_leader_hw_locked(&mut log, &state)
        };
        if moved {
            self.wake_waiters();
        }
        Ok(())
    }

    /// The followers' log ends as this leader knows them, for tests and tools.
    pub fn follower_log_end_offset(&self, follower_id: BrokerId) -> Option<i64> {
        lock(&self.state)
            .follower_log_ends
            .get(&follower_id)
            .copied()
    }

    pub(super) fn maybe_increment_leader_hw(&self) {
        let state = lock(&self.state);
        let mut log = lock(&self.log);
        self.maybe_increment_leader_hw_locked(&mut log, &state);
    }

    /// Kafka's `maybeIncrementLeaderHW`: the high watermark is the smallest log end among the
    /// ISR, the leader's included. A follower of the ISR that has not fetched since this broker
    /// became leader holds it where it is. It only moves up; `true` when it moved.
    pub(super) fn maybe_increment_leader_hw_locked(
        &self,
        log: &mut UnifiedLog,
        state: &PartitionState,
    ) -> bool {
        let leadership = &state.leader_and_isr;
        if leadership.leader != self.local_broker_id {
            return false;
        }
        let leo = log.log_end_offset();
        let mut new_hw = leo;
        for id in &leadership.isr {
            if *id == self.local_broker_id {
                continue;
            }
            match state.follower_log_ends.get(id) {
                Some(follower_leo) => new_hw = new_hw.min(*follower_leo),
                None => return false,
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
