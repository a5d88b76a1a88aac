//! The config entries `DescribeConfigs` (and CreateTopics v5+) report, computed as Kafka's
//! `ConfigHelper` does: each entry's value, its source (the first of its synonyms, highest
//! precedence first: a topic override, this broker's dynamic value, the cluster-wide dynamic
//! default, the static config, Kafka's default; `DEFAULT_CONFIG` when there is none), its
//! synonyms, type and read-only flag.
//!
//! A Kafka quirk kept for compatibility: a config's synonym list starts at the config itself,
//! so the entries of higher-precedence synonyms set nowhere are dropped with everything before
//! it; describing `segment.ms` when only `log.roll.hours` is set gives `DEFAULT_CONFIG`, as
//! Kafka answers.

use std::collections::BTreeMap;

use crate::config::defs::{self, Kind};
use crate::config::synonyms::{TopicConfigDef, broker_config_synonyms};
use crate::config::{BrokerConfig, ConfigSource};
use crate::storage::log_config::LogConfig;

use super::dynamic_broker_config::DynamicLayers;

/// `DescribeConfigsResponse.ConfigSource` ids.
pub(crate) const DYNAMIC_TOPIC_CONFIG: i8 = 1;
pub(crate) const DYNAMIC_BROKER_CONFIG: i8 = 2;
pub(crate) const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
pub(crate) const STATIC_BROKER_CONFIG: i8 = 4;
pub(crate) const DEFAULT_CONFIG: i8 = 5;

/// One synonym: a key, its value at one level, and the level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Synonym {
    pub name: String,
    pub value: Option<String>,
    pub source: i8,
}

/// One described config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub value: Option<String>,
    pub source: i8,
    pub read_only: bool,
    pub is_sensitive: bool,
    /// Every synonym (callers drop them unless asked for).
    pub synonyms: Vec<Synonym>,
    /// `DescribeConfigsResponse.ConfigType` id.
    pub config_type: i8,
}

/// `DescribeConfigsResponse.ConfigType` of a `ConfigDef.Type`; 0 (`UNKNOWN`) for none.
pub(crate) fn config_type_id(kind: Option<Kind>) -> i8 {
    match kind {
        None => 0,
        Some(Kind::Bool) => 1,
        Some(Kind::Str) => 2,
        Some(Kind::Int) => 3,
        Some(Kind::Short) => 4,
        Some(Kind::Long) => 5,
        Some(Kind::Double) => 6,
        Some(Kind::List) => 7,
        Some(Kind::Password) => 9,
    }
}

/// The four broker levels a synonym can come from.
#[derive(Debug)]
pub(crate) struct BrokerLevels<'a> {
    pub static_config: &'a BrokerConfig,
    pub layers: &'a DynamicLayers,
}

impl BrokerLevels<'_> {
    /// The static config's own text for `name` (file or `--override`).
    fn static_value(&self, name: &str) -> Option<String> {
        match self.static_config.value_source(name) {
            Some((text, ConfigSource::File | ConfigSource::Override)) => Some(text.to_string()),
            _ => None,
        }
    }

    /// The default of `name`: Kafka's, or kcli's base layer where it replaced Kafka's.
    fn default_value(&self, name: &str) -> Option<String> {
        match self.static_config.value_source(name) {
            Some((text, ConfigSource::Default)) => Some(text.to_string()),
            _ => defs::find(name).and_then(|d| d.default.map(String::from)),
        }
    }

    /// Kafka's `configSynonyms(name, synonyms)`: every level's value of every synonym, levels
    /// in precedence order, then everything before `name`'s first appearance dropped.
    pub(crate) fn config_synonyms(&self, name: &str, synonyms: &[&str]) -> Vec<Synonym> {
        let mut all = Vec::new();
        let mut add = |s: &str, value: Option<String>, source: i8| {
            if let Some(value) = value {
                all.push(Synonym {
                    name: s.to_string(),
                    value: Some(value),
                    source,
                });
            }
        };
        for s in synonyms {
            add(
                s,
                self.layers.per_broker.get(*s).cloned(),
                DYNAMIC_BROKER_CONFIG,
            );
        }
        for s in synonyms {
            add(
                s,
                self.layers.cluster_default.get(*s).cloned(),
                DYNAMIC_DEFAULT_BROKER_CONFIG,
            );
        }
        for s in synonyms {
            add(s, self.static_value(s), STATIC_BROKER_CONFIG);
        }
        for s in synonyms {
            add(s, self.default_value(s), DEFAULT_CONFIG);
        }
        match all.iter().position(|s| s.name == name) {
            Some(i) => all.split_off(i),
            None => Vec::new(),
        }
    }

    /// This broker's entries (a `BROKER` resource named by its id): every key kcli knows, with
    /// the value in force, and the keys kcli does not know that a dynamic layer set.
    pub(crate) fn broker_entries(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = self
            .layers
            .current
            .entries()
            .into_iter()
            .map(|e| {
                let mut synonyms =
                    self.config_synonyms(&e.name, &broker_config_synonyms(&e.name, true));
                if e.is_sensitive {
                    synonyms = without_values(synonyms);
                }
                let kind = defs::find(&e.name).map(|d| d.kind);
                Entry {
                    source: synonyms.first().map_or(DEFAULT_CONFIG, |s| s.source),
                    read_only: e.read_only,
                    is_sensitive: e.is_sensitive,
                    config_type: config_type_id(kind),
                    synonyms,
                    value: e.value,
                    name: e.name,
                }
            })
            .collect();
        let mut custom: BTreeMap<&String, &String> = self.layers.cluster_default.iter().collect();
        custom.extend(self.layers.per_broker.iter());
        for name in custom.into_keys() {
            if defs::find(name).is_some() {
                continue;
            }
            let synonyms =
                without_values(self.config_synonyms(name, &broker_config_synonyms(name, true)));
            // Kafka's `createBrokerConfigEntry`: a key of no known type may be a plugin's
            // password, so it is described as sensitive, its value and synonyms' values null.
            out.push(Entry {
                name: name.clone(),
                value: None,
                source: synonyms.first().map_or(DEFAULT_CONFIG, |s| s.source),
                read_only: true,
                is_sensitive: true,
                synonyms,
                config_type: config_type_id(None),
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The cluster-wide defaults (a `BROKER` resource named `""`): only the keys that layer
    /// sets, with synonyms from that layer alone.
    pub(crate) fn cluster_default_entries(&self) -> Vec<Entry> {
        self.layers
            .cluster_default
            .iter()
            .map(|(name, value)| {
                let synonyms: Vec<Synonym> = self
                    .config_synonyms(name, &broker_config_synonyms(name, true))
                    .into_iter()
                    .filter(|s| s.source == DYNAMIC_DEFAULT_BROKER_CONFIG)
                    .collect();
                let def = defs::find(name);
                // An unknown key is sensitive, as in `broker_entries`.
                let sensitive = def.is_none();
                let synonyms = if sensitive {
                    without_values(synonyms)
                } else {
                    synonyms
                };
                Entry {
                    name: name.clone(),
                    value: Some(value.clone()).filter(|_| !sensitive),
                    source: synonyms.first().map_or(DEFAULT_CONFIG, |s| s.source),
                    read_only: !def.is_some_and(|d| d.dynamic),
                    is_sensitive: sensitive,
                    synonyms,
                    config_type: config_type_id(def.map(|d| d.kind)),
                }
            })
            .collect()
    }

    /// Kafka's `createTopicConfigEntry`: topic config `def` of a topic whose effective config is
    /// `config` and whose overrides are `overrides`. A config without broker synonyms has only
    /// its topic override as a synonym, or `DEFAULT_CONFIG` as its source.
    pub(crate) fn topic_entry(
        &self,
        def: &TopicConfigDef,
        config: &LogConfig,
        overrides: &BTreeMap<String, String>,
    ) -> Entry {
        let value = match overrides.get(def.name) {
            Some(text) => Some(defs::canonical_value(def.kind, text)),
            // A list keeps the order the broker's value gave it.
            None if def.kind == Kind::List => def
                .synonyms
                .first()
                .and_then(|primary| self.layers.current.value_source(primary))
                .map(|(text, _)| defs::canonical_value(def.kind, text))
                .or_else(|| config.value_string(def.name)),
            None => config.value_string(def.name),
        };
        let mut synonyms = match def.synonyms.first() {
            Some(primary) => self.config_synonyms(primary, def.synonyms),
            None => Vec::new(),
        };
        if overrides.contains_key(def.name) {
            synonyms.insert(
                0,
                Synonym {
                    name: def.name.to_string(),
                    value: value.clone(),
                    source: DYNAMIC_TOPIC_CONFIG,
                },
            );
        }
        Entry {
            name: def.name.to_string(),
            value,
            source: synonyms.first().map_or(DEFAULT_CONFIG, |s| s.source),
            read_only: false,
            is_sensitive: false,
            synonyms,
            config_type: config_type_id(Some(def.kind)),
        }
    }

    /// Every topic config of a topic, by name.
    pub(crate) fn topic_entries(
        &self,
        config: &LogConfig,
        overrides: &BTreeMap<String, String>,
    ) -> Vec<Entry> {
        crate::config::synonyms::TOPIC_CONFIGS
            .iter()
            .map(|def| self.topic_entry(def, config, overrides))
            .collect()
    }
}

/// `synonyms` with their values null, as Kafka describes a sensitive config's.
fn without_values(synonyms: Vec<Synonym>) -> Vec<Synonym> {
    synonyms
        .into_iter()
        .map(|s| Synonym { value: None, ..s })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::KCLI_SERVE_BASE;
    use crate::config::synonyms::topic_config;

    fn map(p: &[(&str, &str)]) -> BTreeMap<String, String> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn setup(
        file: &[(&str, &str)],
        cluster: &[(&str, &str)],
        broker: &[(&str, &str)],
    ) -> (Arc<BrokerConfig>, DynamicLayers) {
        let s = Arc::new(BrokerConfig::from_sources(KCLI_SERVE_BASE, &pairs(file), &[]).unwrap());
        let layers = DynamicLayers::from_persisted(&s, &map(broker), &map(cluster));
        (s, layers)
    }

    fn topic(levels: &BrokerLevels<'_>, name: &str, overrides: &[(&str, &str)]) -> Entry {
        let overrides = map(overrides);
        let config = levels
            .layers
            .current
            .log_config()
            .with_overrides(&overrides)
            .unwrap();
        levels.topic_entry(topic_config(name).unwrap(), &config, &overrides)
    }

    fn sources(e: &Entry) -> Vec<(&str, i8)> {
        e.synonyms
            .iter()
            .map(|s| (s.name.as_str(), s.source))
            .collect()
    }

    #[test]
    fn topic_sources_follow_config_helper() {
        let (s, layers) = setup(
            &[("log.segment.bytes", "2048"), ("log.roll.hours", "2")],
            &[("log.retention.bytes", "100")],
            &[("log.retention.bytes", "200")],
        );
        let levels = BrokerLevels {
            static_config: &s,
            layers: &layers,
        };
        let e = topic(&levels, "segment.bytes", &[]);
        assert_eq!(
            (e.value.as_deref(), e.source),
            (Some("2048"), STATIC_BROKER_CONFIG)
        );
        assert_eq!(
            sources(&e),
            [
                ("log.segment.bytes", STATIC_BROKER_CONFIG),
                ("log.segment.bytes", DEFAULT_CONFIG)
            ]
        );
        let e = topic(&levels, "segment.bytes", &[("segment.bytes", " 4096")]);
        assert_eq!(
            (e.value.as_deref(), e.source),
            (Some("4096"), DYNAMIC_TOPIC_CONFIG)
        );
        assert_eq!(e.synonyms[0].value.as_deref(), Some("4096"));
        let e = topic(&levels, "retention.bytes", &[]);
        assert_eq!(
            (e.value.as_deref(), e.source),
            (Some("200"), DYNAMIC_BROKER_CONFIG)
        );
        assert_eq!(
            sources(&e),
            [
                ("log.retention.bytes", DYNAMIC_BROKER_CONFIG),
                ("log.retention.bytes", DYNAMIC_DEFAULT_BROKER_CONFIG),
                ("log.retention.bytes", DEFAULT_CONFIG)
            ]
        );
        // Kafka's quirk: only a secondary synonym is set, so the list is empty.
        let e = topic(&levels, "segment.ms", &[]);
        assert_eq!(
            (e.value.as_deref(), e.source),
            (Some("7200000"), DEFAULT_CONFIG)
        );
        assert!(e.synonyms.is_empty());
        let e = topic(&levels, "cleanup.policy", &[]);
        assert_eq!((e.value.as_deref(), e.config_type), (Some("delete"), 7));
        assert!(!e.read_only);
    }

    #[test]
    fn every_kafka_topic_config_is_described() {
        let (s, layers) = setup(&[("log.cleaner.min.cleanable.ratio", "0.25")], &[], &[]);
        let levels = BrokerLevels {
            static_config: &s,
            layers: &layers,
        };
        let overrides = map(&[
            ("compression.type", "producer"),
            ("leader.replication.throttled.replicas", "0:0, 1:0"),
        ]);
        let config = layers
            .current
            .log_config()
            .with_overrides(&overrides)
            .unwrap();
        let entries = levels.topic_entries(&config, &overrides);
        assert_eq!(entries.len(), 36);
        let get = |n: &str| entries.iter().find(|e| e.name == n).unwrap();
        let e = get("compression.type");
        assert_eq!(
            (e.value.as_deref(), e.source, e.config_type),
            (Some("producer"), DYNAMIC_TOPIC_CONFIG, 2)
        );
        assert_eq!(
            sources(e),
            [
                ("compression.type", DYNAMIC_TOPIC_CONFIG),
                ("compression.type", DEFAULT_CONFIG)
            ]
        );
        // No broker synonym: the override is the only synonym.
        let e = get("leader.replication.throttled.replicas");
        assert_eq!(
            (e.value.as_deref(), e.source, e.config_type),
            (Some("0:0,1:0"), DYNAMIC_TOPIC_CONFIG, 7)
        );
        assert_eq!(e.synonyms.len(), 1);
        let e = get("remote.storage.enable");
        assert_eq!(
            (e.value.as_deref(), e.source, e.config_type),
            (Some("false"), DEFAULT_CONFIG, 1)
        );
        assert!(e.synonyms.is_empty());
        let e = get("min.cleanable.dirty.ratio");
        assert_eq!(
            (e.value.as_deref(), e.source, e.config_type),
            (Some("0.25"), STATIC_BROKER_CONFIG, 6)
        );
        let e = get("message.format.version");
        assert_eq!(
            (e.value.as_deref(), e.source),
            (Some("3.0-IV1"), DEFAULT_CONFIG)
        );
    }

    #[test]
    fn broker_sources_follow_config_helper() {
        let (s, layers) = setup(
            &[("log.retention.minutes", "5"), ("num.io.threads", "4")],
            &[("log.cleanup.policy", "compact"), ("plugin.key", "a")],
            &[("log.retention.ms", "1000")],
        );
        let levels = BrokerLevels {
            static_config: &s,
            layers: &layers,
        };
        let entries = levels.broker_entries();
        let get = |n: &str| entries.iter().find(|e| e.name == n).unwrap().clone();
        let e = get("num.io.threads");
        assert_eq!(
            (e.value.as_deref(), e.source, e.read_only),
            (Some("4"), STATIC_BROKER_CONFIG, false)
        );
        let e = get("log.retention.ms");
        assert_eq!(
            (e.value.as_deref(), e.source),
            (Some("1000"), DYNAMIC_BROKER_CONFIG)
        );
        assert_eq!(
            sources(&e),
            [
                ("log.retention.ms", DYNAMIC_BROKER_CONFIG),
                ("log.retention.minutes", STATIC_BROKER_CONFIG),
                ("log.retention.hours", DEFAULT_CONFIG)
            ]
        );
        // The dynamic ms removed the static minutes from the config in force; the static
        // level still lists it.
        let e = get("log.retention.minutes");
        assert_eq!((e.value, e.source), (None, STATIC_BROKER_CONFIG));
        let e = get("broker.id");
        assert_eq!(
            (e.value.as_deref(), e.source, e.read_only),
            (Some("0"), DEFAULT_CONFIG, true)
        );
        // A key of no known type is described as sensitive, with no values (Kafka's
        // `ConfigHelper`: it may be a plugin's password).
        let e = get("plugin.key");
        assert_eq!(
            (e.source, e.config_type, e.value.as_deref(), e.is_sensitive),
            (DYNAMIC_DEFAULT_BROKER_CONFIG, 0, None, true)
        );
        assert!(e.synonyms.iter().all(|s| s.value.is_none()), "{e:?}");
        assert_eq!(sources(&e), [("plugin.key", DYNAMIC_DEFAULT_BROKER_CONFIG)]);
        assert_eq!(
            get("log.cleanup.policy").source,
            DYNAMIC_DEFAULT_BROKER_CONFIG
        );

        let defaults = levels.cluster_default_entries();
        assert_eq!(defaults.len(), 2);
        assert_eq!(defaults[0].name, "log.cleanup.policy");
        assert_eq!(defaults[0].source, DYNAMIC_DEFAULT_BROKER_CONFIG);
        assert_eq!(
            sources(&defaults[0]),
            [("log.cleanup.policy", DYNAMIC_DEFAULT_BROKER_CONFIG)]
        );
        assert!(!defaults[0].read_only);
        assert!(defaults[1].read_only);
        assert_eq!(
            (defaults[1].value.as_deref(), defaults[1].is_sensitive),
            (None, true)
        );
        assert!(defaults[1].synonyms.iter().all(|s| s.value.is_none()));
        assert!(!defaults[0].is_sensitive);
    }
}
