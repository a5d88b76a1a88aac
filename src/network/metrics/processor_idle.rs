//! `kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent`, the share of time the
//! threads doing the network I/O are idle.
//!
//! Kafka's processors are threads that only read and write sockets; kcli has none: every
//! connection is a task on the tokio runtime's worker threads, which do its reads and writes
//! (and the handlers' and replication's work besides). The gauge is the share of the last tick
//! those workers spent parked, averaged over them (tokio's busy-time counters): the question
//! Kafka's gauge answers (how much headroom the threads doing the network I/O have) asked of
//! the threads that do it here. It reads lower than a Kafka broker's under the same load,
//! since the same threads also handle requests. Before the first tick it is measured since the
//! socket server started.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use crate::cluster::sync::lock;

/// No measurement yet: the bits `idle` holds in place of a fraction.
const UNMEASURED: u64 = u64::MAX;

/// The runtime's idle share, measured at each tick.
///
/// Invariant: `idle` is `UNMEASURED` or the bits of a fraction in `[0, 1]`.
#[derive(Debug)]
pub(super) struct RuntimeIdle {
    /// The runtime the connections run on; `None` when made outside one (unit tests).
    handle: Option<Handle>,
    /// When the last tick measured, and the workers' total busy time then.
    last: Mutex<(Instant, Duration)>,
    idle: AtomicU64,
}

impl RuntimeIdle {
    pub(super) fn new() -> Self {
        let handle = Handle::try_current().ok();
        let busy = handle.as_ref().map_or(Duration::ZERO, total_busy);
        RuntimeIdle {
            handle,
            last: Mutex::new((Instant::now(), busy)),
            idle: AtomicU64::new(UNMEASURED),
        }
    }

    /// Measures the share of the time since the last tick the workers were idle.
    pub(super) fn tick(&self) {
        let Some(handle) = &self.handle else {
            return;
        };
        let (now, busy) = (Instant::now(), total_busy(handle));
        let mut last = lock(&self.last);
        if let Some(idle) = idle_share(handle, last.0, last.1, now, busy) {
            self.idle.store(idle.to_bits(), Ordering::Relaxed);
        }
        *last = (now, busy);
    }

    /// The idle share the last tick measured, or before the first tick the share since the
    /// socket server started; `None` outside a runtime.
    pub(super) fn value(&self) -> Option<f64> {
        let bits = self.idle.load(Ordering::Relaxed);
        if bits != UNMEASURED {
            return Some(f64::from_bits(bits));
        }
        let handle = self.handle.as_ref()?;
        let (since, busy_then) = *lock(&self.last);
        idle_share(handle, since, busy_then, Instant::now(), total_busy(handle))
    }
}

/// The workers' idle share between two readings of their busy time; `None` over no time.
fn idle_share(
    handle: &Handle,
    since: Instant,
    busy_then: Duration,
    now: Instant,
    busy_now: Duration,
) -> Option<f64> {
    let workers = handle.metrics().num_workers().max(1);
    let elapsed = now.saturating_duration_since(since).as_secs_f64() * workers as f64;
    (elapsed > 0.0).then(|| {
        let busy_share = busy_now.saturating_sub(busy_then).as_secs_f64() / elapsed;
        (1.0 - busy_share).clamp(0.0, 1.0)
    })
}

/// Every worker's busy time since the runtime started.
fn total_busy(handle: &Handle) -> Duration {
    let metrics = handle.metrics();
    (0..metrics.num_workers())
        .map(|worker| metrics.worker_total_busy_duration(worker))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_idle_runtime_reads_nearly_all_idle_and_a_busy_one_less() {
        let idle = RuntimeIdle::new();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let since_start = idle.value().unwrap();
        assert!(since_start > 0.8, "{since_start}");
        idle.tick();
        let ticked = Instant::now();
        let busy_before = total_busy(&Handle::current());
        let quiet = idle.value().unwrap();
        assert!(quiet > 0.8, "{quiet}");
        // One worker spinning 300 ms of the tick: on two workers, at most what the rest of the
        // tick leaves idle. The tick is measured rather than assumed, since on a loaded machine
        // the spinning task may start late and its worker park late.
        let spin = tokio::spawn(async {
            let until = Instant::now() + Duration::from_millis(300);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        });
        spin.await.unwrap();
        // A worker reports its busy time when it parks, which may be a moment after the task
        // ends (longer on a loaded machine).
        let deadline = Instant::now() + Duration::from_secs(5);
        while total_busy(&Handle::current()) < busy_before + Duration::from_millis(250)
            && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            total_busy(&Handle::current()) >= busy_before + Duration::from_millis(250),
            "the workers never reported the 300 ms spin as busy"
        );
        idle.tick();
        let tick = ticked.elapsed().as_secs_f64();
        let most_idle = 1.0 - 0.3 / (2.0 * tick);
        let busy = idle.value().unwrap();
        assert!(
            busy <= most_idle + 0.05,
            "{busy} idle over a {tick:.3} s tick with 0.3 s of one worker busy"
        );
    }

    #[test]
    fn outside_a_runtime_nothing_is_served() {
        let idle = RuntimeIdle::new();
        idle.tick();
        assert_eq!(idle.value(), None);
    }
}
