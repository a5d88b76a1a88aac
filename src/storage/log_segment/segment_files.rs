//! The files of a segment as a whole: renaming them (`.deleted`, and the cleaner's `.cleaned`
//! and `.swap` suffixes, one file at a time so the swap protocol's crash points can be tested
//! file by file), listing and deleting them.

use std::path::PathBuf;

use super::LogSegment;
use crate::storage::StorageError;
use crate::storage::file_names::{self, DELETED_FILE_SUFFIX};

impl LogSegment {
    /// Renames every file of the segment with a `.deleted` suffix; the files are removed later
    /// by [`delete_files`](Self::delete_files), after `file.delete.delay.ms`.
    pub fn rename_to_deleted(&mut self) -> Result<(), StorageError> {
        let log_path = file_names::with_suffix(self.log.path(), DELETED_FILE_SUFFIX);
        self.log.rename_to(log_path)?;
        let index_path = file_names::with_suffix(self.offset_index.path(), DELETED_FILE_SUFFIX);
        self.offset_index.rename_to(index_path)?;
        let time_path = file_names::with_suffix(self.time_index.path(), DELETED_FILE_SUFFIX);
        self.time_index.rename_to(time_path)?;
        let txn_path = file_names::with_suffix(self.txn_index.path(), DELETED_FILE_SUFFIX);
        self.txn_index.rename_to(txn_path)
    }

    /// Renames one of the segment's files from a name ending in `old_suffix` to the same name
    /// ending in `new_suffix` (Kafka's `changeFileSuffixes`, one file at a time so that the
    /// swap protocol's crash points can be tested file by file).
    pub fn change_file_suffix(
        &mut self,
        file: SegmentFile,
        old_suffix: &str,
        new_suffix: &str,
    ) -> Result<(), StorageError> {
        let current = match file {
            SegmentFile::Log => self.log.path(),
            SegmentFile::OffsetIndex => self.offset_index.path(),
            SegmentFile::TimeIndex => self.time_index.path(),
            SegmentFile::TxnIndex => self.txn_index.path(),
        };
        let name = current.to_string_lossy();
        let Some(stem) = name.strip_suffix(old_suffix) else {
            return Err(StorageError::InvalidArgument {
                reason: format!("{name} does not end with {old_suffix:?}"),
            });
        };
        let target = PathBuf::from(format!("{stem}{new_suffix}"));
        match file {
            SegmentFile::Log => self.log.rename_to(target),
            SegmentFile::OffsetIndex => self.offset_index.rename_to(target),
            SegmentFile::TimeIndex => self.time_index.rename_to(target),
            SegmentFile::TxnIndex => self.txn_index.rename_to(target),
        }
    }

    /// The paths of the segment's files, as they are named now.
    pub fn file_paths(&self) -> Vec<PathBuf> {
        vec![
            self.log.path().to_path_buf(),
            self.offset_index.path().to_path_buf(),
            self.time_index.path().to_path_buf(),
            self.txn_index.path().to_path_buf(),
        ]
    }

    /// Removes the segment's files (after a rename, the `.deleted` ones).
    pub fn delete_files(self) -> Result<(), StorageError> {
        let paths = self.file_paths();
        drop(self);
        delete_if_exists(&paths)
    }
}

/// One of the files of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentFile {
    Log,
    OffsetIndex,
    TimeIndex,
    /// The `.txnindex`, which may not exist: renaming a missing one renames nothing.
    TxnIndex,
}

impl SegmentFile {
    /// In the order Kafka renames them: the log first, then the indexes.
    pub const ALL: [SegmentFile; 4] = [
        SegmentFile::Log,
        SegmentFile::OffsetIndex,
        SegmentFile::TimeIndex,
        SegmentFile::TxnIndex,
    ];
}

/// Deletes files, ignoring ones already gone.
pub fn delete_if_exists(paths: &[PathBuf]) -> Result<(), StorageError> {
    for path in paths {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::io(path, e)),
        }
    }
    Ok(())
}
