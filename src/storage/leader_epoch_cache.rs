//! The leader-epoch cache of a partition and its `leader-epoch-checkpoint` file, as Kafka 3.9's
//! `LeaderEpochFileCache` and `LeaderEpochCheckpointFile`.

use std::path::{Path, PathBuf};

use crate::storage::StorageError;
use crate::storage::checkpoint_file::{CheckpointFile, EntryFormatter, java_split_whitespace};

/// The checkpoint's file name inside a partition directory.
pub const LEADER_EPOCH_CHECKPOINT_FILENAME: &str = "leader-epoch-checkpoint";
/// The format version Kafka 3.9 writes and accepts.
pub const LEADER_EPOCH_CHECKPOINT_VERSION: i32 = 0;
/// Kafka's `UNDEFINED_EPOCH`.
pub const UNDEFINED_EPOCH: i32 = -1;
/// Kafka's `UNDEFINED_EPOCH_OFFSET`.
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// A leader epoch and the first offset written in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    pub epoch: i32,
    pub start_offset: i64,
}

/// One `epoch start_offset` line.
#[derive(Debug, Clone, Copy, Default)]
pub struct LeaderEpochFormatter;

impl EntryFormatter for LeaderEpochFormatter {
    type Entry = EpochEntry;

    fn to_line(&self, entry: &EpochEntry) -> String {
        format!("{} {}", entry.epoch, entry.start_offset)
    }

    fn parse_line(&self, line: &str) -> Option<EpochEntry> {
        match java_split_whitespace(line)[..] {
            [epoch, start_offset] => Some(EpochEntry {
                epoch: epoch.parse().ok()?,
                start_offset: start_offset.parse().ok()?,
            }),
            _ => None,
        }
    }
}

/// The (leader epoch → start offset) map of one replica, persisted in
/// `<partition dir>/leader-epoch-checkpoint`:
///
/// ```text
/// 0        <- version
/// 2        <- number of entries
/// 0 0      <- epoch start_offset
/// 3 1500
/// ```
///
/// Invariants: epochs and start offsets both strictly increase along the entries; epochs and
/// offsets are never negative. Assigning an entry that breaks monotonicity first removes the
/// conflicting tail (the new leader's log wins). Every change is written to the file before the
/// call returns (Kafka flushes truncations asynchronously; recovery re-truncates either way).
#[derive(Debug)]
pub struct LeaderEpochFileCache {
    checkpoint: CheckpointFile<LeaderEpochFormatter>,
    epochs: Vec<EpochEntry>,
}

impl LeaderEpochFileCache {
    /// Loads the checkpoint at `path`. As Kafka's `CheckpointFile` does, a missing file is
    /// created empty; entries are loaded through the same rules as `assign`.
    pub fn open(path: PathBuf) -> Result<Self, StorageError> {
        if let Err(e) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            && e.kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err(StorageError::io(&path, e));
        }
        let checkpoint =
            CheckpointFile::new(path, LEADER_EPOCH_CHECKPOINT_VERSION, LeaderEpochFormatter);
        let mut cache = Self {
            epochs: Vec::new(),
            checkpoint,
        };
        for entry in cache.checkpoint.read()? {
            cache
                .assign_entry(entry)
                .map_err(|e| StorageError::MalformedFile {
                    path: cache.checkpoint.path().to_path_buf(),
                    reason: e.to_string(),
                })?;
        }
        Ok(cache)
    }

    /// The entries of the checkpoint at `path`, without creating or changing anything.
    pub fn read_entries(path: &Path) -> Result<Vec<EpochEntry>, StorageError> {
        CheckpointFile::new(
            path.to_path_buf(),
            LEADER_EPOCH_CHECKPOINT_VERSION,
            LeaderEpochFormatter,
        )
        .read()
    }

    pub fn path(&self) -> &Path {
        self.checkpoint.path()
    }

    /// Records that `epoch` starts at `start_offset`. An epoch already latest with an equal or
    /// lower start offset is a no-op; otherwise entries whose epoch or start offset is not below
    /// the new one's are removed first. Writes the file when anything changed.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> Result<(), StorageError> {
        if self.assign_entry(EpochEntry {
            epoch,
            start_offset,
        })? {
            self.write_to_file()?;
        }
        Ok(())
    }

    fn assign_entry(&mut self, entry: EpochEntry) -> Result<bool, StorageError> {
        if entry.epoch < 0 || entry.start_offset < 0 {
            return Err(StorageError::InvalidArgument {
                reason: format!(
                    "received invalid partition leader epoch entry EpochEntry(epoch={}, \
                     startOffset={})",
                    entry.epoch, entry.start_offset
                ),
            });
        }
        let update_needed = self.latest_entry().is_none_or(|latest| {
            entry.epoch != latest.epoch || entry.start_offset < latest.start_offset
        });
        if !update_needed {
            return Ok(false);
        }
        // Entries are monotonic in both fields, so the conflicting ones form a suffix.
        while self.epochs.last().is_some_and(|last| {
            last.epoch >= entry.epoch || last.start_offset >= entry.start_offset
        }) {
            self.epochs.pop();
        }
        self.epochs.push(entry);
        Ok(true)
    }

    pub fn latest_entry(&self) -> Option<EpochEntry> {
        self.epochs.last().copied()
    }

    /// The latest epoch with messages assigned to it.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.latest_entry().map(|e| e.epoch)
    }

    /// The epoch of the entry whose range holds `offset` (Kafka's `epochForOffset`).
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        let mut previous = None;
        for entry in &self.epochs {
            if entry.start_offset == offset {
                return Some(entry.epoch);
            }
            if entry.start_offset > offset {
                return previous;
            }
            previous = Some(entry.epoch);
        }
        previous
    }

    /// Kafka's `endOffsetFor`: the greatest epoch `<= requested_epoch` and the end offset of
    /// that epoch, which is the start offset of the next greater epoch, or `log_end_offset` when
    /// the requested epoch is the latest. `(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)` for an
    /// undefined or unknown-future epoch; `(requested_epoch, first start above it)` when the
    /// requested epoch is below every cached one.
    pub fn end_offset_for(&self, requested_epoch: i32, log_end_offset: i64) -> (i32, i64) {
        if requested_epoch == UNDEFINED_EPOCH {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        }
        if self.latest_epoch() == Some(requested_epoch) {
            return (requested_epoch, log_end_offset);
        }
        let Some(higher) = self.epochs.iter().find(|e| e.epoch > requested_epoch) else {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        };
        match self
            .epochs
            .iter()
            .rev()
            .find(|e| e.epoch <= requested_epoch)
        {
            None => (requested_epoch, higher.start_offset),
            Some(floor) => (floor.epoch, higher.start_offset),
        }
    }

    /// Removes every entry whose start offset is `>= end_offset` (a negative offset is a no-op).
    pub fn truncate_from_end(&mut self, end_offset: i64) -> Result<(), StorageError> {
        if Self::truncate_from_end_of(&mut self.epochs, end_offset) {
            self.write_to_file()?;
        }
        Ok(())
    }

    fn truncate_from_end_of(epochs: &mut Vec<EpochEntry>, end_offset: i64) -> bool {
        let applies = end_offset >= 0
            && epochs
                .last()
                .is_some_and(|last| last.start_offset >= end_offset);
        if !applies {
            return false;
        }
        while epochs.last().is_some_and(|e| e.start_offset >= end_offset) {
            epochs.pop();
        }
        true
    }

    /// Removes the entries starting at or before `start_offset` and puts the last of them back
    /// starting at `start_offset`, so the epoch that holds `start_offset` is kept (an entry
    /// exactly at `start_offset` stays as it is).
    pub fn truncate_from_start(&mut self, start_offset: i64) -> Result<(), StorageError> {
        if Self::truncate_from_start_of(&mut self.epochs, start_offset) {
            self.write_to_file()?;
        }
        Ok(())
    }

    fn truncate_from_start_of(epochs: &mut Vec<EpochEntry>, start_offset: i64) -> bool {
        let removed = epochs
            .iter()
            .take_while(|e| e.start_offset <= start_offset)
            .count();
        if removed == 0 {
            return false;
        }
        let epoch = epochs[removed - 1].epoch;
        epochs.splice(
            ..removed,
            [EpochEntry {
                epoch,
                start_offset,
            }],
        );
        true
    }

    /// Removes every entry and writes the empty checkpoint.
    pub fn clear_and_flush(&mut self) -> Result<(), StorageError> {
        self.epochs.clear();
        self.write_to_file()
    }

    /// Removes every entry without touching the file.
    pub fn clear(&mut self) {
        self.epochs.clear();
    }

    /// The entries in epoch order.
    pub fn entries(&self) -> &[EpochEntry] {
        &self.epochs
    }

    fn write_to_file(&self) -> Result<(), StorageError> {
        self.checkpoint.write(self.epochs.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn e(epoch: i32, start_offset: i64) -> EpochEntry {
        EpochEntry {
            epoch,
            start_offset,
        }
    }

    fn open(dir: &tempfile::TempDir) -> LeaderEpochFileCache {
        LeaderEpochFileCache::open(dir.path().join(LEADER_EPOCH_CHECKPOINT_FILENAME)).unwrap()
    }

    #[test]
    fn open_creates_an_empty_file_and_assign_writes_kafkas_format() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = open(&dir);
        assert_eq!(std::fs::read(cache.path()).unwrap(), b"");
        cache.assign(0, 0).unwrap();
        cache.assign(3, 1500).unwrap();
        cache.assign(3, 1600).unwrap();
        assert_eq!(
            std::fs::read_to_string(cache.path()).unwrap(),
            "0\n2\n0 0\n3 1500\n"
        );
        let reopened = open(&dir);
        assert_eq!(reopened.entries(), [e(0, 0), e(3, 1500)]);
        assert!(cache.assign(-1, 0).is_err());
    }

    #[test]
    fn assign_removes_conflicting_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = open(&dir);
        for (ep, off) in [(1, 0), (2, 10), (4, 20)] {
            cache.assign(ep, off).unwrap();
        }
        cache.assign(3, 15).unwrap();
        assert_eq!(cache.entries(), [e(1, 0), e(2, 10), e(3, 15)]);
        cache.assign(3, 12).unwrap();
        assert_eq!(cache.entries(), [e(1, 0), e(2, 10), e(3, 12)]);
        cache.assign(5, 5).unwrap();
        assert_eq!(cache.entries(), [e(1, 0), e(5, 5)]);
    }

    #[test]
    fn end_offset_for_follows_kafka() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = open(&dir);
        assert_eq!(
            cache.end_offset_for(0, 100),
            (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        );
        for (ep, off) in [(2, 10), (4, 20), (6, 30)] {
            cache.assign(ep, off).unwrap();
        }
        assert_eq!(cache.end_offset_for(UNDEFINED_EPOCH, 100), (-1, -1));
        assert_eq!(cache.end_offset_for(6, 100), (6, 100));
        assert_eq!(cache.end_offset_for(7, 100), (-1, -1));
        assert_eq!(cache.end_offset_for(1, 100), (1, 10));
        assert_eq!(cache.end_offset_for(2, 100), (2, 20));
        assert_eq!(cache.end_offset_for(3, 100), (2, 20));
        assert_eq!(cache.end_offset_for(5, 100), (4, 30));
    }

    #[test]
    fn truncations() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = open(&dir);
        for (ep, off) in [(2, 10), (4, 20), (6, 30)] {
            cache.assign(ep, off).unwrap();
        }
        cache.truncate_from_start(25).unwrap();
        assert_eq!(cache.entries(), [e(4, 25), e(6, 30)]);
        cache.truncate_from_start(30).unwrap();
        assert_eq!(cache.entries(), [e(6, 30)]);
        cache.assign(7, 40).unwrap();
        cache.truncate_from_end(41).unwrap();
        assert_eq!(cache.entries(), [e(6, 30), e(7, 40)]);
        cache.truncate_from_end(40).unwrap();
        assert_eq!(cache.entries(), [e(6, 30)]);
        assert_eq!(open(&dir).entries(), [e(6, 30)]);
        cache.clear_and_flush().unwrap();
        assert_eq!(std::fs::read_to_string(cache.path()).unwrap(), "0\n0\n");
    }

    #[test]
    fn bad_file_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILENAME);
        std::fs::write(&path, "0\n1\n-3 5\n").unwrap();
        let err = LeaderEpochFileCache::open(path.clone()).unwrap_err();
        assert!(matches!(err, StorageError::MalformedFile { .. }), "{err}");
        std::fs::write(&path, "0\n1\n3\n").unwrap();
        let err = LeaderEpochFileCache::open(path).unwrap_err().to_string();
        assert!(err.contains("malformed line: 3"), "{err}");
    }

    #[derive(Debug, Clone)]
    enum Op {
        Assign(i32, i64),
        TruncateFromEnd(i64),
        TruncateFromStart(i64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0i32..12, 0i64..100).prop_map(|(a, b)| Op::Assign(a, b)),
            1 => (-1i64..100).prop_map(Op::TruncateFromEnd),
            1 => (0i64..100).prop_map(Op::TruncateFromStart),
        ]
    }

    /// The cache's rules restated over a plain list, without its suffix shortcuts.
    fn model_apply(model: &mut Vec<EpochEntry>, op: &Op) {
        match *op {
            Op::Assign(epoch, start) => {
                if let Some(last) = model.last()
                    && last.epoch == epoch
                    && start >= last.start_offset
                {
                    return;
                }
                model.retain(|x| x.epoch < epoch && x.start_offset < start);
                model.push(e(epoch, start));
            }
            Op::TruncateFromEnd(end) => {
                if end >= 0 {
                    model.retain(|x| x.start_offset < end);
                }
            }
            Op::TruncateFromStart(start) => {
                if let Some(kept) = model.iter().rfind(|x| x.start_offset <= start).copied() {
                    model.retain(|x| x.start_offset > start);
                    model.insert(0, e(kept.epoch, start));
                }
            }
        }
    }

    fn model_end_offset_for(model: &[EpochEntry], requested: i32, leo: i64) -> (i32, i64) {
        if requested == UNDEFINED_EPOCH {
            return (-1, -1);
        }
        if model.last().map(|x| x.epoch) == Some(requested) {
            return (requested, leo);
        }
        let higher = model
            .iter()
            .filter(|x| x.epoch > requested)
            .map(|x| x.start_offset)
            .min();
        let floor = model
            .iter()
            .filter(|x| x.epoch <= requested)
            .map(|x| x.epoch)
            .max();
        match (higher, floor) {
            (None, _) => (-1, -1),
            (Some(h), None) => (requested, h),
            (Some(h), Some(f)) => (f, h),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn matches_a_simple_model(ops in proptest::collection::vec(op(), 0..30)) {
            let dir = tempfile::tempdir().unwrap();
            let mut cache = open(&dir);
            let mut model = Vec::new();
            for op in &ops {
                match *op {
                    Op::Assign(a, b) => cache.assign(a, b).unwrap(),
                    Op::TruncateFromEnd(o) => cache.truncate_from_end(o).unwrap(),
                    Op::TruncateFromStart(o) => cache.truncate_from_start(o).unwrap(),
                }
                model_apply(&mut model, op);
                prop_assert_eq!(cache.entries(), &model[..]);
                for requested in -1..13 {
                    prop_assert_eq!(
                        cache.end_offset_for(requested, 500),
                        model_end_offset_for(&model, requested, 500)
                    );
                }
            }
            let reopened = open(&dir);
            prop_assert_eq!(reopened.entries(), &model[..]);
        }
    }
}
