//! The indexes a rebuild produces: their bytes computed in memory (to compare with the files
//! on disk), and the files themselves written through the storage layer's `OffsetIndex` and
//! `TimeIndex` at a temporary name in the segment's directory, then renamed over the old ones.
//!
//! Both follow `segment_scan::write_indexes`, the rule of Kafka's `LogSegment.recover`: for a
//! segment written in one run by single-batch appends the result is byte-identical to what the
//! broker wrote online, trimmed as at roll or close.

use std::fs::{self, File};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::protocol::record::batch::NO_TIMESTAMP;
use crate::storage::file_names::{offset_index_file, time_index_file, with_suffix};
use crate::storage::log_config::LogConfig;
use crate::storage::offset_index::{OFFSET_INDEX_ENTRY_SIZE, OffsetIndex};
use crate::storage::segment_scan::{SegmentScan, write_indexes};
use crate::storage::time_index::{TIME_INDEX_ENTRY_SIZE, TimeIndex, TimestampOffset};

/// Suffix of the files a rebuild writes before renaming them; Kafka ignores such names and a
/// later rebuild removes leftovers.
pub(super) const TEMP_SUFFIX: &str = ".rebuild.tmp";

/// The contents of a segment's rebuilt `.index` and `.timeindex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RebuiltIndexes {
    pub offset_index: Vec<u8>,
    pub time_index: Vec<u8>,
}

impl RebuiltIndexes {
    pub(super) fn offset_entries(&self) -> usize {
        self.offset_index.len() / OFFSET_INDEX_ENTRY_SIZE
    }

    pub(super) fn time_entries(&self) -> usize {
        self.time_index.len() / TIME_INDEX_ENTRY_SIZE
    }
}

/// The bytes `write_indexes` leaves in trimmed files for `scan`: an offset-index entry per
/// index point, and a time-index entry whenever the maximum timestamp so far rises (Kafka's
/// `TimeIndex.maybeAppend`), the segment's maximum last.
pub(super) fn rebuilt_bytes(
    scan: &SegmentScan,
    base_offset: i64,
) -> anyhow::Result<RebuiltIndexes> {
    let relative = |offset: i64| {
        i32::try_from(offset - base_offset).with_context(|| {
            format!("offset {offset} does not fit an index of the segment based at {base_offset}")
        })
    };
    let mut offset_index = Vec::with_capacity(scan.index_points.len() * OFFSET_INDEX_ENTRY_SIZE);
    let mut time_index = Vec::new();
    let mut last_timestamp = NO_TIMESTAMP;
    let mut push_time = |entry: TimestampOffset, out: &mut Vec<u8>| -> anyhow::Result<()> {
        if entry.timestamp > last_timestamp {
            out.extend_from_slice(&entry.timestamp.to_be_bytes());
            out.extend_from_slice(&relative(entry.offset)?.to_be_bytes());
            last_timestamp = entry.timestamp;
        }
        Ok(())
    };
    for point in &scan.index_points {
        offset_index.extend_from_slice(&relative(point.offset)?.to_be_bytes());
        offset_index.extend_from_slice(&point.position.to_be_bytes());
        push_time(point.max_timestamp_so_far, &mut time_index)?;
    }
    push_time(scan.max_timestamp, &mut time_index)?;
    Ok(RebuiltIndexes {
        offset_index,
        time_index,
    })
}

/// Which of a segment's index files to replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Replace {
    pub offset_index: bool,
    pub time_index: bool,
}

/// Writes the rebuilt indexes of the segment `log` (base `base_offset`) through the storage
/// layer at `<name>.rebuild.tmp`, checks them against `expected`, fsyncs them and renames the
/// ones `replace` names over the originals (then fsyncs the directory). A temporary file is
/// never left behind on success, and removed on failure where possible.
pub(super) fn write_rebuilt(
    log: &Path,
    base_offset: i64,
    scan: &SegmentScan,
    expected: &RebuiltIndexes,
    replace: Replace,
) -> anyhow::Result<()> {
    let dir = log
        .parent()
        .with_context(|| format!("{} has no directory", log.display()))?;
    let index = offset_index_file(dir, base_offset);
    let time = time_index_file(dir, base_offset);
    let index_tmp = with_suffix(&index, TEMP_SUFFIX);
    let time_tmp = with_suffix(&time, TEMP_SUFFIX);
    remove_if_present(&index_tmp)?;
    remove_if_present(&time_tmp)?;
    let written = write_temps(&index_tmp, &time_tmp, base_offset, scan, expected);
    if let Err(err) = written {
        // Best effort: the error reported is the write's.
        let _ = remove_if_present(&index_tmp);
        let _ = remove_if_present(&time_tmp);
        return Err(err);
    }
    for (tmp, target, wanted) in [
        (&index_tmp, &index, replace.offset_index),
        (&time_tmp, &time, replace.time_index),
    ] {
        if wanted {
            fs::rename(tmp, target).with_context(|| {
                format!("cannot rename {} to {}", tmp.display(), target.display())
            })?;
        } else {
            remove_if_present(tmp)?;
        }
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync the directory {}", dir.display()))
}

fn write_temps(
    index_tmp: &Path,
    time_tmp: &Path,
    base_offset: i64,
    scan: &SegmentScan,
    expected: &RebuiltIndexes,
) -> anyhow::Result<()> {
    // Files are trimmed on close, so the preallocated size only has to hold every entry, plus
    // the slot the time index keeps for its final entry.
    let default_size = usize::try_from(LogConfig::default().segment_index_bytes).unwrap_or(0);
    let max_index_size = default_size.max((scan.index_points.len() + 2) * TIME_INDEX_ENTRY_SIZE);
    let mut offset_index = OffsetIndex::open(index_tmp.to_path_buf(), base_offset, max_index_size)?;
    let mut time_index = TimeIndex::open(time_tmp.to_path_buf(), base_offset, max_index_size)?;
    write_indexes(scan, &mut offset_index, &mut time_index)?;
    offset_index.flush()?;
    time_index.flush()?;
    offset_index.close()?;
    time_index.close()?;
    for (path, bytes) in [
        (index_tmp, &expected.offset_index),
        (time_tmp, &expected.time_index),
    ] {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        file.sync_all()
            .with_context(|| format!("cannot sync {}", path.display()))?;
        let written = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        if &written != bytes {
            bail!(
                "{} as written ({} bytes) differs from the computed rebuild ({} bytes)",
                path.display(),
                written.len(),
                bytes.len()
            );
        }
    }
    Ok(())
}

fn remove_if_present(path: &PathBuf) -> anyhow::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::segment_scan::IndexPoint;
    use proptest::prelude::*;

    fn scan_of(base: i64, points: &[(i64, u32, i64, i64)], max: (i64, i64)) -> SegmentScan {
        SegmentScan {
            index_points: points
                .iter()
                .map(|&(offset, position, timestamp, ts_offset)| IndexPoint {
                    offset,
                    position,
                    max_timestamp_so_far: TimestampOffset {
                        timestamp,
                        offset: ts_offset,
                    },
                })
                .collect(),
            max_timestamp: TimestampOffset {
                timestamp: max.0,
                offset: max.1,
            },
            valid_bytes: 0,
            batches: 0,
            next_offset: base,
            invalid: None,
            epochs: Vec::new(),
        }
    }

    /// What the storage layer writes for `scan`, read back from trimmed files.
    fn written_by_storage(scan: &SegmentScan, base: i64) -> (Vec<u8>, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("00000000000000000000.log");
        let expected = rebuilt_bytes(scan, base).unwrap();
        let replace = Replace {
            offset_index: true,
            time_index: true,
        };
        write_rebuilt(&log, base, scan, &expected, replace).unwrap();
        let index = fs::read(offset_index_file(dir.path(), base)).unwrap();
        let time = fs::read(time_index_file(dir.path(), base)).unwrap();
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(TEMP_SUFFIX))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        (index, time)
    }

    #[test]
    fn bytes_are_relative_big_endian_entries_and_the_final_time_entry() {
        let scan = scan_of(100, &[(105, 4200, 7, 103), (110, 8400, 7, 103)], (9, 112));
        let rebuilt = rebuilt_bytes(&scan, 100).unwrap();
        assert_eq!(
            rebuilt.offset_index,
            [0, 0, 0, 5, 0, 0, 0x10, 0x68, 0, 0, 0, 10, 0, 0, 0x20, 0xd0]
        );
        // The repeated maximum is not appended twice; the segment's maximum comes last.
        let mut time = Vec::new();
        time.extend_from_slice(&7i64.to_be_bytes());
        time.extend_from_slice(&3i32.to_be_bytes());
        time.extend_from_slice(&9i64.to_be_bytes());
        time.extend_from_slice(&12i32.to_be_bytes());
        assert_eq!(rebuilt.time_index, time);
        assert_eq!((rebuilt.offset_entries(), rebuilt.time_entries()), (2, 2));
    }

    #[test]
    fn a_segment_without_timestamps_has_an_empty_time_index() {
        let scan = scan_of(0, &[(3, 5000, NO_TIMESTAMP, 0)], (NO_TIMESTAMP, 0));
        let rebuilt = rebuilt_bytes(&scan, 0).unwrap();
        assert!(rebuilt.time_index.is_empty());
        assert_eq!(written_by_storage(&scan, 0).1, Vec::<u8>::new());
    }

    #[test]
    fn rename_replaces_only_what_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("00000000000000000000.log");
        let index = offset_index_file(dir.path(), 0);
        let time = time_index_file(dir.path(), 0);
        fs::write(&index, b"old").unwrap();
        fs::write(&time, b"old").unwrap();
        let scan = scan_of(0, &[(4, 4100, 5, 4)], (6, 8));
        let expected = rebuilt_bytes(&scan, 0).unwrap();
        let replace = Replace {
            offset_index: false,
            time_index: true,
        };
        write_rebuilt(&log, 0, &scan, &expected, replace).unwrap();
        assert_eq!(fs::read(&index).unwrap(), b"old");
        assert_eq!(fs::read(&time).unwrap(), expected.time_index);
        assert!(!with_suffix(&index, TEMP_SUFFIX).exists());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// The in-memory bytes (used by --strict and --dry-run) are what the storage layer's
        /// indexes write, for any increasing points.
        #[test]
        fn in_memory_bytes_match_the_storage_layer(
            steps in proptest::collection::vec((1i64..50, 1u32..9000, 0i64..3), 0..40),
            final_bump in 0i64..3,
        ) {
            let base = 1000;
            let mut points = Vec::new();
            let (mut offset, mut position, mut ts, mut ts_offset) = (base, 0u32, -1i64, base);
            for (d_offset, d_position, d_ts) in steps {
                offset += d_offset;
                position += d_position;
                if d_ts > 0 {
                    ts += d_ts;
                    ts_offset = offset;
                }
                points.push((offset, position, ts, ts_offset));
            }
            let max = if final_bump > 0 { (ts + final_bump, offset + 1) } else { (ts, ts_offset) };
            let scan = scan_of(base, &points, max);
            let rebuilt = rebuilt_bytes(&scan, base).unwrap();
            let (index, time) = written_by_storage(&scan, base);
            prop_assert_eq!(rebuilt.offset_index, index);
            prop_assert_eq!(rebuilt.time_index, time);
        }
    }
}
