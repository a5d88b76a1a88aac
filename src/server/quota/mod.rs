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
/// The IP entities' `connection_creation_rate` is not enforced yet.
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
