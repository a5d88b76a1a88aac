//! `kcli completions <shell>`: shell completion scripts generated from the clap definition. The
//! generated files are committed under `completions/`; a test fails when they are stale.

use std::io::Write;

use anyhow::Context;
use clap::CommandFactory;
use clap_complete::Shell as ClapShell;

use super::Outcome;
use crate::cli::{Cli, Shell};

pub(super) fn run(shell: Shell, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    out.write_all(&generate(shell))
        .context("writing completions to stdout")?;
    out.flush().context("writing completions to stdout")?;
    Ok(Outcome::Success)
}

/// The completion script for `shell`, exactly as committed in `completions/`.
pub fn generate(shell: Shell) -> Vec<u8> {
    let shell = match shell {
        Shell::Bash => ClapShell::Bash,
        Shell::Zsh => ClapShell::Zsh,
        Shell::Fish => ClapShell::Fish,
        Shell::Powershell => ClapShell::PowerShell,
        Shell::Elvish => ClapShell::Elvish,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "kcli", &mut buf);
    buf
}
