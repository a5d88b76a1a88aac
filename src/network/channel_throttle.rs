//! Kafka's channel muting for quotas (KIP-219): a handler that throttles a client tells the
//! client's connection not to read its next request before a deadline. The response itself goes
//! out at once (it carries `throttle_time_ms`); only reading waits, so a client that ignores
//! the throttle time is held back all the same. The network layer knows nothing of quotas: it
//! only honours the deadline, and tells a handler that asked how long writing its answer took
//! (the network thread's share of Kafka's request quota).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One connection's mute deadline, shared by its requests; cloning is a reference count.
///
/// Invariant: the deadline only moves later (two throttles overlap, they do not add up), and
/// it is kept as nanoseconds after `base`, 0 meaning none.
#[derive(Debug, Clone)]
pub struct ChannelThrottle(Arc<Deadline>);

/// Called with the time the connection spent writing a request's answer (Kafka's
/// `recordNetworkThreadTimeCallback`).
pub struct NetworkTimeCallback(Box<dyn FnOnce(Duration) + Send>);

impl NetworkTimeCallback {
    pub fn new(callback: impl FnOnce(Duration) + Send + 'static) -> Self {
        NetworkTimeCallback(Box::new(callback))
    }

    pub(crate) fn call(self, time: Duration) {
        (self.0)(time);
    }
}

impl std::fmt::Debug for NetworkTimeCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetworkTimeCallback(..)")
    }
}

#[derive(Debug)]
struct Deadline {
    base: Instant,
    until_nanos: AtomicU64,
    /// Whether `network_time` holds a callback, so that requests without one take no lock.
    has_network_time: AtomicBool,
    network_time: Mutex<Option<NetworkTimeCallback>>,
}

impl ChannelThrottle {
    pub(crate) fn new() -> Self {
        ChannelThrottle(Arc::new(Deadline {
            base: Instant::now(),
            until_nanos: AtomicU64::new(0),
            has_network_time: AtomicBool::new(false),
            network_time: Mutex::new(None),
        }))
    }

    /// Mutes the connection for `duration` from now: it reads its next request no sooner.
    pub fn throttle_for(&self, duration: Duration) {
        if duration.is_zero() {
            return;
        }
        let until = Instant::now() + duration;
        let nanos = until.saturating_duration_since(self.0.base).as_nanos();
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX).max(1);
        self.0.until_nanos.fetch_max(nanos, Ordering::Relaxed);
    }

    /// Asks to be told how long writing the answer of the request being handled takes. A
    /// connection hands over its next request only after the handling of this one returned, so
    /// the callback belongs to the request that set it.
    pub fn on_network_time(&self, callback: NetworkTimeCallback) {
        let mut slot = self
            .0
            .network_time
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *slot = Some(callback);
        self.0.has_network_time.store(true, Ordering::Release);
    }

    /// The callback the handling of the request just handed back set, if any.
    pub(crate) fn take_network_time_callback(&self) -> Option<NetworkTimeCallback> {
        if !self.0.has_network_time.swap(false, Ordering::Acquire) {
            return None;
        }
        self.0
            .network_time
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// When the connection may read again, if that is still to come.
    pub(crate) fn muted_until(&self, now: Instant) -> Option<Instant> {
        let nanos = self.0.until_nanos.load(Ordering::Relaxed);
        if nanos == 0 {
            return None;
        }
        let until = self.0.base + Duration::from_nanos(nanos);
        (until > now).then_some(until)
    }
}

impl Default for ChannelThrottle {
    fn default() -> Self {
        ChannelThrottle::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throttle_mutes_until_its_deadline_and_overlapping_ones_keep_the_later() {
        let throttle = ChannelThrottle::new();
        let now = Instant::now();
        assert_eq!(throttle.muted_until(now), None);
        throttle.throttle_for(Duration::from_millis(500));
        throttle.throttle_for(Duration::from_millis(100));
        let until = throttle.muted_until(Instant::now()).unwrap();
        assert!(until >= now + Duration::from_millis(500));
        assert_eq!(throttle.muted_until(until), None);
        throttle.throttle_for(Duration::ZERO);
        assert_eq!(throttle.muted_until(until), None);
    }

    #[test]
    fn a_network_time_callback_is_taken_once() {
        let throttle = ChannelThrottle::new();
        assert!(throttle.take_network_time_callback().is_none());
        let (tx, rx) = std::sync::mpsc::channel();
        throttle.on_network_time(NetworkTimeCallback::new(move |d| tx.send(d).unwrap()));
        let callback = throttle.take_network_time_callback().unwrap();
        assert!(throttle.take_network_time_callback().is_none());
        callback.call(Duration::from_micros(7));
        assert_eq!(rx.recv().unwrap(), Duration::from_micros(7));
    }
}
