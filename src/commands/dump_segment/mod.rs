//! `kcli dump-segment FILE...`: Kafka 3.9's `DumpLogSegments` (kafka-dump-log.sh) for `.log`,
//! `.index`, `.timeindex`, `.snapshot` and `.txnindex` files, its text line for line, plus JSON
//! Lines and summary tables.
//!
//! - [`options`]: the resolved options.
//! - [`segment`]: Kafka's view of a `.log`: batch iteration rules and batch fields;
//!   [`records`]: the records of a batch.
//! - [`text`], [`json`], [`summary`]: the three output formats.
//! - [`walk`]: a directory argument (a partition directory or a log dir) as the files under it.
//! - [`log`]: the `.log` dumper; [`index_dump`]: `.index` and `.timeindex`, read through the
//!   storage engine's read-only `OffsetIndex`/`TimeIndex` (Kafka's tool opens Kafka's own);
//!   [`producer_state`]: `.snapshot` and `.txnindex`.
//!
//! Stdout gets the dump; stderr gets what Kafka prints there (unknown files, corrupt snapshots,
//! and after all files the index mismatches, time-index errors and non-consecutive offsets), plus
//! kcli's own one-line reports where Kafka's tool would die with a stack trace. Exit status:
//! 0 all valid, 1 a CRC, index, sanity or structure check failed, 2 an error (missing or
//! unreadable file, a name that is not a segment's).

pub(crate) mod index_dump;
pub(crate) mod json;
pub(crate) mod log;
pub(crate) mod offsets_decoder;
pub(crate) mod options;
pub(crate) mod producer_state;
pub(crate) mod records;
pub(crate) mod segment;
pub(crate) mod summary;
pub(crate) mod text;
pub(crate) mod transaction_log_decoder;
mod walk;

use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;

use anyhow::Context;

use super::Outcome;
use crate::cli::{DumpFormat, DumpSegmentArgs};
pub(crate) use options::DumpOptions;

/// Files over this size get a progress bar when stderr is a terminal.
const PROGRESS_THRESHOLD: u64 = 64 * 1024 * 1024;

/// Runs `kcli dump-segment` with its output on `out` and its reports on `err`.
pub(crate) fn run(
    args: &DumpSegmentArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let opts = DumpOptions::from_args(args);
    if opts.transaction_log_decoder && (opts.format == DumpFormat::Json || opts.summary) {
        anyhow::bail!(
            "--transaction-log-decoder prints Kafka's text lines only: drop --format json and --summary"
        );
    }
    let files = walk::expand(&args.files)?;
    let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    // A bar on a terminal that also shows the dump would tear its lines; a summary prints only
    // at the end of each file, so the bar may share the terminal then.
    let progress =
        std::io::stderr().is_terminal() && (opts.summary || !std::io::stdout().is_terminal());
    dump_files(&paths, &opts, out, err, progress)
}

/// Dumps `files` in order. `progress` allows a progress bar on stderr for large files.
pub(crate) fn dump_files(
    files: &[&Path],
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> anyhow::Result<Outcome> {
    // Stdout may be line-buffered (a terminal, or Rust's StdoutLock): buffer whole blocks.
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut dumper = Dumper {
        opts: *opts,
        reports: Reports::default(),
        failed: false,
        progress,
    };
    let mut result = Ok(());
    for path in files {
        result = dumper.dump_file(path, &mut out, err);
        if result.is_err() {
            break;
        }
    }
    out.flush().context("writing to stdout")?;
    dumper.reports.print(err).context("writing to stderr")?;
    result?;
    Ok(if dumper.failed {
        Outcome::CheckFailed
    } else {
        Outcome::Success
    })
}

/// What a file's name says it is (Kafka matches the text after the last `.`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Log,
    /// A KRaft snapshot (`.checkpoint`), dumped like a log.
    KraftSnapshot,
    OffsetIndex,
    TimeIndex,
    ProducerSnapshot,
    TxnIndex,
    Unknown,
}

impl FileKind {
    pub(crate) fn of(file_name: &str) -> Self {
        match file_name.rfind('.').map(|i| &file_name[i..]) {
            Some(".log") => FileKind::Log,
            Some(".checkpoint") => FileKind::KraftSnapshot,
            Some(".index") => FileKind::OffsetIndex,
            Some(".timeindex") => FileKind::TimeIndex,
            Some(".snapshot") => FileKind::ProducerSnapshot,
            Some(".txnindex") => FileKind::TxnIndex,
            _ => FileKind::Unknown,
        }
    }
}

/// The state of one run: options, the stderr reports Kafka prints after all files, and whether
/// any check failed.
#[derive(Debug)]
pub(crate) struct Dumper {
    pub opts: DumpOptions,
    pub reports: Reports,
    pub failed: bool,
    pub progress: bool,
}

impl Dumper {
    fn dump_file(
        &mut self,
        path: &Path,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> anyhow::Result<()> {
        let shown = java_path(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = FileKind::of(&name);
        if self.opts.format == DumpFormat::Text && !self.opts.summary {
            writeln!(out, "Dumping {shown}").context("writing to stdout")?;
        }
        match kind {
            FileKind::Log | FileKind::KraftSnapshot => {
                log::dump_log(self, path, &shown, kind, out, err)
            }
            FileKind::OffsetIndex => index_dump::dump_offset_index(self, path, &shown, out, err),
            FileKind::TimeIndex => index_dump::dump_time_index(self, path, &shown, out, err),
            FileKind::ProducerSnapshot => self.dump_producer_snapshot(path, &shown, out, err),
            FileKind::TxnIndex => self.dump_txn_index(path, &shown, out),
            FileKind::Unknown => {
                out.flush().context("writing to stdout")?;
                writeln!(err, "Ignoring unknown file {shown}").context("writing to stderr")?;
                Ok(())
            }
        }
    }

    /// Reports a problem on stderr as one line naming the file (after flushing stdout so the
    /// line lands next to the output it concerns) and marks the run as failed.
    pub(crate) fn report(
        &mut self,
        out: &mut dyn Write,
        err: &mut dyn Write,
        shown: &str,
        msg: &str,
    ) -> anyhow::Result<()> {
        self.failed = true;
        out.flush().context("writing to stdout")?;
        writeln!(err, "kcli: {shown}: {msg}").context("writing to stderr")?;
        Ok(())
    }

    fn dump_producer_snapshot(
        &mut self,
        path: &Path,
        shown: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> anyhow::Result<()> {
        let buf = read_small_file(path, shown)?;
        match producer_state::read_snapshot(&buf) {
            Ok(entries) => {
                if self.opts.summary {
                    let rows = [("producers", entries.len().to_string())];
                    writeln!(out, "{}", summary::table(shown, &rows))?;
                    return Ok(());
                }
                for e in entries {
                    match self.opts.format {
                        DumpFormat::Text => writeln!(out, "{}", producer_state::snapshot_line(&e))?,
                        DumpFormat::Json => {
                            out.write_all(b"{\"type\":\"producer_snapshot_entry\",\"file\":")?;
                            json::write_str(out, shown)?;
                            writeln!(
                                out,
                                ",\"producer_id\":{},\"producer_epoch\":{},\"coordinator_epoch\":{},\"current_txn_first_offset\":{},\"last_timestamp\":{},\"first_sequence\":{},\"last_sequence\":{},\"last_offset\":{},\"offset_delta\":{}}}",
                                e.producer_id,
                                e.producer_epoch,
                                e.coordinator_epoch,
                                e.current_txn_first_offset,
                                e.timestamp,
                                e.first_sequence(),
                                e.last_sequence,
                                e.last_offset,
                                e.offset_delta
                            )?;
                        }
                    }
                }
                Ok(())
            }
            Err(msg) => {
                // Kafka prints the CorruptSnapshotException's message alone and goes on.
                self.failed = true;
                out.flush().context("writing to stdout")?;
                writeln!(err, "{msg}").context("writing to stderr")?;
                Ok(())
            }
        }
    }

    fn dump_txn_index(
        &mut self,
        path: &Path,
        shown: &str,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        offset_from_file_name(path, shown)?;
        let buf = read_small_file(path, shown)?;
        let (txns, bad_version) = producer_state::read_txn_index(&buf);
        if self.opts.summary {
            let rows = [("aborted transactions", txns.len().to_string())];
            writeln!(out, "{}", summary::table(shown, &rows))?;
        } else {
            for t in &txns {
                match self.opts.format {
                    DumpFormat::Text => writeln!(out, "{}", t.kafka_line())?,
                    DumpFormat::Json => {
                        out.write_all(b"{\"type\":\"aborted_txn\",\"file\":")?;
                        json::write_str(out, shown)?;
                        writeln!(
                            out,
                            ",\"version\":{},\"producer_id\":{},\"first_offset\":{},\"last_offset\":{},\"last_stable_offset\":{}}}",
                            t.version,
                            t.producer_id,
                            t.first_offset,
                            t.last_offset,
                            t.last_stable_offset
                        )?;
                    }
                }
            }
        }
        if let Some(v) = bad_version {
            anyhow::bail!(
                "{shown}: Unexpected aborted transaction version {v} in transaction index {}, current version is 0",
                java_absolute_path(path)
            );
        }
        Ok(())
    }
}

/// Reads a whole small file (snapshot, transaction index, index), naming it in the error.
pub(crate) fn read_small_file(path: &Path, shown: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{shown}: cannot read"))
}

/// `file.getName.split("\\.")(0).toLong`: the base offset in a segment file's name.
pub(crate) fn offset_from_file_name(path: &Path, shown: &str) -> anyhow::Result<i64> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or("");
    stem.parse::<i64>().with_context(|| {
        format!("{shown}: not a segment file: the name does not start with an offset")
    })
}

/// Java's `new File(path).toString()`: the path with repeated and trailing separators removed.
pub(crate) fn java_path(path: &Path) -> String {
    let s = path.to_string_lossy();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '/' && out.ends_with('/') {
            continue;
        }
        out.push(c);
    }
    if out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

/// Java's `File.getAbsolutePath`: relative paths are resolved against the working directory
/// without normalising `.` or `..`.
pub(crate) fn java_absolute_path(path: &Path) -> String {
    let shown = java_path(path);
    if shown.starts_with('/') {
        return shown;
    }
    match std::env::current_dir() {
        Ok(cwd) => {
            let cwd = java_path(&cwd);
            if cwd == "/" {
                format!("/{shown}")
            } else {
                format!("{cwd}/{shown}")
            }
        }
        Err(_) => shown,
    }
}

/// A progress bar on stderr for a file of `len` bytes, when allowed and the file is large.
pub(crate) fn progress_bar(enabled: bool, len: u64) -> Option<indicatif::ProgressBar> {
    if !enabled || len <= PROGRESS_THRESHOLD {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    Some(bar)
}

/// The reports Kafka prints on stderr after all files, keyed by absolute path in the order the
/// files were dumped. Kafka prepends index mismatches and non-consecutive pairs to a list, so
/// those print newest first; time-index errors print in order.
#[derive(Debug, Default)]
pub(crate) struct Reports {
    pub index_mismatches: Vec<(String, Vec<(i64, i64)>)>,
    pub time_mismatches: Vec<(String, Vec<(i64, i64)>)>,
    pub time_out_of_order: Vec<(String, Vec<(i64, i64)>)>,
    pub time_not_found: Vec<(String, Vec<(i64, i64)>)>,
    pub non_consecutive: Vec<(String, Vec<(i64, i64)>)>,
}

/// Appends `pair` to the list of `file` in `map`.
pub(crate) fn push_report(map: &mut Vec<(String, Vec<(i64, i64)>)>, file: &str, pair: (i64, i64)) {
    match map.iter_mut().find(|(f, _)| f == file) {
        Some((_, list)) => list.push(pair),
        None => map.push((file.to_string(), vec![pair])),
    }
}

impl Reports {
    /// Kafka's order: index mismatches, time-index errors, non-consecutive offsets.
    pub(crate) fn print(&self, err: &mut dyn Write) -> std::io::Result<()> {
        for (file, list) in &self.index_mismatches {
            writeln!(err, "Mismatches in :{file}")?;
            for (index, log) in list.iter().rev() {
                writeln!(err, "  Index offset: {index}, log offset: {log}")?;
            }
        }
        for (file, list) in &self.time_mismatches {
            writeln!(err, "Found timestamp mismatch in :{file}")?;
            for (index, log) in list {
                writeln!(err, "  Index timestamp: {index}, log timestamp: {log}")?;
            }
        }
        for (file, list) in &self.time_out_of_order {
            writeln!(err, "Found out of order timestamp in :{file}")?;
            for (index, prev) in list {
                writeln!(
                    err,
                    "  Index timestamp: {index}, Previously indexed timestamp: {prev}"
                )?;
            }
        }
        for (_, list) in &self.time_not_found {
            writeln!(
                err,
                "The following indexed offsets are not found in the log."
            )?;
            for (index, log) in list {
                writeln!(err, "Indexed offset: {index}, found log offset: {log}")?;
            }
        }
        for (file, list) in &self.non_consecutive {
            writeln!(err, "Non-consecutive offsets in {file}")?;
            for (a, b) in list.iter().rev() {
                writeln!(err, "  {a} is followed by {b}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::builder::{
        RecordBatchBuilder, SimpleRecord, build_legacy_message_set,
    };
    use crate::protocol::record::compression::CompressionType;
    use proptest::prelude::*;

    const CODECS: [CompressionType; 5] = [
        CompressionType::None,
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ];

    /// A segment of a few batches of every kind, its index entries every other batch.
    fn segment(codecs: &[usize]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let (mut log, mut index, mut time) = (Vec::new(), Vec::new(), Vec::new());
        let mut offset = 0i64;
        for (i, &c) in codecs.iter().enumerate() {
            let records: Vec<SimpleRecord> = (0..=i % 3)
                .map(|j| {
                    let mut r = SimpleRecord::new(
                        1000 + j as i64,
                        Some(vec![j as u8; j]),
                        Some(vec![7; 20]),
                    );
                    r.headers.push(("h".into(), None));
                    r
                })
                .collect();
            let bytes = if i % 4 == 3 {
                let codec = CODECS[c % 4];
                build_legacy_message_set((i % 2) as i8, codec, offset, &records).unwrap_or_default()
            } else {
                let mut b = RecordBatchBuilder::new(CODECS[c % 5]);
                b.base_offset = offset;
                b.records = records.clone();
                b.build().unwrap_or_default()
            };
            offset += records.len() as i64;
            if i % 2 == 1 {
                index.extend_from_slice(&((offset - 1) as i32).to_be_bytes());
                index.extend_from_slice(&(log.len() as i32).to_be_bytes());
                time.extend_from_slice(&(1000 + i as i64).to_be_bytes());
                time.extend_from_slice(&((offset - 1) as i32).to_be_bytes());
            }
            log.extend(bytes);
        }
        (log, index, time)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever the bytes, dumping never panics: every mode, every file kind, after random
        /// byte flips and truncation of valid files.
        #[test]
        fn corrupt_files_never_panic(
            codecs in proptest::collection::vec(0usize..5, 1..8),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..6),
            cut in any::<prop::sample::Index>(),
            which in 0usize..3,
        ) {
            let (mut log, mut index, mut time) = segment(&codecs);
            let target = match which { 0 => &mut log, 1 => &mut index, _ => &mut time };
            if !target.is_empty() {
                for (at, x) in &flips {
                    let i = at.index(target.len());
                    target[i] ^= x;
                }
                if flips.len() % 2 == 1 {
                    let n = cut.index(target.len() + 1);
                    target.truncate(n);
                }
            }
            let dir = tempfile::tempdir().unwrap();
            let name = |s: &str| dir.path().join(format!("00000000000000000000.{s}"));
            std::fs::write(name("log"), &log).unwrap();
            std::fs::write(name("index"), &index).unwrap();
            std::fs::write(name("timeindex"), &time).unwrap();
            std::fs::write(name("snapshot"), &log).unwrap();
            std::fs::write(name("txnindex"), &log).unwrap();
            let paths = [name("log"), name("index"), name("timeindex"), name("snapshot"), name("txnindex")];
            let paths: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
            for opts in [
                DumpOptions { deep_iteration: true, print_data_log: true, ..DumpOptions::default() },
                DumpOptions { deep_iteration: true, format: DumpFormat::Json, ..DumpOptions::default() },
                DumpOptions { summary: true, ..DumpOptions::default() },
                DumpOptions { index_sanity_check: true, verify_index_only: true, ..DumpOptions::default() },
            ] {
                let (mut out, mut err) = (Vec::new(), Vec::new());
                let _ = dump_files(&paths, &opts, &mut out, &mut err, false);
            }
        }
    }

    #[test]
    fn kinds_follow_the_last_suffix() {
        assert_eq!(FileKind::of("00000000000000000000.log"), FileKind::Log);
        assert_eq!(FileKind::of("0.index"), FileKind::OffsetIndex);
        assert_eq!(FileKind::of("0.timeindex"), FileKind::TimeIndex);
        assert_eq!(FileKind::of("0.snapshot"), FileKind::ProducerSnapshot);
        assert_eq!(FileKind::of("0.txnindex"), FileKind::TxnIndex);
        assert_eq!(FileKind::of("0.log.deleted"), FileKind::Unknown);
        assert_eq!(FileKind::of("leader-epoch-checkpoint"), FileKind::Unknown);
    }

    #[test]
    fn paths_print_like_java_files() {
        assert_eq!(java_path(Path::new("a//b/")), "a/b");
        assert_eq!(java_path(Path::new("/")), "/");
        assert_eq!(java_absolute_path(Path::new("/x/y.log")), "/x/y.log");
        assert!(java_absolute_path(Path::new("y.log")).ends_with("/y.log"));
    }

    #[test]
    fn reports_print_in_kafkas_order_and_direction() {
        let mut r = Reports::default();
        push_report(&mut r.non_consecutive, "/a.log", (1, 5));
        push_report(&mut r.non_consecutive, "/a.log", (5, 9));
        push_report(&mut r.index_mismatches, "/a.index", (3, 4));
        let mut err = Vec::new();
        r.print(&mut err).unwrap();
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "Mismatches in :/a.index\n  Index offset: 3, log offset: 4\nNon-consecutive offsets in /a.log\n  5 is followed by 9\n  1 is followed by 5\n"
        );
    }
}
