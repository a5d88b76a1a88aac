//! How `kcli rebuild-index` shows its results: in text, one line per problem as each segment
//! finishes and a summary table at the end (comfy-table), and with `--verify` a line counting
//! what was checked and found; in JSON, one object per segment per line, and with `--verify`
//! the same counts as a last object. Progress goes to stderr, only on a terminal and only for more than 64 MiB of logs.

use std::io::{IsTerminal, Write};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use super::verify::BadEntry;
use super::{CorruptTail, FileStatus, IndexReport, SegmentReport};

/// Logs smaller than this finish before a bar is worth drawing.
const PROGRESS_THRESHOLD: u64 = 64 * 1024 * 1024;

/// A byte-count progress bar on stderr, or nothing.
#[derive(Debug)]
pub(super) struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for `total` bytes when stderr is a terminal and `total` is over 64 MiB.
    pub(super) fn new(total: u64) -> Self {
        let bar = (total > PROGRESS_THRESHOLD && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            ) {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar }
    }

    pub(super) fn inc(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    /// Runs `f` with the bar hidden, so that output to a terminal does not tear it.
    pub(super) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Writes segment reports as they come and the summary at the end.
#[derive(Debug)]
pub(super) struct Reporter {
    json: bool,
    /// `--verify`: the run ends with the counts of what was checked.
    verify: bool,
    rows: Vec<SegmentReport>,
    counts: VerifyCounts,
}

/// What a `--verify` run checked and found: every segment has two indexes (a missing one is
/// checked, and a problem); a problem is one problem line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct VerifyCounts {
    segments: usize,
    problems: usize,
}

impl VerifyCounts {
    /// `checked 3 segments and 6 indexes: no problems found`.
    fn line(self) -> String {
        let plural = |n: usize, word: &str, words: &str| {
            format!("{n} {}", if n == 1 { word } else { words })
        };
        let found = match self.problems {
            0 => "no problems found".to_string(),
            n => format!("{} found", plural(n, "problem", "problems")),
        };
        format!(
            "checked {} and {}: {found}",
            plural(self.segments, "segment", "segments"),
            plural(self.segments * 2, "index", "indexes"),
        )
    }

    /// `{"summary":{"segments":3,"indexes":6,"problems":0},"ok":true}`.
    fn json(self) -> Value {
        json!({
            "summary": {
                "segments": self.segments,
                "indexes": self.segments * 2,
                "problems": self.problems,
            },
            "ok": self.problems == 0,
        })
    }
}

impl Reporter {
    pub(super) fn new(json: bool, verify: bool) -> Self {
        Reporter {
            json,
            verify,
            rows: Vec::new(),
            counts: VerifyCounts::default(),
        }
    }

    /// Text: the segment's problems, one line each (the row waits for the table). JSON: the
    /// segment's object.
    pub(super) fn segment(
        &mut self,
        out: &mut dyn Write,
        report: &SegmentReport,
    ) -> std::io::Result<()> {
        let problems = problem_lines(report);
        self.counts.segments += 1;
        self.counts.problems += problems.len();
        if self.json {
            let line = serde_json::to_string(&segment_json(report))?;
            return writeln!(out, "{line}");
        }
        for line in problems {
            writeln!(out, "{line}")?;
        }
        self.rows.push(report.clone());
        Ok(())
    }

    /// Text: the summary table, and with `--verify` the counts on one line after it. JSON:
    /// with `--verify`, the counts as a last object.
    pub(super) fn finish(self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.json {
            if self.verify {
                writeln!(out, "{}", serde_json::to_string(&self.counts.json())?)?;
            }
            return Ok(());
        }
        writeln!(out, "{}", summary_table(&self.rows))?;
        if self.verify {
            writeln!(out, "{}", self.counts.line())?;
        }
        Ok(())
    }
}

/// One line per problem: `<file>: entry N (values): detail`, `<log>: valid data ends at …`.
pub(super) fn problem_lines(report: &SegmentReport) -> Vec<String> {
    let mut lines = Vec::new();
    let log = report.segment.log.display().to_string();
    let index_file = |suffix: &str| {
        log.strip_suffix(".log")
            .map_or_else(|| log.clone(), |stem| format!("{stem}{suffix}"))
    };
    for (file, index) in [
        (index_file(".index"), &report.index),
        (index_file(".timeindex"), &report.time_index),
    ] {
        match &index.status {
            FileStatus::Missing => lines.push(format!("{file}: missing")),
            FileStatus::Invalid(bad) => {
                lines.push(format!("{file}: {}: {}", bad.describe(), bad.detail));
            }
            FileStatus::DiffersFromRebuild(bad) => {
                lines.push(format!("{file}: {}: {}", bad.describe(), bad.detail));
            }
            FileStatus::Valid
            | FileStatus::UpToDate
            | FileStatus::Rebuilt
            | FileStatus::WouldRebuild => {}
        }
    }
    if let Some(tail) = &report.corrupt_tail {
        let action = if tail.truncated {
            "cut"
        } else {
            "left in place; --truncate-corrupt cuts them"
        };
        lines.push(format!(
            "{log}: valid data ends at position {} (next offset {}): {}; {} bytes after it {action}",
            tail.position, tail.next_offset, tail.reason, tail.bytes
        ));
    }
    lines
}

/// A short status for the table.
fn status(report: &SegmentReport) -> String {
    let mut parts: Vec<String> = Vec::new();
    let statuses = [
        (".index", &report.index.status),
        (".timeindex", &report.time_index.status),
    ];
    let all = |wanted: fn(&FileStatus) -> bool| statuses.iter().all(|(_, s)| wanted(s));
    if all(|s| matches!(s, FileStatus::Valid)) {
        parts.push("valid".into());
    } else if all(|s| matches!(s, FileStatus::UpToDate)) {
        parts.push("up to date".into());
    } else {
        for (suffix, status) in statuses {
            let part = match status {
                FileStatus::Valid => format!("{suffix} valid"),
                FileStatus::UpToDate => format!("{suffix} up to date"),
                FileStatus::Rebuilt => format!("{suffix} rebuilt"),
                FileStatus::WouldRebuild => format!("{suffix} would be rebuilt"),
                FileStatus::Missing => format!("{suffix} missing"),
                FileStatus::Invalid(bad) => format!("{suffix} bad at entry {}", bad.entry),
                FileStatus::DiffersFromRebuild(bad) => {
                    format!("{suffix} differs at entry {}", bad.entry)
                }
            };
            parts.push(part);
        }
    }
    if let Some(tail) = &report.corrupt_tail {
        let verb = if tail.truncated { "cut" } else { "corrupt" };
        parts.push(format!("tail {verb} at {}", tail.position));
    }
    parts.join(", ")
}

/// Per segment: batches, bytes, index entries, time-index entries, status.
pub(super) fn summary_table(rows: &[SegmentReport]) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(vec![
        "segment",
        "batches",
        "bytes",
        "index entries",
        "time-index entries",
        "status",
    ]);
    for row in rows {
        table.add_row(vec![
            row.segment.display.clone(),
            row.batches.to_string(),
            row.bytes.to_string(),
            row.index.entries.to_string(),
            row.time_index.entries.to_string(),
            status(row),
        ]);
    }
    for column in 1..=4 {
        if let Some(column) = table.column_mut(column) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The JSON object of one segment (schema in docs/rebuild-index.md).
pub(super) fn segment_json(report: &SegmentReport) -> Value {
    json!({
        "segment": report.segment.log.display().to_string(),
        "base_offset": report.segment.base_offset,
        "batches": report.batches,
        "bytes": report.bytes,
        "index": index_json(&report.index),
        "time_index": index_json(&report.time_index),
        "corrupt_tail": report.corrupt_tail.as_ref().map(tail_json),
        "ok": !report.failed(),
    })
}

fn index_json(index: &IndexReport) -> Value {
    let (status, bad) = match &index.status {
        FileStatus::Valid => ("valid", None),
        FileStatus::UpToDate => ("up_to_date", None),
        FileStatus::Rebuilt => ("rebuilt", None),
        FileStatus::WouldRebuild => ("would_rebuild", None),
        FileStatus::Missing => ("missing", None),
        FileStatus::Invalid(bad) => ("invalid", Some(bad)),
        FileStatus::DiffersFromRebuild(bad) => ("differs_from_rebuild", Some(bad)),
    };
    json!({
        "entries": index.entries,
        "status": status,
        "first_bad_entry": bad.map(bad_json),
    })
}

fn bad_json(bad: &BadEntry) -> Value {
    let mut object = serde_json::Map::new();
    object.insert("entry".into(), json!(bad.entry));
    for (name, value) in &bad.values {
        object.insert(name.replace(' ', "_"), json!(value));
    }
    object.insert("detail".into(), json!(bad.detail));
    Value::Object(object)
}

fn tail_json(tail: &CorruptTail) -> Value {
    json!({
        "position": tail.position,
        "next_offset": tail.next_offset,
        "bytes": tail.bytes,
        "reason": tail.reason,
        "truncated": tail.truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::rebuild_index::targets::Segment;
    use std::path::PathBuf;

    fn report(index: FileStatus, time: FileStatus, tail: Option<CorruptTail>) -> SegmentReport {
        SegmentReport {
            segment: Segment {
                log: PathBuf::from("/d/t-0/00000000000000000000.log"),
                base_offset: 0,
                display: "t-0/00000000000000000000.log".into(),
            },
            bytes: 5000,
            batches: 7,
            index: IndexReport {
                entries: 1,
                status: index,
            },
            time_index: IndexReport {
                entries: 1,
                status: time,
            },
            corrupt_tail: tail,
        }
    }

    fn bad() -> BadEntry {
        BadEntry {
            entry: 2,
            values: vec![("offset", 57), ("position", 4104)],
            detail: "position 4104 is not the start of a batch".into(),
        }
    }

    fn tail(truncated: bool) -> CorruptTail {
        CorruptTail {
            position: 4000,
            next_offset: 30,
            bytes: 1000,
            reason: "record batch at position 4000 fails its CRC check".into(),
            truncated,
        }
    }

    #[test]
    fn problems_are_one_line_each_naming_the_file() {
        let r = report(
            FileStatus::Invalid(bad()),
            FileStatus::Missing,
            Some(tail(false)),
        );
        assert_eq!(
            problem_lines(&r),
            vec![
                "/d/t-0/00000000000000000000.index: entry 2 (offset 57, position 4104): \
                 position 4104 is not the start of a batch"
                    .to_string(),
                "/d/t-0/00000000000000000000.timeindex: missing".to_string(),
                "/d/t-0/00000000000000000000.log: valid data ends at position 4000 (next offset \
                 30): record batch at position 4000 fails its CRC check; 1000 bytes after it \
                 left in place; --truncate-corrupt cuts them"
                    .to_string(),
            ]
        );
        assert!(r.failed());
        let fine = report(FileStatus::Rebuilt, FileStatus::UpToDate, Some(tail(true)));
        assert_eq!(problem_lines(&fine).len(), 1);
        assert!(!fine.failed());
    }

    #[test]
    fn the_status_column_is_short() {
        let r = report(FileStatus::Valid, FileStatus::Valid, None);
        assert_eq!(status(&r), "valid");
        let r = report(FileStatus::UpToDate, FileStatus::Rebuilt, Some(tail(true)));
        assert_eq!(
            status(&r),
            ".index up to date, .timeindex rebuilt, tail cut at 4000"
        );
        let table = summary_table(&[r]).to_string();
        assert!(table.contains("t-0/00000000000000000000.log"), "{table}");
        assert!(table.contains("time-index entries"), "{table}");
    }

    #[test]
    fn verify_ends_with_what_was_checked_and_found() {
        let mut reporter = Reporter::new(false, true);
        let mut out = Vec::new();
        reporter
            .segment(
                &mut out,
                &report(FileStatus::Valid, FileStatus::Valid, None),
            )
            .unwrap();
        let mut problems = Vec::new();
        reporter
            .segment(
                &mut problems,
                &report(
                    FileStatus::Invalid(bad()),
                    FileStatus::Missing,
                    Some(tail(false)),
                ),
            )
            .unwrap();
        assert_eq!(String::from_utf8(problems).unwrap().lines().count(), 3);
        reporter.finish(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            out.lines().last(),
            Some("checked 2 segments and 4 indexes: 3 problems found"),
            "{out}"
        );

        let one = VerifyCounts {
            segments: 1,
            problems: 0,
        };
        assert_eq!(
            one.line(),
            "checked 1 segment and 2 indexes: no problems found"
        );
        let one_problem = VerifyCounts {
            segments: 1,
            problems: 1,
        };
        assert_eq!(
            one_problem.line(),
            "checked 1 segment and 2 indexes: 1 problem found"
        );
        assert_eq!(
            one_problem.json(),
            json!({"summary": {"segments": 1, "indexes": 2, "problems": 1}, "ok": false})
        );

        let mut json_out = Vec::new();
        let mut json_reporter = Reporter::new(true, true);
        json_reporter
            .segment(
                &mut json_out,
                &report(FileStatus::Valid, FileStatus::Valid, None),
            )
            .unwrap();
        json_reporter.finish(&mut json_out).unwrap();
        let json_out = String::from_utf8(json_out).unwrap();
        let last: Value = serde_json::from_str(json_out.lines().last().unwrap()).unwrap();
        assert_eq!(last, one.json());

        // A rebuild or a dry run prints its table alone.
        let mut out = Vec::new();
        Reporter::new(false, false).finish(&mut out).unwrap();
        assert!(!String::from_utf8(out).unwrap().contains("checked"));
    }

    #[test]
    fn json_names_the_first_bad_entry_with_its_values() {
        let r = report(
            FileStatus::DiffersFromRebuild(bad()),
            FileStatus::Valid,
            None,
        );
        let v = segment_json(&r);
        assert_eq!(v["ok"], false);
        assert_eq!(v["index"]["status"], "differs_from_rebuild");
        assert_eq!(v["index"]["first_bad_entry"]["entry"], 2);
        assert_eq!(v["index"]["first_bad_entry"]["position"], 4104);
        assert_eq!(v["time_index"]["status"], "valid");
        assert!(v["time_index"]["first_bad_entry"].is_null());
        assert!(v["corrupt_tail"].is_null());
    }
}
