//! `kcli rebuild-index` as a user runs it, on log dirs written by the storage layer: rebuilds
//! byte-identical to what the broker wrote, `--verify` on good and damaged indexes, `--strict`,
//! `--dry-run`, torn and bit-flipped logs, a locked log dir, legacy v0/v1 segments.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use kcli::protocol::record::batch_iter::BatchIter;
use kcli::protocol::record::builder::{
    ControlRecordType, RecordBatchBuilder, SimpleRecord, build_control_batch,
    build_legacy_message_set,
};
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::log_dir_lock::LogDirLock;
use kcli::storage::log_validator::AppendOrigin;

use crate::storage_support::{T0, open_log, small_config};

const CODECS: [CompressionType; 5] = [
    CompressionType::None,
    CompressionType::Gzip,
    CompressionType::Snappy,
    CompressionType::Lz4,
    CompressionType::Zstd,
];

/// small_config's `index.interval.bytes`.
const INTERVAL: &str = "512";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs kcli with `args`, killed after 60 s.
fn kcli(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kcli"))
        .args(args.iter().map(|a| a.as_ref()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!(
                "kcli {:?} ran over 60 s",
                args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn rebuild(path: &Path, extra: &[&str]) -> Run {
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
        &"rebuild-index",
        &path,
        &"--index-interval-bytes",
        &INTERVAL,
    ];
    for a in extra {
        args.push(a);
    }
    kcli(&args)
}

/// `len` bytes that do not compress, seeded by `seed`.
fn noise(seed: usize, len: usize) -> Vec<u8> {
    let mut x = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Records with headers, null keys and null values; timestamps that go back and forth.
fn records(i: usize) -> Vec<SimpleRecord> {
    (0..1 + i % 4)
        .map(|j| SimpleRecord {
            timestamp: T0 + ((i * 7) % 13) as i64 * 1000 + j as i64,
            key: (j % 3 != 0).then(|| format!("key-{i}-{j}").into_bytes()),
            value: (j % 4 != 1).then(|| noise(i * 8 + j, 90 + 37 * j)),
            headers: if j % 2 == 0 {
                vec![("h".into(), Some(b"v".to_vec())), ("null".into(), None)]
            } else {
                Vec::new()
            },
        })
        .collect()
}

/// A partition written by the broker's log in one run, one batch per append: `codecs` in
/// turn, then a transaction and its commit marker, then more; closed cleanly.
fn write_partition(dir: &Path, codecs: &[CompressionType]) {
    fs::create_dir_all(dir).unwrap();
    let mut log = open_log(dir, small_config(), 0, true);
    let append = |log: &mut kcli::storage::unified_log::UnifiedLog, i: usize| {
        let mut builder = RecordBatchBuilder::new(codecs[i % codecs.len()]);
        builder.records = records(i);
        log.append_as_leader(&builder.build().unwrap(), 3, AppendOrigin::Client, T0)
            .unwrap();
    };
    for i in 0..40 {
        append(&mut log, i);
    }
    let mut txn = RecordBatchBuilder::new(codecs[0]);
    txn.base_offset = log.log_end_offset();
    txn.partition_leader_epoch = 3;
    txn.producer_id = 42;
    txn.producer_epoch = 0;
    txn.base_sequence = 0;
    txn.is_transactional = true;
    txn.records = records(5);
    log.append_as_follower(&txn.build().unwrap(), T0).unwrap();
    let marker = build_control_batch(
        ControlRecordType::Commit,
        log.log_end_offset(),
        3,
        42,
        0,
        1,
        T0 + 20_000,
    )
    .unwrap();
    log.append_as_follower(&marker, T0).unwrap();
    for i in 40..70 {
        append(&mut log, i);
    }
    log.close(T0).unwrap();
}

/// A log dir with one partition `t-0`; returns (log dir, partition dir).
fn log_dir() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let partition = root.path().join("t-0");
    write_partition(&partition, &CODECS);
    (root, partition)
}

/// File name → bytes, for the files ending in one of `suffixes`.
fn files(dir: &Path, suffixes: &[&str]) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| suffixes.iter().any(|s| n.ends_with(s)))
        .map(|n| (n.clone(), fs::read(dir.join(&n)).unwrap()))
        .collect()
}

fn mtimes(dir: &Path) -> BTreeMap<String, SystemTime> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let name = e.file_name().into_string().unwrap();
            (name, e.metadata().unwrap().modified().unwrap())
        })
        .collect()
}

const INDEXES: [&str; 2] = [".index", ".timeindex"];

/// The first segment whose `.index` has at least 3 entries and `.timeindex` at least 2.
fn indexed_segment(partition: &Path) -> (PathBuf, PathBuf) {
    for (name, bytes) in files(partition, &[".index"]) {
        let time = partition.join(name.replace(".index", ".timeindex"));
        if bytes.len() >= 24 && fs::metadata(&time).unwrap().len() >= 24 {
            return (partition.join(name), time);
        }
    }
    panic!("no segment with enough index entries");
}

/// (position, last offset) of every batch in a `.log`.
fn batches(log: &Path) -> Vec<(usize, i64)> {
    let bytes = fs::read(log).unwrap();
    BatchIter::new(&bytes)
        .map(|b| b.unwrap())
        .map(|b| (b.position, b.last_offset()))
        .collect()
}

/// The last segment with at least two batches (a torn write tears the active one).
fn last_segment(partition: &Path) -> PathBuf {
    let logs = files(partition, &[".log"]);
    logs.keys()
        .rev()
        .map(|name| partition.join(name))
        .find(|log| batches(log).len() >= 2)
        .unwrap()
}

#[test]
fn rebuilt_indexes_are_byte_identical_to_what_the_broker_wrote() {
    let (root, partition) = log_dir();
    let written = files(&partition, &INDEXES);
    assert!(written.len() >= 8, "expected several segments: {written:?}");
    for name in written.keys() {
        fs::remove_file(partition.join(name)).unwrap();
    }
    let run = rebuild(&partition, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(files(&partition, &INDEXES), written);
    assert!(run.stdout.contains("rebuilt"), "{}", run.stdout);
    assert!(
        !fs::read_dir(&partition)
            .unwrap()
            .any(|e| { e.unwrap().file_name().to_string_lossy().ends_with(".tmp") })
    );

    // A second run finds nothing to do and touches nothing.
    let before = mtimes(&partition);
    let run = rebuild(root.path(), &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("up to date"), "{}", run.stdout);
    assert_eq!(mtimes(&partition), before);

    // A single segment by its .log.
    let (index, _) = indexed_segment(&partition);
    fs::remove_file(&index).unwrap();
    let run = rebuild(&index.with_extension("log"), &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(files(&partition, &INDEXES), written);
}

#[test]
fn every_codec_in_a_log_dir_of_partitions_rebuilds_and_verifies() {
    let root = tempfile::tempdir().unwrap();
    for (p, codec) in CODECS.iter().enumerate() {
        write_partition(&root.path().join(format!("codec-{p}")), &[*codec]);
    }
    let written: Vec<_> = (0..CODECS.len())
        .map(|p| files(&root.path().join(format!("codec-{p}")), &INDEXES))
        .collect();
    let run = rebuild(root.path(), &["--verify", "--strict"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("codec-4/00000000000000000000.log"),
        "{}",
        run.stdout
    );
    for (p, before) in written.iter().enumerate() {
        let dir = root.path().join(format!("codec-{p}"));
        for name in before.keys() {
            fs::remove_file(dir.join(name)).unwrap();
        }
    }
    let run = rebuild(root.path(), &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for (p, before) in written.iter().enumerate() {
        assert_eq!(
            &files(&root.path().join(format!("codec-{p}")), &INDEXES),
            before
        );
    }
}

#[test]
fn verify_accepts_good_indexes_and_reports_json() {
    let (_root, partition) = log_dir();
    let segments = files(&partition, &[".log"]).len();
    let run = rebuild(&partition, &["--verify"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("valid"), "{}", run.stdout);
    // A person checking a dir is told what was checked, after the table.
    assert_eq!(
        run.stdout.lines().last(),
        Some(
            format!(
                "checked {segments} segments and {} indexes: no problems found",
                segments * 2
            )
            .as_str()
        ),
        "{}",
        run.stdout
    );

    let run = rebuild(&partition, &["--verify", "--strict", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let mut lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.pop().unwrap();
    assert_eq!(
        summary,
        serde_json::json!({
            "summary": {"segments": segments, "indexes": segments * 2, "problems": 0},
            "ok": true,
        })
    );
    assert_eq!(lines.len(), segments);
    for line in &lines {
        assert_eq!(line["ok"], true);
        assert_eq!(line["index"]["status"], "valid");
        assert_eq!(line["time_index"]["status"], "valid");
        assert!(line["corrupt_tail"].is_null());
        assert!(line["batches"].as_u64().unwrap() > 0);
    }
}

/// Damages a good partition with `damage(.index, .timeindex)`, which returns the number of the
/// entry it broke, and expects `--verify` to exit 1 naming `<file_suffix>: entry N` and
/// `detail`, on one line: only the first bad entry of a file is named.
fn expect_bad_entry(damage: impl FnOnce(&Path, &Path) -> usize, file_suffix: &str, detail: &str) {
    let (_root, partition) = log_dir();
    let (index, time) = indexed_segment(&partition);
    let entry = damage(&index, &time);
    let run = rebuild(&partition, &["--verify"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let wanted = format!("{file_suffix}: entry {entry}");
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains(&wanted))
        .unwrap_or_else(|| panic!("no `{wanted}` in:\n{}", run.stdout));
    assert!(line.contains(detail), "{line}");
    let mentions = format!("{file_suffix}: entry");
    assert_eq!(run.stdout.matches(&mentions).count(), 1, "{}", run.stdout);
    let json = rebuild(&partition, &["--verify", "--format", "json"]);
    assert_eq!(json.code, 1);
    let key = if file_suffix == ".index" {
        "index"
    } else {
        "time_index"
    };
    let (bad, summary): (Vec<serde_json::Value>, Vec<serde_json::Value>) = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["ok"] == false)
        .partition(|v| v.get("segment").is_some());
    assert_eq!(bad.len(), 1, "{}", json.stdout);
    assert_eq!(bad[0][key]["first_bad_entry"]["entry"], entry);
    assert_eq!(summary.len(), 1, "{}", json.stdout);
    assert_eq!(summary[0]["summary"]["problems"], 1, "{}", json.stdout);
    assert!(
        run.stdout.ends_with(" indexes: 1 problem found\n"),
        "{}",
        run.stdout
    );
}

fn patch(path: &Path, at: usize, bytes: &[u8]) {
    let mut data = fs::read(path).unwrap();
    data[at..at + bytes.len()].copy_from_slice(bytes);
    fs::write(path, data).unwrap();
}

fn read_i32(path: &Path, at: usize) -> i32 {
    let data = fs::read(path).unwrap();
    i32::from_be_bytes(data[at..at + 4].try_into().unwrap())
}

fn read_i64(path: &Path, at: usize) -> i64 {
    let data = fs::read(path).unwrap();
    i64::from_be_bytes(data[at..at + 8].try_into().unwrap())
}

#[test]
fn verify_names_a_flipped_offset_index_entry() {
    // A flipped bit in entry 1's relative offset: entry 1 names the wrong batch end (and
    // entry 2 no longer increases, but entry 1 comes first).
    expect_bad_entry(
        |index, _| {
            let mut data = fs::read(index).unwrap();
            data[8 + 2] ^= 0x40;
            fs::write(index, data).unwrap();
            1
        },
        ".index",
        "ends at offset",
    );
}

#[test]
fn verify_names_an_offset_going_backwards() {
    expect_bad_entry(
        |index, _| {
            let first = read_i32(index, 0);
            patch(index, 16, &first.to_be_bytes());
            2
        },
        ".index",
        "does not increase",
    );
}

#[test]
fn verify_names_a_partial_entry() {
    expect_bad_entry(
        |index, _| {
            let mut data = fs::read(index).unwrap();
            let whole = data.len() / 8;
            data.extend_from_slice(&[0, 0, 1]);
            fs::write(index, &data).unwrap();
            whole
        },
        ".index",
        "cut short",
    );
}

#[test]
fn verify_names_an_entry_pointing_inside_a_batch() {
    expect_bad_entry(
        |index, _| {
            let position = read_i32(index, 12);
            patch(index, 12, &(position + 1).to_be_bytes());
            1
        },
        ".index",
        "is not the start of a batch",
    );
}

#[test]
fn verify_names_a_time_entry_with_the_wrong_timestamp() {
    expect_bad_entry(
        |_, time| {
            let timestamp = read_i64(time, 0);
            patch(time, 0, &(timestamp - 1).to_be_bytes());
            0
        },
        ".timeindex",
        "has max timestamp",
    );
}

#[test]
fn strict_catches_a_valid_index_that_is_not_the_rebuild() {
    let (_root, partition) = log_dir();
    let (index, _) = indexed_segment(&partition);
    let mut data = fs::read(&index).unwrap();
    let entries = data.len() / 8;
    data.truncate(data.len() - 8);
    fs::write(&index, &data).unwrap();
    let run = rebuild(&partition, &["--verify"]);
    assert_eq!(
        run.code, 0,
        "a sparser index is still valid: {}",
        run.stdout
    );
    let run = rebuild(&partition, &["--verify", "--strict"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            ".index: entry {}: the file has {} entries",
            entries - 1,
            entries - 1
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn dry_run_changes_nothing() {
    let (_root, partition) = log_dir();
    let (index, time) = indexed_segment(&partition);
    fs::remove_file(&index).unwrap();
    let timestamp = read_i64(&time, 12);
    patch(&time, 12, &(timestamp + 5).to_be_bytes());
    let before = files(&partition, &["", ".log"]);
    let before_mtimes = mtimes(&partition);
    let run = rebuild(&partition, &["--dry-run"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(".index would be rebuilt"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(".timeindex would be rebuilt"),
        "{}",
        run.stdout
    );
    assert_eq!(files(&partition, &[""]), before);
    assert_eq!(mtimes(&partition), before_mtimes);
    assert!(!index.exists());

    // The real run repairs both, and the result verifies strictly.
    let run = rebuild(&partition, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run = rebuild(&partition, &["--verify", "--strict"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn a_torn_tail_is_reported_and_cut_only_when_asked() {
    let (_root, partition) = log_dir();
    let log = last_segment(&partition);
    let all = batches(&log);
    let (last_position, _) = *all.last().unwrap();
    let next_offset = all[all.len() - 2].1 + 1;
    let size = fs::metadata(&log).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(size - 10)
        .unwrap();
    let wanted = format!("valid data ends at position {last_position} (next offset {next_offset})");

    for mode in [&["--verify"][..], &["--dry-run"], &[]] {
        let run = rebuild(&partition, mode);
        assert_eq!(run.code, 1, "{mode:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(&wanted), "{mode:?}: {}", run.stdout);
        assert!(run.stdout.contains("--truncate-corrupt"), "{}", run.stdout);
        assert_eq!(fs::metadata(&log).unwrap().len(), size - 10);
    }
    let run = rebuild(&partition, &["--truncate-corrupt"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(&wanted), "{}", run.stdout);
    assert_eq!(fs::metadata(&log).unwrap().len(), last_position as u64);
    let run = rebuild(&partition, &["--verify", "--strict"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn a_bit_flip_stops_the_valid_data_at_its_batch() {
    let (_root, partition) = log_dir();
    let log = partition.join("00000000000000000000.log");
    let all = batches(&log);
    let (position, _) = all[3];
    let next_offset = all[2].1 + 1;
    let mut data = fs::read(&log).unwrap();
    data[position + 70] ^= 0x01;
    fs::write(&log, &data).unwrap();
    let run = rebuild(&log, &["--verify", "--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report: serde_json::Value =
        serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(report["corrupt_tail"]["position"], position);
    assert_eq!(report["corrupt_tail"]["next_offset"], next_offset);
    assert_eq!(report["corrupt_tail"]["truncated"], false);
    assert!(
        report["corrupt_tail"]["reason"]
            .as_str()
            .unwrap()
            .contains("CRC"),
        "{report}"
    );
    // Entries past the valid data are bad too.
    assert_eq!(report["index"]["status"], "invalid");
    let run = rebuild(&log, &["--truncate-corrupt"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(fs::metadata(&log).unwrap().len(), position as u64);
}

#[test]
fn a_locked_log_dir_refuses_a_rebuild_but_not_a_verify_or_a_dry_run() {
    let (root, partition) = log_dir();
    let lock = LogDirLock::try_acquire(root.path()).unwrap();
    let log = partition.join("00000000000000000000.log");
    let before = files(&partition, &INDEXES);
    for path in [root.path(), partition.as_path(), log.as_path()] {
        let run = rebuild(path, &[]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("is in use"), "{}", run.stderr);
        let dir = fs::canonicalize(root.path()).unwrap();
        assert!(
            run.stderr.contains(&dir.display().to_string()),
            "{}",
            run.stderr
        );
        // Reading needs no lock, as for Kafka's DumpLogSegments.
        for mode in [&["--verify"][..], &["--verify", "--strict"], &["--dry-run"]] {
            let run = rebuild(path, mode);
            assert_eq!(run.code, 0, "{mode:?}: {}{}", run.stdout, run.stderr);
        }
    }
    assert_eq!(files(&partition, &INDEXES), before);
    drop(lock);
    let run = rebuild(&partition, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn errors_exit_2_naming_the_path() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("no-such-dir");
    let run = rebuild(&missing, &[]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no-such-dir"), "{}", run.stderr);
    let run = kcli(&[&"rebuild-index", &root.path(), &"--strict"]);
    assert_eq!(run.code, 2, "--strict needs --verify: {}", run.stderr);
}

#[test]
fn legacy_v0_and_v1_segments_rebuild_as_recovery_does() {
    let root = tempfile::tempdir().unwrap();
    let partition = root.path().join("old-0");
    fs::create_dir(&partition).unwrap();
    let mut log = Vec::new();
    let mut offset = 0i64;
    for i in 0..60usize {
        let magic = if i < 30 { 0 } else { 1 };
        let codec = CODECS[i % 4];
        let recs: Vec<SimpleRecord> = records(i)
            .into_iter()
            .map(|mut r| {
                r.headers.clear();
                r
            })
            .collect();
        let n = recs.len() as i64;
        log.extend(build_legacy_message_set(magic, codec, offset, &recs).unwrap());
        offset += n;
    }
    let segment = partition.join("00000000000000000000.log");
    fs::write(&segment, &log).unwrap();

    // The broker's own recovery is the reference: open unclean, recover, close.
    let reference = tempfile::tempdir().unwrap();
    let reference_partition = reference.path().join("old-0");
    fs::create_dir(&reference_partition).unwrap();
    fs::copy(
        &segment,
        reference_partition.join("00000000000000000000.log"),
    )
    .unwrap();
    let mut config = small_config();
    config.segment_bytes = 1 << 30;
    let mut recovered = open_log(&reference_partition, config, 0, false);
    recovered.close(T0).unwrap();
    let expected = files(&reference_partition, &INDEXES);
    assert!(expected["00000000000000000000.index"].len() >= 16);
    assert!(!expected["00000000000000000000.timeindex"].is_empty());

    let run = rebuild(&partition, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(files(&partition, &INDEXES), expected);
    let run = rebuild(&partition, &["--verify", "--strict"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

/// On a running broker's log dir (its `.lock` held), `--verify --strict` and `dump-segment` read
/// the live segments, preallocated active indexes included, as Kafka's DumpLogSegments does; a
/// rebuild is refused and leaves the files alone.
#[test]
fn verify_and_dump_work_on_a_live_broker_dir() {
    let broker = crate::serve_support::TestBroker::start(&[("log.index.interval.bytes", "128")]);
    let lines: String = (0..500)
        .map(|i| format!("record-{i:04}-{}\n", "x".repeat(40)))
        .collect();
    let mut kcat = Command::new("kcat");
    // Batches of 10 records, so the active segment's indexes get entries.
    kcat.args(["-b", &broker.bootstrap(), "-P", "-t", "live", "-p", "0"])
        .args(["-X", "batch.num.messages=10", "-X", "linger.ms=0"]);
    let (code, _, err) =
        crate::serve_support::run_within(kcat, lines.as_bytes(), Duration::from_secs(60));
    assert_eq!(code, 0, "kcat: {err}");
    let data = broker.data_dir();
    let partition = data.join("live-0");
    let before = files(&partition, &INDEXES);
    // --strict compares with a rebuild at the broker's index interval.
    let run = kcli(&[
        &"rebuild-index",
        &data,
        &"--verify",
        &"--strict",
        &"--index-interval-bytes",
        &"128",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("valid"), "{}", run.stdout);
    let run = kcli(&[&"rebuild-index", &partition, &"--dry-run"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run = kcli(&[&"rebuild-index", &partition]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("is in use"), "{}", run.stderr);
    assert_eq!(files(&partition, &INDEXES), before);
    let log = partition.join("00000000000000000000.log");
    let run = kcli(&[&"dump-segment", &log, &"--deep-iteration"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.matches("| offset: ").count(),
        500,
        "{}",
        run.stdout
    );
    let index = partition.join("00000000000000000000.index");
    let run = kcli(&[&"dump-segment", &index, &"--index-sanity-check"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}
