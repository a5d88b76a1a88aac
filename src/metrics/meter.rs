//! Yammer's `Meter`: a count of events and their rates (the mean since creation, and 1, 5 and
//! 15 minute exponentially weighted moving averages, per second), as Kafka's `...PerSec` MBeans
//! have them.
//!
//! Marking is one relaxed atomic add. The moving averages move only when the registry's ticker
//! calls [`Meter::tick`] (every `TICK`, Yammer's interval), which alone writes them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the moving averages take in the events since the last tick (Yammer's 5 seconds).
pub(crate) const TICK: Duration = Duration::from_secs(5);

/// A meter; see the module doc.
#[derive(Debug)]
pub struct Meter {
    count: AtomicU64,
    created: Instant,
    /// The count the last tick saw; only the ticker writes it.
    ticked: AtomicU64,
    /// The 1, 5 and 15 minute rates per second, as `f64` bits; only the ticker writes them.
    rates: [AtomicU64; 3],
    /// Whether a tick has set the rates yet (Yammer starts a rate at the first interval's).
    started: AtomicU64,
}

/// A meter's attributes as JMX shows them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeterSnapshot {
    pub count: u64,
    pub mean_rate: f64,
    pub one_minute_rate: f64,
    pub five_minute_rate: f64,
    pub fifteen_minute_rate: f64,
}

impl MeterSnapshot {
    /// `Count`, `MeanRate`, `OneMinuteRate`, `FiveMinuteRate`, `FifteenMinuteRate`.
    pub fn attributes(&self) -> [(&'static str, f64); 5] {
        [
            ("Count", self.count as f64),
            ("MeanRate", self.mean_rate),
            ("OneMinuteRate", self.one_minute_rate),
            ("FiveMinuteRate", self.five_minute_rate),
            ("FifteenMinuteRate", self.fifteen_minute_rate),
        ]
    }
}

impl Default for Meter {
    fn default() -> Self {
        Meter::new()
    }
}

impl Meter {
    pub fn new() -> Self {
        Meter {
            count: AtomicU64::new(0),
            created: Instant::now(),
            ticked: AtomicU64::new(0),
            rates: Default::default(),
            started: AtomicU64::new(0),
        }
    }

    /// Records `n` events.
    #[inline]
    pub fn mark(&self, n: u64) {
        self.count.fetch_add(n, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Takes the events since the last tick into the moving averages. Called every `TICK` by
    /// one ticker only.
    pub fn tick(&self) {
        let count = self.count();
        let events = count.saturating_sub(self.ticked.swap(count, Ordering::Relaxed));
        let instant_rate = events as f64 / TICK.as_secs_f64();
        let started = self.started.swap(1, Ordering::Relaxed) == 1;
        for (rate, minutes) in self.rates.iter().zip([1.0f64, 5.0, 15.0]) {
            let alpha = 1.0 - (-TICK.as_secs_f64() / 60.0 / minutes).exp();
            let old = f64::from_bits(rate.load(Ordering::Relaxed));
            let new = if started {
                old + alpha * (instant_rate - old)
            } else {
                instant_rate
            };
            rate.store(new.to_bits(), Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> MeterSnapshot {
        let count = self.count();
        let elapsed = self.created.elapsed().as_secs_f64();
        let rate = |i: usize| f64::from_bits(self.rates[i].load(Ordering::Relaxed));
        MeterSnapshot {
            count,
            mean_rate: if elapsed > 0.0 {
                count as f64 / elapsed
            } else {
                0.0
            },
            one_minute_rate: rate(0),
            five_minute_rate: rate(1),
            fifteen_minute_rate: rate(2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_moves_the_rates_toward_the_recent_rate() {
        let meter = Meter::new();
        meter.mark(50);
        meter.tick(); // 10 events a second over the first interval
        let s = meter.snapshot();
        assert_eq!(s.count, 50);
        assert_eq!(s.one_minute_rate, 10.0);
        assert_eq!(s.fifteen_minute_rate, 10.0);
        // Quiet intervals pull the one-minute rate down faster than the fifteen-minute one.
        for _ in 0..12 {
            meter.tick();
        }
        let s = meter.snapshot();
        assert_eq!(s.count, 50);
        assert!(s.one_minute_rate < 4.0, "{s:?}");
        assert!(s.fifteen_minute_rate > 9.0, "{s:?}");
        assert!(s.one_minute_rate < s.five_minute_rate);
        assert!(s.mean_rate > 0.0);
    }
}
