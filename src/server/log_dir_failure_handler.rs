//! Kafka's `LogDirFailureHandler`: takes each failed log dir's partitions offline, in the
//! replica manager (they answer KAFKA_STORAGE_ERROR) and in the cluster's view, and halts the
//! broker when no log dir is left.
//!
//! The cluster's view is what Kafka's ZooKeeper-mode controller makes of a broker's log dir
//! event for a partition whose only live replica was on the dir: the replica leaves the
//! leadership (leader -1, leader epoch + 1, the ISR kept as its last member, as
//! `doRemoveReplicasFromIsr` does) and Metadata lists it among the offline replicas, so clients
//! get LEADER_NOT_AVAILABLE. The single-node broker is its own controller and writes the
//! partition state znode itself; in a cluster the broker will instead notify the controller
//! through `/log_dir_event_notification` (not done yet).

use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::{BrokerId, TopicPartition};
use crate::replication::ReplicaManager;
use crate::zk::ZkClient;
use crate::zk::zk_data::{self, PartitionState};

use super::metadata_cache::MetadataCache;

/// What the handler needs.
#[derive(Debug, Clone)]
pub struct LogDirFailureHandler {
    pub broker_id: BrokerId,
    pub controller_epoch: i32,
    pub replica_manager: Arc<ReplicaManager>,
    pub metadata_cache: Arc<MetadataCache>,
    pub zk: Arc<dyn ZkClient>,
    /// Set to the reason when the broker must halt.
    pub fatal: Arc<watch::Sender<Option<String>>>,
}

impl LogDirFailureHandler {
    /// Handles failed dirs until `shutdown`.
    pub fn spawn(self, tracker: &TaskTracker, shutdown: CancellationToken) {
        tracker.spawn(async move {
            let channel = Arc::clone(self.replica_manager.log_manager().failure_channel());
            loop {
                let dir = tokio::select! {
                    _ = shutdown.cancelled() => break,
                    dir = channel.take_next_offline_log_dir() => dir,
                };
                let rm = Arc::clone(&self.replica_manager);
                let failed = dir.clone();
                let offline =
                    match tokio::task::spawn_blocking(move || rm.handle_log_dir_failure(&failed))
                        .await
                    {
                        Ok(offline) => offline,
                        Err(err) => {
                            tracing::error!(%err, "log dir failure handling panicked");
                            continue;
                        }
                    };
                if offline.live_log_dirs.is_empty() {
                    let dirs: Vec<String> = channel
                        .offline_dirs()
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect();
                    let reason = format!(
                        "Shutdown broker because all log dirs in {} have failed",
                        dirs.join(", ")
                    );
                    tracing::error!("{reason}");
                    let _ = self.fatal.send(Some(reason));
                    break;
                }
                for tp in &offline.current {
                    if let Err(err) = self.take_leadership_offline(tp).await {
                        tracing::error!(topic_partition = %tp, %err, "cannot record the partition offline");
                    }
                }
            }
        });
    }

    /// The controller's side for one partition whose replica went offline with its dir.
    async fn take_leadership_offline(&self, tp: &TopicPartition) -> Result<(), crate::zk::ZkError> {
        let path = zk_data::topic_partition_state_path(tp);
        let (data, stat) = self.zk.get_data(&path, false).await?;
        let Ok(state) = PartitionState::decode(&data) else {
            return Ok(());
        };
        let new_state = if state.leader == self.broker_id {
            let new_state = PartitionState {
                leader: -1,
                leader_epoch: state.leader_epoch + 1,
                isr: state.shrunk_isr(|id| id != self.broker_id),
                controller_epoch: self.controller_epoch,
                leader_recovery_state: state.leader_recovery_state,
            };
            self.zk
                .set_data(&path, &new_state.encode(), stat.version)
                .await?;
            new_state
        } else {
            state
        };
        if let Some(mut p) = self.metadata_cache.partition(&tp.topic, tp.partition) {
            p.leader = new_state.leader;
            p.leader_epoch = new_state.leader_epoch;
            p.isr = new_state.isr;
            if !p.offline_replicas.contains(&self.broker_id) {
                p.offline_replicas.push(self.broker_id);
            }
            self.metadata_cache
                .update_partition(&tp.topic, tp.partition, p);
        }
        Ok(())
    }
}
