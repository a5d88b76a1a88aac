//! The `.index` and `.timeindex` dumpers: `DumpLogSegments.dumpIndex` and `dumpTimeIndex`.
//! Each entry is printed (unless `--verify-index-only`) and checked against the segment's
//! `.log` beside it: an offset-index entry must point at a batch whose last offset is the entry's
//! offset; a time-index entry's offset must be the last offset of a batch whose largest record
//! timestamp is the entry's, and timestamps must increase. Iteration stops at the first entry
//! (after the first) whose offset is the base offset: the zero padding of a preallocated index.
//! `--index-sanity-check` runs only the broker's startup check. Files are only read.

use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::segment::{BatchInfo, BatchReader, SegmentError, for_each_record};
use super::{Dumper, java_absolute_path, json, offset_from_file_name, push_report, summary};
use crate::cli::DumpFormat;
use crate::storage::StorageError;
use crate::storage::offset_index::OffsetIndex;
use crate::storage::time_index::TimeIndex;

/// Opens an index read-only through the storage engine's reader (Kafka's `writable = false`), at
/// Java's absolute path, so the sanity check's messages name the file as Kafka's tool does.
fn open_index<I>(
    absolute: &str,
    base: i64,
    shown: &str,
    open: fn(PathBuf, i64) -> Result<I, StorageError>,
) -> anyhow::Result<I> {
    open(PathBuf::from(absolute), base).with_context(|| format!("{shown}: cannot read"))
}

/// A sanity check's outcome with the bare `CorruptIndexException` message.
fn sanity(result: Result<(), StorageError>) -> Result<(), String> {
    result.map_err(|e| match e {
        StorageError::CorruptIndex { reason, .. } => reason,
        other => other.to_string(),
    })
}

/// The sibling of `path` with the same stem (up to the first `.`) and `suffix`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or("");
    path.with_file_name(format!("{stem}{suffix}"))
}

/// The segment's log, opened for positioned reads.
struct LogFile {
    file: File,
    len: u64,
}

impl LogFile {
    fn open(path: &Path) -> anyhow::Result<Self> {
        let shown = super::java_path(path);
        let file =
            File::open(path).with_context(|| format!("{shown}: cannot open the segment's log"))?;
        let len = file
            .metadata()
            .with_context(|| format!("{shown}: cannot stat"))?
            .len();
        Ok(LogFile { file, len })
    }

    /// Batches of `[position, position + size)` (clamped to the file), like
    /// `FileRecords.slice(position, size).batches`. `None` when the position is past the end.
    fn slice(
        &self,
        position: i32,
        size: i32,
    ) -> anyhow::Result<Option<BatchReader<BufReader<&File>>>> {
        if position < 0 || position as u64 > self.len {
            return Ok(None);
        }
        let start = position as u64;
        let end = (start + size.max(0) as u64).min(self.len);
        let mut f = &self.file;
        f.seek(SeekFrom::Start(start))
            .context("seeking in the log")?;
        Ok(Some(BatchReader::new(
            BufReader::with_capacity(64 * 1024, f),
            start,
            end,
        )))
    }
}

pub(crate) fn dump_offset_index(
    d: &mut Dumper,
    path: &Path,
    shown: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    let base = offset_from_file_name(path, shown)?;
    let log = LogFile::open(&sibling(path, ".log"))?;
    let absolute = java_absolute_path(path);
    let index = open_index(&absolute, base, shown, OffsetIndex::open_read_only)?;
    let text = d.opts.format == DumpFormat::Text && !d.opts.summary;
    // A summary still shows its table (no entries), as it does for an empty time index.
    if index.entries() == 0 && !d.opts.summary {
        if text {
            writeln!(out, "{shown} is empty.")?;
        }
        return Ok(());
    }
    if d.opts.index_sanity_check {
        return sanity_result(d, sanity(index.sanity_check()), shown, out, err);
    }
    let mut printed = 0usize;
    let mut mismatches = 0usize;
    for i in 0..index.entries() {
        // Kafka reads the position as a Java int: a corrupt entry shows it negative.
        let (offset, position) = index
            .entry(i)
            .map_or((base, 0), |e| (e.offset, e.position as i32));
        if offset == base && i > 0 {
            break;
        }
        let first_last_offset = match log.slice(position, d.opts.max_message_size)? {
            None => None,
            Some(mut batches) => match batches.next_batch() {
                Ok(Some(b)) => Some(b.last_offset()),
                Ok(None) => None,
                Err(e) => Some(Err(e)),
            },
        };
        match first_last_offset {
            Some(Ok(log_offset)) => {
                if log_offset != offset {
                    mismatches += 1;
                    push_report(
                        &mut d.reports.index_mismatches,
                        &absolute,
                        (offset, log_offset),
                    );
                    d.failed = true;
                }
            }
            Some(Err(SegmentError::Io(e))) => {
                return Err(anyhow::Error::new(e).context(format!("{shown}: reading the log")));
            }
            Some(Err(SegmentError::Corrupt(msg))) => {
                d.report(
                    out,
                    err,
                    shown,
                    &format!("entry {i} (offset {offset}, position {position}): {msg}"),
                )?;
            }
            None => {
                d.report(
                    out,
                    err,
                    shown,
                    &format!("entry {i} (offset {offset}, position {position}): no complete batch at that position of the log"),
                )?;
            }
        }
        printed += 1;
        if d.opts.verify_index_only || d.opts.summary {
            continue;
        }
        match d.opts.format {
            DumpFormat::Text => writeln!(out, "offset: {offset} position: {position}")?,
            DumpFormat::Json => {
                out.write_all(b"{\"type\":\"offset_index_entry\",\"file\":")?;
                json::write_str(out, shown)?;
                writeln!(out, ",\"offset\":{offset},\"position\":{position}}}")?;
            }
        }
    }
    if d.opts.summary {
        let rows = [
            ("entries", printed.to_string()),
            (
                "offsets",
                range(
                    printed,
                    index.entry(0).map_or(base, |e| e.offset),
                    index
                        .entry(printed.saturating_sub(1))
                        .map_or(base, |e| e.offset),
                ),
            ),
            ("mismatches", mismatches.to_string()),
        ];
        writeln!(out, "{}", summary::table(shown, &rows))?;
    }
    Ok(())
}

pub(crate) fn dump_time_index(
    d: &mut Dumper,
    path: &Path,
    shown: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    let base = offset_from_file_name(path, shown)?;
    let log = LogFile::open(&sibling(path, ".log"))?;
    // Kafka creates a missing offset index here; kcli only reads, and a missing one is empty
    // (every lookup answers position 0).
    let index_path = sibling(path, ".index");
    let offset_index = match OffsetIndex::open_read_only(index_path.clone(), base) {
        Ok(index) => Some(index),
        Err(StorageError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            None
        }
        Err(e) => {
            return Err(anyhow::Error::new(e)
                .context(format!("{shown}: cannot read the segment's offset index")));
        }
    };
    let absolute = java_absolute_path(path);
    let index = open_index(&absolute, base, shown, TimeIndex::open_read_only)?;
    if d.opts.index_sanity_check {
        return sanity_result(d, sanity(index.sanity_check()), shown, out, err);
    }
    let mut prev_timestamp = -1i64;
    let mut printed = 0usize;
    let mut problems = 0usize;
    for i in 0..index.entries() {
        let (timestamp, offset) = index
            .entry(i)
            .map_or((-1, base), |e| (e.timestamp, e.offset));
        if offset == base && i > 0 {
            break;
        }
        let position = offset_index
            .as_ref()
            .map_or(0, |o| o.lookup(offset).position as i32);
        match find_batch_max_timestamp(&log, position, offset) {
            Ok(Found::Batch(max_timestamp)) => {
                if max_timestamp != timestamp {
                    problems += 1;
                    push_report(
                        &mut d.reports.time_mismatches,
                        &absolute,
                        (timestamp, max_timestamp),
                    );
                    d.failed = true;
                }
                if prev_timestamp >= timestamp {
                    problems += 1;
                    push_report(
                        &mut d.reports.time_out_of_order,
                        &absolute,
                        (timestamp, prev_timestamp),
                    );
                    d.failed = true;
                }
            }
            Ok(Found::OtherOffset(log_offset)) => {
                problems += 1;
                push_report(
                    &mut d.reports.time_not_found,
                    &absolute,
                    (offset, log_offset),
                );
                d.failed = true;
            }
            Err(SegmentError::Io(e)) => {
                return Err(anyhow::Error::new(e).context(format!("{shown}: reading the log")));
            }
            Err(SegmentError::Corrupt(msg)) => {
                d.report(
                    out,
                    err,
                    shown,
                    &format!("entry {i} (timestamp {timestamp}, offset {offset}): {msg}"),
                )?;
            }
        }
        printed += 1;
        prev_timestamp = timestamp;
        if d.opts.verify_index_only || d.opts.summary {
            continue;
        }
        match d.opts.format {
            DumpFormat::Text => writeln!(out, "timestamp: {timestamp} offset: {offset}")?,
            DumpFormat::Json => {
                out.write_all(b"{\"type\":\"time_index_entry\",\"file\":")?;
                json::write_str(out, shown)?;
                writeln!(out, ",\"timestamp\":{timestamp},\"offset\":{offset}}}")?;
            }
        }
    }
    if d.opts.summary {
        let rows = [
            ("entries", printed.to_string()),
            (
                "offsets",
                range(printed, first_offset(&index), last_offset(&index, printed)),
            ),
            ("problems", problems.to_string()),
        ];
        writeln!(out, "{}", summary::table(shown, &rows))?;
    }
    Ok(())
}

fn first_offset(index: &TimeIndex) -> i64 {
    index.entry(0).map_or(index.base_offset(), |e| e.offset)
}

/// The offset of the last of the first `printed` entries.
fn last_offset(index: &TimeIndex, printed: usize) -> i64 {
    match printed.checked_sub(1) {
        None => index.base_offset(),
        Some(n) => index.entry(n).map_or(index.base_offset(), |e| e.offset),
    }
}

fn range(entries: usize, first: i64, last: i64) -> String {
    if entries == 0 {
        "-".to_string()
    } else {
        format!("{first} .. {last}")
    }
}

/// What the log holds for a time-index entry.
enum Found {
    /// The batch whose last offset is the entry's, with its largest record timestamp.
    Batch(i64),
    /// The first batch ending at or after the offset ends elsewhere (-1: no such batch).
    OtherOffset(i64),
}

/// Kafka's `batches.find(_.lastOffset >= entry.offset)` from `position`, then the largest
/// record timestamp of that batch (starting from -1, as `RecordBatch.NO_TIMESTAMP`).
fn find_batch_max_timestamp(
    log: &LogFile,
    position: i32,
    offset: i64,
) -> Result<Found, SegmentError> {
    let mut batches = match log.slice(position, i32::MAX) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Err(SegmentError::Corrupt(format!(
                "position {position} is past the end of the log"
            )));
        }
        Err(e) => return Err(SegmentError::Corrupt(e.to_string())),
    };
    while let Some(batch) = batches.next_batch()? {
        let last_offset = batch.last_offset()?;
        if last_offset < offset {
            continue;
        }
        if last_offset != offset {
            return Ok(Found::OtherOffset(last_offset));
        }
        let info = BatchInfo::parse(&batch)?;
        let mut max = -1i64;
        for_each_record(&batch, &info, |rec| {
            max = max.max(rec.timestamp);
            Ok(())
        })?;
        return Ok(Found::Batch(max));
    }
    Ok(Found::OtherOffset(-1))
}

/// Prints `<file> passed sanity check.` or reports Kafka's `CorruptIndexException` message.
fn sanity_result(
    d: &mut Dumper,
    result: Result<(), String>,
    shown: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    match result {
        Ok(()) => {
            match d.opts.format {
                DumpFormat::Text => writeln!(out, "{shown} passed sanity check.")?,
                DumpFormat::Json => {
                    out.write_all(b"{\"type\":\"sanity_check\",\"file\":")?;
                    json::write_str(out, shown)?;
                    writeln!(out, ",\"passed\":true}}")?;
                }
            }
            Ok(())
        }
        Err(msg) => {
            if d.opts.format == DumpFormat::Json {
                out.write_all(b"{\"type\":\"sanity_check\",\"file\":")?;
                json::write_str(out, shown)?;
                out.write_all(b",\"passed\":false,\"error\":")?;
                json::write_str(out, &msg)?;
                out.write_all(b"}\n")?;
            }
            d.report(out, err, shown, &msg)
        }
    }
}
