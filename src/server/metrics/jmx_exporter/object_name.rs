//! JMX `ObjectName` patterns, as `includeObjectNames`/`excludeObjectNames` hold them and the
//! exporter hands them to `MBeanServer.queryMBeans`: `domain:key=value,...`, where the domain
//! and each value may hold the wildcards `*` and `?`, and a final `*` (`type=x,*`, or `*` alone)
//! lets a name have other keys besides. Without it, a name must have exactly the keys given.

use crate::metrics::MBeanName;

#[derive(Debug, Clone, PartialEq)]
pub(super) struct ObjectNamePattern {
    domain: String,
    properties: Vec<(String, String)>,
    /// A trailing `*`: other keys allowed.
    open: bool,
}

impl ObjectNamePattern {
    /// Parses `name`; the error says what is wrong, in `MalformedObjectNameException`'s terms.
    pub(super) fn parse(name: &str) -> Result<ObjectNamePattern, &'static str> {
        let (domain, list) = name
            .split_once(':')
            .ok_or("domain part must be specified")?;
        if domain.contains(['\n']) {
            return Err("invalid character in the domain");
        }
        let mut properties = Vec::new();
        let mut open = false;
        for part in split_properties(list) {
            if part == "*" {
                if open {
                    return Err("cannot have several '*' characters in pattern property list");
                }
                open = true;
                continue;
            }
            let (key, value) = part
                .split_once('=')
                .ok_or("key properties cannot be empty")?;
            if key.is_empty() || key.contains(['*', '?', ':', '"']) {
                return Err("invalid key in the property list");
            }
            if properties.iter().any(|(k, _)| k == key) {
                return Err("key already defined");
            }
            if value.is_empty() {
                return Err("invalid value in the property list");
            }
            properties.push((key.to_string(), value.to_string()));
        }
        if properties.is_empty() && !open {
            return Err("key properties cannot be empty");
        }
        Ok(ObjectNamePattern {
            domain: domain.to_string(),
            properties,
            open,
        })
    }

    pub(super) fn matches(&self, name: &MBeanName) -> bool {
        if !wildcard_match(&self.domain, name.domain) {
            return false;
        }
        if !self.open && self.properties.len() != name.properties.len() {
            return false;
        }
        self.properties.iter().all(|(key, pattern)| {
            name.properties
                .iter()
                .find(|(k, _)| k == key)
                .is_some_and(|(_, value)| wildcard_match(pattern, value))
        })
    }
}

/// Splits a key property list on the commas outside quoted values.
fn split_properties(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in list.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts
}

/// JMX's wildcard match: `*` any run of characters, `?` any one.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bean(domain: &'static str, properties: &[(&'static str, &str)]) -> MBeanName {
        MBeanName {
            domain,
            properties: properties
                .iter()
                .map(|(k, v)| (*k, v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn patterns_match_as_query_mbeans_does() {
        let p = ObjectNamePattern::parse("kafka.consumer:type=*,client-id=*").unwrap();
        assert!(p.matches(&bean(
            "kafka.consumer",
            &[("type", "x"), ("client-id", "c")]
        )));
        assert!(!p.matches(&bean(
            "kafka.consumer",
            &[("type", "x"), ("client-id", "c"), ("node-id", "1")]
        )));
        let p = ObjectNamePattern::parse("kafka.*:type=kafka-metrics-count,*").unwrap();
        assert!(p.matches(&bean("kafka.server", &[("type", "kafka-metrics-count")])));
        assert!(!p.matches(&bean("kafkax", &[("type", "kafka-metrics-count")])));
        let p = ObjectNamePattern::parse("kafka.admin.client:*").unwrap();
        assert!(p.matches(&bean("kafka.admin.client", &[("type", "a"), ("b", "c")])));
        assert!(!p.matches(&bean("kafka.admin", &[("type", "a")])));
        let p = ObjectNamePattern::parse("k:name=a?c").unwrap();
        assert!(p.matches(&bean("k", &[("name", "abc")])));
        assert!(!p.matches(&bean("k", &[("name", "abbc")])));
        assert!(ObjectNamePattern::parse("nodomain").is_err());
        assert!(ObjectNamePattern::parse("d:").is_err());
    }
}
