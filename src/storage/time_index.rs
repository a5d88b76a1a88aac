//! The time index (`.timeindex`) of a segment: a sparse map from timestamps to offsets, as
//! Kafka 3.9's `TimeIndex`.

use std::path::{Path, PathBuf};

use crate::storage::StorageError;
use crate::storage::index_file::{IndexFile, IndexSearchType};

/// Kafka's `RecordBatch.NO_TIMESTAMP` (the same value as `protocol::record::batch::NO_TIMESTAMP`),
/// kept here so the index does not depend on the batch parser.
const NO_TIMESTAMP: i64 = -1;

/// Bytes per entry: an 8-byte timestamp and a 4-byte relative offset.
pub const TIME_INDEX_ENTRY_SIZE: usize = 12;

/// A timestamp and the offset from which messages with greater timestamps may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampOffset {
    pub timestamp: i64,
    pub offset: i64,
}

/// An index from timestamps to the offsets of one log segment. It is sparse: it need not hold an
/// entry for every message.
///
/// The file is preallocated to hold a fixed maximum number of 12-byte entries and is
/// memory-mapped. An entry `(T, O)` means that the greatest timestamp seen before offset `O` is
/// `T`: any message with a timestamp above `T` comes after `O`. Lookups binary-search for the
/// entry with the greatest timestamp less than or equal to the target.
///
/// File format: a sequence of entries, each a big-endian 8-byte timestamp followed by a
/// big-endian 4-byte offset relative to the segment's base offset (as in the offset index). All
/// methods take and return absolute offsets.
///
/// Invariants: timestamps and offsets never decrease; an entry is appended only when its
/// timestamp is above the last one (so an index of magic-0 batches, all `NO_TIMESTAMP`, stays
/// empty). The last slot is reserved for the entry written when the segment rolls or closes:
/// `is_full` is `entries >= max_entries - 1`, and only `maybe_append(.., skip_full_check: true)`
/// may fill it. A file that already existed when opened holds `length / 12` entries; an
/// untrimmed, zero-padded file therefore ends in `(0, base_offset)` entries, which
/// `sanity_check` reports as corrupt when the first timestamp is above 0 (KAFKA-10207).
#[derive(Debug)]
pub struct TimeIndex {
    file: IndexFile,
    last_entry: TimestampOffset,
}

impl TimeIndex {
    /// Opens or creates the time index of the segment starting at `base_offset`. A new file is
    /// preallocated to `round_down(max_index_size, 12)` bytes; an existing one keeps its length.
    pub fn open(
        path: PathBuf,
        base_offset: i64,
        max_index_size: usize,
    ) -> Result<Self, StorageError> {
        let file = IndexFile::open(path, base_offset, max_index_size, TIME_INDEX_ENTRY_SIZE)?;
        Ok(Self::from_file(file))
    }

    /// Opens an existing time index for reading only; the file is never modified.
    pub fn open_read_only(path: PathBuf, base_offset: i64) -> Result<Self, StorageError> {
        let file = IndexFile::open_read_only(path, base_offset, TIME_INDEX_ENTRY_SIZE)?;
        Ok(Self::from_file(file))
    }

    fn from_file(file: IndexFile) -> Self {
        let mut index = Self {
            file,
            last_entry: TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: 0,
            },
        };
        index.last_entry = index.last_entry_from_index_file();
        index
    }

    fn parse_entry(&self, n: usize) -> TimestampOffset {
        TimestampOffset {
            timestamp: self.file.read_i64(n, 0),
            offset: self
                .file
                .base_offset()
                .wrapping_add(i64::from(self.file.read_i32(n, 8))),
        }
    }

    fn read_for_search(file: &IndexFile, n: usize, search: IndexSearchType) -> i64 {
        match search {
            IndexSearchType::Key => file.read_i64(n, 0),
            IndexSearchType::Value => file.base_offset() + i64::from(file.read_i32(n, 8)),
        }
    }

    fn last_entry_from_index_file(&self) -> TimestampOffset {
        match self.file.entries() {
            0 => TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: self.file.base_offset(),
            },
            n => self.parse_entry(n - 1),
        }
    }

    /// The last entry, or `(NO_TIMESTAMP, base_offset)` when the index is empty.
    pub fn last_entry(&self) -> TimestampOffset {
        self.last_entry
    }

    /// The `n`th entry, or `None` when `n >= entries()` (where Kafka throws).
    pub fn entry(&self, n: usize) -> Option<TimestampOffset> {
        (n < self.file.entries()).then(|| self.parse_entry(n))
    }

    /// The entry with the greatest timestamp `<= target_timestamp`, or
    /// `(NO_TIMESTAMP, base_offset)` when every entry is above the target or there is none.
    pub fn lookup(&self, target_timestamp: i64) -> TimestampOffset {
        match self.file.largest_lower_bound_slot_for(
            target_timestamp,
            IndexSearchType::Key,
            Self::read_for_search,
        ) {
            Some(slot) => self.parse_entry(slot),
            None => TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: self.file.base_offset(),
            },
        }
    }

    /// Appends `(timestamp, offset)` if the timestamp is above the last one (Kafka's
    /// `maybeAppend`). An offset below the last entry's, or a timestamp below the last one's, is
    /// an error; the same entry again is silently ignored (a segment closed or rolled twice).
    /// `skip_full_check` is for the final entry at roll/close, which may take the reserved slot.
    pub fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<(), StorageError> {
        let entries = self.file.entries();
        if !skip_full_check && self.is_full() {
            return Err(StorageError::IndexFull {
                path: self.file.path().to_path_buf(),
                entries,
            });
        }
        if entries != 0 && offset < self.last_entry.offset {
            return Err(StorageError::InvalidOffset {
                path: self.file.path().to_path_buf(),
                reason: format!(
                    "attempt to append an offset ({offset}) to slot {entries} no larger than the \
                     last offset appended ({})",
                    self.last_entry.offset
                ),
            });
        }
        if entries != 0 && timestamp < self.last_entry.timestamp {
            return Err(StorageError::InvalidTimestamp {
                path: self.file.path().to_path_buf(),
                reason: format!(
                    "attempt to append a timestamp ({timestamp}) to slot {entries} no larger than \
                     the last timestamp appended ({})",
                    self.last_entry.timestamp
                ),
            });
        }
        if timestamp > self.last_entry.timestamp {
            let relative = self.file.relative_offset(offset)?;
            let mut entry = [0u8; TIME_INDEX_ENTRY_SIZE];
            entry[..8].copy_from_slice(&timestamp.to_be_bytes());
            entry[8..].copy_from_slice(&relative.to_be_bytes());
            self.file.push_entry(&entry)?;
            self.last_entry = TimestampOffset { timestamp, offset };
        }
        Ok(())
    }

    /// Removes every entry with an offset `>= offset`; truncating above the last entry changes
    /// nothing.
    pub fn truncate_to(&mut self, offset: i64) -> Result<(), StorageError> {
        let slot = self.file.largest_lower_bound_slot_for(
            offset,
            IndexSearchType::Value,
            Self::read_for_search,
        );
        let new_entries = match slot {
            None => 0,
            Some(slot) if self.parse_entry(slot).offset == offset => slot,
            Some(slot) => slot + 1,
        };
        self.truncate_to_entries(new_entries);
        Ok(())
    }

    fn truncate_to_entries(&mut self, entries: usize) {
        self.file.truncate_to_entries(entries);
        self.last_entry = self.last_entry_from_index_file();
    }

    /// Removes every entry and grows the file back to the maximum index size.
    pub fn reset(&mut self) -> Result<(), StorageError> {
        self.truncate_to_entries(0);
        self.resize(self.file.max_index_size())?;
        Ok(())
    }

    pub fn entries(&self) -> usize {
        self.file.entries()
    }

    pub fn max_entries(&self) -> usize {
        self.file.max_entries()
    }

    /// True when only the reserved last slot (or none) is free: `entries >= max_entries - 1`.
    pub fn is_full(&self) -> bool {
        // Computed as `entries + 1 >= max_entries` so an empty zero-length file is full too.
        self.file.entries() + 1 >= self.file.max_entries()
    }

    pub fn base_offset(&self) -> i64 {
        self.file.base_offset()
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Bytes used by entries: `entries * 12`.
    pub fn size_in_bytes(&self) -> usize {
        self.file.size_in_bytes()
    }

    /// The file's length, preallocated space included.
    pub fn length(&self) -> usize {
        self.file.length()
    }

    pub fn max_index_size(&self) -> usize {
        self.file.max_index_size()
    }

    /// Whether `offset` fits this index's relative offsets.
    pub fn can_append_offset(&self, offset: i64) -> bool {
        self.file.can_append_offset(offset)
    }

    /// Kafka's checks: in a non-empty index the last timestamp may not be below the first and
    /// the last offset not below the base; the length must be a multiple of 12.
    pub fn sanity_check(&self) -> Result<(), StorageError> {
        let path = self.file.path();
        let corrupt = |reason: String| StorageError::CorruptIndex {
            path: path.to_path_buf(),
            reason,
        };
        let TimestampOffset { timestamp, offset } = self.last_entry;
        if self.file.entries() != 0 {
            let first_timestamp = self.file.read_i64(0, 0);
            if timestamp < first_timestamp {
                return Err(corrupt(format!(
                    "Corrupt time index found, time index file ({}) has non-zero size but the \
                     last timestamp is {timestamp} which is less than the first timestamp \
                     {first_timestamp}",
                    path.display()
                )));
            }
            if offset < self.file.base_offset() {
                return Err(corrupt(format!(
                    "Corrupt time index found, time index file ({}) has non-zero size but the \
                     last offset is {offset} which is less than the first offset {}",
                    path.display(),
                    self.file.base_offset()
                )));
            }
        }
        if !self.file.length().is_multiple_of(TIME_INDEX_ENTRY_SIZE) {
            return Err(corrupt(format!(
                "Time index file {} is corrupt, found {} bytes which is neither positive nor a \
                 multiple of {TIME_INDEX_ENTRY_SIZE}",
                path.display(),
                self.file.length()
            )));
        }
        Ok(())
    }

    /// Shrinks the file to exactly its entries.
    pub fn trim_to_valid_size(&mut self) -> Result<(), StorageError> {
        self.file.trim_to_valid_size()
    }

    /// Resizes the file to `round_down(new_size, 12)` bytes; returns whether it changed.
    pub fn resize(&mut self, new_size: usize) -> Result<bool, StorageError> {
        let changed = self.file.resize(new_size)?;
        if changed {
            self.last_entry = self.last_entry_from_index_file();
        }
        Ok(changed)
    }

    pub fn flush(&self) -> Result<(), StorageError> {
        self.file.flush()
    }

    pub fn rename_to(&mut self, new_path: PathBuf) -> Result<(), StorageError> {
        self.file.rename_to(new_path)
    }

    /// Points the index at `parent_dir/<same name>` after its directory was renamed.
    pub fn update_parent_dir(&mut self, parent_dir: &Path) {
        self.file.update_parent_dir(parent_dir);
    }

    /// Unmaps and deletes the file (a missing file is fine).
    pub fn delete(self) -> Result<(), StorageError> {
        self.file.delete().map(|_| ())
    }

    /// Trims the file to its entries and unmaps it.
    pub fn close(self) -> Result<(), StorageError> {
        self.file.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn open(dir: &tempfile::TempDir, base: i64, max: usize) -> TimeIndex {
        TimeIndex::open(dir.path().join("00000000000000000000.timeindex"), base, max).unwrap()
    }

    #[test]
    fn new_file_preallocates_a_multiple_of_twelve() {
        let dir = tempfile::tempdir().unwrap();
        let idx = open(&dir, 0, 10 * 1024 * 1024);
        assert_eq!((idx.length(), idx.max_entries()), (10_485_756, 873_813));
        assert_eq!(
            idx.last_entry(),
            TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: 0
            }
        );
    }

    #[test]
    fn maybe_append_only_on_a_greater_timestamp() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 100, 1200);
        idx.maybe_append(NO_TIMESTAMP, 100, false).unwrap();
        assert_eq!(idx.entries(), 0);
        idx.maybe_append(1000, 105, false).unwrap();
        idx.maybe_append(1000, 105, false).unwrap();
        idx.maybe_append(1000, 107, false).unwrap();
        assert_eq!(idx.entries(), 1);
        assert!(matches!(
            idx.maybe_append(2000, 104, false),
            Err(StorageError::InvalidOffset { .. })
        ));
        assert!(matches!(
            idx.maybe_append(999, 110, false),
            Err(StorageError::InvalidTimestamp { .. })
        ));
        idx.maybe_append(2000, 110, false).unwrap();
        assert_eq!(
            idx.lookup(999),
            TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: 100
            }
        );
        assert_eq!(
            idx.lookup(1500),
            TimestampOffset {
                timestamp: 1000,
                offset: 105
            }
        );
        assert_eq!(
            idx.lookup(i64::MAX),
            TimestampOffset {
                timestamp: 2000,
                offset: 110
            }
        );
    }

    #[test]
    fn last_slot_is_reserved_for_roll() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 0, 36);
        idx.maybe_append(1, 1, false).unwrap();
        idx.maybe_append(2, 2, false).unwrap();
        assert!(idx.is_full());
        assert!(matches!(
            idx.maybe_append(3, 3, false),
            Err(StorageError::IndexFull { .. })
        ));
        idx.maybe_append(3, 3, true).unwrap();
        assert_eq!(idx.entries(), 3);
        assert!(idx.maybe_append(4, 4, true).is_err());
        // The same entry again at close is ignored even with every slot taken.
        idx.maybe_append(3, 3, true).unwrap();
    }

    #[test]
    fn closed_index_matches_the_bytes_kafka_writes() {
        // Kafka 3.9.1's TimeIndex(file, 100, 50) after maybeAppend(1000, 105), (2000, 110),
        // (2000, 110, true), (3000, 111, true) and close() wrote exactly these 36 bytes.
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 100, 50);
        idx.maybe_append(1000, 105, false).unwrap();
        idx.maybe_append(2000, 110, false).unwrap();
        idx.maybe_append(2000, 110, true).unwrap();
        idx.maybe_append(3000, 111, true).unwrap();
        let path = idx.path().to_path_buf();
        idx.close().unwrap();
        let want: [u8; 36] = [
            0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0x07, 0xd0, 0, 0, 0, 10, 0,
            0, 0, 0, 0, 0, 0x0b, 0xb8, 0, 0, 0, 11,
        ];
        assert_eq!(std::fs::read(path).unwrap(), want);
    }

    #[test]
    fn truncate_to_by_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 0, 1200);
        for (t, o) in [(10, 1), (20, 5), (30, 9)] {
            idx.maybe_append(t, o, false).unwrap();
        }
        idx.truncate_to(6).unwrap();
        assert_eq!(
            idx.last_entry(),
            TimestampOffset {
                timestamp: 20,
                offset: 5
            }
        );
        idx.truncate_to(5).unwrap();
        assert_eq!(
            idx.last_entry(),
            TimestampOffset {
                timestamp: 10,
                offset: 1
            }
        );
        idx.truncate_to(0).unwrap();
        assert_eq!(
            idx.last_entry(),
            TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: 0
            }
        );
        idx.maybe_append(5, 0, false).unwrap();
    }

    #[test]
    fn untrimmed_zero_padded_file_is_read_and_checked_as_kafka_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.timeindex");
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&1_600_000_000_000i64.to_be_bytes());
        bytes.extend_from_slice(&3i32.to_be_bytes());
        bytes.resize(12 * 5, 0);
        std::fs::write(&path, &bytes).unwrap();
        let idx = TimeIndex::open(path.clone(), 50, 1200).unwrap();
        assert_eq!((idx.entries(), idx.max_entries()), (5, 5));
        assert_eq!(
            idx.last_entry(),
            TimestampOffset {
                timestamp: 0,
                offset: 50
            }
        );
        let err = idx.sanity_check().unwrap_err().to_string();
        assert!(
            err.contains(
                "last timestamp is 0 which is less than the first timestamp 1600000000000"
            ),
            "{err}"
        );
        // An all-zero file passes the checks, as in Kafka; recovery is what rebuilds it.
        std::fs::write(&path, [0u8; 24]).unwrap();
        let idx = TimeIndex::open(path.clone(), 50, 1200).unwrap();
        idx.sanity_check().unwrap();
        assert!(idx.is_full());
        std::fs::write(&path, [0u8; 25]).unwrap();
        let err = TimeIndex::open(path, 50, 1200)
            .unwrap()
            .sanity_check()
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("found 25 bytes which is neither positive nor a multiple of 12")
        );
    }

    #[test]
    fn reset_and_resize_refresh_the_last_entry() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 0, 120);
        idx.maybe_append(7, 1, false).unwrap();
        idx.trim_to_valid_size().unwrap();
        assert_eq!((idx.length(), idx.last_entry().timestamp), (12, 7));
        idx.reset().unwrap();
        assert_eq!(
            (idx.entries(), idx.length(), idx.last_entry().timestamp),
            (0, 120, NO_TIMESTAMP)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn lookup_returns_greatest_timestamp_at_or_below(
            steps in proptest::collection::vec((1i64..1000, 0i64..5), 0..1500),
            targets in proptest::collection::vec(0i64..800_000, 1..40),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut idx = open(&dir, 0, 12 * 2000);
            let mut entries = Vec::new();
            let (mut ts, mut off) = (0i64, 0i64);
            for (dt, doff) in steps {
                ts += dt;
                off += doff;
                idx.maybe_append(ts, off, false).unwrap();
                entries.push(TimestampOffset { timestamp: ts, offset: off });
            }
            for target in targets {
                let want = entries.iter().rev().find(|e| e.timestamp <= target).copied()
                    .unwrap_or(TimestampOffset { timestamp: NO_TIMESTAMP, offset: 0 });
                prop_assert_eq!(idx.lookup(target), want);
            }
        }

        #[test]
        fn reopen_after_trim_keeps_entries(n in 0usize..300) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("a.timeindex");
            let mut idx = TimeIndex::open(path.clone(), 3, 12 * 400).unwrap();
            for i in 0..n {
                idx.maybe_append(100 + i as i64, 3 + 2 * i as i64, false).unwrap();
            }
            let last = idx.last_entry();
            idx.close().unwrap();
            let idx = TimeIndex::open(path, 3, 12 * 400).unwrap();
            idx.sanity_check().unwrap();
            prop_assert_eq!(idx.entries(), n);
            prop_assert_eq!(idx.last_entry(), last);
            for i in 0..n {
                prop_assert_eq!(idx.entry(i), Some(TimestampOffset { timestamp: 100 + i as i64, offset: 3 + 2 * i as i64 }));
            }
        }
    }
}
