//! Tests of loading: the layers, the file format, overrides, unknown and listener-prefixed
//! keys, the dynamic layers, listeners and security protocols.

use super::*;
use crate::cluster::inter_broker_protocol::InterBrokerProtocolVersion;

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn entry(c: &BrokerConfig, name: &str) -> ConfigEntry {
    c.entries().into_iter().find(|e| e.name == name).unwrap()
}

/// Found by the `server_properties` fuzz target: a value holding `\r` (from a `\r`
/// escape) made the CLI's one-line error two lines.
#[test]
fn an_error_naming_a_value_with_control_characters_stays_one_line() {
    let file = pairs(&[("listeners", "PLAIN a=v\r.x"), ("broker.id", "0")]);
    let message = BrokerConfig::from_sources(&[], &file, &[])
        .unwrap_err()
        .to_string();
    assert!(!message.contains(['\r', '\n']), "{message:?}");
    assert!(message.contains("PLAIN a=v\\r.x"), "{message}");
}

#[test]
fn defaults_are_kafkas() {
    let c = BrokerConfig::kafka_defaults().unwrap();
    assert_eq!(c.broker_id, -1);
    assert_eq!(c.listeners.len(), 1);
    assert_eq!(c.listeners[0].to_string(), "PLAINTEXT://:9092");
    assert_eq!(c.advertised_listeners, None);
    assert_eq!(c.log_dirs(), vec!["/tmp/kafka-logs"]);
    assert_eq!(c.zookeeper_connect, None);
    assert_eq!(
        (
            c.num_network_threads,
            c.num_io_threads,
            c.queued_max_requests
        ),
        (3, 8, 500)
    );
    assert_eq!(c.socket_request_max_bytes, 104_857_600);
    assert_eq!((c.num_partitions, c.default_replication_factor), (1, 1));
    assert!(c.auto_create_topics_enable && c.delete_topic_enable);
    assert!(!c.unclean_leader_election_enable);
    assert_eq!(c.message_max_bytes, 1_048_588);
    assert_eq!(c.log_segment_bytes, 1_073_741_824);
    assert_eq!(c.log_retention_bytes, -1);
    assert_eq!(c.log_retention_check_interval_ms, 300_000);
    assert_eq!(c.log_segment_delete_delay_ms, 60_000);
    assert_eq!(c.log_index_interval_bytes, 4096);
    assert_eq!(c.log_index_size_max_bytes, 10_485_760);
    assert_eq!(c.log_flush_interval_messages, i64::MAX);
    assert_eq!(c.log_flush_interval_millis(), i64::MAX);
    assert_eq!(c.min_insync_replicas, 1);
    assert_eq!(c.offsets_topic_replication_factor, 3);
    assert_eq!(c.group_initial_rebalance_delay_ms, 3000);
    assert_eq!(c.replica_lag_time_max_ms, 30_000);
    assert_eq!(c.zookeeper_session_timeout_ms, 18_000);
    // Kafka's zkConnectionTimeoutMs: the session timeout unless set.
    assert_eq!(c.zookeeper_connection_timeout_ms, None);
    assert_eq!(c.zookeeper_connection_timeout_ms(), 18_000);
    assert_eq!(c.log_config(), LogConfig::default());
    assert!(c.unknown_keys().is_empty());
    assert!(c.entries().iter().all(|e| e.is_default));
}

#[test]
fn parses_properties_files_like_java() {
    let text = "# comment\n! also a comment\n   \n\
                num.io.threads = 4\n\
                num.partitions:3\n\
                log.dirs /data/a,\\\n    /data/b\n\
                listeners=PLAINTEXT://\\:9093\n\
                zookeeper.connect=zk\\u0031:2181\r\n\
                num.io.threads=5\n\
                log.dir\n";
    let props = parse_properties(text).unwrap();
    assert_eq!(
        props,
        pairs(&[
            ("listeners", "PLAINTEXT://:9093"),
            ("log.dir", ""),
            ("log.dirs", "/data/a,/data/b"),
            ("num.io.threads", "5"),
            ("num.partitions", "3"),
            ("zookeeper.connect", "zk1:2181"),
        ])
    );
    assert!(parse_properties("a=\\u12").is_err());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.properties");
    // ISO-8859-1: byte 0xE9 is 'é'.
    std::fs::write(
        &path,
        b"log.dirs=/d\xe9j\xe0\nnum.io.threads=2\nfoo.bar=1\n",
    )
    .unwrap();
    let c = BrokerConfig::load(Some(&path), &[]).unwrap();
    assert_eq!(c.log_dirs(), vec!["/d\u{e9}j\u{e0}"]);
    assert_eq!(c.num_io_threads, 2);
    assert_eq!(c.unknown_keys()[0].name, "foo.bar");

    let missing = dir.path().join("nope.properties");
    let err = BrokerConfig::load(Some(&missing), &[]).unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }), "{err}");
    std::fs::write(&path, "a=\\u00zz\n").unwrap();
    let err = BrokerConfig::load(Some(&path), &[]).unwrap_err();
    assert!(matches!(err, ConfigError::MalformedFile { .. }), "{err}");
}

#[test]
fn overrides_beat_the_file_which_beats_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.properties");
    std::fs::write(&path, "num.io.threads=4\nnum.partitions=3\nbroker.id=7\n").unwrap();
    let overrides = vec![
        "num.partitions=6".to_string(),
        " broker.id = 9".to_string(),
        "broker.id=10".to_string(),
        "zookeeper.connect=a:1,b:2/chroot=x".to_string(),
        "zookeeper.session.timeout.ms=6000".to_string(),
        "zookeeper.connection.timeout.ms=2500".to_string(),
    ];
    let c = BrokerConfig::load_with_base(KCLI_SERVE_BASE, Some(&path), &overrides).unwrap();
    assert_eq!(c.num_io_threads, 4);
    assert_eq!(c.num_partitions, 6);
    assert_eq!(c.broker_id, 10);
    assert_eq!(c.zookeeper_connect.as_deref(), Some("a:1,b:2/chroot=x"));
    assert_eq!(
        (
            c.zookeeper_session_timeout_ms,
            c.zookeeper_connection_timeout_ms()
        ),
        (6000, 2500)
    );
    assert_eq!(c.log_dirs(), vec!["./kcli-data"]);
    assert_eq!(c.listeners[0].host.as_deref(), Some("127.0.0.1"));

    let e = entry(&c, "num.partitions");
    assert_eq!(
        (e.value.as_deref(), e.source, e.is_default, e.read_only),
        (Some("6"), ConfigSource::Override, false, true)
    );
    let e = entry(&c, "num.io.threads");
    assert_eq!(
        (e.value.as_deref(), e.source, e.read_only),
        (Some("4"), ConfigSource::File, false)
    );
    let e = entry(&c, "log.dirs");
    assert_eq!(
        (e.value.as_deref(), e.source, e.is_default),
        (Some("./kcli-data"), ConfigSource::Default, true)
    );
    let e = entry(&c, "log.retention.ms");
    assert_eq!((e.value.as_deref(), e.is_default), (None, true));
    let e = entry(&c, "broker.id");
    assert_eq!(e.value.as_deref(), Some("10"));
    assert_eq!(c.entries().len(), defs::CONFIG_DEFS.len());
    assert!(
        c.entries()
            .iter()
            .all(|e| e.is_sensitive == (e.name == "sasl.jaas.config"))
    );

    // Entries show values as Kafka renders the parsed value.
    let over = pairs(&[("log.preallocate", "TRUE"), ("num.io.threads", " 04")]);
    let c = BrokerConfig::from_sources(&[], &[], &over).unwrap();
    assert_eq!(entry(&c, "log.preallocate").value.as_deref(), Some("true"));
    assert_eq!(entry(&c, "num.io.threads").value.as_deref(), Some("4"));

    // Without a file, overrides still apply over the defaults.
    let c = BrokerConfig::load(None, &["num.io.threads=1".into()]).unwrap();
    assert_eq!(c.num_io_threads, 1);
}

#[test]
fn bad_overrides_and_values_are_errors_naming_the_key() {
    for arg in ["num.io.threads", "=5", " =5", ""] {
        let err = parse_override(arg).unwrap_err();
        assert!(
            matches!(err, ConfigError::MalformedOverride { .. }),
            "{arg}"
        );
        assert!(BrokerConfig::load(None, &[arg.to_string()]).is_err());
    }
    assert_eq!(
        parse_override("a=b=c").unwrap(),
        ("a".to_string(), "b=c".to_string())
    );
    let err = BrokerConfig::load(None, &["num.io.threads=zero".into()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value \"zero\" for configuration num.io.threads: not a number of type INT"
    );
    // As in Kafka, which merges the override into the file's properties before parsing, an
    // override replaces a bad file value; alone, the file value is rejected.
    let file = pairs(&[("num.io.threads", "x")]);
    let over = pairs(&[("num.io.threads", "2")]);
    let c = BrokerConfig::from_sources(&[], &file, &over).unwrap();
    assert_eq!(c.num_io_threads, 2);
    let err = BrokerConfig::from_sources(&[], &file, &[]).unwrap_err();
    assert!(err.to_string().contains("num.io.threads"), "{err}");
}

#[test]
fn inter_broker_keys_are_kafkas_and_checked_against_the_listeners() {
    let load = |p: &[(&str, &str)]| BrokerConfig::from_sources(&[], &pairs(p), &[]);
    let c = load(&[]).unwrap();
    assert_eq!(c.inter_broker_listener_name(), "PLAINTEXT");
    assert_eq!(
        c.inter_broker_protocol_version,
        InterBrokerProtocolVersion::LATEST
    );
    let c = load(&[
        ("inter.broker.listener.name", "PLAINTEXT"),
        ("inter.broker.protocol.version", "3.4"),
        ("broker.rack", "rack-a"),
    ])
    .unwrap();
    assert_eq!(c.inter_broker_listener_name(), "PLAINTEXT");
    assert_eq!(
        c.inter_broker_protocol_version,
        InterBrokerProtocolVersion::new(3, 4, 0)
    );
    assert_eq!(c.broker_rack.as_deref(), Some("rack-a"));
    for (pairs_, key) in [
        (
            &[
                ("inter.broker.listener.name", "PLAINTEXT"),
                ("security.inter.broker.protocol", "PLAINTEXT"),
            ][..],
            "inter.broker.listener.name",
        ),
        (
            &[("inter.broker.listener.name", "REPLICATION")][..],
            "inter.broker.listener.name",
        ),
        (
            &[("security.inter.broker.protocol", "SSL")][..],
            "security.inter.broker.protocol",
        ),
        (
            &[("inter.broker.protocol.version", "2.8-IV1")][..],
            "inter.broker.protocol.version",
        ),
        (
            &[("inter.broker.protocol.version", "3.x")][..],
            "inter.broker.protocol.version",
        ),
    ] {
        let err = load(pairs_).unwrap_err().to_string();
        assert!(err.contains(key), "{pairs_:?}: {err}");
    }
}

/// Kafka's refusal names the advertised listeners an inter-broker listener may be, in their
/// order, each once (KafkaConfig.validateValues).
#[test]
fn inter_broker_refusals_name_the_valid_listeners() {
    let load = |p: &[(&str, &str)]| BrokerConfig::from_sources(&[], &pairs(p), &[]);
    let named = [
        (
            "listeners",
            "INTERNAL://127.0.0.1:9093,EXTERNAL://127.0.0.1:9092",
        ),
        (
            "listener.security.protocol.map",
            "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
        ),
    ];
    let err = load(&named).unwrap_err().to_string();
    assert_eq!(
        err,
        "invalid value \"PLAINTEXT\" for configuration security.inter.broker.protocol: \
         inter.broker.listener.name must be a listener name defined in advertised.listeners. The \
         valid options based on currently configured listeners are INTERNAL,EXTERNAL"
    );
    let mut advertised = named.to_vec();
    advertised.push(("advertised.listeners", "EXTERNAL://h1:9092"));
    advertised.push(("inter.broker.listener.name", "INTERNAL"));
    let err = load(&advertised).unwrap_err().to_string();
    assert!(
        err.starts_with("invalid value \"INTERNAL\" for configuration inter.broker.listener.name"),
        "{err}"
    );
    assert!(
        err.ends_with("The valid options based on currently configured listeners are EXTERNAL"),
        "{err}"
    );
    let err = load(&[("advertised.listeners", "SSL://h:9093")])
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(
            "advertised.listeners listener names must be equal to or a subset of the ones \
             defined in listeners. Found SSL. The valid options based on the current \
             configuration are PLAINTEXT"
        ),
        "{err}"
    );
}

#[test]
fn dynamic_layers_override_static_ones_and_remove_their_synonyms() {
    let file = pairs(&[
        ("log.retention.minutes", "5"),
        ("log.segment.bytes", "2048"),
    ]);
    let c = BrokerConfig::from_sources(KCLI_SERVE_BASE, &file, &[]).unwrap();
    let map = |p: &[(&str, &str)]| -> BTreeMap<String, String> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let cluster = map(&[("log.segment.bytes", "4096"), ("my.plugin.key", "x")]);
    let broker = map(&[("log.retention.ms", "1000")]);
    let d = c.with_dynamic(&cluster, &broker).unwrap();
    assert_eq!(d.log_segment_bytes, 4096);
    assert_eq!(d.log_retention_time_millis(), 1000);
    // The static minutes were removed, not just outranked.
    assert_eq!(d.log_retention_minutes, None);
    assert_eq!(
        d.value_source("log.segment.bytes"),
        Some(("4096", ConfigSource::DynamicDefault))
    );
    assert_eq!(
        d.value_source("log.retention.ms"),
        Some(("1000", ConfigSource::DynamicBroker))
    );
    assert_eq!(d.value_source("log.retention.minutes"), None);
    assert_eq!(
        d.value_source("broker.id"),
        Some(("0", ConfigSource::Default))
    );
    let e = entry(&d, "log.segment.bytes");
    assert_eq!(
        (e.source, e.is_default),
        (ConfigSource::DynamicDefault, false)
    );
    // The broker's own layer wins over the cluster's.
    let both = c
        .with_dynamic(&cluster, &map(&[("log.segment.bytes", "8192")]))
        .unwrap();
    assert_eq!(both.log_segment_bytes, 8192);
    // A bad dynamic value fails as a static one would.
    let bad = c.with_dynamic(&map(&[("log.segment.bytes", "1")]), &BTreeMap::new());
    assert!(bad.unwrap_err().to_string().contains("log.segment.bytes"));
}

proptest::proptest! {
    /// File and override input never panics: it loads or is an error.
    #[test]
    fn arbitrary_input_never_panics(text in "(?s).{0,200}", arg in ".{0,60}") {
        let _ = parse_properties(&text);
        if let Ok(props) = parse_properties(&text) {
            let _ = BrokerConfig::from_sources(&[], &props, &[]);
        }
        let _ = BrokerConfig::load(None, &[arg]);
    }

    /// Listener lists of any shape parse or are refused with a reason.
    #[test]
    fn arbitrary_listeners_never_panic(v in "[A-Za-z_:/\\[\\]0-9.,% -]{0,60}") {
        let _ = BrokerConfig::from_sources(&[], &[("listeners".into(), v)], &[]);
    }
}

#[test]
fn unknown_keys_are_collected_and_worded_as_kafka() {
    let file = pairs(&[("message.timestamp.type", "LogAppendTime"), ("x.y", "1")]);
    let over = pairs(&[("z", "3"), ("x.y", "2")]);
    let c = BrokerConfig::from_sources(&[], &file, &over).unwrap();
    let names: Vec<_> = c
        .unknown_keys()
        .iter()
        .map(|u| (u.name.as_str(), u.source))
        .collect();
    assert_eq!(
        names,
        vec![
            ("message.timestamp.type", ConfigSource::File),
            ("x.y", ConfigSource::Override),
            ("z", ConfigSource::Override),
        ]
    );
    let warnings = c.warnings();
    assert_eq!(
        warnings[0],
        "The configuration 'message.timestamp.type' was supplied but isn't a known config. \
         (the broker's name for it is log.message.timestamp.type)"
    );
    assert_eq!(
        warnings[2],
        "The configuration 'z' was supplied but isn't a known config."
    );
}

#[test]
fn kcli_metrics_listener_is_kclis_own_key_and_must_be_host_port() {
    let over = pairs(&[
        ("kcli.metrics.listener", " 0.0.0.0:9404 "),
        ("kcli.nothing", "1"),
    ]);
    let c = BrokerConfig::from_sources(&[], &[], &over).unwrap();
    assert_eq!(c.kcli_metrics_listener.as_deref(), Some("0.0.0.0:9404"));
    let unknown: Vec<_> = c.unknown_keys().iter().map(|u| u.name.as_str()).collect();
    assert_eq!(
        unknown,
        ["kcli.nothing"],
        "an unknown kcli key is reported like any other"
    );
    assert!(
        c.entries().iter().all(|e| !e.name.starts_with("kcli.")),
        "DescribeConfigs lists Kafka's keys only"
    );
    for bad in ["nowhere", "host:", "host:99999"] {
        let over = pairs(&[("kcli.metrics.listener", bad)]);
        let err = BrokerConfig::from_sources(&[], &[], &over).unwrap_err();
        assert!(
            err.to_string().contains("kcli.metrics.listener") && err.to_string().contains(bad),
            "{err}"
        );
    }
}

#[test]
fn listeners_of_any_name_take_their_protocol_from_the_map_whatever_the_key_order() {
    let load = |p: &[(&str, &str)]| BrokerConfig::from_sources(&[], &pairs(p), &[]);
    let c = load(&[
        (
            "advertised.listeners",
            "INTERNAL://10.0.0.1:9092,EXTERNAL://kafka.example:9093",
        ),
        ("listeners", "INTERNAL://:9092,EXTERNAL://:9093"),
        (
            "listener.security.protocol.map",
            "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
        ),
        ("inter.broker.listener.name", "INTERNAL"),
    ])
    .unwrap();
    assert_eq!(c.inter_broker_listener_name(), "INTERNAL");
    assert!(
        c.effective_advertised_listeners()
            .iter()
            .all(|e| e.security_protocol == listeners::SecurityProtocol::Plaintext)
    );
    // A name the map lacks, in either list, is Kafka's error, naming the key.
    let err = load(&[("listeners", "INTERNAL://:9092")])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("listeners")
            && err.contains("No security protocol defined for listener INTERNAL"),
        "{err}"
    );
    let err = load(&[("listener.security.protocol.map", "PLAINTEXT:TLS")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("listener.security.protocol.map"), "{err}");
    // A listener mapped to SASL_SSL or SASL_PLAINTEXT is served, but not with Kafka's default
    // mechanism, GSSAPI.
    let err = load(&[
        ("listeners", "CLIENTS://:9092,PLAINTEXT://:9093"),
        (
            "listener.security.protocol.map",
            "CLIENTS:SASL_SSL,PLAINTEXT:PLAINTEXT",
        ),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("sasl.enabled.mechanisms") && err.contains("GSSAPI"),
        "{err}"
    );
    let sasl = [
        ("listeners", "CLIENTS://:9092,PLAINTEXT://:9093"),
        (
            "listener.security.protocol.map",
            "CLIENTS:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT",
        ),
    ];
    let err = load(&sasl).unwrap_err().to_string();
    assert!(
        err.contains("sasl.enabled.mechanisms") && err.contains("GSSAPI"),
        "{err}"
    );
    let mut with_mechanisms = sasl.to_vec();
    with_mechanisms.push((
        "listener.name.clients.sasl.enabled.mechanisms",
        "SCRAM-SHA-512",
    ));
    with_mechanisms.push(("listener.name.clients.scram-sha-512.sasl.jaas.config", "x"));
    let c = load(&with_mechanisms).unwrap();
    // Listener-prefixed keys are kept, not reported as unknown.
    assert!(c.unknown_keys().is_empty(), "{:?}", c.unknown_keys());
    assert_eq!(
        c.sasl.enabled_mechanisms("CLIENTS").value,
        ["SCRAM-SHA-512"]
    );
    assert_eq!(
        c.sasl
            .jaas_config("CLIENTS", "SCRAM-SHA-512")
            .map(|j| j.value),
        Some("x".to_string())
    );
    // The dynamic layers keep them.
    let d = c.with_dynamic(&BTreeMap::new(), &BTreeMap::new()).unwrap();
    assert_eq!(d.sasl, c.sasl);
    // sasl.jaas.config is a password: sensitive, never shown.
    let c = load(&[("sasl.jaas.config", "secret")]).unwrap();
    let e = entry(&c, "sasl.jaas.config");
    assert_eq!((e.value, e.is_sensitive), (None, true));
}

#[test]
fn connection_limits_and_the_memory_pool_are_checked_as_kafka_checks_them() {
    let load = |p: &[(&str, &str)]| BrokerConfig::from_sources(&[], &pairs(p), &[]);
    let c = load(&[
        ("max.connections", "100"),
        ("max.connections.per.ip", "0"),
        ("max.connections.per.ip.overrides", "127.0.0.1:5, [::1]:7"),
        ("queued.max.request.bytes", "209715200"),
    ])
    .unwrap();
    assert_eq!(c.max_connections, 100);
    assert_eq!(
        c.max_connections_per_ip_overrides,
        vec![
            ("127.0.0.1".parse().unwrap(), 5),
            ("::1".parse().unwrap(), 7)
        ]
    );
    assert_eq!(c.queued_max_request_bytes, 209_715_200);
    for (pairs_, key, want) in [
        (
            &[("queued.max.request.bytes", "1000")][..],
            "queued.max.request.bytes",
            "larger or equal to socket.request.max.bytes",
        ),
        (
            &[("max.connections.per.ip", "0")][..],
            "max.connections.per.ip",
            "can be set to zero only if",
        ),
        (
            &[("max.connections.per.ip.overrides", "myhost:3")][..],
            "max.connections.per.ip.overrides",
            "invalid addresses : myhost",
        ),
        (
            &[("max.connections", "-1")][..],
            "max.connections",
            "at least 0",
        ),
    ] {
        let err = load(pairs_).unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(want), "{err}");
    }
}

/// A broker id generated at startup survives the dynamic layers: a snapshot rebuilt from the
/// layers once said `-1`, so a broker with a generated id (1001) refused every LeaderAndIsr
/// naming it and never led a partition.
#[test]
fn a_settled_broker_id_survives_the_dynamic_layers() {
    let c = BrokerConfig::from_sources(&[], &pairs(&[("broker.id", "-1")]), &[])
        .unwrap()
        .with_broker_id(1001);
    let dynamic = BTreeMap::from([("log.retention.ms".to_string(), "1000".to_string())]);
    let updated = c.with_dynamic(&BTreeMap::new(), &dynamic).unwrap();
    assert_eq!(updated.broker_id, 1001);
    assert_eq!(updated.log_config().retention_ms, 1000);
}

#[test]
fn replica_selector_class_is_unset_or_kafkas_rack_aware_selector() {
    let c = BrokerConfig::from_sources(&[], &[], &[]).unwrap();
    assert_eq!(c.replica_selector_class, "");
    let rack_aware = "org.apache.kafka.common.replica.RackAwareReplicaSelector";
    let over = pairs(&[("replica.selector.class", rack_aware)]);
    let c = BrokerConfig::from_sources(&[], &[], &over).unwrap();
    assert_eq!(c.replica_selector_class, rack_aware);
    assert!(c.unknown_keys().is_empty());
    let bad = "com.example.NearestReplicaSelector";
    let over = pairs(&[("replica.selector.class", bad)]);
    let err = BrokerConfig::from_sources(&[], &[], &over)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("replica.selector.class") && err.contains(bad) && err.contains(rack_aware),
        "{err}"
    );
}
