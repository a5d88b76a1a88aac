//! `kcli rebuild-index PATH`: rebuilds (or with `--verify` checks) the `.index` and
//! `.timeindex` of every segment under PATH from its `.log`, with the rule Kafka's
//! `LogSegment.recover` uses (`storage::segment_scan`).
//!
//! - `targets`: PATH → segments; the log dir's `.lock` (a running broker) refuses a rebuild
//!   (`--verify` and `--dry-run` only read, and run beside a broker).
//! - `rebuild`: the rebuilt bytes in memory; the files written at a temp name and renamed.
//! - `verify`: the existing indexes checked entry by entry against the batches.
//! - `report`: problem lines, the summary table, JSON Lines, the progress bar.
//!
//! One pass over each `.log` validates every batch (size, CRC, offsets) and computes the index
//! entries. Files already identical to the rebuild are left untouched. A corrupt or torn tail
//! is reported with the offset and byte position where the valid data ends and is cut only
//! with `--truncate-corrupt`. Exit: 0 all good; 1 a check failed or corruption was left in
//! place; 2 an error (the message names the path).

mod rebuild;
mod report;
mod targets;
mod verify;

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::Path;

use anyhow::Context;

use crate::cli::{RebuildIndexArgs, RebuildIndexFormat};
use crate::storage::file_names::{offset_index_file, time_index_file};
use crate::storage::file_records::FileRecords;
use crate::storage::log_dir_lock::is_locked;
use crate::storage::offset_index::OFFSET_INDEX_ENTRY_SIZE;
use crate::storage::segment_scan::{SegmentScan, scan_segment_visiting};
use crate::storage::time_index::TIME_INDEX_ENTRY_SIZE;

use super::Outcome;
use rebuild::{Replace, rebuilt_bytes, write_rebuilt};
use report::{Progress, Reporter};
use targets::Segment;
use verify::{BadEntry, IndexVerifier, Verdict};

/// What the run does to each segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Rebuild { truncate_corrupt: bool },
    DryRun,
    Verify { strict: bool },
}

/// What became of, or was found in, one index file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileStatus {
    /// `--verify`: every entry follows the rules (and, with `--strict`, equals the rebuild).
    Valid,
    /// The file already equals the rebuild; left untouched.
    UpToDate,
    /// Replaced by the rebuild.
    Rebuilt,
    /// `--dry-run`: would be replaced.
    WouldRebuild,
    /// `--verify`: the file does not exist.
    Missing,
    /// `--verify`: the first entry breaking a rule.
    Invalid(BadEntry),
    /// `--verify --strict`: valid, but not what a rebuild writes.
    DiffersFromRebuild(BadEntry),
}

impl FileStatus {
    fn failed(&self) -> bool {
        matches!(
            self,
            FileStatus::Missing | FileStatus::Invalid(_) | FileStatus::DiffersFromRebuild(_)
        )
    }
}

/// An index file's entries (whole entries on disk when verifying, in the rebuild otherwise)
/// and status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexReport {
    pub entries: usize,
    pub status: FileStatus,
}

/// Where a segment's valid data ends before the end of its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CorruptTail {
    pub position: u64,
    /// The offset after the last valid batch.
    pub next_offset: i64,
    /// Bytes after the valid data.
    pub bytes: u64,
    pub reason: String,
    /// Cut with `--truncate-corrupt`.
    pub truncated: bool,
}

/// One segment's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegmentReport {
    pub segment: Segment,
    /// The `.log` size before anything was cut.
    pub bytes: u64,
    pub batches: u64,
    pub index: IndexReport,
    pub time_index: IndexReport,
    pub corrupt_tail: Option<CorruptTail>,
}

impl SegmentReport {
    /// Whether this segment makes the run exit 1.
    pub(crate) fn failed(&self) -> bool {
        self.index.status.failed()
            || self.time_index.status.failed()
            || self.corrupt_tail.as_ref().is_some_and(|t| !t.truncated)
    }
}

/// Runs `kcli rebuild-index`, writing reports to `out` (progress, if any, to stderr).
pub(crate) fn run(args: &RebuildIndexArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mode = if args.verify {
        Mode::Verify {
            strict: args.strict,
        }
    } else if args.dry_run {
        Mode::DryRun
    } else {
        Mode::Rebuild {
            truncate_corrupt: args.truncate_corrupt,
        }
    };
    let targets = targets::resolve(&args.path)?;
    // Only a rebuild writes: it refuses a live broker's dir and holds the lock until the end, so
    // that no broker starts on the files being rewritten. `--verify` and `--dry-run` only read,
    // so like Kafka's DumpLogSegments they work beside a running broker.
    let _lock = match mode {
        Mode::Rebuild { .. } => targets::ensure_unlocked(targets.log_dir.as_deref())?,
        Mode::Verify { .. } | Mode::DryRun => None,
    };
    let mut total = 0u64;
    for segment in &targets.segments {
        let meta = fs::metadata(&segment.log)
            .with_context(|| format!("cannot read {}", segment.log.display()))?;
        total += meta.len();
    }
    let progress = Progress::new(total);
    let mut reporter = Reporter::new(
        args.format == RebuildIndexFormat::Json,
        matches!(mode, Mode::Verify { .. }),
    );
    // A running broker's active segments have preallocated indexes, zero past their entries,
    // and may grow while they are read.
    let live = match targets.log_dir.as_deref() {
        Some(dir) => {
            is_locked(dir).with_context(|| format!("cannot check the lock of {}", dir.display()))?
        }
        None => false,
    };
    let mut failed = false;
    for (n, segment) in targets.segments.iter().enumerate() {
        let is_last = targets
            .segments
            .get(n + 1)
            .is_none_or(|next| next.log.parent() != segment.log.parent());
        let report = process(
            segment,
            mode,
            u64::from(args.index_interval_bytes),
            &progress,
            live && is_last,
        )?;
        failed |= report.failed();
        progress.suspend(|| reporter.segment(out, &report))?;
    }
    progress.finish();
    reporter.finish(out)?;
    out.flush()?;
    Ok(if failed {
        Outcome::CheckFailed
    } else {
        Outcome::Success
    })
}

/// Scans one segment and does what `mode` asks with its indexes. `live_active`: the segment is
/// a running broker's active one.
fn process(
    segment: &Segment,
    mode: Mode,
    index_interval_bytes: u64,
    progress: &Progress,
    live_active: bool,
) -> anyhow::Result<SegmentReport> {
    let log_path = &segment.log;
    let dir = log_path
        .parent()
        .with_context(|| format!("{} has no directory", log_path.display()))?;
    let index_path = offset_index_file(dir, segment.base_offset);
    let time_path = time_index_file(dir, segment.base_offset);
    let mut existing_index = read_if_present(&index_path)?;
    let mut existing_time = read_if_present(&time_path)?;
    if live_active {
        // The broker trims these only when it rolls or shuts down; the zeros are its free space.
        for (bytes, entry_size) in [
            (&mut existing_index, OFFSET_INDEX_ENTRY_SIZE),
            (&mut existing_time, TIME_INDEX_ENTRY_SIZE),
        ] {
            if let Some(bytes) = bytes {
                bytes.truncate(preallocated_entries_end(bytes, entry_size));
            }
        }
    }

    let log = FileRecords::open_read_only(log_path.clone())
        .with_context(|| format!("cannot open {}", log_path.display()))?;
    let bytes = log.size_in_bytes();
    let mut verifier = matches!(mode, Mode::Verify { .. }).then(|| {
        IndexVerifier::new(
            existing_index.as_deref(),
            existing_time.as_deref(),
            segment.base_offset,
        )
    });
    let mut reported = 0u64;
    let scan = scan_segment_visiting(
        &log,
        segment.base_offset,
        index_interval_bytes,
        &mut |batch| {
            if let Some(v) = verifier.as_mut() {
                v.visit(batch);
            }
        },
        &mut |done| {
            progress.inc(done.saturating_sub(reported));
            reported = reported.max(done);
        },
    )
    .with_context(|| format!("cannot scan {}", log_path.display()))?;
    progress.inc(bytes.saturating_sub(reported));
    drop(log);

    let mut rebuilt = rebuilt_bytes(&scan, segment.base_offset)
        .with_context(|| format!("cannot rebuild the indexes of {}", log_path.display()))?;
    if live_active && matches!(mode, Mode::Verify { .. }) {
        // Batches appended after the indexes were read have entries only in the rebuild.
        for (rebuilt, existing) in [
            (&mut rebuilt.offset_index, &existing_index),
            (&mut rebuilt.time_index, &existing_time),
        ] {
            let existing = existing.as_deref().unwrap_or_default();
            if rebuilt.starts_with(existing) {
                rebuilt.truncate(existing.len());
            }
        }
    }
    let (index, time_index) = match mode {
        Mode::Verify { strict } => {
            let (index_verdict, time_verdict) = match verifier {
                Some(v) => v.finish(scan.valid_bytes, scan.next_offset),
                None => (Verdict::Missing, Verdict::Missing),
            };
            let index = verified(
                index_verdict,
                strict.then(|| {
                    verify::first_offset_index_difference(
                        existing_index.as_deref().unwrap_or_default(),
                        &rebuilt.offset_index,
                        segment.base_offset,
                    )
                }),
            );
            let time_index = verified(
                time_verdict,
                strict.then(|| {
                    verify::first_time_index_difference(
                        existing_time.as_deref().unwrap_or_default(),
                        &rebuilt.time_index,
                        segment.base_offset,
                    )
                }),
            );
            (index, time_index)
        }
        Mode::DryRun | Mode::Rebuild { .. } => {
            let index_same = existing_index.as_deref() == Some(rebuilt.offset_index.as_slice());
            let time_same = existing_time.as_deref() == Some(rebuilt.time_index.as_slice());
            let changed = if mode == Mode::DryRun {
                FileStatus::WouldRebuild
            } else {
                if !(index_same && time_same) {
                    let replace = Replace {
                        offset_index: !index_same,
                        time_index: !time_same,
                    };
                    write_rebuilt(log_path, segment.base_offset, &scan, &rebuilt, replace)
                        .with_context(|| {
                            format!("cannot write the indexes of {}", log_path.display())
                        })?;
                }
                FileStatus::Rebuilt
            };
            let status = |same: bool| {
                if same {
                    FileStatus::UpToDate
                } else {
                    changed.clone()
                }
            };
            (
                IndexReport {
                    entries: rebuilt.offset_entries(),
                    status: status(index_same),
                },
                IndexReport {
                    entries: rebuilt.time_entries(),
                    status: status(time_same),
                },
            )
        }
    };

    let truncate = matches!(
        mode,
        Mode::Rebuild {
            truncate_corrupt: true
        }
    );
    let corrupt_tail = corrupt_tail(&scan, bytes, truncate, log_path)?;
    Ok(SegmentReport {
        segment: segment.clone(),
        bytes,
        batches: scan.batches,
        index,
        time_index,
        corrupt_tail,
    })
}

/// A verdict, and with `--strict` the first difference from the rebuild, as a report.
fn verified(verdict: Verdict, difference: Option<Option<BadEntry>>) -> IndexReport {
    match verdict {
        Verdict::Missing => IndexReport {
            entries: 0,
            status: FileStatus::Missing,
        },
        Verdict::Checked {
            entries,
            first_bad: Some(bad),
        } => IndexReport {
            entries,
            status: FileStatus::Invalid(bad),
        },
        Verdict::Checked {
            entries,
            first_bad: None,
        } => IndexReport {
            entries,
            status: match difference.flatten() {
                Some(bad) => FileStatus::DiffersFromRebuild(bad),
                None => FileStatus::Valid,
            },
        },
    }
}

/// The segment's invalid tail, cut when `truncate`.
fn corrupt_tail(
    scan: &SegmentScan,
    bytes: u64,
    truncate: bool,
    log_path: &Path,
) -> anyhow::Result<Option<CorruptTail>> {
    let Some(invalid) = &scan.invalid else {
        return Ok(None);
    };
    if truncate {
        let mut log = FileRecords::open(log_path.to_path_buf(), false)
            .with_context(|| format!("cannot open {} to cut it", log_path.display()))?;
        log.truncate_to(invalid.position)
            .and_then(|_| log.flush())
            .with_context(|| format!("cannot cut {}", log_path.display()))?;
    }
    Ok(Some(CorruptTail {
        position: invalid.position,
        next_offset: invalid.next_offset,
        bytes: bytes.saturating_sub(invalid.position),
        reason: invalid.reason.clone(),
        truncated: truncate,
    }))
}

/// Where the entries of a preallocated index end: before its trailing run of all-zero entries.
/// (No real entry is all zero: an offset-index entry points past the first batch, and a
/// time-index entry of timestamp 0 at the base offset is only ever the first.)
/// A file that is not whole entries was not preallocated (the broker rounds the size down to
/// whole entries) and is left for the checks to report.
fn preallocated_entries_end(bytes: &[u8], entry_size: usize) -> usize {
    if entry_size == 0 || !bytes.len().is_multiple_of(entry_size) {
        return bytes.len();
    }
    let mut end = bytes.len();
    while end >= entry_size && bytes[end - entry_size..end].iter().all(|b| *b == 0) {
        end -= entry_size;
    }
    end
}

fn read_if_present(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use crate::protocol::record::compression::CompressionType;
    use proptest::prelude::*;
    use std::path::PathBuf;

    fn args(path: &Path) -> RebuildIndexArgs {
        RebuildIndexArgs {
            path: path.to_path_buf(),
            verify: false,
            strict: false,
            dry_run: false,
            index_interval_bytes: 100,
            truncate_corrupt: false,
            format: RebuildIndexFormat::Json,
        }
    }

    /// A partition `t-0` with one segment of 30 single-record batches of ~80 bytes each.
    fn partition() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t-0");
        fs::create_dir(&dir).unwrap();
        let mut log = Vec::new();
        for i in 0..30i64 {
            let mut builder = RecordBatchBuilder::new(CompressionType::None);
            builder.base_offset = i;
            builder.records = vec![SimpleRecord::new(
                1_000 + (i * 7) % 11,
                None,
                Some(vec![i as u8; 10]),
            )];
            log.extend(builder.build().unwrap());
        }
        fs::write(dir.join("00000000000000000000.log"), log).unwrap();
        (root, dir)
    }

    fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
        std::str::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn rebuild_then_verify_then_damage() {
        let (_root, dir) = partition();
        let mut out = Vec::new();
        assert_eq!(run(&args(&dir), &mut out).unwrap(), Outcome::Success);
        let report = &json_lines(&out)[0];
        assert_eq!(report["batches"], 30);
        assert_eq!(report["index"]["status"], "rebuilt");
        let index = fs::read(dir.join("00000000000000000000.index")).unwrap();
        assert!(index.len() >= 8 * 5, "{}", index.len());

        let verify = RebuildIndexArgs {
            verify: true,
            strict: true,
            ..args(&dir)
        };
        let mut out = Vec::new();
        assert_eq!(run(&verify, &mut out).unwrap(), Outcome::Success);

        // A torn tail: found by --verify, left alone by a rebuild, cut by --truncate-corrupt.
        let log = dir.join("00000000000000000000.log");
        let size = fs::metadata(&log).unwrap().len();
        fs::OpenOptions::new()
            .write(true)
            .open(&log)
            .unwrap()
            .set_len(size - 3)
            .unwrap();
        let mut out = Vec::new();
        assert_eq!(run(&verify, &mut out).unwrap(), Outcome::CheckFailed);
        let mut out = Vec::new();
        assert_eq!(run(&args(&dir), &mut out).unwrap(), Outcome::CheckFailed);
        assert_eq!(fs::metadata(&log).unwrap().len(), size - 3);
        let cut = RebuildIndexArgs {
            truncate_corrupt: true,
            ..args(&dir)
        };
        let mut out = Vec::new();
        assert_eq!(run(&cut, &mut out).unwrap(), Outcome::Success);
        let tail = &json_lines(&out)[0]["corrupt_tail"];
        assert_eq!(tail["truncated"], true);
        assert_eq!(tail["next_offset"], 29);
        assert_eq!(fs::metadata(&log).unwrap().len(), tail["position"]);
        let mut out = Vec::new();
        assert_eq!(run(&verify, &mut out).unwrap(), Outcome::Success);
    }

    #[test]
    fn preallocated_zero_entries_are_trimmed_but_not_a_partial_tail() {
        let mut index = vec![1u8; 16];
        assert_eq!(preallocated_entries_end(&index, 8), 16);
        index.extend_from_slice(&[0; 24]);
        assert_eq!(preallocated_entries_end(&index, 8), 16);
        assert_eq!(preallocated_entries_end(&[0; 48], 8), 0);
        assert_eq!(preallocated_entries_end(&[0; 13], 8), 13);
    }

    #[test]
    fn a_missing_index_fails_verify_and_a_dry_run_writes_nothing() {
        let (_root, dir) = partition();
        let verify = RebuildIndexArgs {
            verify: true,
            ..args(&dir)
        };
        let mut out = Vec::new();
        assert_eq!(run(&verify, &mut out).unwrap(), Outcome::CheckFailed);
        assert_eq!(json_lines(&out)[0]["index"]["status"], "missing");
        let dry = RebuildIndexArgs {
            dry_run: true,
            ..args(&dir)
        };
        let mut out = Vec::new();
        assert_eq!(run(&dry, &mut out).unwrap(), Outcome::Success);
        assert_eq!(json_lines(&out)[0]["index"]["status"], "would_rebuild");
        assert!(!dir.join("00000000000000000000.index").exists());
        assert!(!dir.join("00000000000000000000.timeindex").exists());
    }

    #[test]
    fn text_output_ends_with_the_table() {
        let (_root, dir) = partition();
        let text = RebuildIndexArgs {
            format: RebuildIndexFormat::Text,
            ..args(&dir)
        };
        let mut out = Vec::new();
        assert_eq!(run(&text, &mut out).unwrap(), Outcome::Success);
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("t-0/00000000000000000000.log"), "{out}");
        assert!(out.contains(".index rebuilt"), "{out}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever bit is flipped in the log, the command never panics; when a rebuild that
        /// cuts the corrupt tail succeeds, the result verifies strictly.
        #[test]
        fn a_flipped_bit_anywhere_ends_in_indexes_that_verify(at in 0usize..2000, bit in 0u8..8) {
            let (_root, dir) = partition();
            let log = dir.join("00000000000000000000.log");
            let mut data = fs::read(&log).unwrap();
            let at = at % data.len();
            data[at] ^= 1 << bit;
            fs::write(&log, &data).unwrap();
            let verify = RebuildIndexArgs { verify: true, strict: true, ..args(&dir) };
            let _ = run(&verify, &mut Vec::new());
            let cut = RebuildIndexArgs { truncate_corrupt: true, ..args(&dir) };
            if run(&cut, &mut Vec::new()).is_ok() {
                let mut out = Vec::new();
                prop_assert_eq!(run(&verify, &mut out).unwrap(), Outcome::Success,
                    "{}", String::from_utf8_lossy(&out));
            }
        }
    }
}
