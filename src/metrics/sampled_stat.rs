//! Kafka's quota measurement: a `SampledStat` of time windows (`quota.window.num` samples of
//! `quota.window.size.seconds` each), measured as a `Rate` over a `WindowedSum` or as an `Avg`,
//! with the window-size rule Kafka's throttle times depend on. The arithmetic is Kafka 3.9's
//! `org.apache.kafka.common.metrics.stats.{SampledStat, Rate, SimpleRate, WindowedSum, Avg}` so that a
//! client is throttled exactly as a Kafka broker would throttle it; times are milliseconds on the
//! caller's clock, so tests drive it without sleeping.

/// Kafka's `MetricConfig` as quotas use it: how many samples, each how long.
///
/// Invariant: `samples >= 1` and `window_ms >= 1` (the config keys' lower bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QuotaWindow {
    /// `quota.window.num`.
    pub samples: u32,
    /// `quota.window.size.seconds`, in milliseconds.
    pub window_ms: i64,
}

impl QuotaWindow {
    /// Kafka's defaults: 11 samples of one second.
    pub(crate) const DEFAULT: QuotaWindow = QuotaWindow {
        samples: 11,
        window_ms: 1000,
    };

    /// The window a rate is taken over before enough samples exist, and the whole of what is
    /// kept: `samples * window_ms`.
    fn expire_age_ms(self) -> i64 {
        i64::from(self.samples) * self.window_ms
    }
}

/// One window's worth of recorded values.
#[derive(Debug, Clone, Copy)]
struct Sample {
    value: f64,
    event_count: u64,
    start_ms: i64,
    last_event_ms: i64,
}

impl Sample {
    fn new(now_ms: i64) -> Sample {
        Sample {
            value: 0.0,
            event_count: 0,
            start_ms: now_ms,
            last_event_ms: now_ms,
        }
    }

    fn reset(&mut self, now_ms: i64) {
        *self = Sample::new(now_ms);
    }

    fn is_complete(&self, now_ms: i64, window: QuotaWindow) -> bool {
        now_ms - self.start_ms >= window.window_ms
    }
}

/// The samples of one sensor, a ring of `samples + 1` (Kafka keeps one extra for the sample
/// that overlaps the start of the monitored window).
///
/// Invariant: `current < samples.len()` once anything was recorded; samples are created lazily,
/// as Kafka's list grows, so `oldest` sees only samples that exist.
#[derive(Debug, Clone, Default)]
pub(crate) struct SampledStat {
    samples: Vec<Sample>,
    current: usize,
}

impl SampledStat {
    /// Adds `value` at `now_ms` to the current sample, advancing to the next first if the
    /// current one's window is over (Kafka's `SampledStat.record`).
    pub(crate) fn record(&mut self, window: QuotaWindow, value: f64, now_ms: i64) {
        self.current_sample(now_ms);
        if self.samples[self.current].is_complete(now_ms, window) {
            self.advance(window, now_ms);
        }
        let sample = &mut self.samples[self.current];
        sample.value += value;
        sample.event_count += 1;
        sample.last_event_ms = now_ms;
    }

    /// The recorded values per second over the window (Kafka's `Rate` over `WindowedSum`).
    pub(crate) fn rate(&mut self, window: QuotaWindow, now_ms: i64) -> f64 {
        let sum = self.sum(window, now_ms);
        sum / (self.window_size_ms(window, now_ms) as f64 / 1000.0)
    }

    /// The recorded values per second over the time actually covered, at least one window
    /// (Kafka's `SimpleRate`, which replication quotas use: no minimum of `samples - 1`
    /// windows, so a throttle takes hold within a window of the first bytes).
    pub(crate) fn simple_rate(&mut self, window: QuotaWindow, now_ms: i64) -> f64 {
        let elapsed = self.simple_window_ms(window, now_ms);
        let sum: f64 = self.samples.iter().map(|s| s.value).sum();
        sum / (elapsed as f64 / 1000.0)
    }

    /// When the oldest sample still in the window started.
    pub(crate) fn oldest_start_ms(&mut self, now_ms: i64) -> i64 {
        self.oldest_start(now_ms)
    }

    /// The time [`SampledStat::simple_rate`] is taken over, in milliseconds.
    pub(crate) fn simple_window_ms(&mut self, window: QuotaWindow, now_ms: i64) -> i64 {
        self.purge_obsolete(window, now_ms);
        (now_ms - self.oldest_start(now_ms)).max(window.window_ms)
    }

    /// The sum of the samples still in the window (Kafka's `WindowedSum.measure`).
    pub(crate) fn sum(&mut self, window: QuotaWindow, now_ms: i64) -> f64 {
        self.purge_obsolete(window, now_ms);
        self.samples.iter().map(|s| s.value).sum()
    }

    /// The mean of the values recorded in the window, 0 when none was (Kafka's `Avg`).
    pub(crate) fn avg(&mut self, window: QuotaWindow, now_ms: i64) -> f64 {
        self.purge_obsolete(window, now_ms);
        let count: u64 = self.samples.iter().map(|s| s.event_count).sum();
        if count == 0 {
            return 0.0;
        }
        self.samples.iter().map(|s| s.value).sum::<f64>() / count as f64
    }

    /// The time a rate is taken over, in milliseconds (Kafka's `Rate.windowSize`): from the
    /// oldest sample's start to now, but never less than `samples - 1` full windows, so a
    /// burst at the start is spread over the whole window rather than measured over its own
    /// few milliseconds; at least 1.
    pub(crate) fn window_size_ms(&mut self, window: QuotaWindow, now_ms: i64) -> i64 {
        self.purge_obsolete(window, now_ms);
        let oldest_start = self.oldest_start(now_ms);
        let mut elapsed = now_ms - oldest_start;
        let full_windows = elapsed / window.window_ms;
        let min_full_windows = i64::from(window.samples) - 1;
        if full_windows < min_full_windows {
            elapsed += (min_full_windows - full_windows) * window.window_ms;
        }
        elapsed.max(1)
    }

    fn current_sample(&mut self, now_ms: i64) {
        if self.samples.is_empty() {
            self.samples.push(Sample::new(now_ms));
            self.current = 0;
        }
    }

    fn advance(&mut self, window: QuotaWindow, now_ms: i64) {
        let max_samples = window.samples as usize + 1;
        self.current = (self.current + 1) % max_samples;
        if self.current >= self.samples.len() {
            self.samples.push(Sample::new(now_ms));
            // A smaller `samples` than when the ring grew leaves `current` past the end.
            self.current = self.samples.len() - 1;
        } else {
            self.samples[self.current].reset(now_ms);
        }
    }

    fn oldest_start(&mut self, now_ms: i64) -> i64 {
        self.current_sample(now_ms);
        self.samples
            .iter()
            .map(|s| s.start_ms)
            .min()
            .unwrap_or(now_ms)
    }

    /// Resets every sample with no event within the whole window (Kafka's
    /// `purgeObsoleteSamples`): samples that overlap the window are kept even if they started
    /// before it.
    fn purge_obsolete(&mut self, window: QuotaWindow, now_ms: i64) {
        let expire_age = window.expire_age_ms();
        for sample in &mut self.samples {
            if now_ms - sample.last_event_ms >= expire_age {
                sample.reset(now_ms);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: QuotaWindow = QuotaWindow::DEFAULT;

    #[test]
    fn a_first_burst_is_spread_over_ten_windows() {
        let mut stat = SampledStat::default();
        stat.record(W, 10_000.0, 0);
        // Kafka's minimum of samples - 1 full windows: 10 s.
        assert_eq!(stat.window_size_ms(W, 0), 10_000);
        assert!((stat.rate(W, 0) - 1_000.0).abs() < 1e-9);
        // Half a second in: the elapsed time plus the ten full windows still missing.
        assert_eq!(stat.window_size_ms(W, 500), 10_500);
    }

    #[test]
    fn the_window_grows_with_the_oldest_sample_up_to_eleven_seconds() {
        let mut stat = SampledStat::default();
        for second in 0..30 {
            stat.record(W, 1_000.0, second * 1_000);
        }
        // The ring keeps 12 samples (18 s to 29 s); the one whose last event is 11 s old or
        // more is purged, so the window runs from 19 s: 10.5 s holding 11 samples of 1,000.
        let size = stat.window_size_ms(W, 29_500);
        assert_eq!(size, 10_500);
        let rate = stat.rate(W, 29_500);
        assert!((rate - 11_000.0 / 10.5).abs() < 1e-6, "{rate}");
    }

    #[test]
    fn a_simple_rate_is_taken_over_the_time_covered_and_at_least_one_window() {
        let mut stat = SampledStat::default();
        stat.record(W, 1_000.0, 0);
        assert_eq!(stat.simple_rate(W, 200), 1_000.0);
        stat.record(W, 1_000.0, 1_500);
        assert_eq!(stat.simple_rate(W, 2_000), 1_000.0);
    }

    #[test]
    fn samples_idle_for_the_whole_window_are_purged() {
        let mut stat = SampledStat::default();
        stat.record(W, 5_000.0, 0);
        assert_eq!(stat.sum(W, 10_999), 5_000.0);
        assert_eq!(stat.sum(W, 11_000), 0.0);
        assert_eq!(stat.rate(W, 11_000), 0.0);
    }

    #[test]
    fn negative_values_take_back_what_was_recorded() {
        let mut stat = SampledStat::default();
        stat.record(W, 700.0, 10);
        stat.record(W, -700.0, 20);
        assert_eq!(stat.sum(W, 30), 0.0);
    }

    #[test]
    fn avg_is_the_mean_of_the_events_in_the_window() {
        let mut stat = SampledStat::default();
        assert_eq!(stat.avg(W, 0), 0.0);
        stat.record(W, 100.0, 0);
        stat.record(W, 300.0, 1_500);
        assert_eq!(stat.avg(W, 2_000), 200.0);
        assert_eq!(stat.avg(W, 20_000), 0.0);
    }

    #[test]
    fn the_ring_holds_samples_plus_one() {
        let small = QuotaWindow {
            samples: 2,
            window_ms: 100,
        };
        let mut stat = SampledStat::default();
        for t in 0..10 {
            stat.record(small, 1.0, t * 100);
        }
        assert_eq!(stat.samples.len(), 3);
        // The ring holds 700, 800 and 900; at 950 the one at 700 is past the 200 ms kept, so
        // the window runs from 800: 150 ms, which is the minimum of one full window or more.
        assert_eq!(stat.window_size_ms(small, 950), 150);
        assert_eq!(stat.sum(small, 950), 2.0);
    }
}
