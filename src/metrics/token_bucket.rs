//! Kafka's `TokenBucket` stat (`org.apache.kafka.common.metrics.stats.TokenBucket`, KIP-599): a
//! bucket that refills at the quota per second up to a burst, and that recording takes from,
//! possibly below zero. Its tokens are what a client may still take now; a negative level is a
//! debt that the quota repays in `-tokens / quota` seconds, which is the throttle time.
//!
//! Kafka sizes the burst at the whole quota window (`samples * window * quota`); callers pass
//! the burst they want. Times are milliseconds on the caller's clock, so tests drive it without
//! sleeping.

/// A token bucket's level and when it was last refilled.
///
/// Invariant: `tokens <= burst` of the last call; a bucket never refilled starts full, as
/// Kafka's does (its first refill covers the time since the epoch).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TokenBucket {
    tokens: f64,
    last_update_ms: Option<i64>,
}

impl TokenBucket {
    /// The tokens now, after refilling at `quota` per second up to `burst`.
    #[cfg(test)]
    pub(crate) fn tokens(&mut self, quota: f64, burst: f64, now_ms: i64) -> f64 {
        self.refill(quota, burst, now_ms);
        self.tokens
    }

    /// Takes `value` tokens at `now_ms` (a negative value gives them back), never above
    /// `burst` and never below `-max_debt`; returns the level after.
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
            Some(last) => {
                (self.tokens + quota * ((now_ms - last).max(0) as f64 / 1000.0)).min(burst)
            }
        };
        self.last_update_ms = Some(now_ms);
    }
}

/// The milliseconds until a bucket at `tokens` (below zero: a debt) is back at zero when it
/// refills at `quota` per second; 0 when it is not in debt.
pub(crate) fn time_to_repay_ms(tokens: f64, quota: f64) -> f64 {
    if tokens >= 0.0 || quota <= 0.0 {
        return 0.0;
    }
    -tokens / quota * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_bucket_is_full() {
        let mut bucket = TokenBucket::default();
        assert_eq!(bucket.tokens(10.0, 100.0, 5_000), 100.0);
    }

    #[test]
    fn recording_takes_tokens_and_time_refills_them_up_to_the_burst() {
        let mut bucket = TokenBucket::default();
        assert_eq!(bucket.record(10.0, 100.0, 1e9, 150.0, 0), -50.0);
        assert_eq!(time_to_repay_ms(-50.0, 10.0), 5_000.0);
        // 2.5 s at 10/s refills 25.
        assert_eq!(bucket.tokens(10.0, 100.0, 2_500), -25.0);
        assert_eq!(bucket.tokens(10.0, 100.0, 60_000), 100.0);
    }

    #[test]
    fn a_debt_is_bounded_and_giving_back_never_overfills() {
        let mut bucket = TokenBucket::default();
        assert_eq!(bucket.record(10.0, 100.0, 200.0, 1_000.0, 0), -200.0);
        assert_eq!(bucket.record(10.0, 100.0, 200.0, -1_000.0, 0), 100.0);
    }

    #[test]
    fn a_clock_going_back_refills_nothing() {
        let mut bucket = TokenBucket::default();
        bucket.record(10.0, 100.0, 1e9, 100.0, 1_000);
        assert_eq!(bucket.tokens(10.0, 100.0, 500), 0.0);
    }

    #[test]
    fn no_debt_needs_no_time() {
        assert_eq!(time_to_repay_ms(5.0, 10.0), 0.0);
        assert_eq!(time_to_repay_ms(-5.0, 0.0), 0.0);
    }
}
