//! Topic administration over ZooKeeper's layout (Kafka's `ZkAdminManager` and `AdminZkClient`),
//! the admin half only: it writes what an operator asks for, on any broker, and the controller
//! (watching those znodes) does the rest: partition state znodes, leaders, LeaderAndIsr and
//! UpdateMetadata.
//!
//! Znodes written, as Kafka writes them: `/config/topics/<t>` (the topic's config overrides),
//! `/brokers/topics/<t>` (replica assignment and topic id) and `/admin/delete_topics/<t>`. A
//! config change also leaves a `/config/changes/config_change_N` notification. Creation returns
//! once the znodes are written; callers that answer only once every partition has a leader
//! (CreateTopics, CreatePartitions) wait with [`TopicManager::wait_for_leaders`].
//!
//! Topic creation, deletion and partition changes are serialised by one async mutex, so two
//! clients auto-creating the same topic race for nothing.

use crate::replication::replica_manager::{LogConfigFuture, TopicConfigRepository};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex as StdMutex, RwLock as StdRwLock};
use std::time::Duration;

use tokio::sync::Mutex;
use uuid::Uuid;

use crate::admin::rack_aware::RackAwareMode;
use crate::admin::replica_assignment::{
    AssignmentError, AssignmentStart, BrokerMetadata, assign_replicas_to_brokers,
};
use crate::cluster::BrokerId;
use crate::cluster::sync::{lock, read, write};
use crate::config::BrokerConfig;
use crate::protocol::errors::ErrorCode;
use crate::replication::ReplicaManager;
use crate::replication::error::PartitionError;
use crate::storage::log_config::{LogConfig, LogConfigError};
use crate::zk::kafka_zk_client::{KafkaZkClient, KafkaZkError};
use crate::zk::zk_data::{self, TopicAssignment};
use crate::zk::{CreateMode, ZkClient, ZkError, recipes};

use super::metadata_cache::MetadataCache;
use super::quota::controller_mutation_quota::{ControllerMutationQuota, ThrottlingQuotaExceeded};
use super::topic_assignment::{validate_create_assignment, validate_new_partitions};
use super::topic_validation::{find_collisions, validate_topic_name};

/// Why a topic operation was refused; each maps to the Kafka error code of the response.
#[derive(Debug, thiserror::Error)]
pub enum TopicError {
    #[error("Topic '{0}' already exists.")]
    TopicAlreadyExists(String),
    #[error("{0}")]
    InvalidTopic(String),
    #[error("{0}")]
    InvalidPartitions(String),
    #[error("{0}")]
    InvalidReplicationFactor(String),
    #[error("{0}")]
    InvalidReplicaAssignment(String),
    #[error("{0}")]
    InvalidConfig(String),
    /// A topic config that does not validate (`LogConfig.validate`), or that kcli cannot
    /// honour.
    #[error(transparent)]
    TopicConfig(#[from] LogConfigError),
    #[error("The topic '{0}' does not exist.")]
    UnknownTopic(String),
    #[error("Topic deletion is disabled.")]
    TopicDeletionDisabled,
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    PolicyViolation(String),
    #[error("metadata store: {0}")]
    Zk(#[from] ZkError),
    #[error("metadata store: {0}")]
    ZkData(#[from] zk_data::ZkDataError),
    #[error(transparent)]
    Partition(#[from] PartitionError),
    /// Racks on only some brokers: Kafka's `AdminOperationException`, which its response
    /// carries as UNKNOWN_SERVER_ERROR without a message.
    #[error("{0}")]
    Assignment(AssignmentError),
    /// The controller mutation quota refused the topic (KIP-599).
    #[error(transparent)]
    ThrottlingQuotaExceeded(#[from] ThrottlingQuotaExceeded),
}

impl TopicError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            TopicError::TopicAlreadyExists(_) => ErrorCode::TopicAlreadyExists,
            TopicError::InvalidTopic(_) => ErrorCode::InvalidTopicException,
            TopicError::InvalidPartitions(_) => ErrorCode::InvalidPartitions,
            TopicError::InvalidReplicationFactor(_) => ErrorCode::InvalidReplicationFactor,
            TopicError::InvalidReplicaAssignment(_) => ErrorCode::InvalidReplicaAssignment,
            TopicError::InvalidConfig(_) | TopicError::TopicConfig(_) => ErrorCode::InvalidConfig,
            TopicError::UnknownTopic(_) => ErrorCode::UnknownTopicOrPartition,
            TopicError::TopicDeletionDisabled => ErrorCode::TopicDeletionDisabled,
            TopicError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            TopicError::PolicyViolation(_) => ErrorCode::PolicyViolation,
            TopicError::Zk(_) | TopicError::ZkData(_) | TopicError::Assignment(_) => {
                ErrorCode::UnknownServerError
            }
            TopicError::Partition(e) => e.error_code(),
            TopicError::ThrottlingQuotaExceeded(_) => ErrorCode::ThrottlingQuotaExceeded,
        }
    }
}

impl From<AssignmentError> for TopicError {
    fn from(e: AssignmentError) -> Self {
        match e {
            AssignmentError::InvalidPartitions => TopicError::InvalidPartitions(e.to_string()),
            AssignmentError::ReplicationFactorNotPositive
            | AssignmentError::ReplicationFactorTooLarge { .. } => {
                TopicError::InvalidReplicationFactor(e.to_string())
            }
            AssignmentError::RackMissingForRackAwareAssignment { .. }
            | AssignmentError::NotAllBrokersHaveRack { .. }
            | AssignmentError::DuplicateBroker { .. } => TopicError::Assignment(e),
        }
    }
}

/// The most partitions one request may have the broker lay out. ZooKeeper-mode Kafka has no
/// bound and would try to allocate whatever count a client names; kcli takes KRaft's
/// (`MAX_RECORDS_PER_USER_OP`) and its answer, so a request cannot exhaust the broker's memory.
pub(crate) const MAX_PARTITIONS_PER_REQUEST: i64 = 10_000;

/// How long an admin request waits for the controller's decision to reach this broker: Kafka's
/// default `request.timeout.ms` of its admin client.
pub(crate) const ADMIN_WAIT: Duration = Duration::from_secs(30);

fn check_partition_count(count: i64) -> Result<(), TopicError> {
    if count > MAX_PARTITIONS_PER_REQUEST {
        return Err(TopicError::PolicyViolation(
            "Unable to perform excessively large batch operation.".into(),
        ));
    }
    Ok(())
}

/// A topic to create, as CreateTopics and auto-creation describe it. `-1` partitions or
/// replication factor means the broker's default; a manual assignment replaces both.
#[derive(Debug, Clone, Default)]
pub(crate) struct NewTopic {
    pub name: String,
    pub num_partitions: i32,
    pub replication_factor: i16,
    pub assignment: BTreeMap<i32, Vec<BrokerId>>,
    pub configs: BTreeMap<String, String>,
}

/// What a creation made (or would make, when validating only).
#[derive(Debug, Clone)]
pub(crate) struct CreatedTopic {
    pub topic_id: Uuid,
    pub num_partitions: i32,
    pub replication_factor: i16,
    pub config: LogConfig,
}

/// The topic manager. Invariant: the metadata cache and the replica manager reflect the znodes
/// this manager wrote; the znodes are written first.
#[derive(Debug)]
pub struct TopicManager {
    zk: Arc<dyn ZkClient>,
    config: Arc<BrokerConfig>,
    metadata_cache: Arc<MetadataCache>,
    replica_manager: Arc<ReplicaManager>,
    /// Each topic's config overrides as stored in `/config/topics/<t>`.
    overrides: StdMutex<HashMap<String, BTreeMap<String, String>>>,
    /// The topic defaults: the broker's `log.*` settings, static or dynamic; replaced by
    /// [`TopicManager::update_default_log_config`].
    default_log_config: StdRwLock<LogConfig>,
    admin_lock: Mutex<()>,
}

impl TopicManager {
    pub fn new(
        zk: Arc<dyn ZkClient>,
        config: Arc<BrokerConfig>,
        metadata_cache: Arc<MetadataCache>,
        replica_manager: Arc<ReplicaManager>,
    ) -> Self {
        TopicManager {
            zk,
            metadata_cache,
            replica_manager,
            overrides: StdMutex::new(HashMap::new()),
            default_log_config: StdRwLock::new(config.log_config()),
            config,
            admin_lock: Mutex::new(()),
        }
    }

    /// The topic's config overrides (empty for an unknown topic).
    pub fn topic_overrides(&self, topic: &str) -> BTreeMap<String, String> {
        lock(&self.overrides)
            .get(topic)
            .cloned()
            .unwrap_or_default()
    }

    /// The topic defaults the broker's current `log.*` settings give.
    pub fn default_log_config(&self) -> LogConfig {
        read(&self.default_log_config).clone()
    }

    /// The topic's effective log config: the broker's `log.*` defaults with its overrides.
    pub fn topic_log_config(&self, topic: &str) -> Result<LogConfig, TopicError> {
        Ok(self
            .default_log_config()
            .with_overrides(&self.topic_overrides(topic))?)
    }

    /// Kafka's `DynamicLogConfig.reconfigure`: new topic defaults (a dynamic broker config
    /// changed); every hosted log takes them under its topic's own overrides.
    /// The replica manager whose partitions this manager hosts.
    pub fn replica_manager(&self) -> &Arc<ReplicaManager> {
        &self.replica_manager
    }

    pub async fn update_default_log_config(&self, defaults: LogConfig) {
        let _guard = self.admin_lock.lock().await;
        *write(&self.default_log_config) = defaults.clone();
        for topic in self.metadata_cache.topic_names() {
            match defaults.with_overrides(&self.topic_overrides(&topic)) {
                Ok(config) => self.replica_manager.update_log_config(&topic, &config),
                Err(err) => {
                    tracing::warn!(%topic, %err, "topic overrides no longer apply; keeping its config")
                }
            }
        }
    }

    /// Reads every topic's config overrides from `/config/topics` (the logs opened at startup
    /// take them when LeaderAndIsr makes this broker host them); returns the number of topics.
    pub async fn load_topic_configs(&self) -> Result<usize, TopicError> {
        let _guard = self.admin_lock.lock().await;
        let (topics, _) = self.zk.get_children(zk_data::TOPICS_PATH, false).await?;
        for topic in &topics {
            let overrides = self.read_overrides(topic).await?;
            self.set_overrides(topic, overrides);
            let config = self.topic_log_config(topic)?;
            if let Err(err) = config.validate_topic_values() {
                // Stored by a broker that took it (a Kafka one, say): kept, as Kafka keeps a
                // stored config, but kcli does not honour it, which the operator should know.
                tracing::warn!(%topic, %err, "stored topic config is one kcli does not accept");
            }
        }
        Ok(topics.len())
    }

    async fn read_overrides(&self, topic: &str) -> Result<BTreeMap<String, String>, TopicError> {
        match self
            .zk
            .get_data(&zk_data::topic_config_path(topic), false)
            .await
        {
            Ok((data, _)) => Ok(zk_data::decode_entity_config(&data)?),
            Err(ZkError::NoNode(_)) => Ok(BTreeMap::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// The log config of a topic this broker is told to host: its cached overrides, or, for a
    /// topic created through another broker, the ones in `/config/topics/<t>` (Kafka's
    /// `fetchLogConfig`).
    pub async fn fetch_topic_log_config(&self, topic: &str) -> Result<LogConfig, TopicError> {
        let cached = lock(&self.overrides).contains_key(topic);
        if !cached {
            let overrides = self.read_overrides(topic).await?;
            self.set_overrides(topic, overrides);
        }
        self.topic_log_config(topic)
    }

    /// Waits (bounded) until the controller's decision reached this broker's metadata cache.
    async fn wait_for_metadata(&self, what: &str, done: impl Fn(&MetadataCache) -> bool) {
        if !self.metadata_cache.wait_for(ADMIN_WAIT, done).await {
            tracing::warn!(what, "the controller's metadata did not arrive in time");
        }
    }

    /// Waits until this broker's metadata cache shows `topic` with at least `partitions`
    /// partitions, each with a leader (Kafka's `DelayedCreatePartitions`); `false` when
    /// `timeout` passed first.
    pub async fn wait_for_leaders(
        &self,
        topic: &str,
        partitions: usize,
        timeout: Duration,
    ) -> bool {
        self.metadata_cache
            .wait_for(timeout, |cache| {
                cache.topic(topic).is_some_and(|t| {
                    t.partitions.len() >= partitions && t.partitions.values().all(|p| p.leader >= 0)
                })
            })
            .await
    }

    fn set_overrides(&self, topic: &str, overrides: BTreeMap<String, String>) {
        let mut map = lock(&self.overrides);
        if overrides.is_empty() {
            map.remove(topic);
        } else {
            map.insert(topic.to_string(), overrides);
        }
    }

    /// Kafka's `ZkAdminManager.createTopics` for one topic (its checks in its order), then
    /// (single-node) the controller's new-partition handling. Once every check has passed, the
    /// partitions are recorded against `quota`, which may refuse them.
    pub(crate) async fn create_topic(
        &self,
        topic: &NewTopic,
        validate_only: bool,
        quota: &mut ControllerMutationQuota<'_>,
    ) -> Result<CreatedTopic, TopicError> {
        let _guard = self.admin_lock.lock().await;
        if self.metadata_cache.contains_topic(&topic.name) {
            return Err(TopicError::TopicAlreadyExists(topic.name.clone()));
        }
        let assignment = self.assignment_for(topic)?;
        validate_topic_name(&topic.name).map_err(TopicError::InvalidTopic)?;
        let existing = self.metadata_cache.topic_names();
        let colliding = find_collisions(&topic.name, &existing);
        if !colliding.is_empty() {
            let names: Vec<&str> = colliding.iter().map(|s| s.as_str()).collect();
            return Err(TopicError::InvalidTopic(format!(
                "Topic '{}' collides with existing topics: {}",
                topic.name,
                names.join(", ")
            )));
        }
        validate_create_assignment(&assignment)?;
        let config = self.default_log_config().with_overrides(&topic.configs)?;
        config.validate_topic_values()?;
        self.check_local_logs_fit(&topic.name, assignment.values())?;
        let replication_factor = assignment
            .get(&0)
            .map_or(0, |r| i16::try_from(r.len()).unwrap_or(i16::MAX));
        let created = CreatedTopic {
            topic_id: crate::zk::zk_data::random_uuid(),
            num_partitions: i32::try_from(assignment.len()).unwrap_or(i32::MAX),
            replication_factor,
            config,
        };
        if validate_only {
            return Ok(created);
        }
        quota.record(assignment.len() as f64)?;
        self.write_topic(&topic.name, created.topic_id, &assignment, &topic.configs)
            .await?;
        self.set_overrides(&topic.name, topic.configs.clone());
        // The controller creates the partitions (their state znodes, LeaderAndIsr,
        // UpdateMetadata); callers that answer only once leaders exist wait with
        // `wait_for_leaders`.
        tracing::info!(topic = %topic.name, partitions = created.num_partitions, "created topic");
        Ok(created)
    }

    /// Refuses new partitions whose every replica is this broker (the single-node broker's
    /// every topic) when their logs do not fit in the descriptors or maps left, before anything is
    /// written: the topic or partitions are not created, and the answer names the limit.
    /// Partitions with replicas elsewhere are created, and each broker refuses the logs that do
    /// not fit it in its LeaderAndIsr answer (their replicas go offline).
    fn check_local_logs_fit<'a>(
        &self,
        topic: &str,
        replicas: impl Iterator<Item = &'a Vec<BrokerId>>,
    ) -> Result<(), TopicError> {
        let local = self.config.broker_id;
        let mut logs = 0;
        for replicas in replicas {
            if replicas.iter().any(|b| *b != local) {
                return Ok(());
            }
            logs += usize::from(!replicas.is_empty());
        }
        let refused = self
            .replica_manager
            .log_manager()
            .new_log_budget()
            .admit(topic, logs);
        if let Err(err) = refused {
            tracing::error!(topic, partitions = logs, %err, "refused new partitions");
            return Err(PartitionError::Storage(err).into());
        }
        Ok(())
    }

    /// The replica assignment of a new topic: the manual one (checked later, as Kafka does),
    /// or Kafka's algorithm over the live brokers with the defaults for `-1`.
    fn assignment_for(&self, topic: &NewTopic) -> Result<BTreeMap<i32, Vec<BrokerId>>, TopicError> {
        if !topic.assignment.is_empty() {
            if topic.num_partitions != -1 || topic.replication_factor != -1 {
                return Err(TopicError::InvalidRequest(
                    "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.".into(),
                ));
            }
            return Ok(topic.assignment.clone());
        }
        let partitions = if topic.num_partitions == -1 {
            self.config.num_partitions
        } else {
            topic.num_partitions
        };
        let rf = if topic.replication_factor == -1 {
            self.config.default_replication_factor
        } else {
            i32::from(topic.replication_factor)
        };
        check_partition_count(i64::from(partitions))?;
        // Kafka's `ZkAdminManager.createTopics`: the live brokers with their racks as they are,
        // no RackAwareMode, so racks on only some of them fail the assignment. (Kafka's cache
        // iterates them in no particular order; kcli's is by id.)
        let brokers: Vec<BrokerMetadata> = self
            .metadata_cache
            .alive_brokers()
            .into_iter()
            .map(|b| BrokerMetadata {
                id: b.id,
                rack: b.rack,
            })
            .collect();
        Ok(assign_replicas_to_brokers(
            &brokers,
            partitions,
            rf,
            AssignmentStart::random(brokers.len()),
            0,
        )?)
    }

    /// Kafka's `AdminZkClient.getBrokerMetadatas()` as CreatePartitions calls it: every broker
    /// in `/brokers/ids` with its rack, RackAwareMode Enforced, by id.
    async fn registered_brokers(&self) -> Result<Vec<BrokerMetadata>, TopicError> {
        let registered = match KafkaZkClient::new(Arc::clone(&self.zk))
            .get_all_brokers_and_epochs(false)
            .await
        {
            Ok(registered) => registered,
            Err(KafkaZkError::Zk(e)) => return Err(TopicError::Zk(e)),
            Err(KafkaZkError::Malformed { source, .. }) => return Err(TopicError::ZkData(source)),
            Err(e @ KafkaZkError::ControllerMoved { .. }) => {
                return Err(TopicError::InvalidRequest(e.to_string()));
            }
        };
        let brokers = registered
            .into_iter()
            .map(|(id, (registration, _))| BrokerMetadata {
                id,
                rack: registration.rack,
            })
            .collect();
        Ok(RackAwareMode::Enforced.broker_metadatas(brokers)?)
    }

    async fn write_topic(
        &self,
        topic: &str,
        topic_id: Uuid,
        assignment: &BTreeMap<i32, Vec<BrokerId>>,
        configs: &BTreeMap<String, String>,
    ) -> Result<(), TopicError> {
        // Kafka writes the config before the assignment, so a broker that sees the topic also
        // sees its config.
        let config_path = zk_data::topic_config_path(topic);
        let config_data = zk_data::encode_entity_config(configs);
        match recipes::create_recursive(self.zk.as_ref(), &config_path, &config_data).await {
            Ok(()) => {}
            Err(ZkError::NodeExists(_)) => {
                self.zk.set_data(&config_path, &config_data, -1).await?;
            }
            Err(e) => return Err(e.into()),
        }
        let data = TopicAssignment {
            topic_id: Some(topic_id),
            partitions: assignment.clone(),
            ..TopicAssignment::default()
        }
        .encode();
        match recipes::create_recursive(self.zk.as_ref(), &zk_data::topic_path(topic), &data).await
        {
            Ok(()) => Ok(()),
            Err(ZkError::NodeExists(_)) => Err(TopicError::TopicAlreadyExists(topic.to_string())),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes a topic: its partitions stop being hosted and their logs go, then its znodes.
    /// (In a cluster the controller does this after `/admin/delete_topics/<t>` appears.)
    /// Its partitions are recorded against `quota` first, which may refuse the deletion.
    pub(crate) async fn delete_topic(
        &self,
        topic: &str,
        quota: &mut ControllerMutationQuota<'_>,
    ) -> Result<Uuid, TopicError> {
        let _guard = self.admin_lock.lock().await;
        if !self.config.delete_topic_enable {
            return Err(TopicError::TopicDeletionDisabled);
        }
        let Some(metadata) = self.metadata_cache.topic(topic) else {
            return Err(TopicError::UnknownTopic(topic.to_string()));
        };
        quota.record(metadata.partitions.len() as f64)?;
        // Kafka's `AdminZkClient.deleteTopic`: the mark; the controller deletes the replicas and
        // then the znodes, and the answer waits until this broker's cache no longer has it.
        recipes::create_recursive(self.zk.as_ref(), &zk_data::delete_topic_path(topic), b"")
            .await
            .or_else(|e| match e {
                ZkError::NodeExists(_) => Ok(()),
                e => Err(e),
            })?;
        self.wait_for_metadata("topic deletion", |cache| !cache.contains_topic(topic))
            .await;
        self.set_overrides(topic, BTreeMap::new());
        tracing::info!(topic, "deleted topic");
        Ok(metadata.topic_id)
    }

    /// CreatePartitions for one topic: grows it to `count` partitions, with the given
    /// assignment of the new ones or Kafka's algorithm (with the existing replication factor).
    /// Once every check has passed, the new partitions are recorded against `quota`, which may
    /// refuse them.
    pub(crate) async fn create_partitions(
        &self,
        topic: &str,
        count: i32,
        new_assignment: Option<Vec<Vec<BrokerId>>>,
        validate_only: bool,
        quota: &mut ControllerMutationQuota<'_>,
    ) -> Result<(), TopicError> {
        let _guard = self.admin_lock.lock().await;
        let Some(metadata) = self.metadata_cache.topic(topic) else {
            return Err(TopicError::UnknownTopic(topic.to_string()));
        };
        let old_count = i32::try_from(metadata.partitions.len()).unwrap_or(i32::MAX);
        if count < old_count {
            return Err(TopicError::InvalidPartitions(format!(
                "Topic currently has {old_count} partitions, which is higher than the requested {count}."
            )));
        }
        if count == old_count {
            return Err(TopicError::InvalidPartitions(format!(
                "Topic already has {old_count} partitions."
            )));
        }
        let brokers = self.registered_brokers().await?;
        let broker_ids: Vec<BrokerId> = brokers.iter().map(|b| b.id).collect();
        let partition0 = metadata
            .partitions
            .get(&0)
            .map(|p| p.replicas.clone())
            .unwrap_or_default();
        let increment = i64::from(count) - i64::from(old_count);
        let added = match new_assignment {
            Some(list) => {
                validate_new_partitions(&list, increment, old_count, partition0.len(), &broker_ids)?
            }
            None => {
                check_partition_count(increment)?;
                // Kafka's `createNewPartitionsAssignment`: the start is the first broker, in id
                // order, at or above partition 0's first replica (not a random one), given as a
                // fixed start index, so the shift is the same; with racks it indexes the
                // rack-alternated list, as Kafka's does.
                let start = partition0
                    .first()
                    .and_then(|first| broker_ids.iter().position(|b| b >= first))
                    .unwrap_or(0);
                assign_replicas_to_brokers(
                    &brokers,
                    i32::try_from(increment).unwrap_or(i32::MAX),
                    i32::try_from(partition0.len()).unwrap_or(i32::MAX),
                    AssignmentStart::fixed(start),
                    old_count,
                )?
            }
        };
        self.check_local_logs_fit(topic, added.values())?;
        if validate_only {
            return Ok(());
        }
        quota.record(increment as f64)?;
        let mut all: BTreeMap<i32, Vec<BrokerId>> = metadata
            .partitions
            .iter()
            .map(|(p, m)| (*p, m.replicas.clone()))
            .collect();
        all.extend(added.clone());
        let data = TopicAssignment {
            topic_id: Some(metadata.topic_id),
            partitions: all,
            ..TopicAssignment::default()
        }
        .encode();
        self.zk
            .set_data(&zk_data::topic_path(topic), &data, -1)
            .await?;
        Ok(())
    }

    /// Kafka's `TopicConfigHandler.processConfigChanges`: a change notification named the
    /// topic, and `overrides` is what `/config/topics/<t>` holds now (written by any broker,
    /// this one included; applying the same overrides again changes nothing). The cache takes
    /// them and the hosted logs take the config they give; overrides that do not give a valid
    /// config are logged and the old ones stay in force.
    pub async fn apply_stored_overrides(&self, topic: &str, overrides: BTreeMap<String, String>) {
        let _guard = self.admin_lock.lock().await;
        let config = match self.default_log_config().with_overrides(&overrides) {
            Ok(config) => config,
            Err(err) => {
                tracing::error!(%topic, %err, "changed topic config does not apply; keeping the old one");
                return;
            }
        };
        self.set_overrides(topic, overrides);
        self.replica_manager.update_log_config(topic, &config);
    }

    /// Replaces a topic's config overrides (AlterConfigs and IncrementalAlterConfigs end
    /// here): checks them, writes `/config/topics/<t>` and a change notification, and applies
    /// them to the hosted logs.
    pub async fn set_topic_overrides(
        &self,
        topic: &str,
        overrides: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), TopicError> {
        let _guard = self.admin_lock.lock().await;
        if !self.metadata_cache.contains_topic(topic) {
            return Err(TopicError::UnknownTopic(topic.to_string()));
        }
        let config = self.default_log_config().with_overrides(&overrides)?;
        config.validate_topic_values()?;
        if validate_only {
            return Ok(());
        }
        let path = zk_data::topic_config_path(topic);
        let data = zk_data::encode_entity_config(&overrides);
        match self.zk.set_data(&path, &data, -1).await {
            Ok(_) => {}
            Err(ZkError::NoNode(_)) => {
                recipes::create_recursive(self.zk.as_ref(), &path, &data).await?;
            }
            Err(e) => return Err(e.into()),
        }
        self.zk
            .create(
                zk_data::CONFIG_CHANGE_PREFIX,
                &zk_data::encode_config_change(&format!("topics/{topic}")),
                CreateMode::PersistentSequential,
            )
            .await?;
        self.set_overrides(topic, overrides);
        self.replica_manager.update_log_config(topic, &config);
        Ok(())
    }
}

#[cfg(test)]
#[path = "topic_manager_tests.rs"]
mod tests;

/// The replica manager reads topic configs through the topic manager (Kafka's
/// `ZkConfigRepository`).
impl TopicConfigRepository for TopicManager {
    fn topic_log_config<'a>(&'a self, topic: &'a str) -> LogConfigFuture<'a> {
        Box::pin(async move {
            self.fetch_topic_log_config(topic)
                .await
                .map_err(|e| e.error_code())
        })
    }
}
