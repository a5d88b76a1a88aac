//! A segment's `.log` file: record batches appended back to back, read back as slices of the
//! file (for sendfile) or scanned entry by entry (for searches and recovery).
//!
//! The file holds entries of `[offset int64][size int32][size bytes]`: magic-2 record batches,
//! or, in logs written by old Kafka versions, magic 0/1 messages. kcli only appends magic-2
//! batches. Every read path checks sizes against the file's end, so a torn tail (a crash in the
//! middle of an append) reads as the end of the log, as in Kafka's `FileLogInputStream`.
//!
//! Appends allocate their blocks ahead of the data, past the file's end (`Reserved`).

use std::fs::File;
use std::io::IoSlice;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::errno::Errno;
use nix::fcntl::{FallocateFlags, fallocate};

use crate::protocol::record::RecordError;
use crate::protocol::record::batch::{LOG_OVERHEAD, MAGIC_V2, RECORD_BATCH_OVERHEAD};
use crate::protocol::record::batch_iter::BatchRef;
use crate::protocol::record::big_endian::{i32_at, i64_at};

use super::StorageError;
use super::log_file_cache::{LOG_FILES, LogFile};

/// The smallest entry Kafka accepts: a magic-0 message with empty key and value
/// (`LegacyRecord.RECORD_OVERHEAD_V0`). A smaller size field means corruption.
const MIN_ENTRY_SIZE: usize = 14;

/// Offset, magic and size fields: the bytes needed to step over an entry
/// (`HEADER_SIZE_UP_TO_MAGIC`).
const HEADER_SIZE_UP_TO_MAGIC: usize = 17;

/// The least an append allocates ahead of its data (see [`Reserved`]).
const MIN_RESERVE_AHEAD: u64 = 64 * 1024;

/// The most an append allocates ahead of its data: one `fallocate` per 4 MiB on a busy
/// partition, and no more than that left allocated past a segment that stops taking appends.
const MAX_RESERVE_AHEAD: u64 = 4 * 1024 * 1024;

/// Blocks allocated past the end of a `.log` file's data, ahead of the appends that will fill
/// them: `fallocate` with `FALLOC_FL_KEEP_SIZE`, so the file's length stays its data's and every
/// reader, Kafka's tools included, sees the file as it would without them.
///
/// Why: a buffered write into blocks not yet allocated makes ext4 reserve a block for each page
/// it dirties and track it as a delayed extent; into allocated ones it only copies. A replicated
/// broker writes every byte it takes, on leader and followers alike, and that bookkeeping was
/// about a sixth of its page-cache write cost (docs/benchmarks.md).
///
/// How much: an append past the reservation allocates an eighth of what the file holds beyond
/// its own end, between [`MIN_RESERVE_AHEAD`] and [`MAX_RESERVE_AHEAD`], so a quiet partition
/// holds little and a busy one calls `fallocate` once per 4 MiB; with `preallocate=true` a new
/// segment reserves its whole `segment.bytes` at once (Kafka makes the file that long instead,
/// sparse on Linux; here the length stays exact). The blocks are given back when the segment
/// rolls or closes and whenever the file is cut (a truncation, a failed or partial write). A
/// crash leaves them until the file's next open for appends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reserved {
    /// Blocks are allocated up to this length, which is at least the data's.
    To(u64),
    /// Nothing is reserved: the file is read-only, or its file system has no `fallocate` and
    /// appends allocate as they write.
    Off,
}

/// A range of a `.log` file, still open even if the segment is deleted (or its descriptor
/// closed by the cache) meanwhile; the unit a fetch sends to the socket with `sendfile(2)`.
/// An empty range holds no file: a poll at the log end of an idle partition opens nothing.
#[derive(Debug, Clone)]
pub struct FileSlice {
    /// The open file; `None` only when `size` is 0.
    pub file: Option<Arc<File>>,
    pub position: u64,
    pub size: u64,
}

impl FileSlice {
    /// The slice cut back to its last whole entry, for a read that a size limit cut mid-entry:
    /// one `pread` of an entry's offset and size per entry. The slice must start on an entry.
    /// A first entry that is itself cut stays as it is (nothing would be left).
    pub fn whole_entries(&self) -> std::io::Result<FileSlice> {
        let Some(file) = &self.file else {
            return Ok(self.clone());
        };
        let end = self.position + self.size;
        let mut at = self.position;
        let mut header = [0u8; LOG_OVERHEAD];
        while at + LOG_OVERHEAD as u64 <= end {
            file.read_exact_at(&mut header, at)?;
            let size_field = i32_at(&header, 8);
            let Ok(body) = u64::try_from(size_field) else {
                break;
            };
            let next = at + LOG_OVERHEAD as u64 + body;
            if next > end {
                break;
            }
            at = next;
        }
        let kept = if at == self.position {
            self.size
        } else {
            at - self.position
        };
        Ok(FileSlice {
            file: Some(Arc::clone(file)),
            position: self.position,
            size: kept,
        })
    }

    /// Copies the range into memory: for tests, tools and the down-conversion path.
    pub fn read_to_vec(&self) -> std::io::Result<Vec<u8>> {
        let len = usize::try_from(self.size).map_err(std::io::Error::other)?;
        let mut buf = vec![0; len];
        if let Some(file) = &self.file {
            file.read_exact_at(&mut buf, self.position)?;
        }
        Ok(buf)
    }
}

/// Where an offset lives in a `.log` file: the entry whose last offset is the first at or above
/// the target (`LogOffsetPosition` in Kafka).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetPosition {
    /// The last offset of the entry.
    pub offset: i64,
    /// The entry's byte position in the file.
    pub position: u64,
    /// The entry's size, log overhead included.
    pub size: usize,
}

/// A segment's `.log` file. Invariants: `size` is the file's length and ends on an entry
/// boundary once the file is loaded (recovery truncates a torn tail); blocks past it hold no
/// data, only the reservation of appends to come (see `Reserved`). Its descriptor is the
/// process's [`LOG_FILES`] cache's to close while the file is idle; every use reopens it if so.
#[derive(Debug)]
pub struct FileRecords {
    path: PathBuf,
    file: Arc<LogFile>,
    size: u64,
    reserved: Reserved,
}

impl FileRecords {
    /// Opens (creating when asked) a `.log` file for appending at its end. Blocks a crash left
    /// allocated past the end are given back first.
    pub fn open(path: PathBuf, create: bool) -> Result<Self, StorageError> {
        let handle = LogFile::open(&LOG_FILES, path.clone(), true, create)
            .map_err(|e| StorageError::io(&path, e))?;
        let file = handle.file().map_err(|e| StorageError::io(&path, e))?;
        let meta = file.metadata().map_err(|e| StorageError::io(&path, e))?;
        let size = meta.len();
        let allocated = meta.blocks().saturating_mul(512);
        let mut records = FileRecords {
            file: handle,
            path,
            size,
            reserved: Reserved::To(size),
        };
        if allocated > size.next_multiple_of(meta.blksize().max(1)) {
            // A reservation a crash left behind.
            records.reserved = Reserved::To(allocated);
            records.release_reserved()?;
        }
        Ok(records)
    }

    /// Opens an existing `.log` file for reading only (inspection tools: no write permission
    /// needed). Appending to or truncating it fails with an I/O error.
    pub fn open_read_only(path: PathBuf) -> Result<Self, StorageError> {
        let handle = LogFile::open(&LOG_FILES, path.clone(), false, false)
            .map_err(|e| StorageError::io(&path, e))?;
        let size = handle
            .file()
            .and_then(|file| file.metadata())
            .map_err(|e| StorageError::io(&path, e))?
            .len();
        Ok(FileRecords {
            file: handle,
            path,
            size,
            reserved: Reserved::Off,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn size_in_bytes(&self) -> u64 {
        self.size
    }

    /// The file's handle, for fsyncing it without holding the log's lock (and for telling
    /// whether two `FileRecords` are views of one file).
    pub(crate) fn file_handle(&self) -> Arc<LogFile> {
        Arc::clone(&self.file)
    }

    /// The open file, reopened if the cache closed it.
    fn file(&self) -> Result<Arc<File>, StorageError> {
        self.file
            .file()
            .map_err(|e| StorageError::io(&self.path, e))
    }

    /// Appends `bufs` at the end of the file with one gathering write (more only if the kernel
    /// writes less). On failure, disk full included, the file is cut back to its old size so
    /// that no partial entry stays behind.
    pub fn append(&mut self, bufs: &[IoSlice<'_>]) -> Result<usize, StorageError> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let start = self.size;
        self.reserve_for(start + total as u64);
        if let Err(err) = self.write_all_at(bufs, start) {
            // Best effort: the error returned is the write's, which says what went wrong.
            let _ = self.cut_to(start);
            return Err(StorageError::io(&self.path, err));
        }
        self.size = start + total as u64;
        Ok(total)
    }

    /// Lets `write` put `len` bytes into the file just past its end (`write` gets the file and
    /// the position: a splice from a pipe, say) without appending them: they are not records of
    /// this file until [`keep_written`](Self::keep_written) takes them, and
    /// [`discard_written`](Self::discard_written) cuts them off. A failed write is cut off
    /// here, so no partial entry stays behind.
    pub fn write_past_end(
        &mut self,
        len: u64,
        write: impl FnOnce(&File, u64) -> std::io::Result<()>,
    ) -> Result<(), StorageError> {
        self.reserve_for(self.size + len);
        let file = self.file()?;
        if let Err(err) = write(&file, self.size) {
            // Best effort: the error returned is the write's, which says what went wrong.
            let _ = self.cut_to(self.size);
            return Err(StorageError::io(&self.path, err));
        }
        Ok(())
    }

    /// Appends the first `keep` of the `written` bytes written past the end and cuts off the
    /// rest.
    pub fn keep_written(&mut self, keep: u64, written: u64) -> Result<(), StorageError> {
        let end = self.size + keep;
        if keep < written {
            self.cut_to(end)?;
        }
        self.size = end;
        Ok(())
    }

    /// Cuts off whatever was written past the end.
    pub fn discard_written(&mut self) -> Result<(), StorageError> {
        self.cut_to(self.size)
    }

    /// Allocates blocks past the data ahead of an append that ends at `end` (see [`Reserved`]).
    /// Best effort: where the file system refuses, the write allocates as it goes, and a full
    /// disk fails the write itself, with the error that says so; the next append past the
    /// range asks again.
    fn reserve_for(&mut self, end: u64) {
        let Reserved::To(reserved) = self.reserved else {
            return;
        };
        if end > reserved {
            let ahead = (self.size / 8).clamp(MIN_RESERVE_AHEAD, MAX_RESERVE_AHEAD);
            self.reserve_to(reserved.max(self.size), end + ahead);
        }
    }

    /// Reserves blocks for a new segment up to `len`, its `segment.bytes` (`preallocate=true`).
    pub fn preallocate(&mut self, len: u64) {
        if let Reserved::To(reserved) = self.reserved
            && len > reserved
        {
            self.reserve_to(reserved.max(self.size), len);
        }
    }

    /// `fallocate` of `from..to` (block-aligned up), keeping the length.
    fn reserve_to(&mut self, from: u64, to: u64) {
        let to = to.next_multiple_of(4096);
        let as_off_t = |n: u64| nix::libc::off_t::try_from(n).unwrap_or(nix::libc::off_t::MAX);
        // An open that fails here fails the write that follows, with the error that says why.
        let Ok(file) = self.file() else {
            return;
        };
        match fallocate(
            &*file,
            FallocateFlags::FALLOC_FL_KEEP_SIZE,
            as_off_t(from),
            as_off_t(to - from),
        ) {
            Err(Errno::EOPNOTSUPP) => self.reserved = Reserved::Off,
            // Refused (a full disk, say) after allocating part of the range, maybe: counted as
            // reserved all the same, so that a roll or a cut gives back whatever was.
            Ok(()) | Err(_) => self.reserved = Reserved::To(to),
        }
    }

    /// Sets the file's length to `len`; the blocks past it, reserved ones included, are freed.
    fn cut_to(&mut self, len: u64) -> Result<(), StorageError> {
        self.file()?
            .set_len(len)
            .map_err(|e| StorageError::io(&self.path, e))?;
        if let Reserved::To(_) = self.reserved {
            self.reserved = Reserved::To(len);
        }
        Ok(())
    }

    /// Gives back the blocks reserved past the data, when the segment takes no more appends
    /// (rolled, closed). The modification time is kept: it is the segment's age to retention
    /// when its batches carry no timestamps, and cutting a file sets it.
    pub fn release_reserved(&mut self) -> Result<(), StorageError> {
        match self.reserved {
            Reserved::To(reserved) if reserved > self.size => {}
            _ => return Ok(()),
        }
        let file = self.file()?;
        let modified = file
            .metadata()
            .and_then(|m| m.modified())
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.cut_to(self.size)?;
        file.set_modified(modified)
            .map_err(|e| StorageError::io(&self.path, e))
    }

    fn write_all_at(&self, bufs: &[IoSlice<'_>], at: u64) -> std::io::Result<()> {
        let file = self.file.file()?;
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let offset = i64::try_from(at).map_err(std::io::Error::other)?;
        let written = nix::sys::uio::pwritev(&*file, bufs, offset)?;
        if written == total {
            return Ok(());
        }
        // A short write (rare: a signal, a nearly full disk): finish the rest slice by slice.
        let mut rest: Vec<IoSlice<'_>> = bufs.to_vec();
        let mut slices: &mut [IoSlice<'_>] = &mut rest;
        IoSlice::advance_slices(&mut slices, written);
        let mut at = at + written as u64;
        while !slices.is_empty() {
            let offset = i64::try_from(at).map_err(std::io::Error::other)?;
            let written = nix::sys::uio::pwritev(&*file, slices, offset)?;
            if written == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            at += written as u64;
            IoSlice::advance_slices(&mut slices, written);
        }
        Ok(())
    }

    /// `size` bytes from `position`, clamped to the end of the file. Fails only when the
    /// cache had closed the file and it cannot be opened again (never for an empty range).
    pub fn slice(&self, position: u64, size: u64) -> Result<FileSlice, StorageError> {
        let position = position.min(self.size);
        let size = size.min(self.size - position);
        Ok(FileSlice {
            file: if size == 0 { None } else { Some(self.file()?) },
            position,
            size,
        })
    }

    /// The whole file as a slice.
    pub fn all(&self) -> Result<FileSlice, StorageError> {
        self.slice(0, self.size)
    }

    /// Reads `buf.len()` bytes at `position`.
    pub fn read_at(&self, buf: &mut [u8], position: u64) -> Result<(), StorageError> {
        self.file()?
            .read_exact_at(buf, position)
            .map_err(|e| StorageError::io(&self.path, e))
    }

    /// Entries from `start` to the end of the file, header by header.
    pub fn scanner(&self, start: u64, chunk: usize) -> LogScanner<'_> {
        LogScanner {
            records: self,
            position: start,
            window: Vec::new(),
            window_start: 0,
            chunk: chunk.max(HEADER_SIZE_UP_TO_MAGIC),
        }
    }

    /// The first entry at or after `starting_position` whose last offset is at least
    /// `target_offset` (Kafka's `searchForOffsetWithSize`); `None` past the end.
    pub fn search_for_offset_with_size(
        &self,
        target_offset: i64,
        starting_position: u64,
    ) -> Result<Option<LogOffsetPosition>, StorageError> {
        let mut scanner = self.scanner(starting_position, 16 * 1024);
        while let Some(entry) = scanner.next_entry(false)? {
            let last_offset = entry.last_offset();
            if last_offset >= target_offset {
                return Ok(Some(LogOffsetPosition {
                    offset: last_offset,
                    position: entry.position,
                    size: entry.size,
                }));
            }
        }
        Ok(None)
    }

    /// Cuts the file to `size` bytes; returns how many were removed.
    pub fn truncate_to(&mut self, size: u64) -> Result<u64, StorageError> {
        if size >= self.size {
            return Ok(0);
        }
        self.cut_to(size)?;
        let removed = self.size - size;
        self.size = size;
        Ok(removed)
    }

    /// fsyncs the data (and the size, which `sync_data` includes when it changed).
    pub fn flush(&self) -> Result<(), StorageError> {
        self.file()?
            .sync_data()
            .map_err(|e| StorageError::io(&self.path, e))
    }

    /// Renames the file (to `.deleted` before asynchronous deletion, say); the open handle and
    /// every slice taken from it stay valid.
    pub fn rename_to(&mut self, new_path: PathBuf) -> Result<(), StorageError> {
        self.file
            .rename(&self.path, new_path.clone())
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.path = new_path;
        Ok(())
    }

    /// Points the file at `parent_dir/<same name>` after its directory was renamed (Kafka's
    /// `updateParentDirectory`): a descriptor the cache closed reopens there.
    pub fn update_parent_dir(&mut self, parent_dir: &Path) {
        if let Some(name) = self.path.file_name() {
            self.path = parent_dir.join(name);
            self.file.set_path(self.path.clone());
        }
    }

    /// A read-only view of the file as it is now: the same open file, its size frozen. A sealed
    /// segment is immutable, so the log cleaner reads it through a view without holding the
    /// log's lock; a truncation meanwhile shows as a short read (an error), never as other data.
    /// Nothing may be appended through a view.
    pub fn snapshot(&self) -> FileRecords {
        FileRecords {
            path: self.path.clone(),
            file: Arc::clone(&self.file),
            size: self.size,
            reserved: Reserved::Off,
        }
    }

    /// Sets the file's modification time (a cleaned segment keeps the age of the segments it
    /// replaces, as Kafka's `setLastModified`).
    pub fn set_last_modified_ms(&self, ms: i64) -> Result<(), StorageError> {
        let time = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
        self.file()?
            .set_modified(time)
            .map_err(|e| StorageError::io(&self.path, e))
    }

    /// The file's modification time in ms since the epoch: the age of a segment without
    /// timestamps.
    pub fn last_modified_ms(&self) -> Result<i64, StorageError> {
        let modified = self
            .file()?
            .metadata()
            .and_then(|m| m.modified())
            .map_err(|e| StorageError::io(&self.path, e))?;
        Ok(modified
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0))
    }
}

/// One entry of a `.log` file as the scanner found it.
#[derive(Debug)]
pub struct ScannedEntry<'a> {
    /// The entry's byte position in the file.
    pub position: u64,
    /// The entry's size, log overhead included.
    pub size: usize,
    /// The entry's magic byte.
    pub magic: i8,
    /// The whole entry when the body was asked for; otherwise at least its first
    /// `min(size, 61)` bytes.
    pub bytes: &'a [u8],
}

impl<'a> ScannedEntry<'a> {
    /// The entry as the record layer sees it (only meaningful when the body was loaded).
    pub fn batch(&self) -> BatchRef<'a> {
        BatchRef {
            position: self.position as usize,
            bytes: self.bytes,
            magic: self.magic,
        }
    }

    /// The first offset: a v2 batch's base offset; a legacy entry's offset field (which, for a
    /// compressed wrapper, is the last inner offset).
    pub fn base_offset(&self) -> i64 {
        i64_at(self.bytes, 0)
    }

    /// The last offset: base plus `last_offset_delta` for v2, the offset field for v0/v1.
    pub fn last_offset(&self) -> i64 {
        if self.magic >= MAGIC_V2 {
            i64_at(self.bytes, 0) + i64::from(i32_at(self.bytes, 23))
        } else {
            i64_at(self.bytes, 0)
        }
    }
}

/// Walks the entries of a `.log` file through a window read in chunks, so that scanning a
/// segment costs one `pread` per chunk rather than per entry. It is a lending iterator: each
/// entry borrows the window until the next call.
#[derive(Debug)]
pub struct LogScanner<'a> {
    records: &'a FileRecords,
    position: u64,
    window: Vec<u8>,
    window_start: u64,
    chunk: usize,
}

impl LogScanner<'_> {
    /// The byte position after the last entry returned: the end of the valid data so far.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The next entry, its body loaded when `load_body`. `Ok(None)` at the end of the file or
    /// at a torn tail; an error for a size field below the minimum entry size (corruption) or
    /// an I/O failure.
    pub fn next_entry(
        &mut self,
        load_body: bool,
    ) -> Result<Option<ScannedEntry<'_>>, StorageError> {
        let end = self.records.size;
        let position = self.position;
        if position + HEADER_SIZE_UP_TO_MAGIC as u64 >= end {
            return Ok(None);
        }
        self.ensure_window(position, HEADER_SIZE_UP_TO_MAGIC)?;
        let at = (position - self.window_start) as usize;
        let size_field = i32_at(&self.window, at + 8);
        let magic = self.window[at + 16] as i8;
        if size_field < MIN_ENTRY_SIZE as i32 {
            return Err(StorageError::Record(RecordError::Corrupt {
                position: position as usize,
                reason: format!(
                    "found record size {size_field} smaller than minimum record overhead ({MIN_ENTRY_SIZE}) in file {}",
                    self.records.path.display()
                ),
            }));
        }
        let size = LOG_OVERHEAD + size_field as usize;
        if position + size as u64 > end {
            return Ok(None);
        }
        let wanted = if load_body {
            size
        } else {
            size.min(RECORD_BATCH_OVERHEAD)
        };
        self.ensure_window(position, wanted)?;
        let at = (position - self.window_start) as usize;
        self.position = position + size as u64;
        Ok(Some(ScannedEntry {
            position,
            size,
            magic,
            bytes: &self.window[at..at + wanted],
        }))
    }

    /// Makes the window cover `[position, position + len)`, reading a chunk (or more, for a
    /// large entry) when it does not.
    fn ensure_window(&mut self, position: u64, len: usize) -> Result<(), StorageError> {
        let window_end = self.window_start + self.window.len() as u64;
        if position >= self.window_start && position + len as u64 <= window_end {
            return Ok(());
        }
        let available = self.records.size.saturating_sub(position);
        let read_len = (len.max(self.chunk) as u64).min(available) as usize;
        self.window.clear();
        self.window.resize(read_len, 0);
        self.window_start = position;
        self.records.read_at(&mut self.window, position)
    }
}

#[cfg(test)]
mod tests;
