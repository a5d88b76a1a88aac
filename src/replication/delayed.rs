//! The purgatory's waiting, Kafka's `DelayedOperationPurgatory` reduced to what a task-per-
//! connection broker needs: a delayed operation registers one [`Notify`] with every partition it
//! watches, re-checks its condition, and sleeps until a partition's offsets move or its deadline
//! passes. Registering before checking means a change in between is never missed. At shutdown
//! every wait ends at once, as Kafka's purgatories are drained when the broker stops.

use std::sync::Arc;

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::partition::Partition;

/// A registration on a set of partitions, made before the condition is checked.
#[derive(Debug)]
pub(crate) struct PartitionWatch {
    notify: Arc<Notify>,
}

impl PartitionWatch {
    /// Watches `partitions` for their next change of log end or high watermark.
    pub(crate) fn register<'a>(partitions: impl IntoIterator<Item = &'a Arc<Partition>>) -> Self {
        let notify = Arc::new(Notify::new());
        for p in partitions {
            p.register_waiter(&notify);
        }
        PartitionWatch { notify }
    }

    /// Waits for a change on any watched partition; `false` when `deadline` passed first or the
    /// broker is shutting down (`shutdown` cancelled), so that a delayed operation completes
    /// with what it has instead of holding the shutdown up for its whole timeout.
    pub(crate) async fn wait(self, deadline: Instant, shutdown: &CancellationToken) -> bool {
        tokio::select! {
            _ = self.notify.notified() => true,
            _ = tokio::time::sleep_until(deadline) => false,
            _ = shutdown.cancelled() => false,
        }
    }
}
