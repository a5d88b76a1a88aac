//! `kcli rebuild-index` on segments Apache Kafka 3.9.1 wrote itself (tests/kafka/RebuildSegments.java,
//! compiled here against Kafka's jars): its indexes pass `--verify --strict`, and a rebuild after
//! deleting them gives the same bytes, for magic-2 segments of every codec, a legacy v0/v1
//! segment and a segment closed as the active one.
//!
//! Kafka's jars come from Maven Central via `tests/install-kafka-tools` into
//! `.tools/kafka-3.9.1/`; without them this test fails (it never skips).

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn kafka_jars() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/kafka-3.9.1")
}

/// Runs `cmd` to completion within `limit` (killed and failed after it); returns (exit code,
/// stdout, stderr). The pipes are drained by threads so a chatty JVM cannot block.
fn run_within(mut cmd: Command, limit: Duration) -> (i32, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes)
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
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
    let text = |t: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
        String::from_utf8_lossy(&t.join().unwrap().unwrap()).into_owned()
    };
    (status.code().unwrap_or(-1), text(stdout), text(stderr))
}

fn indexes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".index") || n.ends_with(".timeindex"))
        .map(|n| (n.clone(), fs::read(dir.join(&n)).unwrap()))
        .collect()
}

fn kcli(args: &[&dyn AsRef<std::ffi::OsStr>]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.args(args.iter().map(|a| a.as_ref()));
    run_within(cmd, Duration::from_secs(60))
}

#[test]
fn segments_written_by_kafka_verify_strictly_and_rebuild_byte_identical() {
    let jars = kafka_jars();
    assert!(
        jars.join(".complete").exists(),
        "Kafka 3.9.1's jars are missing from {}: run tests/install-kafka-tools",
        jars.display()
    );
    let classpath = format!("{}/*", jars.display());
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    let partition = dir.path().join("t-0");
    fs::create_dir_all(&partition).unwrap();

    let mut javac = Command::new("javac");
    javac
        .arg("-nowarn")
        .arg("-cp")
        .arg(&classpath)
        .arg("-d")
        .arg(&classes)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kafka/RebuildSegments.java"));
    let (code, _, err) = run_within(javac, Duration::from_secs(180));
    assert_eq!(code, 0, "javac: {err}");
    let mut java = Command::new("java");
    java.arg("-cp")
        .arg(format!("{}:{classpath}", classes.display()))
        .arg("RebuildSegments")
        .arg(&partition);
    let (code, _, err) = run_within(java, Duration::from_secs(180));
    assert_eq!(code, 0, "RebuildSegments: {err}");

    let written = indexes(&partition);
    assert_eq!(written.len(), 6, "three segments: {:?}", written.keys());
    assert!(written.values().all(|bytes| !bytes.is_empty()));

    let (code, out, err) = kcli(&[
        &"rebuild-index",
        &partition,
        &"--verify",
        &"--strict",
        &"--index-interval-bytes",
        &"512",
    ]);
    assert_eq!(code, 0, "{out}{err}");

    for name in written.keys() {
        fs::remove_file(partition.join(name)).unwrap();
    }
    let (code, out, err) = kcli(&[
        &"rebuild-index",
        &dir.path(),
        &"--index-interval-bytes",
        &"512",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(indexes(&partition), written);
}
