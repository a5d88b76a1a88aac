//! The open descriptors of segments' `.log` files, at most a capacity set from the process's
//! open-file limit: a segment's file is closed when others need the room and opened again on
//! its next use. kcli's own; Kafka keeps every segment's `FileChannel` open, so a Kafka broker
//! hosts at most about `ulimit -n` partitions.
//!
//! Why: a `.log` file is the one descriptor a segment holds (its indexes are maps, which hold
//! none), and a broker of tens of thousands of partitions would need tens of thousands of
//! descriptors, past the hard limit of many hosts. Most of those partitions are idle at any
//! moment; their files need no descriptor until they are read or written again.
//!
//! How: a [`LogFile`] is one file's handle, open or closed, shared by a `FileRecords` and its
//! views. [`LogFileCache`] keeps the open ones in a CLOCK ring (second chance: a handle used
//! since the hand last passed is skipped once), so a use costs one uncontended lock and a
//! flag, and closing the least recently used is amortized O(1). Readers keep what they took:
//! a fetch's `FileSlice` holds its `Arc<File>`, so a file closed by the cache stays open until
//! the response is sent. An open that fails with EMFILE or ENFILE closes an eighth of the ring
//! and tries once more ([`LogFileCache::open_with_room`]), whoever opens: a segment, an index
//! about to be mapped.
//!
//! Reopening is sound because nothing else holds state in the descriptor: appends and reads
//! are positional (`pwritev`, `pread`), the reservation past the data is the inode's, and
//! `fsync` on a new descriptor flushes every dirty page of the file on Linux. A renamed file
//! reopens under its new name (the rename happens under the handle's lock). A deleted one
//! cannot be reopened, and nothing asks: a segment is removed from its log before its file is.
//!
//! Lock order: a handle's lock, then the ring's; the ring only `try_lock`s handles, skipping
//! a busy one, so it never waits on a handle while holding the ring.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::cluster::sync::lock;

use super::descriptors::is_exhaustion;

/// The process's cache: unbounded until the broker sets its capacity at start
/// ([`LogFileCache::set_capacity`]), so tools and tests keep every file open as before.
pub(crate) static LOG_FILES: LogFileCache = LogFileCache::new(usize::MAX);

/// The fewest handles a make-room pass closes.
const MIN_MAKE_ROOM: usize = 16;

/// The open `.log` files of the process, at most `capacity` of them left open by the cache.
#[derive(Debug)]
pub(crate) struct LogFileCache {
    capacity: AtomicUsize,
    /// The handles opened through the cache, oldest first: the CLOCK's ring. Entries of
    /// handles dropped since are skipped (and removed) when the hand reaches them.
    ring: Mutex<VecDeque<Weak<LogFile>>>,
    /// Files closed to make room, since start.
    closed: AtomicU64,
    /// Files opened again after the cache had closed them, since start.
    reopened: AtomicU64,
}

impl LogFileCache {
    pub(crate) const fn new(capacity: usize) -> Self {
        LogFileCache {
            capacity: AtomicUsize::new(capacity),
            ring: Mutex::new(VecDeque::new()),
            closed: AtomicU64::new(0),
            reopened: AtomicU64::new(0),
        }
    }

    /// Bounds the open files to `capacity` (at least 1) from now on; files over it close as
    /// others open.
    pub(crate) fn set_capacity(&self, capacity: usize) {
        self.capacity.store(capacity.max(1), Ordering::Relaxed);
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Handles in the ring: the open files, plus dropped ones the hand has not reached yet.
    pub(crate) fn len(&self) -> usize {
        lock(&self.ring).len()
    }

    /// (files closed to make room, files opened again) since start.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.closed.load(Ordering::Relaxed),
            self.reopened.load(Ordering::Relaxed),
        )
    }

    /// Runs `open`; when the descriptor table is full, closes an eighth of the cached files
    /// (at least [`MIN_MAKE_ROOM`]) and runs it once more.
    pub(crate) fn open_with_room<T>(
        &self,
        open: impl Fn() -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        match open() {
            Err(err) if is_exhaustion(&err) => {
                let wanted = (self.len() / 8).max(MIN_MAKE_ROOM);
                if self.close_some(wanted, true) == 0 {
                    return Err(err);
                }
                open()
            }
            result => result,
        }
    }

    /// Takes an open handle into the ring, closing others past the capacity.
    fn admit(&self, handle: &Arc<LogFile>) {
        let capacity = self.capacity();
        let over = {
            let mut ring = lock(&self.ring);
            ring.push_back(Arc::downgrade(handle));
            ring.len().saturating_sub(capacity)
        };
        if over > 0 {
            self.close_some(over, false);
        }
    }

    /// Moves the hand until `wanted` handles are closed or the ring has been swept twice;
    /// returns how many were closed. A handle used since the hand last passed gets a second
    /// chance, unless `urgent` (the table is full now: only descriptors actually closed
    /// count); a busy one (its lock held) is skipped.
    fn close_some(&self, wanted: usize, urgent: bool) -> usize {
        let mut closed = 0;
        // Closed files are dropped after the ring's lock is released: `close(2)` can be slow.
        let mut to_close: Vec<Arc<File>> = Vec::new();
        {
            let mut ring = lock(&self.ring);
            let mut steps = ring.len() * 2;
            while closed < wanted && steps > 0 {
                steps -= 1;
                let Some(weak) = ring.pop_front() else {
                    break;
                };
                let Some(handle) = weak.upgrade() else {
                    // Dropped since: its descriptor is closed already. Removing it makes room
                    // in the ring, not in the descriptor table.
                    closed += usize::from(!urgent);
                    continue;
                };
                if !urgent && handle.referenced.swap(false, Ordering::Relaxed) {
                    ring.push_back(weak);
                    continue;
                }
                let Ok(mut state) = handle.state.try_lock() else {
                    ring.push_back(weak);
                    continue;
                };
                if let Some(file) = state.file.take() {
                    to_close.push(file);
                    self.closed.fetch_add(1, Ordering::Relaxed);
                }
                closed += 1;
            }
        }
        drop(to_close);
        closed
    }
}

/// One `.log` file's descriptor, open or closed by its cache, opened again on its next use.
/// Invariant: while `state.file` is `Some`, the handle is in its cache's ring (taking a file
/// out of it happens only in the ring's sweep, which removes the entry).
#[derive(Debug)]
pub(crate) struct LogFile {
    state: Mutex<LogFileState>,
    /// Used since the ring's hand last passed.
    referenced: AtomicBool,
    writable: bool,
    cache: &'static LogFileCache,
}

#[derive(Debug)]
struct LogFileState {
    path: PathBuf,
    file: Option<Arc<File>>,
}

impl LogFile {
    /// A handle for `file`, open now, at `path`; `writable` when it was opened for writing
    /// (and is reopened so).
    pub(crate) fn new(
        cache: &'static LogFileCache,
        path: PathBuf,
        file: File,
        writable: bool,
    ) -> Arc<Self> {
        let handle = Arc::new(LogFile {
            state: Mutex::new(LogFileState {
                path,
                file: Some(Arc::new(file)),
            }),
            referenced: AtomicBool::new(true),
            writable,
            cache,
        });
        cache.admit(&handle);
        handle
    }

    /// Opens `path` (creating it when asked) through `cache`, making room when the table is
    /// full.
    pub(crate) fn open(
        cache: &'static LogFileCache,
        path: PathBuf,
        writable: bool,
        create: bool,
    ) -> std::io::Result<Arc<Self>> {
        let file = cache.open_with_room(|| open_options(writable, create).open(&path))?;
        Ok(Self::new(cache, path, file, writable))
    }

    /// The open file, opened again if the cache closed it.
    pub(crate) fn file(self: &Arc<Self>) -> std::io::Result<Arc<File>> {
        self.referenced.store(true, Ordering::Relaxed);
        let mut state = lock(&self.state);
        if let Some(file) = &state.file {
            return Ok(Arc::clone(file));
        }
        let writable = self.writable;
        let path = &state.path;
        let file = Arc::new(
            self.cache
                .open_with_room(|| open_options(writable, false).open(path))?,
        );
        state.file = Some(Arc::clone(&file));
        drop(state);
        self.cache.reopened.fetch_add(1, Ordering::Relaxed);
        self.cache.admit(self);
        Ok(file)
    }

    /// Whether the file is open now.
    #[cfg(test)]
    pub(crate) fn is_open(&self) -> bool {
        lock(&self.state).file.is_some()
    }

    /// Where the file is now, after its directory was renamed (the file itself was not).
    pub(crate) fn set_path(&self, path: PathBuf) {
        lock(&self.state).path = path;
    }

    /// Renames the file, open or not; the next reopen uses the new name.
    pub(crate) fn rename(&self, from: &Path, to: PathBuf) -> std::io::Result<()> {
        let mut state = lock(&self.state);
        std::fs::rename(from, &to)?;
        state.path = to;
        Ok(())
    }
}

fn open_options(writable: bool, create: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(writable)
        .create(writable && create)
        .truncate(false);
    options
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    fn leaked(capacity: usize) -> &'static LogFileCache {
        Box::leak(Box::new(LogFileCache::new(capacity)))
    }

    fn files(dir: &Path, cache: &'static LogFileCache, n: usize) -> Vec<Arc<LogFile>> {
        (0..n)
            .map(|i| LogFile::open(cache, dir.join(format!("{i}.log")), true, true).unwrap())
            .collect()
    }

    #[test]
    fn at_most_capacity_files_stay_open_and_a_closed_one_reopens_with_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let cache = leaked(4);
        let handles = files(dir.path(), cache, 10);
        let open = handles.iter().filter(|h| h.is_open()).count();
        assert_eq!(open, 4);
        assert_eq!(cache.len(), 4);
        // Write through every handle (reopening the closed ones), read back through each.
        for (i, h) in handles.iter().enumerate() {
            h.file().unwrap().write_all_at(&[i as u8; 3], 0).unwrap();
        }
        for (i, h) in handles.iter().enumerate() {
            let mut buf = [0u8; 3];
            h.file().unwrap().read_exact_at(&mut buf, 0).unwrap();
            assert_eq!(buf, [i as u8; 3]);
        }
        assert!(handles.iter().filter(|h| h.is_open()).count() <= 4);
        let (closed, reopened) = cache.counts();
        assert!(closed >= 6 && reopened >= 6, "{closed} {reopened}");
    }

    #[test]
    fn a_file_in_use_gets_a_second_chance() {
        let dir = tempfile::tempdir().unwrap();
        let cache = leaked(3);
        let handles = files(dir.path(), cache, 3);
        // As if the hand had passed all three, clearing their marks; then the first is used.
        for h in &handles {
            h.referenced.store(false, Ordering::Relaxed);
        }
        handles[0].file().unwrap();
        let fourth = LogFile::open(cache, dir.path().join("x.log"), true, true).unwrap();
        assert!(handles[0].is_open(), "used since the hand passed");
        assert!(!handles[1].is_open(), "the least recently used closes");
        assert!(handles[2].is_open() && fourth.is_open());
    }

    #[test]
    fn a_slice_taken_before_the_close_keeps_reading() {
        let dir = tempfile::tempdir().unwrap();
        let cache = leaked(1);
        let first = LogFile::open(cache, dir.path().join("a.log"), true, true).unwrap();
        let file = first.file().unwrap();
        file.write_all_at(b"kept", 0).unwrap();
        let _second = LogFile::open(cache, dir.path().join("b.log"), true, true).unwrap();
        assert!(!first.is_open());
        let mut buf = [0u8; 4];
        file.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(&buf, b"kept");
    }

    #[test]
    fn a_renamed_closed_file_reopens_under_its_new_name() {
        let dir = tempfile::tempdir().unwrap();
        let cache = leaked(1);
        let from = dir.path().join("0.log");
        let handle = LogFile::open(cache, from.clone(), true, true).unwrap();
        handle.file().unwrap().write_all_at(b"data", 0).unwrap();
        let _other = LogFile::open(cache, dir.path().join("1.log"), true, true).unwrap();
        assert!(!handle.is_open());
        let to = dir.path().join("0.log.deleted");
        handle.rename(&from, to.clone()).unwrap();
        let mut buf = [0u8; 4];
        handle.file().unwrap().read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(&buf, b"data");
        assert!(to.exists() && !from.exists());
    }

    #[test]
    fn dropped_handles_leave_the_ring_when_the_hand_reaches_them() {
        let dir = tempfile::tempdir().unwrap();
        let cache = leaked(2);
        drop(files(dir.path(), cache, 2));
        assert_eq!(cache.len(), 2);
        let kept = files(dir.path(), cache, 2);
        assert!(kept.iter().all(|h| h.is_open()));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.counts().0, 0, "nothing open was closed");
    }

    #[test]
    fn a_full_table_closes_cached_files_and_the_open_is_tried_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = leaked(usize::MAX);
        let handles = files(dir.path(), cache, 20);
        let tries = AtomicUsize::new(0);
        let opened = cache.open_with_room(|| {
            if tries.fetch_add(1, Ordering::Relaxed) == 0 {
                Err(std::io::Error::from_raw_os_error(
                    nix::errno::Errno::EMFILE as i32,
                ))
            } else {
                Ok(())
            }
        });
        assert!(opened.is_ok());
        assert_eq!(tries.load(Ordering::Relaxed), 2);
        let still_open = handles.iter().filter(|h| h.is_open()).count();
        assert_eq!(still_open, 20 - MIN_MAKE_ROOM);
        // With nothing left to close, a full table is the open's error.
        let empty = leaked(usize::MAX);
        let err = empty
            .open_with_room(|| -> std::io::Result<()> {
                Err(std::io::Error::from_raw_os_error(
                    nix::errno::Errno::EMFILE as i32,
                ))
            })
            .unwrap_err();
        assert!(is_exhaustion(&err));
        // Nor with only dropped handles left: removing them frees no descriptor.
        let dropped = leaked(usize::MAX);
        drop(files(dir.path(), dropped, 3));
        let tries = AtomicUsize::new(0);
        let err = dropped
            .open_with_room(|| -> std::io::Result<()> {
                tries.fetch_add(1, Ordering::Relaxed);
                Err(std::io::Error::from_raw_os_error(
                    nix::errno::Errno::EMFILE as i32,
                ))
            })
            .unwrap_err();
        assert!(is_exhaustion(&err));
        assert_eq!(tries.load(Ordering::Relaxed), 1, "not tried again");
    }
}
