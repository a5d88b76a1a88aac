//! One module per subcommand. Each turns its parsed arguments into library calls and renders the
//! result to a writer passed in, so tests capture output without a process.

pub(crate) mod acls;
pub(crate) mod assign;
mod completions;
pub(crate) mod describe_cluster;
pub(crate) mod dump_segment;
pub(crate) mod rebuild_index;
pub(crate) mod serve;
pub(crate) mod users;
pub(crate) mod zookeeper;

use crate::cli::{Cli, Command};

/// How a command ended when it did not fail outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything checked was valid (exit 0).
    Success,
    /// A check failed: a CRC, an index, a sanity check, a partition offline or under its min
    /// ISR, a reassignment not completed (exit 1).
    CheckFailed,
}

/// Runs one parsed command line against the process's stdout.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Acls(command) => acls::run(&command, &mut out),
        Command::Assign(args) => {
            let stderr = std::io::stderr();
            let mut err = stderr.lock();
            assign::run(&args, &mut out, &mut err)
        }
        Command::Completions(args) => completions::run(args.shell, &mut out),
        Command::DescribeCluster(args) => describe_cluster::run(&args, &mut out),
        Command::DumpSegment(args) => {
            let stderr = std::io::stderr();
            let mut err = stderr.lock();
            dump_segment::run(&args, &mut out, &mut err)
        }
        Command::RebuildIndex(args) => rebuild_index::run(&args, &mut out),
        Command::Serve(args) => serve::run(&args),
        Command::Users(command) => users::run(&command, &mut std::io::stdin().lock(), &mut out),
    }
}

pub use completions::generate as generate_completions;
