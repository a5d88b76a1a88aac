//! Kafka 3.9's `org.apache.kafka.common.metrics.stats.TokenBucket` (KIP-599): a bucket refilled
//! at the quota per second up to a burst, from which each recorded value is taken. Tokens may go
//! negative: a debt that the quota repays in `-tokens / quota` seconds, which is the throttle
//! time (and, for a strict controller mutation quota, the time it refuses).
//!
//! The controller mutation quota uses it as Kafka does, with a burst of the whole quota window
//! ([`kafka_burst`]). The client quotas take their throttle from one too, with a burst of one
//! window (`server::quota::client_quota_manager`). Times are milliseconds on the caller's clock,
//! so tests drive it without sleeping.

use super::sampled_stat::QuotaWindow;

/// The tokens left in one sensor's bucket and when it was last refilled.
///
/// Invariant: `tokens <= burst` of the last call. Before the first refill the bucket is taken as
/// full: Kafka starts at zero tokens at time zero of the wall clock, which its first refill,
/// decades later, fills.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TokenBucket {
    tokens: f64,
    last_update_ms: Option<i64>,
}

impl TokenBucket {
    /// The tokens left at `now_ms`, refilled at `quota` per second up to `burst` (Kafka's
    /// `measure`).
    pub(crate) fn tokens(&mut self, quota: f64, burst: f64, now_ms: i64) -> f64 {
        self.refill(quota, burst, now_ms);
        self.tokens
    }

    /// Takes `value` tokens at `now_ms` (Kafka's `record`; a negative value gives them back),
    /// never above `burst` and never below `-max_debt` (Kafka's has no floor: pass
    /// `f64::INFINITY`); returns the tokens left.
    pub(crate) fn record(
        &mut self,
        quota: f64,
        burst: f64,
        max_debt: f64,
        value: f64,
        now_ms: i64,
    ) -> f64 {
        self.refill(quota, burst, now_ms);
        self.tokens = (self.tokens - value).clamp(-max_debt, burst);
        self.tokens
    }

    fn refill(&mut self, quota: f64, burst: f64, now_ms: i64) {
        self.tokens = match self.last_update_ms {
            None => burst,
            // A clock that went back refills nothing.
            Some(last) => burst.min(self.tokens + quota * ((now_ms - last).max(0) as f64 / 1000.0)),
        };
        self.last_update_ms = Some(now_ms);
    }
}

/// Kafka's `TokenBucket.burst`: the quota over the whole window, `samples * window`.
pub(crate) fn kafka_burst(window: QuotaWindow, quota: f64) -> f64 {
    f64::from(window.samples) * (window.window_ms as f64 / 1000.0) * quota
}

/// Kafka's `ControllerMutationQuotaManager.throttleTimeMs`: the milliseconds until a bucket at
/// `tokens` below zero is back to zero at `quota` tokens per second; 0 when not below.
pub(crate) fn throttle_time_ms(tokens: f64, quota: f64) -> i64 {
    if tokens >= 0.0 || quota <= 0.0 {
        return 0;
    }
    // Java's Math.round: half up.
    (-tokens / quota * 1000.0 + 0.5).floor() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: QuotaWindow = QuotaWindow::DEFAULT;
    const NO_FLOOR: f64 = f64::INFINITY;

    #[test]
    fn a_new_bucket_is_full_and_refills_at_the_quota_up_to_the_burst() {
        let mut bucket = TokenBucket::default();
        // 2 per second over 11 one-second samples: a burst of 22.
        let burst = kafka_burst(W, 2.0);
        assert_eq!(burst, 22.0);
        assert_eq!(bucket.tokens(2.0, burst, 5_000), 22.0);
        assert_eq!(bucket.record(2.0, burst, NO_FLOOR, 30.0, 5_000), -8.0);
        // Half a second gives one token back.
        assert_eq!(bucket.tokens(2.0, burst, 5_500), -7.0);
        // Never more than the burst, however long it waits.
        assert_eq!(bucket.tokens(2.0, burst, 100_000), 22.0);
        // A negative value gives tokens back, also capped.
        bucket.record(2.0, burst, NO_FLOOR, 5.0, 100_000);
        bucket.record(2.0, burst, NO_FLOOR, -10.0, 100_000);
        assert_eq!(bucket.tokens(2.0, burst, 100_000), 22.0);
    }

    #[test]
    fn the_throttle_time_brings_the_tokens_back_to_zero() {
        assert_eq!(throttle_time_ms(-8.0, 2.0), 4_000);
        assert_eq!(throttle_time_ms(-1.0, 3.0), 333);
        assert_eq!(throttle_time_ms(-0.0015, 1.0), 2);
        assert_eq!(throttle_time_ms(0.0, 2.0), 0);
        assert_eq!(throttle_time_ms(5.0, 2.0), 0);
        assert_eq!(throttle_time_ms(-5.0, 0.0), 0);
        let mut bucket = TokenBucket::default();
        let burst = kafka_burst(W, 2.0);
        let tokens = bucket.record(2.0, burst, NO_FLOOR, 30.0, 0);
        let throttle = throttle_time_ms(tokens, 2.0);
        assert_eq!(bucket.tokens(2.0, burst, throttle), 0.0);
    }

    #[test]
    fn a_smaller_quota_caps_the_tokens_at_its_burst() {
        let mut bucket = TokenBucket::default();
        assert_eq!(bucket.tokens(10.0, kafka_burst(W, 10.0), 0), 110.0);
        assert_eq!(bucket.tokens(1.0, kafka_burst(W, 1.0), 0), 11.0);
        let window = QuotaWindow {
            samples: 2,
            window_ms: 500,
        };
        assert_eq!(kafka_burst(window, 4.0), 4.0);
    }

    #[test]
    fn a_debt_is_bounded_when_asked_and_a_clock_going_back_refills_nothing() {
        let mut bucket = TokenBucket::default();
        assert_eq!(bucket.record(10.0, 100.0, 200.0, 1_000.0, 1_000), -200.0);
        assert_eq!(bucket.tokens(10.0, 100.0, 500), -200.0);
        assert_eq!(bucket.record(10.0, 100.0, 200.0, -1_000.0, 500), 100.0);
    }
}
