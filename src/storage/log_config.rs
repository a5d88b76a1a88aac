//! Per-topic log settings: every topic-level config of Kafka 3.9 (`segment.bytes`,
//! `retention.ms`, `compression.type`, ...), with its defaults and validators. The broker's `log.*`
//! settings supply the defaults a topic's own overrides replace; see
//! [`LogConfig::with_overrides`]. [`LogConfig::validate_topic_values`] adds the checks Kafka
//! makes when a topic is created or altered.
//!
//! Some keys are kept only so that a topic carries and reports them as Kafka's does: the
//! throttled replica lists (no effect without a replication throttle rate), `message.format.version` (ignored by
//! Kafka 3.x), and the tiered-storage keys (no remote storage here: `remote.storage.enable` is
//! refused as Kafka refuses it on a broker without it).

use std::collections::BTreeMap;

use crate::protocol::record::batch::TimestampType;
use crate::protocol::record::compression::CompressionType;
use crate::protocol::record::rebuild::Compression;

use super::log_config_values::{
    self as values, BrokerCompressionType, DEFAULT_MESSAGE_FORMAT_VERSION, GZIP_DEFAULT_LEVEL,
    LZ4_DEFAULT_LEVEL, LZ4_LEVELS, Value, ZSTD_DEFAULT_LEVEL, ZSTD_LEVELS,
};

/// Every topic config name of Kafka 3.9's `LogConfig`, sorted: the keys [`LogConfig::set`]
/// takes and [`LogConfig::value_string`] renders.
pub const TOPIC_CONFIG_NAMES: &[&str] = &[
    "cleanup.policy",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.type",
    "compression.zstd.level",
    "delete.retention.ms",
    "file.delete.delay.ms",
    "flush.messages",
    "flush.ms",
    "follower.replication.throttled.replicas",
    "index.interval.bytes",
    "leader.replication.throttled.replicas",
    "local.retention.bytes",
    "local.retention.ms",
    "max.compaction.lag.ms",
    "max.message.bytes",
    "message.downconversion.enable",
    "message.format.version",
    "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms",
    "message.timestamp.difference.max.ms",
    "message.timestamp.type",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "min.insync.replicas",
    "preallocate",
    "remote.log.copy.disable",
    "remote.log.delete.on.disable",
    "remote.storage.enable",
    "retention.bytes",
    "retention.ms",
    "segment.bytes",
    "segment.index.bytes",
    "segment.jitter.ms",
    "segment.ms",
    "unclean.leader.election.enable",
];

/// `cleanup.policy`: which of deletion by retention and compaction apply to a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanupPolicy {
    pub delete: bool,
    pub compact: bool,
}

/// A topic's log settings. Sizes are bytes, times milliseconds; `-1` retention means unlimited,
/// as in Kafka.
#[derive(Debug, Clone, PartialEq)]
pub struct LogConfig {
    /// `segment.bytes`: roll when the active segment would grow past this.
    pub segment_bytes: i32,
    /// `segment.ms`: roll when the active segment's records span this much time.
    pub segment_ms: i64,
    /// `segment.jitter.ms`: a random amount below this is subtracted from `segment_ms` per
    /// segment, so that many partitions do not roll at once.
    pub segment_jitter_ms: i64,
    /// `segment.index.bytes`: the size index files are preallocated to.
    pub segment_index_bytes: i32,
    /// `index.interval.bytes`: bytes appended between two offset-index entries.
    pub index_interval_bytes: i32,
    /// `flush.messages`: fsync after this many messages (default: never, rely on replication).
    pub flush_messages: i64,
    /// `flush.ms`: fsync after this long (default: never).
    pub flush_ms: i64,
    /// `retention.bytes`: delete the oldest segments while the log exceeds this (-1: no limit).
    pub retention_bytes: i64,
    /// `retention.ms`: delete segments whose newest record is older than this (-1: no limit).
    pub retention_ms: i64,
    /// `max.message.bytes`: the largest record batch accepted.
    pub max_message_bytes: i32,
    /// `file.delete.delay.ms`: how long a deleted segment's `.deleted` files stay on disk.
    pub file_delete_delay_ms: i64,
    /// `delete.retention.ms`: how long compaction keeps tombstones.
    pub delete_retention_ms: i64,
    /// `min.compaction.lag.ms`: a record stays uncompacted at least this long.
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms`: a record is eligible for compaction after at most this long.
    pub max_compaction_lag_ms: i64,
    /// `min.cleanable.dirty.ratio`: the dirty share of a log above which it is compacted.
    pub min_cleanable_dirty_ratio: f64,
    /// `cleanup.policy`.
    pub cleanup_policy: CleanupPolicy,
    /// `compression.type`: `producer` keeps the producer's batches as they are; a codec makes
    /// the leader rebuild batches of another codec to it ([`LogConfig::target_compression`]).
    pub compression_type: BrokerCompressionType,
    /// `compression.gzip.level`, `compression.lz4.level`, `compression.zstd.level`: the levels a
    /// broker re-compressing to that codec would use.
    pub compression_gzip_level: i32,
    pub compression_lz4_level: i32,
    pub compression_zstd_level: i32,
    /// `message.format.version` as given. Kafka 3.x ignores it (batches are always v2).
    pub message_format_version: String,
    /// `message.timestamp.type`.
    pub message_timestamp_type: TimestampType,
    /// `message.timestamp.difference.max.ms`, deprecated: the bound of either direction whose
    /// own key is left at its default (see [`LogConfig::timestamp_before_max_ms`]).
    pub message_timestamp_difference_max_ms: i64,
    /// `message.timestamp.before.max.ms` as configured: how far in the past a CreateTime
    /// timestamp may be.
    pub message_timestamp_before_max_ms: i64,
    /// `message.timestamp.after.max.ms` as configured: how far in the future a CreateTime
    /// timestamp may be.
    pub message_timestamp_after_max_ms: i64,
    /// `message.downconversion.enable`: whether Fetch v0-3 may have batches down-converted to
    /// magic 0/1; when false such fetches answer `UNSUPPORTED_VERSION` for the partition.
    pub message_downconversion_enable: bool,
    /// `leader.replication.throttled.replicas`, `follower.replication.throttled.replicas`:
    /// `partition:broker` items or `*`; they matter only with a replication throttle rate.
    pub leader_replication_throttled_replicas: Vec<String>,
    pub follower_replication_throttled_replicas: Vec<String>,
    /// `min.insync.replicas`.
    pub min_insync_replicas: i32,
    /// `unclean.leader.election.enable`.
    pub unclean_leader_election_enable: bool,
    /// `preallocate`: a new segment reserves its whole `segment.bytes` of blocks at once, its
    /// length still its data's (see `file_records::Reserved`).
    pub preallocate: bool,
    /// `remote.storage.enable`: always false on kcli, which has no remote log storage.
    pub remote_storage_enable: bool,
    /// `local.retention.ms`, `local.retention.bytes`: local retention in front of remote
    /// storage; -2 means the value of `retention.ms` / `retention.bytes`.
    pub local_retention_ms: i64,
    pub local_retention_bytes: i64,
    /// `remote.log.copy.disable`, `remote.log.delete.on.disable` (KRaft only in Kafka 3.9).
    pub remote_log_copy_disable: bool,
    pub remote_log_delete_on_disable: bool,
}

impl Default for LogConfig {
    fn default() -> Self {
        const DAY_MS: i64 = 24 * 60 * 60 * 1000;
        LogConfig {
            segment_bytes: 1024 * 1024 * 1024,
            segment_ms: 7 * DAY_MS,
            segment_jitter_ms: 0,
            segment_index_bytes: 10 * 1024 * 1024,
            index_interval_bytes: 4096,
            flush_messages: i64::MAX,
            flush_ms: i64::MAX,
            retention_bytes: -1,
            retention_ms: 7 * DAY_MS,
            max_message_bytes: 1024 * 1024 + 12,
            file_delete_delay_ms: 60_000,
            delete_retention_ms: DAY_MS,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            min_cleanable_dirty_ratio: 0.5,
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: false,
            },
            compression_type: BrokerCompressionType::Producer,
            compression_gzip_level: GZIP_DEFAULT_LEVEL,
            compression_lz4_level: LZ4_DEFAULT_LEVEL,
            compression_zstd_level: ZSTD_DEFAULT_LEVEL,
            message_format_version: DEFAULT_MESSAGE_FORMAT_VERSION.to_string(),
            message_timestamp_type: TimestampType::CreateTime,
            message_timestamp_difference_max_ms: i64::MAX,
            message_timestamp_before_max_ms: i64::MAX,
            message_timestamp_after_max_ms: i64::MAX,
            message_downconversion_enable: true,
            leader_replication_throttled_replicas: Vec::new(),
            follower_replication_throttled_replicas: Vec::new(),
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
            preallocate: false,
            remote_storage_enable: false,
            local_retention_ms: -2,
            local_retention_bytes: -2,
            remote_log_copy_disable: false,
            remote_log_delete_on_disable: false,
        }
    }
}

/// A topic config Kafka (or kcli) refuses, worded as Kafka's `LogConfig.validate` words it
/// (clients show these messages from CreateTopics and AlterConfigs).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LogConfigError {
    #[error("Unknown topic config name: {key}")]
    UnknownKey { key: String },
    /// `ConfigException(name, value, reason)`; `value` is the text given, or the parsed value
    /// for a range check, as Kafka shows them.
    #[error("Invalid value {value} for configuration {key}: {reason}")]
    InvalidValue {
        key: String,
        value: String,
        reason: String,
    },
    /// `ConfigException(message)`: a refusal not tied to one value.
    #[error("{message}")]
    Refused { message: String },
    /// `InvalidConfigurationException`: keys that contradict each other. Unlike the two
    /// above, AlterConfigs passes its message on as it is.
    #[error("{message}")]
    Conflict { message: String },
}

impl LogConfigError {
    /// Whether Kafka raises this as a `ConfigException`, which AlterConfigs and
    /// IncrementalAlterConfigs prefix with the resource ("Invalid config value for resource
    /// ...").
    pub fn is_config_exception(&self) -> bool {
        matches!(
            self,
            LogConfigError::InvalidValue { .. } | LogConfigError::Refused { .. }
        )
    }
}

impl LogConfig {
    /// This config with a topic's overrides (Kafka's topic-level keys) applied. As Kafka's
    /// `LogConfig.validate`, every name is checked before any value.
    pub fn with_overrides(
        &self,
        overrides: &BTreeMap<String, String>,
    ) -> Result<Self, LogConfigError> {
        if let Some(key) = overrides.keys().find(|k| !is_topic_config(k)) {
            return Err(LogConfigError::UnknownKey { key: key.clone() });
        }
        let mut config = self.clone();
        for (key, value) in overrides {
            config.set(key, value)?;
        }
        Ok(config)
    }

    /// Sets one topic-level key, with Kafka's type and validator for it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), LogConfigError> {
        let v = Value { key, value };
        match key {
            "segment.bytes" => self.segment_bytes = v.int_at_least(14)?,
            "segment.ms" => self.segment_ms = v.long_at_least(1)?,
            "segment.jitter.ms" => self.segment_jitter_ms = v.long_at_least(0)?,
            "segment.index.bytes" => self.segment_index_bytes = v.int_at_least(4)?,
            "index.interval.bytes" => self.index_interval_bytes = v.int_at_least(0)?,
            "flush.messages" => self.flush_messages = v.long_at_least(1)?,
            "flush.ms" => self.flush_ms = v.long_at_least(0)?,
            "retention.bytes" => self.retention_bytes = v.long_at_least(i64::MIN)?,
            "retention.ms" => self.retention_ms = v.long_at_least(-1)?,
            "max.message.bytes" => self.max_message_bytes = v.int_at_least(0)?,
            "file.delete.delay.ms" => self.file_delete_delay_ms = v.long_at_least(0)?,
            "delete.retention.ms" => self.delete_retention_ms = v.long_at_least(0)?,
            "min.compaction.lag.ms" => self.min_compaction_lag_ms = v.long_at_least(0)?,
            "max.compaction.lag.ms" => self.max_compaction_lag_ms = v.long_at_least(1)?,
            "min.cleanable.dirty.ratio" => self.min_cleanable_dirty_ratio = v.ratio()?,
            "cleanup.policy" => self.cleanup_policy = v.cleanup_policy()?,
            "compression.type" => {
                self.compression_type =
                    BrokerCompressionType::parse(value).map_err(|r| v.invalid(r))?
            }
            "compression.gzip.level" => self.compression_gzip_level = v.gzip_level()?,
            "compression.lz4.level" => self.compression_lz4_level = v.int_between(LZ4_LEVELS)?,
            "compression.zstd.level" => self.compression_zstd_level = v.int_between(ZSTD_LEVELS)?,
            "message.format.version" => self.message_format_version = v.metadata_version()?,
            "message.timestamp.type" => self.message_timestamp_type = v.timestamp_type()?,
            "message.timestamp.difference.max.ms" => {
                self.message_timestamp_difference_max_ms = v.long_at_least(0)?
            }
            "message.timestamp.before.max.ms" => {
                self.message_timestamp_before_max_ms = v.long_at_least(0)?
            }
            "message.timestamp.after.max.ms" => {
                self.message_timestamp_after_max_ms = v.long_at_least(0)?
            }
            "message.downconversion.enable" => self.message_downconversion_enable = v.boolean()?,
            "leader.replication.throttled.replicas" => {
                self.leader_replication_throttled_replicas = v.throttled_replicas()?
            }
            "follower.replication.throttled.replicas" => {
                self.follower_replication_throttled_replicas = v.throttled_replicas()?
            }
            "min.insync.replicas" => self.min_insync_replicas = v.int_at_least(1)?,
            "unclean.leader.election.enable" => {
                self.unclean_leader_election_enable = v.boolean()?
            }
            "preallocate" => self.preallocate = v.boolean()?,
            "remote.storage.enable" => self.remote_storage_enable = v.boolean()?,
            "local.retention.ms" => self.local_retention_ms = v.long_at_least(-2)?,
            "local.retention.bytes" => self.local_retention_bytes = v.long_at_least(-2)?,
            "remote.log.copy.disable" => self.remote_log_copy_disable = v.boolean()?,
            "remote.log.delete.on.disable" => self.remote_log_delete_on_disable = v.boolean()?,
            _ => {
                return Err(LogConfigError::UnknownKey {
                    key: key.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The checks Kafka's ZooKeeper-mode broker makes on a topic's config (its overrides over
    /// the broker defaults) when the topic is created or altered
    /// (`LogConfig.validateTopicLogConfigValues` with remote log storage disabled), in Kafka's
    /// order.
    pub fn validate_topic_values(&self) -> Result<(), LogConfigError> {
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms {
            return Err(LogConfigError::Conflict {
                message: format!(
                    "conflict topic config setting min.compaction.lag.ms ({}) > \
                     max.compaction.lag.ms ({})",
                    self.min_compaction_lag_ms, self.max_compaction_lag_ms
                ),
            });
        }
        if self.remote_log_delete_on_disable || self.remote_log_copy_disable {
            return Err(LogConfigError::Conflict {
                message: "It is invalid to set `remote.log.delete.on.disable` or \
                          `remote.log.copy.disable` under Zookeeper's mode."
                    .into(),
            });
        }
        if self.remote_storage_enable {
            // What Kafka answers when `remote.log.storage.system.enable` is false; kcli has no
            // remote log storage to enable.
            return Err(LogConfigError::Refused {
                message: "Tiered Storage functionality is disabled in the broker. Topic cannot \
                          be configured with remote log storage."
                    .into(),
            });
        }
        Ok(())
    }

    /// The codec and level batches are rebuilt to (Kafka's `BrokerCompressionType
    /// .targetCompression` with the topic's levels); `None` for `producer`.
    pub fn target_compression(&self) -> Option<Compression> {
        let (codec, level) = match self.compression_type {
            BrokerCompressionType::Producer => return None,
            BrokerCompressionType::Uncompressed => (CompressionType::None, 0),
            BrokerCompressionType::Snappy => (CompressionType::Snappy, 0),
            BrokerCompressionType::Gzip => (CompressionType::Gzip, self.compression_gzip_level),
            BrokerCompressionType::Lz4 => (CompressionType::Lz4, self.compression_lz4_level),
            BrokerCompressionType::Zstd => (CompressionType::Zstd, self.compression_zstd_level),
        };
        Some(Compression { codec, level })
    }

    /// The bound on how far in the past a CreateTime timestamp may be, as Kafka applies it:
    /// `message.timestamp.before.max.ms`, or the deprecated
    /// `message.timestamp.difference.max.ms` while the former is at its default.
    pub fn timestamp_before_max_ms(&self) -> i64 {
        if self.message_timestamp_before_max_ms == i64::MAX {
            self.message_timestamp_difference_max_ms
        } else {
            self.message_timestamp_before_max_ms
        }
    }

    /// As [`LogConfig::timestamp_before_max_ms`], for timestamps in the future.
    pub fn timestamp_after_max_ms(&self) -> i64 {
        if self.message_timestamp_after_max_ms == i64::MAX {
            self.message_timestamp_difference_max_ms
        } else {
            self.message_timestamp_after_max_ms
        }
    }
}

/// Whether `key` is a topic config name.
pub fn is_topic_config(key: &str) -> bool {
    TOPIC_CONFIG_NAMES.binary_search(&key).is_ok()
}

impl LogConfig {
    /// The value of topic key `key` as Kafka's `ConfigDef.convertToString` renders it (what
    /// `DescribeConfigs` reports); `None` for a key `set` does not know. A cleanup policy of
    /// both is rendered `compact,delete`.
    pub fn value_string(&self, key: &str) -> Option<String> {
        let text = match key {
            "segment.bytes" => self.segment_bytes.to_string(),
            "segment.ms" => self.segment_ms.to_string(),
            "segment.jitter.ms" => self.segment_jitter_ms.to_string(),
            "segment.index.bytes" => self.segment_index_bytes.to_string(),
            "index.interval.bytes" => self.index_interval_bytes.to_string(),
            "flush.messages" => self.flush_messages.to_string(),
            "flush.ms" => self.flush_ms.to_string(),
            "retention.bytes" => self.retention_bytes.to_string(),
            "retention.ms" => self.retention_ms.to_string(),
            "max.message.bytes" => self.max_message_bytes.to_string(),
            "file.delete.delay.ms" => self.file_delete_delay_ms.to_string(),
            "delete.retention.ms" => self.delete_retention_ms.to_string(),
            "min.compaction.lag.ms" => self.min_compaction_lag_ms.to_string(),
            "max.compaction.lag.ms" => self.max_compaction_lag_ms.to_string(),
            "min.cleanable.dirty.ratio" => {
                values::java_double_string(self.min_cleanable_dirty_ratio)
            }
            "cleanup.policy" => {
                let CleanupPolicy { delete, compact } = self.cleanup_policy;
                match (compact, delete) {
                    (true, true) => "compact,delete",
                    (true, false) => "compact",
                    (false, true) => "delete",
                    (false, false) => "",
                }
                .to_string()
            }
            "compression.type" => self.compression_type.to_string(),
            "compression.gzip.level" => self.compression_gzip_level.to_string(),
            "compression.lz4.level" => self.compression_lz4_level.to_string(),
            "compression.zstd.level" => self.compression_zstd_level.to_string(),
            "message.format.version" => self.message_format_version.clone(),
            "message.timestamp.type" => self.message_timestamp_type.to_string(),
            "message.timestamp.difference.max.ms" => {
                self.message_timestamp_difference_max_ms.to_string()
            }
            "message.timestamp.before.max.ms" => self.message_timestamp_before_max_ms.to_string(),
            "message.timestamp.after.max.ms" => self.message_timestamp_after_max_ms.to_string(),
            "message.downconversion.enable" => self.message_downconversion_enable.to_string(),
            "leader.replication.throttled.replicas" => {
                self.leader_replication_throttled_replicas.join(",")
            }
            "follower.replication.throttled.replicas" => {
                self.follower_replication_throttled_replicas.join(",")
            }
            "min.insync.replicas" => self.min_insync_replicas.to_string(),
            "unclean.leader.election.enable" => self.unclean_leader_election_enable.to_string(),
            "preallocate" => self.preallocate.to_string(),
            "remote.storage.enable" => self.remote_storage_enable.to_string(),
            "local.retention.ms" => self.local_retention_ms.to_string(),
            "local.retention.bytes" => self.local_retention_bytes.to_string(),
            "remote.log.copy.disable" => self.remote_log_copy_disable.to_string(),
            "remote.log.delete.on.disable" => self.remote_log_delete_on_disable.to_string(),
            _ => return None,
        };
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafkas() {
        let c = LogConfig::default();
        assert_eq!(c.segment_bytes, 1_073_741_824);
        assert_eq!(c.segment_index_bytes, 10_485_760);
        assert_eq!(c.max_message_bytes, 1_048_588);
        assert_eq!(c.retention_ms, 604_800_000);
    }

    #[test]
    fn overrides_replace_defaults_and_name_bad_keys() {
        let mut props = BTreeMap::new();
        props.insert("segment.bytes".to_string(), "1048576".to_string());
        props.insert("cleanup.policy".to_string(), "compact,delete".to_string());
        let c = LogConfig::default().with_overrides(&props).unwrap();
        assert_eq!(c.segment_bytes, 1_048_576);
        assert_eq!(
            c.cleanup_policy,
            CleanupPolicy {
                delete: true,
                compact: true
            }
        );

        props.insert("retention.ms".to_string(), "soon".to_string());
        let err = LogConfig::default().with_overrides(&props).unwrap_err();
        assert!(err.to_string().contains("retention.ms"), "{err}");
        let mut c = LogConfig::default();
        assert_eq!(
            c.set("no.such.key", "1"),
            Err(LogConfigError::UnknownKey {
                key: "no.such.key".into()
            })
        );
    }

    #[test]
    fn errors_are_worded_as_kafkas() {
        let mut c = LogConfig::default();
        let err = |c: &mut LogConfig, k: &str, v: &str| c.set(k, v).unwrap_err().to_string();
        assert_eq!(
            err(&mut c, "no.such.key", "1"),
            "Unknown topic config name: no.such.key"
        );
        assert_eq!(
            err(&mut c, "segment.bytes", "big"),
            "Invalid value big for configuration segment.bytes: Not a number of type INT"
        );
        assert_eq!(
            err(&mut c, "segment.bytes", " 13"),
            "Invalid value 13 for configuration segment.bytes: Value must be at least 14"
        );
        assert_eq!(
            err(&mut c, "retention.ms", "x"),
            "Invalid value x for configuration retention.ms: Not a number of type LONG"
        );
        assert_eq!(
            err(&mut c, "preallocate", "yes"),
            "Invalid value yes for configuration preallocate: Expected value to be either true or false"
        );
        assert_eq!(
            err(&mut c, "cleanup.policy", "delete,archive"),
            "Invalid value archive for configuration cleanup.policy: String must be one of: compact, delete"
        );
        assert_eq!(
            err(&mut c, "message.timestamp.type", "createtime"),
            "Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"
        );
        // Kafka 3.9 takes an empty list: neither deletion nor compaction.
        c.set("cleanup.policy", " ").unwrap();
        assert_eq!(
            c.cleanup_policy,
            CleanupPolicy {
                delete: false,
                compact: false
            }
        );
        assert_eq!(c.value_string("cleanup.policy").as_deref(), Some(""));
    }

    #[test]
    fn values_render_as_kafka_and_round_trip() {
        let c = LogConfig::default();
        assert_eq!(c.value_string("retention.ms").as_deref(), Some("604800000"));
        assert_eq!(c.value_string("cleanup.policy").as_deref(), Some("delete"));
        assert_eq!(
            c.value_string("message.timestamp.type").as_deref(),
            Some("CreateTime")
        );
        assert_eq!(
            c.value_string("flush.ms").as_deref(),
            Some("9223372036854775807")
        );
        assert_eq!(
            c.value_string("compression.type").as_deref(),
            Some("producer")
        );
        assert_eq!(c.value_string("no.such.key"), None);
        let mut props = BTreeMap::new();
        props.insert("cleanup.policy".to_string(), "delete, compact".to_string());
        props.insert("preallocate".to_string(), "TRUE".to_string());
        let changed = c.with_overrides(&props).unwrap();
        assert_eq!(
            changed.value_string("cleanup.policy").as_deref(),
            Some("compact,delete")
        );
        assert_eq!(changed.value_string("preallocate").as_deref(), Some("true"));
    }

    #[test]
    fn every_topic_config_name_is_known_and_round_trips_its_default() {
        let defaults = LogConfig::default();
        for pair in TOPIC_CONFIG_NAMES.windows(2) {
            assert!(pair[0] < pair[1], "{}", pair[1]);
        }
        assert_eq!(TOPIC_CONFIG_NAMES.len(), 36, "Kafka 3.9's LogConfig");
        for name in TOPIC_CONFIG_NAMES {
            let text = defaults.value_string(name).unwrap();
            let mut c = defaults.clone();
            c.set(name, &text).unwrap();
            assert_eq!(c, defaults, "{name}");
        }
        defaults.validate_topic_values().unwrap();
        let render = |k: &str| defaults.value_string(k).unwrap();
        assert_eq!(render("compression.gzip.level"), "-1");
        assert_eq!(render("compression.lz4.level"), "9");
        assert_eq!(render("compression.zstd.level"), "3");
        assert_eq!(render("min.cleanable.dirty.ratio"), "0.5");
        assert_eq!(render("max.compaction.lag.ms"), "9223372036854775807");
        assert_eq!(render("message.format.version"), "3.0-IV1");
        assert_eq!(render("message.downconversion.enable"), "true");
        assert_eq!(render("local.retention.ms"), "-2");
        assert_eq!(render("leader.replication.throttled.replicas"), "");
        assert_eq!(render("remote.storage.enable"), "false");
    }

    #[test]
    fn names_are_checked_before_values() {
        let mut props = BTreeMap::new();
        props.insert("retention.ms".to_string(), "soon".to_string());
        props.insert("zzz".to_string(), "1".to_string());
        assert_eq!(
            LogConfig::default().with_overrides(&props),
            Err(LogConfigError::UnknownKey { key: "zzz".into() })
        );
    }

    #[test]
    fn topic_checks_are_kafkas_zookeeper_mode_ones() {
        let check = |pairs: &[(&str, &str)]| {
            let props = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            LogConfig::default()
                .with_overrides(&props)
                .unwrap()
                .validate_topic_values()
        };
        assert_eq!(
            check(&[
                ("min.compaction.lag.ms", "10"),
                ("max.compaction.lag.ms", "5")
            ]),
            Err(LogConfigError::Conflict {
                message: "conflict topic config setting min.compaction.lag.ms (10) > \
                          max.compaction.lag.ms (5)"
                    .into()
            })
        );
        let zk_only = "It is invalid to set `remote.log.delete.on.disable` or \
                       `remote.log.copy.disable` under Zookeeper's mode.";
        for key in ["remote.log.copy.disable", "remote.log.delete.on.disable"] {
            let err = check(&[(key, "true"), ("remote.storage.enable", "true")]).unwrap_err();
            assert_eq!(err.to_string(), zk_only);
            assert!(!err.is_config_exception());
            assert_eq!(check(&[(key, "false")]), Ok(()));
        }
        let err = check(&[("remote.storage.enable", "true")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Tiered Storage functionality is disabled in the broker. Topic cannot be \
             configured with remote log storage."
        );
        assert!(err.is_config_exception());
        for codec in ["uncompressed", "gzip", "snappy", "lz4", "zstd"] {
            assert_eq!(check(&[("compression.type", codec)]), Ok(()));
        }
        assert_eq!(
            check(&[
                ("compression.type", "producer"),
                ("compression.gzip.level", "9"),
                ("min.compaction.lag.ms", "100"),
                ("max.compaction.lag.ms", "100"),
                ("min.cleanable.dirty.ratio", "0.1"),
                ("local.retention.ms", "-1"),
                ("local.retention.bytes", "10"),
                ("message.format.version", "2.0"),
                ("message.downconversion.enable", "false"),
                ("leader.replication.throttled.replicas", "0:0"),
            ]),
            Ok(())
        );
    }

    #[test]
    fn the_deprecated_timestamp_difference_fills_the_unset_directions() {
        let mut c = LogConfig::default();
        assert_eq!(
            (c.timestamp_before_max_ms(), c.timestamp_after_max_ms()),
            (i64::MAX, i64::MAX)
        );
        c.set("message.timestamp.difference.max.ms", "1000")
            .unwrap();
        assert_eq!(
            (c.timestamp_before_max_ms(), c.timestamp_after_max_ms()),
            (1000, 1000)
        );
        c.set("message.timestamp.after.max.ms", "50").unwrap();
        assert_eq!(
            (c.timestamp_before_max_ms(), c.timestamp_after_max_ms()),
            (1000, 50)
        );
        // The configured values are what DescribeConfigs reports.
        assert_eq!(
            c.value_string("message.timestamp.before.max.ms").as_deref(),
            Some("9223372036854775807")
        );
    }
}
