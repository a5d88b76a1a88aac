//! Running Kafka 3.9.1's `kafka.tools.DumpLogSegments` and `kcli dump-segment` on the same files,
//! each under a deadline, and comparing what they print.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn kafka_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/kafka-3.9.1")
}

/// Runs `cmd` with a deadline, so a stuck JVM fails the test instead of hanging it.
pub fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        stdout.read_to_end(&mut b).map(|_| b)
    });
    let err_thread = std::thread::spawn(move || {
        let mut b = Vec::new();
        stderr.read_to_end(&mut b).map(|_| b)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{cmd:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_thread.join().unwrap().unwrap(),
        stderr: err_thread.join().unwrap().unwrap(),
    }
}

/// Kafka's DumpLogSegments on `files` (comma-joined into `--files`), run in `dir`.
pub fn kafka(dir: &Path, files: &[&str], args: &[&str]) -> Output {
    let jars = kafka_dir();
    assert!(
        jars.join(".complete").exists(),
        "Kafka 3.9.1's jars are missing from {}: run tests/install-kafka-tools",
        jars.display()
    );
    let mut cmd = Command::new("java");
    cmd.current_dir(dir)
        .arg("-Dfile.encoding=UTF-8")
        .arg("-Dstdout.encoding=UTF-8")
        .arg("-Dstderr.encoding=UTF-8")
        .arg("-Xshare:auto")
        .arg("-XX:TieredStopAtLevel=1")
        .arg("-cp")
        .arg(format!("{}/*", jars.display()))
        .arg("kafka.tools.DumpLogSegments")
        .arg("--files")
        .arg(files.join(","))
        .args(args);
    output_within(cmd, Duration::from_secs(120))
}

pub fn kcli(dir: &Path, files: &[&str], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.current_dir(dir)
        .arg("dump-segment")
        .args(args)
        .args(files);
    output_within(cmd, Duration::from_secs(60))
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts both tools print the same stdout and stderr; returns kcli's output.
pub fn same_as_kafka(dir: &Path, files: &[&str], args: &[&str]) -> Output {
    let k = kafka(dir, files, args);
    let ours = kcli(dir, files, args);
    assert_eq!(
        text(&ours.stdout),
        text(&k.stdout),
        "stdout differs for {files:?} {args:?}"
    );
    assert_eq!(
        text(&ours.stderr),
        text(&k.stderr),
        "stderr differs for {files:?} {args:?}"
    );
    ours
}

/// For inputs on which Kafka's tool dies with an exception: the same stdout, and kcli's
/// one-line report carries the exception's message.
pub fn same_as_kafka_until_exception(dir: &Path, files: &[&str], args: &[&str]) -> Output {
    let k = kafka(dir, files, args);
    let ours = kcli(dir, files, args);
    assert_eq!(
        text(&ours.stdout),
        text(&k.stdout),
        "stdout differs for {files:?} {args:?}"
    );
    let kafka_err = text(&k.stderr);
    let first = kafka_err.lines().next().unwrap_or_default();
    let message = first.split_once(": ").map(|(_, m)| m).unwrap_or_default();
    assert!(first.starts_with("Exception in thread"), "{kafka_err}");
    let our_err = text(&ours.stderr);
    assert!(
        our_err.contains(message),
        "kcli said {our_err:?}, Kafka said {first:?}"
    );
    ours
}

/// For corrupt inputs: where Kafka's tool dies with an exception, kcli must have printed the
/// same stdout up to that point (it then goes on) and exit 1; elsewhere both streams must be
/// identical.
pub fn same_as_kafka_or_its_prefix(dir: &Path, files: &[&str], args: &[&str]) -> Output {
    let k = kafka(dir, files, args);
    let ours = kcli(dir, files, args);
    if text(&k.stderr).starts_with("Exception in thread") {
        assert!(
            ours.stdout.starts_with(&k.stdout),
            "kcli's stdout does not start with Kafka's for {files:?} {args:?}:\nKafka:\n{}\nkcli:\n{}",
            text(&k.stdout),
            text(&ours.stdout)
        );
        assert_eq!(ours.status.code(), Some(1), "{}", text(&ours.stderr));
    } else {
        assert_eq!(
            text(&ours.stdout),
            text(&k.stdout),
            "stdout differs for {files:?} {args:?}"
        );
        assert_eq!(
            text(&ours.stderr),
            text(&k.stderr),
            "stderr differs for {files:?} {args:?}"
        );
    }
    ours
}
