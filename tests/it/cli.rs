//! The `kcli` binary as a user runs it: help, completions, exit codes.

use std::path::Path;
use std::process::Command;

use kcli::cli::Shell;

fn kcli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kcli"))
}

#[test]
fn committed_completions_are_current() {
    // Regenerate with: for s in bash zsh fish powershell elvish; do kcli completions $s > ...; done
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    for (shell, file) in [
        (Shell::Bash, "kcli.bash"),
        (Shell::Zsh, "_kcli"),
        (Shell::Fish, "kcli.fish"),
        (Shell::Powershell, "_kcli.ps1"),
        (Shell::Elvish, "kcli.elv"),
    ] {
        let generated = kcli::commands::generate_completions(shell);
        let path = dir.join(file);
        if std::env::var_os("UPDATE_COMPLETIONS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is stale; run `UPDATE_COMPLETIONS=1 cargo test --test it completions`",
            path.display()
        );
    }
}

#[test]
fn completions_command_prints_the_script() {
    let out = kcli().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        out.stdout,
        kcli::commands::generate_completions(Shell::Bash)
    );
}

#[test]
fn an_unknown_command_exits_2_with_usage() {
    let out = kcli().arg("no-such-command").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-command"));
}

/// A listener kcli cannot serve as its name promises is refused at startup with one line naming
/// the culprit, and nothing listens on its port: a SASL listener left with Kafka's default
/// mechanism (GSSAPI, which kcli lacks) names `sasl.enabled.mechanisms`. (SSL listeners are
/// served: tests/it/serve_tls.rs; SASL ones: tests/it/serve_sasl_clients.rs.)
#[test]
fn serve_refuses_listeners_it_cannot_serve() {
    for (listeners, named) in [
        (
            "PLAINTEXT://127.0.0.1:{other},SASL_PLAINTEXT://127.0.0.1:{port}",
            &["sasl.enabled.mechanisms", "GSSAPI", "SASL_PLAINTEXT"][..],
        ),
        (
            "PLAINTEXT://127.0.0.1:{other},SASL_SSL://127.0.0.1:{port}",
            &["sasl.enabled.mechanisms", "GSSAPI", "SASL_SSL"][..],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let port = crate::serve_support::free_port();
        let other = crate::serve_support::free_port();
        let value = listeners
            .replace("{port}", &port.to_string())
            .replace("{other}", &other.to_string());
        let mut cmd = kcli();
        cmd.arg("serve")
            .arg("--override")
            .arg(format!("listeners={value}"))
            .arg("--override")
            .arg(format!("log.dirs={}", dir.path().display()));
        let (code, _, err) =
            crate::serve_support::run_within(cmd, b"", std::time::Duration::from_secs(30));
        assert_eq!(code, 2, "{value}: {err}");
        let line = err.trim();
        assert_eq!(line.lines().count(), 1, "{err}");
        assert!(named.iter().all(|n| line.contains(n)), "{line}");
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
