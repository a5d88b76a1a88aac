//! The table of broker config keys kcli knows: Kafka 3.9's names, the default each has as Kafka
//! writes it (the string `DescribeConfigs` reports), and whether Kafka can change it at runtime
//! (`DynamicBrokerConfig`), which `DescribeConfigs` reports as `read_only = false`. Also the
//! value parsers, which follow Kafka's `ConfigDef.parseType`: the value is trimmed, numbers are
//! base 10 in the type's range, booleans are `true`/`false` in any case.

/// One broker config key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigDef {
    /// Kafka's key, e.g. `log.segment.bytes`.
    pub name: &'static str,
    /// Kafka's default as text; `None` where Kafka's default is `null`.
    pub default: Option<&'static str>,
    /// Kafka can update it without a restart (`DynamicBrokerConfig.AllDynamicConfigs`).
    pub dynamic: bool,
}

const fn def(name: &'static str, default: Option<&'static str>, dynamic: bool) -> ConfigDef {
    ConfigDef {
        name,
        default,
        dynamic,
    }
}

/// `Long.MAX_VALUE`, Kafka's "never" for flush and timestamp bounds.
const LONG_MAX: &str = "9223372036854775807";

/// Every key kcli reads, sorted by name (the order `DescribeConfigs` lists them in).
pub const CONFIG_DEFS: &[ConfigDef] = &[
    def("advertised.listeners", None, true),
    def("auto.create.topics.enable", Some("true"), false),
    def("broker.id", Some("-1"), false),
    def("broker.id.generation.enable", Some("true"), false),
    def("default.replication.factor", Some("1"), false),
    def("delete.topic.enable", Some("true"), false),
    def("group.initial.rebalance.delay.ms", Some("3000"), false),
    def("listeners", Some("PLAINTEXT://:9092"), true),
    def("log.cleaner.delete.retention.ms", Some("86400000"), true),
    def("log.cleanup.policy", Some("delete"), true),
    def("log.dir", Some("/tmp/kafka-logs"), false),
    def("log.dirs", None, false),
    def("log.flush.interval.messages", Some(LONG_MAX), true),
    def("log.flush.interval.ms", None, true),
    def("log.flush.scheduler.interval.ms", Some(LONG_MAX), false),
    def("log.index.interval.bytes", Some("4096"), true),
    def("log.index.size.max.bytes", Some("10485760"), true),
    def("log.message.timestamp.after.max.ms", Some(LONG_MAX), true),
    def("log.message.timestamp.before.max.ms", Some(LONG_MAX), true),
    def("log.message.timestamp.type", Some("CreateTime"), true),
    def("log.preallocate", Some("false"), true),
    def("log.retention.bytes", Some("-1"), true),
    def("log.retention.check.interval.ms", Some("300000"), false),
    def("log.retention.hours", Some("168"), false),
    def("log.retention.minutes", None, false),
    def("log.retention.ms", None, true),
    def("log.roll.hours", Some("168"), false),
    def("log.roll.jitter.hours", Some("0"), false),
    def("log.roll.jitter.ms", None, true),
    def("log.roll.ms", None, true),
    def("log.segment.bytes", Some("1073741824"), true),
    def("log.segment.delete.delay.ms", Some("60000"), true),
    def("message.max.bytes", Some("1048588"), true),
    def("min.insync.replicas", Some("1"), true),
    def("num.io.threads", Some("8"), true),
    def("num.network.threads", Some("3"), true),
    def("num.partitions", Some("1"), false),
    def("offsets.topic.num.partitions", Some("50"), false),
    def("offsets.topic.replication.factor", Some("3"), false),
    def("queued.max.requests", Some("500"), false),
    def("replica.lag.time.max.ms", Some("30000"), false),
    def("reserved.broker.max.id", Some("1000"), false),
    def("socket.request.max.bytes", Some("104857600"), false),
    def("unclean.leader.election.enable", Some("false"), true),
    def("zookeeper.connect", None, false),
    def("zookeeper.session.timeout.ms", Some("18000"), false),
];

/// The definition of `name`, if kcli knows the key.
pub fn find(name: &str) -> Option<&'static ConfigDef> {
    CONFIG_DEFS
        .binary_search_by(|d| d.name.cmp(name))
        .ok()
        .and_then(|i| CONFIG_DEFS.get(i))
}

/// A value that failed to parse: why, in Kafka's words where it has them.
pub type Reason = String;

/// `ConfigDef.Type.INT` with `Range.atLeast(min)` (use `i32::MIN` for no bound).
pub fn int_at_least(value: &str, min: i32) -> Result<i32, Reason> {
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
pub fn long_at_least(value: &str, min: i64) -> Result<i64, Reason> {
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
pub fn short_at_least(value: &str, min: i16) -> Result<i16, Reason> {
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
pub fn boolean(value: &str) -> Result<bool, Reason> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err("Expected value to be either true or false".to_string()),
    }
}

/// `ConfigDef.Type.STRING`: trimmed.
pub fn string(value: &str) -> String {
    value.trim().to_string()
}

/// `ConfigDef.Type.LIST`: comma-separated, items trimmed, an empty value is the empty list.
pub fn list(value: &str) -> Vec<String> {
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
