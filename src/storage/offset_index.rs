//! The offset index (`.index`) of a segment: a sparse map from offsets to byte positions in the
//! segment's `.log`, as Kafka 3.9's `OffsetIndex`.

use std::path::{Path, PathBuf};

use crate::storage::StorageError;
use crate::storage::index_file::{IndexFile, IndexSearchType};

/// Bytes per entry: a 4-byte relative offset and a 4-byte position.
pub const OFFSET_INDEX_ENTRY_SIZE: usize = 8;

/// An offset and the byte position of its batch in the segment's `.log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetPosition {
    pub offset: i64,
    pub position: u32,
}

/// An index that maps offsets to physical file positions for one log segment. It is sparse: it
/// need not hold an entry for every message.
///
/// The file is preallocated to hold a fixed maximum number of 8-byte entries and is
/// memory-mapped; lookups binary-search the map for the greatest offset less than or equal to
/// the target. An index being written is mutable; when its segment rolls, it is trimmed to its
/// entries (`trim_to_valid_size`) and becomes read-mostly.
///
/// No checksum protects the contents: after a crash the index is rebuilt from the `.log`.
///
/// File format: a sequence of entries, each a big-endian 4-byte offset *relative to the
/// segment's base offset* followed by a big-endian 4-byte position in the `.log`. With base
/// offset 50, offset 55 is stored as 5; relative offsets are why a segment can span at most
/// `i32::MAX` offsets. All methods take and return absolute offsets.
///
/// Invariants: offsets are strictly increasing; `entries <= max_entries`; a file that already
/// existed when opened holds `length / 8` entries (Kafka trusts it; `sanity_check` and recovery
/// catch the damage of an untrimmed file).
#[derive(Debug)]
pub struct OffsetIndex {
    file: IndexFile,
    last_offset: i64,
}

impl OffsetIndex {
    /// Opens or creates the index of the segment starting at `base_offset`. A new file is
    /// preallocated to `round_down(max_index_size, 8)` bytes; an existing one keeps its length.
    pub fn open(
        path: PathBuf,
        base_offset: i64,
        max_index_size: usize,
    ) -> Result<Self, StorageError> {
        let file = IndexFile::open(path, base_offset, max_index_size, OFFSET_INDEX_ENTRY_SIZE)?;
        Ok(Self::from_file(file))
    }

    /// Opens an existing index for reading only; the file is never modified.
    pub fn open_read_only(path: PathBuf, base_offset: i64) -> Result<Self, StorageError> {
        let file = IndexFile::open_read_only(path, base_offset, OFFSET_INDEX_ENTRY_SIZE)?;
        Ok(Self::from_file(file))
    }

    fn from_file(file: IndexFile) -> Self {
        let mut index = Self {
            file,
            last_offset: 0,
        };
        index.last_offset = index.last_entry().offset;
        index
    }

    fn parse_entry(&self, n: usize) -> OffsetPosition {
        OffsetPosition {
            offset: self
                .file
                .base_offset()
                .wrapping_add(i64::from(self.file.read_i32(n, 0))),
            position: self.file.read_i32(n, 4) as u32,
        }
    }

    fn read_for_search(file: &IndexFile, n: usize, search: IndexSearchType) -> i64 {
        match search {
            IndexSearchType::Key => file
                .base_offset()
                .wrapping_add(i64::from(file.read_i32(n, 0))),
            IndexSearchType::Value => i64::from(file.read_i32(n, 4)),
        }
    }

    fn last_entry(&self) -> OffsetPosition {
        match self.file.entries() {
            0 => OffsetPosition {
                offset: self.file.base_offset(),
                position: 0,
            },
            n => self.parse_entry(n - 1),
        }
    }

    /// The entry with the greatest offset `<= target_offset`, or `(base_offset, 0)` when the
    /// index is empty or every entry is above the target.
    pub fn lookup(&self, target_offset: i64) -> OffsetPosition {
        match self.file.largest_lower_bound_slot_for(
            target_offset,
            IndexSearchType::Key,
            Self::read_for_search,
        ) {
            Some(slot) => self.parse_entry(slot),
            None => OffsetPosition {
                offset: self.file.base_offset(),
                position: 0,
            },
        }
    }

    /// The `n`th entry, or `None` when `n >= entries()` (where Kafka throws).
    pub fn entry(&self, n: usize) -> Option<OffsetPosition> {
        (n < self.file.entries()).then(|| self.parse_entry(n))
    }

    /// The first entry whose position is at or past `fetch_offset.position + fetch_size`: an
    /// offset certainly outside the fetched range, though not always the smallest such (Kafka's
    /// `fetchUpperBoundOffset`).
    pub fn fetch_upper_bound_offset(
        &self,
        fetch_offset: OffsetPosition,
        fetch_size: u32,
    ) -> Option<OffsetPosition> {
        let target = i64::from(fetch_offset.position) + i64::from(fetch_size);
        self.file
            .smallest_upper_bound_slot_for(target, IndexSearchType::Value, Self::read_for_search)
            .map(|slot| self.parse_entry(slot))
    }

    /// Appends an entry. The offset must be above every offset in the index and fit the 4-byte
    /// relative offset.
    pub fn append(&mut self, offset: i64, position: u32) -> Result<(), StorageError> {
        if self.is_full() {
            return Err(StorageError::IndexFull {
                path: self.file.path().to_path_buf(),
                entries: self.file.entries(),
            });
        }
        if self.file.entries() != 0 && offset <= self.last_offset {
            return Err(StorageError::InvalidOffset {
                path: self.file.path().to_path_buf(),
                reason: format!(
                    "attempt to append an offset {offset} to position {} no larger than the last \
                     offset appended ({})",
                    self.file.entries(),
                    self.last_offset
                ),
            });
        }
        let relative = self.file.relative_offset(offset)?;
        let mut entry = [0u8; OFFSET_INDEX_ENTRY_SIZE];
        entry[..4].copy_from_slice(&relative.to_be_bytes());
        entry[4..].copy_from_slice(&position.to_be_bytes());
        self.file.push_entry(&entry)?;
        self.last_offset = offset;
        Ok(())
    }

    /// Removes every entry with an offset `>= offset`; truncating above the last entry changes
    /// nothing.
    pub fn truncate_to(&mut self, offset: i64) -> Result<(), StorageError> {
        let slot = self.file.largest_lower_bound_slot_for(
            offset,
            IndexSearchType::Key,
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
        self.last_offset = self.last_entry().offset;
    }

    /// Removes every entry and grows the file back to the maximum index size.
    pub fn reset(&mut self) -> Result<(), StorageError> {
        self.truncate_to_entries(0);
        self.file.resize(self.file.max_index_size())?;
        Ok(())
    }

    pub fn entries(&self) -> usize {
        self.file.entries()
    }

    pub fn max_entries(&self) -> usize {
        self.file.max_entries()
    }

    /// True when no slot is free.
    pub fn is_full(&self) -> bool {
        self.file.entries() >= self.file.max_entries()
    }

    /// The offset of the last entry, or the base offset when the index is empty.
    pub fn last_offset(&self) -> i64 {
        self.last_offset
    }

    pub fn base_offset(&self) -> i64 {
        self.file.base_offset()
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Bytes used by entries: `entries * 8`.
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

    /// Kafka's checks: a non-empty index whose last offset is below the base, or a length that
    /// is not a multiple of 8, is corrupt.
    pub fn sanity_check(&self) -> Result<(), StorageError> {
        let path = self.file.path();
        if self.file.entries() != 0 && self.last_offset < self.file.base_offset() {
            return Err(StorageError::CorruptIndex {
                path: path.to_path_buf(),
                reason: format!(
                    "Corrupt index found, index file {} has non-zero size but the last offset is \
                     {} which is less than the base offset {}",
                    path.display(),
                    self.last_offset,
                    self.file.base_offset()
                ),
            });
        }
        if !self.file.length().is_multiple_of(OFFSET_INDEX_ENTRY_SIZE) {
            return Err(StorageError::CorruptIndex {
                path: path.to_path_buf(),
                reason: format!(
                    "Index file {} is corrupt, found {} bytes which is neither positive nor a \
                     multiple of {OFFSET_INDEX_ENTRY_SIZE}",
                    path.display(),
                    self.file.length()
                ),
            });
        }
        Ok(())
    }

    /// Shrinks the file to exactly its entries.
    pub fn trim_to_valid_size(&mut self) -> Result<(), StorageError> {
        self.file.trim_to_valid_size()
    }

    /// Resizes the file to `round_down(new_size, 8)` bytes; returns whether it changed.
    pub fn resize(&mut self, new_size: usize) -> Result<bool, StorageError> {
        self.file.resize(new_size)
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

    fn open(dir: &tempfile::TempDir, base: i64, max: usize) -> OffsetIndex {
        OffsetIndex::open(dir.path().join("00000000000000000000.index"), base, max).unwrap()
    }

    #[test]
    fn lookup_finds_the_greatest_entry_at_or_below() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 50, 1024);
        assert_eq!(
            idx.lookup(70),
            OffsetPosition {
                offset: 50,
                position: 0
            }
        );
        idx.append(55, 100).unwrap();
        idx.append(60, 200).unwrap();
        assert_eq!(
            idx.lookup(54),
            OffsetPosition {
                offset: 50,
                position: 0
            }
        );
        assert_eq!(idx.lookup(55).position, 100);
        assert_eq!(idx.lookup(59).position, 100);
        assert_eq!(idx.lookup(1000).position, 200);
        assert_eq!(
            idx.entry(1),
            Some(OffsetPosition {
                offset: 60,
                position: 200
            })
        );
        assert_eq!(idx.entry(2), None);
        assert_eq!(
            (idx.entries(), idx.max_entries(), idx.size_in_bytes()),
            (2, 128, 16)
        );
    }

    #[test]
    fn stores_relative_offsets_big_endian() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 50, 16);
        idx.append(55, 0x0102_0304).unwrap();
        let path = idx.path().to_path_buf();
        idx.close().unwrap();
        assert_eq!(std::fs::read(path).unwrap(), [0, 0, 0, 5, 1, 2, 3, 4]);
    }

    #[test]
    fn append_rejects_non_increasing_overflowing_and_full() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 10, 16);
        assert!(matches!(
            idx.append(9, 0),
            Err(StorageError::IndexOffsetOverflow { .. })
        ));
        let overflow = 10 + i64::from(i32::MAX) + 1;
        assert!(matches!(
            idx.append(overflow, 0),
            Err(StorageError::IndexOffsetOverflow { .. })
        ));
        idx.append(10, 0).unwrap();
        assert!(matches!(
            idx.append(10, 1),
            Err(StorageError::InvalidOffset { .. })
        ));
        idx.append(11, 8).unwrap();
        assert!(idx.is_full());
        assert!(matches!(
            idx.append(12, 9),
            Err(StorageError::IndexFull { .. })
        ));
    }

    #[test]
    fn truncate_to_drops_entries_at_or_above() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 0, 1024);
        for (o, p) in [(10, 1), (20, 2), (30, 3)] {
            idx.append(o, p).unwrap();
        }
        idx.truncate_to(31).unwrap();
        assert_eq!(idx.entries(), 3);
        idx.truncate_to(25).unwrap();
        assert_eq!((idx.entries(), idx.last_offset()), (2, 20));
        idx.truncate_to(20).unwrap();
        assert_eq!((idx.entries(), idx.last_offset()), (1, 10));
        idx.truncate_to(5).unwrap();
        assert_eq!((idx.entries(), idx.last_offset()), (0, 0));
        idx.append(1, 1).unwrap();
    }

    #[test]
    fn reset_empties_and_regrows() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 0, 80);
        idx.append(1, 1).unwrap();
        idx.trim_to_valid_size().unwrap();
        assert_eq!(idx.length(), 8);
        idx.reset().unwrap();
        assert_eq!(
            (idx.entries(), idx.max_entries(), idx.length()),
            (0, 10, 80)
        );
    }

    #[test]
    fn sanity_check_uses_kafkas_conditions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        // Relative offset -1: last offset below the base.
        std::fs::write(&path, [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]).unwrap();
        let err = OffsetIndex::open(path.clone(), 100, 1024)
            .unwrap()
            .sanity_check()
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("last offset is 99 which is less than the base offset 100")
        );
        std::fs::write(&path, [0u8; 12]).unwrap();
        let err = OffsetIndex::open(path.clone(), 100, 1024)
            .unwrap()
            .sanity_check()
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("found 12 bytes which is neither positive nor a multiple of 8")
        );
        // An untrimmed zero-padded file passes, as in Kafka: padding reads as entries at the base.
        std::fs::write(&path, [0u8; 64]).unwrap();
        let idx = OffsetIndex::open(path, 100, 1024).unwrap();
        idx.sanity_check().unwrap();
        assert_eq!(
            (idx.entries(), idx.last_offset(), idx.is_full()),
            (8, 100, true)
        );
    }

    #[test]
    fn fetch_upper_bound_offset_finds_first_position_past_the_range() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = open(&dir, 0, 1024);
        for (o, p) in [(10, 100), (20, 200), (30, 300)] {
            idx.append(o, p).unwrap();
        }
        let from = OffsetPosition {
            offset: 10,
            position: 100,
        };
        assert_eq!(
            idx.fetch_upper_bound_offset(from, 150).map(|e| e.offset),
            Some(30)
        );
        assert_eq!(
            idx.fetch_upper_bound_offset(from, 100).map(|e| e.offset),
            Some(20)
        );
        assert_eq!(idx.fetch_upper_bound_offset(from, 201), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn lookup_returns_greatest_entry_at_or_below(
            gaps in proptest::collection::vec(1i64..50, 0..1500),
            targets in proptest::collection::vec(0i64..80_000, 1..40),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut idx = open(&dir, 1000, 8 * 2000);
            let mut offsets = Vec::new();
            let mut offset = 1000;
            for (i, gap) in gaps.iter().enumerate() {
                offset += gap;
                idx.append(offset, i as u32).unwrap();
                offsets.push(offset);
            }
            for target in targets {
                let target = target + 900;
                let want = match offsets.iter().rposition(|o| *o <= target) {
                    Some(i) => OffsetPosition { offset: offsets[i], position: i as u32 },
                    None => OffsetPosition { offset: 1000, position: 0 },
                };
                prop_assert_eq!(idx.lookup(target), want);
            }
        }

        #[test]
        fn reopen_after_trim_keeps_entries(n in 0usize..300) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("a.index");
            let mut idx = OffsetIndex::open(path.clone(), 7, 4096).unwrap();
            for i in 0..n {
                idx.append(7 + 3 * i as i64, 11 * i as u32).unwrap();
            }
            idx.close().unwrap();
            let idx = OffsetIndex::open(path, 7, 4096).unwrap();
            idx.sanity_check().unwrap();
            prop_assert_eq!(idx.entries(), n);
            prop_assert_eq!(idx.max_entries(), n);
            for i in 0..n {
                prop_assert_eq!(idx.entry(i), Some(OffsetPosition { offset: 7 + 3 * i as i64, position: 11 * i as u32 }));
            }
        }
    }
}
