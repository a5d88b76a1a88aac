//! The value types and validators of Kafka 3.9's topic configs beyond plain numbers and
//! booleans: the broker compression types, the compression level ranges, message format
//! (metadata) version strings, `DOUBLE` values as Java parses and prints them, and throttled
//! replica lists. The broker's own keys (`compression.type`, `log.cleaner.min.cleanable.ratio`,
//! ...) share them, so both levels accept and refuse the same values.
//!
//! Reasons are worded as Kafka's validators word them; callers wrap them with the key and the
//! value (`Invalid value x for configuration k: reason`), as `Value` does for topic keys.

use std::fmt;

use crate::protocol::record::batch::TimestampType;

use super::log_config::{CleanupPolicy, LogConfigError};

/// `BrokerCompressionType`: what `compression.type` names. `Producer` keeps the producer's
/// codec; the others are a codec the broker re-compresses batches to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerCompressionType {
    Uncompressed,
    Zstd,
    Lz4,
    Snappy,
    Gzip,
    Producer,
}

impl BrokerCompressionType {
    /// Kafka's declaration order, which its "String must be one of" message lists.
    const ALL: [BrokerCompressionType; 6] = [
        BrokerCompressionType::Uncompressed,
        BrokerCompressionType::Zstd,
        BrokerCompressionType::Lz4,
        BrokerCompressionType::Snappy,
        BrokerCompressionType::Gzip,
        BrokerCompressionType::Producer,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BrokerCompressionType::Uncompressed => "uncompressed",
            BrokerCompressionType::Zstd => "zstd",
            BrokerCompressionType::Lz4 => "lz4",
            BrokerCompressionType::Snappy => "snappy",
            BrokerCompressionType::Gzip => "gzip",
            BrokerCompressionType::Producer => "producer",
        }
    }

    /// `ValidString.in(names)`: the trimmed value must be one of the names, case and all.
    pub fn parse(value: &str) -> Result<Self, String> {
        let value = value.trim();
        Self::ALL
            .into_iter()
            .find(|t| t.name() == value)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|t| t.name()).collect();
                format!("String must be one of: {}", names.join(", "))
            })
    }
}

impl fmt::Display for BrokerCompressionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `compression.gzip.level`'s default: `Deflater.DEFAULT_COMPRESSION`.
pub(crate) const GZIP_DEFAULT_LEVEL: i32 = -1;
/// `compression.lz4.level`'s default and range (lz4-java's `LZ4Constants`).
pub(crate) const LZ4_DEFAULT_LEVEL: i32 = 9;
pub(crate) const LZ4_LEVELS: (i32, i32) = (1, 17);
/// `compression.zstd.level`'s default and range (`ZSTD_CLEVEL_DEFAULT`, `ZSTD_minCLevel`,
/// `ZSTD_MAX_CLEVEL`).
pub(crate) const ZSTD_DEFAULT_LEVEL: i32 = 3;
pub(crate) const ZSTD_LEVELS: (i32, i32) = (-131_072, 22);

/// `CompressionType.GZIP.levelValidator()`: 1 to 9, or -1 for zlib's default.
pub(crate) fn check_gzip_level(level: i32) -> Result<(), String> {
    if level > 9 || (level < 1 && level != GZIP_DEFAULT_LEVEL) {
        return Err(format!(
            "Value must be between 1 and 9 or equal to {GZIP_DEFAULT_LEVEL}"
        ));
    }
    Ok(())
}

/// `Range.between(min, max)` on a number, with Kafka's two messages. A NaN passes, as in Java,
/// where every comparison with it is false.
pub(crate) fn check_between(n: f64, min: i64, max: i64) -> Result<(), String> {
    // The bounds kcli uses are small integers, exactly representable as f64.
    let (lo, hi) = (min as f64, max as f64);
    if n < lo {
        return Err(format!("Value must be at least {min}"));
    }
    if n > hi {
        return Err(format!("Value must be no more than {max}"));
    }
    Ok(())
}

/// Every `MetadataVersion` of Kafka 3.9 as (release, sub-version); its version string is
/// `release-sub` (or `release` without a sub-version).
const METADATA_VERSIONS: &[(&str, &str)] = &[
    ("0.8.0", ""),
    ("0.8.1", ""),
    ("0.8.2", ""),
    ("0.9.0", ""),
    ("0.10.0", "IV0"),
    ("0.10.0", "IV1"),
    ("0.10.1", "IV0"),
    ("0.10.1", "IV1"),
    ("0.10.1", "IV2"),
    ("0.10.2", "IV0"),
    ("0.11.0", "IV0"),
    ("0.11.0", "IV1"),
    ("0.11.0", "IV2"),
    ("1.0", "IV0"),
    ("1.1", "IV0"),
    ("2.0", "IV0"),
    ("2.0", "IV1"),
    ("2.1", "IV0"),
    ("2.1", "IV1"),
    ("2.1", "IV2"),
    ("2.2", "IV0"),
    ("2.2", "IV1"),
    ("2.3", "IV0"),
    ("2.3", "IV1"),
    ("2.4", "IV0"),
    ("2.4", "IV1"),
    ("2.5", "IV0"),
    ("2.6", "IV0"),
    ("2.7", "IV0"),
    ("2.7", "IV1"),
    ("2.7", "IV2"),
    ("2.8", "IV0"),
    ("2.8", "IV1"),
    ("3.0", "IV0"),
    ("3.0", "IV1"),
    ("3.1", "IV0"),
    ("3.2", "IV0"),
    ("3.3", "IV0"),
    ("3.3", "IV1"),
    ("3.3", "IV2"),
    ("3.3", "IV3"),
    ("3.4", "IV0"),
    ("3.5", "IV0"),
    ("3.5", "IV1"),
    ("3.5", "IV2"),
    ("3.6", "IV0"),
    ("3.6", "IV1"),
    ("3.6", "IV2"),
    ("3.7", "IV0"),
    ("3.7", "IV1"),
    ("3.7", "IV2"),
    ("3.7", "IV3"),
    ("3.7", "IV4"),
    ("3.8", "IV0"),
    ("3.9", "IV0"),
    ("4.0", "IV0"),
    ("4.0", "IV1"),
];

/// The release whose versions are not production ones in 3.9, so its bare release string names
/// none of them (Kafka maps a bare release to its latest production version).
const UNRELEASED: &str = "4.0";

/// `message.format.version`'s default (`IBP_3_0_IV1`), also the value every topic has in force,
/// since Kafka 3.x ignores the key (inter-broker protocol 3.0 or later always writes v2 batches).
pub(crate) const DEFAULT_MESSAGE_FORMAT_VERSION: &str = "3.0-IV1";

/// `MetadataVersionValidator`: `MetadataVersion.fromVersionString` must know the version.
/// Kafka looks up the first three dot-separated parts of a `0.x` version and the first two of
/// any other (so `2.8.1` is `2.8`), among the version strings and the production releases.
pub(crate) fn check_metadata_version(value: &str) -> Result<(), String> {
    let invalid = || format!("Version {value} is not a valid version");
    // Java's `String.split`: trailing empty parts are dropped, but "" is one empty part.
    let mut parts: Vec<&str> = value.split('.').collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    let wanted = if value.starts_with("0.") { 3 } else { 2 };
    let key = if wanted >= parts.len() {
        value.to_string()
    } else {
        parts[..wanted].join(".")
    };
    let known = METADATA_VERSIONS.iter().any(|(release, sub)| {
        let full = if sub.is_empty() {
            (*release).to_string()
        } else {
            format!("{release}-{sub}")
        };
        key == full || (key == *release && *release != UNRELEASED)
    });
    if known { Ok(()) } else { Err(invalid()) }
}

/// Java's `Double.parseDouble` of a trimmed value: decimal notation with an optional exponent
/// and an optional `f`/`d` suffix, or `NaN`, `Infinity` with an optional sign. (Hexadecimal
/// floats, which Java also takes, are refused.)
pub(crate) fn parse_java_double(value: &str) -> Option<f64> {
    let s = value.trim();
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let negative = s.starts_with('-');
    match unsigned {
        "NaN" => return Some(f64::NAN),
        "Infinity" if negative => return Some(f64::NEG_INFINITY),
        "Infinity" => return Some(f64::INFINITY),
        _ => {}
    }
    let digits = s.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(s);
    // Rust also reads `inf` and `nan`; Java does not.
    if !digits
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
    {
        return None;
    }
    digits.parse().ok()
}

/// Java's `Double.toString`: the shortest digits that read back as the same double, in plain
/// notation with at least one fraction digit from 10^-3 up to 10^7, else as `d.dddE±n`.
pub(crate) fn java_double_string(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let magnitude = d.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let plain = d.to_string();
        return if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        };
    }
    let sci = format!("{d:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exponent}")
}

/// `ThrottledReplicaListValidator`: every item (trimmed) is empty or `partition:broker` in
/// decimal digits, or the items together are the literal `*`. The reason names the key.
pub(crate) fn check_throttled_replicas(key: &str, items: &[String]) -> Result<(), String> {
    let replica = |s: &str| {
        s.is_empty()
            || s.split_once(':').is_some_and(|(p, b)| {
                [p, b]
                    .iter()
                    .all(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
            })
    };
    let all_replicas = items.iter().all(|s| replica(s.trim()));
    let wildcard = items.iter().map(|s| s.trim()).collect::<String>() == "*";
    if all_replicas || wildcard {
        return Ok(());
    }
    Err(format!(
        "{key} must be the literal '*' or a list of replicas in the following format: \
         [partitionId]:[brokerId],[partitionId]:[brokerId],..."
    ))
}

/// One `key=value` being parsed; the helpers name the key in their errors.
pub(super) struct Value<'a> {
    pub(super) key: &'a str,
    pub(super) value: &'a str,
}

impl Value<'_> {
    pub(super) fn invalid(&self, reason: impl Into<String>) -> LogConfigError {
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

    pub(super) fn long_at_least(&self, min: i64) -> Result<i64, LogConfigError> {
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

    pub(super) fn int_at_least(&self, min: i32) -> Result<i32, LogConfigError> {
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

    /// `INT` with `Range.between(min, max)`.
    pub(super) fn int_between(&self, (min, max): (i32, i32)) -> Result<i32, LogConfigError> {
        let n = self.int_at_least(i32::MIN)?;
        check_between(f64::from(n), i64::from(min), i64::from(max))
            .map_err(|reason| self.invalid_shown(n, reason))?;
        Ok(n)
    }

    pub(super) fn gzip_level(&self) -> Result<i32, LogConfigError> {
        let n = self.int_at_least(i32::MIN)?;
        check_gzip_level(n).map_err(|reason| self.invalid_shown(n, reason))?;
        Ok(n)
    }

    /// `DOUBLE` with `Range.between(0, 1)`; Kafka shows the parsed value as Java prints it.
    pub(super) fn ratio(&self) -> Result<f64, LogConfigError> {
        let d = parse_java_double(self.value)
            .ok_or_else(|| self.invalid("Not a number of type DOUBLE"))?;
        check_between(d, 0, 1)
            .map_err(|reason| self.invalid_shown(java_double_string(d), reason))?;
        Ok(d)
    }

    /// `STRING` with `MetadataVersionValidator`; the trimmed text is kept.
    pub(super) fn metadata_version(&self) -> Result<String, LogConfigError> {
        let text = self.value.trim();
        check_metadata_version(text).map_err(|reason| self.invalid_shown(text, reason))?;
        Ok(text.to_string())
    }

    /// A `LIST` (items split at commas and trimmed, empty items kept; the empty value is the
    /// empty list) with `ThrottledReplicaListValidator`, which shows the list as Java does.
    pub(super) fn throttled_replicas(&self) -> Result<Vec<String>, LogConfigError> {
        let trimmed = self.value.trim();
        let items: Vec<String> = if trimmed.is_empty() {
            Vec::new()
        } else {
            trimmed.split(',').map(|s| s.trim().to_string()).collect()
        };
        check_throttled_replicas(self.key, &items)
            .map_err(|reason| self.invalid_shown(format!("[{}]", items.join(", ")), reason))?;
        Ok(items)
    }

    fn invalid_shown(&self, shown: impl ToString, reason: String) -> LogConfigError {
        LogConfigError::InvalidValue {
            key: self.key.to_string(),
            value: shown.to_string(),
            reason,
        }
    }

    pub(super) fn boolean(&self) -> Result<bool, LogConfigError> {
        match self.value.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.invalid("Expected value to be either true or false")),
        }
    }

    /// A `LIST` of `compact`/`delete`: the empty value is the empty list (neither policy), as
    /// Kafka 3.9 allows; an empty item is refused.
    pub(super) fn cleanup_policy(&self) -> Result<CleanupPolicy, LogConfigError> {
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

    pub(super) fn timestamp_type(&self) -> Result<TimestampType, LogConfigError> {
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
    use crate::storage::log_config::LogConfig;

    #[test]
    fn compression_types_are_kafkas() {
        assert_eq!(
            BrokerCompressionType::parse(" producer "),
            Ok(BrokerCompressionType::Producer)
        );
        assert_eq!(
            BrokerCompressionType::parse("zstd").map(|t| t.to_string()),
            Ok("zstd".to_string())
        );
        assert_eq!(
            BrokerCompressionType::parse("GZIP"),
            Err("String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer".into())
        );
        // The producer's name for no compression is not a broker compression type.
        assert!(BrokerCompressionType::parse("none").is_err());
    }

    #[test]
    fn compression_levels_follow_the_codecs() {
        assert!(check_gzip_level(-1).is_ok() && check_gzip_level(1).is_ok());
        assert!(check_gzip_level(9).is_ok());
        assert_eq!(
            check_gzip_level(0),
            Err("Value must be between 1 and 9 or equal to -1".into())
        );
        assert!(check_gzip_level(10).is_err() && check_gzip_level(-2).is_err());
        let (lo, hi) = LZ4_LEVELS;
        assert_eq!(
            check_between(0.0, i64::from(lo), i64::from(hi)),
            Err("Value must be at least 1".into())
        );
        assert_eq!(
            check_between(18.0, i64::from(lo), i64::from(hi)),
            Err("Value must be no more than 17".into())
        );
        let (lo, hi) = ZSTD_LEVELS;
        assert!(check_between(-131_072.0, i64::from(lo), i64::from(hi)).is_ok());
        assert!(check_between(-131_073.0, i64::from(lo), i64::from(hi)).is_err());
        assert!(check_between(f64::NAN, 0, 1).is_ok());
    }

    #[test]
    fn metadata_versions_are_looked_up_as_kafka_does() {
        for ok in [
            "3.0-IV1",
            "3.0",
            "0.10.0",
            "0.10.0-IV1",
            "0.8.2",
            "0.8.2.1",
            "2.8.1",
            "3.9",
            "3.9-IV0",
            "4.0-IV1",
            "0.10.2.2",
        ] {
            assert_eq!(check_metadata_version(ok), Ok(()), "{ok}");
        }
        for bad in [
            "4.0", "3.10", "3", "3.", "3.0.", "", "x", "0.7", "3.0-IV9", ".3.0",
        ] {
            assert_eq!(
                check_metadata_version(bad),
                Err(format!("Version {bad} is not a valid version")),
                "{bad}"
            );
        }
    }

    #[test]
    fn doubles_parse_and_print_as_java() {
        assert_eq!(parse_java_double(" 0.5 "), Some(0.5));
        assert_eq!(parse_java_double("1e-4"), Some(1e-4));
        assert_eq!(parse_java_double(".25d"), Some(0.25));
        assert_eq!(parse_java_double("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_java_double("NaN").is_some_and(f64::is_nan));
        for bad in ["", "inf", "nan", "half", "0x1p-1", "1,5"] {
            assert_eq!(parse_java_double(bad), None, "{bad}");
        }
        for (d, text) in [
            (0.5, "0.5"),
            (1.0, "1.0"),
            (0.0, "0.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (0.000_125, "1.25E-4"),
            (1234567.0, "1234567.0"),
            (1.0e7, "1.0E7"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(java_double_string(d), text, "{d}");
        }
    }

    #[test]
    fn throttled_replica_lists_are_validated_as_kafka() {
        let items = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let key = "leader.replication.throttled.replicas";
        assert!(check_throttled_replicas(key, &items(&["0:1", "1:2", ""])).is_ok());
        assert!(check_throttled_replicas(key, &items(&["*"])).is_ok());
        assert!(check_throttled_replicas(key, &items(&[])).is_ok());
        for bad in [&["0:"][..], &["a:1"], &["*", "0:1"], &["0-1"], &["1:2:3"]] {
            assert_eq!(
                check_throttled_replicas(key, &items(bad)),
                Err(format!(
                    "{key} must be the literal '*' or a list of replicas in the following \
                     format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
                )),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn new_keys_are_validated_as_kafka() {
        let mut c = LogConfig::default();
        let err = |c: &mut LogConfig, k: &str, v: &str| c.set(k, v).unwrap_err().to_string();
        let msg =
            |k: &str, v: &str, why: &str| format!("Invalid value {v} for configuration {k}: {why}");
        for (k, v, shown, why) in [
            (
                "compression.type",
                "GZIP",
                "GZIP",
                "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
            ),
            (
                "compression.gzip.level",
                "0",
                "0",
                "Value must be between 1 and 9 or equal to -1",
            ),
            (
                "compression.lz4.level",
                " 18",
                "18",
                "Value must be no more than 17",
            ),
            (
                "compression.zstd.level",
                "-131073",
                "-131073",
                "Value must be at least -131072",
            ),
            (
                "compression.zstd.level",
                "max",
                "max",
                "Not a number of type INT",
            ),
            (
                "min.compaction.lag.ms",
                "-1",
                "-1",
                "Value must be at least 0",
            ),
            (
                "max.compaction.lag.ms",
                "0",
                "0",
                "Value must be at least 1",
            ),
            (
                "min.cleanable.dirty.ratio",
                "1.50",
                "1.5",
                "Value must be no more than 1",
            ),
            (
                "min.cleanable.dirty.ratio",
                "-0.1",
                "-0.1",
                "Value must be at least 0",
            ),
            (
                "min.cleanable.dirty.ratio",
                "half",
                "half",
                "Not a number of type DOUBLE",
            ),
            (
                "message.format.version",
                " 0.7 ",
                "0.7",
                "Version 0.7 is not a valid version",
            ),
            (
                "message.timestamp.difference.max.ms",
                "-1",
                "-1",
                "Value must be at least 0",
            ),
            (
                "message.downconversion.enable",
                "no",
                "no",
                "Expected value to be either true or false",
            ),
            (
                "local.retention.ms",
                "-3",
                "-3",
                "Value must be at least -2",
            ),
            (
                "local.retention.bytes",
                "x",
                "x",
                "Not a number of type LONG",
            ),
            (
                "remote.storage.enable",
                "1",
                "1",
                "Expected value to be either true or false",
            ),
            (
                "leader.replication.throttled.replicas",
                "0:1, x",
                "[0:1, x]",
                "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
            ),
        ] {
            assert_eq!(err(&mut c, k, v), msg(k, shown, why), "{k}={v}");
        }
        c.set("compression.type", "zstd").unwrap();
        c.set("compression.zstd.level", "-5").unwrap();
        c.set("min.cleanable.dirty.ratio", "1e-4").unwrap();
        c.set("message.format.version", "2.8.1").unwrap();
        c.set("follower.replication.throttled.replicas", " 0:1 , 1:2,")
            .unwrap();
        c.set("leader.replication.throttled.replicas", "*").unwrap();
        let render = |c: &LogConfig, k: &str| c.value_string(k).unwrap();
        assert_eq!(render(&c, "compression.type"), "zstd");
        assert_eq!(render(&c, "min.cleanable.dirty.ratio"), "1.0E-4");
        assert_eq!(render(&c, "message.format.version"), "2.8.1");
        assert_eq!(
            render(&c, "follower.replication.throttled.replicas"),
            "0:1,1:2,"
        );
        assert_eq!(render(&c, "leader.replication.throttled.replicas"), "*");
    }
}
