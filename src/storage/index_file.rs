//! A memory-mapped, preallocated index file of fixed-size entries: the machinery Kafka 3.9's
//! `AbstractIndex` shares between the offset index and the time index (file creation and
//! preallocation, the mmap, resize/trim, flush, rename, delete, and the cache-friendly binary
//! search). This module holds the only `unsafe` code of the storage layer: creating the maps.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use memmap2::{Mmap, MmapMut, MmapOptions};
use nix::errno::Errno;
use nix::fcntl::{FallocateFlags, fallocate};
use nix::unistd::{Whence, lseek};

use crate::protocol::record::big_endian::{i32_at, i64_at};
use crate::storage::StorageError;
use crate::storage::log_file_cache::LOG_FILES;

/// Bytes of the "warm" tail of an index that lookups try first (Kafka's `warmEntries()` is
/// `8192 / entrySize`): recent entries are what in-sync followers and consumers look up, and
/// keeping their binary search within the last couple of pages keeps those pages hot.
const WARM_SECTION_BYTES: usize = 8192;

/// The unit in which an index's blocks are reserved ahead of writes through its map: a page.
const RESERVE_BYTES: usize = 4096;

/// What a slot in a hole of the file reads as.
const ZERO_SLOT: [u8; 16] = [0; 16];

/// Which half of an entry a search compares against (Kafka's `IndexSearchType`): the key is the
/// offset of an offset index or the timestamp of a time index; the value is the position or the
/// offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IndexSearchType {
    Key,
    Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SearchResultType {
    LargestLowerBound,
    SmallestUpperBound,
}

/// The mapping of the whole file. `None` only transiently while the file is resized (the map
/// must be gone before `set_len`, or a shrink would leave it pointing past the end of the file)
/// or after a failed remap.
#[derive(Debug)]
enum Map {
    ReadWrite(MmapMut),
    ReadOnly(Mmap),
    None,
}

impl Map {
    /// `madvise(MADV_RANDOM)`: a fault reads the page it needs, no read-ahead around it. Only
    /// advice: where the kernel refuses it, the map works as before.
    fn advise_random(&self) {
        let advised = match self {
            Map::ReadWrite(map) => map.advise(memmap2::Advice::Random),
            Map::ReadOnly(map) => map.advise(memmap2::Advice::Random),
            Map::None => Ok(()),
        };
        if let Err(err) = advised {
            tracing::debug!(%err, "madvise(MADV_RANDOM) of an index map refused");
        }
    }
}

/// A file of `entry_size`-byte slots, memory-mapped in full, of which the first `entries` are
/// valid.
///
/// Invariants (Kafka's `AbstractIndex`):
/// - A file created here is preallocated to `round_down(max_index_size, entry_size)` bytes and
///   starts with no entries.
/// - A file that already exists is trusted: `entries = length / entry_size` and
///   `max_entries = length / entry_size`, so an untrimmed, zero-padded file reads its padding as
///   entries. That is why indexes are trimmed (`trim_to_valid_size`) on roll and close, and why
///   callers sanity-check or rebuild indexes after an unclean shutdown.
/// - `entries <= max_entries` and the map covers exactly `length` bytes.
/// - Slots are written through the map only below `reserved`, where the file's blocks have been
///   allocated (`fallocate`): the preallocated file is sparse, and a write through a map into a
///   hole the file system cannot fill (a full disk) is a SIGBUS that kills the broker, where
///   an allocation that fails is an I/O error that takes the log dir offline.
/// - Slots at or past `holes_from` (the file's first hole when opened) and not reserved since
///   read as zeros without touching the map: on tmpfs even a read fault in a hole allocates,
///   and a SIGBUS when the file system is full. An index left preallocated by an unclean
///   shutdown is mostly hole.
#[derive(Debug)]
pub(crate) struct IndexFile {
    path: PathBuf,
    base_offset: i64,
    max_index_size: usize,
    entry_size: usize,
    writable: bool,
    length: usize,
    map: Map,
    entries: usize,
    max_entries: usize,
    /// Bytes from the start known to have blocks behind them (whole pages reserved, or the
    /// length a shrink left, or `length` where the file system cannot reserve).
    reserved: usize,
    /// Where the file's first hole began when it was opened (`lseek(SEEK_HOLE)`; `length` on a
    /// file system that reports none).
    holes_from: usize,
}

/// The greatest multiple of `factor` that is `<= number` (Kafka's `roundDownToExactMultiple`).
pub(crate) fn round_down_to_exact_multiple(number: usize, factor: usize) -> usize {
    if factor == 0 {
        0
    } else {
        factor * (number / factor)
    }
}

impl IndexFile {
    /// Opens `path` for reading and appending, creating and preallocating it when it does not
    /// exist.
    pub(crate) fn open(
        path: PathBuf,
        base_offset: i64,
        max_index_size: usize,
        entry_size: usize,
    ) -> Result<Self, StorageError> {
        let created = match LOG_FILES.open_with_room(|| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
        }) {
            Ok(file) => Some(file),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => None,
            Err(e) => return Err(StorageError::io(&path, e)),
        };
        let newly_created = created.is_some();
        let file = match created {
            Some(file) => {
                if max_index_size < entry_size {
                    // Kafka checks after creating the file and leaves it behind; we remove it so
                    // a bad config leaves no empty index that a later open would trust.
                    let _ = std::fs::remove_file(&path);
                    return Err(StorageError::InvalidArgument {
                        reason: format!("invalid max index size: {max_index_size}"),
                    });
                }
                let size = round_down_to_exact_multiple(max_index_size, entry_size);
                file.set_len(size as u64)
                    .map_err(|e| StorageError::io(&path, e))?;
                file
            }
            None => LOG_FILES
                .open_with_room(|| OpenOptions::new().read(true).write(true).open(&path))
                .map_err(|e| StorageError::io(&path, e))?,
        };
        Self::from_file(
            path,
            file,
            base_offset,
            max_index_size,
            entry_size,
            true,
            newly_created,
        )
    }

    /// Opens an existing index without ever modifying it (Kafka's `writable = false`, used by
    /// `DumpLogSegments`): every mutation returns [`StorageError::InvalidArgument`].
    pub(crate) fn open_read_only(
        path: PathBuf,
        base_offset: i64,
        entry_size: usize,
    ) -> Result<Self, StorageError> {
        let file = LOG_FILES
            .open_with_room(|| File::open(&path))
            .map_err(|e| StorageError::io(&path, e))?;
        Self::from_file(path, file, base_offset, 0, entry_size, false, false)
    }

    fn from_file(
        path: PathBuf,
        file: File,
        base_offset: i64,
        max_index_size: usize,
        entry_size: usize,
        writable: bool,
        newly_created: bool,
    ) -> Result<Self, StorageError> {
        let length = file_length(&path, &file)?;
        let holes_from = first_hole(&file).unwrap_or(length).min(length);
        let map = map_file(&path, &file, length, writable)?;
        // The map does not need the descriptor: it is closed here, as Kafka closes its
        // RandomAccessFile once mapped, so a segment costs one descriptor (its `.log`), not
        // three. Reservations and resizes open the file again for their one call.
        drop(file);
        let max_entries = length / entry_size.max(1);
        // A pre-existing index is assumed valid up to its last whole slot.
        let entries = if newly_created { 0 } else { max_entries };
        Ok(Self {
            path,
            base_offset,
            max_index_size,
            entry_size,
            writable,
            length,
            map,
            entries,
            max_entries,
            reserved: 0,
            holes_from,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub(crate) fn entries(&self) -> usize {
        self.entries
    }

    pub(crate) fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// The file's length in bytes (preallocated space included).
    pub(crate) fn length(&self) -> usize {
        self.length
    }

    pub(crate) fn max_index_size(&self) -> usize {
        self.max_index_size
    }

    /// Bytes used by entries: `entries * entry_size`.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.entries * self.entry_size
    }

    /// Points the index at `parent_dir/<same file name>` after its directory was renamed
    /// (Kafka's `updateParentDir`).
    pub(crate) fn update_parent_dir(&mut self, parent_dir: &Path) {
        if let Some(name) = self.path.file_name() {
            self.path = parent_dir.join(name);
        }
    }

    fn bytes(&self) -> &[u8] {
        match &self.map {
            Map::ReadWrite(m) => m,
            Map::ReadOnly(m) => m,
            Map::None => &[],
        }
    }

    /// The bytes of slot `n` (zeros in a hole), or `None` past the end of the map.
    pub(crate) fn slot(&self, n: usize) -> Option<&[u8]> {
        let start = n.checked_mul(self.entry_size)?;
        let end = start.checked_add(self.entry_size)?;
        let bytes = self.bytes();
        if end > bytes.len() {
            return None;
        }
        if end > self.holes_from.max(self.reserved) {
            return ZERO_SLOT.get(..self.entry_size);
        }
        bytes.get(start..end)
    }

    /// The big-endian `i32` at `at` bytes into slot `n`; 0 past the end of the map (which the
    /// invariant `entries <= max_entries` keeps callers from reaching).
    pub(crate) fn read_i32(&self, n: usize, at: usize) -> i32 {
        self.slot(n).map_or(0, |s| i32_at(s, at))
    }

    /// The big-endian `i64` at `at` bytes into slot `n`; 0 past the end of the map.
    pub(crate) fn read_i64(&self, n: usize, at: usize) -> i64 {
        self.slot(n).map_or(0, |s| i64_at(s, at))
    }

    /// The file opened again for one reservation or resize (the map holds no descriptor).
    fn open_for_write(&self) -> Result<File, StorageError> {
        LOG_FILES
            .open_with_room(|| OpenOptions::new().read(true).write(true).open(&self.path))
            .map_err(|e| StorageError::io(&self.path, e))
    }

    fn check_writable(&self) -> Result<(), StorageError> {
        if self.writable {
            Ok(())
        } else {
            Err(StorageError::InvalidArgument {
                reason: format!("index {} was opened read-only", self.path.display()),
            })
        }
    }

    /// Writes `entry` into the next free slot. The caller has checked fullness and ordering.
    pub(crate) fn push_entry(&mut self, entry: &[u8]) -> Result<(), StorageError> {
        self.check_writable()?;
        let start = self.entries * self.entry_size;
        let full = StorageError::IndexFull {
            path: self.path.clone(),
            entries: self.entries,
        };
        if entry.len() != self.entry_size || self.entries >= self.max_entries {
            return Err(full);
        }
        // `entries < max_entries` keeps the slot inside the file.
        self.reserve(start, start + entry.len())?;
        let Map::ReadWrite(map) = &mut self.map else {
            return Err(full);
        };
        let Some(dst) = map.get_mut(start..start + entry.len()) else {
            return Err(full);
        };
        dst.copy_from_slice(entry);
        self.entries += 1;
        Ok(())
    }

    /// Allocates the blocks of the pages under `start..end` that are not yet (see the type's
    /// invariants): one `fallocate` per page of entries. On a file system without `fallocate`
    /// the map writes into holes as Kafka's does.
    fn reserve(&mut self, start: usize, end: usize) -> Result<(), StorageError> {
        if end <= self.reserved {
            return Ok(());
        }
        if !self.writable {
            return Ok(());
        }
        let file = self.open_for_write()?;
        // From the mark, not from `start`: everything below `reserved` stays allocated.
        let from = self.reserved.min(start - start % RESERVE_BYTES);
        let to = end.next_multiple_of(RESERVE_BYTES).min(self.length);
        let as_off_t = |n: usize| nix::libc::off_t::try_from(n).unwrap_or(nix::libc::off_t::MAX);
        match fallocate(
            &file,
            FallocateFlags::empty(),
            as_off_t(from),
            as_off_t(to - from),
        ) {
            Ok(()) => self.reserved = to,
            Err(Errno::EOPNOTSUPP) => self.reserved = self.length,
            Err(errno) => return Err(StorageError::io(&self.path, errno.into())),
        }
        Ok(())
    }

    /// Keeps the first `entries` slots (the position moves back; the bytes stay until
    /// overwritten, as in Kafka).
    pub(crate) fn truncate_to_entries(&mut self, entries: usize) {
        self.entries = entries.min(self.max_entries);
    }

    /// `offset - base_offset` as the 4-byte relative offset, or
    /// [`StorageError::IndexOffsetOverflow`] when it is negative or above `i32::MAX`.
    pub(crate) fn relative_offset(&self, offset: i64) -> Result<i32, StorageError> {
        self.to_relative(offset)
            .ok_or_else(|| StorageError::IndexOffsetOverflow {
                path: self.path.clone(),
                offset,
            })
    }

    /// Whether `offset` can be stored relative to the base offset (Kafka's `canAppendOffset`).
    pub(crate) fn can_append_offset(&self, offset: i64) -> bool {
        self.to_relative(offset).is_some()
    }

    fn to_relative(&self, offset: i64) -> Option<i32> {
        offset
            .checked_sub(self.base_offset)
            .and_then(|r| i32::try_from(r).ok())
            .filter(|r| *r >= 0)
    }

    /// Resizes the file and the map to `round_down(new_size, entry_size)` bytes, keeping the
    /// entries; returns whether anything changed (Kafka's `resize`). Used to trim on roll/close
    /// and to grow the active segment's indexes back to the maximum after load.
    pub(crate) fn resize(&mut self, new_size: usize) -> Result<bool, StorageError> {
        self.check_writable()?;
        let rounded = round_down_to_exact_multiple(new_size, self.entry_size);
        if rounded == self.length {
            return Ok(false);
        }
        if rounded < self.size_in_bytes() {
            // Kafka fails here too (the buffer position would pass the new limit), but only
            // after changing the file; we refuse before touching anything.
            return Err(StorageError::InvalidArgument {
                reason: format!(
                    "cannot resize index {} to {rounded} bytes below its {} entries",
                    self.path.display(),
                    self.entries
                ),
            });
        }
        let file = self.open_for_write()?;
        // Unmap before set_len: a shrink under a live map would make touching the cut pages
        // SIGBUS, and some platforms refuse to resize mapped files at all.
        self.map = Map::None;
        if let Err(e) = file.set_len(rounded as u64) {
            // Put the old map back so the index keeps working at its old size.
            self.map = map_file(&self.path, &file, self.length, true)?;
            return Err(StorageError::io(&self.path, e));
        }
        self.length = rounded;
        self.max_entries = rounded / self.entry_size;
        // A shrink gave the blocks past the new end back; a later grow makes holes there.
        self.reserved = self.reserved.min(rounded);
        self.holes_from = self.holes_from.min(rounded);
        self.map = map_file(&self.path, &file, rounded, true)?;
        Ok(true)
    }

    /// Shrinks the file to exactly its entries (Kafka's `trimToValidSize`).
    pub(crate) fn trim_to_valid_size(&mut self) -> Result<(), StorageError> {
        if matches!(self.map, Map::None) {
            return Ok(());
        }
        self.resize(self.size_in_bytes()).map(|_| ())
    }

    /// Writes dirty pages of the map to disk (`msync`, Kafka's `mmap.force()`).
    pub(crate) fn flush(&self) -> Result<(), StorageError> {
        match &self.map {
            Map::ReadWrite(m) => m.flush().map_err(|e| StorageError::io(&self.path, e)),
            Map::ReadOnly(_) | Map::None => Ok(()),
        }
    }

    /// Renames the file; the index follows the new name even when the rename fails, as in
    /// Kafka's `renameTo`. The map stays valid: it belongs to the inode, not the name.
    pub(crate) fn rename_to(&mut self, new_path: PathBuf) -> Result<(), StorageError> {
        let result = std::fs::rename(&self.path, &new_path);
        let old = std::mem::replace(&mut self.path, new_path);
        result.map_err(|e| StorageError::io(old, e))
    }

    /// Unmaps and deletes the file; a file already gone is not an error (Kafka's
    /// `deleteIfExists`). Returns whether a file was deleted.
    pub(crate) fn delete(mut self) -> Result<bool, StorageError> {
        self.map = Map::None;
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StorageError::io(&self.path, e)),
        }
    }

    /// Trims a writable index to its entries, then unmaps it (Kafka's `close`).
    pub(crate) fn close(mut self) -> Result<(), StorageError> {
        if self.writable {
            self.trim_to_valid_size()?;
        }
        self.map = Map::None;
        Ok(())
    }

    /// The slot of the greatest entry `<= target` (by key or value), or `None` when every entry
    /// is above it or the index is empty (Kafka's `largestLowerBoundSlotFor`).
    pub(crate) fn largest_lower_bound_slot_for(
        &self,
        target: i64,
        search: IndexSearchType,
        read: impl Fn(&Self, usize, IndexSearchType) -> i64,
    ) -> Option<usize> {
        self.index_slot_range_for(target, search, SearchResultType::LargestLowerBound, read)
    }

    /// The slot of an entry `>= target` — the smallest, except that a target equal to the first
    /// entry answers slot 1 as in Kafka, whose search never compares its first slot — or `None`
    /// (Kafka's `smallestUpperBoundSlotFor`).
    pub(crate) fn smallest_upper_bound_slot_for(
        &self,
        target: i64,
        search: IndexSearchType,
        read: impl Fn(&Self, usize, IndexSearchType) -> i64,
    ) -> Option<usize> {
        self.index_slot_range_for(target, search, SearchResultType::SmallestUpperBound, read)
    }

    /// Kafka's `indexSlotRangeFor`, step for step, so that even a corrupt (unsorted or
    /// zero-padded) index answers what Kafka's would: search the warm tail first when the target
    /// is above its first entry, else the rest.
    fn index_slot_range_for(
        &self,
        target: i64,
        search: IndexSearchType,
        result: SearchResultType,
        read: impl Fn(&Self, usize, IndexSearchType) -> i64,
    ) -> Option<usize> {
        if self.entries == 0 {
            return None;
        }
        let warm_entries = WARM_SECTION_BYTES / self.entry_size.max(1);
        let first_hot_entry = (self.entries - 1).saturating_sub(warm_entries);
        if read(self, first_hot_entry, search) < target {
            return self.binary_search(
                target,
                search,
                result,
                first_hot_entry,
                self.entries - 1,
                &read,
            );
        }
        if read(self, 0, search) > target {
            return match result {
                SearchResultType::LargestLowerBound => None,
                SearchResultType::SmallestUpperBound => Some(0),
            };
        }
        self.binary_search(target, search, result, 0, first_hot_entry, &read)
    }

    fn binary_search(
        &self,
        target: i64,
        search: IndexSearchType,
        result: SearchResultType,
        begin: usize,
        end: usize,
        read: &impl Fn(&Self, usize, IndexSearchType) -> i64,
    ) -> Option<usize> {
        let mut lo = begin;
        let mut hi = end;
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            let found = read(self, mid, search);
            match found.cmp(&target) {
                std::cmp::Ordering::Greater => hi = mid - 1,
                std::cmp::Ordering::Less => lo = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        match result {
            SearchResultType::LargestLowerBound => Some(lo),
            SearchResultType::SmallestUpperBound => {
                if lo == self.entries - 1 {
                    None
                } else {
                    Some(lo + 1)
                }
            }
        }
    }
}

/// The offset of `file`'s first hole (its length when it has none), if the file system says.
fn first_hole(file: &File) -> Option<usize> {
    let hole = lseek(file, 0, Whence::SeekHole).ok()?;
    usize::try_from(hole).ok()
}

fn file_length(path: &Path, file: &File) -> Result<usize, StorageError> {
    let len = file
        .metadata()
        .map_err(|e| StorageError::io(path, e))?
        .len();
    usize::try_from(len).map_err(|_| StorageError::CorruptIndex {
        path: path.to_path_buf(),
        reason: format!("index file of {len} bytes does not fit in memory"),
    })
}

fn map_file(path: &Path, file: &File, length: usize, writable: bool) -> Result<Map, StorageError> {
    let mut options = MmapOptions::new();
    options.len(length);
    let map = if writable {
        // SAFETY: the map is only sound while no one truncates or rewrites the file behind our
        // back. Index files live in a log dir that the broker holds under an exclusive `.lock`;
        // within the process the index is the file's only writer, and it drops this map before
        // every `set_len`. Bytes read through the map are treated as untrusted input.
        unsafe { options.map_mut(file) }.map(Map::ReadWrite)
    } else {
        // SAFETY: as above, a read-only map is sound unless the file shrinks while mapped. A
        // read-only open is for inspecting files (possibly of a running broker, which only
        // shrinks an index by trimming inactive ones); the contents are treated as untrusted.
        unsafe { options.map(file) }.map(Map::ReadOnly)
    };
    let map = map.map_err(|source| {
        if source.raw_os_error() == Some(Errno::ENOMEM as i32) {
            // The process's map count is at `vm.max_map_count` (the likely cause by far; an
            // index is too small to exhaust the address space): a limit, not a failed disk.
            StorageError::MapFailed {
                path: path.to_path_buf(),
                max_map_count: super::descriptors::max_map_count().unwrap_or(0),
                source,
            }
        } else {
            StorageError::io(path, source)
        }
    })?;
    // An index is read and written a few bytes at a time at scattered places (binary search,
    // one entry per `index.interval.bytes` appended), and most of a new one is a hole. Without
    // this, the first touch of each index faults in the device's whole read-ahead window
    // (8 MiB here) of zeroes: with thousands of partitions, a produce spread over all of them
    // spent 95% of the broker's CPU zeroing pages.
    map.advise_random();
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(f: &IndexFile, n: usize, _: IndexSearchType) -> i64 {
        i64::from(f.read_i32(n, 0))
    }

    #[test]
    fn new_file_is_preallocated_and_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        let f = IndexFile::open(path.clone(), 0, 100, 12).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 96);
        assert_eq!((f.entries(), f.max_entries(), f.length()), (0, 8, 96));
    }

    #[test]
    fn too_small_max_size_is_refused_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        let err = IndexFile::open(path.clone(), 0, 7, 8).unwrap_err();
        assert!(
            err.to_string().contains("invalid max index size: 7"),
            "{err}"
        );
        assert!(!path.exists());
    }

    #[test]
    fn existing_file_counts_every_whole_slot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        std::fs::write(&path, [0u8; 20]).unwrap();
        let f = IndexFile::open(path, 0, 1024, 8).unwrap();
        assert_eq!((f.entries(), f.max_entries(), f.length()), (2, 2, 20));
    }

    #[test]
    fn a_reopened_preallocated_index_reads_its_holes_as_zeros_and_its_entries_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        let mut f = IndexFile::open(path.clone(), 0, 1 << 20, 8).unwrap();
        f.push_entry(&[0, 0, 0, 7, 0, 0, 0, 9]).unwrap();
        drop(f);
        // As after an unclean shutdown: every slot counts as an entry, most of them in holes.
        let f = IndexFile::open(path, 0, 1 << 20, 8).unwrap();
        assert_eq!(f.entries(), (1 << 20) / 8);
        assert_eq!((f.read_i32(0, 0), f.read_i32(0, 4)), (7, 9));
        assert_eq!(f.read_i64(f.entries() - 1, 0), 0);
        assert_eq!(f.slot(f.entries()), None);
    }

    /// Whether this process has a descriptor open on `path`.
    fn holds_descriptor(path: &Path) -> bool {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .any(|target| target == path)
    }

    #[test]
    fn a_mapped_index_holds_no_descriptor_and_still_grows_shrinks_and_reserves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        let mut f = IndexFile::open(path.clone(), 0, 1 << 16, 8).unwrap();
        assert!(!holds_descriptor(&path));
        for n in 0..1_000u32 {
            let mut entry = [0u8; 8];
            entry[..4].copy_from_slice(&n.to_be_bytes());
            f.push_entry(&entry).unwrap();
        }
        f.trim_to_valid_size().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8_000);
        assert!(f.resize(1 << 16).unwrap());
        assert_eq!(f.read_i32(999, 0), 999);
        assert!(!holds_descriptor(&path));
    }

    #[test]
    fn resize_keeps_entries_and_refuses_to_cut_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        let mut f = IndexFile::open(path.clone(), 0, 64, 8).unwrap();
        f.push_entry(&[0, 0, 0, 1, 0, 0, 0, 2]).unwrap();
        f.push_entry(&[0, 0, 0, 3, 0, 0, 0, 4]).unwrap();
        assert!(f.resize(8).is_err());
        assert!(f.resize(23).unwrap());
        assert_eq!((f.length(), f.max_entries(), f.entries()), (16, 2, 2));
        assert!(!f.resize(16).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 16);
        assert_eq!(f.read_i32(1, 0), 3);
        assert!(f.push_entry(&[0; 8]).is_err());
    }

    #[test]
    fn search_matches_a_linear_scan_across_the_warm_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = IndexFile::open(dir.path().join("a.index"), 0, 8 * 3000, 8).unwrap();
        for i in 0..3000i32 {
            let mut e = [0u8; 8];
            e[..4].copy_from_slice(&(i * 2 + 10).to_be_bytes());
            f.push_entry(&e).unwrap();
        }
        for target in [0i64, 9, 10, 11, 3000, 3999, 4000, 4001, 6008, 6009, 9000] {
            let want = (0..3000usize)
                .rev()
                .find(|&n| key(&f, n, IndexSearchType::Key) <= target);
            let got = f.largest_lower_bound_slot_for(target, IndexSearchType::Key, key);
            assert_eq!(got, want, "target {target}");
            let mut want_up = (0..3000usize).find(|&n| key(&f, n, IndexSearchType::Key) >= target);
            if target == 10 {
                // Kafka's search never compares its first slot, so an exact hit there answers
                // the next slot: still an upper bound, as `fetchUpperBoundOffset` promises.
                want_up = Some(1);
            }
            let got_up = f.smallest_upper_bound_slot_for(target, IndexSearchType::Key, key);
            assert_eq!(got_up, want_up, "upper target {target}");
        }
    }

    #[test]
    fn read_only_index_refuses_mutation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.index");
        std::fs::write(&path, [0u8; 16]).unwrap();
        let mut f = IndexFile::open_read_only(path.clone(), 0, 8).unwrap();
        assert_eq!(f.entries(), 2);
        assert!(f.push_entry(&[0; 8]).is_err());
        assert!(f.resize(8).is_err());
        f.close().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 16);
    }

    #[test]
    fn rename_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = IndexFile::open(dir.path().join("a.index"), 0, 64, 8).unwrap();
        let to = dir.path().join("a.index.deleted");
        f.rename_to(to.clone()).unwrap();
        assert_eq!(f.path(), to);
        assert!(f.delete().unwrap());
        assert!(!to.exists());
    }
}
