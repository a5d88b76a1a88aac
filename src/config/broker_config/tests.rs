//! Tests of the typed settings: defaults against the table, every key parsed, bad values refused
//! naming the key.

use super::*;
use crate::config::defs::CONFIG_DEFS;

fn with(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    let mut s = Settings::default();
    for (k, v) in pairs {
        assert!(s.set(k, v)?, "unknown key {k}");
    }
    s.validate()?;
    Ok(s)
}

#[test]
fn defaults_are_kafkas_and_match_the_table() {
    let d = Settings::default();
    d.validate().unwrap();
    // Setting every key to the default string of the table changes nothing.
    let mut explicit = Settings::default();
    for def in CONFIG_DEFS {
        if let Some(v) = def.default {
            assert!(explicit.set(def.name, v).unwrap(), "{}", def.name);
        }
    }
    assert_eq!(explicit, d);
    // And every key of the table is one `set` knows.
    for def in CONFIG_DEFS {
        let mut s = Settings::default();
        let sample = match def.name {
            "advertised.listeners" => "PLAINTEXT://h:1",
            _ => "1",
        };
        let known = s.set(def.name, def.default.unwrap_or(sample));
        assert!(matches!(known, Ok(true)), "{}", def.name);
    }
    assert_eq!(d.log_roll_time_millis(), 604_800_000);
    assert_eq!(d.log_retention_time_millis(), 604_800_000);
    assert_eq!(d.log_dirs(), vec!["/tmp/kafka-logs"]);
    assert_eq!(d.socket_request_max_bytes, 104_857_600);
    assert_eq!(d.message_max_bytes, 1_048_588);
    assert_eq!(d.effective_advertised_listeners(), d.listeners.as_slice());
}

#[test]
fn every_bad_value_names_the_key_value_and_reason() {
    for (key, value, why) in [
        ("broker.id", "one", "INT"),
        ("num.io.threads", "0", "at least 1"),
        ("num.network.threads", "-3", "at least 1"),
        ("queued.max.requests", "0", "at least 1"),
        ("socket.request.max.bytes", "0", "at least 1"),
        ("num.partitions", "0", "at least 1"),
        ("default.replication.factor", "x", "INT"),
        ("auto.create.topics.enable", "yes", "true or false"),
        ("delete.topic.enable", "1", "true or false"),
        ("message.max.bytes", "-1", "at least 0"),
        (
            "log.message.timestamp.type",
            "createtime",
            "CreateTime, LogAppendTime",
        ),
        ("log.segment.bytes", "13", "at least 14"),
        ("log.segment.bytes", "2147483648", "INT"),
        ("log.roll.ms", "soon", "LONG"),
        ("log.roll.hours", "0", "at least 1"),
        ("log.roll.jitter.hours", "-1", "at least 0"),
        ("log.retention.ms", "1h", "LONG"),
        ("log.retention.minutes", "1.5", "INT"),
        ("log.retention.hours", "", "INT"),
        ("log.retention.bytes", "lots", "LONG"),
        ("log.retention.check.interval.ms", "0", "at least 1"),
        ("log.segment.delete.delay.ms", "-1", "at least 0"),
        ("log.index.interval.bytes", "-1", "at least 0"),
        ("log.index.size.max.bytes", "3", "at least 4"),
        ("log.flush.interval.messages", "0", "at least 1"),
        ("log.flush.interval.ms", "never", "LONG"),
        ("log.cleanup.policy", "delete,archive", "compact, delete"),
        ("log.cleaner.delete.retention.ms", "-1", "at least 0"),
        ("log.cleaner.threads", "-1", "at least 0"),
        ("log.cleaner.backoff.ms", "-1", "at least 0"),
        ("log.cleaner.io.buffer.size", "-1", "at least 0"),
        ("log.cleaner.enable", "no", "true or false"),
        ("log.cleaner.io.buffer.load.factor", "lots", "DOUBLE"),
        (
            "log.cleaner.dedupe.buffer.size",
            "1048576",
            "at least 1MB per cleaner thread",
        ),
        ("log.preallocate", "maybe", "true or false"),
        ("min.insync.replicas", "0", "at least 1"),
        ("offsets.topic.replication.factor", "0", "at least 1"),
        ("offsets.topic.replication.factor", "70000", "SHORT"),
        ("group.initial.rebalance.delay.ms", "3s", "INT"),
        ("replica.lag.time.max.ms", "x", "LONG"),
        ("zookeeper.session.timeout.ms", "x", "INT"),
        ("zookeeper.connection.timeout.ms", "1s", "INT"),
        ("unclean.leader.election.enable", "no", "true or false"),
        ("controlled.shutdown.enable", "yes", "true or false"),
        ("leader.imbalance.check.interval.seconds", "0", "at least 1"),
        ("leader.imbalance.per.broker.percentage", "ten", "INT"),
        ("listeners", "localhost:9092", "unable to parse"),
        (
            "advertised.listeners",
            "PLAINTEXT://h:99999",
            "invalid port",
        ),
        // Cross-key checks of validateValues.
        ("broker.id", "1001", "reserved.broker.max.id"),
        ("broker.id", "-2", "reserved.broker.max.id"),
        (
            "log.roll.ms",
            "0",
            "log.roll.ms must be greater than or equal to 1",
        ),
        (
            "log.roll.jitter.ms",
            "-1",
            "log.roll.jitter.ms must be greater",
        ),
        ("log.retention.ms", "0", "unlimited (-1)"),
        ("log.retention.minutes", "0", "unlimited (-1)"),
        ("log.retention.hours", "0", "unlimited (-1)"),
        ("log.dirs", " , ", "At least one log directory"),
        ("log.dirs", "", "At least one log directory"),
        (
            "advertised.listeners",
            "PLAINTEXT://0.0.0.0:9092",
            "0.0.0.0",
        ),
        ("advertised.listeners", "SSL://h:9093", "subset"),
        ("listeners", "", "at least one listener"),
    ] {
        let err = with(&[(key, value)]).unwrap_err();
        let ConfigError::InvalidValue { key: k, .. } = &err else {
            panic!("{key}={value}: {err:?}");
        };
        let text = err.to_string();
        assert_eq!(k, key, "{text}");
        assert!(
            text.contains(key) && text.contains(why),
            "{key}={value}: {text}"
        );
    }
    // Without id generation, any non-negative id is fine and -1 is not.
    let s = with(&[
        ("broker.id.generation.enable", "false"),
        ("broker.id", "5000"),
    ]);
    assert_eq!(s.unwrap().broker_id, 5000);
    let err = with(&[
        ("broker.id.generation.enable", "false"),
        ("broker.id", "-1"),
    ]);
    assert!(err.unwrap_err().to_string().contains("equal to 0"));
}

#[test]
fn retention_and_roll_units_take_the_finest_given() {
    let s = with(&[("log.retention.hours", "2")]).unwrap();
    assert_eq!(s.log_retention_time_millis(), 2 * MS_PER_HOUR);
    let s = with(&[("log.retention.hours", "2"), ("log.retention.minutes", "3")]).unwrap();
    assert_eq!(s.log_retention_time_millis(), 3 * MS_PER_MINUTE);
    let s = with(&[
        ("log.retention.ms", "4"),
        ("log.retention.hours", "2"),
        ("log.retention.minutes", "3"),
    ])
    .unwrap();
    assert_eq!(s.log_retention_time_millis(), 4);
    for unlimited in [
        ("log.retention.ms", "-1"),
        ("log.retention.ms", "-100"),
        ("log.retention.minutes", "-1"),
        ("log.retention.hours", "-1"),
    ] {
        let s = with(&[unlimited]).unwrap();
        assert_eq!(s.log_retention_time_millis(), -1, "{unlimited:?}");
        assert_eq!(s.log_config().retention_ms, -1);
    }
    // ms wins even over a finer-looking minutes value of 0.
    let s = with(&[("log.retention.ms", "5"), ("log.retention.minutes", "0")]).unwrap();
    assert_eq!(s.log_retention_time_millis(), 5);

    let s = with(&[("log.roll.hours", "1")]).unwrap();
    assert_eq!(s.log_roll_time_millis(), MS_PER_HOUR);
    let s = with(&[("log.roll.hours", "1"), ("log.roll.ms", "1000")]).unwrap();
    assert_eq!(s.log_roll_time_millis(), 1000);
    let s = with(&[("log.roll.jitter.hours", "1"), ("log.roll.jitter.ms", "7")]).unwrap();
    assert_eq!(s.log_roll_time_jitter_millis(), 7);
}

#[test]
fn log_dirs_fall_back_to_log_dir() {
    let s = with(&[("log.dir", "/a")]).unwrap();
    assert_eq!(s.log_dirs(), vec!["/a"]);
    let s = with(&[("log.dir", "/a"), ("log.dirs", " /b , ,/c ")]).unwrap();
    assert_eq!(s.log_dirs(), vec!["/b", "/c"]);
}
