//! `partition.metadata`, the file that ties a partition directory to its topic id, and
//! [`TopicId`], Kafka's `Uuid` with its 22-character base64 form (Kafka 3.9's
//! `PartitionMetadataFile`, `PartitionMetadataReadBuffer` and `common.Uuid`).

use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::storage::StorageError;
use crate::storage::checkpoint_file::{java_lines, write_atomically};

/// The file's name inside a partition directory.
pub const PARTITION_METADATA_FILENAME: &str = "partition.metadata";
/// The version Kafka 3.9 writes; newer versions are accepted on read, as Kafka does for
/// downgrades.
pub const PARTITION_METADATA_VERSION: i32 = 0;

const BASE64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A 128-bit id, printed as Kafka prints its `Uuid`: the 16 big-endian bytes (most significant
/// long first) in url-safe base64 without padding, always 22 characters.
///
/// [`TopicId::ZERO`] means "no id"; `0` and `1` are reserved and never generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicId(pub u128);

/// A string that is not a base64-encoded 16-byte id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid uuid `{input}`: {reason}")]
pub struct ParseTopicIdError {
    pub input: String,
    pub reason: String,
}

impl TopicId {
    /// Kafka's `Uuid.ZERO_UUID`.
    pub const ZERO: TopicId = TopicId(0);
    /// Kafka's `Uuid.ONE_UUID` (the KRaft metadata topic's id).
    pub const ONE: TopicId = TopicId(1);

    /// A random version-4 id that is not reserved and whose string form does not start with
    /// `-` (Kafka's `Uuid.randomUuid`, so the id never looks like a command-line flag).
    pub fn random() -> Self {
        loop {
            let id = TopicId(uuid::Uuid::new_v4().as_u128());
            if id != Self::ZERO && id != Self::ONE && !id.to_string().starts_with('-') {
                return id;
            }
        }
    }

    pub fn most_significant_bits(self) -> i64 {
        (self.0 >> 64) as i64
    }

    pub fn from_bits(most: i64, least: i64) -> Self {
        TopicId((u128::from(most as u64) << 64) | u128::from(least as u64))
    }
}

impl fmt::Display for TopicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0.to_be_bytes();
        let mut out = String::with_capacity(22);
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                chunk.get(1).copied().unwrap_or(0),
                chunk.get(2).copied().unwrap_or(0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            let chars = chunk.len() + 1;
            for i in 0..chars {
                out.push(char::from(BASE64_URL[((n >> (18 - 6 * i)) & 63) as usize]));
            }
        }
        f.write_str(&out)
    }
}

impl FromStr for TopicId {
    type Err = ParseTopicIdError;

    /// Accepts what Java's `Base64.getUrlDecoder()` accepts for 16 bytes: 22 characters, or 24
    /// with `==` padding (Kafka's `Uuid.fromString`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| ParseTopicIdError {
            input: s.chars().take(24).collect(),
            reason: reason.to_string(),
        };
        if s.len() > 24 {
            return Err(err("too long to be decoded as a base64 UUID"));
        }
        let digits = s.strip_suffix("==").unwrap_or(s);
        if digits.len() != 22 {
            return Err(err("does not decode to the expected 16 bytes"));
        }
        let mut acc: u128 = 0;
        for (i, c) in digits.bytes().enumerate() {
            let v = BASE64_URL
                .iter()
                .position(|&a| a == c)
                .ok_or_else(|| err("not url-safe base64"))? as u128;
            // 22 digits carry 132 bits: the last digit contributes its top 2 bits; its low 4
            // are padding, which Java's decoder ignores.
            acc = if i < 21 {
                (acc << 6) | v
            } else {
                (acc << 2) | (v >> 4)
            };
        }
        Ok(TopicId(acc))
    }
}

/// The `partition.metadata` file of a partition directory:
///
/// ```text
/// version: 0
/// topic_id: <22-char base64 id>
/// ```
///
/// with no newline after the id. Written atomically (temp file, fsync, rename, directory
/// fsync). On read, the version may be any number `>= 0` and a zero id is invalid.
#[derive(Debug, Clone)]
pub struct PartitionMetadataFile {
    path: PathBuf,
}

impl PartitionMetadataFile {
    /// The file of the partition directory `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            path: dir.join(PARTITION_METADATA_FILENAME),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    pub fn write(&self, topic_id: TopicId) -> Result<(), StorageError> {
        let text = format!("version: {PARTITION_METADATA_VERSION}\ntopic_id: {topic_id}");
        write_atomically(&self.path, text.as_bytes())
    }

    /// The topic id, or `None` when the file does not exist.
    pub fn read(&self) -> Result<Option<TopicId>, StorageError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StorageError::io(&self.path, e)),
        };
        let malformed = |reason: String| StorageError::MalformedFile {
            path: self.path.clone(),
            reason,
        };
        let text =
            std::str::from_utf8(&bytes).map_err(|e| malformed(format!("not valid UTF-8: {e}")))?;
        let mut lines = java_lines(text);
        let line = lines.next().unwrap_or("");
        let version: i32 = match split_colon_whitespace(line)[..] {
            [_, v] => v
                .parse()
                .map_err(|_| malformed(format!("malformed line: {line}")))?,
            _ => return Err(malformed(format!("malformed line: {line}"))),
        };
        if version < PARTITION_METADATA_VERSION {
            return Err(malformed(format!(
                "unrecognized version of partition metadata file: {version}"
            )));
        }
        let line = lines.next().unwrap_or("");
        let topic_id: TopicId = match split_colon_whitespace(line)[..] {
            [_, id] => id.parse().map_err(|e| malformed(format!("{e}")))?,
            _ => return Err(malformed(format!("malformed line: {line}"))),
        };
        if topic_id == TopicId::ZERO {
            return Err(malformed(
                "invalid topic ID in partition metadata file".into(),
            ));
        }
        Ok(Some(topic_id))
    }

    /// Removes the file.
    pub fn delete(&self) -> Result<(), StorageError> {
        std::fs::remove_file(&self.path).map_err(|e| StorageError::io(&self.path, e))
    }
}

/// Java's `line.split(":\\s+")`: fields separated by a colon followed by at least one
/// whitespace character; trailing empty fields dropped.
fn split_colon_whitespace(line: &str) -> Vec<&str> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r');
    let mut fields = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let bytes = line.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b':' && line[i + 1..].starts_with(is_space) {
            fields.push(&line[start..i]);
            let rest = &line[i + 1..];
            let skipped = rest.len() - rest.trim_start_matches(is_space).len();
            i += 1 + skipped;
            start = i;
        } else {
            i += 1;
        }
    }
    fields.push(&line[start..]);
    while fields.len() > 1 && fields.last().is_some_and(|f| f.is_empty()) {
        fields.pop();
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_kafka_uuid() {
        // Uuid(0x0123456789abcdef, 0xfedcba9876543210).toString() in Kafka.
        let id = TopicId::from_bits(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210u64 as i64);
        assert_eq!(id.to_string(), "ASNFZ4mrze_-3LqYdlQyEA");
        assert_eq!(TopicId::ZERO.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(TopicId::ONE.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!("ASNFZ4mrze_-3LqYdlQyEA".parse::<TopicId>().unwrap(), id);
        assert_eq!("ASNFZ4mrze_-3LqYdlQyEA==".parse::<TopicId>().unwrap(), id);
        assert!("ASNFZ4mrze_-3LqYdlQyE".parse::<TopicId>().is_err());
        assert!("ASNFZ4mrze+/3LqYdlQyEA".parse::<TopicId>().is_err());
        assert_eq!(id.most_significant_bits(), 0x0123_4567_89ab_cdef);
    }

    #[test]
    fn random_ids_round_trip_and_avoid_reserved() {
        for _ in 0..200 {
            let id = TopicId::random();
            let s = id.to_string();
            assert_eq!(s.len(), 22);
            assert!(!s.starts_with('-'));
            assert_eq!(s.parse::<TopicId>().unwrap(), id);
        }
    }

    #[test]
    fn writes_kafkas_bytes_and_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = PartitionMetadataFile::new(dir.path());
        assert_eq!(file.read().unwrap(), None);
        let id: TopicId = "ASNFZ4mrze_-3LqYdlQyEA".parse().unwrap();
        file.write(id).unwrap();
        assert_eq!(
            std::fs::read_to_string(file.path()).unwrap(),
            "version: 0\ntopic_id: ASNFZ4mrze_-3LqYdlQyEA"
        );
        assert_eq!(file.read().unwrap(), Some(id));
        std::fs::write(
            file.path(),
            "version: 3\r\ntopic_id:\tASNFZ4mrze_-3LqYdlQyEA\n",
        )
        .unwrap();
        assert_eq!(file.read().unwrap(), Some(id));
    }

    #[test]
    fn rejects_what_kafka_rejects() {
        let dir = tempfile::tempdir().unwrap();
        let file = PartitionMetadataFile::new(dir.path());
        for (text, want) in [
            ("version:0\ntopic_id: x", "malformed line: version:0"),
            ("version: -1\ntopic_id: x", "unrecognized version"),
            (
                "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
                "invalid topic ID",
            ),
            (
                "version: 0\ntopic_id ASNFZ4mrze_-3LqYdlQyEA",
                "malformed line: topic_id",
            ),
            ("version: 0\ntopic_id: short", "invalid uuid"),
            ("", "malformed line: "),
        ] {
            std::fs::write(file.path(), text).unwrap();
            let err = file.read().unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
