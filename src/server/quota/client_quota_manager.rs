//! Kafka's `ClientQuotaManager` with its `DefaultQuotaCallback`: the quotas of one type
//! (produce bytes, fetch bytes or request time) set for users, client ids and their
//! combinations, the precedence that picks the one a request is measured against, the sensors
//! that measure each quota's users, and the throttle time that brings a client back under its
//! quota (KIP-219: the broker answers at once with `throttle_time_ms` and mutes the connection
//! for that long).
//!
//! **Precedence** (Kafka's, most specific first): `/config/users/<user>/clients/<client-id>`,
//! `/config/users/<user>/clients/<default>`, `/config/users/<user>`,
//! `/config/users/<default>/clients/<client-id>`, `/config/users/<default>/clients/<default>`,
//! `/config/users/<default>`, `/config/clients/<client-id>`, `/config/clients/<default>`.
//!
//! **Sharing.** A sensor is keyed by the level that matched, as Kafka keys its metrics: a
//! quota set for a user is shared by all of that user's client ids (tags `user=u,
//! client-id=""`); one set for a client id, by every user of that id. While quotas exist at one
//! level only, the tags follow that level without looking at the overrides (Kafka's
//! `QuotaTypes` optimisation); the mask of levels ever configured only grows until restart.
//!
//! **Cost when unused.** Until a quota of this type is configured, [`ClientQuotaManager::
//! quotas_enabled`] is one relaxed atomic load and nothing is recorded: clients without quotas
//! pay nothing.
//!
//! **Throttling.** The rate a sensor reports is Kafka's windowed `Rate` (what `byte-rate` and
//! `request-time` show), but the throttle is taken from a token bucket of one window's quota
//! (Kafka's `TokenBucket` stat, as its controller mutation quota uses it): a request takes its
//! value from the bucket, and a client in debt waits until the quota has repaid it. Kafka's
//! `Rate` forgives a first burst of ten windows and lets the client send a window's worth at
//! once each time an old sample leaves the window, so a client flat out gets its quota only on
//! average, in bursts; the bucket holds it to its quota second by second after a first burst of
//! one window, which is never more than Kafka's would allow. The request quota's debt is
//! bounded by what Kafka's window remembers (`quota.window.num` windows of the quota), as its
//! throttle is capped at one window.
//!
//! Lock order: `overrides` before `sensors` before one sensor's mutex; none is held across an
//! await (there are none here).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::metrics::sampled_stat::{QuotaWindow, SampledStat};
use crate::metrics::token_bucket::{TokenBucket, kafka_burst, throttle_time_ms};
use crate::zk::sanitizer::sanitize;

/// Which quota a manager enforces; Kafka's `QuotaType`, whose name is the metrics' `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum QuotaType {
    /// `producer_byte_rate`: request bytes per second.
    Produce,
    /// `consumer_byte_rate`: response bytes per second.
    Fetch,
    /// `request_percentage`: I/O and network thread time, in percent of one thread.
    Request,
    /// `controller_mutation_rate`: partitions created or deleted per second, measured by a
    /// token bucket (`super::controller_mutation_quota`).
    ControllerMutation,
}

impl QuotaType {
    /// Kafka's name for it (`kafka.server:type=<name>,...`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            QuotaType::Produce => "Produce",
            QuotaType::Fetch => "Fetch",
            QuotaType::Request => "Request",
            QuotaType::ControllerMutation => "ControllerMutation",
        }
    }
}

/// The user part of a quota entity. `Named` holds the name as ZooKeeper stores it (sanitized:
/// Kafka's URL encoding of the principal's name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum UserEntity {
    Named(String),
    /// `<default>`.
    Default,
}

/// The client-id part of a quota entity: the client id itself (not sanitized).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ClientIdEntity {
    Named(String),
    /// `<default>`.
    Default,
}

/// Where a quota is configured (Kafka's `KafkaQuotaEntity`): a user, a client id, or both, each
/// possibly `<default>`.
///
/// Invariant: at least one part is present.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct KafkaQuotaEntity {
    pub user: Option<UserEntity>,
    pub client_id: Option<ClientIdEntity>,
}

impl KafkaQuotaEntity {
    fn user_client(user: UserEntity, client_id: ClientIdEntity) -> Self {
        KafkaQuotaEntity {
            user: Some(user),
            client_id: Some(client_id),
        }
    }

    fn user(user: UserEntity) -> Self {
        KafkaQuotaEntity {
            user: Some(user),
            client_id: None,
        }
    }

    fn client_id(client_id: ClientIdEntity) -> Self {
        KafkaQuotaEntity {
            user: None,
            client_id: Some(client_id),
        }
    }
}

/// The tags a sensor is known by: the sanitized user and the client id, either empty where the
/// quota that applies is shared across it (Kafka's `quotaMetricTags`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct QuotaMetricTags {
    pub user: String,
    pub client_id: String,
}

/// Bits of Kafka's `QuotaTypes`: which levels have ever had a quota configured.
const CLIENT_ID_QUOTA_ENABLED: u8 = 1;
const USER_QUOTA_ENABLED: u8 = 2;
const USER_CLIENT_ID_QUOTA_ENABLED: u8 = 4;

/// Kafka's `InactiveSensorExpirationTimeSeconds`: sensors unused for an hour are dropped.
const INACTIVE_SENSOR_EXPIRATION_MS: i64 = 3_600_000;

/// How often the sensors are scanned for inactive ones (Kafka's `ExpireSensorTask` period).
const SENSOR_PURGE_INTERVAL_MS: i64 = 30_000;

/// A fetch takes at most this share of one window's quota, so a throttled consumer's bytes
/// arrive in steps of at most 5% of its quota per window instead of all at once.
const FETCH_SLICES_PER_WINDOW: f64 = 20.0;

/// One quota user's measurements: the quota's rate, the token bucket its throttle is taken from
/// (the controller mutation quota's refusals too), and the throttle times it was given.
#[derive(Debug, Default)]
pub(super) struct ClientSensors {
    pub(super) quota: SampledStat,
    pub(super) bucket: TokenBucket,
    pub(super) throttle_time: SampledStat,
    pub(super) last_record_ms: i64,
}

/// What the metrics endpoint shows of one sensor (Kafka's `byte-rate` or `request-time`, and
/// `throttle-time`, under `kafka.server:type=<quota type>,user=…,client-id=…`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SensorReading {
    pub tags: QuotaMetricTags,
    pub rate: f64,
    pub throttle_time_avg_ms: f64,
    /// The controller mutation quota's tokens left (Kafka's `tokens`); `None` for other types.
    pub tokens: Option<f64>,
}

/// The quotas of one [`QuotaType`] and the sensors that measure them.
#[derive(Debug)]
pub(crate) struct ClientQuotaManager {
    quota_type: QuotaType,
    window: QuotaWindow,
    /// The request quota caps a throttle at one window (Kafka's
    /// `ClientRequestQuotaManager.maxThrottleTimeMs`); byte quotas do not.
    max_throttle_time_ms: Option<i64>,
    /// Kafka's `quotaTypesEnabled`; 0 until a quota of any level is configured.
    quota_types_enabled: AtomicU8,
    overrides: RwLock<HashMap<KafkaQuotaEntity, f64>>,
    sensors: RwLock<HashMap<QuotaMetricTags, Arc<Mutex<ClientSensors>>>>,
    last_purge_ms: AtomicI64,
}

impl ClientQuotaManager {
    pub(crate) fn new(quota_type: QuotaType, window: QuotaWindow) -> Self {
        let max_throttle_time_ms = (quota_type == QuotaType::Request).then_some(window.window_ms);
        ClientQuotaManager {
            quota_type,
            window,
            max_throttle_time_ms,
            quota_types_enabled: AtomicU8::new(0),
            overrides: RwLock::new(HashMap::new()),
            sensors: RwLock::new(HashMap::new()),
            last_purge_ms: AtomicI64::new(0),
        }
    }

    pub(crate) fn quota_type(&self) -> QuotaType {
        self.quota_type
    }

    /// The window the quota is measured over.
    pub(super) fn window(&self) -> QuotaWindow {
        self.window
    }

    /// Runs `f` on the client's sensor, locked, with the quota that applies to it and `now_ms`
    /// noted as its last use (the controller mutation quota's own recording).
    pub(super) fn with_sensor<R>(
        &self,
        user: &str,
        client_id: &str,
        now_ms: i64,
        f: impl FnOnce(&mut ClientSensors, Option<f64>) -> R,
    ) -> R {
        self.maybe_purge(now_ms);
        let (tags, bound) = self.tags_and_limit(user, client_id);
        let sensor = self.sensor(tags);
        let mut sensor = sensor.lock().unwrap_or_else(|e| e.into_inner());
        sensor.last_record_ms = now_ms;
        f(&mut sensor, bound)
    }

    /// Whether any quota of this type was configured since start (Kafka keeps measuring once
    /// one was, even after it is removed).
    pub(crate) fn quotas_enabled(&self) -> bool {
        self.quota_types_enabled.load(Ordering::Relaxed) != 0
    }

    /// Sets (`Some`) or removes (`None`) the quota of `entity` (Kafka's `updateQuota`). Either
    /// marks the entity's level as configured, as Kafka's does.
    pub(crate) fn update_quota(&self, entity: KafkaQuotaEntity, quota: Option<f64>) {
        let mut overrides = self.overrides.write().unwrap_or_else(|e| e.into_inner());
        let level = match (&entity.user, &entity.client_id) {
            (Some(_), Some(_)) => USER_CLIENT_ID_QUOTA_ENABLED,
            (Some(_), None) => USER_QUOTA_ENABLED,
            (None, Some(_)) => CLIENT_ID_QUOTA_ENABLED,
            (None, None) => return,
        };
        match quota {
            Some(bound) => {
                tracing::info!(
                    quota_type = self.quota_type.name(),
                    ?entity,
                    bound,
                    "changing quota"
                );
                overrides.insert(entity, bound);
            }
            None => {
                tracing::info!(
                    quota_type = self.quota_type.name(),
                    ?entity,
                    "removing quota"
                );
                overrides.remove(&entity);
            }
        }
        self.quota_types_enabled.fetch_or(level, Ordering::Relaxed);
    }

    /// Records `value` for the client and returns the milliseconds it must wait for its rate
    /// to come back to its quota, 0 if it is within it (Kafka's
    /// `maybeRecordAndGetThrottleTimeMs`). Records nothing while no quota is enabled.
    pub(crate) fn maybe_record_and_get_throttle_time_ms(
        &self,
        user: &str,
        client_id: &str,
        value: f64,
        now_ms: i64,
    ) -> i32 {
        if !self.quotas_enabled() {
            return 0;
        }
        self.record_and_get_throttle_time_ms(user, client_id, value, now_ms)
    }

    /// [`ClientQuotaManager::maybe_record_and_get_throttle_time_ms`] without the enabled check
    /// (Kafka's `recordAndGetThrottleTimeMs`).
    pub(crate) fn record_and_get_throttle_time_ms(
        &self,
        user: &str,
        client_id: &str,
        value: f64,
        now_ms: i64,
    ) -> i32 {
        self.maybe_purge(now_ms);
        let (tags, bound) = self.tags_and_limit(user, client_id);
        let sensor = self.sensor(tags);
        let mut sensor = sensor.lock().unwrap_or_else(|e| e.into_inner());
        let Some(tokens) = self.record_in(&mut sensor, bound, value, now_ms) else {
            return 0;
        };
        let Some(bound) = bound else {
            return 0;
        };
        // Wait until the quota has repaid the debt.
        let mut throttle = throttle_time_ms(tokens, bound) as f64;
        if let Some(max) = self.max_throttle_time_ms {
            throttle = throttle.min(max as f64);
        }
        throttle.clamp(0.0, f64::from(i32::MAX)) as i32
    }

    /// Records `value` in a sensor's rate and, where a quota applies, its bucket; the bucket's
    /// level after, `None` without a quota.
    fn record_in(
        &self,
        sensor: &mut ClientSensors,
        bound: Option<f64>,
        value: f64,
        now_ms: i64,
    ) -> Option<f64> {
        sensor.last_record_ms = now_ms;
        sensor.quota.record(self.window, value, now_ms);
        let bound = bound?;
        let window_s = self.window.window_ms as f64 / 1000.0;
        // Kafka's burst for the controller mutation quota; one window for the others, so that
        // a client is held to its quota second by second.
        let burst = if self.quota_type == QuotaType::ControllerMutation {
            kafka_burst(self.window, bound)
        } else {
            bound * window_s
        };
        // The request quota forgets a debt after the windows Kafka's rate remembers, as its
        // throttle is capped at one window; a byte quota's debt is repaid in full, as Kafka's
        // formula throttles a request much larger than the quota for all of it.
        let max_debt = match self.max_throttle_time_ms {
            Some(_) => bound * f64::from(self.window.samples) * window_s,
            None => f64::INFINITY,
        };
        Some(sensor.bucket.record(bound, burst, max_debt, value, now_ms))
    }

    /// Records `value` without checking the quota; the next request pays for it (Kafka's
    /// `recordNoThrottle`: the network thread's time of the request quota).
    pub(crate) fn record_no_throttle(&self, user: &str, client_id: &str, value: f64, now_ms: i64) {
        if !self.quotas_enabled() {
            return;
        }
        let (tags, bound) = self.tags_and_limit(user, client_id);
        let sensor = self.sensor(tags);
        let mut sensor = sensor.lock().unwrap_or_else(|e| e.into_inner());
        self.record_in(&mut sensor, bound, value, now_ms);
    }

    /// Takes back a value recorded for a response that is sent empty because the client is
    /// throttled (Kafka's `unrecordQuotaSensor`).
    pub(crate) fn unrecord(&self, user: &str, client_id: &str, value: f64, now_ms: i64) {
        self.record_no_throttle(user, client_id, -value, now_ms);
    }

    /// The most bytes one fetch may return to a client: a twentieth of its quota over one
    /// window (Kafka sizes it at the quota over all windows but the current one, which lets a
    /// consumer take ten seconds' worth at once). `f64::MAX` when no quota applies.
    pub(crate) fn max_fetch_value(&self, user: &str, client_id: &str) -> f64 {
        if !self.quotas_enabled() {
            return f64::MAX;
        }
        match self.tags_and_limit(user, client_id).1 {
            Some(bound) => {
                bound * (self.window.window_ms as f64 / 1000.0) / FETCH_SLICES_PER_WINDOW
            }
            None => f64::MAX,
        }
    }

    /// Notes that the client was throttled for `throttle_time_ms` (Kafka's `throttle`, whose
    /// channel muting is the network layer's here).
    pub(crate) fn record_throttle_time(
        &self,
        user: &str,
        client_id: &str,
        throttle_time_ms: i32,
        now_ms: i64,
    ) {
        if throttle_time_ms <= 0 {
            return;
        }
        let (tags, _) = self.tags_and_limit(user, client_id);
        let sensor = self.sensor(tags);
        let mut sensor = sensor.lock().unwrap_or_else(|e| e.into_inner());
        sensor
            .throttle_time
            .record(self.window, f64::from(throttle_time_ms), now_ms);
    }

    /// The quota a client is measured against, or `None` (Kafka's `quota(user, clientId)`).
    #[cfg(test)]
    pub(crate) fn quota(&self, user: &str, client_id: &str) -> Option<f64> {
        self.tags_and_limit(user, client_id).1
    }

    /// Every sensor's rate and average throttle time now, for the metrics endpoint.
    pub(crate) fn readings(&self, now_ms: i64) -> Vec<SensorReading> {
        let overrides = self.overrides.read().unwrap_or_else(|e| e.into_inner());
        let sensors = self.sensors.read().unwrap_or_else(|e| e.into_inner());
        let mut readings: Vec<SensorReading> = sensors
            .iter()
            .map(|(tags, sensor)| {
                let mut sensor = sensor.lock().unwrap_or_else(|e| e.into_inner());
                let tokens = (self.quota_type == QuotaType::ControllerMutation).then(|| {
                    let bound = unbounded_as_kafka(quota_limit(&overrides, tags));
                    sensor
                        .bucket
                        .tokens(bound, kafka_burst(self.window, bound), now_ms)
                });
                SensorReading {
                    tags: tags.clone(),
                    rate: sensor.quota.rate(self.window, now_ms),
                    throttle_time_avg_ms: sensor.throttle_time.avg(self.window, now_ms),
                    tokens,
                }
            })
            .collect();
        readings.sort_by(|a, b| a.tags.cmp(&b.tags));
        readings
    }

    /// The sensor tags for a principal's name and client id, and the quota of the level that
    /// matched (Kafka's `quotaMetricTags` then `quotaLimit`).
    fn tags_and_limit(&self, user: &str, client_id: &str) -> (QuotaMetricTags, Option<f64>) {
        let user = sanitize(user);
        let overrides = self.overrides.read().unwrap_or_else(|e| e.into_inner());
        let tags = quota_metric_tags(
            self.quota_types_enabled.load(Ordering::Relaxed),
            &overrides,
            user,
            client_id,
        );
        let limit = quota_limit(&overrides, &tags);
        (tags, limit)
    }

    fn sensor(&self, tags: QuotaMetricTags) -> Arc<Mutex<ClientSensors>> {
        if let Some(sensor) = self
            .sensors
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&tags)
        {
            return Arc::clone(sensor);
        }
        let mut sensors = self.sensors.write().unwrap_or_else(|e| e.into_inner());
        Arc::clone(sensors.entry(tags).or_default())
    }

    /// Drops sensors unused for an hour, at most once per half minute.
    fn maybe_purge(&self, now_ms: i64) {
        let last = self.last_purge_ms.load(Ordering::Relaxed);
        if now_ms - last < SENSOR_PURGE_INTERVAL_MS
            || self
                .last_purge_ms
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let mut sensors = self.sensors.write().unwrap_or_else(|e| e.into_inner());
        sensors.retain(|_, sensor| {
            let sensor = sensor.lock().unwrap_or_else(|e| e.into_inner());
            now_ms - sensor.last_record_ms < INACTIVE_SENSOR_EXPIRATION_MS
        });
    }
}

/// The bound Kafka gives a sensor no quota applies to: `Long.MAX_VALUE` (`quotaLimit`), which
/// no rate reaches and which keeps a token bucket full.
pub(super) fn unbounded_as_kafka(bound: Option<f64>) -> f64 {
    bound.unwrap_or(i64::MAX as f64)
}

/// Kafka's `DefaultQuotaCallback.quotaMetricTags`: while one level only was ever configured,
/// that level's tags; otherwise the tags of the first level in precedence order that has a
/// quota, the client-id levels last.
fn quota_metric_tags(
    enabled: u8,
    overrides: &HashMap<KafkaQuotaEntity, f64>,
    user: String,
    client_id: &str,
) -> QuotaMetricTags {
    let tags = |user: String, client_id: &str| QuotaMetricTags {
        user,
        client_id: client_id.to_owned(),
    };
    match enabled {
        0 | CLIENT_ID_QUOTA_ENABLED => return tags(String::new(), client_id),
        USER_QUOTA_ENABLED => return tags(user, ""),
        USER_CLIENT_ID_QUOTA_ENABLED => return tags(user, client_id),
        _ => {}
    }
    let named_user = UserEntity::Named(user.clone());
    let named_client = ClientIdEntity::Named(client_id.to_owned());
    let has = |entity: KafkaQuotaEntity| overrides.contains_key(&entity);
    if has(KafkaQuotaEntity::user_client(
        named_user.clone(),
        named_client.clone(),
    )) || has(KafkaQuotaEntity::user_client(
        named_user.clone(),
        ClientIdEntity::Default,
    )) {
        tags(user, client_id)
    } else if has(KafkaQuotaEntity::user(named_user)) {
        tags(user, "")
    } else if has(KafkaQuotaEntity::user_client(
        UserEntity::Default,
        named_client,
    )) || has(KafkaQuotaEntity::user_client(
        UserEntity::Default,
        ClientIdEntity::Default,
    )) {
        tags(user, client_id)
    } else if has(KafkaQuotaEntity::user(UserEntity::Default)) {
        tags(user, "")
    } else {
        tags(String::new(), client_id)
    }
}

/// Kafka's `DefaultQuotaCallback.quotaLimit`: the quota for a sensor's tags, searched in
/// precedence order within the levels the tags can come from.
fn quota_limit(overrides: &HashMap<KafkaQuotaEntity, f64>, tags: &QuotaMetricTags) -> Option<f64> {
    let get = |entity: KafkaQuotaEntity| overrides.get(&entity).copied();
    let user = || UserEntity::Named(tags.user.clone());
    let client = || ClientIdEntity::Named(tags.client_id.clone());
    match (tags.user.is_empty(), tags.client_id.is_empty()) {
        (false, false) => get(KafkaQuotaEntity::user_client(user(), client()))
            .or_else(|| {
                get(KafkaQuotaEntity::user_client(
                    user(),
                    ClientIdEntity::Default,
                ))
            })
            .or_else(|| get(KafkaQuotaEntity::user_client(UserEntity::Default, client())))
            .or_else(|| {
                get(KafkaQuotaEntity::user_client(
                    UserEntity::Default,
                    ClientIdEntity::Default,
                ))
            }),
        (false, true) => get(KafkaQuotaEntity::user(user()))
            .or_else(|| get(KafkaQuotaEntity::user(UserEntity::Default))),
        (true, false) => get(KafkaQuotaEntity::client_id(client()))
            .or_else(|| get(KafkaQuotaEntity::client_id(ClientIdEntity::Default))),
        (true, true) => None,
    }
}

#[cfg(test)]
#[path = "client_quota_manager_tests.rs"]
mod tests;
