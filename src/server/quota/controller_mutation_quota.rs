//! Kafka 3.9's `ControllerMutationQuotaManager` (KIP-599): `controller_mutation_rate`, the
//! partitions a user or client id may create or delete per second through CreateTopics,
//! CreatePartitions and DeleteTopics, with the precedence and sensors of the other client
//! quotas (`super::client_quota_manager`).
//!
//! **Measure.** A [`TokenBucket`](crate::metrics::token_bucket::TokenBucket), not a windowed
//! rate: it holds `controller.quota.window.num * controller.quota.window.size.seconds` seconds of
//! the quota (the burst) and refills at the quota; every partition created or deleted takes a
//! token. The throttle time is what brings the tokens back to zero.
//!
//! **Per request** a handler takes a [`ControllerMutationQuota`]: *strict* from CreateTopics v6,
//! CreatePartitions v3 and DeleteTopics v5 on, where a topic is refused with
//! THROTTLING_QUOTA_EXCEEDED while the tokens are below zero (a topic that finds them at zero or
//! more is accepted whatever its size, as in Kafka), and *permissive* before, where every topic
//! is accepted and only the throttle time is set. Either way the response carries the throttle
//! time still to run when it goes out, and the connection is muted for it
//! (`super::request_quotas::throttle_controller_mutation`). Topics a broker creates for itself
//! (auto-creation, internal topics) take a permissive quota and only count. Kafka exempts no
//! principal: it only spares requests forwarded by another broker, which ZooKeeper mode does not
//! forward.

use super::client_quota_manager::{ClientQuotaManager, QuotaType, unbounded_as_kafka};
use super::request_quotas::now_ms;
use crate::metrics::sampled_stat::QuotaWindow;
use crate::metrics::token_bucket::{kafka_burst, throttle_time_ms};

/// A mutation refused because the quota's tokens are below zero (Kafka's
/// `ThrottlingQuotaExceededException`, whose message is the error code's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("The throttling quota has been exceeded.")]
pub struct ThrottlingQuotaExceeded {
    /// The milliseconds until the tokens are back to zero.
    pub throttle_time_ms: i64,
}

/// The controller mutation quotas and the sensors that measure them.
#[derive(Debug)]
pub(crate) struct ControllerMutationQuotaManager {
    manager: ClientQuotaManager,
}

impl ControllerMutationQuotaManager {
    /// Over `window` (`controller.quota.window.num`, `controller.quota.window.size.seconds`).
    pub(crate) fn new(window: QuotaWindow) -> Self {
        ControllerMutationQuotaManager {
            manager: ClientQuotaManager::new(QuotaType::ControllerMutation, window),
        }
    }

    /// The manager of the quotas' configs and sensors.
    pub(crate) fn manager(&self) -> &ClientQuotaManager {
        &self.manager
    }

    /// Sets or removes `entity`'s `controller_mutation_rate`.
    #[cfg(test)]
    pub(crate) fn update_quota(
        &self,
        entity: super::client_quota_manager::KafkaQuotaEntity,
        quota: Option<f64>,
    ) {
        self.manager.update_quota(entity, quota);
    }

    /// Kafka's `newQuotaFor(request, strictSinceVersion)`: strict from `strict_since_version`
    /// on, permissive before, unbounded while no controller mutation quota was ever configured.
    pub(crate) fn new_quota_for<'a>(
        &'a self,
        user: &str,
        client_id: &str,
        api_version: i16,
        strict_since_version: i16,
    ) -> ControllerMutationQuota<'a> {
        let mode = if api_version >= strict_since_version {
            Mode::Strict
        } else {
            Mode::Permissive
        };
        self.quota_for(user, client_id, mode)
    }

    /// Kafka's `newPermissiveQuotaFor`: mutations are counted and never refused.
    pub(crate) fn new_permissive_quota_for<'a>(
        &'a self,
        user: &str,
        client_id: &str,
    ) -> ControllerMutationQuota<'a> {
        self.quota_for(user, client_id, Mode::Permissive)
    }

    fn quota_for<'a>(
        &'a self,
        user: &str,
        client_id: &str,
        mode: Mode,
    ) -> ControllerMutationQuota<'a> {
        if !self.manager.quotas_enabled() {
            return ControllerMutationQuota::unbounded();
        }
        ControllerMutationQuota {
            mode,
            sensor: Some(Sensor {
                manager: &self.manager,
                user: user.to_owned(),
                client_id: client_id.to_owned(),
            }),
            last_throttle_time_ms: 0,
            last_recorded_time_ms: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Strict,
    Permissive,
}

#[derive(Debug)]
struct Sensor<'a> {
    manager: &'a ClientQuotaManager,
    user: String,
    client_id: String,
}

/// One request's controller mutation quota (Kafka's `ControllerMutationQuota`): recorded as its
/// topics are created or deleted, and asked for the throttle time when the response goes out.
#[derive(Debug)]
pub(crate) struct ControllerMutationQuota<'a> {
    mode: Mode,
    /// `None`: unbounded (Kafka's `UnboundedControllerMutationQuota`).
    sensor: Option<Sensor<'a>>,
    last_throttle_time_ms: i64,
    last_recorded_time_ms: i64,
}

impl ControllerMutationQuota<'_> {
    /// A quota that never refuses nor throttles.
    pub(crate) fn unbounded() -> Self {
        ControllerMutationQuota {
            mode: Mode::Permissive,
            sensor: None,
            last_throttle_time_ms: 0,
            last_recorded_time_ms: 0,
        }
    }

    /// Records `permits` mutations (partitions) now; see [`ControllerMutationQuota::record_at`].
    pub(crate) fn record(&mut self, permits: f64) -> Result<(), ThrottlingQuotaExceeded> {
        self.record_at(permits, now_ms())
    }

    /// Records `permits` mutations at `now`. A strict quota whose tokens are below zero records
    /// nothing and refuses with the throttle time (Kafka's `StrictControllerMutationQuota
    /// .record`); a permissive one records and notes the throttle time the mutations cost.
    pub(crate) fn record_at(
        &mut self,
        permits: f64,
        now: i64,
    ) -> Result<(), ThrottlingQuotaExceeded> {
        let Some(sensor) = &self.sensor else {
            return Ok(());
        };
        let window = sensor.manager.window();
        let mode = self.mode;
        let throttle =
            sensor
                .manager
                .with_sensor(&sensor.user, &sensor.client_id, now, |sensors, bound| {
                    let bound = unbounded_as_kafka(bound);
                    if mode == Mode::Strict {
                        // Kafka's `checkQuotas` before the record.
                        let tokens = sensors
                            .bucket
                            .tokens(bound, kafka_burst(window, bound), now);
                        if tokens < 0.0 {
                            return Err(throttle_time_ms(tokens, bound));
                        }
                    }
                    sensors.quota.record(window, permits, now);
                    sensors.bucket.record(
                        bound,
                        kafka_burst(window, bound),
                        f64::INFINITY,
                        permits,
                        now,
                    );
                    Ok(throttle_time_ms(
                        sensors
                            .bucket
                            .tokens(bound, kafka_burst(window, bound), now),
                        bound,
                    ))
                });
        match throttle {
            Ok(throttle_ms) => {
                if mode == Mode::Permissive && throttle_ms > 0 {
                    self.last_throttle_time_ms = throttle_ms;
                    self.last_recorded_time_ms = now;
                }
                Ok(())
            }
            Err(throttle_ms) => {
                self.last_throttle_time_ms = throttle_ms;
                self.last_recorded_time_ms = now;
                Err(ThrottlingQuotaExceeded {
                    throttle_time_ms: throttle_ms,
                })
            }
        }
    }

    /// The throttle time still to run now; see [`ControllerMutationQuota::throttle_time_at`].
    pub(crate) fn throttle_time(&self) -> i32 {
        self.throttle_time_at(now_ms())
    }

    /// The last throttle time recorded less the time since (Kafka's `throttleTime`: a response
    /// that waited for the controller owes only the rest).
    pub(crate) fn throttle_time_at(&self, now: i64) -> i32 {
        let left = self.last_throttle_time_ms - (now - self.last_recorded_time_ms);
        i32::try_from(left.max(0)).unwrap_or(i32::MAX)
    }

    /// Where the throttle is recorded: the user and client id of the request, if bounded.
    pub(crate) fn manager(&self) -> Option<&ClientQuotaManager> {
        self.sensor.as_ref().map(|s| s.manager)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::quota::client_quota_manager::{ClientIdEntity, KafkaQuotaEntity};

    fn manager_with(rate: f64) -> ControllerMutationQuotaManager {
        let manager = ControllerMutationQuotaManager::new(QuotaWindow::DEFAULT);
        manager.update_quota(
            KafkaQuotaEntity {
                user: None,
                client_id: Some(ClientIdEntity::Named("admin".into())),
            },
            Some(rate),
        );
        manager
    }

    #[test]
    fn unconfigured_quotas_are_unbounded() {
        let manager = ControllerMutationQuotaManager::new(QuotaWindow::DEFAULT);
        let mut quota = manager.new_quota_for("u", "admin", 6, 6);
        quota.record_at(1e9, 0).unwrap();
        assert_eq!(quota.throttle_time_at(0), 0);
        assert!(quota.manager().is_none());
    }

    #[test]
    fn strict_accepts_while_tokens_are_not_below_zero_then_refuses_with_the_refill_time() {
        // 2 partitions a second: a burst of 22.
        let manager = manager_with(2.0);
        let mut quota = manager.new_quota_for("u", "admin", 6, 6);
        quota.record_at(20.0, 0).unwrap();
        // 2 tokens left: a 10-partition topic is still accepted, leaving -8.
        quota.record_at(10.0, 0).unwrap();
        assert_eq!(
            quota.throttle_time_at(0),
            0,
            "strict throttles only refused topics"
        );
        let refused = quota.record_at(1.0, 0).unwrap_err();
        assert_eq!(refused.throttle_time_ms, 4_000);
        assert_eq!(quota.throttle_time_at(1_000), 3_000);
        // The refused topic took nothing: 4 s later the bucket is at zero and accepts again.
        let mut next = manager.new_quota_for("u", "admin", 6, 6);
        next.record_at(1.0, 4_000).unwrap();
        assert_eq!(
            next.record_at(1.0, 4_000).unwrap_err().throttle_time_ms,
            500
        );
        // Another client id has no quota and its own sensor.
        let mut other = manager.new_quota_for("u", "other", 6, 6);
        other.record_at(1_000.0, 4_000).unwrap();
        other.record_at(1.0, 4_000).unwrap();
    }

    #[test]
    fn permissive_accepts_everything_and_throttles_for_the_debt() {
        let manager = manager_with(2.0);
        let mut quota = manager.new_quota_for("u", "admin", 5, 6);
        quota.record_at(22.0, 0).unwrap();
        assert_eq!(quota.throttle_time_at(0), 0);
        quota.record_at(4.0, 0).unwrap();
        quota.record_at(4.0, 0).unwrap();
        assert_eq!(quota.throttle_time_at(0), 4_000);
        assert_eq!(quota.throttle_time_at(2_500), 1_500);
        assert_eq!(quota.throttle_time_at(9_000), 0);
        // The debt is shared with the next request, strict or not.
        let mut strict = manager.new_quota_for("u", "admin", 6, 6);
        assert_eq!(
            strict.record_at(1.0, 1_000).unwrap_err().throttle_time_ms,
            3_000
        );
        let mut auto = manager.new_permissive_quota_for("u", "admin");
        auto.record_at(2.0, 1_000).unwrap();
        assert_eq!(auto.throttle_time_at(1_000), 4_000);
    }

    #[test]
    fn readings_show_tokens_and_the_mutation_rate() {
        let manager = manager_with(2.0);
        let mut quota = manager.new_quota_for("u", "admin", 6, 6);
        quota.record_at(30.0, 0).unwrap();
        let readings = manager.manager().readings(500);
        assert_eq!(readings.len(), 1);
        assert_eq!(readings[0].tags.client_id, "admin");
        assert_eq!(readings[0].tokens, Some(-7.0));
        // 30 over the ten windows a first burst is spread over, and half a second.
        assert!(
            (readings[0].rate - 30.0 / 10.5).abs() < 1e-9,
            "{readings:?}"
        );
    }
}
