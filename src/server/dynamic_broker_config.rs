//! Kafka's `DynamicBrokerConfig` in ZooKeeper mode, for the broker keys kcli can change while
//! it runs. Dynamic broker configs live in `/config/brokers/<id>` (this broker's) and
//! `/config/brokers/<default>` (the cluster-wide defaults), as `{"version":1,"config":{..}}`,
//! each change announced by a `/config/changes/config_change_N` node naming `brokers/<entity>`.
//! Precedence, highest first: this broker's dynamic value, the cluster default, the static
//! config (`server.properties`, `--override`), Kafka's default.
//!
//! kcli applies the topic-default keys (`log.*`, `message.max.bytes`, `min.insync.replicas`,
//! `unclean.leader.election.enable`, Kafka's `DynamicLogConfig`): new topics take them and every
//! hosted log takes them under its topic's overrides. Kafka's other dynamic keys that kcli knows
//! (listeners, thread pools) cannot be changed in place by kcli, so they are refused as Kafka
//! refuses a static key. Keys kcli does not know are stored and ignored, as Kafka keeps custom
//! keys for plugins.
//!
//! Lock order: `update_lock` (async, serialises alterations), then the topic manager's admin
//! lock (taken by `update_default_log_config`); `state` (std) is never held across an await.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use tokio::sync::Mutex;

use crate::cluster::sync::{read, write};
use crate::config::defs;
use crate::config::{BrokerConfig, ConfigError, Settings};
use crate::zk::zk_data;
use crate::zk::{CreateMode, ZkClient, ZkError, recipes};

use super::replication_throttles;
use super::topic_manager::TopicManager;

/// Kafka's `ZooKeeperInternals.DEFAULT_STRING`: the entity name of cluster-wide defaults.
pub(crate) const DEFAULT_ENTITY: &str = "<default>";

/// Kafka's dynamic keys that kcli cannot apply to a running broker.
const NOT_UPDATABLE_HERE: &[&str] = &[
    "advertised.listeners",
    // The cleaner's threads and buffers are set up at startup.
    "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.threads",
    "listeners",
    "num.io.threads",
    "num.network.threads",
];

/// Which dynamic layer an alteration writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DynamicLevel {
    /// `/config/brokers/<default>`: a `BROKER` resource named `""`.
    ClusterDefault,
    /// `/config/brokers/<id>`: a `BROKER` resource named by this broker's id.
    PerBroker,
}

/// A dynamic config the broker refuses, or cannot store.
#[derive(Debug, thiserror::Error)]
pub enum DynamicConfigError {
    /// Kafka's `ConfigException` from `DynamicBrokerConfig.validate`; the request answers
    /// `INVALID_REQUEST` with this message.
    #[error("{0}")]
    Invalid(String),
    #[error("metadata store: {0}")]
    Zk(#[from] ZkError),
}

/// The dynamic layers as stored (minus what cannot apply) and the configuration they give.
#[derive(Debug, Clone)]
pub struct DynamicLayers {
    pub per_broker: BTreeMap<String, String>,
    pub cluster_default: BTreeMap<String, String>,
    /// The static config with both layers on top.
    pub current: Arc<BrokerConfig>,
}

impl DynamicLayers {
    /// The layers read from the store at startup. As Kafka's `fromPersistentProps` and
    /// `updateCurrentConfig`, keys that cannot apply are dropped with an error logged, and a
    /// combination that does not validate leaves the static config in force.
    pub fn from_persisted(
        static_config: &Arc<BrokerConfig>,
        per_broker: &BTreeMap<String, String>,
        cluster_default: &BTreeMap<String, String>,
    ) -> Self {
        let per_broker = from_persistent_props(per_broker, DynamicLevel::PerBroker);
        let cluster_default = from_persistent_props(cluster_default, DynamicLevel::ClusterDefault);
        let current = match static_config.with_dynamic(&cluster_default, &per_broker) {
            Ok(c) => Arc::new(c),
            Err(err) => {
                tracing::error!(%err, "dynamic broker configs could not be applied");
                Arc::clone(static_config)
            }
        };
        DynamicLayers {
            per_broker,
            cluster_default,
            current,
        }
    }
}

/// Whether kcli lets `name` change at runtime: a dynamic key it can apply, or one it does not
/// know (stored for plugins, as Kafka does).
pub(crate) fn is_updatable(name: &str) -> bool {
    match defs::find(name) {
        Some(def) => def.dynamic && !NOT_UPDATABLE_HERE.contains(&def.name),
        None => true,
    }
}

/// Kafka's `fromPersistentProps`: what was stored minus keys that are not dynamic and values
/// that do not parse, each logged.
pub(crate) fn from_persistent_props(
    props: &BTreeMap<String, String>,
    level: DynamicLevel,
) -> BTreeMap<String, String> {
    props
        .iter()
        .filter(|(k, v)| {
            if !is_updatable(k) {
                tracing::error!(key = %k, ?level, "non-dynamic config in the metadata store is ignored");
                return false;
            }
            if let Err(err) = parse_one(k, v) {
                tracing::error!(key = %k, %err, ?level, "invalid dynamic config is ignored");
                return false;
            }
            true
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Parses one known key on its own (Kafka's `validateConfigTypes`); unknown keys pass.
fn parse_one(key: &str, value: &str) -> Result<(), ConfigError> {
    if defs::find(key).is_some() {
        Settings::default().set(key, value)?;
    }
    replication_throttles::validate_rate(key, value)
}

/// A config error as Kafka's `ConfigException` words it.
pub(crate) fn kafka_message(err: &ConfigError) -> String {
    match err {
        ConfigError::InvalidValue { key, value, reason } => {
            let mut chars = reason.chars();
            let reason: String = match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            };
            format!("Invalid value {value} for configuration {key}: {reason}")
        }
        other => other.to_string(),
    }
}

/// The broker's dynamic configuration.
#[derive(Debug)]
pub struct DynamicBrokerConfig {
    zk: Arc<dyn ZkClient>,
    static_config: Arc<BrokerConfig>,
    topic_manager: Arc<TopicManager>,
    state: RwLock<DynamicLayers>,
    update_lock: Mutex<()>,
}

impl DynamicBrokerConfig {
    pub fn new(
        zk: Arc<dyn ZkClient>,
        static_config: Arc<BrokerConfig>,
        layers: DynamicLayers,
        topic_manager: Arc<TopicManager>,
    ) -> Self {
        DynamicBrokerConfig {
            zk,
            static_config,
            topic_manager,
            state: RwLock::new(layers),
            update_lock: Mutex::new(()),
        }
    }

    /// Puts the replication throttles' rates the layers give in force (Kafka's
    /// `BrokerConfigHandler`); at start and after every change of either layer.
    pub fn apply_replication_throttles(&self) {
        let state = read(&self.state);
        replication_throttles::apply_rates(
            self.topic_manager.replica_manager().replication_quotas(),
            &state.per_broker,
            &state.cluster_default,
        );
    }

    /// Reads both layers from the store (a missing node is an empty layer).
    pub async fn load_persisted(
        zk: &dyn ZkClient,
        broker_id: i32,
    ) -> Result<(BTreeMap<String, String>, BTreeMap<String, String>), ZkError> {
        let per_broker = read_entity(zk, &broker_id.to_string()).await?;
        let cluster_default = read_entity(zk, DEFAULT_ENTITY).await?;
        Ok((per_broker, cluster_default))
    }

    /// The configuration the broker started with.
    pub fn static_config(&self) -> &BrokerConfig {
        &self.static_config
    }

    /// A snapshot of the layers and the configuration in force.
    pub fn layers(&self) -> DynamicLayers {
        read(&self.state).clone()
    }

    /// The configuration in force.
    pub fn current(&self) -> Arc<BrokerConfig> {
        Arc::clone(&self.layers().current)
    }

    /// The stored keys of one layer (what IncrementalAlterConfigs starts from).
    pub fn persisted(&self, level: DynamicLevel) -> BTreeMap<String, String> {
        let layers = self.layers();
        match level {
            DynamicLevel::PerBroker => layers.per_broker,
            DynamicLevel::ClusterDefault => layers.cluster_default,
        }
    }

    /// Kafka's `DynamicBrokerConfig.validate`: `props` would replace the layer `level`; every
    /// key must be one the broker can change, every value must parse, and the resulting
    /// configuration must validate. The error is Kafka's message.
    pub fn validate(
        &self,
        props: &BTreeMap<String, String>,
        level: DynamicLevel,
    ) -> Result<(), DynamicConfigError> {
        let fixed: Vec<&str> = props
            .keys()
            .map(String::as_str)
            .filter(|k| !is_updatable(k))
            .collect();
        if !fixed.is_empty() {
            return Err(DynamicConfigError::Invalid(format!(
                "Cannot update these configs dynamically: Set({})",
                fixed.join(", ")
            )));
        }
        for (k, v) in props {
            parse_one(k, v).map_err(|e| DynamicConfigError::Invalid(kafka_message(&e)))?;
        }
        let combined = self
            .combined(props, level)
            .map_err(|e| DynamicConfigError::Invalid(kafka_message(&e)))?;
        combined
            .validate_local_retention()
            .map_err(|e| DynamicConfigError::Invalid(kafka_message(&e)))?;
        validate_thread_count(
            "num.replica.fetchers",
            self.current().num_replica_fetchers,
            combined.num_replica_fetchers,
        )
    }

    fn combined(
        &self,
        props: &BTreeMap<String, String>,
        level: DynamicLevel,
    ) -> Result<BrokerConfig, ConfigError> {
        let layers = self.layers();
        match level {
            DynamicLevel::PerBroker => self
                .static_config
                .with_dynamic(&layers.cluster_default, props),
            DynamicLevel::ClusterDefault => {
                self.static_config.with_dynamic(props, &layers.per_broker)
            }
        }
    }

    /// Replaces layer `level` with `props` (AlterConfigs and IncrementalAlterConfigs on a
    /// `BROKER` resource): validates, writes the znode and its change notification, then
    /// applies the new configuration, topic defaults included.
    pub async fn alter(
        &self,
        level: DynamicLevel,
        props: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), DynamicConfigError> {
        let _guard = self.update_lock.lock().await;
        self.validate(&props, level)?;
        if validate_only {
            return Ok(());
        }
        let entity = match level {
            DynamicLevel::PerBroker => self.static_config.broker_id.to_string(),
            DynamicLevel::ClusterDefault => DEFAULT_ENTITY.to_string(),
        };
        let path = zk_data::config_entity_path("brokers", &entity);
        let data = zk_data::encode_entity_config(&props);
        match self.zk.set_data(&path, &data, -1).await {
            Ok(_) => {}
            Err(ZkError::NoNode(_)) => {
                recipes::create_recursive(self.zk.as_ref(), &path, &data).await?
            }
            Err(e) => return Err(e.into()),
        }
        self.zk
            .create(
                zk_data::CONFIG_CHANGE_PREFIX,
                &zk_data::encode_config_change(&format!("brokers/{entity}")),
                CreateMode::PersistentSequential,
            )
            .await?;
        let current = self
            .combined(&props, level)
            .map_err(|e| DynamicConfigError::Invalid(kafka_message(&e)))?;
        self.apply(level, props, current).await;
        Ok(())
    }

    /// Kafka's `updateBrokerConfig` and `updateDefaultConfig` from a change notification
    /// (`config_change_listener.rs`): `stored` is what `/config/brokers/<entity>` holds now,
    /// written by any broker, this one included. Keys that cannot apply are dropped as at
    /// startup; a layer equal to the one in force changes nothing; a combination that does not
    /// validate is logged and the configuration in force stays.
    pub async fn update_from_persisted(
        &self,
        level: DynamicLevel,
        stored: &BTreeMap<String, String>,
    ) {
        let _guard = self.update_lock.lock().await;
        let props = from_persistent_props(stored, level);
        let unchanged = {
            let state = read(&self.state);
            match level {
                DynamicLevel::PerBroker => state.per_broker == props,
                DynamicLevel::ClusterDefault => state.cluster_default == props,
            }
        };
        if unchanged {
            return;
        }
        match self.combined(&props, level) {
            Ok(current) => self.apply(level, props, current).await,
            Err(err) => {
                tracing::error!(?level, %err, "changed dynamic broker config does not apply; keeping the old one")
            }
        }
    }

    /// Puts layer `level` and the configuration it gives in force: the topic defaults and the
    /// producer-state expiry follow. The caller holds `update_lock`.
    async fn apply(
        &self,
        level: DynamicLevel,
        props: BTreeMap<String, String>,
        current: BrokerConfig,
    ) {
        let log_config = current.log_config();
        let producer_id_expiration_ms = i64::from(current.producer_id_expiration_ms);
        let num_replica_fetchers = current.num_replica_fetchers;
        {
            let mut state = write(&self.state);
            match level {
                DynamicLevel::PerBroker => state.per_broker = props,
                DynamicLevel::ClusterDefault => state.cluster_default = props,
            }
            state.current = Arc::new(current);
        }
        tracing::info!(?level, "updated dynamic broker config");
        self.apply_replication_throttles();
        self.topic_manager
            .update_default_log_config(log_config)
            .await;
        // Kafka's `ProducerStateManagerConfig` reconfiguration.
        self.topic_manager
            .replica_manager()
            .log_manager()
            .set_producer_id_expiration_ms(
                producer_id_expiration_ms,
                crate::storage::log_manager::now_ms(),
            );
        // Kafka's `DynamicThreadPool.reconfigure` (a no-op when the count is unchanged).
        self.topic_manager
            .replica_manager()
            .replica_fetcher_manager()
            .resize_thread_pool(num_replica_fetchers);
    }
}

/// Kafka's `DynamicThreadPool.validateReconfiguration`: a thread count may change to at least
/// 1, at least half and at most double the count in force.
fn validate_thread_count(key: &str, old: i32, new: i32) -> Result<(), DynamicConfigError> {
    if new == old {
        return Ok(());
    }
    let prefix = format!("Dynamic thread count update validation failed for {key}={new}");
    let reason = if new <= 0 {
        "value should be at least 1".to_string()
    } else if new < old / 2 {
        format!("value should be at least half the current value {old}")
    } else if new > old.saturating_mul(2) {
        format!("value should not be greater than double the current value {old}")
    } else {
        return Ok(());
    };
    Err(DynamicConfigError::Invalid(format!("{prefix}, {reason}")))
}

async fn read_entity(zk: &dyn ZkClient, entity: &str) -> Result<BTreeMap<String, String>, ZkError> {
    match zk
        .get_data(&zk_data::config_entity_path("brokers", entity), false)
        .await
    {
        Ok((data, _)) => Ok(zk_data::decode_entity_config(&data).unwrap_or_else(|err| {
            tracing::error!(entity, %err, "unreadable dynamic broker config is ignored");
            BTreeMap::new()
        })),
        Err(ZkError::NoNode(_)) => Ok(BTreeMap::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(p: &[(&str, &str)]) -> BTreeMap<String, String> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_keys_kcli_can_apply_are_updatable() {
        assert!(is_updatable("log.retention.ms"));
        assert!(is_updatable("log.segment.bytes"));
        assert!(is_updatable("min.insync.replicas"));
        assert!(is_updatable("my.plugin.setting"));
        assert!(!is_updatable("log.retention.hours"));
        assert!(!is_updatable("num.partitions"));
        assert!(!is_updatable("num.io.threads"));
        assert!(!is_updatable("listeners"));
    }

    #[test]
    fn persisted_layers_drop_what_cannot_apply() {
        let stored = map(&[
            ("log.segment.bytes", "2048"),
            ("log.retention.ms", "soon"),
            ("num.partitions", "3"),
            ("x.y", "z"),
        ]);
        let kept = from_persistent_props(&stored, DynamicLevel::PerBroker);
        assert_eq!(kept, map(&[("log.segment.bytes", "2048"), ("x.y", "z")]));
        let static_config = Arc::new(BrokerConfig::kafka_defaults().unwrap());
        let layers = DynamicLayers::from_persisted(&static_config, &stored, &BTreeMap::new());
        assert_eq!(layers.current.log_segment_bytes, 2048);
        // A combination that does not validate leaves the static config in force.
        let bad = map(&[("log.roll.ms", "0")]);
        let layers = DynamicLayers::from_persisted(&static_config, &bad, &BTreeMap::new());
        assert_eq!(layers.current.log_roll_ms, None);
    }

    #[test]
    fn the_replica_fetcher_count_moves_within_half_and_double_as_kafkas_thread_pools() {
        assert!(is_updatable("num.replica.fetchers"));
        assert!(validate_thread_count("num.replica.fetchers", 2, 2).is_ok());
        assert!(validate_thread_count("num.replica.fetchers", 2, 4).is_ok());
        assert!(validate_thread_count("num.replica.fetchers", 4, 2).is_ok());
        assert!(validate_thread_count("num.replica.fetchers", 1, 1).is_ok());
        let message = |old, new| match validate_thread_count("num.replica.fetchers", old, new) {
            Err(DynamicConfigError::Invalid(m)) => m,
            other => panic!("{old} -> {new}: {other:?}"),
        };
        assert_eq!(
            message(2, 5),
            "Dynamic thread count update validation failed for num.replica.fetchers=5, \
             value should not be greater than double the current value 2"
        );
        assert_eq!(
            message(5, 1),
            "Dynamic thread count update validation failed for num.replica.fetchers=1, \
             value should be at least half the current value 5"
        );
        assert_eq!(
            message(1, 0),
            "Dynamic thread count update validation failed for num.replica.fetchers=0, \
             value should be at least 1"
        );
    }

    #[test]
    fn messages_are_kafkas() {
        let err = Settings::default()
            .set("log.segment.bytes", "x")
            .unwrap_err();
        assert_eq!(
            kafka_message(&err),
            "Invalid value x for configuration log.segment.bytes: Not a number of type INT"
        );
    }
}
