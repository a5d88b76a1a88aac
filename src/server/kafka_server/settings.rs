//! What the broker's components are set up with, derived from its config alone: the log
//! manager's, the controller's, the socket server's and the authorizer's settings, the
//! endpoints it advertises and its `/brokers/ids/<id>` registration. No I/O here, so
//! [`startup`](super::startup)'s phases read as what they start.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::{BrokerConfig, ConfigError};
use crate::controller::ControllerConfig;
use crate::controller::controller_request_batch::BatchConfig;
use crate::controller::inter_broker_versions::ControllerRequestVersions;
use crate::metrics::sampled_stat::QuotaWindow;
use crate::network::BoundEndPoint;
use crate::security::acl::AuthorizerSettings;
use crate::server::metadata_cache::BrokerEndPoint;
use crate::storage::log_manager::LogManagerConfig;
use crate::zk::zk_data::{self, BrokerRegistration};

/// The log manager's settings: the static config's, with the log defaults and the producer
/// id expiration as the dynamic layers make them (`current`).
pub(super) fn log_manager_config(
    config: &BrokerConfig,
    current: &BrokerConfig,
    log_dirs: Vec<PathBuf>,
    cluster_id: &str,
) -> LogManagerConfig {
    let mut log_config = LogManagerConfig::new(log_dirs, config.broker_id, cluster_id.to_string());
    log_config.default_log_config = current.log_config();
    log_config.retention_check_interval_ms =
        u64::try_from(config.log_retention_check_interval_ms).unwrap_or(300_000);
    log_config.cleaner = config.cleaner_config();
    log_config.high_watermark_checkpoint_interval_ms =
        u64::try_from(config.replica_high_watermark_checkpoint_interval_ms).unwrap_or(5_000);
    // Dynamic in Kafka: the stored dynamic layers apply from the start.
    log_config.producer_id_expiration_ms = i64::from(current.producer_id_expiration_ms);
    log_config.producer_id_expiration_check_interval_ms =
        u64::try_from(config.producer_id_expiration_check_interval_ms).unwrap_or(600_000);
    // Kafka schedules a non-positive period once, as it does `Long.MAX_VALUE`.
    log_config.log_flush_scheduler_interval_ms =
        u64::try_from(config.log_flush_scheduler_interval_ms)
            .ok()
            .filter(|ms| *ms > 0)
            .unwrap_or(u64::MAX);
    log_config
}

/// The controller's settings from the broker's.
pub(super) fn controller_config(config: &BrokerConfig) -> ControllerConfig {
    ControllerConfig {
        batch: BatchConfig {
            controller_id: config.broker_id,
            versions: ControllerRequestVersions::for_ibp(config.inter_broker_protocol_version),
            inter_broker_listener: config.inter_broker_listener_name(),
        },
        unclean_leader_election_enable: config.unclean_leader_election_enable,
        delete_topic_enable: config.delete_topic_enable,
        auto_leader_rebalance_enable: config.auto_leader_rebalance_enable,
        leader_imbalance_check_interval: Duration::from_secs(
            u64::try_from(config.leader_imbalance_check_interval_seconds).unwrap_or(300),
        ),
        leader_imbalance_per_broker_percentage: config.leader_imbalance_per_broker_percentage,
        zookeeper_max_in_flight_requests: config.zookeeper_max_in_flight_requests,
    }
}

/// The authorizer's settings when `authorizer.class.name` names one (validated with the
/// config): the super users and what a resource without ACLs allows.
pub(super) fn authorizer_settings(
    config: &BrokerConfig,
) -> Result<Option<AuthorizerSettings>, ConfigError> {
    if config.authorizer_class_name.trim().is_empty() {
        return Ok(None);
    }
    let super_users =
        AuthorizerSettings::parse_super_users(config.super_users.as_deref().unwrap_or(""))
            .map_err(|reason| ConfigError::InvalidValue {
                key: "super.users".to_string(),
                value: config.super_users.clone().unwrap_or_default(),
                reason,
            })?;
    Ok(Some(AuthorizerSettings {
        super_users,
        allow_everyone_if_no_acl_found: config.allow_everyone_if_no_acl_found,
    }))
}

/// The endpoints clients are told: `advertised.listeners` (else `listeners`), a missing host
/// replaced by the bound address and port 0 by the bound port.
pub(super) fn advertised_endpoints(
    config: &BrokerConfig,
    bound: &[BoundEndPoint],
) -> Vec<BrokerEndPoint> {
    config
        .effective_advertised_listeners()
        .iter()
        .map(|l| {
            let bound = bound.iter().find(|b| b.listener_name == l.listener_name);
            let host = match l.host.as_deref() {
                Some(h) if !h.is_empty() => h.to_string(),
                _ => bound.map_or("localhost".to_string(), |b| {
                    if b.address.ip().is_unspecified() {
                        "localhost".to_string()
                    } else {
                        b.address.ip().to_string()
                    }
                }),
            };
            let port = if l.port == 0 {
                bound.map_or(0, |b| b.address.port())
            } else {
                l.port
            };
            BrokerEndPoint {
                listener_name: l.listener_name.clone(),
                host,
                port: i32::from(port),
            }
        })
        .collect()
}

/// The client quotas' windows (`quota.window.*`) and the controller mutation quota's
/// (`controller.quota.window.*`).
pub(super) fn quota_windows(config: &BrokerConfig) -> (QuotaWindow, QuotaWindow) {
    let window = |samples: i32, seconds: i32| QuotaWindow {
        samples: u32::try_from(samples).unwrap_or(11),
        window_ms: i64::from(seconds) * 1000,
    };
    (
        window(config.quota_window_num, config.quota_window_size_seconds),
        window(
            config.controller_quota_window_num,
            config.controller_quota_window_size_seconds,
        ),
    )
}

/// What `/brokers/ids/<id>` holds: the advertised endpoints with their security protocols, the
/// rack, and the registration time (`timestamp_ms`, from the broker's clock).
pub(super) fn broker_registration(
    config: &BrokerConfig,
    endpoints: &[BrokerEndPoint],
    timestamp_ms: i64,
) -> BrokerRegistration {
    BrokerRegistration {
        endpoints: endpoints
            .iter()
            .map(|e| zk_data::EndPoint {
                listener_name: e.listener_name.clone(),
                host: e.host.clone(),
                port: e.port,
                security_protocol: config
                    .listeners
                    .iter()
                    .find(|l| l.listener_name == e.listener_name)
                    .map_or("PLAINTEXT", |l| l.security_protocol.name())
                    .to_string(),
            })
            .collect(),
        rack: config.broker_rack.clone(),
        jmx_port: -1,
        timestamp_ms,
    }
}
