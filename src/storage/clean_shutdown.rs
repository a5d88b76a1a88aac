//! The clean-shutdown marker of a log dir, `.kafka_cleanshutdown`, as Kafka 3.9's
//! `CleanShutdownFileHandler`.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::storage::StorageError;

/// The marker's name inside a log dir.
pub(crate) const CLEAN_SHUTDOWN_FILENAME: &str = ".kafka_cleanshutdown";
/// The content version Kafka 3.9 writes.
pub(crate) const CLEAN_SHUTDOWN_VERSION: i32 = 0;

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
pub(crate) struct CleanShutdownFile {
    path: PathBuf,
}

impl CleanShutdownFile {
    /// The marker of log dir `dir`.
    pub(crate) fn new(dir: &Path) -> Self {
        Self {
            path: dir.join(CLEAN_SHUTDOWN_FILENAME),
        }
    }

    /// Writes the marker with `broker_epoch` and fsyncs it.
    pub(crate) fn write(&self, broker_epoch: i64) -> Result<(), StorageError> {
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

    pub(crate) fn exists(&self) -> bool {
        self.path.exists()
    }

    /// Removes the marker; a missing marker is fine.
    pub(crate) fn delete(&self) -> Result<(), StorageError> {
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
        file.write(42).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".kafka_cleanshutdown")).unwrap(),
            r#"{"version":0,"brokerEpoch":42}"#
        );
        file.write(-1).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".kafka_cleanshutdown")).unwrap(),
            r#"{"version":0,"brokerEpoch":-1}"#
        );
        file.delete().unwrap();
        file.delete().unwrap();
        assert!(!file.exists());
    }
}
