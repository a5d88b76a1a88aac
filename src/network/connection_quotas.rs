//! Kafka's `ConnectionQuotas` and the request memory pool: the limits that keep many or hostile
//! connections from exhausting the broker.
//!
//! - `max.connections`: at most this many connections over all listeners; when they are all
//!   taken the acceptors stop accepting until one closes (Kafka's acceptor waits the same way;
//!   the kernel's backlog holds the newcomers).
//! - `max.connections.per.ip` with `max.connections.per.ip.overrides` (`host:count,...`, by IP
//!   address): a connection over its address's limit is closed at once, as Kafka closes it.
//! - `queued.max.request.bytes` (Kafka's `MemoryPool`, `super::memory_pool`): the bytes of
//!   request frames read and not yet answered. A connection that has read a frame's size prefix
//!   waits for that many bytes of the pool before it reads the body, so many large frames at once
//!   wait for memory instead of taking it; the bytes return to the pool once the request's
//!   response is written. -1 (the default) is no pool.
//! - `connection_creation_rate` for an IP address or `<default>` (Kafka's IP connection-rate
//!   quota, `/config/ips/<ip>`): the server pushes the rates in through
//!   [`IpConnectionRateQuotas`]. Each new connection from a quota'd address is recorded in the
//!   address's rate (Kafka's `Rate` over `quota.window.num` samples of
//!   `quota.window.size.seconds`); one that takes the rate over the quota is taken back, never
//!   served, and closed after the throttle time (at most one window), as Kafka's acceptor
//!   delays closing a throttled socket (`recordIpConnectionMaybeThrottle`,
//!   `ConnectionThrottledException`). It holds no `max.connections` slot meanwhile.
//!
//! - `max.connection.creation.rate` (broker-wide, static): every new connection is recorded in
//!   the broker's rate, over the same window; when one takes it over, the acceptor waits the
//!   throttle time (at most one window) before it serves that connection and accepts the next,
//!   as Kafka's acceptor waits (`waitForConnectionSlot`). The inter-broker listener is exempt
//!   when there are several listeners (Kafka's `protectedListener`). A connection then refused
//!   for its address's rate is taken back from the broker's rate too.
//!
//! Metrics, as Kafka's `socket-server-metrics` group names them:
//! `kafka.server:type=socket-server-metrics,ip=<ip>` `connection-accept-rate` for each address
//! measured against a quota, and `kafka.server:type=socket-server-metrics,listener=<L>`
//! `ip-connection-accept-throttle-time` (the average of the throttle times, over Kafka's default
//! 2 samples of 30 s) for each listener that has throttled a connection, and beside it
//! `connection-accept-throttle-time` for the broker-wide rate's throttles. Kafka registers the
//! latter two for every listener at startup, with no value until a throttle; kcli from the
//! first. With `max.connection.creation.rate` set, `kafka.server:type=socket-server-metrics`
//! `broker-connection-accept-rate` (which Kafka measures even without it).
//!
//! Lock order: `per_ip`, then `ip_rates`; neither is held across an await.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cluster::sync::lock;
use crate::metrics::sampled_stat::{QuotaWindow, SampledStat};
use crate::metrics::{MBeanName, MetricSample, MetricsSource, Reading};

use super::memory_pool::{MemoryPool, PooledBytes};

/// The connection limits, as configured; the default limits nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// `max.connections`; `None`: unlimited (Kafka's default, `Int.MaxValue`).
    pub max_connections: Option<usize>,
    /// `max.connections.per.ip`; `None`: unlimited.
    pub max_connections_per_ip: Option<usize>,
    /// `max.connections.per.ip.overrides`, by address.
    pub max_connections_per_ip_overrides: HashMap<IpAddr, usize>,
    /// `queued.max.request.bytes`; `None`: no pool.
    pub queued_max_request_bytes: Option<usize>,
    /// `quota.window.num` (at least 1): the samples an IP's connection rate is taken over.
    pub quota_window_num: u32,
    /// `quota.window.size.seconds` (at least 1): each sample's length, and the longest an IP
    /// over its rate is throttled.
    pub quota_window_size_seconds: u32,
    /// `max.connection.creation.rate`: new connections per second over all listeners but the
    /// protected one; `None`: unlimited (Kafka's default, `Int.MaxValue`).
    pub max_connection_creation_rate: Option<u32>,
    /// The inter-broker listener, exempt from `max.connection.creation.rate` when the broker
    /// has more than one listener.
    pub protected_listener: Option<String>,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: None,
            max_connections_per_ip: None,
            max_connections_per_ip_overrides: HashMap::new(),
            queued_max_request_bytes: None,
            quota_window_num: 11,
            quota_window_size_seconds: 1,
            max_connection_creation_rate: None,
            protected_listener: None,
        }
    }
}

/// Kafka's default `metrics.num.samples` and `metrics.sample.window.ms`, the window of the
/// throttle time averages.
const THROTTLE_TIME_WINDOW: QuotaWindow = QuotaWindow {
    samples: 2,
    window_ms: 30_000,
};

/// Kafka's expiry of an IP's connection-rate sensor: an hour without a connection.
const INACTIVE_SENSOR_EXPIRATION_MS: i64 = 3_600_000;

/// How often the IP sensors are scanned for inactive ones.
const SENSOR_PURGE_INTERVAL_MS: i64 = 30_000;

/// The IP connection-rate quotas as configured, and the rates measured against them.
#[derive(Debug, Default)]
struct IpConnectionRates {
    /// `/config/ips/<default>`; `None`: Kafka's `Int.MaxValue`, no quota.
    default_rate: Option<u32>,
    /// `/config/ips/<ip>`.
    overrides: HashMap<IpAddr, u32>,
    sensors: HashMap<IpAddr, IpSensor>,
    /// Each listener's throttle times: (`ip-connection-accept-throttle-time`,
    /// `connection-accept-throttle-time`).
    throttle_times: BTreeMap<Arc<str>, (SampledStat, SampledStat)>,
    last_purge_ms: i64,
    /// The broker-wide rate (`max.connection.creation.rate`), while it is set.
    broker_rate: SampledStat,
}

#[derive(Debug, Default)]
struct IpSensor {
    rate: SampledStat,
    last_record_ms: i64,
}

/// The IP connection-rate quotas of a socket server, for the server to push the configured
/// rates into (Kafka's `ConnectionQuotas.updateIpConnectionRateQuota`). Cloning is a reference
/// count.
#[derive(Debug, Clone)]
pub struct IpConnectionRateQuotas(Arc<ConnectionQuotas>);

impl IpConnectionRateQuotas {
    /// Sets (`Some`) or removes (`None`) the connection creation rate, per second, of `ip`, or
    /// of every address without its own when `ip` is `None` (`<default>`).
    pub fn update_ip_connection_rate_quota(&self, ip: Option<IpAddr>, rate: Option<u32>) {
        let mut rates = lock(&self.0.ip_rates);
        match (ip, rate) {
            (Some(ip), Some(rate)) => {
                tracing::info!(%ip, rate, "Updating max connection rate override");
                rates.overrides.insert(ip, rate);
            }
            (Some(ip), None) => {
                tracing::info!(%ip, "Removing max connection rate override");
                rates.overrides.remove(&ip);
            }
            (None, rate) => {
                tracing::info!(?rate, "Updated default max IP connection rate");
                rates.default_rate = rate;
            }
        }
    }

    /// The rate `ip` is held to now, if any (Kafka's `connectionRateForIp`).
    pub fn connection_rate_for_ip(&self, ip: IpAddr) -> Option<u32> {
        let rates = lock(&self.0.ip_rates);
        rates.overrides.get(&ip).copied().or(rates.default_rate)
    }
}

/// A connection's slot: held for the connection's life, released on drop.
#[derive(Debug)]
pub(crate) struct ConnectionSlot {
    quotas: Arc<ConnectionQuotas>,
    ip: IpAddr,
    _broker_wide: Option<OwnedSemaphorePermit>,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut per_ip = lock(&self.quotas.per_ip);
        if let Some(count) = per_ip.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                per_ip.remove(&self.ip);
            }
        }
    }
}

/// The broker-wide connection and memory accounting, shared by every acceptor and connection.
#[derive(Debug)]
pub(crate) struct ConnectionQuotas {
    limits: ConnectionLimits,
    broker_wide: Option<Arc<Semaphore>>,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
    pool: Option<Arc<MemoryPool>>,
    ip_rates: Mutex<IpConnectionRates>,
    /// `quota.window.num` samples of `quota.window.size.seconds`.
    quota_window: QuotaWindow,
    /// The time base of the rate sensors.
    base: Instant,
}

impl ConnectionQuotas {
    pub(crate) fn new(limits: ConnectionLimits) -> Arc<Self> {
        Arc::new(ConnectionQuotas {
            broker_wide: limits.max_connections.map(|n| Arc::new(Semaphore::new(n))),
            pool: limits.queued_max_request_bytes.map(MemoryPool::new),
            per_ip: Mutex::new(HashMap::new()),
            ip_rates: Mutex::new(IpConnectionRates::default()),
            quota_window: QuotaWindow {
                samples: limits.quota_window_num.max(1),
                window_ms: i64::from(limits.quota_window_size_seconds.max(1)) * 1000,
            },
            base: Instant::now(),
            limits,
        })
    }

    /// The handle the server pushes the IP connection-rate quotas in through.
    pub(crate) fn ip_connection_rate_quotas(self: &Arc<Self>) -> IpConnectionRateQuotas {
        IpConnectionRateQuotas(Arc::clone(self))
    }

    /// Milliseconds since these quotas were made, the rate sensors' clock.
    fn now_ms(&self) -> i64 {
        i64::try_from(self.base.elapsed().as_millis()).unwrap_or(i64::MAX)
    }

    /// Records a new connection from `ip` on `listener` against the address's connection rate
    /// quota; when it takes the rate over the quota, takes it back and returns how long to hold
    /// the connection before closing it (Kafka's `recordIpConnectionMaybeThrottle`).
    pub(crate) fn record_ip_connection_maybe_throttle(
        &self,
        listener: &Arc<str>,
        ip: IpAddr,
    ) -> Option<Duration> {
        self.record_ip_connection_at(listener, ip, self.now_ms())
    }

    /// Whether `listener` counts against `max.connection.creation.rate`.
    fn broker_rate_applies(&self, listener: &str) -> bool {
        self.limits.max_connection_creation_rate.is_some()
            && self.limits.protected_listener.as_deref() != Some(listener)
    }

    /// Records a new connection on `listener` against `max.connection.creation.rate`; when it
    /// takes the broker's rate over, how long the acceptor waits before serving it (Kafka's
    /// `recordConnectionAndGetThrottleTimeMs`).
    pub(crate) fn record_connection_and_get_throttle_time(
        &self,
        listener: &Arc<str>,
    ) -> Option<Duration> {
        self.record_connection_at(listener, self.now_ms())
    }

    fn record_connection_at(&self, listener: &Arc<str>, now_ms: i64) -> Option<Duration> {
        let bound = self.limits.max_connection_creation_rate?;
        if !self.broker_rate_applies(listener) {
            return None;
        }
        let window = self.quota_window;
        let mut rates = lock(&self.ip_rates);
        rates.broker_rate.record(window, 1.0, now_ms);
        let throttle_ms = bounded_throttle_ms(&mut rates.broker_rate, window, bound, now_ms)?;
        rates
            .throttle_times
            .entry(Arc::clone(listener))
            .or_default()
            .1
            .record(THROTTLE_TIME_WINDOW, throttle_ms, now_ms);
        Some(Duration::from_millis(throttle_ms as u64))
    }

    fn record_ip_connection_at(
        &self,
        listener: &Arc<str>,
        ip: IpAddr,
        now_ms: i64,
    ) -> Option<Duration> {
        let window = self.quota_window;
        let mut rates = lock(&self.ip_rates);
        let bound = rates.overrides.get(&ip).copied().or(rates.default_rate)?;
        if now_ms - rates.last_purge_ms >= SENSOR_PURGE_INTERVAL_MS {
            rates.last_purge_ms = now_ms;
            rates
                .sensors
                .retain(|_, s| now_ms - s.last_record_ms < INACTIVE_SENSOR_EXPIRATION_MS);
        }
        let sensor = rates.sensors.entry(ip).or_default();
        sensor.last_record_ms = now_ms;
        sensor.rate.record(window, 1.0, now_ms);
        let throttle_ms = bounded_throttle_ms(&mut sensor.rate, window, bound, now_ms)?;
        // The connection is not accepted: it does not count, here nor in the broker's rate.
        sensor.rate.record(window, -1.0, now_ms);
        if self.broker_rate_applies(listener) {
            rates.broker_rate.record(window, -1.0, now_ms);
        }
        rates
            .throttle_times
            .entry(Arc::clone(listener))
            .or_default()
            .0
            .record(THROTTLE_TIME_WINDOW, throttle_ms, now_ms);
        Some(Duration::from_millis(throttle_ms as u64))
    }

    /// Waits until a connection may be accepted under `max.connections`; the permit is the
    /// connection's once [`ConnectionQuotas::admit`] takes it.
    pub(crate) async fn wait_for_slot(&self) -> Option<OwnedSemaphorePermit> {
        match &self.broker_wide {
            // The semaphore is never closed.
            Some(s) => Arc::clone(s).acquire_owned().await.ok(),
            None => None,
        }
    }

    /// Admits an accepted connection from `ip`, or refuses it (`Err` with the limit) when its
    /// address already has as many as `max.connections.per.ip` allows.
    pub(crate) fn admit(
        self: &Arc<Self>,
        ip: IpAddr,
        broker_wide: Option<OwnedSemaphorePermit>,
    ) -> Result<ConnectionSlot, usize> {
        let limit = self
            .limits
            .max_connections_per_ip_overrides
            .get(&ip)
            .copied()
            .or(self.limits.max_connections_per_ip);
        let mut per_ip = lock(&self.per_ip);
        let count = per_ip.entry(ip).or_default();
        if let Some(limit) = limit
            && *count >= limit
        {
            if *count == 0 {
                per_ip.remove(&ip);
            }
            return Err(limit);
        }
        *count += 1;
        Ok(ConnectionSlot {
            quotas: Arc::clone(self),
            ip,
            _broker_wide: broker_wide,
        })
    }

    /// Takes `bytes` from the memory pool for a frame of that size, waiting until they are free;
    /// at once when there is no pool.
    pub(crate) async fn allocate(&self, bytes: usize) -> PooledBytes {
        let Some(pool) = &self.pool else {
            return PooledBytes::unpooled();
        };
        if let Some(pooled) = pool.try_allocate(bytes) {
            return pooled;
        }
        // Operators see which limit holds a connection back (Kafka mutes it silently).
        tracing::info!(
            frame_bytes = bytes,
            free_bytes = pool.available(),
            pool_bytes = pool.size(),
            "a request waits for memory: queued.max.request.bytes is in use"
        );
        // A frame is at most socket.request.max.bytes, which the pool's size is at least (the
        // configuration checks it), so the wait always ends.
        pool.allocate(bytes).await
    }

    /// Connections open now from `ip`.
    #[cfg(test)]
    fn open_from(&self, ip: IpAddr) -> usize {
        lock(&self.per_ip).get(&ip).copied().unwrap_or(0)
    }
}

/// Kafka's `QuotaUtils.boundedThrottleTime` for a connection rate just recorded in `stat`: the
/// wait that brings the rate back to `bound` over the rate's window, at most one sample's
/// length; `None` when the rate is within the bound.
fn bounded_throttle_ms(
    stat: &mut SampledStat,
    window: QuotaWindow,
    bound: u32,
    now_ms: i64,
) -> Option<f64> {
    let bound = f64::from(bound);
    let observed = stat.rate(window, now_ms);
    if observed <= bound {
        return None;
    }
    let window_ms = stat.window_size_ms(window, now_ms) as f64;
    let throttle_ms = if bound > 0.0 {
        ((observed - bound) / bound * window_ms).round()
    } else {
        f64::INFINITY
    }
    .min(window.window_ms as f64);
    (throttle_ms >= 1.0).then_some(throttle_ms)
}

/// The connection-rate metrics (see the module doc).
impl MetricsSource for ConnectionQuotas {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        let now = self.now_ms();
        let window = self.quota_window;
        let mut rates = lock(&self.ip_rates);
        let mut ips: Vec<(IpAddr, f64)> = rates
            .sensors
            .iter_mut()
            .map(|(ip, sensor)| (*ip, sensor.rate.rate(window, now)))
            .collect();
        ips.sort_by_key(|(ip, _)| *ip);
        for (ip, rate) in ips {
            out.push(MetricSample {
                mbean: MBeanName::kafka_group(
                    "kafka.server",
                    "socket-server-metrics",
                    &[("ip", &ip.to_string())],
                ),
                reading: Reading::KafkaMetrics(vec![("connection-accept-rate", rate)]),
            });
        }
        for (listener, (ip_throttle, throttle)) in rates.throttle_times.iter_mut() {
            out.push(MetricSample {
                mbean: MBeanName::kafka_group(
                    "kafka.server",
                    "socket-server-metrics",
                    &[("listener", listener)],
                ),
                reading: Reading::KafkaMetrics(vec![
                    (
                        "ip-connection-accept-throttle-time",
                        ip_throttle.avg(THROTTLE_TIME_WINDOW, now),
                    ),
                    (
                        "connection-accept-throttle-time",
                        throttle.avg(THROTTLE_TIME_WINDOW, now),
                    ),
                ]),
            });
        }
        if self.limits.max_connection_creation_rate.is_some() {
            out.push(MetricSample {
                mbean: MBeanName::kafka_group("kafka.server", "socket-server-metrics", &[]),
                reading: Reading::KafkaMetrics(vec![(
                    "broker-connection-accept-rate",
                    rates.broker_rate.rate(window, now),
                )]),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn per_ip_limits_and_overrides_count_open_connections() {
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            max_connections_per_ip: Some(1),
            max_connections_per_ip_overrides: [(b, 2)].into_iter().collect(),
            ..ConnectionLimits::default()
        });
        let first = quotas.admit(a, None).unwrap();
        assert_eq!(quotas.admit(a, None).unwrap_err(), 1);
        let _b1 = quotas.admit(b, None).unwrap();
        let _b2 = quotas.admit(b, None).unwrap();
        assert_eq!(quotas.admit(b, None).unwrap_err(), 2);
        drop(first);
        assert_eq!(quotas.open_from(a), 0);
        assert!(quotas.admit(a, None).is_ok());
    }

    #[tokio::test]
    async fn max_connections_holds_the_acceptor() {
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            max_connections: Some(1),
            ..ConnectionLimits::default()
        });
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let permit = quotas.wait_for_slot().await;
        let slot = quotas.admit(ip, permit).unwrap();
        let next =
            tokio::time::timeout(std::time::Duration::from_millis(50), quotas.wait_for_slot());
        assert!(next.await.is_err());
        drop(slot);
        assert!(
            tokio::time::timeout(std::time::Duration::from_secs(1), quotas.wait_for_slot())
                .await
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn an_ip_over_its_connection_rate_is_throttled_and_not_counted() {
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            quota_window_num: 2,
            ..ConnectionLimits::default()
        });
        let handle = quotas.ip_connection_rate_quotas();
        let listener: Arc<str> = Arc::from("PLAINTEXT");
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        // No quota: nothing is measured.
        assert_eq!(quotas.record_ip_connection_at(&listener, a, 0), None);
        assert!(lock(&quotas.ip_rates).sensors.is_empty());
        handle.update_ip_connection_rate_quota(Some(a), Some(5));
        // Two samples of a second: the rate is taken over at least one second (Kafka's
        // minimum of samples - 1 windows), so five connections fit in the first.
        for t in 0..5 {
            assert_eq!(quotas.record_ip_connection_at(&listener, a, t * 10), None);
        }
        // Six over 1.05 s: (6 / 1.05 - 5) / 5 of the 1,050 ms window.
        assert_eq!(
            quotas.record_ip_connection_at(&listener, a, 50),
            Some(Duration::from_millis(150))
        );
        // It was taken back: five over 1.2 s leave room for a sixth.
        assert_eq!(quotas.record_ip_connection_at(&listener, a, 1_200), None);
        // Another address has no quota until the default applies to it.
        assert_eq!(quotas.record_ip_connection_at(&listener, b, 60), None);
        handle.update_ip_connection_rate_quota(None, Some(1));
        assert_eq!(handle.connection_rate_for_ip(b), Some(1));
        assert_eq!(handle.connection_rate_for_ip(a), Some(5));
        assert_eq!(quotas.record_ip_connection_at(&listener, b, 100), None);
        assert_eq!(
            quotas.record_ip_connection_at(&listener, b, 110),
            Some(Duration::from_millis(990))
        );
        // Removing the override leaves the default, which a's rate is far over: the throttle is
        // capped at one window.
        handle.update_ip_connection_rate_quota(Some(a), None);
        assert_eq!(handle.connection_rate_for_ip(a), Some(1));
        assert_eq!(
            quotas.record_ip_connection_at(&listener, a, 1_210),
            Some(Duration::from_millis(1_000))
        );
        // Removing the default leaves no quota.
        handle.update_ip_connection_rate_quota(None, None);
        assert_eq!(handle.connection_rate_for_ip(a), None);
        for t in 0..50 {
            assert_eq!(
                quotas.record_ip_connection_at(&listener, a, 1_300 + t),
                None
            );
        }
        let mut out = Vec::new();
        quotas.collect(&mut out);
        let names: Vec<String> = out.iter().map(|s| s.mbean.to_string()).collect();
        assert_eq!(
            names,
            [
                "kafka.server:type=socket-server-metrics,ip=127.0.0.1",
                "kafka.server:type=socket-server-metrics,ip=127.0.0.2",
                "kafka.server:type=socket-server-metrics,listener=PLAINTEXT",
            ]
        );
        let Reading::KafkaMetrics(throttle) = &out[2].reading else {
            panic!("{:?}", out[2].reading);
        };
        assert_eq!(throttle[0].0, "ip-connection-accept-throttle-time");
        assert_eq!(throttle[1], ("connection-accept-throttle-time", 0.0));
        assert!((throttle[0].1 - (150.0 + 990.0 + 1_000.0) / 3.0).abs() < 1e-9);
    }

    #[test]
    fn the_broker_rate_delays_connections_except_on_the_protected_listener() {
        let quotas = ConnectionQuotas::new(ConnectionLimits {
            quota_window_num: 2,
            max_connection_creation_rate: Some(2),
            protected_listener: Some("INTERNAL".into()),
            ..ConnectionLimits::default()
        });
        let external: Arc<str> = Arc::from("EXTERNAL");
        let internal: Arc<str> = Arc::from("INTERNAL");
        assert_eq!(quotas.record_connection_at(&external, 0), None);
        assert_eq!(quotas.record_connection_at(&external, 0), None);
        // Three over one second, 2 allowed: half the window. The connection counts all the same.
        assert_eq!(
            quotas.record_connection_at(&external, 0),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            quotas.record_connection_at(&external, 0),
            Some(Duration::from_millis(1_000))
        );
        assert_eq!(quotas.record_connection_at(&internal, 0), None);
        // A connection refused for its address's rate is taken back from the broker's.
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        quotas
            .ip_connection_rate_quotas()
            .update_ip_connection_rate_quota(Some(ip), Some(0));
        let before = lock(&quotas.ip_rates)
            .broker_rate
            .sum(quotas.quota_window, 0);
        assert!(quotas.record_ip_connection_at(&external, ip, 0).is_some());
        let after = lock(&quotas.ip_rates)
            .broker_rate
            .sum(quotas.quota_window, 0);
        assert_eq!(after, before - 1.0);
        let mut out = Vec::new();
        quotas.collect(&mut out);
        let broker = out
            .iter()
            .find(|s| s.mbean.to_string() == "kafka.server:type=socket-server-metrics")
            .unwrap();
        let Reading::KafkaMetrics(rate) = &broker.reading else {
            panic!("{:?}", broker.reading);
        };
        assert_eq!(rate[0].0, "broker-connection-accept-rate");
    }
}
