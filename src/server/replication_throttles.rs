//! The replication throttles' rates as Kafka's `BrokerConfigHandler` applies them:
//! `leader.replication.throttled.rate` and `follower.replication.throttled.rate`, dynamic
//! broker configs read from this broker's entity, else `<default>`, else no throttle. They are
//! not `KafkaConfig` keys (Kafka's `DynamicConfig.Broker` adds them), so they never appear among
//! the static configs DescribeConfigs lists; a value must be a long of at least 0.

use std::collections::BTreeMap;

use crate::config::ConfigError;
use crate::replication::replication_quota_manager::{
    ReplicationQuotas, UNLIMITED_REPLICATION_RATE,
};

pub(crate) const LEADER_REPLICATION_THROTTLED_RATE: &str = "leader.replication.throttled.rate";
pub(crate) const FOLLOWER_REPLICATION_THROTTLED_RATE: &str = "follower.replication.throttled.rate";

/// Kafka's `DynamicConfig.Broker.validate` for the two rate keys; other keys pass.
pub(crate) fn validate_rate(key: &str, value: &str) -> Result<(), ConfigError> {
    if key != LEADER_REPLICATION_THROTTLED_RATE && key != FOLLOWER_REPLICATION_THROTTLED_RATE {
        return Ok(());
    }
    match value.trim().parse::<i64>() {
        Ok(rate) if rate >= 0 => Ok(()),
        Ok(_) => Err(ConfigError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            reason: "value must be at least 0".to_string(),
        }),
        Err(_) => Err(ConfigError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            reason: "not a number of type LONG".to_string(),
        }),
    }
}

/// Puts the rates the layers give in force (Kafka's `getOrDefault`: this broker's value, else
/// the cluster default, else `Long.MAX_VALUE`).
pub(crate) fn apply_rates(
    quotas: &ReplicationQuotas,
    per_broker: &BTreeMap<String, String>,
    cluster_default: &BTreeMap<String, String>,
) {
    let rate = |key: &str| -> i64 {
        per_broker
            .get(key)
            .or_else(|| cluster_default.get(key))
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(UNLIMITED_REPLICATION_RATE)
    };
    quotas
        .leader
        .update_quota(rate(LEADER_REPLICATION_THROTTLED_RATE));
    quotas
        .follower
        .update_quota(rate(FOLLOWER_REPLICATION_THROTTLED_RATE));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(p: &[(&str, &str)]) -> BTreeMap<String, String> {
        p.iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn this_brokers_rate_wins_over_the_default_and_none_is_no_throttle() {
        let quotas = ReplicationQuotas::default();
        apply_rates(
            &quotas,
            &map(&[(LEADER_REPLICATION_THROTTLED_RATE, "1000")]),
            &map(&[
                (LEADER_REPLICATION_THROTTLED_RATE, "5"),
                (FOLLOWER_REPLICATION_THROTTLED_RATE, "2000"),
            ]),
        );
        assert_eq!(quotas.leader.upper_bound(), Some(1000.0));
        assert_eq!(quotas.follower.upper_bound(), Some(2000.0));
        apply_rates(&quotas, &BTreeMap::new(), &BTreeMap::new());
        assert_eq!(quotas.leader.upper_bound(), None);
        assert_eq!(quotas.follower.upper_bound(), None);
    }

    #[test]
    fn rates_are_longs_of_at_least_zero() {
        assert!(validate_rate(LEADER_REPLICATION_THROTTLED_RATE, "10000000").is_ok());
        assert!(validate_rate(FOLLOWER_REPLICATION_THROTTLED_RATE, "-1").is_err());
        assert!(validate_rate(FOLLOWER_REPLICATION_THROTTLED_RATE, "fast").is_err());
        assert!(validate_rate("some.plugin.key", "fast").is_ok());
    }
}
