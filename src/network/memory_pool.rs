//! Kafka's `MemoryPool` for request frames (`queued.max.request.bytes`): the bytes of frames
//! read and not yet answered.
//!
//! A frame takes its whole declared size before its body is read, so a frame that was admitted
//! always completes without more memory (charging as bytes arrive could leave every frame
//! half-read and waiting). Unlike a FIFO semaphore, a frame that does not fit never holds back a
//! smaller one that does: a few huge frames whose bodies trickle in (slow or hostile clients)
//! wait for memory while ordinary requests go on in what is left. Each release wakes every
//! waiter to retry, largest or smallest, in no particular order (as Kafka unmutes channels).
//!
//! Invariant: `available` never exceeds the pool's size and the bytes held by live
//! [`PooledBytes`] add up to `size - available`.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::cluster::sync::lock;

/// A pool of `size` bytes.
#[derive(Debug)]
pub(crate) struct MemoryPool {
    size: usize,
    available: Mutex<usize>,
    released: Notify,
}

/// A frame's bytes from the pool, returned when dropped.
#[derive(Debug)]
pub(crate) struct PooledBytes {
    pool: Option<Arc<MemoryPool>>,
    bytes: usize,
}

impl PooledBytes {
    /// Bytes that come from no pool (the broker runs without one).
    pub(crate) fn unpooled() -> Self {
        PooledBytes {
            pool: None,
            bytes: 0,
        }
    }
}

impl Drop for PooledBytes {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            *lock(&pool.available) += self.bytes;
            pool.released.notify_waiters();
        }
    }
}

impl MemoryPool {
    pub(crate) fn new(size: usize) -> Arc<Self> {
        Arc::new(MemoryPool {
            size,
            available: Mutex::new(size),
            released: Notify::new(),
        })
    }

    /// The pool's size.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Bytes free now.
    pub(crate) fn available(&self) -> usize {
        *lock(&self.available)
    }

    /// Takes `bytes` at once if they are free.
    pub(crate) fn try_allocate(self: &Arc<Self>, bytes: usize) -> Option<PooledBytes> {
        let mut available = lock(&self.available);
        // More than the pool holds can never be had; the caller keeps frames within it.
        let bytes = bytes.min(self.size);
        if *available < bytes {
            return None;
        }
        *available -= bytes;
        Some(PooledBytes {
            pool: Some(Arc::clone(self)),
            bytes,
        })
    }

    /// Takes `bytes`, waiting until they are free (a request larger than the pool takes all of
    /// it).
    pub(crate) async fn allocate(self: &Arc<Self>, bytes: usize) -> PooledBytes {
        loop {
            // Registered before the check, so a release between the check and the wait is seen.
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if let Some(pooled) = self.try_allocate(bytes) {
                return pooled;
            }
            released.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_frame_waits_until_its_bytes_are_returned() {
        let pool = MemoryPool::new(100);
        let held = pool.allocate(80).await;
        let waiting = tokio::time::timeout(Duration::from_millis(50), pool.allocate(30));
        assert!(
            waiting.await.is_err(),
            "30 more bytes than the pool has free"
        );
        assert_eq!(pool.available(), 20);
        drop(held);
        let _now = tokio::time::timeout(Duration::from_secs(1), pool.allocate(30))
            .await
            .unwrap();
        assert_eq!(pool.available(), 70);
    }

    #[tokio::test]
    async fn a_waiting_large_frame_does_not_hold_back_a_small_one() {
        let pool = MemoryPool::new(100);
        let held = pool.allocate(60).await;
        let large = tokio::spawn({
            let pool = Arc::clone(&pool);
            async move { pool.allocate(60).await }
        });
        tokio::task::yield_now().await;
        // The large one waits, and the 40 bytes left are not reserved for it.
        let small = tokio::time::timeout(Duration::from_secs(1), pool.allocate(40))
            .await
            .expect("a small frame that fits goes ahead");
        assert!(!large.is_finished());
        drop((held, small));
        let large = tokio::time::timeout(Duration::from_secs(1), large)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(pool.available(), 40);
        drop(large);
        assert_eq!(pool.available(), pool.size());
    }
}
