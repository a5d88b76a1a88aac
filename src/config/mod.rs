//! The broker's configuration: Kafka 3.9's `server.properties` keys and defaults, loaded from
//! three layers with the precedence defaults < file < `--override key=value`, as `kafka.Kafka`
//! does. See docs/configuration.md for the supported keys.
//!
//! - `defs`: the key table (names, default strings, dynamic or read-only) and value parsers.
//! - `broker_config`: the typed [`Settings`], validation and the derived values.
//! - `listeners`: `NAME://host:port` endpoint lists.
//! - `log_defaults`: the topic defaults the broker's keys give, and Kafka's checks of them.
//! - `synonyms`: broker keys that set the same value, and the broker defaults of topic keys.
//! - `sasl_config`: the SASL keys, their `listener.name.<listener>.` forms, SASL listener checks.
//! - `ssl_configs`: the `ssl.*` keys and their `listener.name.<l>.` overrides, per listener.
//!
//! Keys with a listener prefix (`listener.name.<listener>.<key>`) are kept as given, for the
//! listener's components to read (Kafka's `valuesWithPrefixOverride`); they are not unknown.
//! Unknown keys are not errors: like Kafka, which logs "The configuration 'x' was supplied but
//! isn't a known config.", the loader collects them for the caller to report. A bad value of a
//! known key is an error naming the key, the value and why.

pub(crate) mod broker_config;
pub(crate) mod defs;
pub(crate) mod listeners;
pub(crate) mod log_defaults;
mod properties;
pub(crate) mod sasl_config;
pub(crate) mod ssl_configs;
pub(crate) mod synonyms;

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
    #[error("malformed config file {path}: {}", OneLine(.reason))]
    MalformedFile { path: PathBuf, reason: String },
    #[error("invalid --override {arg:?}: expected key=value")]
    MalformedOverride { arg: String },
    #[error(
        "invalid value {value:?} for configuration {}: {}",
        OneLine(.key),
        OneLine(.reason)
    )]
    InvalidValue {
        key: String,
        value: String,
        reason: String,
    },
}

/// Text from a config file shown in an error: control characters escaped (`\n` as `\\n`), so
/// the message stays the one line the CLI prints, whatever a key or value held.
struct OneLine<'a>(&'a str);

impl std::fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
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
    /// A password (`sasl.jaas.config`): Kafka hides its value, and so does this (`value` None).
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
            if key.starts_with(sasl_config::LISTENER_PREFIX) {
                config.settings.sasl.set_listener_prefixed(key, value)?;
                continue;
            }
            // kcli's own keys (`kcli.metrics.listener`): settings of this broker that Kafka
            // does not know, so DescribeConfigs does not list them.
            if key.starts_with("kcli.") && config.settings.set(key, value)? {
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
        settings.sasl.listener_prefixed = self.settings.sasl.listener_prefixed.clone();
        for (key, (value, _)) in &values {
            settings.set(key, value)?;
        }
        settings.resolve_listener_protocols()?;
        settings.validate()?;
        // The id the broker settled on at startup (`with_broker_id`), not the `-1` its files
        // may say: `broker.id` is not dynamic, and every later snapshot must keep it. Set after
        // validation, which checks the configured id (a generated one is above
        // `reserved.broker.max.id` by design).
        settings.broker_id = self.settings.broker_id;
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
                // Kafka describes a password as sensitive and never shows it.
                let is_sensitive = def.kind == defs::Kind::Password;
                ConfigEntry {
                    name: def.name.to_string(),
                    value: value.filter(|_| !is_sensitive),
                    is_default: source == ConfigSource::Default,
                    source,
                    is_sensitive,
                    read_only: !def.dynamic,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
