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

/// Runs `kcli serve` on a free port with `args`, its stderr to a file (neither a terminal nor
/// told NO_COLOR), until it has started; stops it with SIGTERM and returns what it logged.
fn serve_logs(args: &[&str], env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let port = crate::serve_support::free_port();
    let mut child = kcli()
        .arg("serve")
        .args(args)
        .arg("--override")
        .arg(format!("listeners=PLAINTEXT://127.0.0.1:{port}"))
        .arg("--override")
        .arg(format!("log.dirs={}", dir.path().join("data").display()))
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .env_remove("KCLI_LOG_FORMAT")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("started kcli broker")
    {
        if child.try_wait().unwrap().is_some() || start.elapsed().as_secs() > 30 {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "kcli serve did not start: {}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() > 20 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kcli serve did not stop after SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let bytes = std::fs::read(&log).unwrap();
    String::from_utf8(bytes).unwrap()
}

/// Log lines written to a file carry no colour codes: they are for grep and log shippers.
#[test]
fn serve_logs_to_a_file_without_colour() {
    let logs = serve_logs(&[], &[]);
    assert!(logs.contains("shut down cleanly"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "ANSI escapes in:\n{logs:?}");
    assert!(logs.lines().all(|l| !l.starts_with('{')), "{logs}");
}

/// `--log-format json` (or KCLI_LOG_FORMAT=json) writes one JSON object per line, with the
/// level, the message and the event's fields.
#[test]
fn serve_logs_json_lines_on_request() {
    for (args, env) in [
        (&["--log-format", "json"][..], &[][..]),
        (&[], &[("KCLI_LOG_FORMAT", "json")]),
    ] {
        let logs = serve_logs(args, env);
        let events: Vec<serde_json::Value> = logs
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
            .collect();
        for event in &events {
            assert!(event["level"].is_string(), "{event}");
            assert!(event["message"].is_string(), "{event}");
            assert!(event["timestamp"].is_string(), "{event}");
        }
        let started = events
            .iter()
            .find(|e| e["message"] == "started kcli broker")
            .unwrap_or_else(|| panic!("{logs}"));
        assert_eq!(started["level"], "INFO");
        assert_eq!(started["broker_id"], 0);
        assert!(
            events.iter().any(|e| e["message"] == "shut down cleanly"),
            "{logs}"
        );
    }
    // The error that ends a command is a JSON line too.
    let out = kcli()
        .args([
            "serve",
            "--log-format",
            "json",
            "--override",
            "listeners=bogus",
        ])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    let last: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert_eq!(last["level"], "ERROR");
    assert!(
        last["message"].as_str().unwrap().contains("listeners"),
        "{last}"
    );
}
