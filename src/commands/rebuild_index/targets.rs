//! What `kcli rebuild-index PATH` works on: PATH resolved to the segments under it (a `.log`
//! file, a partition directory, or a log dir of partition directories) and the log dir whose
//! `.lock` decides whether a broker is using them.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::storage::file_names::{
    LOG_FILE_SUFFIX, filename_prefix_from_offset, offset_from_file_name, parse_topic_partition_name,
};
use crate::storage::log_dir_lock::{LOCK_FILENAME, LogDirLock, is_locked};

/// One segment to work on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The `.log` file.
    pub log: PathBuf,
    /// The base offset its name encodes.
    pub base_offset: i64,
    /// How the segment is named in reports: `<partition dir>/<file>`.
    pub display: String,
}

/// PATH resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Targets {
    /// Segments in partition order, then base-offset order.
    pub segments: Vec<Segment>,
    /// The log dir above the segments, whose `.lock` a running broker holds (`None` when PATH
    /// has no parent that could be one).
    pub log_dir: Option<PathBuf>,
}

/// Resolves PATH. Errors (exit 2) name the path: missing, not a segment, or nothing under it.
pub(super) fn resolve(path: &Path) -> anyhow::Result<Targets> {
    let path = fs::canonicalize(path).with_context(|| format!("cannot open {}", path.display()))?;
    let meta = fs::metadata(&path).with_context(|| format!("cannot open {}", path.display()))?;
    if meta.is_file() {
        let segment = segment_of_file(&path)?;
        let log_dir = path.parent().and_then(Path::parent).map(Path::to_path_buf);
        return Ok(Targets {
            segments: vec![segment],
            log_dir,
        });
    }
    let own = segments_in(&path)?;
    if !own.is_empty() {
        return Ok(Targets {
            segments: own,
            log_dir: path.parent().map(Path::to_path_buf),
        });
    }
    let mut partitions: Vec<PathBuf> = Vec::new();
    for entry in fs::read_dir(&path).with_context(|| format!("cannot list {}", path.display()))? {
        let entry = entry.with_context(|| format!("cannot list {}", path.display()))?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let name = entry.file_name();
        if is_dir && name.to_str().and_then(parse_topic_partition_name).is_some() {
            partitions.push(entry.path());
        }
    }
    partitions.sort();
    let mut segments = Vec::new();
    for partition in &partitions {
        segments.extend(segments_in(partition)?);
    }
    if segments.is_empty() {
        bail!(
            "no segments under {}: expected a .log file, a partition directory or a log dir",
            path.display()
        );
    }
    Ok(Targets {
        segments,
        log_dir: Some(path),
    })
}

/// A `.log` file given by name: it must be called `<20-digit base offset>.log`.
fn segment_of_file(path: &Path) -> anyhow::Result<Segment> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match base_offset_of_log_name(name) {
        Some(base_offset) => Ok(Segment {
            log: path.to_path_buf(),
            base_offset,
            display: display_name(path),
        }),
        None => bail!(
            "{} is not a segment: expected a file named <20-digit base offset>.log, a partition \
             directory or a log dir",
            path.display()
        ),
    }
}

/// The base offset of `<20 digits>.log`; anything else (`.log.deleted`, `x.log`) is `None`.
fn base_offset_of_log_name(name: &str) -> Option<i64> {
    let base_offset = offset_from_file_name(name)?;
    let expected = format!(
        "{}{LOG_FILE_SUFFIX}",
        filename_prefix_from_offset(base_offset)
    );
    (name == expected).then_some(base_offset)
}

/// The segments directly in `dir`, by base offset.
fn segments_in(dir: &Path) -> anyhow::Result<Vec<Segment>> {
    let mut segments = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name();
        let Some(base_offset) = name.to_str().and_then(base_offset_of_log_name) else {
            continue;
        };
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let log = entry.path();
            segments.push(Segment {
                display: display_name(&log),
                log,
                base_offset,
            });
        }
    }
    segments.sort_by_key(|s| s.base_offset);
    Ok(segments)
}

/// `<partition dir>/<file name>`: short, and unambiguous across a log dir.
fn display_name(log: &Path) -> String {
    let file = log.file_name().map(|n| n.to_string_lossy().into_owned());
    let dir = log
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    match (dir, file) {
        (Some(dir), Some(file)) => format!("{dir}/{file}"),
        _ => log.display().to_string(),
    }
}

/// Refuses (an error, exit 2) when a broker holds the `.lock` of `log_dir`. When the lock file
/// exists, takes the lock and returns it, so that no broker starts on the directory while files
/// are rewritten; no lock file is created where there was none.
pub(super) fn ensure_unlocked(log_dir: Option<&Path>) -> anyhow::Result<Option<LogDirLock>> {
    let Some(log_dir) = log_dir else {
        return Ok(None);
    };
    let locked = is_locked(log_dir)
        .with_context(|| format!("cannot check the lock of {}", log_dir.display()))?;
    let refuse = || {
        anyhow::anyhow!(
            "log dir {} is in use: its {LOCK_FILENAME} is held by a running broker (kcli or \
             Kafka); stop the broker first",
            log_dir.display()
        )
    };
    if locked {
        return Err(refuse());
    }
    if !log_dir.join(LOCK_FILENAME).is_file() {
        return Ok(None);
    }
    match LogDirLock::try_acquire(log_dir) {
        Ok(lock) => Ok(Some(lock)),
        Err(crate::storage::StorageError::LogDirLocked { .. }) => Err(refuse()),
        Err(err) => {
            Err(anyhow::Error::new(err).context(format!("cannot lock {}", log_dir.display())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        fs::write(path, b"").unwrap();
    }

    #[test]
    fn a_log_file_is_one_segment_under_the_log_dir_two_levels_up() {
        let root = tempfile::tempdir().unwrap();
        let partition = root.path().join("t-0");
        fs::create_dir(&partition).unwrap();
        let log = partition.join("00000000000000000042.log");
        touch(&log);
        let targets = resolve(&log).unwrap();
        assert_eq!(targets.segments.len(), 1);
        assert_eq!(targets.segments[0].base_offset, 42);
        assert_eq!(targets.segments[0].display, "t-0/00000000000000000042.log");
        assert_eq!(
            targets.log_dir.unwrap(),
            fs::canonicalize(root.path()).unwrap()
        );
    }

    #[test]
    fn a_partition_dir_lists_its_segments_in_offset_order_and_skips_other_files() {
        let root = tempfile::tempdir().unwrap();
        let partition = root.path().join("t-3");
        fs::create_dir(&partition).unwrap();
        for name in [
            "00000000000000000100.log",
            "00000000000000000000.log",
            "00000000000000000000.index",
            "00000000000000000050.log.deleted",
            "junk.log",
        ] {
            touch(&partition.join(name));
        }
        let targets = resolve(&partition).unwrap();
        let bases: Vec<i64> = targets.segments.iter().map(|s| s.base_offset).collect();
        assert_eq!(bases, vec![0, 100]);
        assert_eq!(
            targets.log_dir.unwrap(),
            fs::canonicalize(root.path()).unwrap()
        );
    }

    #[test]
    fn a_log_dir_covers_every_partition_but_not_deleted_ones() {
        let root = tempfile::tempdir().unwrap();
        for dir in ["a-0", "a-1", "b-0.0123456789abcdef0123456789abcdef-delete"] {
            let dir = root.path().join(dir);
            fs::create_dir(&dir).unwrap();
            touch(&dir.join("00000000000000000000.log"));
        }
        let targets = resolve(root.path()).unwrap();
        let names: Vec<&str> = targets
            .segments
            .iter()
            .map(|s| s.display.as_str())
            .collect();
        assert_eq!(
            names,
            vec![
                "a-0/00000000000000000000.log",
                "a-1/00000000000000000000.log"
            ]
        );
    }

    #[test]
    fn bad_paths_are_errors_naming_the_path() {
        let root = tempfile::tempdir().unwrap();
        let missing = root.path().join("nope");
        assert!(format!("{:#}", resolve(&missing).unwrap_err()).contains("nope"));
        let other = root.path().join("notes.txt");
        touch(&other);
        assert!(
            resolve(&other)
                .unwrap_err()
                .to_string()
                .contains("notes.txt")
        );
        let empty = root.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(resolve(&empty).unwrap_err().to_string().contains("empty"));
    }

    #[test]
    fn a_held_lock_is_refused_and_a_free_one_is_taken_only_if_the_file_exists() {
        let root = tempfile::tempdir().unwrap();
        assert!(ensure_unlocked(Some(root.path())).unwrap().is_none());
        assert!(!root.path().join(LOCK_FILENAME).exists());
        let held = LogDirLock::try_acquire(root.path()).unwrap();
        let err = ensure_unlocked(Some(root.path())).unwrap_err();
        assert!(err.to_string().contains("is in use"));
        drop(held);
        let taken = ensure_unlocked(Some(root.path())).unwrap();
        assert!(taken.is_some());
    }
}
