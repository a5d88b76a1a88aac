//! File descriptors as a resource of the log manager: the process's open-file limit
//! (`RLIMIT_NOFILE`, `ulimit -n`), how many are open, and whether new logs fit.
//!
//! A full descriptor table is not a failed disk. Kafka takes a log dir offline on any
//! `IOException`, EMFILE included, so one topic too many takes every partition of the dir down.
//! kcli tells the two apart: an open that fails with EMFILE (this process's limit) or ENFILE
//! (the system's table) is [`StorageError::TooManyOpenFiles`], which no caller reports to the
//! log dir failure channel, and new logs are refused up front when they would leave fewer than
//! [`reserve_for`] descriptors free ([`NewLogBudget`]), so the sockets, checkpoints and
//! segment rolls of the partitions already hosted still find descriptors.
//!
//! Counting is Linux's `/proc/self/fd`, once per request that creates logs (never per
//! partition: the count is linear in the open descriptors). Where it cannot be read, nothing is
//! refused up front and EMFILE itself is the refusal.

use std::path::PathBuf;

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use super::StorageError;

/// The descriptors an empty log holds while open: its active segment's `.log` file (its
/// `.index` and `.timeindex` are mapped, and a map holds no descriptor).
pub(crate) const DESCRIPTORS_PER_LOG: u64 = 1;

/// The fewest descriptors kept free for everything but new logs.
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

/// How many descriptors stay free for what is not a new log: client connections, the
/// checkpoint files' temp copies, segment rolls, ZooKeeper. A tenth of the limit, at least 64.
pub(crate) fn reserve_for(soft_limit: u64) -> u64 {
    (soft_limit / 10).max(MIN_RESERVE)
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

/// What one request may still open for new logs: the limit less the open descriptors and the
/// reserve, measured once when the budget is made. Each admitted topic's logs are taken from it.
#[derive(Debug, Clone)]
pub struct NewLogBudget {
    /// (soft limit, open, reserve); `None` when they could not be read: everything is admitted.
    measured: Option<(u64, u64, u64)>,
    /// Descriptors left for new logs.
    available: u64,
}

impl NewLogBudget {
    /// Measures the process now.
    pub fn measure() -> Self {
        let measured = open_file_limits().and_then(|(soft, _)| {
            open_descriptors(soft).map(|open| (soft, open, reserve_for(soft)))
        });
        Self::from_measure(measured)
    }

    /// A budget for a soft limit, open count and reserve (`None`: unlimited).
    pub fn from_measure(measured: Option<(u64, u64, u64)>) -> Self {
        let available = measured.map_or(u64::MAX, |(soft, open, reserve)| {
            soft.saturating_sub(open).saturating_sub(reserve)
        });
        NewLogBudget {
            measured,
            available,
        }
    }

    /// Takes `logs` new logs of `topic` from the budget, all or none: a topic that does not fit
    /// whole is refused whole, so it never ends up holding the descriptors a smaller one needs.
    pub fn admit(&mut self, topic: &str, logs: usize) -> Result<(), StorageError> {
        let needed = (logs as u64).saturating_mul(DESCRIPTORS_PER_LOG);
        let Some((soft_limit, open, reserve)) = self.measured else {
            return Ok(());
        };
        if needed <= self.available {
            self.available -= needed;
            return Ok(());
        }
        Err(StorageError::DescriptorsExhausted {
            topic: topic.to_string(),
            logs,
            needed,
            available: self.available,
            open,
            soft_limit,
            reserve,
        })
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
        assert!(err.is_descriptor_exhaustion());
        assert!(err.to_string().contains("raise ulimit -n"), "{err}");
        let enospc = std::io::Error::from_raw_os_error(nix::errno::Errno::ENOSPC as i32);
        let err = StorageError::io("/data/t-0", enospc);
        assert!(matches!(err, StorageError::Io { .. }), "{err:?}");
        assert!(!err.is_descriptor_exhaustion());
    }

    #[test]
    fn a_budget_admits_whole_topics_while_they_fit() {
        // Limit 1000, 700 open, 100 reserved: 200 descriptors, 200 logs.
        let mut budget = NewLogBudget::from_measure(Some((1000, 700, 100)));
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
        assert!(err.is_descriptor_exhaustion());
        // A refused topic took nothing: a smaller one still fits.
        budget.admit("small", 20).unwrap();
        assert!(budget.admit("one more", 1).is_err());
        assert!(budget.admit("nothing", 0).is_ok());
    }

    #[test]
    fn an_unmeasured_budget_admits_everything() {
        let mut budget = NewLogBudget::from_measure(None);
        assert!(budget.admit("huge", 1_000_000).is_ok());
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
