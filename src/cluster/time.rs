//! The broker's clock (Kafka's `org.apache.kafka.common.utils.Time`): wall-clock milliseconds
//! for record timestamps, segment times and retention. [`SystemTime`] reads the system clock;
//! [`MockTime`] is a manual clock for tests, which moves only when told to.
//!
//! Waits with deadlines (the purgatory, timers) run on tokio's clock instead, which tests pause
//! and advance with `tokio::time::pause`/`advance`.

use std::fmt::Debug;
use std::sync::Arc;
#[cfg(test)]
use std::sync::atomic::{AtomicI64, Ordering};

/// A source of wall-clock time in milliseconds since the Unix epoch.
pub trait Time: Debug + Send + Sync {
    fn milliseconds(&self) -> i64;
}

/// The system clock. A clock before 1970 reads 0; one past `i64::MAX` ms saturates.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SystemTime;

impl Time for SystemTime {
    fn milliseconds(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// The shared system clock, as components take it.
pub(crate) fn system() -> Arc<dyn Time> {
    Arc::new(SystemTime)
}

/// A manual clock for tests: it reads what it was set to.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct MockTime {
    now_ms: AtomicI64,
}

#[cfg(test)]
impl MockTime {
    pub(crate) fn new(now_ms: i64) -> Self {
        MockTime {
            now_ms: AtomicI64::new(now_ms),
        }
    }

    /// Moves the clock forward by `ms` (Kafka's `MockTime.sleep`).
    pub(crate) fn sleep(&self, ms: i64) {
        self.now_ms.fetch_add(ms, Ordering::SeqCst);
    }

    pub(crate) fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }
}

#[cfg(test)]
impl Time for MockTime {
    fn milliseconds(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mock_clock_moves_only_when_told() {
        let t = MockTime::new(1_000);
        assert_eq!(t.milliseconds(), 1_000);
        t.sleep(250);
        assert_eq!(t.milliseconds(), 1_250);
        t.set(5);
        assert_eq!(t.milliseconds(), 5);
    }

    #[test]
    fn the_system_clock_is_after_2020() {
        assert!(SystemTime.milliseconds() > 1_577_836_800_000);
    }
}
