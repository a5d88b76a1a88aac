//! Scraping a Prometheus `/metrics` endpoint (kcli's `kcli.metrics.listener`, or the JMX
//! exporter javaagent on a Kafka broker) and reading its text exposition: [`get_metrics`] does
//! the HTTP GET (a chunked body is decoded), [`Exposition::parse`] turns the text into its
//! families, each with its `# TYPE` and its samples as (name, labels, value). [`samples`] and
//! [`families`] are the two flat views the single-broker tests compare with.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One sample line: `name{label="value",...} value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    /// Label name to its (unescaped) value.
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Sample {
    /// The label names, comma-separated in order, as `{a,b}` (`{}` for none).
    pub fn label_names(&self) -> String {
        let names: Vec<&str> = self.labels.keys().map(String::as_str).collect();
        format!("{{{}}}", names.join(","))
    }
}

/// A family: its `# TYPE` (`untyped` when none was given) and its samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Family {
    pub kind: String,
    pub samples: Vec<Sample>,
}

impl Family {
    /// The distinct label-name sets of its samples, each as `{a,b}`.
    pub fn label_sets(&self) -> BTreeSet<String> {
        self.samples.iter().map(Sample::label_names).collect()
    }
}

/// A parsed scrape: family name (as its `# TYPE` line names it) to the family.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    pub families: BTreeMap<String, Family>,
}

impl Exposition {
    /// Parses the text format (0.0.4). A sample belongs to the family of its own name (the JMX
    /// exporter's rules make no summaries or histograms: a Yammer histogram's count and its
    /// quantiles are families of their own), `untyped` when no `# TYPE` line names it. Panics
    /// on a line it cannot read: a malformed scrape is a failure, not missing data.
    pub fn parse(text: &str) -> Exposition {
        let mut out = Exposition::default();
        for line in text.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest
                    .split_once(' ')
                    .unwrap_or_else(|| panic!("bad TYPE line: {line}"));
                out.families.entry(name.to_string()).or_default().kind = kind.to_string();
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let sample = parse_sample(line).unwrap_or_else(|| panic!("bad sample line: {line}"));
            let family = sample.name.clone();
            let entry = out.families.entry(family).or_default();
            if entry.kind.is_empty() {
                entry.kind = "untyped".to_string();
            }
            entry.samples.push(sample);
        }
        out
    }

    /// Every sample of family `name`; empty when it is not served.
    pub fn samples_of(&self, name: &str) -> &[Sample] {
        self.families
            .get(name)
            .map_or(&[], |f| f.samples.as_slice())
    }

    /// The value of the sample of `name` whose labels are exactly `labels`, if served.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.samples_of(name)
            .iter()
            .find(|s| {
                s.labels.len() == labels.len()
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.value)
    }
}

/// `name{labels}` or `name`, then a value (and an optional timestamp, ignored).
fn parse_sample(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    let mut labels = BTreeMap::new();
    let mut rest = &line[name_end..];
    if let Some(after) = rest.strip_prefix('{') {
        let mut chars = after.char_indices().peekable();
        let end;
        loop {
            // Skip separators (a trailing comma is allowed by the format).
            while chars.peek().is_some_and(|(_, c)| *c == ',' || *c == ' ') {
                chars.next();
            }
            let (start, c) = *chars.peek()?;
            if c == '}' {
                end = start + 1;
                break;
            }
            let eq = after[start..].find('=')? + start;
            let label = after[start..eq].trim().to_string();
            while chars.peek().is_some_and(|(i, _)| *i <= eq) {
                chars.next();
            }
            if chars.next()?.1 != '"' {
                return None;
            }
            let mut value = String::new();
            loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        other => value.push(other),
                    },
                    other => value.push(other),
                }
            }
            labels.insert(label, value);
        }
        rest = &after[end..];
    }
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    Some(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// `GET /metrics` on 127.0.0.1:`port`: the status line and the body (dechunked); `None` when
/// nothing answers or the answer is cut short.
pub fn get_metrics(port: u16, limit: Duration) -> Option<(String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(limit)).ok()?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: kcli\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n")?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((head.lines().next()?.to_string(), body))
}

/// A scrape of 127.0.0.1:`port`'s `/metrics`, parsed; `None` unless it answered 200.
pub fn scrape(port: u16) -> Option<Exposition> {
    let (status, body) = get_metrics(port, Duration::from_secs(30))?;
    (status.split(' ').nth(1) == Some("200")).then(|| Exposition::parse(&body))
}

/// A chunked HTTP/1.1 body, decoded.
pub fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

/// Every sample: `name{labels}` as the text has it, to its value.
pub fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_string(), value.parse::<f64>().unwrap())
        })
        .collect()
}

/// Each family's TYPE, and the label-name sets of its samples (`a,b`, without braces).
pub fn families(text: &str) -> BTreeMap<String, (String, BTreeSet<String>)> {
    Exposition::parse(text)
        .families
        .into_iter()
        .map(|(name, family)| {
            let sets = family
                .samples
                .iter()
                .map(|s| s.labels.keys().cloned().collect::<Vec<_>>().join(","))
                .collect();
            (name, (family.kind, sets))
        })
        .collect()
}

#[test]
fn exposition_parses_types_labels_and_escapes() {
    let text = "# HELP a_total help\n# TYPE a_total counter\na_total 3.0\n\
                a_total{topic=\"t\",} 2.0\n# TYPE q gauge\nq{quantile=\"0.50\",request=\"Pro\\\"duce\"} 1.5\n\
                loose{x=\"a,b\"} +Inf\n";
    let e = Exposition::parse(text);
    assert_eq!(e.families["a_total"].kind, "counter");
    assert_eq!(e.value("a_total", &[]), Some(3.0));
    assert_eq!(e.value("a_total", &[("topic", "t")]), Some(2.0));
    assert_eq!(
        e.families["a_total"].label_sets(),
        BTreeSet::from(["{}".to_string(), "{topic}".to_string()])
    );
    assert_eq!(
        e.value("q", &[("quantile", "0.50"), ("request", "Pro\"duce")]),
        Some(1.5)
    );
    assert_eq!(e.families["loose"].kind, "untyped");
    assert_eq!(e.value("loose", &[("x", "a,b")]), Some(f64::INFINITY));
    assert_eq!(e.value("missing", &[]), None);
}
