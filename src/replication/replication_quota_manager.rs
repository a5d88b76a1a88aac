//! Kafka's `ReplicationQuotaManager`: the replication throttles a reassignment sets so that
//! moving replicas does not saturate the disks and links that serve clients.
//!
//! Two per broker, each with its rate (dynamic broker configs, this broker's or `<default>`):
//! - **leader** (`leader.replication.throttled.rate`): what this broker, as leader, returns to
//!   followers fetching partitions named in their topic's
//!   `leader.replication.throttled.replicas` (for this broker, or `*`);
//! - **follower** (`follower.replication.throttled.rate`): what this broker, as follower,
//!   fetches for partitions named in `follower.replication.throttled.replicas`.
//!
//! Only throttled partitions' bytes are recorded, over Kafka's replication windows
//! (`replication.quota.window.num` samples of `replication.quota.window.size.seconds`) as a
//! `SimpleRate`. While the rate is over its bound, a throttled partition of a replica that is
//! not in sync is left out (the leader answers it without records; the follower does not ask
//! for it). A replica in the ISR is never throttled, so the throttle can never push a replica
//! out of the ISR.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cluster::BrokerId;
use crate::metrics::sampled_stat::{QuotaWindow, SampledStat};

/// Which side of replication a manager throttles; Kafka's `QuotaType` name is the metric's
/// `type` (`kafka.server:type=LeaderReplication`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplicationQuotaType {
    LeaderReplication,
    FollowerReplication,
}

impl ReplicationQuotaType {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ReplicationQuotaType::LeaderReplication => "LeaderReplication",
            ReplicationQuotaType::FollowerReplication => "FollowerReplication",
        }
    }
}

/// Kafka's `QuotaConfigs.QUOTA_BYTES_PER_SECOND_DEFAULT` (`Long.MAX_VALUE`): no throttle.
pub(crate) const UNLIMITED_REPLICATION_RATE: i64 = i64::MAX;

/// No bound: the bits `AtomicU64` holds in place of an `f64` bound.
const NO_BOUND: u64 = u64::MAX;

/// One replication throttle; see the module doc.
///
/// Invariant: `bound` is `NO_BOUND` or the bits of a finite positive `f64`.
#[derive(Debug)]
pub(crate) struct ReplicationQuotaManager {
    quota_type: ReplicationQuotaType,
    bound: AtomicU64,
    /// The windows and the samples taken over them.
    rate: Mutex<(QuotaWindow, SampledStat)>,
}

impl ReplicationQuotaManager {
    pub(crate) fn new(quota_type: ReplicationQuotaType, window: QuotaWindow) -> Self {
        // `window` is Kafka's default until the broker's config sets it.
        ReplicationQuotaManager {
            quota_type,
            bound: AtomicU64::new(NO_BOUND),
            rate: Mutex::new((window, SampledStat::default())),
        }
    }

    /// Sets `replication.quota.window.num` and `replication.quota.window.size.seconds` (read
    /// at start); the samples taken so far start over.
    pub(crate) fn set_window(&self, window: QuotaWindow) {
        *self.rate.lock().unwrap_or_else(|e| e.into_inner()) = (window, SampledStat::default());
    }

    pub(crate) fn quota_type(&self) -> ReplicationQuotaType {
        self.quota_type
    }

    /// Sets the rate in bytes per second (Kafka's `updateQuota(upperBound(rate))`); Kafka's
    /// default of `Long.MAX_VALUE`, or anything not positive, is no throttle.
    pub(crate) fn update_quota(&self, bytes_per_second: i64) {
        let bits = if bytes_per_second <= 0 || bytes_per_second == UNLIMITED_REPLICATION_RATE {
            NO_BOUND
        } else {
            (bytes_per_second as f64).to_bits()
        };
        let old = self.bound.swap(bits, Ordering::Relaxed);
        if old != bits {
            tracing::info!(
                quota_type = self.quota_type.name(),
                bytes_per_second,
                "replication throttle rate"
            );
        }
    }

    /// The rate in force, `None` without one.
    pub(crate) fn upper_bound(&self) -> Option<f64> {
        let bits = self.bound.load(Ordering::Relaxed);
        (bits != NO_BOUND).then(|| f64::from_bits(bits))
    }

    /// Whether a rate is set at all: one relaxed load, so the fetch paths pay nothing
    /// without a throttle.
    pub(crate) fn is_configured(&self) -> bool {
        self.bound.load(Ordering::Relaxed) != NO_BOUND
    }

    /// Whether the throttled bytes of the window are over the rate (Kafka's
    /// `isQuotaExceeded`).
    pub(crate) fn is_quota_exceeded(&self, now_ms: i64) -> bool {
        let Some(bound) = self.upper_bound() else {
            return false;
        };
        let mut rate = self.rate.lock().unwrap_or_else(|e| e.into_inner());
        let (window, stat) = &mut *rate;
        stat.simple_rate(*window, now_ms) > bound
    }

    /// How long until the rate is back within its bound if nothing more is recorded (Kafka's
    /// throttle-time formula, X = (O - T) / T * W); `None` when it is within it now. Kafka
    /// waits a whole `replica.fetch.backoff.ms` or `replica.fetch.wait.max.ms` instead, which
    /// leaves a throttled move well under its rate; waiting this long holds it at the rate.
    pub(crate) fn time_until_within(&self, now_ms: i64) -> Option<std::time::Duration> {
        let bound = self.upper_bound()?;
        let mut rate = self.rate.lock().unwrap_or_else(|e| e.into_inner());
        let (window, stat) = &mut *rate;
        let observed = stat.simple_rate(*window, now_ms);
        if observed <= bound {
            return None;
        }
        // The rate falls to the bound once the time covered reaches sum / bound: the window
        // only grows with time (it is at least one window, so a fresh sensor's burst waits
        // out more than its share of the first window).
        let covered_ms = stat.simple_window_ms(*window, now_ms) as f64;
        let sum = observed * covered_ms / 1000.0;
        let elapsed_ms = (now_ms - stat.oldest_start_ms(now_ms)) as f64;
        let wait_ms = (sum / bound * 1000.0 - elapsed_ms).ceil().max(1.0);
        Some(std::time::Duration::from_millis(
            wait_ms.min(3_600_000.0) as u64
        ))
    }

    /// Records bytes of throttled partitions replicated (Kafka's `record`).
    pub(crate) fn record(&self, bytes: u64, now_ms: i64) {
        if bytes == 0 {
            return;
        }
        let mut rate = self.rate.lock().unwrap_or_else(|e| e.into_inner());
        let (window, stat) = &mut *rate;
        stat.record(*window, bytes as f64, now_ms);
    }

    /// The throttled bytes per second now, for the metrics (`byte-rate`).
    pub(crate) fn byte_rate(&self, now_ms: i64) -> f64 {
        let mut rate = self.rate.lock().unwrap_or_else(|e| e.into_inner());
        let (window, stat) = &mut *rate;
        stat.simple_rate(*window, now_ms)
    }
}

/// A broker's two replication throttles (Kafka's `QuotaManagers.leader` and `.follower`).
#[derive(Debug, Clone)]
pub(crate) struct ReplicationQuotas {
    pub(crate) leader: std::sync::Arc<ReplicationQuotaManager>,
    pub(crate) follower: std::sync::Arc<ReplicationQuotaManager>,
}

impl ReplicationQuotas {
    /// Sets both throttles' windows (`replication.quota.window.*`).
    pub(crate) fn set_window(&self, window: QuotaWindow) {
        self.leader.set_window(window);
        self.follower.set_window(window);
    }
}

impl Default for ReplicationQuotas {
    fn default() -> Self {
        ReplicationQuotas {
            leader: std::sync::Arc::new(ReplicationQuotaManager::new(
                ReplicationQuotaType::LeaderReplication,
                QuotaWindow::DEFAULT,
            )),
            follower: std::sync::Arc::new(ReplicationQuotaManager::new(
                ReplicationQuotaType::FollowerReplication,
                QuotaWindow::DEFAULT,
            )),
        }
    }
}

/// The throttles' rates as Kafka's JMX reporter names them: `kafka.server:type=
/// LeaderReplication` and `type=FollowerReplication`, attribute `byte-rate` (the throttled
/// bytes per second over the window).
impl crate::metrics::MetricsSource for ReplicationQuotas {
    fn collect(&self, out: &mut Vec<crate::metrics::MetricSample>) {
        let now_ms = crate::cluster::time::system().milliseconds();
        for quota in [&self.leader, &self.follower] {
            out.push(crate::metrics::MetricSample {
                mbean: crate::metrics::MBeanName::kafka_group(
                    "kafka.server",
                    quota.quota_type().name(),
                    &[],
                ),
                reading: crate::metrics::Reading::KafkaMetrics(vec![(
                    "byte-rate",
                    quota.byte_rate(now_ms),
                )]),
            });
        }
    }
}

/// Whether a topic's `*.replication.throttled.replicas` list names `partition` on `broker`
/// (Kafka's `parseThrottledPartitions`: `*`, or `partition:broker` entries for this broker).
pub(crate) fn throttled_replicas_include(
    list: &[String],
    partition: i32,
    broker: BrokerId,
) -> bool {
    list.iter().any(|entry| {
        let entry = entry.trim();
        if entry == "*" {
            return true;
        }
        let mut parts = entry.split(':');
        matches!(
            (parts.next(), parts.next(), parts.next()),
            (Some(p), Some(b), None)
                if p.trim().parse::<i32>() == Ok(partition) && b.trim().parse::<BrokerId>() == Ok(broker)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: QuotaWindow = QuotaWindow::DEFAULT;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| (*e).to_string()).collect()
    }

    #[test]
    fn the_lists_name_partitions_on_this_broker_or_all() {
        let entries = list(&["0:101", "1:102", "2:101"]);
        assert!(throttled_replicas_include(&entries, 0, 101));
        assert!(throttled_replicas_include(&entries, 2, 101));
        assert!(!throttled_replicas_include(&entries, 1, 101));
        assert!(!throttled_replicas_include(&entries, 0, 102));
        assert!(throttled_replicas_include(&list(&["*"]), 7, 3));
        assert!(!throttled_replicas_include(&[], 0, 101));
        assert!(!throttled_replicas_include(&list(&["x:101"]), 0, 101));
    }

    #[test]
    fn without_a_rate_nothing_is_exceeded() {
        let quota = ReplicationQuotaManager::new(ReplicationQuotaType::LeaderReplication, W);
        assert!(!quota.is_configured());
        quota.record(1 << 40, 0);
        assert!(!quota.is_quota_exceeded(0));
        quota.update_quota(UNLIMITED_REPLICATION_RATE);
        assert!(!quota.is_configured());
    }

    #[test]
    fn the_rate_is_exceeded_once_the_window_holds_more_than_it_allows() {
        let quota = ReplicationQuotaManager::new(ReplicationQuotaType::FollowerReplication, W);
        quota.update_quota(1_000_000);
        assert_eq!(quota.upper_bound(), Some(1_000_000.0));
        quota.record(900_000, 0);
        assert!(!quota.is_quota_exceeded(500));
        quota.record(200_000, 600);
        assert!(quota.is_quota_exceeded(900));
        // Later, the same bytes over a longer time are within the rate again.
        assert!(!quota.is_quota_exceeded(1_200));
        quota.update_quota(0);
        assert!(!quota.is_quota_exceeded(900));
    }

    #[test]
    fn the_wait_brings_the_rate_back_to_its_bound() {
        let quota = ReplicationQuotaManager::new(ReplicationQuotaType::FollowerReplication, W);
        quota.update_quota(1_000_000);
        quota.record(1_500_000, 0);
        // 1.5 MB at once: the rate is taken over at least a second, so it is 1 MB/s once
        // 1.5 s have passed.
        let wait = quota.time_until_within(0).unwrap();
        assert_eq!(wait, std::time::Duration::from_millis(1_500));
        assert!(quota.is_quota_exceeded(1_499));
        assert!(!quota.is_quota_exceeded(1_500));
        assert_eq!(quota.time_until_within(1_500), None);
    }

    #[test]
    fn a_fetcher_that_waits_as_told_replicates_at_the_rate() {
        // 1 MiB fetches that take 5 ms each, waiting out the throttle whenever it is
        // exceeded: over a minute the bytes moved are the rate's within 2%.
        let quota = ReplicationQuotaManager::new(ReplicationQuotaType::FollowerReplication, W);
        quota.update_quota(10_000_000);
        let (mut now, mut moved) = (0i64, 0u64);
        while now < 60_000 {
            if let Some(wait) = quota.time_until_within(now) {
                now += i64::try_from(wait.as_millis()).unwrap();
                continue;
            }
            quota.record(1 << 20, now);
            moved += 1 << 20;
            now += 5;
        }
        let rate = moved as f64 / (now as f64 / 1000.0);
        assert!(
            (rate - 10_000_000.0).abs() / 10_000_000.0 < 0.02,
            "{rate} B/s"
        );
    }
}
