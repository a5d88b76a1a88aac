//! The message-spec language of Kafka's generator, parsed: `//` comments stripped, then JSON
//! read into [`Spec`], [`Field`] and [`StructDef`], with version ranges resolved.

use serde_json::Value;
use std::path::Path;

/// An inclusive version range; `none` is empty (`min > max`). Open-ended `N+` has max
/// `i16::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    pub min: i16,
    pub max: i16,
}

impl Versions {
    pub const NONE: Versions = Versions { min: 1, max: 0 };

    pub fn parse(s: &str) -> Versions {
        let s = s.trim();
        if s == "none" {
            Versions::NONE
        } else if let Some(a) = s.strip_suffix('+') {
            Versions {
                min: num(a),
                max: i16::MAX,
            }
        } else if let Some((a, b)) = s.split_once('-') {
            Versions {
                min: num(a),
                max: num(b),
            }
        } else {
            let v = num(s);
            Versions { min: v, max: v }
        }
    }

    pub fn is_empty(self) -> bool {
        self.min > self.max
    }

    pub fn intersect(self, o: Versions) -> Versions {
        Versions {
            min: self.min.max(o.min),
            max: self.max.min(o.max),
        }
    }

    /// The versions of `self` before `o` starts (`o` is open-ended).
    pub fn before(self, o: Versions) -> Versions {
        if o.is_empty() {
            self
        } else {
            Versions {
                min: self.min,
                max: self.max.min(o.min - 1),
            }
        }
    }

    /// A Rust condition on `v` that holds for exactly the versions of `self` among `ctx`:
    /// `None` when it always holds there.
    pub fn cond(self, ctx: Versions) -> Option<String> {
        let r = self.intersect(ctx);
        if r.is_empty() {
            return Some("false".into());
        }
        let lo = (r.min > ctx.min).then(|| format!("v >= {}", r.min));
        let hi = (r.max < ctx.max).then(|| format!("v <= {}", r.max));
        match (lo, hi) {
            (None, None) => None,
            (Some(a), None) | (None, Some(a)) => Some(a),
            (Some(_), Some(_)) if r.min == r.max => Some(format!("v == {}", r.min)),
            (Some(_), Some(_)) => Some(format!("({}..={}).contains(&v)", r.min, r.max)),
        }
    }

    /// The negation of [`Versions::cond`]: `None` when the range is empty among `ctx` (the
    /// condition never holds, so its negation always does).
    pub fn neg_cond(self, ctx: Versions) -> Option<String> {
        let r = self.intersect(ctx);
        if r.is_empty() {
            return None;
        }
        let lo = (r.min > ctx.min).then(|| format!("v < {}", r.min));
        let hi = (r.max < ctx.max).then(|| format!("v > {}", r.max));
        match (lo, hi) {
            (None, None) => Some("false".into()),
            (Some(a), None) | (None, Some(a)) => Some(a),
            (Some(_), Some(_)) if r.min == r.max => Some(format!("v != {}", r.min)),
            (Some(_), Some(_)) => Some(format!("!({}..={}).contains(&v)", r.min, r.max)),
        }
    }

    /// [`Versions::cond`] as an expression (`true` when it always holds).
    pub fn expr(self, ctx: Versions) -> String {
        self.cond(ctx).unwrap_or_else(|| "true".into())
    }
}

fn num(s: &str) -> i16 {
    s.trim()
        .parse()
        .unwrap_or_else(|_| panic!("bad version number {s:?}"))
}

#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub ty: String,
    pub versions: Versions,
    pub nullable: Versions,
    pub tagged: Versions,
    pub tag: Option<u32>,
    pub default: Option<String>,
    pub ignorable: bool,
    pub flexible: Option<Versions>,
    pub about: String,
    pub fields: Option<Vec<Field>>,
    pub map_key: bool,
    pub entity_type: Option<String>,
}

#[derive(Debug, Clone)]
pub struct StructDef {
    pub name: String,
    pub versions: Versions,
    pub fields: Vec<Field>,
    pub about: String,
}

#[derive(Debug, Clone)]
pub struct Spec {
    /// Path relative to the specs directory (`clients/ProduceRequest.json`).
    pub file: String,
    pub kind: String,
    pub name: String,
    pub api_key: Option<i16>,
    pub valid: Versions,
    pub flexible: Versions,
    pub deprecated: Option<Versions>,
    pub listeners: Vec<String>,
    pub latest_unstable: bool,
    pub fields: Vec<Field>,
    pub common: Vec<StructDef>,
}

/// Removes `//` comments that are outside JSON strings.
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut escaped = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '/' && chars.peek() == Some(&'/') {
            for c in chars.by_ref() {
                if c == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else {
            if c == '"' {
                in_str = true;
            }
            out.push(c);
        }
    }
    out
}

fn s(v: &Value, key: &str) -> Option<String> {
    v.get(key).map(|x| match x {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    })
}

fn versions(v: &Value, key: &str) -> Versions {
    s(v, key).map_or(Versions::NONE, |x| Versions::parse(&x))
}

fn parse_field(v: &Value, ctx: &str) -> Field {
    let name = s(v, "name").unwrap_or_else(|| panic!("{ctx}: field without a name"));
    let ty = s(v, "type").unwrap_or_else(|| panic!("{ctx}: {name} has no type"));
    let fields = v
        .get("fields")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|f| parse_field(f, ctx)).collect());
    let known = [
        "name",
        "type",
        "versions",
        "nullableVersions",
        "taggedVersions",
        "tag",
        "default",
        "ignorable",
        "flexibleVersions",
        "about",
        "fields",
        "mapKey",
        "entityType",
        "zeroCopy",
    ];
    if let Some(obj) = v.as_object() {
        for k in obj.keys() {
            assert!(
                known.contains(&k.as_str()),
                "{ctx}: {name} has unknown attribute {k}"
            );
        }
    }
    let tagged = versions(v, "taggedVersions");
    assert!(
        tagged.is_empty() == v.get("tag").is_none(),
        "{ctx}: {name} must have both tag and taggedVersions, or neither"
    );
    Field {
        versions: versions(v, "versions"),
        nullable: versions(v, "nullableVersions"),
        tagged: versions(v, "taggedVersions"),
        // Tags appear both as numbers and as strings ("tag": "0").
        tag: s(v, "tag").map(|t| t.parse().unwrap_or_else(|_| panic!("{ctx}: bad tag {t:?}"))),
        default: s(v, "default"),
        ignorable: v.get("ignorable").and_then(Value::as_bool).unwrap_or(false),
        flexible: s(v, "flexibleVersions").map(|x| Versions::parse(&x)),
        about: s(v, "about").unwrap_or_default(),
        fields,
        map_key: v.get("mapKey").and_then(Value::as_bool).unwrap_or(false),
        entity_type: s(v, "entityType"),
        name,
        ty,
    }
}

pub fn parse_spec(root: &Path, rel: &str) -> Spec {
    let text = std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let v: Value = serde_json::from_str(&strip_comments(&text))
        .unwrap_or_else(|e| panic!("{rel}: invalid JSON after stripping comments: {e}"));
    let fields = v["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("{rel}: no fields"))
        .iter()
        .map(|f| parse_field(f, rel))
        .collect();
    let common = v
        .get("commonStructs")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| StructDef {
                    name: s(c, "name").unwrap_or_default(),
                    versions: versions(c, "versions"),
                    fields: c["fields"]
                        .as_array()
                        .map(|f| f.iter().map(|f| parse_field(f, rel)).collect())
                        .unwrap_or_default(),
                    about: String::new(),
                })
                .collect()
        })
        .unwrap_or_default();
    let flexible = versions(&v, "flexibleVersions");
    assert!(
        flexible.is_empty() || flexible.max == i16::MAX,
        "{rel}: flexibleVersions must be N+ or none"
    );
    Spec {
        file: rel.to_string(),
        kind: s(&v, "type").unwrap_or_default(),
        name: s(&v, "name").unwrap_or_default(),
        api_key: v.get("apiKey").and_then(Value::as_i64).map(|k| k as i16),
        valid: versions(&v, "validVersions"),
        flexible,
        deprecated: s(&v, "deprecatedVersions").map(|x| Versions::parse(&x)),
        listeners: v
            .get("listeners")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
        latest_unstable: v
            .get("latestVersionUnstable")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        fields,
        common,
    }
}

/// Every spec file under `root`, sorted by path.
pub fn read_all(root: &Path) -> Vec<Spec> {
    let mut rels = Vec::new();
    for dir in ["clients", "group-coordinator", "transaction-coordinator"] {
        let entries = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.join(dir).display()));
        for e in entries {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") {
                rels.push(format!("{dir}/{name}"));
            }
        }
    }
    rels.sort();
    rels.iter().map(|r| parse_spec(root, r)).collect()
}

/// `TopicProduceData` → `topic_produce_data`.
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1);
            let boundary = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase()));
            if boundary {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A field name as a Rust identifier (keywords become raw identifiers).
pub fn field_ident(name: &str) -> String {
    let s = snake(name);
    const KEYWORDS: &[&str] = &[
        "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
        "return", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
        "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
        "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
    ];
    if KEYWORDS.contains(&s.as_str()) {
        format!("r#{s}")
    } else {
        s
    }
}
