//! The seam between quota configs and the quota managers: Kafka's `QuotaConfigHandler` and
//! `IpConfigHandler` deliver every quota config a broker reads to whoever enforces quotas.
//!
//! The config change listener (entity types `users`, `clients`, `ips`) re-reads a changed
//! entity's znode and hands its whole config to [`ClientQuotaConfigs::update_quota_config`],
//! which turns it into one value per key of the entity's type (`None`: the key is not set, or
//! its text is not a number) and passes that to every [`QuotaConfigHandler`] subscribed. At
//! broker start, and again after a ZooKeeper session expiry, every quota entity with a znode is
//! read and delivered the same way. `ClientQuotaConfigs` also keeps the current values (only
//! the keys that are set), so a handler subscribed late first receives everything so far.
//!
//! Quota managers subscribe with [`ClientQuotaConfigs::subscribe`]. Handlers are called on the
//! listener's task, one entity at a time, in change order; they must not block (update
//! in-memory state and return). Nothing here enforces a quota.
//!
//! Lock order: `handlers` before `current`; both std locks, never held across an await.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::cluster::client_quota::{QuotaEntity, QuotaKey};
use crate::cluster::sync::{read, write};
use crate::zk::client::HandlerFuture;
use crate::zk::quota_configs::{CLIENT_ENTITY_TYPE, IP_ENTITY_TYPE, quota_entity_of};
use crate::zk::user_configs::USER_ENTITY_TYPE;

use super::config_change_listener::ConfigHandler;

/// One entity's quotas as delivered: every key of its type, `None` when not set.
pub(crate) type QuotaValues = Vec<(QuotaKey, Option<f64>)>;

/// Kafka's `QuotaConfigHandler.updateQuotaConfig` / `ConnectionQuotas.updateIpConnectionRateQuota`
/// as a callback: what the quota managers implement.
pub(crate) trait QuotaConfigHandler: Send + Sync {
    /// `entity`'s quotas are now `quotas`: each key of `entity.keys()` once, `None` for a key
    /// not set (the manager falls back to the next level or to no quota).
    fn update_quota_config(&self, entity: &QuotaEntity, quotas: &[(QuotaKey, Option<f64>)]);
}

/// Every quota config this broker has read, and the handlers it is delivered to.
#[derive(Default)]
pub(crate) struct ClientQuotaConfigs {
    handlers: RwLock<Vec<Arc<dyn QuotaConfigHandler>>>,
    /// The keys that are set, by entity; an entity with none is absent.
    current: RwLock<BTreeMap<QuotaEntity, BTreeMap<QuotaKey, f64>>>,
}

impl std::fmt::Debug for ClientQuotaConfigs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientQuotaConfigs")
            .field("current", &*read(&self.current))
            .finish_non_exhaustive()
    }
}

impl ClientQuotaConfigs {
    pub(crate) fn new() -> Arc<ClientQuotaConfigs> {
        Arc::new(ClientQuotaConfigs::default())
    }

    /// Adds `handler`: it first receives every entity's current quotas, then every change.
    pub(crate) fn subscribe(&self, handler: Arc<dyn QuotaConfigHandler>) {
        let mut handlers = write(&self.handlers);
        for (entity, set) in read(&self.current).iter() {
            handler.update_quota_config(entity, &values_of(entity, set));
        }
        handlers.push(handler);
    }

    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the quota managers' seam; they are being built")
    )]
    /// The keys set for `entity` now.
    pub(crate) fn quotas_of(&self, entity: &QuotaEntity) -> BTreeMap<QuotaKey, f64> {
        read(&self.current).get(entity).cloned().unwrap_or_default()
    }

    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the quota managers' seam; they are being built")
    )]
    /// Every entity with a quota set, and its keys.
    pub(crate) fn snapshot(&self) -> BTreeMap<QuotaEntity, BTreeMap<QuotaKey, f64>> {
        read(&self.current).clone()
    }

    /// Kafka's `updateQuotaConfig`: `props` is the entity's whole stored config (other keys,
    /// such as SCRAM credentials, are ignored).
    pub(crate) fn update_quota_config(
        &self,
        entity: &QuotaEntity,
        props: &BTreeMap<String, String>,
    ) {
        let mut set = BTreeMap::new();
        for key in entity.keys() {
            let Some(text) = props.get(key.name()) else {
                continue;
            };
            match text.trim().parse::<f64>() {
                Ok(v) => {
                    set.insert(*key, v);
                }
                Err(_) => {
                    tracing::error!(%entity, key = key.name(), text, "unreadable quota value is ignored");
                }
            }
        }
        let values = values_of(entity, &set);
        let handlers = read(&self.handlers);
        {
            let mut current = write(&self.current);
            if set.is_empty() {
                current.remove(entity);
            } else {
                current.insert(entity.clone(), set);
            }
        }
        tracing::info!(%entity, quotas = ?values, "quota config updated");
        for handler in handlers.iter() {
            handler.update_quota_config(entity, &values);
        }
    }
}

fn values_of(entity: &QuotaEntity, set: &BTreeMap<QuotaKey, f64>) -> QuotaValues {
    entity
        .keys()
        .iter()
        .map(|k| (*k, set.get(k).copied()))
        .collect()
}

/// The `ConfigHandler` of one quota config type (`users`, `clients` or `ips`): Kafka's
/// `UserConfigHandler` (its quota half), `ClientIdConfigHandler` and `IpConfigHandler`.
#[derive(Debug)]
pub(crate) struct QuotaEntityConfigHandler {
    pub(crate) entity_type: &'static str,
    pub(crate) quotas: Arc<ClientQuotaConfigs>,
}

impl QuotaEntityConfigHandler {
    /// The three handlers, by entity type, for the config change listener.
    pub(crate) fn all(
        quotas: &Arc<ClientQuotaConfigs>,
    ) -> Vec<(&'static str, Arc<dyn ConfigHandler>)> {
        [USER_ENTITY_TYPE, CLIENT_ENTITY_TYPE, IP_ENTITY_TYPE]
            .into_iter()
            .map(|entity_type| {
                let handler: Arc<dyn ConfigHandler> = Arc::new(QuotaEntityConfigHandler {
                    entity_type,
                    quotas: Arc::clone(quotas),
                });
                (entity_type, handler)
            })
            .collect()
    }
}

impl ConfigHandler for QuotaEntityConfigHandler {
    fn process_config_changes<'a>(
        &'a self,
        entity_name: &'a str,
        props: BTreeMap<String, String>,
    ) -> HandlerFuture<'a> {
        Box::pin(async move {
            match quota_entity_of(self.entity_type, entity_name) {
                Some(entity) => self.quotas.update_quota_config(&entity, &props),
                None => tracing::error!(
                    entity_type = self.entity_type,
                    entity_name,
                    "invalid quota entity path"
                ),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::cluster::client_quota::{ClientQuotaEntity, QuotaEntityName};

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl QuotaConfigHandler for Recorder {
        fn update_quota_config(&self, entity: &QuotaEntity, quotas: &[(QuotaKey, Option<f64>)]) {
            crate::cluster::sync::lock(&self.0).push(format!("{entity} {quotas:?}"));
        }
    }

    fn props(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[tokio::test]
    async fn changes_reach_handlers_with_every_key_and_late_ones_catch_up() {
        let quotas = ClientQuotaConfigs::new();
        let early = Arc::new(Recorder::default());
        quotas.subscribe(early.clone());
        let handlers = QuotaEntityConfigHandler::all(&quotas);
        let users = &handlers[0].1;
        users
            .process_config_changes(
                "alice/clients/%3Cx%3E",
                props(&[
                    ("producer_byte_rate", "1024"),
                    ("SCRAM-SHA-256", "salt=..."),
                    ("request_percentage", "bad"),
                ]),
            )
            .await;
        handlers[2]
            .1
            .process_config_changes("<default>", props(&[("connection_creation_rate", "5")]))
            .await;
        // Not an entity: ignored.
        users
            .process_config_changes("alice/x", props(&[("producer_byte_rate", "1")]))
            .await;
        let alice_x = QuotaEntity::Client(ClientQuotaEntity {
            user: Some(QuotaEntityName::Named("alice".into())),
            client_id: Some(QuotaEntityName::Named("<x>".into())),
        });
        assert_eq!(
            crate::cluster::sync::lock(&early.0).clone(),
            [
                "user=alice,client-id=<x> [(ProducerByteRate, Some(1024.0)), (ConsumerByteRate, None), (RequestPercentage, None), (ControllerMutationRate, None)]",
                "ip=<default> [(ConnectionCreationRate, Some(5.0))]",
            ]
        );
        assert_eq!(
            quotas.quotas_of(&alice_x),
            BTreeMap::from([(QuotaKey::ProducerByteRate, 1024.0)])
        );
        let late = Arc::new(Recorder::default());
        quotas.subscribe(late.clone());
        assert_eq!(crate::cluster::sync::lock(&late.0).len(), 2);
        // Emptied: every key None, and the entity leaves the snapshot.
        users
            .process_config_changes("alice/clients/%3Cx%3E", BTreeMap::new())
            .await;
        assert!(
            crate::cluster::sync::lock(&late.0)[2].ends_with(
                "[(ProducerByteRate, None), (ConsumerByteRate, None), (RequestPercentage, None), (ControllerMutationRate, None)]"
            )
        );
        assert_eq!(quotas.snapshot().len(), 1);
    }
}
