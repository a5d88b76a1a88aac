//! The command line, as clap types only: no behaviour lives here. Every flag carries a doc
//! comment, which is its `--help` text. A command appears here only once it works.

use clap::{Parser, Subcommand, ValueEnum};

/// A Kafka-compatible broker and an admin/inspection toolkit for Kafka's on-disk and ZooKeeper
/// formats.
#[derive(Debug, Parser)]
#[command(name = "kcli", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print shell completions for kcli to stdout.
    Completions(CompletionsArgs),
    /// Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka's
    /// `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table.
    DumpSegment(DumpSegmentArgs),
}

/// `kcli dump-segment`: Kafka 3.9's DumpLogSegments options under the same names, plus an output
/// format and a summary. The file kind is taken from the suffix: `.log`, `.index`, `.timeindex`,
/// `.snapshot`, `.txnindex` (and KRaft `.checkpoint`); anything else is ignored with a message.
#[derive(Debug, clap::Args)]
pub struct DumpSegmentArgs {
    /// The files to dump: segments, indexes, producer snapshots, transaction indexes.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// Also print one line per record under its batch line.
    #[arg(long)]
    pub deep_iteration: bool,
    /// Print record keys and payloads as UTF-8 text; implies --deep-iteration.
    #[arg(long)]
    pub print_data_log: bool,
    /// Omit per-record metadata (offset, timestamp, sizes), keeping keys and payloads.
    #[arg(long)]
    pub skip_record_metadata: bool,
    /// Read at most this many bytes of each .log file (Kafka's default: 2147483647, no limit).
    #[arg(long, value_name = "SIZE", default_value_t = i32::MAX, value_parser = clap::value_parser!(i32).range(0..))]
    pub max_bytes: i32,
    /// The largest batch expected when verifying an offset index against its log (bytes).
    #[arg(long, value_name = "SIZE", default_value_t = 5 * 1024 * 1024, value_parser = clap::value_parser!(i32).range(0..))]
    pub max_message_size: i32,
    /// For .index and .timeindex files: check every entry against the log without printing the
    /// entries.
    #[arg(long)]
    pub verify_index_only: bool,
    /// For .index and .timeindex files: run only the sanity check the broker runs at startup to
    /// decide whether an index must be rebuilt.
    #[arg(long)]
    pub index_sanity_check: bool,
    /// Output format: Kafka's text, or JSON Lines (docs/dump-segment-json.md).
    #[arg(long, value_enum, default_value_t = DumpFormat::Text)]
    pub format: DumpFormat,
    /// Print one summary table per file (batches, records, bytes, offset and timestamp ranges,
    /// codecs, compression ratio, invalid batches) instead of the batch lines.
    #[arg(long)]
    pub summary: bool,
}

/// Output formats of `kcli dump-segment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DumpFormat {
    /// Kafka's `kafka-dump-log.sh` text, line for line.
    Text,
    /// JSON Lines: one object per batch or index entry.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Shells with committed completion files under `completions/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
