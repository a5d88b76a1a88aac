//! Per-topic log settings, with Kafka 3.9's topic-level names (`segment.bytes`, `retention.ms`,
//! ...) and defaults. The broker's `log.*` settings supply the defaults a topic's own overrides
//! replace; see [`LogConfig::with_overrides`].

use std::collections::BTreeMap;

use crate::protocol::record::batch::TimestampType;

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
    /// `cleanup.policy`.
    pub cleanup_policy: CleanupPolicy,
    /// `message.timestamp.type`.
    pub message_timestamp_type: TimestampType,
    /// `message.timestamp.before.max.ms`: how far in the past a CreateTime timestamp may be.
    pub message_timestamp_before_max_ms: i64,
    /// `message.timestamp.after.max.ms`: how far in the future a CreateTime timestamp may be.
    pub message_timestamp_after_max_ms: i64,
    /// `min.insync.replicas`.
    pub min_insync_replicas: i32,
    /// `unclean.leader.election.enable`.
    pub unclean_leader_election_enable: bool,
    /// `preallocate`: preallocate segment files to `segment.bytes`.
    pub preallocate: bool,
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
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: false,
            },
            message_timestamp_type: TimestampType::CreateTime,
            message_timestamp_before_max_ms: i64::MAX,
            message_timestamp_after_max_ms: i64::MAX,
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
            preallocate: false,
        }
    }
}

/// A topic config that does not parse, naming the key, worded as Kafka's `LogConfig.validate`
/// words it (clients show these messages from CreateTopics and AlterConfigs).
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
}

impl LogConfig {
    /// This config with a topic's overrides (Kafka's topic-level keys) applied.
    pub fn with_overrides(
        &self,
        overrides: &BTreeMap<String, String>,
    ) -> Result<Self, LogConfigError> {
        let mut config = self.clone();
        for (key, value) in overrides {
            config.set(key, value)?;
        }
        Ok(config)
    }

    /// Sets one topic-level key.
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
            "cleanup.policy" => self.cleanup_policy = v.cleanup_policy()?,
            "message.timestamp.type" => self.message_timestamp_type = v.timestamp_type()?,
            "message.timestamp.before.max.ms" => {
                self.message_timestamp_before_max_ms = v.long_at_least(0)?
            }
            "message.timestamp.after.max.ms" => {
                self.message_timestamp_after_max_ms = v.long_at_least(0)?
            }
            "min.insync.replicas" => self.min_insync_replicas = v.int_at_least(1)?,
            "unclean.leader.election.enable" => {
                self.unclean_leader_election_enable = v.boolean()?
            }
            "preallocate" => self.preallocate = v.boolean()?,
            _ => {
                return Err(LogConfigError::UnknownKey {
                    key: key.to_string(),
                });
            }
        }
        Ok(())
    }
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
            "message.timestamp.type" => self.message_timestamp_type.to_string(),
            "message.timestamp.before.max.ms" => self.message_timestamp_before_max_ms.to_string(),
            "message.timestamp.after.max.ms" => self.message_timestamp_after_max_ms.to_string(),
            "min.insync.replicas" => self.min_insync_replicas.to_string(),
            "unclean.leader.election.enable" => self.unclean_leader_election_enable.to_string(),
            "preallocate" => self.preallocate.to_string(),
            _ => return None,
        };
        Some(text)
    }
}

/// One `key=value` being parsed; the helpers name the key in their errors.
struct Value<'a> {
    key: &'a str,
    value: &'a str,
}

impl Value<'_> {
    fn invalid(&self, reason: impl Into<String>) -> LogConfigError {
        LogConfigError::InvalidValue {
            key: self.key.to_string(),
            value: self.value.to_string(),
            reason: reason.into(),
        }
    }

    /// Kafka's range check fails on the parsed value, which its message shows.
    fn below_min(&self, n: i64, min: i64) -> LogConfigError {
        LogConfigError::InvalidValue {
            key: self.key.to_string(),
            value: n.to_string(),
            reason: format!("Value must be at least {min}"),
        }
    }

    fn long_at_least(&self, min: i64) -> Result<i64, LogConfigError> {
        let n: i64 = self
            .value
            .trim()
            .parse()
            .map_err(|_| self.invalid("Not a number of type LONG"))?;
        if n < min {
            return Err(self.below_min(n, min));
        }
        Ok(n)
    }

    fn int_at_least(&self, min: i32) -> Result<i32, LogConfigError> {
        let n: i32 = self
            .value
            .trim()
            .parse()
            .map_err(|_| self.invalid("Not a number of type INT"))?;
        if n < min {
            return Err(self.below_min(i64::from(n), i64::from(min)));
        }
        Ok(n)
    }

    fn boolean(&self) -> Result<bool, LogConfigError> {
        match self.value.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.invalid("Expected value to be either true or false")),
        }
    }

    /// A `LIST` of `compact`/`delete`: the empty value is the empty list (neither policy), as
    /// Kafka 3.9 allows; an empty item is refused.
    fn cleanup_policy(&self) -> Result<CleanupPolicy, LogConfigError> {
        let mut policy = CleanupPolicy {
            delete: false,
            compact: false,
        };
        let trimmed = self.value.trim();
        if trimmed.is_empty() {
            return Ok(policy);
        }
        for item in trimmed.split(',').map(str::trim) {
            match item {
                "delete" => policy.delete = true,
                "compact" => policy.compact = true,
                _ => {
                    return Err(LogConfigError::InvalidValue {
                        key: self.key.to_string(),
                        value: item.to_string(),
                        reason: "String must be one of: compact, delete".into(),
                    });
                }
            }
        }
        Ok(policy)
    }

    fn timestamp_type(&self) -> Result<TimestampType, LogConfigError> {
        match self.value.trim() {
            "CreateTime" => Ok(TimestampType::CreateTime),
            "LogAppendTime" => Ok(TimestampType::LogAppendTime),
            _ => Err(self.invalid("String must be one of: CreateTime, LogAppendTime")),
        }
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
        assert_eq!(c.value_string("compression.type"), None);
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
}
