//! The partition state znodes, `/brokers/topics/<t>/partitions/<p>/state`: read, created and
//! conditionally updated (Kafka's `getTopicPartitionStates`, `createTopicPartitionStatesRaw`,
//! `updateLeaderAndIsr`); each controller write is fenced by the controller epoch.
//!
//! The batch forms pipeline their requests as Kafka's `ZooKeeperClient.handleRequests` does:
//! up to [`KafkaZkClient::max_in_flight`] requests are on the session at once, so a controller
//! creating or electing thousands of partitions waits for one round trip (and one ZooKeeper
//! group commit) per window instead of one per znode. ZooKeeper answers a session's requests in
//! the order it sent them, and the results come back in input order. On an error the batch
//! stops and returns it; requests already sent may have been applied, which is no different
//! from a sequence of single writes failing part-way: the controller that gets the error
//! resigns or reads the znodes again.

use futures_util::stream::{self, StreamExt, TryStreamExt};

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

    /// The state znodes of `tps` and their zkVersions, in order, pipelined.
    pub async fn get_topic_partition_states(
        &self,
        tps: &[TopicPartition],
    ) -> Result<Vec<Option<(PartitionState, i32)>>, KafkaZkError> {
        let reads: Vec<_> = tps
            .iter()
            .map(|tp| self.get_topic_partition_state(tp))
            .collect();
        stream::iter(reads)
            .buffered(self.max_in_flight)
            .try_collect()
            .await
    }

    /// [`KafkaZkClient::create_topic_partition_state`] for many partitions, pipelined: each
    /// topic's `partitions` znode once, then every partition's znode, then every fenced state
    /// znode. Per partition, in order: `Some(partition_epoch)` created, `None` a state znode
    /// already existed (written by an earlier controller).
    pub async fn create_topic_partition_states(
        &self,
        epoch: ControllerEpoch,
        states: &[(TopicPartition, PartitionState)],
    ) -> Result<Vec<Option<i32>>, KafkaZkError> {
        let mut topics: Vec<&str> = states.iter().map(|(tp, _)| tp.topic.as_str()).collect();
        topics.sort_unstable();
        topics.dedup();
        let parents = topics
            .iter()
            .map(|t| zk_data::topic_partitions_path(t))
            .chain(
                states
                    .iter()
                    .map(|(tp, _)| zk_data::topic_partition_path(tp)),
            );
        let parents: Vec<_> = parents
            .map(|path| async move {
                match self.zk.create(&path, b"", CreateMode::Persistent).await {
                    Ok(_) | Err(ZkError::NodeExists(_)) => Ok(()),
                    Err(e) => Err(KafkaZkError::from(e)),
                }
            })
            .collect();
        stream::iter(parents)
            .buffered(self.max_in_flight)
            .try_collect::<Vec<()>>()
            .await?;
        let creates: Vec<_> = states
            .iter()
            .map(|(tp, state)| async move {
                let op = Op::Create {
                    path: zk_data::topic_partition_state_path(tp),
                    data: state.encode(),
                    mode: CreateMode::Persistent,
                };
                match self.fenced(epoch, op).await {
                    // Created at version 0 (a real ZooKeeper's multi answer has no stat).
                    Ok(_) => Ok(Some(0)),
                    Err(KafkaZkError::Zk(ZkError::NodeExists(_))) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .collect();
        stream::iter(creates)
            .buffered(self.max_in_flight)
            .try_collect()
            .await
    }

    /// [`KafkaZkClient::update_leader_and_isr`] for many partitions (each a state, and the
    /// partition epoch it was read at), pipelined; the outcomes in order.
    pub async fn update_leader_and_isrs(
        &self,
        epoch: ControllerEpoch,
        writes: &[(TopicPartition, PartitionState, i32)],
    ) -> Result<Vec<StateWrite>, KafkaZkError> {
        let writes: Vec<_> = writes
            .iter()
            .map(|(tp, state, partition_epoch)| {
                self.update_leader_and_isr(epoch, tp, state, *partition_epoch)
            })
            .collect();
        stream::iter(writes)
            .buffered(self.max_in_flight)
            .try_collect()
            .await
    }
}
