//! The partition state znodes, `/brokers/topics/<t>/partitions/<p>/state`: read, created and
//! conditionally updated one at a time (Kafka's `getTopicPartitionState`,
//! `createTopicPartitionStatesRaw`, `updateLeaderAndIsr`); each controller write is fenced by
//! the controller epoch.

use crate::cluster::TopicPartition;
use crate::zk::client::{CreateMode, Op, OpResult, ZkError};
use crate::zk::zk_data::{self, PartitionState};

use super::{ControllerEpoch, KafkaZkClient, KafkaZkError, StateWrite, malformed};

impl KafkaZkClient {
    /// The state znode of `tp` and its zkVersion.
    pub async fn get_topic_partition_state(
        &self,
        tp: &TopicPartition,
    ) -> Result<Option<(PartitionState, i32)>, KafkaZkError> {
        let path = zk_data::topic_partition_state_path(tp);
        match self.get_opt(&path, false).await? {
            Some((data, stat)) => Ok(Some((
                PartitionState::decode(&data).map_err(malformed(&path))?,
                stat.version,
            ))),
            None => Ok(None),
        }
    }

    /// Kafka's `createTopicPartitionStatesRaw`: `/brokers/topics/<t>/partitions/<p>` (parents
    /// first, unfenced, as Kafka's `createTopicPartitions`) and then the persistent state znode,
    /// fenced. Returns the new partition epoch (0), or `NodeExists` in `Zk` when a state exists.
    pub async fn create_topic_partition_state(
        &self,
        epoch: ControllerEpoch,
        tp: &TopicPartition,
        state: &PartitionState,
    ) -> Result<i32, KafkaZkError> {
        for path in [
            zk_data::topic_partitions_path(&tp.topic),
            zk_data::topic_partition_path(tp),
        ] {
            match self.zk.create(&path, b"", CreateMode::Persistent).await {
                Ok(_) | Err(ZkError::NodeExists(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.fenced(
            epoch,
            Op::Create {
                path: zk_data::topic_partition_state_path(tp),
                data: state.encode(),
                mode: CreateMode::Persistent,
            },
        )
        .await?;
        // A znode is created at version 0; the multi's answer is not read for it, since a real
        // ZooKeeper sends no stat there.
        Ok(0)
    }

    /// Kafka's `updateLeaderAndIsr` for one partition: a conditional set of the state znode at
    /// `partition_epoch`, fenced by the controller epoch.
    pub async fn update_leader_and_isr(
        &self,
        epoch: ControllerEpoch,
        tp: &TopicPartition,
        state: &PartitionState,
        partition_epoch: i32,
    ) -> Result<StateWrite, KafkaZkError> {
        // ZooKeeper's version -1 matches any version: a state write is never unconditional.
        if partition_epoch < 0 {
            tracing::error!(partition = %tp, partition_epoch,
                "refusing to write a partition state at no partition epoch");
            return Ok(StateWrite::Stale);
        }
        let op = Op::SetData {
            path: zk_data::topic_partition_state_path(tp),
            data: state.encode(),
            version: partition_epoch,
        };
        match self.fenced(epoch, op).await {
            Ok(OpResult::SetData { stat }) => Ok(StateWrite::Written {
                partition_epoch: stat.version,
            }),
            Ok(_) => Ok(StateWrite::Written {
                partition_epoch: partition_epoch + 1,
            }),
            Err(KafkaZkError::Zk(ZkError::BadVersion(_))) => Ok(StateWrite::Stale),
            Err(e) => Err(e),
        }
    }
}
