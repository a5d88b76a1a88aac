//! Config change notifications (Kafka's `ZkConfigManager`): how a broker applies the entity
//! configs that any broker or tool wrote. Every AlterConfigs writes `/config/<type>/<entity>`
//! and then a sequential `/config/changes/config_change_N` naming the entity
//! (`{"version":2,"entity_path":"topics/<t>"}`; version 1's `entity_type` and `entity_name` are
//! read too).
//!
//! The notifications are followed by a `ZkNodeChangeNotificationListener`
//! (`zk::zk_node_change_notification_listener`: order, once each, purge after 15 minutes,
//! retry after store errors). For each, this re-reads the named entity's config (a missing
//! znode is an empty config) and hands it to the handler of its type: topics to the topic
//! manager (its overrides and the hosted logs' config), brokers to the dynamic broker config
//! (`<default>` and this broker's id; other brokers' ids are not ours), users to the SCRAM
//! credential cache, and users (with `<user>/clients/<client-id>`), clients and ips to the
//! quota configs (`client_quota_configs`); a type may have several handlers. Types without a handler are skipped. Notifications this broker wrote are
//! applied again: re-reading the znode it wrote gives what it already applied. A config read
//! just before a newer write may be applied after it was superseded; the newer write's own
//! notification follows and puts it right. An unreadable notification or config is logged and
//! passed over. After a session expiry every entity config of every handled type is re-read
//! first, since notifications may have been purged while this broker was away.
//!
//! Lock order: none held across an await; the handlers take their own components' locks.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::BrokerId;
use crate::controller::ControllerHandle;
use crate::zk::client::HandlerFuture;
use crate::zk::quota_configs;
use crate::zk::watch_dispatcher::WatchDispatcher;
use crate::zk::zk_data::{self, CONFIG_CHANGES_PATH};
#[cfg(test)]
pub(crate) use crate::zk::zk_node_change_notification_listener::CHANGE_EXPIRATION_MS;
use crate::zk::zk_node_change_notification_listener::{
    NotificationFuture, NotificationHandler, ZkNodeChangeNotificationListener,
};
use crate::zk::{ZkClient, ZkError};

use super::dynamic_broker_config::{DEFAULT_ENTITY, DynamicBrokerConfig, DynamicLevel};
use super::topic_manager::TopicManager;

/// The name every notification has before its sequence number.
const CHANGE_PREFIX: &str = "config_change_";

/// Kafka's `ConfigHandler`: applies one entity type's changed configs.
pub(crate) trait ConfigHandler: Send + Sync {
    /// `props` is what `/config/<type>/<entity_name>` holds now (empty when it is gone).
    fn process_config_changes<'a>(
        &'a self,
        entity_name: &'a str,
        props: BTreeMap<String, String>,
    ) -> HandlerFuture<'a>;
}

/// Kafka's `TopicConfigHandler`: the topic manager applies the overrides; a topic that now
/// allows unclean leader election has its offline partitions elected by the controller (when
/// this broker is the active one).
#[derive(Debug)]
pub(crate) struct TopicConfigHandler {
    pub topic_manager: Arc<TopicManager>,
    pub controller: ControllerHandle,
}

impl ConfigHandler for TopicConfigHandler {
    fn process_config_changes<'a>(
        &'a self,
        topic: &'a str,
        props: BTreeMap<String, String>,
    ) -> HandlerFuture<'a> {
        Box::pin(async move {
            let unclean = props
                .get(UNCLEAN_LEADER_ELECTION_ENABLE)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
            self.topic_manager
                .apply_stored_overrides(topic, props)
                .await;
            if unclean {
                self.controller.enable_topic_unclean_leader_election(topic);
            }
        })
    }
}

const UNCLEAN_LEADER_ELECTION_ENABLE: &str = "unclean.leader.election.enable";

/// Kafka's `BrokerConfigHandler`: the cluster defaults and this broker's own layer.
#[derive(Debug)]
pub(crate) struct BrokerConfigHandler {
    pub broker_id: BrokerId,
    pub dynamic_config: Arc<DynamicBrokerConfig>,
}

impl ConfigHandler for BrokerConfigHandler {
    fn process_config_changes<'a>(
        &'a self,
        entity: &'a str,
        props: BTreeMap<String, String>,
    ) -> HandlerFuture<'a> {
        Box::pin(async move {
            let level = if entity == DEFAULT_ENTITY {
                DynamicLevel::ClusterDefault
            } else if entity.trim().parse::<BrokerId>() == Ok(self.broker_id) {
                DynamicLevel::PerBroker
            } else {
                return;
            };
            self.dynamic_config
                .update_from_persisted(level, &props)
                .await;
        })
    }
}

/// The listener; dropping it does not stop the task (the `stop` token does).
#[derive(Debug)]
pub(crate) struct ConfigChangeListener {
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read only by the tests' `wake`")
    )]
    inner: ZkNodeChangeNotificationListener,
}

impl ConfigChangeListener {
    /// Starts a `ZkNodeChangeNotificationListener` on `/config/changes` (its watch handler
    /// and state change handler registered on `watches` and its client, its task tracked by
    /// `tasks` and ended by `stop`), which makes a first pass at once. `now_ms` is the clock
    /// notifications' ages are measured with.
    pub(crate) fn start(
        watches: &WatchDispatcher,
        handlers: Vec<(&'static str, Arc<dyn ConfigHandler>)>,
        now_ms: impl Fn() -> i64 + Send + Sync + 'static,
        tasks: &TaskTracker,
        stop: CancellationToken,
    ) -> ConfigChangeListener {
        let handler = Arc::new(ConfigChangedNotificationHandler {
            zk: Arc::clone(watches.client()),
            handlers,
        });
        let inner = ZkNodeChangeNotificationListener::start(
            watches,
            CONFIG_CHANGES_PATH,
            CHANGE_PREFIX,
            handler,
            now_ms,
            tasks,
            stop,
        );
        ConfigChangeListener { inner }
    }

    /// Asks for a pass now (as a fired watch does); the tests' way to force a pass.
    #[cfg(test)]
    pub(crate) fn wake(&self) {
        self.inner.wake();
    }
}

/// Kafka's `ConfigChangedNotificationHandler`: a notification names an entity, whose config
/// is re-read and handed to its type's handler.
struct ConfigChangedNotificationHandler {
    zk: Arc<dyn ZkClient>,
    /// By entity type (`topics`, `brokers`, `users`).
    handlers: Vec<(&'static str, Arc<dyn ConfigHandler>)>,
}

impl NotificationHandler for ConfigChangedNotificationHandler {
    fn process_notification<'a>(&'a self, data: &'a [u8]) -> NotificationFuture<'a> {
        Box::pin(process_notification(self, data))
    }
    fn reload_all(&self) -> NotificationFuture<'_> {
        Box::pin(reload_all_entities(self))
    }
}

/// Reads one notification and applies the entity it names.
async fn process_notification(
    inner: &ConfigChangedNotificationHandler,
    data: &[u8],
) -> Result<(), ZkError> {
    let entity_path = match zk_data::decode_config_change(data) {
        Ok(p) => p,
        Err(err) => {
            tracing::error!(%err, "unreadable config change notification is skipped");
            return Ok(());
        }
    };
    let Some((entity_type, entity_name)) = entity_path.split_once('/') else {
        tracing::error!(entity_path, "config change notification names no entity");
        return Ok(());
    };
    apply_entity(inner, entity_type, entity_name).await
}

/// Re-reads `/config/<type>/<name>` and hands it to the type's handlers, if kcli has any.
async fn apply_entity(
    inner: &ConfigChangedNotificationHandler,
    entity_type: &str,
    entity_name: &str,
) -> Result<(), ZkError> {
    let mut handlers: Vec<Arc<dyn ConfigHandler>> = Vec::new();
    for (t, h) in &inner.handlers {
        if *t == entity_type {
            handlers.push(Arc::clone(h));
        }
    }
    if handlers.is_empty() {
        tracing::debug!(
            entity_type,
            entity_name,
            "no handler for config changes of this type"
        );
        return Ok(());
    }
    let path = zk_data::config_entity_path(entity_type, entity_name);
    let props = match inner.zk.get_data(&path, false).await {
        Ok((data, _)) => zk_data::decode_entity_config(&data).unwrap_or_else(|err| {
            tracing::error!(path, %err, "unreadable entity config is taken as empty");
            BTreeMap::new()
        }),
        Err(ZkError::NoNode(_)) => BTreeMap::new(),
        // A name that is no znode path (a peer's malformed notification) names nothing.
        Err(ZkError::BadArguments(reason)) => {
            tracing::error!(path, reason, "config change names no valid entity");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    tracing::info!(
        entity_type,
        entity_name,
        "processing config change notification"
    );
    for handler in handlers {
        handler
            .process_config_changes(entity_name, props.clone())
            .await;
    }
    Ok(())
}

/// Every entity config of every handled type, applied again (for `users` also each
/// `<user>/clients/<client-id>`).
async fn reload_all_entities(inner: &ConfigChangedNotificationHandler) -> Result<(), ZkError> {
    let mut types: Vec<&'static str> = Vec::new();
    for (t, _) in &inner.handlers {
        if !types.contains(t) {
            types.push(t);
        }
    }
    for entity_type in types {
        for name in quota_configs::all_entity_names(inner.zk.as_ref(), entity_type).await? {
            apply_entity(inner, entity_type, &name).await?;
        }
    }
    Ok(())
}

/// The bootstrap of Kafka's `ZkConfigManager.startup` for `handlers`' entity types: every
/// entity config read and handed to its handlers, once, before the listener starts.
pub(crate) async fn load_all_entity_configs(
    zk: Arc<dyn ZkClient>,
    handlers: Vec<(&'static str, Arc<dyn ConfigHandler>)>,
) -> Result<(), ZkError> {
    reload_all_entities(&ConfigChangedNotificationHandler { zk, handlers }).await
}

#[cfg(test)]
#[path = "config_change_listener_tests.rs"]
mod tests;
