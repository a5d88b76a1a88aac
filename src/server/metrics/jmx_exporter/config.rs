//! The JMX exporter's YAML config, read and compiled once: the subset Kafka's rule files use
//! (`lowercaseOutputName`, `lowercaseOutputLabelNames`, `include`/`whitelistObjectNames`,
//! `exclude`/`blacklistObjectNames`, and `rules` with `pattern`, `name`, `type`, `labels`,
//! `value`, `valueFactor`, `help`, `attrNameSnakeCase`, `cache`). Other keys (`startDelaySeconds`,
//! `hostPort`, `ssl`, ...) concern the exporter's process, not its rendering, and are ignored.
//!
//! A pattern is Java regex syntax. It is compiled as the exporter compiles it,
//! `^.*(?:<pattern>).*$`, by the `regex` crate, whose leftmost-first matching picks the match
//! and the captures a backtracking engine (Java's) picks. The ASCII classes `\w \d \s \b` (and
//! their negations) are rewritten to their ASCII forms, which Java's are; what `regex` lacks
//! (backreferences, lookaround, possessive quantifiers, atomic groups, `\Q...\E`) is a config
//! error naming the rule. `$N` in `name`, `labels`, `help` and `value` follows Java's
//! `Matcher.appendReplacement` (the longest group number that exists; `\` escapes), checked
//! when the config is read (the exporter fails at the first scrape that matches).

use std::collections::BTreeMap;

use regex::{Regex, RegexSet};
use serde::Deserialize;

use super::JmxRulesError;
use super::object_name::ObjectNamePattern;

/// The Prometheus type a rule gives its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MetricType {
    Counter,
    Gauge,
    /// `UNTYPED` (the exporter's `UNKNOWN`), the default, and any other name.
    Untyped,
}

/// A `name`/`labels`/`help`/`value` text with its `$N` references resolved.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Template(Vec<Piece>);

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Group(usize),
}

impl Template {
    /// The text with each group's capture (or nothing, where the group took no part).
    pub(super) fn expand(&self, captures: Option<&regex::Captures<'_>>, out: &mut String) {
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Group(i) => {
                    if let Some(m) = captures.and_then(|c| c.get(*i)) {
                        out.push_str(m.as_str());
                    }
                }
            }
        }
    }

    pub(super) fn to_string_with(&self, captures: Option<&regex::Captures<'_>>) -> String {
        let mut out = String::new();
        self.expand(captures, &mut out);
        out
    }

    /// Parses `text` as Java's replacement syntax against `regex`'s groups.
    fn parse(text: &str, regex: Option<&Regex>) -> Result<Template, String> {
        let groups = regex.map_or(0, |r| r.captures_len() - 1);
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(escaped) => literal.push(escaped),
                    None => return Err("character to be escaped is missing".into()),
                },
                '$' => {
                    let group = match chars.peek() {
                        Some('{') => {
                            chars.next();
                            let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                            regex
                                .and_then(|r| r.capture_names().position(|n| n == Some(&name)))
                                .ok_or_else(|| format!("no group with name {{{name}}}"))?
                        }
                        Some(d) if d.is_ascii_digit() => {
                            let mut group = d.to_digit(10).unwrap_or(0) as usize;
                            chars.next();
                            while let Some(next) = chars.peek().and_then(|d| d.to_digit(10)) {
                                let longer = group * 10 + next as usize;
                                if longer > groups {
                                    break;
                                }
                                group = longer;
                                chars.next();
                            }
                            if group > groups {
                                return Err(format!("no group {group}"));
                            }
                            group
                        }
                        _ => return Err("illegal group reference".into()),
                    };
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Group(group));
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Template(pieces))
    }
}

/// One compiled rule.
#[derive(Debug)]
pub(super) struct Rule {
    /// `^.*(?:pattern).*$`; none matches everything.
    pub(super) pattern: Option<Regex>,
    pub(super) name: Option<Template>,
    pub(super) help: Option<Template>,
    /// `(name, value)` templates in the order of their YAML keys' (Java's `TreeMap`).
    pub(super) labels: Vec<(Template, Template)>,
    pub(super) value: Option<Template>,
    pub(super) value_factor: f64,
    pub(super) metric_type: MetricType,
    pub(super) attr_name_snake_case: bool,
    pub(super) cache: bool,
}

/// A whole config, compiled.
#[derive(Debug)]
pub(super) struct Config {
    pub(super) lowercase_output_name: bool,
    pub(super) lowercase_output_label_names: bool,
    /// Empty: every MBean.
    pub(super) include: Vec<ObjectNamePattern>,
    pub(super) exclude: Vec<ObjectNamePattern>,
    /// Never empty: a config without `rules` has one rule that matches everything.
    pub(super) rules: Vec<Rule>,
    /// The rules' patterns, in one set per form of the match string they see.
    pub(super) sets: Vec<PatternSet>,
}

/// The patterns of the rules that see one form of the match string ([`Rule::variant`]): one
/// pass over the string tells which of them match.
#[derive(Debug)]
pub(super) struct PatternSet {
    pub(super) variant: usize,
    pub(super) set: RegexSet,
    /// The index in [`Config::rules`] of each pattern of the set.
    pub(super) rules: Vec<usize>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawConfig {
    #[serde(default)]
    lowercase_output_name: bool,
    #[serde(default)]
    lowercase_output_label_names: bool,
    include_object_names: Option<Vec<String>>,
    whitelist_object_names: Option<Vec<String>>,
    exclude_object_names: Option<Vec<String>>,
    blacklist_object_names: Option<Vec<String>>,
    rules: Option<Vec<RawRule>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    pattern: Option<serde_norway::Value>,
    name: Option<serde_norway::Value>,
    value: Option<serde_norway::Value>,
    value_factor: Option<serde_norway::Value>,
    help: Option<serde_norway::Value>,
    #[serde(default)]
    attr_name_snake_case: bool,
    #[serde(default)]
    cache: bool,
    #[serde(rename = "type")]
    metric_type: Option<String>,
    labels: Option<BTreeMap<String, serde_norway::Value>>,
}

/// A YAML scalar as Java's `String.valueOf` of what SnakeYAML made of it.
fn scalar(value: &serde_norway::Value) -> Option<String> {
    match value {
        serde_norway::Value::String(s) => Some(s.clone()),
        serde_norway::Value::Number(n) => Some(n.to_string()),
        serde_norway::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl Config {
    pub(super) fn from_yaml(yaml: &str) -> Result<Config, JmxRulesError> {
        let raw: Option<RawConfig> =
            serde_norway::from_str(yaml).map_err(|source| JmxRulesError::Yaml { source })?;
        Config::from_raw(raw.unwrap_or_default())
    }

    fn from_raw(raw: RawConfig) -> Result<Config, JmxRulesError> {
        let patterns = |key: &'static str, names: Option<Vec<String>>| {
            names
                .unwrap_or_default()
                .iter()
                .map(|name| {
                    ObjectNamePattern::parse(name).map_err(|reason| JmxRulesError::ObjectName {
                        key,
                        name: name.clone(),
                        reason,
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let include = match raw.include_object_names {
            Some(names) => patterns("includeObjectNames", Some(names))?,
            None => patterns("whitelistObjectNames", raw.whitelist_object_names)?,
        };
        let exclude = match raw.exclude_object_names {
            Some(names) => patterns("excludeObjectNames", Some(names))?,
            None => patterns("blacklistObjectNames", raw.blacklist_object_names)?,
        };
        let rules = match raw.rules {
            None => vec![Rule::match_all()],
            Some(rules) => rules
                .into_iter()
                .enumerate()
                .map(|(index, raw)| Rule::compile(index, raw))
                .collect::<Result<_, _>>()?,
        };
        let mut sets = Vec::new();
        for variant in 0..4 {
            let (patterns, indexes): (Vec<&str>, Vec<usize>) = rules
                .iter()
                .enumerate()
                .filter(|(_, rule)| rule.variant() == variant)
                .filter_map(|(i, rule)| Some((rule.pattern.as_ref()?.as_str(), i)))
                .unzip();
            if patterns.is_empty() {
                continue;
            }
            let set = RegexSet::new(&patterns).map_err(|error| JmxRulesError::Pattern {
                index: indexes[0],
                pattern: patterns.join(" | "),
                reason: error.to_string(),
            })?;
            sets.push(PatternSet {
                variant,
                set,
                rules: indexes,
            });
        }
        Ok(Config {
            sets,
            lowercase_output_name: raw.lowercase_output_name,
            lowercase_output_label_names: raw.lowercase_output_label_names,
            include,
            exclude,
            rules,
        })
    }
}

impl Rule {
    /// Which form of the match string the rule sees: bit 0 `<cache>` for the value, bit 1 the
    /// attribute in snake case.
    pub(super) fn variant(&self) -> usize {
        usize::from(self.attr_name_snake_case) * 2 + usize::from(self.cache)
    }

    fn match_all() -> Rule {
        Rule {
            pattern: None,
            name: None,
            help: None,
            labels: Vec::new(),
            value: None,
            value_factor: 1.0,
            metric_type: MetricType::Untyped,
            attr_name_snake_case: false,
            cache: false,
        }
    }

    fn compile(index: usize, raw: RawRule) -> Result<Rule, JmxRulesError> {
        let source = raw.pattern.as_ref().and_then(scalar);
        let field_error =
            |field: &'static str, text: &str, reason: String| JmxRulesError::Replacement {
                index,
                pattern: source.clone(),
                field,
                text: text.to_string(),
                reason,
            };
        let pattern = match &source {
            None => None,
            Some(pattern) => {
                let translated = format!("^.*(?:{}).*$", translate_java_regex(pattern));
                Some(
                    Regex::new(&translated).map_err(|error| JmxRulesError::Pattern {
                        index,
                        pattern: pattern.clone(),
                        reason: error.to_string(),
                    })?,
                )
            }
        };
        let template = |field: &'static str, text: &str| {
            Template::parse(text, pattern.as_ref())
                .map_err(|reason| field_error(field, text, reason))
        };
        let name = raw.name.as_ref().and_then(scalar);
        let help = raw.help.as_ref().and_then(scalar);
        let mut labels = Vec::new();
        for (key, value) in raw.labels.iter().flatten() {
            let value = scalar(value).unwrap_or_default();
            labels.push((template("labels", key)?, template("labels", &value)?));
        }
        if (raw.labels.is_some() || help.is_some()) && name.is_none() {
            return Err(JmxRulesError::LabelsOrHelpWithoutName {
                index,
                pattern: source,
            });
        }
        if name.is_some() && pattern.is_none() {
            return Err(JmxRulesError::NameWithoutPattern { index });
        }
        let value = match raw.value.as_ref().and_then(scalar) {
            Some(text) if !text.is_empty() => Some(template("value", &text)?),
            _ => None,
        };
        // Java's Double.valueOf; a factor that does not parse leaves the default.
        let value_factor = raw
            .value_factor
            .as_ref()
            .and_then(scalar)
            .and_then(|f| parse_java_double(&f))
            .unwrap_or(1.0);
        let metric_type = match raw.metric_type.as_deref() {
            Some("COUNTER") => MetricType::Counter,
            Some("GAUGE") => MetricType::Gauge,
            _ => MetricType::Untyped,
        };
        Ok(Rule {
            name: name.map(|n| template("name", &n)).transpose()?,
            help: help.map(|h| template("help", &h)).transpose()?,
            labels,
            value,
            value_factor,
            metric_type,
            attr_name_snake_case: raw.attr_name_snake_case,
            cache: raw.cache,
            pattern,
        })
    }
}

/// Java's `Double.valueOf` for the forms a config or an expanded `value` holds: surrounding
/// whitespace, a trailing `d`/`f`, `Infinity` and `NaN` spelled Java's way.
pub(super) fn parse_java_double(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = t
        .strip_suffix(['d', 'D', 'f', 'F'])
        .filter(|rest| !rest.is_empty() && !rest.ends_with(['e', 'E']))
        .unwrap_or(t);
    let unsigned = t.trim_start_matches(['+', '-']);
    if unsigned
        .chars()
        .any(|c| c.is_ascii_alphabetic() && !matches!(c, 'e' | 'E'))
        && !matches!(unsigned, "Infinity" | "NaN")
    {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Rewrites the Java classes whose meaning differs in `regex` (Unicode there, ASCII in Java)
/// to their ASCII forms; everything else passes through to `regex`'s own parser.
fn translate_java_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut in_class = 0usize;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(escaped) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let class = match escaped {
                    'w' => Some("word"),
                    'W' => Some("^word"),
                    'd' => Some("digit"),
                    'D' => Some("^digit"),
                    's' => Some("space"),
                    'S' => Some("^space"),
                    _ => None,
                };
                match (class, escaped) {
                    (Some(class), _) if in_class > 0 => {
                        out.push_str("[:");
                        out.push_str(class);
                        out.push_str(":]");
                    }
                    (Some(class), _) => {
                        out.push_str("[[:");
                        out.push_str(class);
                        out.push_str(":]]");
                    }
                    (None, 'b' | 'B') if in_class == 0 => {
                        out.push_str("(?-u:\\");
                        out.push(escaped);
                        out.push(')');
                    }
                    _ => {
                        out.push('\\');
                        out.push(escaped);
                    }
                }
            }
            '[' => {
                in_class += 1;
                out.push(c);
                // A `]` or `^]` just after `[` is literal in both syntaxes.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            ']' if in_class > 0 => {
                in_class -= 1;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_classes_become_ascii() {
        assert_eq!(
            translate_java_regex(r"kafka.(\w+)<type=(.+)><>(\d+)th[\w-]\b"),
            r"kafka.([[:word:]]+)<type=(.+)><>([[:digit:]]+)th[[:word:]-](?-u:\b)"
        );
        let re = Regex::new(&format!("^.*(?:{}).*$", translate_java_regex(r"x(\w+)y"))).unwrap();
        assert!(!re.is_match("xéy"), "Java's \\w is ASCII");
        assert_eq!(&re.captures("x_a9y").unwrap()[1], "_a9");
    }

    #[test]
    fn replacements_follow_appendreplacement() {
        let re = Regex::new("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)").unwrap();
        let caps = re.captures("abcdefghijk").unwrap();
        let t = |s: &str| {
            Template::parse(s, Some(&re))
                .unwrap()
                .to_string_with(Some(&caps))
        };
        assert_eq!(t("$1_$2"), "a_b");
        assert_eq!(t("$10$11"), "jk");
        let re3 = Regex::new("(a)(b)(c)").unwrap();
        let caps3 = re3.captures("abc").unwrap();
        let t3 = |s: &str| {
            Template::parse(s, Some(&re3))
                .unwrap()
                .to_string_with(Some(&caps3))
        };
        assert_eq!(t3("$10"), "a0", "the longest group number that exists");
        assert_eq!(t3(r"\$1 \\ 0.$3"), r"$1 \ 0.c");
        assert!(Template::parse("$4", Some(&re3)).is_err());
        assert!(Template::parse("$x", Some(&re3)).is_err());
        assert!(Template::parse("a\\", Some(&re3)).is_err());
    }

    #[test]
    fn java_doubles() {
        assert_eq!(parse_java_double(" 1.5 "), Some(1.5));
        assert_eq!(parse_java_double("2d"), Some(2.0));
        assert_eq!(parse_java_double("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_java_double("1e3"), Some(1000.0));
        assert_eq!(parse_java_double("inf"), None);
        assert_eq!(parse_java_double("abc"), None);
    }
}
