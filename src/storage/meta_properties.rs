//! `meta.properties` of a log dir: which cluster and broker the directory belongs to, as Kafka
//! 3.9's `MetaProperties` and `PropertiesUtils`, in `java.util.Properties` text format.
//!
//! Kafka writes the file with `Properties.store(writer, "")` on Java 17, so it reads
//!
//! ```text
//! #
//! #Sat Nov 30 01:15:26 UTC 2024
//! broker.id=1
//! version=0
//! cluster.id=9dYdrBsQR0S1xUb3NrJ2bA
//! ```
//!
//! with the keys in the hash order of Java 17's `Properties` (checked against a real JVM:
//! `broker.id`/`node.id`, `directory.id`, `version`, `cluster.id`), values escaped as `store`
//! escapes them, and UTF-8 text. Kafka reads it back with `Properties.load(InputStream)`, which
//! decodes ISO-8859-1; so do we, accepting comments, blank lines, continuation lines and any
//! key order.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cluster::utc::UtcDateTime;
use crate::storage::StorageError;
use crate::storage::checkpoint_file::write_atomically;
use crate::storage::partition_metadata::TopicId;

/// The file's name inside a log dir.
pub(crate) const META_PROPERTIES_FILENAME: &str = "meta.properties";

const VERSION_PROP: &str = "version";
const CLUSTER_ID_PROP: &str = "cluster.id";
const BROKER_ID_PROP: &str = "broker.id";
const NODE_ID_PROP: &str = "node.id";
const DIRECTORY_ID_PROP: &str = "directory.id";

/// The file's version: 0 is ZooKeeper mode (`broker.id`, every field optional), 1 is KRaft
/// (`node.id` and `cluster.id` required).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetaPropertiesVersion {
    V0,
    V1,
}

impl MetaPropertiesVersion {
    pub(crate) fn number(self) -> i32 {
        match self {
            MetaPropertiesVersion::V0 => 0,
            MetaPropertiesVersion::V1 => 1,
        }
    }
}

/// The contents of one log dir's `meta.properties`.
///
/// Invariants (Kafka's `MetaProperties.Builder.build`): a V1 file has `cluster_id` and
/// `node_id`; `broker_id` is only written for V0 and `node_id` only for V1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MetaProperties {
    pub version: MetaPropertiesVersion,
    /// `broker.id`, V0 only.
    pub broker_id: Option<i32>,
    /// `node.id`, V1 only.
    pub node_id: Option<i32>,
    pub cluster_id: Option<String>,
    /// `directory.id` (a Kafka `Uuid`), written by 3.7+ brokers in migration or KRaft mode.
    pub directory_id: Option<TopicId>,
}

impl MetaProperties {
    /// A ZooKeeper-mode (V0) file for `broker_id` in `cluster_id`, as a ZK broker writes it.
    pub(crate) fn zk(broker_id: i32, cluster_id: impl Into<String>) -> Self {
        Self {
            version: MetaPropertiesVersion::V0,
            broker_id: Some(broker_id),
            node_id: None,
            cluster_id: Some(cluster_id.into()),
            directory_id: None,
        }
    }

    /// The path of the file in log dir `dir`.
    pub(crate) fn path(dir: &Path) -> PathBuf {
        dir.join(META_PROPERTIES_FILENAME)
    }

    /// Reads `dir/meta.properties`; `None` when the file does not exist.
    pub(crate) fn read(dir: &Path) -> Result<Option<Self>, StorageError> {
        let path = Self::path(dir);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StorageError::io(&path, e)),
        };
        let malformed = |reason: String| StorageError::MalformedFile {
            path: path.clone(),
            reason,
        };
        // ISO-8859-1, as `Properties.load(InputStream)`: every byte is one char.
        let text: String = bytes.iter().map(|&b| char::from(b)).collect();
        let props = load_properties(&text).map_err(malformed)?;
        Self::from_properties(&props).map(Some).map_err(malformed)
    }

    fn from_properties(props: &HashMap<String, String>) -> Result<Self, String> {
        let version_str = props.get(VERSION_PROP).map_or("0", String::as_str);
        let version = match version_str.trim().parse::<i32>() {
            Ok(0) => MetaPropertiesVersion::V0,
            Ok(1) => MetaPropertiesVersion::V1,
            Ok(n) => return Err(format!("unknown meta.properties version number {n}")),
            Err(_) => {
                return Err(format!(
                    "invalid meta.properties version string '{version_str}'"
                ));
            }
        };
        let required_int = |key: &str| -> Result<i32, String> {
            let value = props
                .get(key)
                .ok_or_else(|| format!("failed to find {key}"))?;
            value
                .parse()
                .map_err(|_| format!("unable to read {key} as a base-10 number"))
        };
        let (broker_id, node_id) = match version {
            MetaPropertiesVersion::V0 if props.contains_key(BROKER_ID_PROP) => {
                (Some(required_int(BROKER_ID_PROP)?), None)
            }
            MetaPropertiesVersion::V0 => (None, None),
            MetaPropertiesVersion::V1 => (None, Some(required_int(NODE_ID_PROP)?)),
        };
        let cluster_id = props.get(CLUSTER_ID_PROP).cloned();
        let directory_id = match props.get(DIRECTORY_ID_PROP) {
            Some(s) => Some(
                s.parse::<TopicId>()
                    .map_err(|e| format!("unable to read {DIRECTORY_ID_PROP} as a Uuid: {e}"))?,
            ),
            None => None,
        };
        if version == MetaPropertiesVersion::V1 && cluster_id.is_none() {
            return Err("cluster.id was not found".into());
        }
        Ok(Self {
            version,
            broker_id,
            node_id,
            cluster_id,
            directory_id,
        })
    }

    /// The `key=value` pairs Kafka's `toProperties` sets, in the order Java 17's `store`
    /// writes them.
    fn to_properties(&self) -> Result<Vec<(&'static str, String)>, StorageError> {
        let mut props = Vec::new();
        match self.version {
            MetaPropertiesVersion::V0 => {
                if let Some(id) = self.broker_id {
                    props.push((BROKER_ID_PROP, id.to_string()));
                }
            }
            MetaPropertiesVersion::V1 => {
                let (Some(id), Some(_)) = (self.node_id, &self.cluster_id) else {
                    return Err(StorageError::InvalidArgument {
                        reason: "a version 1 meta.properties needs node.id and cluster.id".into(),
                    });
                };
                props.push((NODE_ID_PROP, id.to_string()));
            }
        }
        if let Some(id) = self.directory_id {
            props.push((DIRECTORY_ID_PROP, id.to_string()));
        }
        props.push((VERSION_PROP, self.version.number().to_string()));
        if let Some(id) = &self.cluster_id {
            props.push((CLUSTER_ID_PROP, id.clone()));
        }
        Ok(props)
    }

    /// Writes `dir/meta.properties` atomically (temp file, fsync, rename, directory fsync), as
    /// Kafka's `writePropertiesFile(.., fsync = true)`.
    pub(crate) fn write(&self, dir: &Path) -> Result<(), StorageError> {
        let text = store_properties(&self.to_properties()?, SystemTime::now());
        write_atomically(&Self::path(dir), text.as_bytes())
    }
}

/// `Properties.store(writer, "")`: an empty comment line, the date line, then `key=value` lines.
fn store_properties(props: &[(&str, String)], now: SystemTime) -> String {
    let mut out = format!("#\n#{}\n", java_date_utc(now));
    for (key, value) in props {
        escape_into(&mut out, key, true);
        out.push('=');
        escape_into(&mut out, value, false);
        out.push('\n');
    }
    out
}

/// `Properties.saveConvert` with `escUnicode = false` (the `Writer` form of `store`).
fn escape_into(out: &mut String, s: &str, is_key: bool) {
    for (i, c) in s.chars().enumerate() {
        match c {
            ' ' if i == 0 || is_key => out.push_str("\\ "),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
}

/// `new Date().toString()` in UTC: `EEE MMM dd HH:mm:ss zzz yyyy`.
fn java_date_utc(t: SystemTime) -> String {
    let ms = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    };
    UtcDateTime::from_unix_ms(ms).to_java_date()
}

/// `Properties.load`: natural lines end at `\n`, `\r` or `\r\n`; leading ` \t\f` is skipped;
/// `#`/`!` lines are comments; an odd number of trailing backslashes continues the line; the
/// key ends at the first unescaped `=`, `:` or whitespace; escapes `\t \n \r \f \uXXXX` are
/// decoded and any other escaped char stands for itself. Later keys win. Shared with the broker's
/// `server.properties` reader (the `config` module), which is the same format.
pub(crate) fn load_properties(text: &str) -> Result<HashMap<String, String>, String> {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\u{c}');
    let mut props = HashMap::new();
    let mut lines = crate::storage::checkpoint_file::java_lines(text);
    while let Some(first) = lines.next() {
        let first = first.trim_start_matches(is_ws);
        if first.is_empty() || first.starts_with(['#', '!']) {
            continue;
        }
        let mut logical = String::new();
        let mut current = first;
        loop {
            let trailing = current.len() - current.trim_end_matches('\\').len();
            if trailing % 2 == 1 {
                logical.push_str(&current[..current.len() - 1]);
                match lines.next() {
                    Some(next) => current = next.trim_start_matches(is_ws),
                    None => break,
                }
            } else {
                logical.push_str(current);
                break;
            }
        }
        let (key, value) = split_key_value(&logical);
        props.insert(unescape(key)?, unescape(value)?);
    }
    Ok(props)
}

fn split_key_value(line: &str) -> (&str, &str) {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\u{c}');
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' => {
                return (&line[..i], line[i + 1..].trim_start_matches(is_ws));
            }
            c if is_ws(c) => {
                let rest = line[i..].trim_start_matches(is_ws);
                let rest = rest
                    .strip_prefix(['=', ':'])
                    .map_or(rest, |r| r.trim_start_matches(is_ws));
                return (&line[..i], rest);
            }
            _ => {}
        }
    }
    (line, "")
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .ok_or_else(|| "malformed \\uxxxx encoding".to_string())?;
                // Lone surrogates cannot be a Rust char; Kafka's values never hold them.
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn dates_match_java() {
        // Reference strings printed by `new Date(ms).toString()` on OpenJDK 17 with TZ=UTC.
        for (ms, want) in [
            (0, "Thu Jan 01 00:00:00 UTC 1970"),
            (951_782_400_000, "Tue Feb 29 00:00:00 UTC 2000"),
            (1_709_251_199_000, "Thu Feb 29 23:59:59 UTC 2024"),
            (4_102_444_800_000, "Fri Jan 01 00:00:00 UTC 2100"),
            (1_764_465_326_000, "Sun Nov 30 01:15:26 UTC 2025"),
        ] {
            assert_eq!(java_date_utc(at(ms)), want);
        }
        assert_eq!(
            java_date_utc(UNIX_EPOCH - Duration::from_secs(86_400)),
            "Wed Dec 31 00:00:00 UTC 1969"
        );
    }

    #[test]
    fn stores_a_zk_broker_file_as_java_17_does() {
        let props = MetaProperties::zk(3, "x").to_properties().unwrap();
        assert_eq!(
            store_properties(&props, at(1_764_465_326_000)),
            "#\n#Sun Nov 30 01:15:26 UTC 2025\nbroker.id=3\nversion=0\ncluster.id=x\n"
        );
        let mut with_dir = MetaProperties::zk(3, "x");
        with_dir.directory_id = Some(TopicId::ONE);
        let text = store_properties(&with_dir.to_properties().unwrap(), at(0));
        assert!(text.ends_with(
            "\nbroker.id=3\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\nversion=0\ncluster.id=x\n"
        ));
    }

    #[test]
    fn escapes_as_java_does() {
        // Expected bytes from OpenJDK 17's Properties.store(Writer, "").
        let props = vec![(CLUSTER_ID_PROP, "Ab-cD_eF:g=h i#j!k\\l\u{e9}".to_string())];
        let text = store_properties(&props, at(0));
        assert!(
            text.ends_with("cluster.id=Ab-cD_eF\\:g\\=h i\\#j\\!k\\\\l\u{e9}\n"),
            "{text}"
        );
        let mut out = String::new();
        escape_into(&mut out, " k=:#!e y", true);
        out.push('=');
        escape_into(&mut out, "  lead\tv\n\r\u{c}=:x\u{1}", false);
        assert_eq!(
            out,
            "\\ k\\=\\:\\#\\!e\\ y=\\  lead\\tv\\n\\r\\f\\=\\:x\u{1}"
        );
    }

    #[test]
    fn round_trips_and_reads_any_layout() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(MetaProperties::read(dir.path()).unwrap(), None);
        let meta = MetaProperties::zk(7, "9dYdrBsQR0S1xUb3NrJ2bA");
        meta.write(dir.path()).unwrap();
        assert_eq!(
            MetaProperties::read(dir.path()).unwrap(),
            Some(meta.clone())
        );
        std::fs::write(
            MetaProperties::path(dir.path()),
            "! a comment\r\n\n   cluster.id : 9dYdrBsQR0S1xUb3N\\\n    rJ2bA\nbroker.id 7\nversion=0",
        )
        .unwrap();
        assert_eq!(MetaProperties::read(dir.path()).unwrap(), Some(meta));
    }

    #[test]
    fn kraft_files_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = MetaProperties::path(dir.path());
        std::fs::write(
            &path,
            "version=1\nnode.id=4\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n",
        )
        .unwrap();
        let meta = MetaProperties::read(dir.path()).unwrap().unwrap();
        assert_eq!(
            (meta.version, meta.node_id, meta.broker_id),
            (MetaPropertiesVersion::V1, Some(4), None)
        );
        assert_eq!(meta.directory_id, Some(TopicId::ONE));
        for (text, want) in [
            ("version=1\ncluster.id=c\n", "failed to find node.id"),
            ("version=2\n", "unknown meta.properties version number 2"),
            ("version=x\n", "invalid meta.properties version string 'x'"),
            (
                "broker.id=seven\n",
                "unable to read broker.id as a base-10 number",
            ),
            (
                "directory.id=nope\n",
                "unable to read directory.id as a Uuid",
            ),
            ("cluster.id=\\u12\n", "malformed \\uxxxx encoding"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = MetaProperties::read(dir.path()).unwrap_err();
            assert!(matches!(err, StorageError::MalformedFile { .. }));
            assert!(err.to_string().contains(want), "{text:?}: {err}");
        }
        // A V0 file with no fields at all is valid.
        std::fs::write(&path, "#only a comment\n").unwrap();
        let meta = MetaProperties::read(dir.path()).unwrap().unwrap();
        assert_eq!((meta.broker_id, meta.cluster_id), (None, None));
    }
}
