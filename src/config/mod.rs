//! The broker's configuration: Kafka 3.9's `server.properties` keys and defaults, loaded from
//! three layers with the precedence defaults < file < `--override key=value`, as `kafka.Kafka`
//! does. See docs/configuration.md for the supported keys.
//!
//! - [`defs`]: the key table (names, default strings, dynamic or read-only) and value parsers.
//! - [`broker_config`]: the typed [`Settings`], validation and the derived values.
//! - [`listeners`]: `NAME://host:port` endpoint lists.
//! - [`log_defaults`]: the topic defaults the broker's keys give, and Kafka's checks of them.
//! - [`synonyms`]: broker keys that set the same value, and the broker defaults of topic keys.
//! - [`ssl_configs`]: the `ssl.*` keys and their `listener.name.<l>.` overrides, per listener.
//!
//! Unknown keys are not errors: like Kafka, which logs "The configuration 'x' was supplied but
//! isn't a known config.", the loader collects them for the caller to report. A bad value of a
//! known key is an error naming the key, the value and why.

pub mod broker_config;
pub mod defs;
pub mod listeners;
pub mod log_defaults;
mod properties;
pub mod ssl_configs;
pub mod synonyms;

use std::collections::BTreeMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};

pub use broker_config::Settings;
pub use listeners::{EndPoint, SecurityProtocol};
pub use properties::{parse_override, parse_properties, read_properties_file};

use crate::storage::log_config::LogConfig;

/// What `kcli serve` uses where Kafka has no usable default: broker 0 on the loopback interface
/// with data under the working directory. They form the default layer, below the file.
pub const KCLI_SERVE_BASE: &[(&str, &str)] = &[
    ("broker.id", "0"),
    ("listeners", "PLAINTEXT://127.0.0.1:9092"),
    ("log.dirs", "./kcli-data"),
];

/// [`KCLI_SERVE_BASE`] for a broker that joins a ZooKeeper cluster: Kafka's `broker.id` default
/// (-1) stays, so a broker without one takes the id in its `meta.properties` or a generated one
/// (1001, 1002, ...), as Kafka's brokers do.
pub const KCLI_CLUSTER_BASE: &[(&str, &str)] = &[
    ("listeners", "PLAINTEXT://127.0.0.1:9092"),
    ("log.dirs", "./kcli-data"),
];

/// A configuration that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("malformed config file {path}: {reason}")]
    MalformedFile { path: PathBuf, reason: String },
    #[error("invalid --override {arg:?}: expected key=value")]
    MalformedOverride { arg: String },
    #[error("invalid value {value:?} for configuration {key}: {reason}")]
    InvalidValue {
        key: String,
        value: String,
        reason: String,
    },
    /// A listener whose security protocol kcli does not implement yet (SSL, SASL_*): serving it
    /// as plaintext without authentication would be a silent hole, so the broker refuses it.
    #[error(
        "listener {listener} in {key} uses security protocol {protocol}, which kcli does not \
         implement yet: only PLAINTEXT and SSL listeners can be served"
    )]
    UnsupportedSecurityProtocol {
        key: &'static str,
        listener: String,
        protocol: &'static str,
    },
}

/// Where a config's value came from, lowest precedence first. `DescribeConfigs` reports
/// `Default` as `DEFAULT_CONFIG`, `File` and `Override` as `STATIC_BROKER_CONFIG` (Kafka merges
/// `--override` into the file's properties), and the dynamic layers as
/// `DYNAMIC_DEFAULT_BROKER_CONFIG` and `DYNAMIC_BROKER_CONFIG`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfigSource {
    /// Kafka's default, or kcli's base layer such as [`KCLI_SERVE_BASE`].
    Default,
    /// The `server.properties` file.
    File,
    /// A `--override key=value` argument.
    Override,
    /// The cluster-wide dynamic config, `/config/brokers/<default>`.
    DynamicDefault,
    /// This broker's dynamic config, `/config/brokers/<id>`.
    DynamicBroker,
}

/// One config as `DescribeConfigs` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    pub name: String,
    /// `None` where the key is unset and Kafka's default is `null`.
    pub value: Option<String>,
    /// The value comes from the default layer.
    pub is_default: bool,
    pub source: ConfigSource,
    /// Kafka hides the values of passwords; no key kcli supports is one.
    pub is_sensitive: bool,
    /// Kafka cannot change it without a restart.
    pub read_only: bool,
}

/// A key kcli does not know, and the layer that gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    pub name: String,
    pub source: ConfigSource,
}

/// A loaded, validated broker configuration. Dereferences to its typed [`Settings`]
/// (`config.num_io_threads`, `config.log_dirs()`); also remembers each value's text and source
/// for [`BrokerConfig::entries`], and the unknown keys it was given.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerConfig {
    settings: Settings,
    /// The winning text and layer of every key some layer set.
    values: BTreeMap<&'static str, (String, ConfigSource)>,
    unknown_keys: Vec<UnknownKey>,
    /// The `ssl.*` keys (and listener overrides), as given; see [`ssl_configs`].
    ssl_values: ssl_configs::SslValues,
}

impl Deref for BrokerConfig {
    type Target = Settings;

    fn deref(&self) -> &Settings {
        &self.settings
    }
}

impl BrokerConfig {
    /// Kafka's defaults alone.
    pub fn kafka_defaults() -> Result<Self, ConfigError> {
        Self::from_sources(&[], &[], &[])
    }

    /// Loads Kafka's defaults, then `file` (if any), then `overrides` (`key=value` texts, as
    /// given to `--override`; later ones win).
    pub fn load(file: Option<&Path>, overrides: &[String]) -> Result<Self, ConfigError> {
        Self::load_with_base(&[], file, overrides)
    }

    /// As [`BrokerConfig::load`] with `base` (e.g. [`KCLI_SERVE_BASE`]) replacing some of
    /// Kafka's defaults.
    pub fn load_with_base(
        base: &[(&str, &str)],
        file: Option<&Path>,
        overrides: &[String],
    ) -> Result<Self, ConfigError> {
        let file_props = match file {
            Some(path) => read_properties_file(path)?,
            None => Vec::new(),
        };
        let overrides = overrides
            .iter()
            .map(|arg| parse_override(arg))
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_sources(base, &file_props, &overrides)
    }

    /// Merges the three layers in precedence order (within a layer, later pairs win), then
    /// parses the winning values and checks the result as Kafka's `KafkaConfig.validateValues`.
    /// As in Kafka, only the winning value of a key is parsed, so an override can replace a
    /// file value that would not parse.
    pub fn from_sources(
        base: &[(&str, &str)],
        file: &[(String, String)],
        overrides: &[(String, String)],
    ) -> Result<Self, ConfigError> {
        let mut merged: BTreeMap<&str, (&str, ConfigSource)> = BTreeMap::new();
        for (key, value) in base {
            merged.insert(key, (value, ConfigSource::Default));
        }
        for (layer, source) in [
            (file, ConfigSource::File),
            (overrides, ConfigSource::Override),
        ] {
            for (key, value) in layer {
                merged.insert(key, (value, source));
            }
        }
        let mut config = BrokerConfig {
            settings: Settings::default(),
            values: BTreeMap::new(),
            unknown_keys: Vec::new(),
            ssl_values: ssl_configs::SslValues::default(),
        };
        for (key, (value, source)) in merged {
            if ssl_configs::is_ssl_key(key) {
                config.ssl_values.insert(key, value);
                continue;
            }
            match defs::find(key) {
                Some(def) => {
                    config.settings.set(key, value)?;
                    config.values.insert(def.name, (value.to_string(), source));
                }
                None => config.unknown_keys.push(UnknownKey {
                    name: key.to_string(),
                    source,
                }),
            }
        }
        // Kafka looks at what was given, not at the defaults, for this one.
        if let (Some((name, _)), Some(_)) = (
            config.values.get("inter.broker.listener.name"),
            config.values.get("security.inter.broker.protocol"),
        ) {
            return Err(ConfigError::InvalidValue {
                key: "inter.broker.listener.name".to_string(),
                value: name.clone(),
                reason: "Only one of inter.broker.listener.name and \
                         security.inter.broker.protocol should be set."
                    .to_string(),
            });
        }
        config.settings.resolve_listener_protocols()?;
        config.settings.validate()?;
        config.settings.validate_log_defaults()?;
        config.validate_ssl_listeners()?;
        Ok(config)
    }

    /// This config with the broker id the broker settled on at startup (a `broker.id` of -1
    /// resolved from `meta.properties` or ZooKeeper's sequence), as Kafka's `KafkaServer`
    /// writes it back into its config.
    pub fn with_broker_id(mut self, broker_id: i32) -> Self {
        self.settings.broker_id = broker_id;
        self
    }

    /// The typed settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The topic defaults the broker's `log.*` keys give; topic overrides apply on top with
    /// [`LogConfig::with_overrides`].
    pub fn log_config(&self) -> LogConfig {
        self.settings.log_config()
    }

    /// The winning text of known key `name` and its layer; `None` when no layer set it.
    pub fn value_source(&self, name: &str) -> Option<(&str, ConfigSource)> {
        self.values
            .get(name)
            .map(|(text, source)| (text.as_str(), *source))
    }

    /// This configuration with Kafka's two dynamic layers on top (`DynamicBrokerConfig`'s
    /// `updateCurrentConfig`): the cluster-wide defaults, then this broker's own. Each dynamic
    /// key first removes its synonyms from the layers below, so the updated key wins even where
    /// a synonym would otherwise take precedence. Keys kcli does not know have no effect (Kafka
    /// keeps them for plugins). The result is validated as a whole.
    pub fn with_dynamic(
        &self,
        cluster_default: &BTreeMap<String, String>,
        per_broker: &BTreeMap<String, String>,
    ) -> Result<BrokerConfig, ConfigError> {
        let mut values = self.values.clone();
        for (layer, source) in [
            (cluster_default, ConfigSource::DynamicDefault),
            (per_broker, ConfigSource::DynamicBroker),
        ] {
            for (key, value) in layer {
                let Some(def) = defs::find(key) else {
                    continue;
                };
                for synonym in synonyms::broker_config_synonyms(def.name, false) {
                    values.remove(synonym);
                }
                values.insert(def.name, (value.clone(), source));
            }
        }
        let mut settings = Settings::default();
        for (key, (value, _)) in &values {
            settings.set(key, value)?;
        }
        settings.resolve_listener_protocols()?;
        settings.validate()?;
        Ok(BrokerConfig {
            settings,
            values,
            unknown_keys: self.unknown_keys.clone(),
            ssl_values: self.ssl_values.clone(),
        })
    }

    /// The keys kcli does not know, sorted, each with the layer whose value won.
    pub fn unknown_keys(&self) -> &[UnknownKey] {
        &self.unknown_keys
    }

    /// One line per unknown key, worded as Kafka logs it, for the caller to log as warnings.
    pub fn warnings(&self) -> Vec<String> {
        self.unknown_keys
            .iter()
            .map(|u| {
                let hint = defs::find(&format!("log.{}", u.name))
                    .map(|d| format!(" (the broker's name for it is {})", d.name))
                    .unwrap_or_default();
                format!(
                    "The configuration '{}' was supplied but isn't a known config.{hint}",
                    u.name
                )
            })
            .collect()
    }

    /// Every supported config with its value and where it came from, sorted by name.
    pub fn entries(&self) -> Vec<ConfigEntry> {
        defs::CONFIG_DEFS
            .iter()
            .map(|def| {
                let (value, source) = match self.values.get(def.name) {
                    Some((text, source)) => (Some(def.canonical(text)), *source),
                    None => (def.default.map(String::from), ConfigSource::Default),
                };
                ConfigEntry {
                    name: def.name.to_string(),
                    value,
                    is_default: source == ConfigSource::Default,
                    source,
                    is_sensitive: false,
                    read_only: !def.dynamic,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
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
        assert!(c.entries().iter().all(|e| !e.is_sensitive));

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
        // A listener mapped to SASL is still refused until SASL is served.
        let err = load(&[
            ("listeners", "CLIENTS://:9092,PLAINTEXT://:9093"),
            (
                "listener.security.protocol.map",
                "CLIENTS:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT",
            ),
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("SASL_PLAINTEXT"), "{err}");
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
}
