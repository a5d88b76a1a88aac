//! Kafka's `LogDirFailureHandler`: takes each failed log dir's partitions offline in the replica
//! manager (they answer KAFKA_STORAGE_ERROR, their fetchers stop), tells the controller through
//! `/log_dir_event_notification` (`propagateLogDirEvent`), and halts the broker when no log dir
//! is left.
//!
//! The notification names only this broker. The controller (kcli's or Kafka's) then sends a
//! LeaderAndIsr for every replica here, learns the offline ones from the KAFKA_STORAGE_ERROR
//! answers, elects other leaders from the ISR, and tells every broker through UpdateMetadata,
//! so Metadata lists the replica as offline. The single-node broker is its own controller and
//! goes the same way over the embedded store.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::BrokerId;
use crate::replication::ReplicaManager;
use crate::zk::ZkClient;
use crate::zk::kafka_zk_client::KafkaZkClient;

/// What the handler needs.
#[derive(Debug, Clone)]
pub(crate) struct LogDirFailureHandler {
    pub broker_id: BrokerId,
    pub replica_manager: Arc<ReplicaManager>,
    pub zk: Arc<dyn ZkClient>,
    /// Set to the reason when the broker must halt.
    pub fatal: Arc<watch::Sender<Option<String>>>,
}

/// How long a failed notification waits before it is written again.
const NOTIFY_RETRY_BACKOFF: Duration = Duration::from_secs(1);

impl LogDirFailureHandler {
    /// Handles failed dirs until `shutdown`.
    pub(crate) fn spawn(self, tracker: &TaskTracker, shutdown: CancellationToken) {
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
                self.notify_controller(&shutdown).await;
            }
        });
    }

    /// Writes this broker's log dir event, again after a failure (a lost session, say) until
    /// it is written or the broker stops: the controller learns of the offline replicas only
    /// from it.
    async fn notify_controller(&self, shutdown: &CancellationToken) {
        let zk = KafkaZkClient::new(Arc::clone(&self.zk));
        loop {
            match zk.propagate_log_dir_event(self.broker_id).await {
                Ok(path) => {
                    tracing::info!(%path, "told the controller of the failed log dir");
                    return;
                }
                Err(err) => {
                    tracing::warn!(%err, "cannot write the log dir event; retrying");
                }
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(NOTIFY_RETRY_BACKOFF) => {}
            }
        }
    }
}
