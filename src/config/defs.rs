//! The table of broker config keys kcli knows: Kafka 3.9's names, the default each has as Kafka
//! writes it (the string `DescribeConfigs` reports), and whether Kafka can change it at runtime
//! (`DynamicBrokerConfig`), which `DescribeConfigs` reports as `read_only = false`. Also the
//! value parsers, which follow Kafka's `ConfigDef.parseType`: the value is trimmed, numbers are
//! base 10 in the type's range, booleans are `true`/`false` in any case.

use crate::storage::log_config_values::{java_double_string, parse_java_double};

/// One broker config key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConfigDef {
    /// Kafka's key, e.g. `log.segment.bytes`.
    pub name: &'static str,
    /// Kafka's default as text; `None` where Kafka's default is `null`.
    pub default: Option<&'static str>,
    /// Kafka can update it without a restart (`DynamicBrokerConfig.AllDynamicConfigs`).
    pub dynamic: bool,
    /// Kafka's `ConfigDef.Type`.
    pub kind: Kind,
}

/// Kafka's `ConfigDef.Type`s that kcli's keys use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Long,
    Short,
    Bool,
    Str,
    List,
    Double,
    /// A secret (`sasl.jaas.config`): described as sensitive, its value never shown.
    Password,
}

const fn def(
    name: &'static str,
    default: Option<&'static str>,
    dynamic: bool,
    kind: Kind,
) -> ConfigDef {
    ConfigDef {
        name,
        default,
        dynamic,
        kind,
    }
}

impl ConfigDef {
    /// A valid value as Kafka's `ConfigDef.convertToString` renders the parsed value (what
    /// `DescribeConfigs` reports): numbers in canonical form, booleans lower case, lists joined
    /// with `,`, strings trimmed. A value that does not parse comes back trimmed.
    pub(crate) fn canonical(&self, value: &str) -> String {
        canonical_value(self.kind, value)
    }
}

/// [`ConfigDef::canonical`] for a value of type `kind` (topic configs use it too).
pub(crate) fn canonical_value(kind: Kind, value: &str) -> String {
    let trimmed = value.trim();
    match kind {
        Kind::Int | Kind::Long | Kind::Short => trimmed
            .parse::<i64>()
            .map_or_else(|_| trimmed.to_string(), |n| n.to_string()),
        Kind::Bool => trimmed.to_ascii_lowercase(),
        Kind::List => list(trimmed).join(","),
        Kind::Str | Kind::Password => trimmed.to_string(),
        Kind::Double => {
            parse_java_double(trimmed).map_or_else(|| trimmed.to_string(), java_double_string)
        }
    }
}

/// `Long.MAX_VALUE`, Kafka's "never" for flush and timestamp bounds.
const LONG_MAX: &str = "9223372036854775807";

/// Every key kcli reads, sorted by name (the order `DescribeConfigs` lists them in).
pub(crate) const CONFIG_DEFS: &[ConfigDef] = &[
    def("advertised.listeners", None, true, Kind::Str),
    def(
        "allow.everyone.if.no.acl.found",
        Some("false"),
        false,
        Kind::Bool,
    ),
    def("authorizer.class.name", Some(""), false, Kind::Str),
    def("auto.create.topics.enable", Some("true"), false, Kind::Bool),
    def(
        "auto.leader.rebalance.enable",
        Some("true"),
        false,
        Kind::Bool,
    ),
    def("broker.id", Some("-1"), false, Kind::Int),
    def(
        "broker.id.generation.enable",
        Some("true"),
        false,
        Kind::Bool,
    ),
    def("broker.rack", None, false, Kind::Str),
    def("compression.gzip.level", Some("-1"), true, Kind::Int),
    def("compression.lz4.level", Some("9"), true, Kind::Int),
    def("compression.type", Some("producer"), true, Kind::Str),
    def("compression.zstd.level", Some("3"), true, Kind::Int),
    def(
        "connection.failed.authentication.delay.ms",
        Some("100"),
        false,
        Kind::Int,
    ),
    def("connections.max.reauth.ms", Some("0"), false, Kind::Long),
    def(
        "controlled.shutdown.enable",
        Some("true"),
        false,
        Kind::Bool,
    ),
    def(
        "controlled.shutdown.max.retries",
        Some("3"),
        false,
        Kind::Int,
    ),
    def(
        "controlled.shutdown.retry.backoff.ms",
        Some("5000"),
        false,
        Kind::Long,
    ),
    def("controller.quota.window.num", Some("11"), false, Kind::Int),
    def(
        "controller.quota.window.size.seconds",
        Some("1"),
        false,
        Kind::Int,
    ),
    def(
        "controller.socket.timeout.ms",
        Some("30000"),
        false,
        Kind::Int,
    ),
    def("default.replication.factor", Some("1"), false, Kind::Int),
    def("delete.topic.enable", Some("true"), false, Kind::Bool),
    def(
        "group.initial.rebalance.delay.ms",
        Some("3000"),
        false,
        Kind::Int,
    ),
    def(
        "group.max.session.timeout.ms",
        Some("1800000"),
        false,
        Kind::Int,
    ),
    def("group.max.size", Some("2147483647"), false, Kind::Int),
    def(
        "group.min.session.timeout.ms",
        Some("6000"),
        false,
        Kind::Int,
    ),
    def("inter.broker.listener.name", None, false, Kind::Str),
    def(
        "inter.broker.protocol.version",
        Some("3.9-IV0"),
        false,
        Kind::Str,
    ),
    def(
        "leader.imbalance.check.interval.seconds",
        Some("300"),
        false,
        Kind::Long,
    ),
    def(
        "leader.imbalance.per.broker.percentage",
        Some("10"),
        false,
        Kind::Int,
    ),
    def(
        "listener.security.protocol.map",
        Some("SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"),
        true,
        Kind::Str,
    ),
    def("listeners", Some("PLAINTEXT://:9092"), true, Kind::Str),
    def("log.cleaner.backoff.ms", Some("15000"), true, Kind::Long),
    def(
        "log.cleaner.dedupe.buffer.size",
        Some("134217728"),
        true,
        Kind::Long,
    ),
    def(
        "log.cleaner.delete.retention.ms",
        Some("86400000"),
        true,
        Kind::Long,
    ),
    def("log.cleaner.enable", Some("true"), false, Kind::Bool),
    def(
        "log.cleaner.io.buffer.load.factor",
        Some("0.9"),
        true,
        Kind::Double,
    ),
    def(
        "log.cleaner.io.buffer.size",
        Some("524288"),
        true,
        Kind::Int,
    ),
    def(
        "log.cleaner.io.max.bytes.per.second",
        Some("1.7976931348623157E308"),
        true,
        Kind::Double,
    ),
    def(
        "log.cleaner.max.compaction.lag.ms",
        Some(LONG_MAX),
        true,
        Kind::Long,
    ),
    def(
        "log.cleaner.min.cleanable.ratio",
        Some("0.5"),
        true,
        Kind::Double,
    ),
    def(
        "log.cleaner.min.compaction.lag.ms",
        Some("0"),
        true,
        Kind::Long,
    ),
    def("log.cleaner.threads", Some("1"), true, Kind::Int),
    def("log.cleanup.policy", Some("delete"), true, Kind::List),
    def("log.dir", Some("/tmp/kafka-logs"), false, Kind::Str),
    def("log.dirs", None, false, Kind::Str),
    def(
        "log.flush.interval.messages",
        Some(LONG_MAX),
        true,
        Kind::Long,
    ),
    def("log.flush.interval.ms", None, true, Kind::Long),
    def(
        "log.flush.scheduler.interval.ms",
        Some(LONG_MAX),
        false,
        Kind::Long,
    ),
    def("log.index.interval.bytes", Some("4096"), true, Kind::Int),
    def(
        "log.index.size.max.bytes",
        Some("10485760"),
        true,
        Kind::Int,
    ),
    def("log.local.retention.bytes", Some("-2"), true, Kind::Long),
    def("log.local.retention.ms", Some("-2"), true, Kind::Long),
    def(
        "log.message.downconversion.enable",
        Some("true"),
        true,
        Kind::Bool,
    ),
    // Not dynamic in Kafka: it would need every broker of the cluster to support the format.
    def(
        "log.message.format.version",
        Some("3.0-IV1"),
        false,
        Kind::Str,
    ),
    def(
        "log.message.timestamp.after.max.ms",
        Some(LONG_MAX),
        true,
        Kind::Long,
    ),
    def(
        "log.message.timestamp.before.max.ms",
        Some(LONG_MAX),
        true,
        Kind::Long,
    ),
    def(
        "log.message.timestamp.difference.max.ms",
        Some(LONG_MAX),
        true,
        Kind::Long,
    ),
    def(
        "log.message.timestamp.type",
        Some("CreateTime"),
        true,
        Kind::Str,
    ),
    def("log.preallocate", Some("false"), true, Kind::Bool),
    def("log.retention.bytes", Some("-1"), true, Kind::Long),
    def(
        "log.retention.check.interval.ms",
        Some("300000"),
        false,
        Kind::Long,
    ),
    def("log.retention.hours", Some("168"), false, Kind::Int),
    def("log.retention.minutes", None, false, Kind::Int),
    def("log.retention.ms", None, true, Kind::Long),
    def("log.roll.hours", Some("168"), false, Kind::Int),
    def("log.roll.jitter.hours", Some("0"), false, Kind::Int),
    def("log.roll.jitter.ms", None, true, Kind::Long),
    def("log.roll.ms", None, true, Kind::Long),
    def("log.segment.bytes", Some("1073741824"), true, Kind::Int),
    def(
        "log.segment.delete.delay.ms",
        Some("60000"),
        true,
        Kind::Long,
    ),
    // Dynamic in Kafka (per broker and per listener); static in kcli, which would otherwise
    // store a change it does not apply.
    def(
        "max.connection.creation.rate",
        Some("2147483647"),
        false,
        Kind::Int,
    ),
    def("max.connections", Some("2147483647"), true, Kind::Int),
    def(
        "max.connections.per.ip",
        Some("2147483647"),
        true,
        Kind::Int,
    ),
    def(
        "max.connections.per.ip.overrides",
        Some(""),
        true,
        Kind::Str,
    ),
    def(
        "max.incremental.fetch.session.cache.slots",
        Some("1000"),
        false,
        Kind::Int,
    ),
    def("message.max.bytes", Some("1048588"), true, Kind::Int),
    def("min.insync.replicas", Some("1"), true, Kind::Int),
    def("num.io.threads", Some("8"), true, Kind::Int),
    def("num.network.threads", Some("3"), true, Kind::Int),
    def("num.partitions", Some("1"), false, Kind::Int),
    def("num.replica.fetchers", Some("1"), true, Kind::Int),
    def("offsets.commit.timeout.ms", Some("5000"), false, Kind::Int),
    def(
        "offsets.load.buffer.size",
        Some("5242880"),
        false,
        Kind::Int,
    ),
    def("offsets.metadata.max.bytes", Some("4096"), false, Kind::Int),
    def(
        "offsets.retention.check.interval.ms",
        Some("600000"),
        false,
        Kind::Long,
    ),
    def("offsets.retention.minutes", Some("10080"), false, Kind::Int),
    def(
        "offsets.topic.compression.codec",
        Some("0"),
        false,
        Kind::Int,
    ),
    def("offsets.topic.num.partitions", Some("50"), false, Kind::Int),
    def(
        "offsets.topic.replication.factor",
        Some("3"),
        false,
        Kind::Short,
    ),
    def(
        "offsets.topic.segment.bytes",
        Some("104857600"),
        false,
        Kind::Int,
    ),
    def(
        "producer.id.expiration.check.interval.ms",
        Some("600000"),
        false,
        Kind::Int,
    ),
    def(
        "producer.id.expiration.ms",
        Some("86400000"),
        true,
        Kind::Int,
    ),
    def("queued.max.request.bytes", Some("-1"), false, Kind::Long),
    def("queued.max.requests", Some("500"), false, Kind::Int),
    def("quota.window.num", Some("11"), false, Kind::Int),
    def("quota.window.size.seconds", Some("1"), false, Kind::Int),
    def("replica.fetch.backoff.ms", Some("1000"), false, Kind::Int),
    def("replica.fetch.max.bytes", Some("1048576"), false, Kind::Int),
    def("replica.fetch.min.bytes", Some("1"), false, Kind::Int),
    def(
        "replica.fetch.response.max.bytes",
        Some("10485760"),
        false,
        Kind::Int,
    ),
    def("replica.fetch.wait.max.ms", Some("500"), false, Kind::Int),
    def(
        "replica.high.watermark.checkpoint.interval.ms",
        Some("5000"),
        false,
        Kind::Long,
    ),
    def("replica.lag.time.max.ms", Some("30000"), false, Kind::Long),
    def("replica.selector.class", None, false, Kind::Str),
    def("replica.socket.timeout.ms", Some("30000"), false, Kind::Int),
    def("replication.quota.window.num", Some("11"), false, Kind::Int),
    def(
        "replication.quota.window.size.seconds",
        Some("1"),
        false,
        Kind::Int,
    ),
    def("request.timeout.ms", Some("30000"), false, Kind::Int),
    def("reserved.broker.max.id", Some("1000"), false, Kind::Int),
    def("sasl.enabled.mechanisms", Some("GSSAPI"), false, Kind::List),
    def("sasl.jaas.config", None, false, Kind::Password),
    def(
        "sasl.mechanism.inter.broker.protocol",
        Some("GSSAPI"),
        false,
        Kind::Str,
    ),
    def(
        "sasl.server.max.receive.size",
        Some("524288"),
        false,
        Kind::Int,
    ),
    def(
        "security.inter.broker.protocol",
        Some("PLAINTEXT"),
        false,
        Kind::Str,
    ),
    def(
        "socket.request.max.bytes",
        Some("104857600"),
        false,
        Kind::Int,
    ),
    // Transactions are not supported; the keys are known, with Kafka's defaults, so configs
    // written for Kafka load and DescribeConfigs reports them.
    def("super.users", None, false, Kind::Str),
    def(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        Some("10000"),
        false,
        Kind::Int,
    ),
    def(
        "transaction.max.timeout.ms",
        Some("900000"),
        false,
        Kind::Int,
    ),
    def(
        "transaction.partition.verification.enable",
        Some("true"),
        true,
        Kind::Bool,
    ),
    def(
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        Some("3600000"),
        false,
        Kind::Int,
    ),
    def(
        "transaction.state.log.load.buffer.size",
        Some("5242880"),
        false,
        Kind::Int,
    ),
    def("transaction.state.log.min.isr", Some("2"), false, Kind::Int),
    def(
        "transaction.state.log.num.partitions",
        Some("50"),
        false,
        Kind::Int,
    ),
    def(
        "transaction.state.log.replication.factor",
        Some("3"),
        false,
        Kind::Short,
    ),
    def(
        "transaction.state.log.segment.bytes",
        Some("104857600"),
        false,
        Kind::Int,
    ),
    def(
        "transactional.id.expiration.ms",
        Some("604800000"),
        false,
        Kind::Int,
    ),
    def(
        "unclean.leader.election.enable",
        Some("false"),
        true,
        Kind::Bool,
    ),
    def("zookeeper.connect", None, false, Kind::Str),
    def("zookeeper.connection.timeout.ms", None, false, Kind::Int),
    def(
        "zookeeper.max.in.flight.requests",
        Some("10"),
        false,
        Kind::Int,
    ),
    def(
        "zookeeper.session.timeout.ms",
        Some("18000"),
        false,
        Kind::Int,
    ),
];

/// The definition of `name`, if kcli knows the key.
pub(crate) fn find(name: &str) -> Option<&'static ConfigDef> {
    CONFIG_DEFS
        .binary_search_by(|d| d.name.cmp(name))
        .ok()
        .and_then(|i| CONFIG_DEFS.get(i))
}

/// A value that failed to parse: why, in Kafka's words where it has them.
pub(crate) type Reason = String;

/// `ConfigDef.Type.INT` with `Range.atLeast(min)` (use `i32::MIN` for no bound).
pub(crate) fn int_at_least(value: &str, min: i32) -> Result<i32, Reason> {
    let n: i32 = value
        .trim()
        .parse()
        .map_err(|_| "not a number of type INT".to_string())?;
    if n < min {
        return Err(format!("Value must be at least {min}"));
    }
    Ok(n)
}

/// `ConfigDef.Type.LONG` with `Range.atLeast(min)` (use `i64::MIN` for no bound).
pub(crate) fn long_at_least(value: &str, min: i64) -> Result<i64, Reason> {
    let n: i64 = value
        .trim()
        .parse()
        .map_err(|_| "not a number of type LONG".to_string())?;
    if n < min {
        return Err(format!("Value must be at least {min}"));
    }
    Ok(n)
}

/// `ConfigDef.Type.SHORT` with `Range.atLeast(min)`.
pub(crate) fn short_at_least(value: &str, min: i16) -> Result<i16, Reason> {
    let n: i16 = value
        .trim()
        .parse()
        .map_err(|_| "not a number of type SHORT".to_string())?;
    if n < min {
        return Err(format!("Value must be at least {min}"));
    }
    Ok(n)
}

/// `ConfigDef.Type.BOOLEAN`: `true` or `false`, any case.
pub(crate) fn boolean(value: &str) -> Result<bool, Reason> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err("Expected value to be either true or false".to_string()),
    }
}

/// `ConfigDef.Type.STRING`: trimmed.
pub(crate) fn string(value: &str) -> String {
    value.trim().to_string()
}

/// `ConfigDef.Type.LIST`: comma-separated, items trimmed, an empty value is the empty list.
pub(crate) fn list(value: &str) -> Vec<String> {
    let value = value.trim();
    if value.is_empty() {
        return Vec::new();
    }
    value.split(',').map(|s| s.trim().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique_so_lookups_work() {
        for pair in CONFIG_DEFS.windows(2) {
            assert!(
                pair[0].name < pair[1].name,
                "{} / {}",
                pair[0].name,
                pair[1].name
            );
        }
        for d in CONFIG_DEFS {
            assert_eq!(find(d.name), Some(d));
        }
        assert_eq!(find("no.such.key"), None);
    }

    #[test]
    fn canonical_values_are_kafkas_rendering() {
        let c = |name: &str, v: &str| find(name).unwrap().canonical(v);
        assert_eq!(c("num.io.threads", " +007 "), "7");
        assert_eq!(c("log.retention.ms", "-01"), "-1");
        assert_eq!(c("log.preallocate", "TRUE"), "true");
        assert_eq!(
            c("log.cleanup.policy", " compact ,  delete "),
            "compact,delete"
        );
        assert_eq!(c("log.dirs", " /a, /b "), "/a, /b");
        assert_eq!(c("log.cleaner.min.cleanable.ratio", " 0.50"), "0.5");
        assert_eq!(c("log.cleaner.min.cleanable.ratio", "1"), "1.0");
    }

    #[test]
    fn parsers_follow_config_def() {
        assert_eq!(int_at_least(" 42 ", 1), Ok(42));
        assert!(int_at_least("0", 1).unwrap_err().contains("at least 1"));
        assert!(int_at_least("2147483648", 0).is_err());
        assert!(int_at_least("1.5", 0).is_err());
        assert_eq!(long_at_least("-1", i64::MIN), Ok(-1));
        assert_eq!(short_at_least("3", 1), Ok(3));
        assert!(short_at_least("40000", 1).is_err());
        assert_eq!(boolean("TRUE"), Ok(true));
        assert_eq!(boolean(" false"), Ok(false));
        assert!(boolean("yes").is_err());
        assert_eq!(list(" a , b,c "), vec!["a", "b", "c"]);
        assert!(list("  ").is_empty());
        assert_eq!(string("  x "), "x");
    }
}
