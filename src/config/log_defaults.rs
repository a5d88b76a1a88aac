//! The topic defaults the broker's settings give (Kafka's `KafkaConfig.extractLogConfigMap`)
//! and the checks Kafka makes of them beyond single values: at startup
//! (`LogConfig.validateBrokerLogConfigValues`) and on dynamic updates
//! (`DynamicLogConfig.validateReconfiguration`).

use crate::config::ConfigError;
use crate::config::broker_config::Settings;
use crate::storage::log_cleaner::CleanerConfig;
use crate::storage::log_config::LogConfig;
use crate::storage::log_config_values::DEFAULT_MESSAGE_FORMAT_VERSION;

impl Settings {
    /// The log cleaner's settings (Kafka's `LogCleaner.cleanerConfig`).
    pub fn cleaner_config(&self) -> CleanerConfig {
        CleanerConfig {
            enable_cleaner: self.log_cleaner_enable,
            num_threads: usize::try_from(self.log_cleaner_threads).unwrap_or(0),
            dedupe_buffer_size: self.log_cleaner_dedupe_buffer_size,
            dedupe_buffer_load_factor: self.log_cleaner_io_buffer_load_factor,
            io_buffer_size: usize::try_from(self.log_cleaner_io_buffer_size).unwrap_or(0),
            max_io_bytes_per_second: self.log_cleaner_io_max_bytes_per_second,
            backoff_ms: u64::try_from(self.log_cleaner_backoff_ms).unwrap_or(0),
        }
    }

    /// Kafka's `LogConfig.validateBrokerLogConfigValues`, which the broker runs once at startup
    /// (a dynamic update is not checked against it, as in Kafka; topics created then are).
    pub fn validate_log_defaults(&self) -> Result<(), ConfigError> {
        let (min, max) = (
            self.log_cleaner_min_compaction_lag_ms,
            self.log_cleaner_max_compaction_lag_ms,
        );
        if min > max {
            return Err(ConfigError::InvalidValue {
                key: "log.cleaner.min.compaction.lag.ms".into(),
                value: min.to_string(),
                reason: format!(
                    "conflict topic config setting min.compaction.lag.ms ({min}) > \
                     max.compaction.lag.ms ({max})"
                ),
            });
        }
        Ok(())
    }

    /// Kafka's `DynamicLogConfig.validateReconfiguration`: a dynamic local retention must fit
    /// inside the retention (checked even without remote storage, as Kafka does).
    pub fn validate_local_retention(&self) -> Result<(), ConfigError> {
        let checks = [
            (
                "log.local.retention.ms",
                self.log_local_retention_ms,
                "log.retention.ms",
                self.log_retention_time_millis(),
                self.log_retention_time_millis() != -1,
            ),
            (
                "log.local.retention.bytes",
                self.log_local_retention_bytes,
                "log.retention.bytes",
                self.log_retention_bytes,
                self.log_retention_bytes > -1,
            ),
        ];
        for (key, local, total_key, total, bounded) in checks {
            let reason = if !bounded || local == -2 {
                continue;
            } else if local == -1 {
                format!("Value must not be -1 as {total_key} value is set as {total}.")
            } else if local > total {
                format!("Value must not be more than {total_key} property value: {total}")
            } else {
                continue;
            };
            return Err(ConfigError::InvalidValue {
                key: key.into(),
                value: local.to_string(),
                reason,
            });
        }
        Ok(())
    }

    /// The topic defaults these settings give: each topic key takes its broker synonym
    /// (Kafka's `ServerTopicConfigSynonyms`, highest-priority synonym first, as
    /// `LogConfig.extractLogConfigMap`), so a topic's own overrides apply on top.
    pub fn log_config(&self) -> LogConfig {
        // Kafka's `logMessageTimestampBeforeMaxMs` / `AfterMaxMs`: the deprecated difference
        // stands in for a direction left at its default.
        let or_difference = |ms: i64| {
            if ms == i64::MAX {
                self.log_message_timestamp_difference_max_ms
            } else {
                ms
            }
        };
        LogConfig {
            segment_bytes: self.log_segment_bytes,
            segment_ms: self.log_roll_time_millis(),
            segment_jitter_ms: self.log_roll_time_jitter_millis(),
            segment_index_bytes: self.log_index_size_max_bytes,
            index_interval_bytes: self.log_index_interval_bytes,
            flush_messages: self.log_flush_interval_messages,
            flush_ms: self.log_flush_interval_millis(),
            retention_bytes: self.log_retention_bytes,
            retention_ms: self.log_retention_time_millis(),
            max_message_bytes: self.message_max_bytes,
            file_delete_delay_ms: self.log_segment_delete_delay_ms,
            delete_retention_ms: self.log_cleaner_delete_retention_ms,
            min_compaction_lag_ms: self.log_cleaner_min_compaction_lag_ms,
            max_compaction_lag_ms: self.log_cleaner_max_compaction_lag_ms,
            min_cleanable_dirty_ratio: self.log_cleaner_min_cleanable_ratio,
            cleanup_policy: self.log_cleanup_policy,
            compression_type: self.compression_type,
            compression_gzip_level: self.compression_gzip_level,
            compression_lz4_level: self.compression_lz4_level,
            compression_zstd_level: self.compression_zstd_level,
            // With an inter-broker protocol of 3.0 or later (kcli speaks 3.9's) Kafka hands
            // topics the 3.0 format whatever `log.message.format.version` says.
            message_format_version: DEFAULT_MESSAGE_FORMAT_VERSION.to_string(),
            message_timestamp_type: self.log_message_timestamp_type,
            message_timestamp_difference_max_ms: self.log_message_timestamp_difference_max_ms,
            message_timestamp_before_max_ms: or_difference(
                self.log_message_timestamp_before_max_ms,
            ),
            message_timestamp_after_max_ms: or_difference(self.log_message_timestamp_after_max_ms),
            message_downconversion_enable: self.log_message_downconversion_enable,
            // The throttled replica lists and the remote-log switches have no broker default.
            leader_replication_throttled_replicas: Vec::new(),
            follower_replication_throttled_replicas: Vec::new(),
            min_insync_replicas: self.min_insync_replicas,
            unclean_leader_election_enable: self.unclean_leader_election_enable,
            preallocate: self.log_preallocate,
            remote_storage_enable: false,
            local_retention_ms: self.log_local_retention_ms,
            local_retention_bytes: self.log_local_retention_bytes,
            remote_log_copy_disable: false,
            remote_log_delete_on_disable: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::batch::TimestampType;
    use crate::storage::log_config::CleanupPolicy;

    const MS_PER_MINUTE: i64 = 60 * 1000;
    const MS_PER_HOUR: i64 = 60 * MS_PER_MINUTE;

    fn with(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        let mut s = Settings::default();
        for (k, v) in pairs {
            assert!(s.set(k, v)?, "unknown key {k}");
        }
        s.validate()?;
        Ok(s)
    }

    #[test]
    fn log_config_maps_kafkas_synonyms() {
        assert_eq!(Settings::default().log_config(), LogConfig::default());
        let s = with(&[
            ("log.segment.bytes", "1048576"),
            ("log.roll.hours", "2"),
            ("log.roll.jitter.ms", "10"),
            ("log.index.size.max.bytes", "4096"),
            ("log.index.interval.bytes", "100"),
            ("log.flush.interval.messages", "5"),
            ("log.flush.scheduler.interval.ms", "2000"),
            ("log.retention.bytes", "123"),
            ("log.retention.minutes", "10"),
            ("message.max.bytes", "2000000"),
            ("log.segment.delete.delay.ms", "0"),
            ("log.cleaner.delete.retention.ms", "1"),
            ("log.cleanup.policy", "compact, delete"),
            ("log.message.timestamp.type", "LogAppendTime"),
            ("log.message.timestamp.before.max.ms", "11"),
            ("log.message.timestamp.after.max.ms", "12"),
            ("min.insync.replicas", "2"),
            ("unclean.leader.election.enable", "TRUE"),
            ("log.preallocate", "true"),
            ("log.cleaner.min.compaction.lag.ms", "7"),
            ("log.cleaner.max.compaction.lag.ms", "8"),
            ("log.cleaner.min.cleanable.ratio", "0.75"),
            ("compression.gzip.level", "5"),
            ("compression.lz4.level", "4"),
            ("compression.zstd.level", "-3"),
            ("log.message.format.version", "2.8"),
            ("log.message.timestamp.difference.max.ms", "13"),
            ("log.message.downconversion.enable", "false"),
            ("log.local.retention.ms", "-1"),
            ("log.local.retention.bytes", "100"),
        ])
        .unwrap();
        let want = LogConfig {
            segment_bytes: 1_048_576,
            segment_ms: 2 * MS_PER_HOUR,
            segment_jitter_ms: 10,
            segment_index_bytes: 4096,
            index_interval_bytes: 100,
            flush_messages: 5,
            flush_ms: 2000,
            retention_bytes: 123,
            retention_ms: 10 * MS_PER_MINUTE,
            max_message_bytes: 2_000_000,
            file_delete_delay_ms: 0,
            delete_retention_ms: 1,
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: true,
            },
            min_compaction_lag_ms: 7,
            max_compaction_lag_ms: 8,
            min_cleanable_dirty_ratio: 0.75,
            compression_gzip_level: 5,
            compression_lz4_level: 4,
            compression_zstd_level: -3,
            message_timestamp_type: TimestampType::LogAppendTime,
            message_timestamp_difference_max_ms: 13,
            message_timestamp_before_max_ms: 11,
            message_timestamp_after_max_ms: 12,
            message_downconversion_enable: false,
            min_insync_replicas: 2,
            unclean_leader_election_enable: true,
            preallocate: true,
            local_retention_ms: -1,
            local_retention_bytes: 100,
            // Ignored, as by Kafka 3.x.
            message_format_version: "3.0-IV1".into(),
            ..LogConfig::default()
        };
        assert_eq!(s.log_config(), want);
        // log.flush.interval.ms wins over the scheduler interval; topic overrides apply on top.
        let s = with(&[
            ("log.flush.interval.ms", "3"),
            ("log.flush.scheduler.interval.ms", "2000"),
        ])
        .unwrap();
        let mut topic = std::collections::BTreeMap::new();
        topic.insert("segment.bytes".to_string(), "4096".to_string());
        let c = s.log_config().with_overrides(&topic).unwrap();
        assert_eq!((c.flush_ms, c.segment_bytes), (3, 4096));
        // The deprecated difference fills in the directions left at their default.
        let s = with(&[
            ("log.message.timestamp.difference.max.ms", "5"),
            ("log.message.timestamp.after.max.ms", "6"),
        ])
        .unwrap();
        let c = s.log_config();
        assert_eq!(
            (
                c.message_timestamp_before_max_ms,
                c.message_timestamp_after_max_ms
            ),
            (5, 6)
        );
    }

    #[test]
    fn log_defaults_are_checked_as_kafka() {
        let err = with(&[
            ("log.cleaner.min.compaction.lag.ms", "9"),
            ("log.cleaner.max.compaction.lag.ms", "8"),
        ])
        .unwrap()
        .validate_log_defaults()
        .unwrap_err();
        assert!(
            err.to_string().contains(
                "conflict topic config setting min.compaction.lag.ms (9) > max.compaction.lag.ms (8)"
            ),
            "{err}"
        );
        let local = |pairs: &[(&str, &str)]| {
            with(pairs)
                .unwrap()
                .validate_local_retention()
                .map_err(|e| e.to_string())
        };
        assert_eq!(local(&[("log.local.retention.ms", "1000")]), Ok(()));
        assert!(
            local(&[("log.local.retention.ms", "-1")])
                .unwrap_err()
                .contains("Value must not be -1 as log.retention.ms value is set as 604800000.")
        );
        assert!(
            local(&[
                ("log.retention.bytes", "10"),
                ("log.local.retention.bytes", "11")
            ])
            .unwrap_err()
            .contains("Value must not be more than log.retention.bytes property value: 10")
        );
        // Unbounded retention bounds nothing.
        assert_eq!(local(&[("log.local.retention.bytes", "-1")]), Ok(()));
        // Every codec is a target the topics inherit, with the broker's levels; names are
        // case-sensitive, as Kafka's `ValidString`.
        let s = with(&[
            ("compression.type", "zstd"),
            ("compression.zstd.level", "7"),
        ])
        .unwrap();
        let target = s.log_config().target_compression().unwrap();
        assert_eq!((target.codec.name(), target.level), ("zstd", 7));
        assert!(with(&[("compression.type", "uncompressed")]).is_ok());
        assert!(with(&[("compression.type", "Gzip")]).is_err());
    }
}
