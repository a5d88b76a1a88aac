//! Kafka's config synonyms: the broker keys that set the same value under different names
//! (`DynamicBrokerConfig.brokerConfigSynonyms`: `log.roll.ms` and `log.roll.hours`, ...), and
//! the broker keys each topic config takes its default from (`ServerTopicConfigSynonyms`), for
//! every topic config of Kafka 3.9. `DescribeConfigs` lists synonyms in this order, highest
//! precedence first; dynamic broker updates remove a key's synonyms from the layers below so
//! that the updated one wins.

use super::defs::Kind;

/// One topic config: Kafka's type for it and its broker synonyms, highest precedence first
/// (the first is Kafka's `TOPIC_CONFIG_SYNONYMS` entry). A few have none
/// (`LogConfig.CONFIGS_WITH_NO_SERVER_DEFAULTS`): the throttled replica lists and the
/// remote-log switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TopicConfigDef {
    pub name: &'static str,
    pub kind: Kind,
    pub synonyms: &'static [&'static str],
}

const fn topic(
    name: &'static str,
    kind: Kind,
    synonyms: &'static [&'static str],
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        kind,
        synonyms,
    }
}

/// Every topic config, sorted by name: the names of `LogConfig::set` (a test checks it).
pub(crate) const TOPIC_CONFIGS: &[TopicConfigDef] = &[
    topic("cleanup.policy", Kind::List, &["log.cleanup.policy"]),
    topic(
        "compression.gzip.level",
        Kind::Int,
        &["compression.gzip.level"],
    ),
    topic(
        "compression.lz4.level",
        Kind::Int,
        &["compression.lz4.level"],
    ),
    topic("compression.type", Kind::Str, &["compression.type"]),
    topic(
        "compression.zstd.level",
        Kind::Int,
        &["compression.zstd.level"],
    ),
    topic(
        "delete.retention.ms",
        Kind::Long,
        &["log.cleaner.delete.retention.ms"],
    ),
    topic(
        "file.delete.delay.ms",
        Kind::Long,
        &["log.segment.delete.delay.ms"],
    ),
    topic(
        "flush.messages",
        Kind::Long,
        &["log.flush.interval.messages"],
    ),
    topic(
        "flush.ms",
        Kind::Long,
        &["log.flush.interval.ms", "log.flush.scheduler.interval.ms"],
    ),
    topic("follower.replication.throttled.replicas", Kind::List, &[]),
    topic(
        "index.interval.bytes",
        Kind::Int,
        &["log.index.interval.bytes"],
    ),
    topic("leader.replication.throttled.replicas", Kind::List, &[]),
    topic(
        "local.retention.bytes",
        Kind::Long,
        &["log.local.retention.bytes"],
    ),
    topic(
        "local.retention.ms",
        Kind::Long,
        &["log.local.retention.ms"],
    ),
    topic(
        "max.compaction.lag.ms",
        Kind::Long,
        &["log.cleaner.max.compaction.lag.ms"],
    ),
    topic("max.message.bytes", Kind::Int, &["message.max.bytes"]),
    topic(
        "message.downconversion.enable",
        Kind::Bool,
        &["log.message.downconversion.enable"],
    ),
    topic(
        "message.format.version",
        Kind::Str,
        &["log.message.format.version"],
    ),
    topic(
        "message.timestamp.after.max.ms",
        Kind::Long,
        &["log.message.timestamp.after.max.ms"],
    ),
    topic(
        "message.timestamp.before.max.ms",
        Kind::Long,
        &["log.message.timestamp.before.max.ms"],
    ),
    topic(
        "message.timestamp.difference.max.ms",
        Kind::Long,
        &["log.message.timestamp.difference.max.ms"],
    ),
    topic(
        "message.timestamp.type",
        Kind::Str,
        &["log.message.timestamp.type"],
    ),
    topic(
        "min.cleanable.dirty.ratio",
        Kind::Double,
        &["log.cleaner.min.cleanable.ratio"],
    ),
    topic(
        "min.compaction.lag.ms",
        Kind::Long,
        &["log.cleaner.min.compaction.lag.ms"],
    ),
    topic("min.insync.replicas", Kind::Int, &["min.insync.replicas"]),
    topic("preallocate", Kind::Bool, &["log.preallocate"]),
    topic("remote.log.copy.disable", Kind::Bool, &[]),
    topic("remote.log.delete.on.disable", Kind::Bool, &[]),
    topic("remote.storage.enable", Kind::Bool, &[]),
    topic("retention.bytes", Kind::Long, &["log.retention.bytes"]),
    topic(
        "retention.ms",
        Kind::Long,
        &[
            "log.retention.ms",
            "log.retention.minutes",
            "log.retention.hours",
        ],
    ),
    topic("segment.bytes", Kind::Int, &["log.segment.bytes"]),
    topic(
        "segment.index.bytes",
        Kind::Int,
        &["log.index.size.max.bytes"],
    ),
    topic(
        "segment.jitter.ms",
        Kind::Long,
        &["log.roll.jitter.ms", "log.roll.jitter.hours"],
    ),
    topic("segment.ms", Kind::Long, &["log.roll.ms", "log.roll.hours"]),
    topic(
        "unclean.leader.election.enable",
        Kind::Bool,
        &["unclean.leader.election.enable"],
    ),
];

/// The definition of topic config `name`, if it is one.
pub(crate) fn topic_config(name: &str) -> Option<&'static TopicConfigDef> {
    TOPIC_CONFIGS
        .binary_search_by(|d| d.name.cmp(name))
        .ok()
        .and_then(|i| TOPIC_CONFIGS.get(i))
}

/// Kafka's `brokerConfigSynonyms`: the keys that give the value of broker config `name`,
/// highest precedence first (`name` alone for most). With `match_listener_override`, a
/// `listener.name.<listener>.<config>` key also names its base `<config>`.
pub(crate) fn broker_config_synonyms(name: &str, match_listener_override: bool) -> Vec<&str> {
    const ROLL: &[&str] = &["log.roll.ms", "log.roll.hours"];
    const JITTER: &[&str] = &["log.roll.jitter.ms", "log.roll.jitter.hours"];
    const FLUSH: &[&str] = &["log.flush.interval.ms", "log.flush.scheduler.interval.ms"];
    const RETENTION: &[&str] = &[
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
    ];
    match name {
        "log.roll.ms" | "log.roll.hours" => ROLL.to_vec(),
        "log.roll.jitter.ms" | "log.roll.jitter.hours" => JITTER.to_vec(),
        // Only the interval key has the scheduler interval as its default, not the reverse.
        "log.flush.interval.ms" => FLUSH.to_vec(),
        "log.retention.ms" | "log.retention.minutes" | "log.retention.hours" => RETENTION.to_vec(),
        _ => match listener_base_name(name) {
            Some(base) if match_listener_override => vec![name, base],
            _ => vec![name],
        },
    }
}

/// The `<config>` of `listener.name.<listener>.<config>` (Kafka's `ListenerConfigRegex`).
fn listener_base_name(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("listener.name.")?;
    let (_, base) = rest.split_once('.')?;
    Some(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::defs;

    #[test]
    fn topic_table_is_sorted_and_its_synonyms_are_broker_keys() {
        for pair in TOPIC_CONFIGS.windows(2) {
            assert!(pair[0].name < pair[1].name, "{}", pair[1].name);
        }
        for t in TOPIC_CONFIGS {
            assert_eq!(topic_config(t.name), Some(t));
            for s in t.synonyms {
                assert!(defs::find(s).is_some(), "{} -> {s}", t.name);
            }
            // The primary synonym's own synonyms are the topic's list (what Kafka's
            // `ConfigHelper` walks when it describes a topic config).
            if let Some(primary) = t.synonyms.first() {
                assert_eq!(broker_config_synonyms(primary, true), t.synonyms);
            }
        }
        let names: Vec<&str> = TOPIC_CONFIGS.iter().map(|t| t.name).collect();
        assert_eq!(names, crate::storage::log_config::TOPIC_CONFIG_NAMES);
        assert_eq!(topic_config("no.such.config"), None);
    }

    #[test]
    fn every_topic_config_is_one_log_config_implements() {
        let defaults = crate::storage::log_config::LogConfig::default();
        for t in TOPIC_CONFIGS {
            let value = defaults.value_string(t.name);
            assert!(value.is_some(), "{}", t.name);
            let mut c = defaults.clone();
            let set = c.set(t.name, value.as_deref().unwrap_or_default());
            assert!(set.is_ok(), "{}: {set:?}", t.name);
            assert_eq!(c, defaults, "{}", t.name);
        }
    }

    #[test]
    fn broker_synonyms_are_kafkas() {
        assert_eq!(
            broker_config_synonyms("log.retention.hours", false),
            [
                "log.retention.ms",
                "log.retention.minutes",
                "log.retention.hours"
            ]
        );
        assert_eq!(
            broker_config_synonyms("log.flush.scheduler.interval.ms", true),
            ["log.flush.scheduler.interval.ms"]
        );
        assert_eq!(
            broker_config_synonyms("listener.name.internal.ssl.key.password", true),
            [
                "listener.name.internal.ssl.key.password",
                "ssl.key.password"
            ]
        );
        assert_eq!(
            broker_config_synonyms("listener.name.internal.ssl.key.password", false),
            ["listener.name.internal.ssl.key.password"]
        );
        assert_eq!(
            broker_config_synonyms("num.io.threads", true),
            ["num.io.threads"]
        );
    }
}
