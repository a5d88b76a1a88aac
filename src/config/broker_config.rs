//! The typed broker settings: one field per key of [`super::defs::CONFIG_DEFS`] with Kafka 3.9's
//! defaults and per-key validators (`ServerConfigs`, `ServerLogConfigs`, `SocketServerConfigs`,
//! `ReplicationConfigs`, `ZkConfigs`, `GroupCoordinatorConfig`), the cross-key checks of
//! `KafkaConfig.validateValues` (in `validate`), the derived values Kafka computes from several keys (roll and
//! retention times, log dirs). The topic defaults these keys give are in `super::log_defaults`.

use crate::cluster::inter_broker_protocol::InterBrokerProtocolVersion;
use crate::config::ConfigError;
use crate::config::defs::{boolean, int_at_least, list, long_at_least, short_at_least, string};
use crate::config::listeners::{
    EndPoint, SecurityProtocolMap, default_security_protocol_map, parse_listeners,
    parse_security_protocol_map, resolve_security_protocols,
};
use crate::config::sasl_config::SaslSettings;
use crate::protocol::record::batch::TimestampType;
use crate::storage::log_config::CleanupPolicy;
use crate::storage::log_config_values::{
    self as values, BrokerCompressionType, DEFAULT_MESSAGE_FORMAT_VERSION, GZIP_DEFAULT_LEVEL,
    LZ4_DEFAULT_LEVEL, LZ4_LEVELS, ZSTD_DEFAULT_LEVEL, ZSTD_LEVELS,
};

mod validate;

const MS_PER_MINUTE: i64 = 60 * 1000;
const MS_PER_HOUR: i64 = 60 * MS_PER_MINUTE;

/// The broker's settings, each field named after its Kafka key. `Option` fields are the keys
/// whose Kafka default is `null` (unset). Built by [`super::BrokerConfig::from_sources`] and
/// friends, which validate every value; a value here is always one Kafka would accept.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub advertised_listeners: Option<Vec<EndPoint>>,
    /// `allow.everyone.if.no.acl.found` (an `AclAuthorizer` setting): a resource without any
    /// matching ACL is open to everyone.
    pub allow_everyone_if_no_acl_found: bool,
    /// `authorizer.class.name`: empty (no authorization) or
    /// `kafka.security.authorizer.AclAuthorizer` (checked by `validate`).
    pub authorizer_class_name: String,
    pub auto_create_topics_enable: bool,
    /// `auto.leader.rebalance.enable`: the controller moves leadership back to preferred
    /// replicas every `leader.imbalance.check.interval.seconds`.
    pub auto_leader_rebalance_enable: bool,
    /// -1: generate one (ZooKeeper's broker id sequence, above `reserved.broker.max.id`).
    pub broker_id: i32,
    pub broker_id_generation_enable: bool,
    /// `broker.rack`, written into the registration and used by rack-aware assignment.
    pub broker_rack: Option<String>,
    /// `controlled.shutdown.*`: a cluster broker asks the controller to move its leaderships
    /// away before it stops, retrying `max.retries` times `retry.backoff.ms` apart.
    pub controlled_shutdown_enable: bool,
    pub controlled_shutdown_max_retries: i32,
    pub controlled_shutdown_retry_backoff_ms: i64,
    /// `controller.socket.timeout.ms`: how long the controller waits for a broker's answer.
    pub controller_socket_timeout_ms: i32,
    pub compression_gzip_level: i32,
    pub compression_lz4_level: i32,
    /// The topics' default `compression.type` (a codec makes leaders rebuild batches to it).
    pub compression_type: BrokerCompressionType,
    pub compression_zstd_level: i32,
    pub default_replication_factor: i32,
    pub delete_topic_enable: bool,
    pub group_initial_rebalance_delay_ms: i32,
    pub group_max_session_timeout_ms: i32,
    pub group_max_size: i32,
    pub group_min_session_timeout_ms: i32,
    /// `inter.broker.listener.name`; unset: the listener of `security.inter.broker.protocol`.
    pub inter_broker_listener_name: Option<String>,
    pub inter_broker_protocol_version: InterBrokerProtocolVersion,
    /// At least 1.
    pub leader_imbalance_check_interval_seconds: i64,
    /// The share of a broker's preferred partitions led elsewhere above which the controller
    /// rebalances them.
    pub leader_imbalance_per_broker_percentage: i32,
    /// `listener.security.protocol.map`, applied to both listener lists by
    /// [`Settings::resolve_listener_protocols`] once every key is set.
    pub listener_security_protocol_map: SecurityProtocolMap,
    pub listeners: Vec<EndPoint>,
    pub log_cleaner_backoff_ms: i64,
    pub log_cleaner_dedupe_buffer_size: i64,
    pub log_cleaner_delete_retention_ms: i64,
    pub log_cleaner_enable: bool,
    pub log_cleaner_io_buffer_load_factor: f64,
    pub log_cleaner_io_buffer_size: i32,
    pub log_cleaner_io_max_bytes_per_second: f64,
    pub log_cleaner_max_compaction_lag_ms: i64,
    pub log_cleaner_min_cleanable_ratio: f64,
    pub log_cleaner_min_compaction_lag_ms: i64,
    pub log_cleaner_threads: i32,
    pub log_cleanup_policy: CleanupPolicy,
    pub log_dir: String,
    pub log_dirs: Option<String>,
    pub log_flush_interval_messages: i64,
    pub log_flush_interval_ms: Option<i64>,
    pub log_flush_scheduler_interval_ms: i64,
    pub log_index_interval_bytes: i32,
    pub log_index_size_max_bytes: i32,
    pub log_local_retention_bytes: i64,
    pub log_local_retention_ms: i64,
    pub log_message_downconversion_enable: bool,
    /// As given; Kafka 3.x ignores it (see [`Settings::log_config`]).
    pub log_message_format_version: String,
    pub log_message_timestamp_after_max_ms: i64,
    pub log_message_timestamp_before_max_ms: i64,
    pub log_message_timestamp_difference_max_ms: i64,
    pub log_message_timestamp_type: TimestampType,
    pub log_preallocate: bool,
    pub log_retention_bytes: i64,
    pub log_retention_check_interval_ms: i64,
    pub log_retention_hours: i32,
    pub log_retention_minutes: Option<i32>,
    pub log_retention_ms: Option<i64>,
    pub log_roll_hours: i32,
    pub log_roll_jitter_hours: i32,
    pub log_roll_jitter_ms: Option<i64>,
    pub log_roll_ms: Option<i64>,
    pub log_segment_bytes: i32,
    pub log_segment_delete_delay_ms: i64,
    /// `max.connections`: connections over all listeners; at most this many are open.
    pub max_connections: i32,
    /// `max.connection.creation.rate`: new connections per second over all listeners but the
    /// inter-broker one (static in kcli).
    pub max_connection_creation_rate: i32,
    /// `max.connections.per.ip`, and `max.connections.per.ip.overrides` by address.
    pub max_connections_per_ip: i32,
    pub max_connections_per_ip_overrides: Vec<(std::net::IpAddr, i32)>,
    /// `max.incremental.fetch.session.cache.slots`: the fetch sessions (KIP-227) the broker
    /// keeps, over its 8 cache shards (each holds an eighth).
    pub max_incremental_fetch_session_cache_slots: i32,
    pub message_max_bytes: i32,
    pub min_insync_replicas: i32,
    pub num_io_threads: i32,
    pub num_network_threads: i32,
    pub num_partitions: i32,
    pub num_replica_fetchers: i32,
    pub offsets_commit_timeout_ms: i32,
    pub offsets_load_buffer_size: i32,
    pub offsets_metadata_max_bytes: i32,
    pub offsets_retention_check_interval_ms: i64,
    pub offsets_retention_minutes: i32,
    pub offsets_topic_compression_codec: i32,
    pub offsets_topic_num_partitions: i32,
    pub offsets_topic_replication_factor: i16,
    pub offsets_topic_segment_bytes: i32,
    pub producer_id_expiration_check_interval_ms: i32,
    pub producer_id_expiration_ms: i32,
    /// `queued.max.request.bytes`: the memory pool of request frames; -1 (or 0): none.
    pub queued_max_request_bytes: i64,
    pub queued_max_requests: i32,
    /// `quota.window.num`: the samples a client quota's rate is taken over.
    pub quota_window_num: i32,
    /// `quota.window.size.seconds`: each sample's length.
    pub quota_window_size_seconds: i32,
    /// `controller.quota.window.num`, `controller.quota.window.size.seconds`: the same for the
    /// controller mutation quota, whose burst is their product times the quota.
    pub controller_quota_window_num: i32,
    pub controller_quota_window_size_seconds: i32,
    /// `replication.quota.window.num`, `replication.quota.window.size.seconds`: the same for
    /// the replication throttles.
    pub replication_quota_window_num: i32,
    pub replication_quota_window_size_seconds: i32,
    pub replica_fetch_backoff_ms: i32,
    pub replica_fetch_max_bytes: i32,
    pub replica_fetch_min_bytes: i32,
    pub replica_fetch_response_max_bytes: i32,
    pub replica_fetch_wait_max_ms: i32,
    pub replica_high_watermark_checkpoint_interval_ms: i64,
    pub replica_lag_time_max_ms: i64,
    /// `replica.selector.class` (KIP-392): empty (Kafka's `null`) keeps consumers on the
    /// leader; else [`crate::cluster::RACK_AWARE_REPLICA_SELECTOR`], checked at start-up.
    pub replica_selector_class: String,
    pub replica_socket_timeout_ms: i32,
    /// `request.timeout.ms`: how long the broker's own requests to other brokers (the replica
    /// fetchers') wait for an answer.
    pub request_timeout_ms: i32,
    pub reserved_broker_max_id: i32,
    /// The SASL keys, and every `listener.name.*` key (`super::sasl_config`).
    pub sasl: SaslSettings,
    /// `security.inter.broker.protocol`. At most one
    /// of it and `inter.broker.listener.name` may be given (`BrokerConfig::from_sources`).
    pub security_inter_broker_protocol: String,
    pub socket_request_max_bytes: i32,
    /// `super.users` (an `AclAuthorizer` setting): `;`-separated principals allowed
    /// everything.
    pub super_users: Option<String>,
    pub transaction_abort_timed_out_transaction_cleanup_interval_ms: i32,
    pub transaction_max_timeout_ms: i32,
    pub transaction_partition_verification_enable: bool,
    pub transaction_remove_expired_transaction_cleanup_interval_ms: i32,
    pub transaction_state_log_load_buffer_size: i32,
    pub transaction_state_log_min_isr: i32,
    pub transaction_state_log_num_partitions: i32,
    pub transaction_state_log_replication_factor: i16,
    pub transaction_state_log_segment_bytes: i32,
    pub transactional_id_expiration_ms: i32,
    pub unclean_leader_election_enable: bool,
    pub zookeeper_connect: Option<String>,
    /// Unset: `zookeeper.session.timeout.ms` (see `zookeeper_connection_timeout_ms`).
    pub zookeeper_connection_timeout_ms: Option<i32>,
    /// How many requests the controller's batched ZooKeeper operations pipeline.
    pub zookeeper_max_in_flight_requests: i32,
    pub zookeeper_session_timeout_ms: i32,
    /// `kcli.metrics.listener`, kcli's own key: `HOST:PORT` of the Prometheus endpoint
    /// (`GET /metrics`); unset, no endpoint. A Kafka broker reading the same file logs it as
    /// unknown.
    pub kcli_metrics_listener: Option<String>,
    /// `kcli.metrics.jmx.exporter.config`, kcli's own key: a Prometheus JMX exporter YAML
    /// config whose rules name the metrics (the one a team's Kafka brokers use); unset,
    /// Strimzi's rules.
    pub kcli_metrics_jmx_exporter_config: Option<String>,
}

impl Default for Settings {
    /// Kafka 3.9's defaults (the same values as the strings of `CONFIG_DEFS`, which a test
    /// checks).
    fn default() -> Self {
        let plaintext_all = EndPoint {
            listener_name: "PLAINTEXT".into(),
            security_protocol: crate::config::listeners::SecurityProtocol::Plaintext,
            host: None,
            port: 9092,
        };
        Settings {
            advertised_listeners: None,
            allow_everyone_if_no_acl_found: false,
            authorizer_class_name: String::new(),
            auto_create_topics_enable: true,
            auto_leader_rebalance_enable: true,
            broker_id: -1,
            broker_id_generation_enable: true,
            broker_rack: None,
            controlled_shutdown_enable: true,
            controlled_shutdown_max_retries: 3,
            controlled_shutdown_retry_backoff_ms: 5000,
            controller_socket_timeout_ms: 30_000,
            compression_gzip_level: GZIP_DEFAULT_LEVEL,
            compression_lz4_level: LZ4_DEFAULT_LEVEL,
            compression_type: BrokerCompressionType::Producer,
            compression_zstd_level: ZSTD_DEFAULT_LEVEL,
            default_replication_factor: 1,
            delete_topic_enable: true,
            group_initial_rebalance_delay_ms: 3000,
            group_max_session_timeout_ms: 1_800_000,
            group_max_size: i32::MAX,
            group_min_session_timeout_ms: 6000,
            inter_broker_listener_name: None,
            inter_broker_protocol_version: InterBrokerProtocolVersion::LATEST,
            leader_imbalance_check_interval_seconds: 300,
            leader_imbalance_per_broker_percentage: 10,
            listener_security_protocol_map: default_security_protocol_map(),
            listeners: vec![plaintext_all],
            log_cleaner_backoff_ms: 15_000,
            log_cleaner_dedupe_buffer_size: 128 * 1024 * 1024,
            log_cleaner_delete_retention_ms: 24 * MS_PER_HOUR,
            log_cleaner_enable: true,
            log_cleaner_io_buffer_load_factor: 0.9,
            log_cleaner_io_buffer_size: 512 * 1024,
            log_cleaner_io_max_bytes_per_second: f64::MAX,
            log_cleaner_max_compaction_lag_ms: i64::MAX,
            log_cleaner_min_cleanable_ratio: 0.5,
            log_cleaner_min_compaction_lag_ms: 0,
            log_cleaner_threads: 1,
            log_cleanup_policy: CleanupPolicy {
                delete: true,
                compact: false,
            },
            log_dir: "/tmp/kafka-logs".into(),
            log_dirs: None,
            log_flush_interval_messages: i64::MAX,
            log_flush_interval_ms: None,
            log_flush_scheduler_interval_ms: i64::MAX,
            log_index_interval_bytes: 4096,
            log_index_size_max_bytes: 10 * 1024 * 1024,
            log_local_retention_bytes: -2,
            log_local_retention_ms: -2,
            log_message_downconversion_enable: true,
            log_message_format_version: DEFAULT_MESSAGE_FORMAT_VERSION.to_string(),
            log_message_timestamp_after_max_ms: i64::MAX,
            log_message_timestamp_before_max_ms: i64::MAX,
            log_message_timestamp_difference_max_ms: i64::MAX,
            log_message_timestamp_type: TimestampType::CreateTime,
            log_preallocate: false,
            log_retention_bytes: -1,
            log_retention_check_interval_ms: 5 * MS_PER_MINUTE,
            log_retention_hours: 168,
            log_retention_minutes: None,
            log_retention_ms: None,
            log_roll_hours: 168,
            log_roll_jitter_hours: 0,
            log_roll_jitter_ms: None,
            log_roll_ms: None,
            log_segment_bytes: 1024 * 1024 * 1024,
            log_segment_delete_delay_ms: 60_000,
            max_connections: i32::MAX,
            max_connections_per_ip: i32::MAX,
            max_connection_creation_rate: i32::MAX,
            max_connections_per_ip_overrides: Vec::new(),
            max_incremental_fetch_session_cache_slots: 1000,
            message_max_bytes: 1024 * 1024 + 12,
            min_insync_replicas: 1,
            num_io_threads: 8,
            num_network_threads: 3,
            num_partitions: 1,
            num_replica_fetchers: 1,
            offsets_commit_timeout_ms: 5000,
            offsets_load_buffer_size: 5 * 1024 * 1024,
            offsets_metadata_max_bytes: 4096,
            offsets_retention_check_interval_ms: 600_000,
            offsets_retention_minutes: 7 * 24 * 60,
            offsets_topic_compression_codec: 0,
            offsets_topic_num_partitions: 50,
            offsets_topic_replication_factor: 3,
            offsets_topic_segment_bytes: 100 * 1024 * 1024,
            producer_id_expiration_check_interval_ms: 600_000,
            producer_id_expiration_ms: 86_400_000,
            queued_max_request_bytes: -1,
            queued_max_requests: 500,
            quota_window_num: 11,
            quota_window_size_seconds: 1,
            controller_quota_window_num: 11,
            controller_quota_window_size_seconds: 1,
            replication_quota_window_num: 11,
            replication_quota_window_size_seconds: 1,
            replica_fetch_backoff_ms: 1000,
            replica_fetch_max_bytes: 1024 * 1024,
            replica_fetch_min_bytes: 1,
            replica_fetch_response_max_bytes: 10 * 1024 * 1024,
            replica_fetch_wait_max_ms: 500,
            replica_high_watermark_checkpoint_interval_ms: 5000,
            replica_lag_time_max_ms: 30_000,
            replica_selector_class: String::new(),
            replica_socket_timeout_ms: 30_000,
            request_timeout_ms: 30_000,
            reserved_broker_max_id: 1000,
            sasl: SaslSettings::default(),
            security_inter_broker_protocol: "PLAINTEXT".to_string(),
            super_users: None,
            socket_request_max_bytes: 100 * 1024 * 1024,
            transaction_abort_timed_out_transaction_cleanup_interval_ms: 10_000,
            transaction_max_timeout_ms: 900_000,
            transaction_partition_verification_enable: true,
            transaction_remove_expired_transaction_cleanup_interval_ms: 3_600_000,
            transaction_state_log_load_buffer_size: 5 * 1024 * 1024,
            transaction_state_log_min_isr: 2,
            transaction_state_log_num_partitions: 50,
            transaction_state_log_replication_factor: 3,
            transaction_state_log_segment_bytes: 100 * 1024 * 1024,
            transactional_id_expiration_ms: 604_800_000,
            unclean_leader_election_enable: false,
            zookeeper_connect: None,
            zookeeper_connection_timeout_ms: None,
            zookeeper_max_in_flight_requests: 10,
            zookeeper_session_timeout_ms: 18_000,
            kcli_metrics_listener: None,
            kcli_metrics_jmx_exporter_config: None,
        }
    }
}

impl Settings {
    /// Parses `value` for the known key `key` and stores it. `Ok(false)` when kcli does not know
    /// the key (the caller reports it); an error names the key, the value and why.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        let invalid = |reason: String| ConfigError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            reason,
        };
        let int = |min| int_at_least(value, min).map_err(invalid);
        let long = |min| long_at_least(value, min).map_err(invalid);
        let flag = || boolean(value).map_err(invalid);
        let between = |(min, max): (i32, i32)| {
            let n = int(i32::MIN)?;
            values::check_between(f64::from(n), i64::from(min), i64::from(max)).map_err(invalid)?;
            Ok::<i32, ConfigError>(n)
        };
        let optional = |s: String| (!s.is_empty()).then_some(s);
        match key {
            "advertised.listeners" => {
                self.advertised_listeners = Some(parse_listeners(value, false).map_err(invalid)?)
            }
            "allow.everyone.if.no.acl.found" => self.allow_everyone_if_no_acl_found = flag()?,
            "authorizer.class.name" => self.authorizer_class_name = string(value),
            "auto.create.topics.enable" => self.auto_create_topics_enable = flag()?,
            "auto.leader.rebalance.enable" => self.auto_leader_rebalance_enable = flag()?,
            "broker.id" => self.broker_id = int(i32::MIN)?,
            "broker.id.generation.enable" => self.broker_id_generation_enable = flag()?,
            "broker.rack" => self.broker_rack = optional(string(value)),
            "controlled.shutdown.enable" => self.controlled_shutdown_enable = flag()?,
            "controlled.shutdown.max.retries" => {
                self.controlled_shutdown_max_retries = int(i32::MIN)?
            }
            "controlled.shutdown.retry.backoff.ms" => {
                self.controlled_shutdown_retry_backoff_ms = long(i64::MIN)?
            }
            "controller.socket.timeout.ms" => self.controller_socket_timeout_ms = int(i32::MIN)?,
            "compression.gzip.level" => {
                let n = int(i32::MIN)?;
                values::check_gzip_level(n).map_err(invalid)?;
                self.compression_gzip_level = n;
            }
            "compression.lz4.level" => self.compression_lz4_level = between(LZ4_LEVELS)?,
            "compression.type" => {
                self.compression_type = BrokerCompressionType::parse(value).map_err(invalid)?
            }
            "compression.zstd.level" => self.compression_zstd_level = between(ZSTD_LEVELS)?,
            "default.replication.factor" => self.default_replication_factor = int(i32::MIN)?,
            "delete.topic.enable" => self.delete_topic_enable = flag()?,
            "group.initial.rebalance.delay.ms" => {
                self.group_initial_rebalance_delay_ms = int(i32::MIN)?
            }
            "group.max.session.timeout.ms" => self.group_max_session_timeout_ms = int(i32::MIN)?,
            "group.max.size" => self.group_max_size = int(1)?,
            "inter.broker.listener.name" => {
                self.inter_broker_listener_name = optional(string(value))
            }
            "inter.broker.protocol.version" => {
                self.inter_broker_protocol_version = InterBrokerProtocolVersion::parse(value.trim())
                    .map_err(|e| invalid(e.to_string()))?
            }
            "leader.imbalance.check.interval.seconds" => {
                self.leader_imbalance_check_interval_seconds = long(1)?
            }
            "leader.imbalance.per.broker.percentage" => {
                self.leader_imbalance_per_broker_percentage = int(i32::MIN)?
            }
            "group.min.session.timeout.ms" => self.group_min_session_timeout_ms = int(i32::MIN)?,
            "listener.security.protocol.map" => {
                self.listener_security_protocol_map =
                    parse_security_protocol_map(value).map_err(invalid)?
            }
            "listeners" => self.listeners = parse_listeners(value, true).map_err(invalid)?,
            "log.cleaner.backoff.ms" => self.log_cleaner_backoff_ms = long(0)?,
            "log.cleaner.dedupe.buffer.size" => {
                self.log_cleaner_dedupe_buffer_size = long(i64::MIN)?
            }
            "log.cleaner.delete.retention.ms" => self.log_cleaner_delete_retention_ms = long(0)?,
            "log.cleaner.enable" => self.log_cleaner_enable = flag()?,
            "log.cleaner.io.buffer.load.factor" => {
                self.log_cleaner_io_buffer_load_factor = values::parse_java_double(value)
                    .ok_or_else(|| invalid("not a number of type DOUBLE".into()))?
            }
            "log.cleaner.io.buffer.size" => self.log_cleaner_io_buffer_size = int(0)?,
            "log.cleaner.io.max.bytes.per.second" => {
                self.log_cleaner_io_max_bytes_per_second = values::parse_java_double(value)
                    .ok_or_else(|| invalid("not a number of type DOUBLE".into()))?
            }
            "log.cleaner.max.compaction.lag.ms" => {
                self.log_cleaner_max_compaction_lag_ms = long(1)?
            }
            "log.cleaner.min.cleanable.ratio" => {
                let d = values::parse_java_double(value)
                    .ok_or_else(|| invalid("not a number of type DOUBLE".into()))?;
                values::check_between(d, 0, 1).map_err(invalid)?;
                self.log_cleaner_min_cleanable_ratio = d;
            }
            "log.cleaner.min.compaction.lag.ms" => {
                self.log_cleaner_min_compaction_lag_ms = long(0)?
            }
            "log.cleaner.threads" => self.log_cleaner_threads = int(0)?,
            "log.cleanup.policy" => {
                let mut policy = CleanupPolicy {
                    delete: false,
                    compact: false,
                };
                for item in list(value) {
                    match item.as_str() {
                        "delete" => policy.delete = true,
                        "compact" => policy.compact = true,
                        _ => return Err(invalid("String must be one of: compact, delete".into())),
                    }
                }
                self.log_cleanup_policy = policy;
            }
            "log.dir" => self.log_dir = string(value),
            // Set but empty is an error (no log dir), as in Kafka; it does not fall back.
            "log.dirs" => self.log_dirs = Some(string(value)),
            "log.flush.interval.messages" => self.log_flush_interval_messages = long(1)?,
            "log.flush.interval.ms" => self.log_flush_interval_ms = Some(long(i64::MIN)?),
            "log.flush.scheduler.interval.ms" => {
                self.log_flush_scheduler_interval_ms = long(i64::MIN)?
            }
            "log.index.interval.bytes" => self.log_index_interval_bytes = int(0)?,
            "log.index.size.max.bytes" => self.log_index_size_max_bytes = int(4)?,
            "log.local.retention.bytes" => self.log_local_retention_bytes = long(-2)?,
            "log.local.retention.ms" => self.log_local_retention_ms = long(-2)?,
            "log.message.downconversion.enable" => self.log_message_downconversion_enable = flag()?,
            "log.message.format.version" => {
                let version = string(value);
                values::check_metadata_version(&version).map_err(invalid)?;
                self.log_message_format_version = version;
            }
            "log.message.timestamp.after.max.ms" => {
                self.log_message_timestamp_after_max_ms = long(0)?
            }
            "log.message.timestamp.before.max.ms" => {
                self.log_message_timestamp_before_max_ms = long(0)?
            }
            "log.message.timestamp.difference.max.ms" => {
                self.log_message_timestamp_difference_max_ms = long(0)?
            }
            "log.message.timestamp.type" => {
                self.log_message_timestamp_type = match value.trim() {
                    "CreateTime" => TimestampType::CreateTime,
                    "LogAppendTime" => TimestampType::LogAppendTime,
                    _ => {
                        return Err(invalid(
                            "String must be one of: CreateTime, LogAppendTime".into(),
                        ));
                    }
                }
            }
            "log.preallocate" => self.log_preallocate = flag()?,
            "log.retention.bytes" => self.log_retention_bytes = long(i64::MIN)?,
            "log.retention.check.interval.ms" => self.log_retention_check_interval_ms = long(1)?,
            "log.retention.hours" => self.log_retention_hours = int(i32::MIN)?,
            "log.retention.minutes" => self.log_retention_minutes = Some(int(i32::MIN)?),
            "log.retention.ms" => self.log_retention_ms = Some(long(i64::MIN)?),
            "log.roll.hours" => self.log_roll_hours = int(1)?,
            "log.roll.jitter.hours" => self.log_roll_jitter_hours = int(0)?,
            "log.roll.jitter.ms" => self.log_roll_jitter_ms = Some(long(i64::MIN)?),
            "log.roll.ms" => self.log_roll_ms = Some(long(i64::MIN)?),
            // Kafka's `LegacyRecord.RECORD_OVERHEAD_V0`: a segment must hold one record.
            "log.segment.bytes" => self.log_segment_bytes = int(14)?,
            "log.segment.delete.delay.ms" => self.log_segment_delete_delay_ms = long(0)?,
            "message.max.bytes" => self.message_max_bytes = int(0)?,
            "min.insync.replicas" => self.min_insync_replicas = int(1)?,
            "num.io.threads" => self.num_io_threads = int(1)?,
            "num.network.threads" => self.num_network_threads = int(1)?,
            "num.partitions" => self.num_partitions = int(1)?,
            "num.replica.fetchers" => self.num_replica_fetchers = int(1)?,
            "offsets.commit.timeout.ms" => self.offsets_commit_timeout_ms = int(1)?,
            "offsets.load.buffer.size" => self.offsets_load_buffer_size = int(1)?,
            "offsets.metadata.max.bytes" => self.offsets_metadata_max_bytes = int(i32::MIN)?,
            "offsets.retention.check.interval.ms" => {
                self.offsets_retention_check_interval_ms = long(1)?
            }
            "offsets.retention.minutes" => self.offsets_retention_minutes = int(1)?,
            "offsets.topic.compression.codec" => {
                let n = int(i32::MIN)?;
                if !(0..=4).contains(&n) {
                    return Err(invalid("Unknown compression type id".into()));
                }
                self.offsets_topic_compression_codec = n;
            }
            "offsets.topic.num.partitions" => self.offsets_topic_num_partitions = int(1)?,
            "offsets.topic.segment.bytes" => self.offsets_topic_segment_bytes = int(1)?,
            "offsets.topic.replication.factor" => {
                self.offsets_topic_replication_factor = short_at_least(value, 1).map_err(invalid)?
            }
            "producer.id.expiration.check.interval.ms" => {
                self.producer_id_expiration_check_interval_ms = int(1)?
            }
            "producer.id.expiration.ms" => self.producer_id_expiration_ms = int(1)?,
            "queued.max.request.bytes" => self.queued_max_request_bytes = long(i64::MIN)?,
            "queued.max.requests" => self.queued_max_requests = int(1)?,
            "quota.window.num" => self.quota_window_num = int(1)?,
            "quota.window.size.seconds" => self.quota_window_size_seconds = int(1)?,
            "controller.quota.window.num" => self.controller_quota_window_num = int(1)?,
            "controller.quota.window.size.seconds" => {
                self.controller_quota_window_size_seconds = int(1)?
            }
            "replication.quota.window.num" => self.replication_quota_window_num = int(1)?,
            "replication.quota.window.size.seconds" => {
                self.replication_quota_window_size_seconds = int(1)?
            }
            "max.connections" => self.max_connections = int(0)?,
            "max.incremental.fetch.session.cache.slots" => {
                self.max_incremental_fetch_session_cache_slots = int(0)?
            }
            "max.connections.per.ip" => self.max_connections_per_ip = int(0)?,
            "max.connection.creation.rate" => self.max_connection_creation_rate = int(0)?,
            "max.connections.per.ip.overrides" => {
                self.max_connections_per_ip_overrides =
                    parse_connection_overrides(value).map_err(invalid)?
            }
            "replica.fetch.backoff.ms" => self.replica_fetch_backoff_ms = int(0)?,
            "replica.fetch.max.bytes" => self.replica_fetch_max_bytes = int(0)?,
            "replica.fetch.min.bytes" => self.replica_fetch_min_bytes = int(i32::MIN)?,
            "replica.fetch.response.max.bytes" => self.replica_fetch_response_max_bytes = int(0)?,
            "replica.fetch.wait.max.ms" => self.replica_fetch_wait_max_ms = int(i32::MIN)?,
            "replica.high.watermark.checkpoint.interval.ms" => {
                self.replica_high_watermark_checkpoint_interval_ms = long(i64::MIN)?
            }
            "replica.lag.time.max.ms" => self.replica_lag_time_max_ms = long(i64::MIN)?,
            "replica.selector.class" => self.replica_selector_class = string(value),
            "replica.socket.timeout.ms" => self.replica_socket_timeout_ms = int(i32::MIN)?,
            "request.timeout.ms" => self.request_timeout_ms = int(0)?,
            "reserved.broker.max.id" => self.reserved_broker_max_id = int(0)?,
            "security.inter.broker.protocol" => self.security_inter_broker_protocol = string(value),
            "socket.request.max.bytes" => self.socket_request_max_bytes = int(1)?,
            "super.users" => self.super_users = optional(string(value)),
            "transaction.abort.timed.out.transaction.cleanup.interval.ms" => {
                self.transaction_abort_timed_out_transaction_cleanup_interval_ms = int(1)?
            }
            "transaction.max.timeout.ms" => self.transaction_max_timeout_ms = int(1)?,
            "transaction.partition.verification.enable" => {
                self.transaction_partition_verification_enable = flag()?
            }
            "transaction.remove.expired.transaction.cleanup.interval.ms" => {
                self.transaction_remove_expired_transaction_cleanup_interval_ms = int(1)?
            }
            "transaction.state.log.load.buffer.size" => {
                self.transaction_state_log_load_buffer_size = int(1)?
            }
            "transaction.state.log.min.isr" => self.transaction_state_log_min_isr = int(1)?,
            "transaction.state.log.num.partitions" => {
                self.transaction_state_log_num_partitions = int(1)?
            }
            "transaction.state.log.replication.factor" => {
                self.transaction_state_log_replication_factor =
                    short_at_least(value, 1).map_err(invalid)?
            }
            "transaction.state.log.segment.bytes" => {
                self.transaction_state_log_segment_bytes = int(1)?
            }
            "transactional.id.expiration.ms" => self.transactional_id_expiration_ms = int(1)?,
            "unclean.leader.election.enable" => self.unclean_leader_election_enable = flag()?,
            "zookeeper.connect" => self.zookeeper_connect = optional(string(value)),
            "zookeeper.connection.timeout.ms" => {
                self.zookeeper_connection_timeout_ms = Some(int(i32::MIN)?)
            }
            "zookeeper.max.in.flight.requests" => self.zookeeper_max_in_flight_requests = int(1)?,
            "zookeeper.session.timeout.ms" => self.zookeeper_session_timeout_ms = int(i32::MIN)?,
            "kcli.metrics.listener" => {
                let address = value.trim();
                let port = address.rsplit_once(':').map(|(_, p)| p.parse::<u16>());
                if !matches!(port, Some(Ok(_))) {
                    return Err(invalid("expected HOST:PORT".into()));
                }
                self.kcli_metrics_listener = Some(address.to_string()).filter(|a| !a.is_empty())
            }
            "kcli.metrics.jmx.exporter.config" => {
                self.kcli_metrics_jmx_exporter_config = optional(value.trim().to_string())
            }
            _ => return self.sasl.set(key, value),
        }
        Ok(true)
    }

    /// `log.roll.ms`, else `log.roll.hours` in milliseconds (Kafka's `logRollTimeMillis`).
    pub fn log_roll_time_millis(&self) -> i64 {
        self.log_roll_ms
            .unwrap_or(i64::from(self.log_roll_hours) * MS_PER_HOUR)
    }

    /// `log.roll.jitter.ms`, else `log.roll.jitter.hours` in milliseconds.
    pub fn log_roll_time_jitter_millis(&self) -> i64 {
        self.log_roll_jitter_ms
            .unwrap_or(i64::from(self.log_roll_jitter_hours) * MS_PER_HOUR)
    }

    /// `log.retention.ms`, else `log.retention.minutes`, else `log.retention.hours`, in
    /// milliseconds; any negative result is -1 (unlimited), as Kafka's `logRetentionTimeMillis`.
    /// The max time to wait for the first ZooKeeper connection: `zookeeper.connection.timeout.ms`,
    /// else `zookeeper.session.timeout.ms`, as Kafka's `zkConnectionTimeoutMs`.
    pub fn zookeeper_connection_timeout_ms(&self) -> i32 {
        self.zookeeper_connection_timeout_ms
            .unwrap_or(self.zookeeper_session_timeout_ms)
    }

    pub fn log_retention_time_millis(&self) -> i64 {
        let millis = match (self.log_retention_ms, self.log_retention_minutes) {
            (Some(ms), _) => ms,
            (None, Some(minutes)) => i64::from(minutes) * MS_PER_MINUTE,
            (None, None) => i64::from(self.log_retention_hours) * MS_PER_HOUR,
        };
        if millis < 0 { -1 } else { millis }
    }

    /// `log.flush.interval.ms`, else `log.flush.scheduler.interval.ms`.
    pub fn log_flush_interval_millis(&self) -> i64 {
        self.log_flush_interval_ms
            .unwrap_or(self.log_flush_scheduler_interval_ms)
    }

    /// The log directories: `log.dirs`, else `log.dir`, split on commas, blanks dropped.
    pub fn log_dirs(&self) -> Vec<String> {
        self.log_dirs
            .as_deref()
            .unwrap_or(&self.log_dir)
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    /// Gives every endpoint of `listeners` and `advertised.listeners` its protocol from
    /// `listener.security.protocol.map` (Kafka resolves them once the whole config is read, so
    /// the keys' order does not matter); a listener the map does not name is an error.
    pub fn resolve_listener_protocols(&mut self) -> Result<(), ConfigError> {
        let map = &self.listener_security_protocol_map;
        let fail = |key: &str, endpoints: &[EndPoint], reason: String| {
            let value: Vec<String> = endpoints.iter().map(ToString::to_string).collect();
            ConfigError::InvalidValue {
                key: key.to_string(),
                value: value.join(","),
                reason,
            }
        };
        resolve_security_protocols(&mut self.listeners, map)
            .map_err(|reason| fail("listeners", &self.listeners, reason))?;
        if let Some(advertised) = self.advertised_listeners.as_mut() {
            resolve_security_protocols(advertised, map)
                .map_err(|reason| fail("advertised.listeners", advertised, reason))?;
        }
        Ok(())
    }

    /// The endpoints clients are told to connect to: `advertised.listeners`, else `listeners`.
    pub fn effective_advertised_listeners(&self) -> &[EndPoint] {
        self.advertised_listeners
            .as_deref()
            .unwrap_or(&self.listeners)
    }
}

/// `max.connections.per.ip.overrides`: `address:count,...` (Kafka's `Csv.parseCsvMap`, split at
/// the last `:` so IPv6 addresses work). kcli takes IP addresses, not host names to resolve.
fn parse_connection_overrides(value: &str) -> Result<Vec<(std::net::IpAddr, i32)>, String> {
    let mut out = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (address, count) = entry
            .rsplit_once(':')
            .ok_or_else(|| format!("entries must be of the form address:count, not `{entry}`"))?;
        let address = address.trim();
        let ip = address
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| {
                format!("max.connections.per.ip.overrides contains invalid addresses : {address}")
            })?;
        let count: i32 = count
            .trim()
            .parse()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| format!("invalid connection count `{}` for {address}", count.trim()))?;
        out.push((ip, count));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
