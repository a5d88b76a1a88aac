//! The purgatory's waiting, Kafka's `DelayedOperationPurgatory` reduced to what a task-per-
//! connection broker needs: a delayed operation registers one [`Notify`] with every partition it
//! watches, re-checks its condition, and sleeps until a partition's offsets move or its deadline
//! passes. Registering before checking means a change in between is never missed. At shutdown
//! every wait ends at once, as Kafka's purgatories are drained when the broker stops.
//!
//! A watch counts itself in its purgatory's [`PurgatorySize`] while it is registered: one
//! operation, and one watcher per partition watched (Kafka's NumDelayedOperations and
//! PurgatorySize, which count an operation under each key it watches).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::partition::Partition;

/// What one purgatory (Produce or Fetch) holds now: the operations waiting and their watchers
/// (an operation counts once per partition it watches).
#[derive(Debug, Default)]
pub(crate) struct PurgatorySize {
    operations: AtomicU64,
    watchers: AtomicU64,
}

impl PurgatorySize {
    /// Kafka's `NumDelayedOperations`.
    pub(crate) fn operations(&self) -> u64 {
        self.operations.load(Ordering::Relaxed)
    }

    /// Kafka's `PurgatorySize`.
    pub(crate) fn watchers(&self) -> u64 {
        self.watchers.load(Ordering::Relaxed)
    }
}

/// A registration on a set of partitions, made before the condition is checked.
#[derive(Debug)]
pub(crate) struct PartitionWatch {
    notify: Arc<Notify>,
    purgatory: Arc<PurgatorySize>,
    watched: u64,
}

impl PartitionWatch {
    /// Watches `partitions` for their next change of log end or high watermark, counted in
    /// `purgatory` until dropped.
    pub(crate) fn register<'a>(
        purgatory: &Arc<PurgatorySize>,
        partitions: impl IntoIterator<Item = &'a Arc<Partition>>,
    ) -> Self {
        let notify = Arc::new(Notify::new());
        let mut watched = 0;
        for p in partitions {
            p.register_waiter(&notify);
            watched += 1;
        }
        purgatory.operations.fetch_add(1, Ordering::Relaxed);
        purgatory.watchers.fetch_add(watched, Ordering::Relaxed);
        PartitionWatch {
            notify,
            purgatory: Arc::clone(purgatory),
            watched,
        }
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

impl Drop for PartitionWatch {
    fn drop(&mut self) {
        self.purgatory.operations.fetch_sub(1, Ordering::Relaxed);
        self.purgatory
            .watchers
            .fetch_sub(self.watched, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{LeaderAndIsr, TopicPartition};
    use crate::replication::replica_manager::{TempReplicaManager, become_compacted_replica};

    #[tokio::test]
    async fn a_watch_counts_in_its_purgatory_until_its_wait_ends() {
        let trm = TempReplicaManager::new(0, 1_000_000);
        for p in 0..2 {
            become_compacted_replica(
                &trm.rm,
                &TopicPartition::new("t", p),
                vec![0],
                LeaderAndIsr::new(0, vec![0]),
            );
        }
        let partitions = trm.rm.all_partitions();
        let purgatory = Arc::new(PurgatorySize::default());
        let watch = PartitionWatch::register(&purgatory, &partitions);
        let other = PartitionWatch::register(&purgatory, partitions.iter().take(1));
        assert_eq!((purgatory.operations(), purgatory.watchers()), (2, 3));
        drop(other);
        assert_eq!((purgatory.operations(), purgatory.watchers()), (1, 2));
        let shutdown = CancellationToken::new();
        assert!(!watch.wait(Instant::now(), &shutdown).await, "timed out");
        assert_eq!((purgatory.operations(), purgatory.watchers()), (0, 0));
    }
}
