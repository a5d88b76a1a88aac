//! The `kcli` binary: parses arguments, initialises logging, runs one command and maps its
//! outcome to an exit code (0 ok, 1 a check failed, 2 an error). A closed stdout (`kcli … | head`)
//! is a normal way for output to end, so a broken pipe exits 0 without a message. With
//! `--log-format json` the error that ends a command is a JSON log line like the others.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use kcli::cli::{Cli, LogFormat};
use kcli::commands::{self, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let log_format = cli.log_format;
    init_tracing(log_format);
    match commands::run(cli) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::CheckFailed) => ExitCode::from(1),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            match log_format {
                LogFormat::Text => eprintln!("kcli: {}", one_line(&err)),
                // A log shipper reads every stderr line as JSON: the last one included.
                LogFormat::Json => tracing::error!("kcli: {}", one_line(&err)),
            }
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr; `RUST_LOG` selects what is shown (default: info for kcli, warn otherwise).
/// Colour codes are for a person at a terminal: in a file or a pipe they are noise to whoever
/// greps or ships the lines, so text is coloured only on a terminal, as NO_COLOR allows.
fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,kcli=info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => logs.with_ansi(colour_on_stderr()).init(),
        LogFormat::Json => logs.json().flatten_event(true).init(),
    }
}

/// <https://no-color.org>: a non-empty NO_COLOR turns colour off.
fn colour_on_stderr() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
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
