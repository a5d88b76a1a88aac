//! Kafka's versioned text checkpoint files (`server.common.CheckpointFile`), written atomically,
//! and the write-to-temp/fsync/rename/fsync-dir helper the other small files of a log dir share.
//!
//! Text is read as Java's `BufferedReader.readLine` reads it (lines end at `\n`, `\r` or
//! `\r\n`) and fields are split as Java's `line.split("\\s+")` splits them, so exactly the files
//! Kafka accepts are accepted.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::storage::StorageError;

/// Turns one entry into its line and back (Kafka's `CheckpointFile.EntryFormatter`).
pub(crate) trait EntryFormatter {
    type Entry;
    /// The entry's line, without the line terminator.
    fn to_line(&self, entry: &Self::Entry) -> String;
    /// The entry a line holds, or `None` when the line is malformed.
    fn parse_line(&self, line: &str) -> Option<Self::Entry>;
}

/// A checkpoint file of entries, one per line, after a version line and a count line:
///
/// ```text
/// <version>\n
/// <entry count>\n
/// <entry>\n ...
/// ```
///
/// Writes go to `<file>.tmp`, which is fsynced and renamed over the file; the directory is then
/// fsynced so the rename survives a crash. Reads check the version, parse every line and check
/// the count; anything else is [`StorageError::MalformedFile`] naming the offending line. A
/// missing or empty file reads as no entries (Kafka creates it empty when it opens a checkpoint).
#[derive(Debug, Clone)]
pub(crate) struct CheckpointFile<F> {
    path: PathBuf,
    version: i32,
    formatter: F,
}

impl<F: EntryFormatter> CheckpointFile<F> {
    pub(crate) fn new(path: PathBuf, version: i32, formatter: F) -> Self {
        Self {
            path,
            version,
            formatter,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the file's contents with `entries`, atomically and durably.
    pub(crate) fn write<'a>(
        &self,
        entries: impl ExactSizeIterator<Item = &'a F::Entry>,
    ) -> Result<(), StorageError>
    where
        F::Entry: 'a,
    {
        let mut text = format!("{}\n{}\n", self.version, entries.len());
        for entry in entries {
            text.push_str(&self.formatter.to_line(entry));
            text.push('\n');
        }
        write_atomically(&self.path, text.as_bytes())
    }

    /// The entries, in file order.
    pub(crate) fn read(&self) -> Result<Vec<F::Entry>, StorageError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StorageError::io(&self.path, e)),
        };
        let malformed = |reason: String| StorageError::MalformedFile {
            path: self.path.clone(),
            reason,
        };
        let text =
            std::str::from_utf8(&bytes).map_err(|e| malformed(format!("not valid UTF-8: {e}")))?;
        let mut lines = java_lines(text);
        let Some(line) = lines.next() else {
            return Ok(Vec::new());
        };
        let version: i32 = line
            .parse()
            .map_err(|_| malformed(format!("malformed line: {line}")))?;
        if version != self.version {
            return Err(malformed(format!(
                "unrecognised version: {version}, expected version: {}",
                self.version
            )));
        }
        let Some(line) = lines.next() else {
            return Ok(Vec::new());
        };
        let expected: i32 = line
            .parse()
            .map_err(|_| malformed(format!("malformed line: {line}")))?;
        let mut entries = Vec::new();
        for line in lines {
            let entry = self
                .formatter
                .parse_line(line)
                .ok_or_else(|| malformed(format!("malformed line: {line}")))?;
            entries.push(entry);
        }
        if i32::try_from(entries.len()).ok() != Some(expected) {
            return Err(malformed(format!(
                "expected [{expected}] entries but found only [{}]",
                entries.len()
            )));
        }
        Ok(entries)
    }
}

/// Lines as Java's `BufferedReader.readLine` yields them: terminated by `\n`, `\r` or `\r\n`; a
/// final line without a terminator counts, an empty tail does not.
pub(crate) fn java_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.find(['\n', '\r']) {
            Some(at) => {
                let line = &rest[..at];
                let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[at + skip..];
                Some(line)
            }
            None => {
                let line = rest;
                rest = "";
                Some(line)
            }
        }
    })
}

/// Fields as Java's `line.split("\\s+")` yields them: separated by runs of ` \t\n\x0B\f\r`; a
/// leading separator gives an empty first field and trailing empty fields are dropped.
pub(crate) fn java_split_whitespace(line: &str) -> Vec<&str> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r');
    if !line.contains(is_space) {
        return vec![line];
    }
    let mut fields: Vec<&str> = line.split(is_space).filter(|f| !f.is_empty()).collect();
    if line.starts_with(is_space) {
        fields.insert(0, "");
    }
    if fields.iter().all(|f| f.is_empty()) {
        fields.clear();
    }
    fields
}

/// Writes `contents` to `<path>.tmp`, fsyncs it, renames it over `path` and fsyncs the
/// directory: after a crash the file holds either the old or the new contents, never a mix.
pub(crate) fn write_atomically(path: &Path, contents: &[u8]) -> Result<(), StorageError> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(|e| StorageError::io(&tmp, e))?;
    file.write_all(contents)
        .and_then(|()| file.sync_all())
        .map_err(|e| StorageError::io(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| StorageError::io(path, e))?;
    flush_parent_dir(path)
}

/// Fsyncs the directory holding `path`, making a create, rename or delete in it durable.
pub(crate) fn flush_parent_dir(path: &Path) -> Result<(), StorageError> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| StorageError::io(parent, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone)]
    struct Pairs;

    impl EntryFormatter for Pairs {
        type Entry = (i32, i64);
        fn to_line(&self, e: &(i32, i64)) -> String {
            format!("{} {}", e.0, e.1)
        }
        fn parse_line(&self, line: &str) -> Option<(i32, i64)> {
            match java_split_whitespace(line)[..] {
                [a, b] => Some((a.parse().ok()?, b.parse().ok()?)),
                _ => None,
            }
        }
    }

    #[test]
    fn writes_kafkas_layout_and_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = CheckpointFile::new(dir.path().join("cp"), 0, Pairs);
        file.write([(1, 10), (2, 20)].iter()).unwrap();
        assert_eq!(
            std::fs::read_to_string(file.path()).unwrap(),
            "0\n2\n1 10\n2 20\n"
        );
        assert!(!dir.path().join("cp.tmp").exists());
        assert_eq!(file.read().unwrap(), vec![(1, 10), (2, 20)]);
    }

    #[test]
    fn missing_or_empty_reads_as_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = CheckpointFile::new(dir.path().join("cp"), 0, Pairs);
        assert!(file.read().unwrap().is_empty());
        std::fs::write(file.path(), "").unwrap();
        assert!(file.read().unwrap().is_empty());
        std::fs::write(file.path(), "0\n").unwrap();
        assert!(file.read().unwrap().is_empty());
    }

    #[test]
    fn accepts_crlf_and_tabs_as_java_does() {
        let dir = tempfile::tempdir().unwrap();
        let file = CheckpointFile::new(dir.path().join("cp"), 0, Pairs);
        std::fs::write(file.path(), "0\r\n1\r\n3\t\t4").unwrap();
        assert_eq!(file.read().unwrap(), vec![(3, 4)]);
    }

    #[test]
    fn malformed_files_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let file = CheckpointFile::new(dir.path().join("cp"), 0, Pairs);
        for (text, want) in [
            ("1\n0\n", "unrecognised version: 1, expected version: 0"),
            ("x\n", "malformed line: x"),
            ("0\n1\n1 2 3\n", "malformed line: 1 2 3"),
            ("0\n1\n\n", "malformed line: "),
            ("0\n2\n1 2\n", "expected [2] entries but found only [1]"),
            ("0\n0\n1 2\n", "expected [0] entries but found only [1]"),
        ] {
            std::fs::write(file.path(), text).unwrap();
            let err = file.read().unwrap_err();
            assert!(matches!(err, StorageError::MalformedFile { .. }), "{err}");
            assert!(err.to_string().contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn split_matches_java() {
        assert_eq!(java_split_whitespace("a b"), ["a", "b"]);
        assert_eq!(java_split_whitespace(" a  b \t"), ["", "a", "b"]);
        assert_eq!(java_split_whitespace(""), [""]);
        assert!(java_split_whitespace("  ").is_empty());
        assert_eq!(
            java_lines("a\rb\r\nc\n\nd").collect::<Vec<_>>(),
            ["a", "b", "c", "", "d"]
        );
    }
}
