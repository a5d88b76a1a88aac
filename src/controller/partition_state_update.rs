//! The controller's read-modify-write of a partition's state znode, the loop shared by Kafka's
//! `updateLeaderEpoch` (a reassignment's new epoch) and `removeReplicasFromIsr` (a replica
//! going offline): read the znode and its zkVersion, refuse one a newer controller wrote, apply
//! the change, and write it conditionally on that zkVersion, fenced by this controller's epoch;
//! a leader's AlterPartition that won the race makes it read and apply again.

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
    loop {
        let Some((current, partition_epoch)) = zk.get_topic_partition_state(tp).await? else {
            return Ok(None);
        };
        if current.controller_epoch > ctx.epoch {
            return Err(ControllerError::ControllerMoved {
                controller_epoch: ctx.epoch,
            });
        }
        let Some(state) = change(&current) else {
            return Ok(None);
        };
        let state = PartitionState {
            controller_epoch: ctx.epoch,
            ..state
        };
        match zk
            .update_leader_and_isr(ctx.fencing_epoch(), tp, &state, partition_epoch)
            .await?
        {
            StateWrite::Stale => continue,
            StateWrite::Written { partition_epoch } => {
                let leadership = LeaderIsrAndControllerEpoch {
                    state,
                    partition_epoch,
                };
                ctx.leadership.insert(tp.clone(), leadership.clone());
                return Ok(Some(leadership));
            }
        }
    }
}
