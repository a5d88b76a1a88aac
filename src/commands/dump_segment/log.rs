//! The `.log` (and KRaft `.checkpoint`) dumper: `DumpLogSegments.dumpLog`. Streams the file
//! through a buffered reader (never loading it whole), prints a batch line per batch and, with
//! deep iteration, a line per record; collects non-consecutive offsets; prints the
//! `Found N invalid bytes at the end of …` trailer when the whole file was read.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::Path;

use anyhow::Context;

use super::segment::{
    Batch, BatchInfo, BatchReader, SegmentError, compressed_size, decompressed_size,
    first_timestamp, for_each_record,
};
use super::summary::LogSummary;
use super::text::{RecordLineOptions, write_batch_head, write_record_line};
use super::{
    Dumper, FileKind, java_absolute_path, json, offset_from_file_name, progress_bar, push_report,
};
use crate::cli::DumpFormat;
use crate::protocol::record::big_endian::i64_at;

/// Progress is redrawn at most every this many bytes.
const PROGRESS_STEP: u64 = 4 * 1024 * 1024;

pub(crate) fn dump_log(
    d: &mut Dumper,
    path: &Path,
    shown: &str,
    kind: FileKind,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    let text = d.opts.format == DumpFormat::Text && !d.opts.summary;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if kind == FileKind::Log {
        let start = offset_from_file_name(path, shown)?;
        if text {
            writeln!(out, "Log starting offset: {start}")?;
        }
    } else if text {
        if name == "bootstrap.checkpoint" {
            writeln!(out, "KRaft bootstrap snapshot")?;
        } else {
            let (offset, epoch) = kraft_snapshot_id(&name).with_context(|| {
                format!("{shown}: not a KRaft snapshot name (<offset>-<epoch>.checkpoint)")
            })?;
            writeln!(out, "Snapshot end offset: {offset}, epoch: {epoch}")?;
        }
    }
    let file = File::open(path).with_context(|| format!("{shown}: cannot open"))?;
    let len = file
        .metadata()
        .with_context(|| format!("{shown}: cannot stat"))?
        .len();
    // FileRecords.slice(0, maxBytes).
    let end = len.min(d.opts.max_bytes as u64);
    let bar = progress_bar(d.progress, end);
    let mut reader = BatchReader::new(BufReader::with_capacity(1 << 20, file), 0, end);
    let absolute = java_absolute_path(path);
    let mut valid_bytes = 0u64;
    let mut last_offset = -1i64;
    let mut non_consecutive: Vec<(i64, i64)> = Vec::new();
    let mut summary = LogSummary::default();
    let mut next_progress = PROGRESS_STEP;
    let mut corrupt = false;
    let record_opts = RecordLineOptions {
        skip_record_metadata: d.opts.skip_record_metadata,
        print_data_log: d.opts.print_data_log,
        offsets_decoder: d.opts.offsets_decoder,
        transaction_log_decoder: d.opts.transaction_log_decoder,
    };
    loop {
        let batch = match reader.next_batch() {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(SegmentError::Io(e)) => {
                return Err(anyhow::Error::new(e).context(format!("{shown}: read failed")));
            }
            Err(SegmentError::Corrupt(msg)) => {
                // Kafka's tool dies here (CorruptRecordException); kcli says where valid data
                // ends instead of printing the trailer, so stdout stays what Kafka printed.
                let msg = format!(
                    "{msg} in file {shown}. Valid data ends at position {valid_bytes}; {} bytes follow",
                    end - valid_bytes
                );
                d.report(out, err, shown, &msg)?;
                corrupt = true;
                break;
            }
        };
        let parsed = BatchInfo::parse(&batch);
        // What Kafka prints of the batch line before it dies on an unknown codec or magic.
        if text {
            match &parsed {
                Ok(info) if info.unknown_compression.is_some() => {
                    write_batch_head(out, info)?;
                    out.write_all(b"\n")?;
                }
                Err(_) if batch.magic < 0 => {
                    writeln!(out, "offset: {}", i64_at(batch.bytes, 0))?;
                }
                _ => {}
            }
        }
        let parsed = match parsed {
            Ok(info) => match info.unknown_compression {
                Some(id) => Err(SegmentError::Corrupt(format!(
                    "Unknown compression type id: {id} (batch at position {})",
                    info.position
                ))),
                None => Ok(info),
            },
            Err(e) => Err(e),
        };
        let info = match parsed {
            Ok(info) => info,
            Err(e) => {
                let msg = format!(
                    "{e}. Valid data ends at position {valid_bytes}; {} bytes follow",
                    end - valid_bytes
                );
                d.report(out, err, shown, &msg)?;
                corrupt = true;
                break;
            }
        };
        if !info.is_valid {
            d.failed = true;
        }
        let records = if d.opts.summary {
            summarize_batch(&mut summary, &batch, &info)
        } else {
            dump_batch(
                d,
                &batch,
                &info,
                shown,
                record_opts,
                &mut last_offset,
                &mut non_consecutive,
                out,
            )
        };
        match records {
            Ok(()) => {}
            Err(SegmentError::Io(e)) => {
                return Err(anyhow::Error::new(e).context("writing to stdout"));
            }
            Err(SegmentError::Corrupt(msg)) => {
                let msg = format!("batch at position {}: {msg}", info.position);
                d.report(out, err, shown, &msg)?;
            }
        }
        valid_bytes += info.size as u64;
        if let Some(bar) = &bar
            && valid_bytes >= next_progress
        {
            bar.set_position(valid_bytes);
            next_progress = valid_bytes + PROGRESS_STEP;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    for pair in non_consecutive {
        push_report(&mut d.reports.non_consecutive, &absolute, pair);
    }
    let trailing = end - valid_bytes;
    if trailing > 0 && d.opts.reads_whole_file() && !corrupt {
        d.failed = true;
        summary.trailing_bytes = trailing;
        if !d.opts.summary {
            match d.opts.format {
                DumpFormat::Text => {
                    writeln!(out, "Found {trailing} invalid bytes at the end of {name}")?
                }
                DumpFormat::Json => {
                    out.write_all(b"{\"type\":\"invalid_bytes\",\"file\":")?;
                    json::write_str(out, shown)?;
                    writeln!(out, ",\"position\":{valid_bytes},\"size\":{trailing}}}")?;
                }
            }
        }
    }
    if d.opts.summary {
        writeln!(out, "{}", summary.render(shown))?;
    }
    Ok(())
}

/// One batch in the text or JSON format, with its records under deep iteration.
#[allow(clippy::too_many_arguments)]
fn dump_batch(
    d: &Dumper,
    batch: &Batch<'_>,
    info: &BatchInfo,
    shown: &str,
    record_opts: RecordLineOptions,
    last_offset: &mut i64,
    non_consecutive: &mut Vec<(i64, i64)>,
    out: &mut dyn Write,
) -> Result<(), SegmentError> {
    let mut track = |offset: i64| {
        // Kafka's rule, including treating an offset of -1 as "none seen yet".
        if *last_offset != -1 && offset != last_offset.wrapping_add(1) {
            non_consecutive.push((*last_offset, offset));
        }
        *last_offset = offset;
    };
    match d.opts.format {
        DumpFormat::Text => {
            super::text::write_batch_line(out, info)?;
            if d.opts.deep_iteration {
                for_each_record(batch, info, |rec| {
                    track(rec.offset);
                    write_record_line(out, info, rec, record_opts)
                })?;
            }
            Ok(())
        }
        DumpFormat::Json => {
            json::write_batch_open(out, shown, info)?;
            let mut result = Ok(());
            if d.opts.deep_iteration {
                out.write_all(b",\"records\":[")?;
                let mut first = true;
                // Records are rendered into a buffer so a record that fails to parse leaves
                // valid JSON behind.
                let mut line = Vec::new();
                result = for_each_record(batch, info, |rec| {
                    track(rec.offset);
                    line.clear();
                    if !first {
                        line.push(b',');
                    }
                    first = false;
                    json::write_record(&mut line, info, rec, d.opts.offsets_decoder)?;
                    out.write_all(&line)?;
                    Ok(())
                });
                out.write_all(b"]")?;
                if let Err(SegmentError::Corrupt(msg)) = &result {
                    out.write_all(b",\"records_error\":")?;
                    json::write_str(out, msg)?;
                }
            }
            out.write_all(b"}\n")?;
            result
        }
    }
}

/// Adds one batch to the summary: records counted (decompressing where the header does not
/// tell), compressed and decompressed sizes.
fn summarize_batch(
    summary: &mut LogSummary,
    batch: &Batch<'_>,
    info: &BatchInfo,
) -> Result<(), SegmentError> {
    let first_ts = first_timestamp(batch, info);
    let records = match info.count {
        Some(c) => c.max(0) as u64,
        None => {
            let mut n = 0u64;
            for_each_record(batch, info, |_| {
                n += 1;
                Ok(())
            })
            .map(|()| n)
            .unwrap_or(0)
        }
    };
    let sizes = match decompressed_size(batch, info) {
        Ok(Some(u)) => Some((compressed_size(batch), u)),
        Ok(None) => None,
        Err(e) => {
            summary.add_batch(info, records, first_ts, None);
            return Err(e);
        }
    };
    summary.add_batch(info, records, first_ts, sizes);
    Ok(())
}

/// `<20-digit offset>-<10-digit epoch>.checkpoint`.
fn kraft_snapshot_id(name: &str) -> Option<(i64, i32)> {
    let stem = name.strip_suffix(".checkpoint")?;
    let (offset, epoch) = stem.split_once('-')?;
    Some((offset.parse().ok()?, epoch.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kraft_snapshot_names_parse() {
        assert_eq!(
            kraft_snapshot_id("00000000000000000100-0000000003.checkpoint"),
            Some((100, 3))
        );
        assert_eq!(kraft_snapshot_id("x.checkpoint"), None);
    }
}
