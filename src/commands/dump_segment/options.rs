//! The options of one `kcli dump-segment` run, resolved from the command line the way Kafka's
//! `DumpLogSegmentsOptions` resolves them (`--print-data-log` implies deep iteration).

use crate::cli::{DumpFormat, DumpSegmentArgs};

/// What to print and how. Invariant: `print_data_log` implies `deep_iteration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DumpOptions {
    /// Print one line (or JSON record) per record.
    pub deep_iteration: bool,
    /// Print keys and payloads (only meaningful with deep iteration).
    pub print_data_log: bool,
    /// Omit the per-record metadata in the text format.
    pub skip_record_metadata: bool,
    /// Decode keys and payloads as `__consumer_offsets` records (implies `print_data_log`).
    pub offsets_decoder: bool,
    /// Decode keys and payloads as `__transaction_state` records (implies `print_data_log`).
    pub transaction_log_decoder: bool,
    /// Bytes of each .log to read; `i32::MAX` means the whole file (and enables the trailer).
    pub max_bytes: i32,
    /// Size of the log slice read at an offset-index entry's position when verifying it.
    pub max_message_size: i32,
    /// Verify indexes without printing their entries.
    pub verify_index_only: bool,
    /// Only run the startup sanity check on indexes.
    pub index_sanity_check: bool,
    /// Text (Kafka's) or JSON Lines.
    pub format: DumpFormat,
    /// Print a summary table per file instead of the dump.
    pub summary: bool,
}

impl DumpOptions {
    /// Kafka's rule: `--print-data-log` and any decoder option turn deep iteration on; a
    /// decoder option turns data printing on.
    pub(crate) fn from_args(args: &DumpSegmentArgs) -> Self {
        let print_data_log =
            args.print_data_log || args.offsets_decoder || args.transaction_log_decoder;
        DumpOptions {
            deep_iteration: args.deep_iteration || print_data_log,
            print_data_log,
            skip_record_metadata: args.skip_record_metadata,
            offsets_decoder: args.offsets_decoder,
            transaction_log_decoder: args.transaction_log_decoder,
            max_bytes: args.max_bytes,
            max_message_size: args.max_message_size,
            verify_index_only: args.verify_index_only,
            index_sanity_check: args.index_sanity_check,
            format: args.format,
            summary: args.summary,
        }
    }

    /// Whether the whole of each .log is read, so trailing invalid bytes are reported.
    pub(crate) fn reads_whole_file(&self) -> bool {
        self.max_bytes == i32::MAX
    }
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            deep_iteration: false,
            print_data_log: false,
            skip_record_metadata: false,
            offsets_decoder: false,
            transaction_log_decoder: false,
            max_bytes: i32::MAX,
            max_message_size: 5 * 1024 * 1024,
            verify_index_only: false,
            index_sanity_check: false,
            format: DumpFormat::Text,
            summary: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(args: &[&str]) -> DumpOptions {
        let mut argv = vec!["kcli", "dump-segment"];
        argv.extend_from_slice(args);
        argv.push("0.log");
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::DumpSegment(a) => DumpOptions::from_args(&a),
            other => unreachable!("parsed {other:?}"),
        }
    }

    #[test]
    fn print_data_log_implies_deep_iteration() {
        let o = parse(&["--print-data-log"]);
        assert!(o.deep_iteration && o.print_data_log);
        assert!(!parse(&[]).deep_iteration);
    }

    #[test]
    fn defaults_are_kafkas() {
        let o = parse(&[]);
        assert_eq!(o, DumpOptions::default());
        assert!(o.reads_whole_file());
        assert!(!parse(&["--max-bytes", "100"]).reads_whole_file());
    }
}
