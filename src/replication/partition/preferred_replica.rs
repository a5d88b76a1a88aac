//! The leader's half of follower fetching (KIP-392; Kafka's `findPreferredReadReplica` and
//! `fetchOffsetSnapshot`): which of a partition's replicas a consumer should read from, and the
//! offsets a leader answers with when it points the consumer elsewhere.

use crate::cluster::BrokerId;
use crate::cluster::sync::lock;
use crate::replication::error::PartitionError;
use crate::replication::replica_selector::{
    ClientMetadata, ReplicaEndpoints, ReplicaSelector, ReplicaView, preferred_read_replica,
};

use super::{LogOffsets, Partition, offsets_of};

impl Partition {
    /// Kafka's `findPreferredReadReplica`: the follower this leader points `client` at for a
    /// fetch from `fetch_offset` at `now_ms`, or `None` to read here (not the leader, no
    /// candidate, or the selector chose the leader).
    ///
    /// Candidates are the followers in the committed ISR whose log (as their last fetch
    /// reported it) holds `fetch_offset`: log start at or below it, log end at or above it.
    pub fn find_preferred_read_replica(
        &self,
        selector: ReplicaSelector,
        client: &ClientMetadata,
        endpoints: &dyn ReplicaEndpoints,
        fetch_offset: i64,
        now_ms: i64,
    ) -> Option<BrokerId> {
        let (leader, followers) = {
            let state = lock(&self.state);
            if state.leader_and_isr.leader != self.local_broker_id {
                return None;
            }
            let followers: Vec<ReplicaView> = state
                .followers
                .values()
                .filter(|r| {
                    state.leader_and_isr.isr.contains(&r.broker_id)
                        && r.log_end_offset >= fetch_offset
                        && r.log_start_offset <= fetch_offset
                })
                .map(|r| ReplicaView {
                    broker_id: r.broker_id,
                    endpoint: None,
                    log_end_offset: r.log_end_offset,
                    time_since_last_caught_up_ms: now_ms - r.last_caught_up_time_ms,
                })
                .collect();
            let leader = ReplicaView {
                broker_id: self.local_broker_id,
                endpoint: None,
                log_end_offset: lock(&self.log).log_end_offset(),
                time_since_last_caught_up_ms: 0,
            };
            (leader, followers)
        };
        // The endpoints are looked up outside the partition's locks: the metadata cache has
        // its own.
        let with_endpoint = |mut view: ReplicaView| {
            view.endpoint = endpoints.replica_endpoint(view.broker_id, &client.listener_name);
            view
        };
        let leader = with_endpoint(leader);
        let followers: Vec<ReplicaView> = followers.into_iter().map(with_endpoint).collect();
        preferred_read_replica(selector, client, &leader, &followers)
    }

    /// Kafka's `fetchOffsetSnapshot` for a leader that points a consumer elsewhere: the
    /// partition's offsets once the consumer's leader epoch (-1: no check) is checked.
    pub fn fetch_offset_snapshot(
        &self,
        current_leader_epoch: i32,
    ) -> Result<LogOffsets, PartitionError> {
        self.local_state(current_leader_epoch, false)?;
        Ok(offsets_of(&lock(&self.log)))
    }
}

#[cfg(test)]
mod tests;
