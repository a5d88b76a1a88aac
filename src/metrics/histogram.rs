//! Yammer's `Histogram` as Kafka's request and latency MBeans have it (`TotalTimeMs`,
//! `ZooKeeperRequestLatencyMs`): a count and, over recent values, min, max, mean, standard
//! deviation and the 50th, 75th, 95th, 98th, 99th and 99.9th percentiles.
//!
//! Recording is two relaxed atomic adds into log-linear buckets: each power of two is cut into
//! `SUB_BUCKETS` equal parts, so a percentile is reported within 1/`SUB_BUCKETS` of a
//! power of two of the true value (the bucket's midpoint). Values are recorded in microseconds
//! of the unit the metric is named in (milliseconds for `...Ms`).
//!
//! Recent values: Yammer keeps an exponentially decaying sample biased to about the last five
//! minutes. Here the ticker snapshots the buckets every `SNAPSHOT_EVERY` ticks and keeps
//! `WINDOW_SNAPSHOTS` of them; a reading is over the difference between the buckets now and
//! the oldest snapshot, so over the last four to five minutes. Snapshots live only once a
//! histogram has a value, so idle request types cost their buckets and nothing more.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Parts each power of two is cut into.
const SUB_BUCKETS: u64 = 4;
/// Microsecond values up to 2^40 (about 12 days) have buckets; larger ones count in the last.
const MAX_POWER: u64 = 40;
/// Bucket 0 holds values below one microsecond, then `SUB_BUCKETS` per power of two.
const BUCKETS: usize = (1 + (MAX_POWER + 1) * SUB_BUCKETS) as usize;
/// Ticks between snapshots of the buckets (30 seconds at the registry's 5-second tick).
const SNAPSHOT_EVERY: u64 = 6;
/// Snapshots kept: the window of recent values (five minutes of 30-second snapshots).
const WINDOW_SNAPSHOTS: usize = 10;
/// The percentiles Yammer's JMX reporter publishes, with their attribute names.
const PERCENTILES: [(&str, f64); 6] = [
    ("50thPercentile", 0.50),
    ("75thPercentile", 0.75),
    ("95thPercentile", 0.95),
    ("98thPercentile", 0.98),
    ("99thPercentile", 0.99),
    ("999thPercentile", 0.999),
];

/// A histogram; see the module doc.
#[derive(Debug)]
pub struct Histogram {
    count: AtomicU64,
    buckets: Box<[AtomicU64]>,
    /// Bucket counts at past snapshots, oldest first; only the ticker writes it.
    window: Mutex<Window>,
}

#[derive(Debug, Default)]
struct Window {
    ticks: u64,
    snapshots: std::collections::VecDeque<Box<[u64]>>,
}

/// A histogram's attributes as JMX shows them, in the metric's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramSnapshot {
    /// Every value ever recorded (Yammer's `Count` is not windowed).
    pub count: u64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub std_dev: f64,
    /// The 50th, 75th, 95th, 98th, 99th and 99.9th percentiles.
    pub percentiles: [f64; 6],
}

impl HistogramSnapshot {
    /// `Count`, `Min`, `Max`, `Mean`, `StdDev`, then `50thPercentile` ... `999thPercentile`.
    pub fn attributes(&self) -> [(&'static str, f64); 11] {
        let p = |i: usize| (PERCENTILES[i].0, self.percentiles[i]);
        [
            ("Count", self.count as f64),
            ("Min", self.min),
            ("Max", self.max),
            ("Mean", self.mean),
            ("StdDev", self.std_dev),
            p(0),
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
        ]
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

/// The bucket of a value in microseconds.
fn bucket_of(micros: u64) -> usize {
    if micros == 0 {
        return 0;
    }
    let power = u64::from(63 - micros.leading_zeros()).min(MAX_POWER);
    let micros = micros.min((2 << MAX_POWER) - 1);
    // The top bits below the leading one pick the part of the power of two.
    let shift = SUB_BUCKETS.trailing_zeros() as u64;
    let sub = if power >= shift {
        (micros >> (power - shift)) & (SUB_BUCKETS - 1)
    } else {
        (micros << (shift - power)) & (SUB_BUCKETS - 1)
    };
    (1 + power * SUB_BUCKETS + sub) as usize
}

/// A bucket's midpoint, in microseconds.
fn midpoint_of(bucket: usize) -> f64 {
    if bucket == 0 {
        return 0.5;
    }
    let b = bucket as u64 - 1;
    let (power, sub) = (b / SUB_BUCKETS, b % SUB_BUCKETS);
    let low = (1u64 << power) as f64;
    let width = low / SUB_BUCKETS as f64;
    low + width * (sub as f64 + 0.5)
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            count: AtomicU64::new(0),
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            window: Mutex::new(Window::default()),
        }
    }

    /// Records a value in the metric's unit (milliseconds for a `...Ms` metric).
    #[inline]
    pub fn update(&self, value: f64) {
        // A negative or NaN value (a clock that stepped back) counts as zero.
        let micros = if value > 0.0 {
            (value * 1000.0) as u64
        } else {
            0
        };
        self.buckets[bucket_of(micros)].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    fn current(&self) -> Box<[u64]> {
        self.buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect()
    }

    /// Every `SNAPSHOT_EVERY` calls, remembers the buckets for the window. Called every
    /// `TICK` by one ticker only.
    pub fn tick(&self) {
        let mut window = crate::metrics::registry::lock(&self.window);
        window.ticks += 1;
        if !window.ticks.is_multiple_of(SNAPSHOT_EVERY)
            || (window.snapshots.is_empty() && self.count() == 0)
        {
            return;
        }
        if window.snapshots.len() == WINDOW_SNAPSHOTS {
            window.snapshots.pop_front();
        }
        let now = self.current();
        window.snapshots.push_back(now);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let count = self.count();
        let mut recent = self.current();
        if let Some(oldest) = crate::metrics::registry::lock(&self.window)
            .snapshots
            .front()
        {
            for (now, then) in recent.iter_mut().zip(oldest.iter()) {
                *now = now.saturating_sub(*then);
            }
        }
        let n: u64 = recent.iter().sum();
        if n == 0 {
            return HistogramSnapshot {
                count,
                min: 0.0,
                max: 0.0,
                mean: 0.0,
                std_dev: 0.0,
                percentiles: [0.0; 6],
            };
        }
        let ms = |bucket: usize| midpoint_of(bucket) / 1000.0;
        let filled = || recent.iter().enumerate().filter(|(_, c)| **c > 0);
        let min = filled().next().map_or(0.0, |(b, _)| ms(b));
        let max = filled().next_back().map_or(0.0, |(b, _)| ms(b));
        let mean = filled().map(|(b, c)| ms(b) * *c as f64).sum::<f64>() / n as f64;
        let variance = if n > 1 {
            filled()
                .map(|(b, c)| (ms(b) - mean).powi(2) * *c as f64)
                .sum::<f64>()
                / (n - 1) as f64
        } else {
            0.0
        };
        let mut percentiles = [0.0; 6];
        for (out, (_, q)) in percentiles.iter_mut().zip(PERCENTILES) {
            // The value at rank ceil(q * n), as Yammer's snapshot picks it.
            let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
            let mut seen = 0;
            for (bucket, c) in filled() {
                seen += c;
                if seen >= rank {
                    *out = ms(bucket);
                    break;
                }
            }
        }
        HistogramSnapshot {
            count,
            min,
            max,
            mean,
            std_dev: variance.sqrt(),
            percentiles,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_their_midpoints_within_an_eighth() {
        let mut last = 0;
        for micros in (0..100_000u64).chain([1 << 30, (1 << 40) + 7, u64::MAX]) {
            let b = bucket_of(micros);
            assert!(b >= last, "{micros}");
            assert!(b < BUCKETS);
            last = b;
            if (1..1 << 40).contains(&micros) {
                let mid = midpoint_of(b);
                let error = (mid - micros as f64).abs() / micros as f64;
                assert!(error <= 0.125 + 1e-9, "{micros}: {mid}");
            }
        }
    }

    #[test]
    fn percentiles_of_a_uniform_spread() {
        let h = Histogram::new();
        for ms in 1..=1000 {
            h.update(ms as f64);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 1000);
        for ((_, q), got) in PERCENTILES.iter().zip(s.percentiles) {
            let want = q * 1000.0;
            assert!((got - want).abs() / want <= 0.13, "{q}: {got}");
        }
        assert!((s.mean - 500.5).abs() / 500.5 < 0.1, "{s:?}");
        assert!(s.min <= 1.2 && s.max >= 900.0, "{s:?}");
    }

    #[test]
    fn the_window_forgets_values_older_than_its_snapshots() {
        let h = Histogram::new();
        for _ in 0..100 {
            h.update(500.0);
        }
        // Fill the window with snapshots taken after the slow values.
        for _ in 0..SNAPSHOT_EVERY * WINDOW_SNAPSHOTS as u64 {
            h.tick();
        }
        for _ in 0..10 {
            h.update(2.0);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 110, "the count is not windowed");
        assert!(s.percentiles[5] < 3.0, "old values left the window: {s:?}");
    }
}
