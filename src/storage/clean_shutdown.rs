//! The clean-shutdown marker of a log dir, `.kafka_cleanshutdown`, as Kafka 3.9's
//! `CleanShutdownFileHandler`.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::storage::StorageError;

/// The marker's name inside a log dir.
pub const CLEAN_SHUTDOWN_FILENAME: &str = ".kafka_cleanshutdown";
/// The content version Kafka 3.9 writes.
pub const CLEAN_SHUTDOWN_VERSION: i32 = 0;

/// The marker a broker writes into each log dir when it shuts down cleanly, so the next start
/// skips recovery. Its presence is what matters; since Kafka 3.7 it also carries the broker
/// epoch (KIP-966), as Jackson serializes it, with no newline:
///
/// ```text
/// {"version":0,"brokerEpoch":42}
/// ```
///
/// Older brokers wrote an empty file. The file is written in place and fsynced (not renamed);
/// it is deleted once the broker has loaded its logs.
#[derive(Debug, Clone)]
pub struct CleanShutdownFile {
    path: PathBuf,
}

impl CleanShutdownFile {
    /// The marker of log dir `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            path: dir.join(CLEAN_SHUTDOWN_FILENAME),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the marker with `broker_epoch` and fsyncs it.
    pub fn write(&self, broker_epoch: i64) -> Result<(), StorageError> {
        let text =
            format!("{{\"version\":{CLEAN_SHUTDOWN_VERSION},\"brokerEpoch\":{broker_epoch}}}");
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&self.path)
            .map_err(|e| StorageError::io(&self.path, e))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| StorageError::io(&self.path, e))
    }

    /// The broker epoch the marker carries: `None` when the file is missing, empty (pre-3.7) or
    /// has no `brokerEpoch`; [`StorageError::MalformedFile`] when it is not such JSON. Kafka
    /// treats every failure as "no epoch"; callers that only need the epoch can do the same,
    /// while `exists` is what decides whether recovery is skipped.
    pub fn read(&self) -> Result<Option<i64>, StorageError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StorageError::io(&self.path, e)),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let malformed = |reason: String| StorageError::MalformedFile {
            path: self.path.clone(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| malformed(e.to_string()))?;
        let object = value
            .as_object()
            .ok_or_else(|| malformed("not a JSON object".into()))?;
        match object.get("brokerEpoch") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(epoch) => epoch
                .as_i64()
                .map(Some)
                .ok_or_else(|| malformed(format!("brokerEpoch is not a long: {epoch}"))),
        }
    }

    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    /// Removes the marker; a missing marker is fine.
    pub fn delete(&self) -> Result<(), StorageError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(&self.path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_kafkas_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let file = CleanShutdownFile::new(dir.path());
        assert!(!file.exists());
        assert_eq!(file.read().unwrap(), None);
        file.write(42).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".kafka_cleanshutdown")).unwrap(),
            r#"{"version":0,"brokerEpoch":42}"#
        );
        assert_eq!(file.read().unwrap(), Some(42));
        file.write(-1).unwrap();
        assert_eq!(file.read().unwrap(), Some(-1));
        file.delete().unwrap();
        file.delete().unwrap();
        assert!(!file.exists());
    }

    #[test]
    fn reads_old_and_unusual_markers() {
        let dir = tempfile::tempdir().unwrap();
        let file = CleanShutdownFile::new(dir.path());
        for (text, want) in [
            ("", None),
            ("{\"version\":0}", None),
            ("{\"brokerEpoch\":null}", None),
            ("{ \"brokerEpoch\" : 7, \"extra\": true }\n", Some(7)),
        ] {
            std::fs::write(file.path(), text).unwrap();
            assert_eq!(file.read().unwrap(), want, "{text:?}");
        }
        for text in ["{", "[1]", "{\"brokerEpoch\":\"x\"}"] {
            std::fs::write(file.path(), text).unwrap();
            assert!(
                matches!(file.read(), Err(StorageError::MalformedFile { .. })),
                "{text:?}"
            );
        }
    }
}
