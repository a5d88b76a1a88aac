//! `kcli dump-segment` against Apache Kafka 3.9.1's own `kafka.tools.DumpLogSegments` on the
//! same files: segments built here with every codec, headers, null keys and values, non-UTF-8
//! bytes, transactional and control batches, LogAppendTime, legacy v0/v1 message sets (plain
//! and compressed), truncated and bit-flipped files, offset and time indexes (valid, mismatched,
//! zero-padded), producer snapshots and transaction indexes. Stdout and stderr must be identical.
//!
//! Kafka's jars come from Maven Central via `tests/install-kafka-tools` into
//! `.tools/kafka-3.9.1/`; without them these tests fail (they never skip).

mod fixtures;
mod offsets;
pub(crate) mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use fixtures::*;
use kcli::protocol::record::batch::{RECORD_BATCH_OVERHEAD, compute_crc};
use kcli::protocol::record::compression::CompressionType;
use support::*;

#[test]
fn v2_segment_matches_kafka_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = v2_segment();
    let name = format!("{SEGMENT}.log");
    write(dir.path(), &name, &file);
    for args in [
        &[][..],
        &["--deep-iteration"],
        &["--print-data-log"],
        &["--print-data-log", "--skip-record-metadata"],
        &["--deep-iteration", "--skip-record-metadata"],
        &["--max-bytes", "700", "--deep-iteration"],
    ] {
        let out = same_as_kafka(dir.path(), &[&name], args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn legacy_message_sets_match_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{SEGMENT}.log");
    write(dir.path(), &name, &legacy_segment());
    for args in [&[][..], &["--print-data-log"]] {
        let out = same_as_kafka(dir.path(), &[&name], args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn legacy_log_append_time_and_many_files_match_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = v1_log_append_time_wrapper(2);
    file.extend(legacy_segment());
    write(dir.path(), "00000000000000000000.log", &file);
    let (v2, _) = v2_segment();
    write(dir.path(), "00000000000000000031.log", &v2);
    let sub = dir.path().join("p-0");
    std::fs::create_dir(&sub).unwrap();
    write(&sub, "00000000000000000000.log", &legacy_segment());
    let abs = sub.join("00000000000000000000.log");
    let abs = abs.to_str().unwrap();
    let files = [
        "00000000000000000000.log",
        "./00000000000000000031.log",
        "p-0//00000000000000000000.log",
        abs,
    ];
    for args in [
        &["--deep-iteration"][..],
        &["--print-data-log", "--skip-record-metadata"],
    ] {
        let out = same_as_kafka(dir.path(), &files, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}

/// Inputs on which Kafka's tool dies with an exception: kcli prints the same stdout up to that
/// point, one report line on stderr, and exits 1.
#[test]
fn corrupt_structures_match_kafka_up_to_its_exception() {
    let dir = tempfile::tempdir().unwrap();
    let good = batch(
        CompressionType::None,
        0,
        vec![rec(TS, Some(b"a"), Some(b"b"))],
    );
    // A size field below the 14-byte minimum after a good batch.
    let mut small = good.clone();
    small.extend_from_slice(&9i64.to_be_bytes());
    small.extend_from_slice(&5i32.to_be_bytes());
    small.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0, 0]);
    write(dir.path(), "00000000000000000000.log", &small);
    let out = same_as_kafka_until_exception(dir.path(), &["00000000000000000000.log"], &[]);
    assert_eq!(out.status.code(), Some(1));
    // A record whose key length runs past the batch (CRC recomputed, so only the structure is
    // wrong), after one good record: Kafka prints the good record then dies.
    let mut broken = batch(
        CompressionType::None,
        1,
        vec![
            rec(TS, Some(b"a"), Some(b"b")),
            rec(TS, Some(b"key"), Some(b"value")),
        ],
    );
    let second = RECORD_BATCH_OVERHEAD + 1 + usize::from(broken[RECORD_BATCH_OVERHEAD]) / 2;
    // Record layout: length, attributes, timestamp delta, offset delta, key length.
    broken[second + 4] = 0x7e;
    let crc = compute_crc(&broken);
    broken[17..21].copy_from_slice(&crc.to_be_bytes());
    let mut file = good.clone();
    file.extend(broken);
    write(dir.path(), "00000000000000000100.log", &file);
    let out = same_as_kafka_until_exception(
        dir.path(),
        &["00000000000000000100.log"],
        &["--deep-iteration"],
    );
    assert_eq!(out.status.code(), Some(1));
    // Garbage where a gzip stream should be.
    let mut garbage = batch(
        CompressionType::Gzip,
        3,
        vec![rec(TS, Some(b"a"), Some(b"b"))],
    );
    let len = garbage.len();
    for b in &mut garbage[RECORD_BATCH_OVERHEAD + 12..len] {
        *b = 0x55;
    }
    let crc = compute_crc(&garbage);
    garbage[17..21].copy_from_slice(&crc.to_be_bytes());
    let mut file = good;
    file.extend(garbage);
    write(dir.path(), "00000000000000000200.log", &file);
    let k = kafka(
        dir.path(),
        &["00000000000000000200.log"],
        &["--deep-iteration"],
    );
    let ours = kcli(
        dir.path(),
        &["00000000000000000200.log"],
        &["--deep-iteration"],
    );
    assert_eq!(text(&ours.stdout), text(&k.stdout));
    assert!(
        text(&k.stderr).starts_with("Exception in thread"),
        "{}",
        text(&k.stderr)
    );
    assert_eq!(
        text(&ours.stderr).lines().count(),
        1,
        "{}",
        text(&ours.stderr)
    );
    assert_eq!(ours.status.code(), Some(1));
}

/// Files written by Kafka 3.9.1's own storage code (tests/kafka/WriteSegments.java, compiled
/// here against the installed jars): a rolled segment with its indexes, a transaction index and
/// a producer snapshot.
#[test]
fn files_written_by_kafka_match_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    let data = dir.path().join("topic-0");
    std::fs::create_dir_all(&data).unwrap();
    let jars = format!("{}/*", kafka_dir().display());
    assert!(
        kafka_dir().join(".complete").exists(),
        "Kafka 3.9.1's jars are missing: run tests/install-kafka-tools"
    );
    let mut javac = Command::new("javac");
    javac
        .arg("-nowarn")
        .arg("-cp")
        .arg(&jars)
        .arg("-d")
        .arg(&classes)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kafka/WriteSegments.java"));
    let out = output_within(javac, Duration::from_secs(120));
    assert!(out.status.success(), "javac: {}", text(&out.stderr));
    let mut java = Command::new("java");
    java.arg("-cp")
        .arg(format!("{}:{jars}", classes.display()))
        .arg("WriteSegments")
        .arg(&data);
    let out = output_within(java, Duration::from_secs(120));
    assert!(out.status.success(), "WriteSegments: {}", text(&out.stderr));
    let next_offset = text(&out.stdout).trim().to_string();
    let snapshot = format!("{next_offset:0>20}.snapshot");
    let all = [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000000.txnindex",
        snapshot.as_str(),
    ];
    for args in [
        &[][..],
        &["--deep-iteration"],
        &["--print-data-log"],
        &["--verify-index-only"],
        &["--index-sanity-check"],
    ] {
        let out = same_as_kafka(&data, &all, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn truncated_and_bit_flipped_segments_match_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let (file, layout) = v2_segment();
    // Cut the last batch in half: Kafka reports the invalid bytes at the end.
    let cut = (layout[layout.len() - 1].0 as usize + file.len()) / 2;
    write(dir.path(), "00000000000000000000.log", &file[..cut]);
    let out = same_as_kafka(
        dir.path(),
        &["00000000000000000000.log"],
        &["--deep-iteration"],
    );
    assert_eq!(out.status.code(), Some(1));
    // A few trailing bytes too short for a header.
    let mut short = file.clone();
    short.extend_from_slice(&[0; 9]);
    write(dir.path(), "00000000000000000100.log", &short);
    let out = same_as_kafka(dir.path(), &["00000000000000000100.log"], &[]);
    assert_eq!(out.status.code(), Some(1));
    // Flip a bit in the value of the first (uncompressed) batch: the CRC no longer matches but
    // the records still parse, and in a compressed batch, where only the shallow dump works.
    let mut flipped = file.clone();
    let last = flipped.len() - 1;
    flipped[layout[0].0 as usize + 80] ^= 0x01;
    flipped[layout[2].0 as usize + 70] ^= 0x10;
    flipped[last] ^= 0x04;
    write(dir.path(), "00000000000000000200.log", &flipped);
    let out = same_as_kafka(dir.path(), &["00000000000000000200.log"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let mut flipped_plain = file;
    flipped_plain[layout[0].0 as usize + 80] ^= 0x01;
    // Magic 2 -> 3 and 2 -> 6: the CRC does not cover the magic byte, and Kafka reads any magic
    // above 1 as a v2 batch.
    flipped_plain[layout[1].0 as usize + 16] ^= 0x01;
    flipped_plain[layout[5].0 as usize + 16] ^= 0x04;
    write(dir.path(), "00000000000000000300.log", &flipped_plain);
    let out = same_as_kafka(
        dir.path(),
        &["00000000000000000300.log"],
        &["--print-data-log"],
    );
    assert_eq!(out.status.code(), Some(1));
}

/// Seeded random corruption (bit flips, overwritten bytes, truncation) of v2 and legacy
/// segments, each dumped by both tools.
#[test]
fn random_corruptions_match_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let sources = [v2_segment().0, legacy_segment()];
    // xorshift64*: deterministic, so a failure names a reproducible case.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    };
    for case in 0..8 {
        let mut bytes = sources[case % 2].clone();
        let at = next(bytes.len());
        bytes[at] ^= 1 << next(8);
        if case % 3 == 1 {
            let at = next(bytes.len());
            bytes[at] = next(256) as u8;
        }
        if case % 4 == 3 {
            bytes.truncate(next(bytes.len()));
        }
        let name = format!("{:020}.log", case);
        write(dir.path(), &name, &bytes);
        for args in [&[][..], &["--print-data-log"]] {
            same_as_kafka_or_its_prefix(dir.path(), &[&name], args);
        }
    }
    // Corrupt indexes of an intact segment.
    let (log, layout) = v2_segment();
    let entries: Vec<(i32, u32)> = layout.iter().map(|(p, o, _)| (*o as i32, *p)).collect();
    let mut times: Vec<(i64, i32)> = Vec::new();
    for (_, o, t) in &layout {
        if times.last().is_none_or(|(last, _)| t > last) {
            times.push((*t, *o as i32));
        }
    }
    for case in 0..3 {
        let sub = dir.path().join(format!("idx{case}"));
        std::fs::create_dir(&sub).unwrap();
        write(&sub, "00000000000000000000.log", &log);
        for (name, mut bytes) in [
            ("00000000000000000000.index", offset_index(&entries, 0)),
            ("00000000000000000000.timeindex", time_index(&times, 0)),
        ] {
            for _ in 0..=case {
                let at = next(bytes.len());
                bytes[at] ^= 1 << next(8);
            }
            if case == 2 {
                bytes.truncate(bytes.len() - 3);
            }
            write(&sub, name, &bytes);
            for args in [&[][..], &["--index-sanity-check"]] {
                same_as_kafka_or_its_prefix(&sub, &[name], args);
            }
        }
    }
}

/// A gzip batch whose size field grew over 8 bytes of garbage: Java's GZIPInputStream ignores
/// what follows the member, so Kafka still prints the records (and the CRC fails).
#[test]
fn garbage_after_a_gzip_member_is_ignored_like_java() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = batch(
        CompressionType::Gzip,
        0,
        vec![
            rec(TS, Some(b"k"), Some(b"v1")),
            rec(TS + 1, None, Some(b"v2")),
        ],
    );
    b.extend_from_slice(&[0x55; 8]);
    let size = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&size.to_be_bytes());
    write(dir.path(), "00000000000000000000.log", &b);
    let out = same_as_kafka(
        dir.path(),
        &["00000000000000000000.log"],
        &["--print-data-log"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("payload: v2"));
}

#[test]
fn non_consecutive_offsets_are_reported_like_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = batch(CompressionType::None, 0, vec![rec(TS, None, Some(b"a"))]);
    file.extend(batch(
        CompressionType::Gzip,
        5,
        vec![rec(TS, None, Some(b"b")), rec(TS, None, Some(b"c"))],
    ));
    file.extend(batch(
        CompressionType::None,
        9,
        vec![rec(TS, None, Some(b"d"))],
    ));
    write(dir.path(), "00000000000000000000.log", &file);
    let out = same_as_kafka(
        dir.path(),
        &["00000000000000000000.log"],
        &["--deep-iteration"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("0 is followed by 5"));
}

#[test]
fn indexes_match_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let (file, layout) = v2_segment();
    write(dir.path(), "00000000000000000000.log", &file);
    // A valid offset index every other batch, zero padded as a preallocated index is.
    let entries: Vec<(i32, u32)> = layout
        .iter()
        .step_by(2)
        .skip(1)
        .map(|(p, o, _)| (*o as i32, *p))
        .collect();
    write(
        dir.path(),
        "00000000000000000000.index",
        &offset_index(&entries, 5),
    );
    // Kafka's time index only holds increasing timestamps.
    let mut times: Vec<(i64, i32)> = Vec::new();
    for (_, o, t) in &layout {
        if times.last().is_none_or(|(last, _)| t > last) {
            times.push((*t, *o as i32));
        }
    }
    write(
        dir.path(),
        "00000000000000000000.timeindex",
        &time_index(&times, 3),
    );
    let files = [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ];
    for args in [&[][..], &["--verify-index-only"]] {
        let out = same_as_kafka(dir.path(), &files, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    // A zero-padded (untrimmed) time index fails the startup sanity check: Kafka's tool dies
    // with the CorruptIndexException, kcli reports its message and exits 1.
    let out = same_as_kafka_until_exception(dir.path(), &files, &["--index-sanity-check"]);
    assert_eq!(out.status.code(), Some(1));
    let trimmed = dir.path().join("trimmed");
    std::fs::create_dir(&trimmed).unwrap();
    write(&trimmed, "00000000000000000000.log", &file);
    write(
        &trimmed,
        "00000000000000000000.index",
        &offset_index(&entries, 0),
    );
    write(
        &trimmed,
        "00000000000000000000.timeindex",
        &time_index(&times, 0),
    );
    let out = same_as_kafka(&trimmed, &files, &["--index-sanity-check"]);
    assert_eq!(out.status.code(), Some(0));

    // Wrong entries: an offset that is not a batch's last, a timestamp that is not the batch's,
    // one out of order, an offset past the log.
    let sub = dir.path().join("bad");
    std::fs::create_dir(&sub).unwrap();
    write(&sub, "00000000000000000000.log", &file);
    let mut bad = entries.clone();
    bad[1].0 -= 1;
    write(&sub, "00000000000000000000.index", &offset_index(&bad, 0));
    let mut bad_times = times.clone();
    bad_times[0].0 += 1;
    bad_times.push((bad_times[1].0 - 1, layout[layout.len() - 1].1 as i32));
    bad_times.push((TS + 10_000, 1_000));
    write(
        &sub,
        "00000000000000000000.timeindex",
        &time_index(&bad_times, 0),
    );
    for (file, args) in [
        ("00000000000000000000.index", &[][..]),
        ("00000000000000000000.index", &["--verify-index-only"]),
        ("00000000000000000000.timeindex", &[]),
    ] {
        let out = same_as_kafka(&sub, &[file], args);
        assert_eq!(out.status.code(), Some(1), "{file} {args:?}");
    }

    // Empty index files.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    write(&empty, "00000000000000000000.log", &file);
    write(&empty, "00000000000000000000.index", &[]);
    write(&empty, "00000000000000000000.timeindex", &[]);
    same_as_kafka(
        &empty,
        &[
            "00000000000000000000.index",
            "00000000000000000000.timeindex",
        ],
        &[],
    );
}

#[test]
fn snapshots_txn_indexes_and_unknown_files_match_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = 2i32.to_be_bytes().to_vec();
    for (pid, last_offset, txn_first) in [(1000i64, 42i64, -1i64), (1001, -1, 40)] {
        body.extend_from_slice(&pid.to_be_bytes());
        body.extend_from_slice(&3i16.to_be_bytes());
        body.extend_from_slice(&9i32.to_be_bytes());
        body.extend_from_slice(&last_offset.to_be_bytes());
        body.extend_from_slice(&4i32.to_be_bytes());
        body.extend_from_slice(&TS.to_be_bytes());
        body.extend_from_slice(&7i32.to_be_bytes());
        body.extend_from_slice(&txn_first.to_be_bytes());
    }
    let mut snapshot = 1i16.to_be_bytes().to_vec();
    snapshot.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
    snapshot.extend_from_slice(&body);
    write(dir.path(), "00000000000000000050.snapshot", &snapshot);
    let mut corrupt = snapshot.clone();
    corrupt[20] ^= 1;
    write(dir.path(), "00000000000000000060.snapshot", &corrupt);
    write(
        dir.path(),
        "00000000000000000070.snapshot",
        &snapshot[..snapshot.len() - 5],
    );
    let mut txn = Vec::new();
    for (pid, first, last, lso) in [(7i64, 10i64, 20i64, 5i64), (8, 30, 31, 30)] {
        txn.extend_from_slice(&0i16.to_be_bytes());
        for x in [pid, first, last, lso] {
            txn.extend_from_slice(&x.to_be_bytes());
        }
    }
    txn.extend_from_slice(&[0; 10]);
    write(dir.path(), "00000000000000000000.txnindex", &txn);
    write(dir.path(), "notes.txt", b"hello");
    same_as_kafka(dir.path(), &["00000000000000000050.snapshot"], &[]);
    same_as_kafka(dir.path(), &["00000000000000000060.snapshot"], &[]);
    same_as_kafka(dir.path(), &["00000000000000000070.snapshot"], &[]);
    same_as_kafka(
        dir.path(),
        &["00000000000000000000.txnindex", "notes.txt"],
        &[],
    );
}

#[test]
fn exit_codes_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = kcli(dir.path(), &["00000000000000000000.log"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("00000000000000000000.log") && err.lines().count() == 1,
        "{err}"
    );
    write(dir.path(), "x.log", b"");
    let out = kcli(dir.path(), &["x.log"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let (file, _) = v2_segment();
    write(dir.path(), "00000000000000000000.log", &file);
    let out = kcli(dir.path(), &["00000000000000000000.log"], &[]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn json_lines_describe_every_batch_and_record() {
    let dir = tempfile::tempdir().unwrap();
    let (file, layout) = v2_segment();
    write(dir.path(), "00000000000000000000.log", &file);
    let out = kcli(
        dir.path(),
        &["00000000000000000000.log"],
        &["--format", "json", "--deep-iteration"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), layout.len());
    let first = &lines[0];
    for field in [
        "base_offset",
        "last_offset",
        "count",
        "position",
        "size",
        "magic",
        "compression",
        "timestamp_type",
        "max_timestamp",
        "partition_leader_epoch",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "is_transactional",
        "is_control",
        "crc",
        "is_valid",
    ] {
        assert!(first.get(field).is_some(), "missing {field}");
    }
    let records = first["records"].as_array().unwrap();
    assert_eq!(records[0]["key"], "key");
    assert_eq!(records[0]["headers"][1]["value"], serde_json::Value::Null);
    assert_eq!(records[1]["key"], serde_json::Value::Null);
    assert_eq!(records[3]["key"]["base64"], "//5iaW4=");
    assert_eq!(lines[1]["compression"], "gzip");
}

#[test]
fn json_lines_cover_legacy_sets_indexes_and_trailers() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = legacy_segment();
    let entries = [(5i32, 118u32)];
    log.extend_from_slice(&[0, 0, 0]);
    write(dir.path(), "00000000000000000000.log", &log);
    write(
        dir.path(),
        "00000000000000000000.index",
        &offset_index(&entries, 2),
    );
    write(
        dir.path(),
        "00000000000000000000.timeindex",
        &time_index(&[(-1, 5)], 0),
    );
    let files = [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ];
    let out = kcli(
        dir.path(),
        &files,
        &["--format", "json", "--deep-iteration"],
    );
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let batches: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "batch").collect();
    assert_eq!(batches.len(), 12);
    assert_eq!(batches[3]["magic"], 0);
    assert_eq!(batches[3]["count"], serde_json::Value::Null);
    assert_eq!(batches[3]["compression"], "gzip");
    let offsets: Vec<i64> = batches[3]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["offset"].as_i64().unwrap())
        .collect();
    assert_eq!(offsets, [3, 4, 5]);
    assert_eq!(batches[3]["records"][0]["is_valid"], true);
    let trailer = lines.iter().find(|l| l["type"] == "invalid_bytes").unwrap();
    assert_eq!(trailer["size"], 3);
    let index: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "offset_index_entry")
        .collect();
    assert_eq!(index.len(), 1);
    assert_eq!(index[0]["offset"], 5);
    assert_eq!(index[0]["position"], 118);
    let time: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "time_index_entry")
        .collect();
    assert_eq!(time.len(), 1);
    // The trailing bytes and the time index's -1 timestamp are check failures.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn summary_prints_one_table_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let (file, layout) = v2_segment();
    write(dir.path(), "00000000000000000000.log", &file);
    let out = kcli(dir.path(), &["00000000000000000000.log"], &["--summary"]);
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(s.contains("| batches "), "{s}");
    assert!(s.contains(&layout.len().to_string()), "{s}");
    assert!(s.contains("gzip, lz4, none, snappy, zstd"), "{s}");
    // Timestamps as milliseconds and, for a person, as UTC times.
    let row = s.lines().find(|l| l.contains("timestamps (UTC)")).unwrap();
    assert!(
        row.contains("Z .. ") && row.matches('T').count() >= 2,
        "{row}"
    );
}

/// A log dir as a broker leaves it: checkpoints and metadata files beside partition
/// directories, each with a segment, its indexes and files dump-segment does not read.
fn log_dir_with_two_partitions(log_dir: &Path) {
    let (file, _) = v2_segment();
    for partition in ["orders-0", "orders-1"] {
        let dir = log_dir.join(partition);
        std::fs::create_dir_all(&dir).unwrap();
        write(&dir, "00000000000000000000.log", &file);
        write(&dir, "00000000000000000000.index", &offset_index(&[], 0));
        write(&dir, "00000000000000000000.timeindex", &time_index(&[], 0));
        write(&dir, "leader-epoch-checkpoint", b"0\n0\n");
        write(&dir, "partition.metadata", b"version: 0\n");
    }
    write(log_dir, "meta.properties", b"version=0\n");
    write(log_dir, "recovery-point-offset-checkpoint", b"0\n0\n");
}

#[test]
fn directories_stand_for_their_segment_files_in_every_mode() {
    let root = tempfile::tempdir().unwrap();
    log_dir_with_two_partitions(&root.path().join("data"));
    let segment_files = |partition: &str| {
        ["log", "index", "timeindex"].map(|s| format!("data/{partition}/00000000000000000000.{s}"))
    };
    for (dir, files) in [
        ("data/orders-1", segment_files("orders-1").to_vec()),
        (
            "data",
            [segment_files("orders-0"), segment_files("orders-1")].concat(),
        ),
    ] {
        let summary = kcli(root.path(), &[dir], &["--summary"]);
        let (stdout, stderr) = (text(&summary.stdout), text(&summary.stderr));
        assert_eq!(summary.status.code(), Some(0), "{stderr}");
        assert_eq!(
            stderr, "",
            "{dir}: the directory is not a file to report on"
        );
        let headers: Vec<&str> = stdout
            .lines()
            .filter(|l| l.contains("data/"))
            .map(|l| l.trim_matches(|c| c == '|' || c == ' '))
            .collect();
        assert_eq!(
            headers, files,
            "{dir}: one table per file, in order:\n{stdout}"
        );

        let dump = kcli(root.path(), &[dir], &[]);
        assert_eq!(dump.status.code(), Some(0), "{}", text(&dump.stderr));
        assert_eq!(text(&dump.stderr), "", "{dir}");
        let dump_stdout = text(&dump.stdout);
        let dumping: Vec<&str> = dump_stdout
            .lines()
            .filter_map(|l| l.strip_prefix("Dumping "))
            .collect();
        assert_eq!(dumping, files, "{dir}");
        // The same dump as naming the files.
        let named: Vec<&str> = files.iter().map(String::as_str).collect();
        assert_eq!(dump.stdout, kcli(root.path(), &named, &[]).stdout, "{dir}");

        let json = kcli(root.path(), &[dir], &["--format", "json"]);
        assert_eq!(json.status.code(), Some(0), "{}", text(&json.stderr));
        let logs: std::collections::BTreeSet<String> = text(&json.stdout)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|v| v["file"].as_str().unwrap().to_owned())
            .collect();
        assert!(logs.iter().all(|f| files.contains(f)), "{logs:?}");
    }

    let empty = root.path().join("empty/orders-0");
    std::fs::create_dir_all(&empty).unwrap();
    let out = kcli(root.path(), &["empty"], &["--summary"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("empty") && err.lines().count() == 1, "{err}");
}
