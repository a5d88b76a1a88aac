//! The controller's read-modify-write of a partition's state znode, the loop shared by Kafka's
//! `updateLeaderEpoch` (a reassignment's new epoch) and `removeReplicasFromIsr` (a replica
//! going offline): read the znode and its zkVersion, refuse one a newer controller wrote, apply
//! the change, and write it conditionally on that zkVersion, fenced by this controller's epoch;
//! a leader's AlterPartition that won the race makes it read and apply again. Many partitions
//! go through one pipelined round of reads and one of writes (a broker's failure takes its
//! replicas out of thousands of ISRs at once).

use crate::cluster::TopicPartition;
use crate::zk::kafka_zk_client::{KafkaZkClient, StateWrite};
use crate::zk::zk_data::PartitionState;

use super::controller_context::{ControllerContext, LeaderIsrAndControllerEpoch};
use super::error::ControllerError;

/// Writes `change(current)` (stamped with this controller's epoch) to `tp`'s state znode and
/// the context. `None` when there is no state znode or `change` declines (nothing to do).
pub(super) async fn update_partition_state(
    zk: &KafkaZkClient,
    ctx: &mut ControllerContext,
    tp: &TopicPartition,
    change: impl Fn(&PartitionState) -> Option<PartitionState>,
) -> Result<Option<LeaderIsrAndControllerEpoch>, ControllerError> {
    let mut updated =
        update_partition_states(zk, ctx, &[(tp.clone(), ())], |(), current| change(current))
            .await?;
    Ok(updated.pop().flatten())
}

/// [`update_partition_state`] for many partitions, each with what its change needs: every
/// read and every write of a round pipelined, and the writes that lost a race read and applied
/// again in the next round. Results in input order. A partition may appear more than once (two
/// replicas of it going offline): its writes race each other like a leader's, and the loser
/// applies its change to the winner's state.
pub(super) async fn update_partition_states<T>(
    zk: &KafkaZkClient,
    ctx: &mut ControllerContext,
    items: &[(TopicPartition, T)],
    change: impl Fn(&T, &PartitionState) -> Option<PartitionState>,
) -> Result<Vec<Option<LeaderIsrAndControllerEpoch>>, ControllerError> {
    let mut results = vec![None; items.len()];
    let mut pending: Vec<usize> = (0..items.len()).collect();
    while !pending.is_empty() {
        let tps: Vec<TopicPartition> = pending.iter().map(|&i| items[i].0.clone()).collect();
        let states = zk.get_topic_partition_states(&tps).await?;
        let mut planned = Vec::new();
        let mut writes = Vec::new();
        for (&i, (tp, current)) in pending.iter().zip(tps.into_iter().zip(states)) {
            let Some((current, partition_epoch)) = current else {
                continue;
            };
            if current.controller_epoch > ctx.epoch {
                return Err(ControllerError::ControllerMoved {
                    controller_epoch: ctx.epoch,
                });
            }
            let Some(state) = change(&items[i].1, &current) else {
                continue;
            };
            let state = PartitionState {
                controller_epoch: ctx.epoch,
                ..state
            };
            planned.push(i);
            writes.push((tp, state, partition_epoch));
        }
        let outcomes = zk
            .update_leader_and_isrs(ctx.fencing_epoch(), &writes)
            .await?;
        pending.clear();
        for ((i, (tp, state, _)), outcome) in planned.into_iter().zip(writes).zip(outcomes) {
            match outcome {
                StateWrite::Stale => pending.push(i),
                StateWrite::Written { partition_epoch } => {
                    let leadership = LeaderIsrAndControllerEpoch {
                        state,
                        partition_epoch,
                    };
                    ctx.leadership.insert(tp, leadership.clone());
                    results[i] = Some(leadership);
                }
            }
        }
    }
    Ok(results)
}
