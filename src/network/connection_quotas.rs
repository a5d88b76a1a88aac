//! Kafka's `ConnectionQuotas` and the request memory pool: the limits that keep many or hostile
//! connections from exhausting the broker.
//!
//! - `max.connections`: at most this many connections over all listeners; when they are all
//!   taken the acceptors stop accepting until one closes (Kafka's acceptor waits the same way;
//!   the kernel's backlog holds the newcomers).
//! - `max.connections.per.ip` with `max.connections.per.ip.overrides` (`host:count,...`, by IP
//!   address): a connection over its address's limit is closed at once, as Kafka closes it.
//! - `queued.max.request.bytes` (Kafka's `MemoryPool`, `super::memory_pool`): the bytes of
//!   request frames read and not yet answered. A connection that has read a frame's size prefix
//!   waits for that many bytes of the pool before it reads the body, so many large frames at once
//!   wait for memory instead of taking it; the bytes return to the pool once the request's
//!   response is written. -1 (the default) is no pool.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cluster::sync::lock;

use super::memory_pool::{MemoryPool, PooledBytes};

/// The connection limits, as configured; the default limits nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectionLimits {
    /// `max.connections`; `None`: unlimited (Kafka's default, `Int.MaxValue`).
    pub max_connections: Option<usize>,
    /// `max.connections.per.ip`; `None`: unlimited.
    pub max_connections_per_ip: Option<usize>,
    /// `max.connections.per.ip.overrides`, by address.
    pub max_connections_per_ip_overrides: HashMap<IpAddr, usize>,
    /// `queued.max.request.bytes`; `None`: no pool.
    pub queued_max_request_bytes: Option<usize>,
}

/// A connection's slot: held for the connection's life, released on drop.
#[derive(Debug)]
pub(crate) struct ConnectionSlot {
    quotas: Arc<ConnectionQuotas>,
    ip: IpAddr,
    _broker_wide: Option<OwnedSemaphorePermit>,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut per_ip = lock(&self.quotas.per_ip);
        if let Some(count) = per_ip.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                per_ip.remove(&self.ip);
            }
        }
    }
}

/// The broker-wide connection and memory accounting, shared by every acceptor and connection.
#[derive(Debug)]
pub(crate) struct ConnectionQuotas {
    limits: ConnectionLimits,
    broker_wide: Option<Arc<Semaphore>>,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
    pool: Option<Arc<MemoryPool>>,
}

impl ConnectionQuotas {
    pub(crate) fn new(limits: ConnectionLimits) -> Arc<Self> {
        Arc::new(ConnectionQuotas {
            broker_wide: limits.max_connections.map(|n| Arc::new(Semaphore::new(n))),
            pool: limits.queued_max_request_bytes.map(MemoryPool::new),
            per_ip: Mutex::new(HashMap::new()),
            limits,
        })
    }

    /// Waits until a connection may be accepted under `max.connections`; the permit is the
    /// connection's once [`ConnectionQuotas::admit`] takes it.
    pub(crate) async fn wait_for_slot(&self) -> Option<OwnedSemaphorePermit> {
        match &self.broker_wide {
            // The semaphore is never closed.
            Some(s) => Arc::clone(s).acquire_owned().await.ok(),
            None => None,
        }
    }

    /// Admits an accepted connection from `ip`, or refuses it (`Err` with the limit) when its
    /// address already has as many as `max.connections.per.ip` allows.
    pub(crate) fn admit(
        self: &Arc<Self>,
        ip: IpAddr,
        broker_wide: Option<OwnedSemaphorePermit>,
    ) -> Result<ConnectionSlot, usize> {
        let limit = self
            .limits
            .max_connections_per_ip_overrides
            .get(&ip)
            .copied()
            .or(self.limits.max_connections_per_ip);
        let mut per_ip = lock(&self.per_ip);
        let count = per_ip.entry(ip).or_default();
        if let Some(limit) = limit
            && *count >= limit
        {
            if *count == 0 {
                per_ip.remove(&ip);
            }
            return Err(limit);
        }
        *count += 1;
        Ok(ConnectionSlot {
            quotas: Arc::clone(self),
            ip,
            _broker_wide: broker_wide,
        })
    }

    /// Takes `bytes` from the memory pool for a frame of that size, waiting until they are free;
    /// at once when there is no pool.
    pub(crate) async fn allocate(&self, bytes: usize) -> PooledBytes {
        let Some(pool) = &self.pool else {
            return PooledBytes::unpooled();
        };
        if let Some(pooled) = pool.try_allocate(bytes) {
            return pooled;
        }
        // Operators see which limit holds a connection back (Kafka mutes it silently).
        tracing::info!(
            frame_bytes = bytes,
            free_bytes = pool.available(),
            pool_bytes = pool.size(),
            "a request waits for memory: queued.max.request.bytes is in use"
        );
        // A frame is at most socket.request.max.bytes, which the pool's size is at least (the
        // configuration checks it), so the wait always ends.
        pool.allocate(bytes).await
    }

    /// Connections open now from `ip`.
    #[cfg(test)]
    fn open_from(&self, ip: IpAddr) -> usize {
        lock(&self.per_ip).get(&ip).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn per_ip_limits_and_overrides_count_open_connections() {
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            max_connections_per_ip: Some(1),
            max_connections_per_ip_overrides: [(b, 2)].into_iter().collect(),
            ..ConnectionLimits::default()
        });
        let first = quotas.admit(a, None).unwrap();
        assert_eq!(quotas.admit(a, None).unwrap_err(), 1);
        let _b1 = quotas.admit(b, None).unwrap();
        let _b2 = quotas.admit(b, None).unwrap();
        assert_eq!(quotas.admit(b, None).unwrap_err(), 2);
        drop(first);
        assert_eq!(quotas.open_from(a), 0);
        assert!(quotas.admit(a, None).is_ok());
    }

    #[tokio::test]
    async fn max_connections_holds_the_acceptor() {
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            max_connections: Some(1),
            ..ConnectionLimits::default()
        });
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let permit = quotas.wait_for_slot().await;
        let slot = quotas.admit(ip, permit).unwrap();
        let next =
            tokio::time::timeout(std::time::Duration::from_millis(50), quotas.wait_for_slot());
        assert!(next.await.is_err());
        drop(slot);
        assert!(
            tokio::time::timeout(std::time::Duration::from_secs(1), quotas.wait_for_slot())
                .await
                .unwrap()
                .is_some()
        );
    }
}
