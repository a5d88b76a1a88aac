//! Client quotas (Kafka's `QuotaFactory` and the managers it makes): the produce, fetch,
//! request and controller mutation quotas set in ZooKeeper for users and client ids, measured
//! over Kafka's sliding windows (a token bucket for controller mutations), and the throttle a
//! client over its quota is given.
//!
//! Throttling is Kafka's KIP-219: the response goes out at once carrying `throttle_time_ms`,
//! and the connection reads nothing more from the client until that time has passed (the
//! network layer's [`ChannelThrottle`](crate::network::ChannelThrottle), Kafka's channel
//! muting). Clients that honour `throttle_time_ms` wait on their own as well.

pub(crate) mod client_quota_manager;
pub(crate) mod controller_mutation_quota;
mod quota_metrics;
pub(crate) mod request_quotas;

use crate::metrics::sampled_stat::QuotaWindow;
use client_quota_manager::{
    ClientIdEntity, ClientQuotaManager, KafkaQuotaEntity, QuotaType, UserEntity,
};
use controller_mutation_quota::ControllerMutationQuotaManager;

use super::client_quota_configs::QuotaConfigHandler;
use crate::cluster::client_quota::{QuotaEntity, QuotaEntityName, QuotaKey};
use crate::config::BrokerConfig;
use crate::network::{ConnectionLimits, IpConnectionRateQuotas};
use crate::zk::sanitizer::sanitize;

/// The client quota managers of a broker.
#[derive(Debug)]
pub(crate) struct QuotaManagers {
    pub produce: ClientQuotaManager,
    pub fetch: ClientQuotaManager,
    pub request: ClientQuotaManager,
    pub controller_mutation: ControllerMutationQuotaManager,
}

impl QuotaManagers {
    /// Managers over `window` (`quota.window.num`, `quota.window.size.seconds`), the
    /// controller mutation one over `controller_window` (`controller.quota.window.num`,
    /// `controller.quota.window.size.seconds`).
    pub(crate) fn new(window: QuotaWindow, controller_window: QuotaWindow) -> Self {
        QuotaManagers {
            produce: ClientQuotaManager::new(QuotaType::Produce, window),
            fetch: ClientQuotaManager::new(QuotaType::Fetch, window),
            request: ClientQuotaManager::new(QuotaType::Request, window),
            controller_mutation: ControllerMutationQuotaManager::new(controller_window),
        }
    }
}

/// Kafka's `QuotaConfigHandler.updateQuotaConfig`: each client key sets its manager's quota,
/// or removes it when not set (which still marks the entity's level configured, as in Kafka).
/// The IP entities' `connection_creation_rate` goes to [`IpConnectionRateHandler`].
impl QuotaConfigHandler for QuotaManagers {
    fn update_quota_config(&self, entity: &QuotaEntity, quotas: &[(QuotaKey, Option<f64>)]) {
        let QuotaEntity::Client(client) = entity else {
            return;
        };
        let entity = KafkaQuotaEntity {
            // The managers match users as ZooKeeper stores them: sanitized.
            user: client.user.as_ref().map(|user| match user {
                QuotaEntityName::Default => UserEntity::Default,
                QuotaEntityName::Named(name) => UserEntity::Named(sanitize(name)),
            }),
            client_id: client.client_id.as_ref().map(|client_id| match client_id {
                QuotaEntityName::Default => ClientIdEntity::Default,
                QuotaEntityName::Named(name) => ClientIdEntity::Named(name.clone()),
            }),
        };
        for (key, value) in quotas {
            let manager = match key {
                QuotaKey::ProducerByteRate => &self.produce,
                QuotaKey::ConsumerByteRate => &self.fetch,
                QuotaKey::RequestPercentage => &self.request,
                QuotaKey::ControllerMutationRate => self.controller_mutation.manager(),
                QuotaKey::ConnectionCreationRate => continue,
            };
            let quota = value.filter(|v| v.is_finite() && *v > 0.0);
            manager.update_quota(entity.clone(), quota);
        }
    }
}

/// The socket server's connection quotas and memory limit from the config (Kafka's
/// `ConnectionQuotas` settings); Kafka's `Int.MaxValue` defaults are "unlimited".
pub(crate) fn connection_limits(config: &BrokerConfig) -> ConnectionLimits {
    let limit = |n: i32| (n != i32::MAX).then(|| usize::try_from(n).unwrap_or(0));
    ConnectionLimits {
        max_connections: limit(config.max_connections),
        max_connections_per_ip: limit(config.max_connections_per_ip),
        max_connections_per_ip_overrides: config
            .max_connections_per_ip_overrides
            .iter()
            .map(|(ip, n)| (*ip, usize::try_from(*n).unwrap_or(0)))
            .collect(),
        queued_max_request_bytes: (config.queued_max_request_bytes > 0)
            .then(|| usize::try_from(config.queued_max_request_bytes).unwrap_or(usize::MAX)),
        quota_window_num: u32::try_from(config.quota_window_num).unwrap_or(11),
        quota_window_size_seconds: u32::try_from(config.quota_window_size_seconds).unwrap_or(1),
        max_connection_creation_rate: (config.max_connection_creation_rate != i32::MAX)
            .then(|| u32::try_from(config.max_connection_creation_rate).unwrap_or(0)),
        // Kafka's `protectedListener`: the inter-broker listener, when it is not the only one.
        protected_listener: (config.listeners.len() > 1)
            .then(|| config.inter_broker_listener_name()),
    }
}

/// Kafka's `IpConfigHandler`: `connection_creation_rate` of an IP address or `<default>`, pushed
/// into the socket server's connection quotas. A rate that is not a whole number of at least 0
/// (Kafka's INT config, checked when it is altered) is logged and ignored, and so is an entity
/// that is not an IP address.
#[derive(Debug)]
pub(crate) struct IpConnectionRateHandler(pub(crate) IpConnectionRateQuotas);

impl QuotaConfigHandler for IpConnectionRateHandler {
    fn update_quota_config(&self, entity: &QuotaEntity, quotas: &[(QuotaKey, Option<f64>)]) {
        let QuotaEntity::Ip(name) = entity else {
            return;
        };
        let ip = match name {
            QuotaEntityName::Default => None,
            QuotaEntityName::Named(ip) => match ip.parse::<std::net::IpAddr>() {
                Ok(ip) => Some(ip),
                Err(_) => {
                    tracing::error!(%entity, "not an IP address: its connection rate is ignored");
                    return;
                }
            },
        };
        for (key, value) in quotas {
            if *key != QuotaKey::ConnectionCreationRate {
                continue;
            }
            let rate = match value {
                None => None,
                Some(v) if v.is_finite() && *v >= 0.0 && v.fract() == 0.0 => {
                    Some(u32::try_from(*v as u64).unwrap_or(u32::MAX))
                }
                Some(v) => {
                    tracing::error!(%entity, rate = v, "invalid connection_creation_rate is ignored");
                    continue;
                }
            };
            self.0.update_ip_connection_rate_quota(ip, rate);
        }
    }
}
