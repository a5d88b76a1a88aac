//! The `kcli` binary: parses arguments, initialises logging, runs one command and maps its
//! outcome to an exit code (0 ok, 1 a check failed, 2 an error). A closed stdout (`kcli … | head`)
//! is a normal way for output to end, so a broken pipe exits 0 without a message.

use std::process::ExitCode;

use clap::Parser;
use kcli::cli::Cli;
use kcli::commands::{self, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    match commands::run(cli) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::CheckFailed) => ExitCode::from(1),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("kcli: {}", one_line(&err));
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr; `RUST_LOG` selects what is shown (default: info for kcli, warn otherwise).
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,kcli=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, the way a user reads them: outermost first.
fn one_line(err: &anyhow::Error) -> String {
    let mut line = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !line.contains(&cause) {
            line.push_str(": ");
            line.push_str(&cause);
        }
    }
    line
}
