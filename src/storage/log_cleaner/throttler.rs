//! The cleaner's I/O throttle (Kafka's `Throttler` as `LogCleaner` builds it): every 300 ms of
//! observed reads and writes, if their rate was above `log.cleaner.io.max.bytes.per.second`,
//! sleep long enough to bring it back to that rate. One throttle is shared by every cleaner
//! thread, so the limit is for all of them together.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::cluster::sync::lock;

const CHECK_INTERVAL: Duration = Duration::from_millis(300);

#[derive(Debug)]
struct Period {
    start: Instant,
    observed: f64,
}

#[derive(Debug)]
pub struct Throttler {
    desired_rate_per_sec: f64,
    period: Mutex<Period>,
}

impl Throttler {
    pub fn new(desired_rate_per_sec: f64) -> Self {
        Throttler {
            desired_rate_per_sec,
            period: Mutex::new(Period {
                start: Instant::now(),
                observed: 0.0,
            }),
        }
    }

    /// Counts `bytes` of I/O and sleeps if the rate is over the limit. The sleep is cut short
    /// when `cancelled` turns true (checked every 100 ms), so shutdown is not held up.
    pub fn maybe_throttle(&self, bytes: u64, cancelled: &dyn Fn() -> bool) {
        if !self.desired_rate_per_sec.is_finite() || self.desired_rate_per_sec >= f64::MAX {
            return;
        }
        let sleep = {
            let mut period = lock(&self.period);
            period.observed += bytes as f64;
            let elapsed = period.start.elapsed();
            if elapsed <= CHECK_INTERVAL || period.observed <= 0.0 {
                return;
            }
            let rate = period.observed / elapsed.as_secs_f64();
            let sleep = if rate > self.desired_rate_per_sec && self.desired_rate_per_sec > 0.0 {
                let wanted = period.observed / self.desired_rate_per_sec;
                Duration::from_secs_f64((wanted - elapsed.as_secs_f64()).max(0.0))
            } else {
                Duration::ZERO
            };
            period.start = Instant::now() + sleep;
            period.observed = 0.0;
            sleep
        };
        let until = Instant::now() + sleep;
        while !cancelled() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_to_the_desired_rate_and_not_without_a_limit() {
        let unlimited = Throttler::new(f64::MAX);
        let start = Instant::now();
        for _ in 0..1000 {
            unlimited.maybe_throttle(1 << 30, &|| false);
        }
        assert!(start.elapsed() < Duration::from_millis(200));
        // 100 KB/s: 40 KB observed over ~310 ms must stretch to about 400 ms.
        let limited = Throttler::new(100_000.0);
        let start = Instant::now();
        limited.maybe_throttle(20_000, &|| false);
        std::thread::sleep(Duration::from_millis(310));
        limited.maybe_throttle(20_000, &|| false);
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(390), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }
}
