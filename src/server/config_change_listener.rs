//! Config change notifications (Kafka's `ZkConfigManager` over its
//! `ZkNodeChangeNotificationListener`): how a broker applies the topic and broker configs that
//! any broker wrote. Every AlterConfigs writes `/config/<type>/<entity>` and then a sequential
//! `/config/changes/config_change_N` naming the entity (`{"version":2,"entity_path":
//! "topics/<t>"}`; version 1's `entity_type` and `entity_name` are read too).
//!
//! One task processes the notifications, woken by the child watch on `/config/changes` (through
//! the `WatchDispatcher`), and once at start. Each pass lists the children (re-arming the
//! watch), takes those whose sequence number is above the last one processed, in sequence order,
//! re-reads each named entity's config (a missing znode is an empty config) and hands it to the
//! handler of its type: topics to the topic manager (its overrides and the hosted logs' config),
//! brokers to the dynamic broker config (`<default>` and this broker's id; other brokers' ids
//! are not ours). Other entity types (clients, users, ips: quotas) are skipped. Notifications
//! this broker wrote are applied again: re-reading the znode it wrote gives what it already
//! applied. A config read just before a newer write may be applied after it was superseded; the
//! newer write's own notification follows and puts it right. Then, as Kafka does, every notification older than 15 minutes
//! (`changeExpirationMs`) is deleted, by whichever broker sees it first.
//!
//! A store error ends the pass without moving past the notification it was at, and the pass is
//! retried after a second; an unreadable notification or config is logged and passed over.
//! After a session expiry (a `StateChangeHandler`) the next pass first re-reads every entity
//! config of both types, since notifications may have been purged while this broker was away,
//! and then the notifications as usual, which re-arms the watch on the new session.
//!
//! Lock order: none held across an await; the handlers take their own components' locks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::BrokerId;
use crate::controller::ControllerHandle;
use crate::zk::client::{HandlerFuture, StateChangeHandler};
use crate::zk::watch_dispatcher::{WatchDispatcher, ZNodeChildChangeHandler};
use crate::zk::zk_data::{self, CONFIG_CHANGES_PATH};
use crate::zk::{ZkClient, ZkError};

use super::dynamic_broker_config::{DEFAULT_ENTITY, DynamicBrokerConfig, DynamicLevel};
use super::topic_manager::TopicManager;

/// Kafka's `ZkConfigManager` `changeExpirationMs`: 15 minutes.
pub(crate) const CHANGE_EXPIRATION_MS: i64 = 15 * 60 * 1000;

/// The name every notification has before its sequence number.
const CHANGE_PREFIX: &str = "config_change_";

/// The pause before a pass that a store error ended is tried again.
const RETRY_BACKOFF: Duration = Duration::from_secs(1);

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

/// The sequence number of a notification's name, `config_change_0000000042` → 42.
pub(crate) fn change_number(name: &str) -> Option<i64> {
    name.strip_prefix(CHANGE_PREFIX)?.parse().ok()
}

struct Inner {
    zk: Arc<dyn ZkClient>,
    /// By entity type (`topics`, `brokers`).
    handlers: Vec<(&'static str, Arc<dyn ConfigHandler>)>,
    wake: Notify,
    /// Set by the state change handler: the next pass re-reads every entity first.
    reload_all: AtomicBool,
    now_ms: fn() -> i64,
}

/// The listener; dropping it does not stop the task (the `stop` token does).
pub(crate) struct ConfigChangeListener {
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read only by the tests' `wake`")
    )]
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ConfigChangeListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigChangeListener")
            .finish_non_exhaustive()
    }
}

impl ConfigChangeListener {
    /// Registers the watch handler on `watches` and the state change handler on its client,
    /// and starts the task (tracked by `tasks`, ended by `stop`), which makes a first pass at
    /// once. `now_ms` is the clock notifications' ages are measured with.
    pub(crate) fn start(
        watches: &WatchDispatcher,
        handlers: Vec<(&'static str, Arc<dyn ConfigHandler>)>,
        now_ms: fn() -> i64,
        tasks: &TaskTracker,
        stop: CancellationToken,
    ) -> ConfigChangeListener {
        let zk = Arc::clone(watches.client());
        let inner = Arc::new(Inner {
            zk: Arc::clone(&zk),
            handlers,
            wake: Notify::new(),
            reload_all: AtomicBool::new(false),
            now_ms,
        });
        watches.register_znode_child_change_handler(Arc::new(ChangesWatch(Arc::clone(&inner))));
        zk.register_state_change_handler(Arc::new(NewSession(Arc::clone(&inner))));
        tasks.spawn(run(Arc::clone(&inner), stop));
        ConfigChangeListener { inner }
    }

    /// Asks for a pass now (as a fired watch does); the tests' way to force a pass.
    #[cfg(test)]
    pub(crate) fn wake(&self) {
        self.inner.wake.notify_one();
    }
}

/// The child watch on `/config/changes`.
struct ChangesWatch(Arc<Inner>);

impl ZNodeChildChangeHandler for ChangesWatch {
    fn path(&self) -> &str {
        CONFIG_CHANGES_PATH
    }
    fn handle_child_change(&self) {
        self.0.wake.notify_one();
    }
}

/// Kafka's `ZkStateChangeHandler` of the notification listener.
struct NewSession(Arc<Inner>);

impl StateChangeHandler for NewSession {
    fn name(&self) -> &str {
        "change-notification-/config/changes"
    }
    fn after_initializing_session(&self) -> HandlerFuture<'_> {
        self.0.reload_all.store(true, Ordering::Release);
        self.0.wake.notify_one();
        Box::pin(async {})
    }
}

async fn run(inner: Arc<Inner>, stop: CancellationToken) {
    let mut last_executed_change = -1;
    loop {
        let pass = async {
            if inner.reload_all.swap(false, Ordering::AcqRel)
                && let Err(err) = reload_all_entities(&inner).await
            {
                inner.reload_all.store(true, Ordering::Release);
                return Err(err);
            }
            process_notifications(&inner, &mut last_executed_change).await
        };
        let result = tokio::select! {
            _ = stop.cancelled() => return,
            result = pass => result,
        };
        if let Err(err) = result {
            tracing::warn!(%err, "processing config change notifications; trying again");
            tokio::select! {
                _ = stop.cancelled() => return,
                () = tokio::time::sleep(RETRY_BACKOFF) => {}
            }
            continue;
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            () = inner.wake.notified() => {}
        }
    }
}

/// Kafka's `processNotifications`: the new notifications in order, then the purge.
async fn process_notifications(
    inner: &Inner,
    last_executed_change: &mut i64,
) -> Result<(), ZkError> {
    let (mut names, _) = inner.zk.get_children(CONFIG_CHANGES_PATH, true).await?;
    let now = (inner.now_ms)();
    names.retain(|n| change_number(n).is_some());
    names.sort_unstable_by_key(|n| change_number(n));
    let mut path = String::with_capacity(CONFIG_CHANGES_PATH.len() + 1 + 24);
    for name in &names {
        let Some(change_id) = change_number(name) else {
            continue;
        };
        if change_id <= *last_executed_change {
            continue;
        }
        notification_path(&mut path, name);
        process_notification(inner, &path).await?;
        *last_executed_change = change_id;
    }
    for name in &names {
        notification_path(&mut path, name);
        purge_if_obsolete(inner, &path, now).await?;
    }
    Ok(())
}

fn notification_path(path: &mut String, name: &str) {
    path.clear();
    path.push_str(CONFIG_CHANGES_PATH);
    path.push('/');
    path.push_str(name);
}

/// Reads one notification and applies the entity it names.
async fn process_notification(inner: &Inner, path: &str) -> Result<(), ZkError> {
    let data = match inner.zk.get_data(path, false).await {
        Ok((data, _)) => data,
        // Purged by another broker meanwhile; the entity's config is re-read at the next one.
        Err(ZkError::NoNode(_)) => {
            tracing::warn!(
                path,
                "config change notification vanished before it was read"
            );
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let entity_path = match zk_data::decode_config_change(&data) {
        Ok(p) => p,
        Err(err) => {
            tracing::error!(path, %err, "unreadable config change notification is skipped");
            return Ok(());
        }
    };
    let Some((entity_type, entity_name)) = entity_path.split_once('/') else {
        tracing::error!(
            path,
            entity_path,
            "config change notification names no entity"
        );
        return Ok(());
    };
    apply_entity(inner, entity_type, entity_name).await
}

/// Re-reads `/config/<type>/<name>` and hands it to the type's handler, if kcli has one.
async fn apply_entity(inner: &Inner, entity_type: &str, entity_name: &str) -> Result<(), ZkError> {
    let Some((_, handler)) = inner.handlers.iter().find(|(t, _)| *t == entity_type) else {
        tracing::debug!(
            entity_type,
            entity_name,
            "no handler for config changes of this type"
        );
        return Ok(());
    };
    let path = zk_data::config_entity_path(entity_type, entity_name);
    let props = match inner.zk.get_data(&path, false).await {
        Ok((data, _)) => zk_data::decode_entity_config(&data).unwrap_or_else(|err| {
            tracing::error!(path, %err, "unreadable entity config is taken as empty");
            BTreeMap::new()
        }),
        Err(ZkError::NoNode(_)) => BTreeMap::new(),
        Err(e) => return Err(e),
    };
    tracing::info!(
        entity_type,
        entity_name,
        "processing config change notification"
    );
    handler.process_config_changes(entity_name, props).await;
    Ok(())
}

/// After a new session: every entity config of every handled type, applied again.
async fn reload_all_entities(inner: &Inner) -> Result<(), ZkError> {
    for (entity_type, _) in &inner.handlers {
        let names = match inner
            .zk
            .get_children(&zk_data::config_entity_type_path(entity_type), false)
            .await
        {
            Ok((names, _)) => names,
            Err(ZkError::NoNode(_)) => continue,
            Err(e) => return Err(e),
        };
        for name in &names {
            apply_entity(inner, entity_type, name).await?;
        }
    }
    Ok(())
}

/// Kafka's `purgeObsoleteNotifications` for one notification.
async fn purge_if_obsolete(inner: &Inner, path: &str, now: i64) -> Result<(), ZkError> {
    let Some(stat) = inner.zk.exists(path, false).await? else {
        return Ok(());
    };
    if now - stat.ctime > CHANGE_EXPIRATION_MS {
        tracing::debug!(path, "purging config change notification");
        match inner.zk.delete(path, -1).await {
            Ok(()) | Err(ZkError::NoNode(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "config_change_listener_tests.rs"]
mod tests;
