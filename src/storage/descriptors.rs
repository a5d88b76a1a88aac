//! The process limits a log holds on to: file descriptors (`RLIMIT_NOFILE`, `ulimit -n`) and
//! memory maps (`vm.max_map_count`); how many are in use, and whether new logs fit.
//!
//! A full descriptor table or map count is not a failed disk. Kafka 3.9 takes a log dir
//! offline on an `IOException` in a log operation (a roll, an append, a flush), EMFILE
//! included, and fails a whole LeaderAndIsr at the first EMFILE creating a log (its later
//! partitions stay led without a log). kcli tells them apart: an open that fails with EMFILE (this process's limit) or
//! ENFILE (the system's table) is [`StorageError::TooManyOpenFiles`], a map that fails with
//! ENOMEM is [`StorageError::MapFailed`], which no caller reports to the log dir failure
//! channel, and new logs are refused up front when they would leave fewer than [`reserve_for`]
//! of either free ([`NewLogBudget`]), so the partitions already hosted keep working.
//!
//! A log holds two maps (its active segment's indexes) and, when the broker bounds its open
//! `.log` files ([`bound_log_files`], at start), no descriptor: the [`LOG_FILES`] cache closes
//! idle ones. Tools and in-process tests leave the cache unbounded, and there a log holds one.
//!
//! Counting is Linux's `/proc/self/fd` and `/proc/self/maps`, once per request that creates
//! logs (never per partition: each count is linear in what it counts). Where they cannot be
//! read, nothing is refused up front and EMFILE or ENOMEM itself is the refusal.

use std::io::Read;
use std::path::PathBuf;

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use super::StorageError;
use super::log_file_cache::LOG_FILES;

/// The memory maps a log holds while open: its active segment's `.index` and `.timeindex`.
pub(crate) const MAPS_PER_LOG: u64 = 2;

/// The descriptors a log holds while open: its active segment's `.log` file unless the cache
/// bounds open files (its indexes are maps, and a map holds no descriptor).
pub(crate) fn descriptors_per_log() -> u64 {
    u64::from(LOG_FILES.capacity() == usize::MAX)
}

/// The fewest descriptors (or maps) kept free for everything but new logs.
const MIN_RESERVE: u64 = 64;

/// Whether `err` is the descriptor table being full: EMFILE (this process's `ulimit -n`) or
/// ENFILE (the system-wide `fs.file-max`).
pub(crate) fn is_exhaustion(err: &std::io::Error) -> bool {
    use nix::errno::Errno;
    matches!(err.raw_os_error(), Some(code) if code == Errno::EMFILE as i32 || code == Errno::ENFILE as i32)
}

/// The soft and hard `RLIMIT_NOFILE`; `None` when it cannot be read.
pub(crate) fn open_file_limits() -> Option<(u64, u64)> {
    getrlimit(Resource::RLIMIT_NOFILE).ok()
}

/// Raises the soft `RLIMIT_NOFILE` to the hard one (what a broker should be able to use without
/// the operator's `ulimit -n` in the unit file or shell). Returns (soft, hard) as they are
/// after the call.
pub(crate) fn raise_open_file_limit() -> Result<(u64, u64), nix::Error> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    }
    getrlimit(Resource::RLIMIT_NOFILE)
}

/// How many descriptors (or maps) stay free for what is not a new log: client connections,
/// the checkpoint files' temp copies, segment rolls, ZooKeeper; threads' stacks, libraries.
/// A tenth of the limit, at least 64.
pub(crate) fn reserve_for(limit: u64) -> u64 {
    (limit / 10).max(MIN_RESERVE)
}

/// Bounds the process's open `.log` files to the soft limit less twice [`reserve_for`] it
/// (a fifth, at least 128, is left to connections and everything else), so that a broker
/// hosts more partitions than it has descriptors. Returns the bound.
pub(crate) fn bound_log_files(soft_limit: u64) -> usize {
    let capacity = usize::try_from(log_file_bound(soft_limit)).unwrap_or(usize::MAX - 1);
    LOG_FILES.set_capacity(capacity);
    capacity
}

/// The open `.log` files a soft limit of `soft_limit` allows (see [`bound_log_files`]).
fn log_file_bound(soft_limit: u64) -> u64 {
    soft_limit
        .saturating_sub(2 * reserve_for(soft_limit))
        .max(16)
}

/// `vm.max_map_count`, the most memory maps a process may hold; `None` off Linux.
pub(crate) fn max_map_count() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The memory maps this process holds: the lines of `/proc/self/maps`.
pub(crate) fn mapped() -> Option<u64> {
    let mut maps = std::fs::File::open("/proc/self/maps").ok()?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = 0u64;
    loop {
        match maps.read(&mut buf) {
            Ok(0) => return Some(lines),
            Ok(n) => lines += buf[..n].iter().filter(|b| **b == b'\n').count() as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// The descriptors this process has open; `None` when `/proc/self/fd` cannot be read for a
/// reason other than the table being full (which counts as every descriptor open).
pub(crate) fn open_descriptors(soft_limit: u64) -> Option<u64> {
    match std::fs::read_dir("/proc/self/fd") {
        // The directory's own descriptor is in the listing.
        Ok(entries) => Some((entries.count() as u64).saturating_sub(1)),
        Err(err) if is_exhaustion(&err) => Some(soft_limit),
        Err(_) => None,
    }
}

/// One limit as a budget: (limit, in use, reserve) when they could be read, and what is left
/// for new logs.
#[derive(Debug, Clone, Copy)]
struct Headroom {
    measured: Option<(u64, u64, u64)>,
    available: u64,
}

impl Headroom {
    fn new(measured: Option<(u64, u64, u64)>) -> Self {
        let available = measured.map_or(u64::MAX, |(limit, in_use, reserve)| {
            limit.saturating_sub(in_use).saturating_sub(reserve)
        });
        Headroom {
            measured,
            available,
        }
    }

    fn fits(&self, needed: u64) -> bool {
        self.measured.is_none() || needed <= self.available
    }

    fn take(&mut self, needed: u64) {
        if self.measured.is_some() {
            self.available -= needed;
        }
    }
}

/// What one request may still open for new logs: each limit less what is in use and its
/// reserve, measured once when the budget is made. Each admitted topic's logs are taken from
/// both.
#[derive(Debug, Clone)]
pub struct NewLogBudget {
    descriptors: Headroom,
    maps: Headroom,
    descriptors_per_log: u64,
}

impl NewLogBudget {
    /// Measures the process now. With the open `.log` files bounded, descriptors are not
    /// counted: a new log holds none.
    pub fn measure() -> Self {
        let descriptors_per_log = descriptors_per_log();
        let descriptors = if descriptors_per_log == 0 {
            None
        } else {
            open_file_limits().and_then(|(soft, _)| {
                open_descriptors(soft).map(|open| (soft, open, reserve_for(soft)))
            })
        };
        let maps = max_map_count()
            .and_then(|limit| mapped().map(|in_use| (limit, in_use, reserve_for(limit))));
        Self::from_measure(descriptors, maps, descriptors_per_log)
    }

    /// A budget from (soft limit, open, reserve) of descriptors and (max_map_count, mapped,
    /// reserve) of maps (`None`: unlimited), a new log holding `descriptors_per_log`.
    pub fn from_measure(
        descriptors: Option<(u64, u64, u64)>,
        maps: Option<(u64, u64, u64)>,
        descriptors_per_log: u64,
    ) -> Self {
        NewLogBudget {
            descriptors: Headroom::new(descriptors),
            maps: Headroom::new(maps),
            descriptors_per_log,
        }
    }

    /// Takes `logs` new logs of `topic` from the budget, all or none: a topic that does not fit
    /// whole is refused whole, so it never ends up holding what a smaller one needs.
    pub fn admit(&mut self, topic: &str, logs: usize) -> Result<(), StorageError> {
        let descriptors = (logs as u64).saturating_mul(self.descriptors_per_log);
        let maps = (logs as u64).saturating_mul(MAPS_PER_LOG);
        if !self.descriptors.fits(descriptors) {
            let (soft_limit, open, reserve) = self.descriptors.measured.unwrap_or_default();
            return Err(StorageError::DescriptorsExhausted {
                topic: topic.to_string(),
                logs,
                needed: descriptors,
                available: self.descriptors.available,
                open,
                soft_limit,
                reserve,
            });
        }
        if !self.maps.fits(maps) {
            let (max_map_count, mapped, reserve) = self.maps.measured.unwrap_or_default();
            return Err(StorageError::MapsExhausted {
                topic: topic.to_string(),
                logs,
                needed: maps,
                available: self.maps.available,
                mapped,
                max_map_count,
                reserve,
            });
        }
        self.descriptors.take(descriptors);
        self.maps.take(maps);
        Ok(())
    }
}

/// The error for an open of `path` that failed because the descriptor table is full.
pub(super) fn too_many_open_files(path: PathBuf, source: std::io::Error) -> StorageError {
    StorageError::TooManyOpenFiles {
        path,
        soft_limit: open_file_limits().map_or(0, |(soft, _)| soft),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emfile_and_enfile_are_exhaustion_other_errors_are_not() {
        let emfile = std::io::Error::from_raw_os_error(nix::errno::Errno::EMFILE as i32);
        let enfile = std::io::Error::from_raw_os_error(nix::errno::Errno::ENFILE as i32);
        let enospc = std::io::Error::from_raw_os_error(nix::errno::Errno::ENOSPC as i32);
        let eio = std::io::Error::from_raw_os_error(nix::errno::Errno::EIO as i32);
        assert!(is_exhaustion(&emfile));
        assert!(is_exhaustion(&enfile));
        assert!(!is_exhaustion(&enospc));
        assert!(!is_exhaustion(&eio));
        assert!(!is_exhaustion(&std::io::Error::other("no errno")));
    }

    #[test]
    fn storage_error_io_classifies_exhaustion_apart_from_a_failed_disk() {
        let emfile = std::io::Error::from_raw_os_error(nix::errno::Errno::EMFILE as i32);
        let err = StorageError::io("/data/t-0/00000000000000000000.index", emfile);
        let StorageError::TooManyOpenFiles {
            path, soft_limit, ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(path, &PathBuf::from("/data/t-0/00000000000000000000.index"));
        assert_eq!(Some(*soft_limit), open_file_limits().map(|(soft, _)| soft));
        assert!(err.is_resource_exhaustion());
        assert!(err.to_string().contains("raise ulimit -n"), "{err}");
        let enospc = std::io::Error::from_raw_os_error(nix::errno::Errno::ENOSPC as i32);
        let err = StorageError::io("/data/t-0", enospc);
        assert!(matches!(err, StorageError::Io { .. }), "{err:?}");
        assert!(!err.is_resource_exhaustion());
    }

    #[test]
    fn a_budget_admits_whole_topics_while_they_fit() {
        // Limit 1000, 700 open, 100 reserved: 200 descriptors, 200 logs.
        let mut budget = NewLogBudget::from_measure(Some((1000, 700, 100)), None, 1);
        budget.admit("a", 180).unwrap();
        let err = budget.admit("big", 30).unwrap_err();
        let StorageError::DescriptorsExhausted {
            topic,
            logs,
            needed,
            available,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(
            (topic.as_str(), *logs, *needed, *available),
            ("big", 30, 30, 20)
        );
        assert!(err.is_resource_exhaustion());
        // A refused topic took nothing: a smaller one still fits.
        budget.admit("small", 20).unwrap();
        assert!(budget.admit("one more", 1).is_err());
        assert!(budget.admit("nothing", 0).is_ok());
    }

    #[test]
    fn an_unmeasured_budget_admits_everything() {
        let mut budget = NewLogBudget::from_measure(None, None, 1);
        assert!(budget.admit("huge", 1_000_000).is_ok());
    }

    #[test]
    fn with_log_files_bounded_only_maps_limit_new_logs() {
        // No descriptor is held per log; 65,530 maps, 1,000 in use, 6,553 kept free: 57,977
        // maps, 28,988 logs of two maps each.
        let mut budget =
            NewLogBudget::from_measure(Some((400, 390, 64)), Some((65_530, 1_000, 6_553)), 0);
        budget.admit("a", 20_000).unwrap();
        let err = budget.admit("b", 9_000).unwrap_err();
        let StorageError::MapsExhausted {
            topic,
            needed,
            available,
            max_map_count,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(
            (topic.as_str(), *needed, *available, *max_map_count),
            ("b", 18_000, 17_977, 65_530)
        );
        assert!(err.is_resource_exhaustion());
        assert!(err.to_string().contains("raise vm.max_map_count"), "{err}");
        budget.admit("c", 8_988).unwrap();
        assert!(budget.admit("d", 1).is_err());
    }

    #[test]
    fn bounding_log_files_leaves_a_fifth_of_the_limit_free() {
        // Not through `bound_log_files`: the process's cache is shared by other tests.
        assert_eq!(log_file_bound(20_000), 16_000);
        assert_eq!(log_file_bound(300), 172);
        assert_eq!(log_file_bound(100), 16);
    }

    #[test]
    fn this_process_has_some_maps() {
        let mapped = mapped().unwrap();
        let limit = max_map_count().unwrap();
        assert!(mapped >= 10 && mapped < limit, "{mapped} of {limit}");
    }

    #[test]
    fn the_reserve_is_a_tenth_of_the_limit_and_at_least_64() {
        assert_eq!(reserve_for(300), 64);
        assert_eq!(reserve_for(20_000), 2_000);
    }

    #[test]
    fn this_process_has_some_descriptors_open() {
        let (soft, hard) = open_file_limits().unwrap();
        assert!(soft <= hard);
        let open = open_descriptors(soft).unwrap();
        assert!(open >= 3 && open <= soft, "{open}");
    }
}
