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
