//! The Prometheus JMX exporter's rule engine (jmx_prometheus_javaagent 1.0.1, on client_java
//! 1.3): a JMX exporter YAML config applied to the broker's [`MetricSample`]s renders the text
//! exposition (format 0.0.4) the javaagent renders for the same MBeans, so that dashboards
//! written against Kafka with Strimzi's rules (or Confluent's) read kcli unmodified.
//! [`Rules::strimzi`] are Strimzi's rules, compiled into the binary.
//!
//! ## How an attribute becomes a sample (the exporter's `JmxCollector.Receiver`)
//!
//! An MBean is skipped unless some `includeObjectNames` pattern matches it (all are included
//! without one) or if an `excludeObjectNames` pattern does. Each numeric attribute is then
//! matched against the rules in order as the string
//! `domain<key1=value1, key2=value2><>Attribute: value`: the key properties in the MBean's own
//! order ([`MBeanName::properties`], which is Kafka's), the value as Java's `Double.toString`
//! writes it, or `<cache>` for a rule with `cache: true`. The first rule whose pattern matches
//! (anywhere: the pattern is compiled as `^.*(?:pattern).*$`) decides:
//!
//! - `value`, expanded, replaces the attribute's value; if it does not parse as a number the
//!   attribute is dropped. The value is then multiplied by `valueFactor`.
//! - Without `name`, the sample is named `domain_<first property's value>_Attribute` with the
//!   other properties as labels (the exporter's default export).
//! - Otherwise `name` and each label name and value are expanded (`$1`...), names made safe
//!   (characters outside `[A-Za-z0-9_:]` to `_`, runs of `_` to one), lower-cased if
//!   `lowercaseOutputName`/`lowercaseOutputLabelNames` say so; a label whose name or value comes
//!   out empty is left out, and an empty name drops the attribute.
//! - The name loses any `_total`, `_created`, `_bucket`, `_info` suffix (client_java's
//!   `sanitizeMetricName`); samples with the same name make one family, of the rules' type if
//!   they agree and untyped if not. A COUNTER family `x` is written `x_total`, so a rule named
//!   `..._count` gives `..._count_total` and one named `..._total` gives `..._total`.
//!
//! An attribute no rule matches is dropped (a config without `rules` has one rule that
//! matches everything, with the default export).
//!
//! ## Output
//!
//! Written here rather than through the `prometheus` crate's `TextEncoder`, which cannot write
//! what the exporter writes: the exporter's HELP text (`<description> domain:name=..,type=..,
//! attribute=..`), its `untyped` families, its ordering (families by name, samples by label
//! names and then values, labels by name) and its numbers (Java's `Double.toString`: `1.0`,
//! `3.342775461298826E-4`). Where samples of one family have equal labels, each gets an
//! `_objectname` label naming its MBean and attribute, as the exporter does. HELP comes from the
//! family's first sample in the order given (the exporter's is that of the first MBean its
//! `HashSet` yields, which varies); it is the attribute's description (Yammer MBeans:
//! `Attribute exposed for management`; a [`Reading::KafkaMetrics`] has none) before
//! `domain:name=<name>,type=<type>,attribute=<attribute>`.
//!
//! ## Cache
//!
//! The config is compiled once. What the rules make of each (MBean, attribute) is kept from one
//! rendering to the next, so that a scrape runs no regex for an attribute it has seen; entries
//! for MBeans a rendering did not see are dropped at its end. An attribute seen for the first
//! time runs one `RegexSet` pass over its match string and captures for the first rule that
//! matches only. The text less its values is kept too, and reused while a rendering yields the
//! same outcomes in the same order, so a steady broker's scrape neither groups nor sorts.
//! 10,000 partitions' Partition and Log gauges (100,000 samples, 7.2 MB of text) render in about
//! 1.1 s the first time and 70-120 ms after that (release build, a shared 2-core machine; the
//! test `a_scrape_of_ten_thousand_partitions` prints both). The match is therefore made with
//! the value the attribute had when first seen: a rule whose pattern reads the value (none of
//! Strimzi's or Confluent's Kafka rules does; they end at the attribute name or at its `:`)
//! keeps the first outcome, as the exporter's own `cache: true` does.
//!
//! ## Left out or different
//!
//! Non-numeric attributes (the exporter matches strings too, for rules with a `value`) never
//! reach the rules: a [`Reading`] holds numbers only. Where the exporter would fail the whole
//! scrape (two labels of one sample with the same name, a label name client_java refuses such
//! as one with a `:`, two samples with the same labels and MBean), the label or the second
//! sample is left out instead. A replacement referring to a group the pattern lacks is a config
//! error here, and a scrape error there.

mod config;
mod object_name;
mod text;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

use config::{Config, MetricType};
use text::{
    is_valid_label_name, safe_name, sanitize_metric_name, to_snake_and_lower_case,
    write_escaped_help, write_escaped_label_value, write_java_double, write_sample_value,
};

use crate::metrics::{MBeanName, MetricSample, Reading};

/// Strimzi's rules for Kafka (release-0.45.x, the last with ZooKeeper-mode Kafka), verbatim.
const STRIMZI_RULES: &str = include_str!("strimzi-kafka-metrics.yaml");

/// What the JMX description of a Yammer metric's attribute is: `StandardMBean`'s default.
const YAMMER_DESCRIPTION: &str = "Attribute exposed for management";

/// A JMX exporter config that does not compile.
#[derive(Debug, thiserror::Error)]
pub enum JmxRulesError {
    #[error("invalid JMX exporter config")]
    Yaml {
        #[source]
        source: serde_norway::Error,
    },
    #[error("rule {index}: pattern {pattern:?} does not compile: {reason}")]
    Pattern {
        index: usize,
        pattern: String,
        reason: String,
    },
    #[error("rule {index}: {field} {text:?} of pattern {pattern:?}: {reason}")]
    Replacement {
        index: usize,
        pattern: Option<String>,
        field: &'static str,
        text: String,
        reason: String,
    },
    #[error("rule {index}: a rule with labels or help needs a name (pattern {pattern:?})")]
    LabelsOrHelpWithoutName {
        index: usize,
        pattern: Option<String>,
    },
    #[error("rule {index}: a rule with a name needs a pattern")]
    NameWithoutPattern { index: usize },
    #[error("{key}: {name:?} is not an object name pattern: {reason}")]
    ObjectName {
        key: &'static str,
        name: String,
        reason: &'static str,
    },
}

/// A compiled JMX exporter config and what it made of the MBeans it has seen; see the module
/// doc. Shared by the scrapes: [`Rules::render`] takes `&self`.
#[derive(Debug)]
pub(crate) struct Rules {
    config: Config,
    cache: Mutex<MatchCache>,
}

/// What the rules made of each attribute of each MBean seen, with the rendering that last saw
/// the MBean.
#[derive(Debug, Default)]
struct MatchCache {
    generation: u64,
    beans: HashMap<MBeanName, CachedBean>,
    layout: Layout,
}

/// The last rendering's text less its values, kept while a rendering has the same outcomes in
/// the same order (a steady broker): a repeated scrape then groups and sorts nothing.
#[derive(Debug, Default)]
struct Layout {
    /// The outcomes it was made for, in the order matched.
    points: Vec<Arc<Matched>>,
    /// Text (a family's HELP and TYPE, a sample's name and labels), then the value of the
    /// `usize`th point and a newline.
    pieces: Vec<(String, usize)>,
}

#[derive(Debug)]
struct CachedBean {
    generation: u64,
    /// `None` for an MBean the object-name filters leave out.
    attributes: Option<Vec<(String, Option<Arc<Matched>>)>>,
}

/// A rule's outcome for one attribute.
#[derive(Debug)]
struct Matched {
    /// The family name, sanitized.
    name: Arc<str>,
    metric_type: MetricType,
    help: Arc<str>,
    /// Sorted by name, unique, valid.
    labels: Vec<(String, String)>,
    /// The rule's `value`, replacing the attribute's.
    value: Option<f64>,
    value_factor: f64,
    /// The match string up to its last `:` (`domain<...><>Attribute`), for `_objectname`.
    object_name: String,
}

impl Rules {
    /// Strimzi's rules (`src/server/metrics/strimzi-kafka-metrics.yaml`).
    pub(crate) fn strimzi() -> Rules {
        match Rules::from_yaml(STRIMZI_RULES) {
            Ok(rules) => rules,
            // The file is part of the build, and a unit test compiles it.
            Err(error) => unreachable!("Strimzi's rules do not compile: {error}"),
        }
    }

    /// Compiles a JMX exporter YAML config.
    pub(crate) fn from_yaml(yaml: &str) -> Result<Rules, JmxRulesError> {
        Ok(Rules {
            config: Config::from_yaml(yaml)?,
            cache: Mutex::new(MatchCache::default()),
        })
    }

    /// The text exposition of `samples`.
    #[cfg(test)]
    pub(crate) fn render(&self, samples: &[MetricSample]) -> String {
        let mut out = String::new();
        self.render_into(samples, &mut out);
        out
    }

    /// [`Rules::render`], appending to `out`.
    pub(crate) fn render_into(&self, samples: &[MetricSample], out: &mut String) {
        let mut cache = lock(&self.cache);
        let points = self.match_samples(&mut cache, samples);
        let layout = &cache.layout;
        let same = layout.points.len() == points.len()
            && layout
                .points
                .iter()
                .zip(&points)
                .all(|(a, (b, _))| Arc::ptr_eq(a, b));
        if !same {
            cache.layout = Layout::new(&points);
        }
        for (text, i) in &cache.layout.pieces {
            out.push_str(text);
            write_sample_value(out, points[*i].1);
            out.push('\n');
        }
    }

    /// Every sample's attributes the rules keep, with their values.
    fn match_samples(
        &self,
        cache: &mut MatchCache,
        samples: &[MetricSample],
    ) -> Vec<(Arc<Matched>, f64)> {
        cache.generation += 1;
        let generation = cache.generation;
        let mut points = Vec::with_capacity(samples.len());
        for sample in samples {
            let attributes = described_attributes(&sample.reading);
            let bean = match cache.beans.get_mut(&sample.mbean) {
                Some(bean) => bean,
                None => {
                    let attributes = self.included(&sample.mbean).then(Vec::new);
                    cache
                        .beans
                        .entry(sample.mbean.clone())
                        .or_insert(CachedBean {
                            generation,
                            attributes,
                        })
                }
            };
            bean.generation = generation;
            let Some(cached) = bean.attributes.as_mut() else {
                continue;
            };
            let mut prefix = None;
            for (i, (name, value, description)) in attributes.iter().enumerate() {
                let hit = cached.get(i).filter(|(cached_name, _)| cached_name == name);
                let matched = match hit {
                    Some((_, matched)) => matched.clone(),
                    None => {
                        let prefix = prefix.get_or_insert_with(|| bean_prefix(&sample.mbean));
                        let matched = self
                            .match_attribute(&sample.mbean, prefix, name, *value, *description)
                            .map(Arc::new);
                        if i < cached.len() {
                            cached[i] = ((*name).to_string(), matched.clone());
                        } else {
                            cached.truncate(i);
                            cached.push(((*name).to_string(), matched.clone()));
                        }
                        matched
                    }
                };
                if let Some(matched) = matched {
                    let value = matched.value.unwrap_or(*value) * matched.value_factor;
                    points.push((matched, value));
                }
            }
            cached.truncate(attributes.len());
        }
        cache.beans.retain(|_, bean| bean.generation == generation);
        points
    }

    fn included(&self, mbean: &MBeanName) -> bool {
        let config = &self.config;
        (config.include.is_empty() || config.include.iter().any(|p| p.matches(mbean)))
            && !config.exclude.iter().any(|p| p.matches(mbean))
    }

    /// The first rule's outcome for one attribute, or none.
    fn match_attribute(
        &self,
        mbean: &MBeanName,
        prefix: &str,
        attribute: &str,
        value: f64,
        description: Option<&str>,
    ) -> Option<Matched> {
        let config = &self.config;
        let mut value_text = String::new();
        write_java_double(&mut value_text, value);
        // The match strings with the value and with `<cache>`, for the attribute as named and
        // in snake case (`Rule::variant`), each made once.
        let match_names: [String; 4] = std::array::from_fn(|variant| {
            let attribute = if variant & 2 != 0 {
                to_snake_and_lower_case(attribute)
            } else {
                attribute.to_string()
            };
            let shown_value = if variant & 1 != 0 {
                "<cache>"
            } else {
                &value_text
            };
            format!("{prefix}{attribute}: {shown_value}")
        });
        // One pass of each set says which rules match; only the first pays for captures.
        let mut matching = vec![false; config.rules.len()];
        for set in &config.sets {
            for i in set.set.matches(&match_names[set.variant]).iter() {
                matching[set.rules[i]] = true;
            }
        }
        for (index, rule) in config.rules.iter().enumerate() {
            let match_name = &match_names[rule.variant()];
            let captures = match &rule.pattern {
                Some(_) if !matching[index] => continue,
                Some(pattern) => pattern.captures(match_name),
                None => None,
            };
            // As the rule sees it (in snake case if it asks); HELP shows it as JMX names it.
            let rule_attribute =
                &match_name[prefix.len()..match_name.rfind(": ").unwrap_or(match_name.len())];
            let captures = captures.as_ref();
            let value = match &rule.value {
                Some(template) => Some(config::parse_java_double(
                    &template.to_string_with(captures),
                )?),
                None => None,
            };
            let object_name =
                match_name[..match_name.rfind(':').unwrap_or(match_name.len())].to_string();
            let default_help = || default_help(mbean, attribute, description);
            let Some(name_template) = &rule.name else {
                return Some(self.default_export(
                    mbean,
                    rule_attribute,
                    rule.metric_type,
                    default_help(),
                    value,
                    rule.value_factor,
                    object_name,
                ));
            };
            let mut name = safe_name(&name_template.to_string_with(captures));
            if name.is_empty() {
                return None;
            }
            if config.lowercase_output_name {
                name.make_ascii_lowercase();
            }
            let help = match &rule.help {
                Some(help) => help.to_string_with(captures),
                None => default_help(),
            };
            let mut labels = Vec::with_capacity(rule.labels.len());
            for (label_name, label_value) in &rule.labels {
                let mut label_name = safe_name(&label_name.to_string_with(captures));
                let label_value = label_value.to_string_with(captures);
                if config.lowercase_output_label_names {
                    label_name.make_ascii_lowercase();
                }
                if !label_name.is_empty() && !label_value.is_empty() {
                    labels.push((label_name, label_value));
                }
            }
            return Some(Matched::new(
                &name,
                rule.metric_type,
                help,
                labels,
                value,
                rule.value_factor,
                object_name,
            ));
        }
        None
    }

    /// A rule without a name: `domain_<first property's value>_attribute`, the other
    /// properties as labels.
    #[allow(clippy::too_many_arguments)]
    fn default_export(
        &self,
        mbean: &MBeanName,
        attribute: &str,
        metric_type: MetricType,
        help: String,
        value: Option<f64>,
        value_factor: f64,
        object_name: String,
    ) -> Matched {
        let mut name = mbean.domain.to_string();
        if let Some((_, first)) = mbean.properties.first() {
            name.push('_');
            name.push_str(first);
        }
        name.push('_');
        name.push_str(attribute);
        let mut name = safe_name(&name);
        if self.config.lowercase_output_name {
            name.make_ascii_lowercase();
        }
        let labels = mbean
            .properties
            .iter()
            .skip(1)
            .map(|(key, value)| {
                let mut key = safe_name(key);
                if self.config.lowercase_output_label_names {
                    key.make_ascii_lowercase();
                }
                (key, value.clone())
            })
            .collect();
        Matched::new(
            &name,
            metric_type,
            help,
            labels,
            value,
            value_factor,
            object_name,
        )
    }
}

impl Matched {
    fn new(
        name: &str,
        metric_type: MetricType,
        help: String,
        mut labels: Vec<(String, String)>,
        value: Option<f64>,
        value_factor: f64,
        object_name: String,
    ) -> Matched {
        // client_java sorts labels by name; the first of two with one name is kept (YAML key
        // order), and names it refuses are left out (see the module doc).
        labels.retain(|(name, _)| is_valid_label_name(name));
        labels.sort_by(|a, b| a.0.cmp(&b.0));
        labels.dedup_by(|b, a| a.0 == b.0);
        Matched {
            name: sanitize_metric_name(name).into(),
            metric_type,
            help: help.into(),
            labels,
            value,
            value_factor,
            object_name,
        }
    }
}

/// `domain<key1=value1, key2=value2><>`: the exporter's match string up to the attribute.
fn bean_prefix(mbean: &MBeanName) -> String {
    let mut prefix = String::with_capacity(64);
    prefix.push_str(mbean.domain);
    prefix.push('<');
    for (i, (key, value)) in mbean.properties.iter().enumerate() {
        if i > 0 {
            prefix.push_str(", ");
        }
        let _ = write!(prefix, "{key}={value}");
    }
    prefix.push_str("><>");
    prefix
}

/// `[description ]domain:name=<name>,type=<type>,attribute=<attribute>`, Java's `null` for a
/// missing key, the description left out when there is none or it is the attribute's name.
fn default_help(mbean: &MBeanName, attribute: &str, description: Option<&str>) -> String {
    let property = |key: &str| {
        mbean
            .properties
            .iter()
            .find(|(k, _)| *k == key)
            .map_or("null", |(_, v)| v.as_str())
    };
    let mut help = String::new();
    if let Some(description) = description.filter(|d| *d != attribute) {
        help.push_str(description);
        help.push(' ');
    }
    let _ = write!(
        help,
        "{}:name={},type={},attribute={attribute}",
        mbean.domain,
        property("name"),
        property("type"),
    );
    help
}

/// A reading's attributes with their JMX descriptions.
fn described_attributes(reading: &Reading) -> Vec<(&str, f64, Option<&str>)> {
    match reading {
        Reading::Attributes(attributes) => attributes
            .iter()
            .map(|a| (a.name.as_str(), a.value, a.description.as_deref()))
            .collect(),
        Reading::KafkaMetrics(_) => reading
            .attributes()
            .into_iter()
            .map(|(name, value)| (name, value, None))
            .collect(),
        Reading::Gauge(_) | Reading::Meter(_) | Reading::Histogram(_) | Reading::Timer(..) => {
            reading
                .attributes()
                .into_iter()
                .map(|(name, value)| (name, value, Some(YAMMER_DESCRIPTION)))
                .collect()
        }
    }
}

impl Layout {
    /// Groups the points into families and lays them out in the exporter's order.
    fn new(points: &[(Arc<Matched>, f64)]) -> Layout {
        let mut families: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, (matched, _)) in points.iter().enumerate() {
            families.entry(&matched.name).or_default().push(i);
        }
        let mut families: Vec<_> = families.into_iter().collect();
        families.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut pieces = Vec::with_capacity(points.len());
        for (name, mut members) in families {
            let matched = |i: usize| &points[i].0;
            let first = matched(members[0]);
            let metric_type = if members
                .iter()
                .all(|&i| matched(i).metric_type == first.metric_type)
            {
                first.metric_type
            } else {
                MetricType::Untyped
            };
            let (suffix, type_name) = match metric_type {
                MetricType::Counter => ("_total", "counter"),
                MetricType::Gauge => ("", "gauge"),
                MetricType::Untyped => ("", "untyped"),
            };
            let mut header = String::new();
            if !first.help.is_empty() {
                let _ = write!(header, "# HELP {name}{suffix} ");
                write_escaped_help(&mut header, &first.help);
                header.push('\n');
            }
            let _ = writeln!(header, "# TYPE {name}{suffix} {type_name}");
            // Labels as the exporter writes them: by name; `_objectname` added to every sample
            // of a family where two have the same labels.
            let labels = |i: usize| {
                matched(i)
                    .labels
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
            };
            // Stable: the first of two equal points stays first.
            members.sort_by(|&a, &b| label_order(labels(a), labels(b)));
            let unique = members
                .windows(2)
                .all(|w| label_order(labels(w[0]), labels(w[1])).is_ne());
            let mut lines: Vec<(Vec<(&str, &str)>, usize)> = members
                .iter()
                .map(|&i| {
                    let mut labels: Vec<(&str, &str)> = labels(i).collect();
                    if !unique {
                        let at = labels.partition_point(|(n, _)| *n < "_objectname");
                        labels.insert(at, ("_objectname", matched(i).object_name.as_str()));
                    }
                    (labels, i)
                })
                .collect();
            if !unique {
                lines.sort_by(|a, b| label_order(a.0.iter().copied(), b.0.iter().copied()));
                lines.dedup_by(|b, a| a.0 == b.0);
            }
            for (labels, i) in lines {
                let mut text = std::mem::take(&mut header);
                write_series(&mut text, name, suffix, &labels);
                pieces.push((text, i));
            }
        }
        Layout {
            points: points.iter().map(|(m, _)| m.clone()).collect(),
            pieces,
        }
    }
}

/// client_java's order of label sets: by their names, then by their values.
fn label_order<'a>(
    a: impl Iterator<Item = (&'a str, &'a str)> + Clone,
    b: impl Iterator<Item = (&'a str, &'a str)> + Clone,
) -> std::cmp::Ordering {
    a.clone()
        .map(|l| l.0)
        .cmp(b.clone().map(|l| l.0))
        .then_with(|| a.map(|l| l.1).cmp(b.map(|l| l.1)))
}

/// `name{label="value",...} `: a sample up to its value.
fn write_series(out: &mut String, name: &str, suffix: &str, labels: &[(&str, &str)]) {
    out.push_str(name);
    out.push_str(suffix);
    for (i, (label_name, label_value)) in labels.iter().enumerate() {
        out.push(if i == 0 { '{' } else { ',' });
        out.push_str(label_name);
        out.push_str("=\"");
        write_escaped_label_value(out, label_value);
        out.push('"');
    }
    if !labels.is_empty() {
        out.push('}');
    }
    out.push(' ');
}

/// Locks the cache; a panic while it was held leaves it consistent (at worst a stale entry).
fn lock(mutex: &Mutex<MatchCache>) -> MutexGuard<'_, MatchCache> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests;
