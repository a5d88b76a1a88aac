//! kafka-dump-log (Kafka's `kafka.tools.DumpLogSegments`) on the log dir of a running
//! `kcli serve`, written by Kafka's console producer and console consumer: the partition's
//! sealed and active segments, their offset and time indexes, and `__consumer_offsets` with
//! `--offsets-decoder`; `kcli dump-segment` must print the same on the same files while the
//! broker holds its lock, as Kafka's tool does.

use std::path::Path;

use super::support::{BROKER, java};
use super::*;
use crate::dump_segment::support::{same_as_kafka, same_as_kafka_until_exception};
use crate::serve_support::{TestBroker, run_within};

/// The file names in `dir` ending in one of `exts`, sorted.
fn files(dir: &Path, exts: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| exts.iter().any(|x| n.ends_with(x)))
        .collect();
    names.sort();
    names
}

fn tool(broker: &TestBroker, class: &str, args: &[&str], stdin: &str) -> String {
    let mut cmd = java(class);
    for a in args {
        cmd.arg(a.replace(B, &broker.bootstrap()));
    }
    let (code, out, err) = run_within(cmd, stdin.as_bytes(), std::time::Duration::from_secs(120));
    assert_eq!(code, 0, "{class} {args:?}:\n{out}\n{err}");
    out
}

#[test]
fn dump_log_on_a_live_broker_dir_matches_dump_segment() {
    let mut broker = TestBroker::start(BROKER);
    // Small segments and a dense index, so there are sealed segments with index entries.
    tool(
        &broker,
        TOPICS,
        &[
            BS,
            B,
            "--create",
            "--topic",
            "d",
            "--partitions",
            "1",
            "--config",
            "segment.bytes=4096",
            "--config",
            "index.interval.bytes=256",
        ],
        "",
    );
    let lines: String = (0..200)
        .map(|i| format!("h:{i}\tkey-{i}\tvalue {i} {}\n", "x".repeat(i % 37)))
        .collect();
    tool(
        &broker,
        PRODUCER,
        &[
            BS,
            B,
            "--topic",
            "d",
            "--property",
            "parse.key=true",
            "--property",
            "parse.headers=true",
            "--batch-size",
            "600",
        ],
        &lines,
    );
    tool(
        &broker,
        CONSUMER,
        &[
            BS,
            B,
            "--topic",
            "d",
            "--from-beginning",
            "--max-messages",
            "200",
            "--group",
            "dumper",
        ],
        "",
    );

    let dir = broker.data_dir().join("d-0");
    let logs = files(&dir, &[".log"]);
    assert!(logs.len() > 2, "expected rolled segments: {logs:?}");
    let every = files(&dir, &[".log", ".index", ".timeindex"]);
    let every: Vec<&str> = every.iter().map(String::as_str).collect();
    for args in [
        &[][..],
        &["--deep-iteration"],
        &["--print-data-log"],
        &["--verify-index-only"],
    ] {
        let out = same_as_kafka(&dir, &every, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    // The active segment's indexes are preallocated (zero-filled past their entries): Kafka's
    // sanity check fails on its time index ("the last timestamp is 0"), and so does kcli's.
    let out = same_as_kafka_until_exception(&dir, &every, &["--index-sanity-check"]);
    assert_eq!(out.status.code(), Some(1));
    // The last segment holds the last records, and is still the broker's active one.
    let out = same_as_kafka(&dir, &[logs.last().unwrap()], &["--print-data-log"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("key: key-199 payload: value 199"), "{text}");
    assert!(text.contains("headerKeys: [h]"), "{text}");

    let offsets = broker.data_dir().join("__consumer_offsets-0");
    let seg = files(&offsets, &[".log"]);
    let seg: Vec<&str> = seg.iter().map(String::as_str).collect();
    let out = same_as_kafka(&offsets, &seg, &["--offsets-decoder"]);
    let text = String::from_utf8_lossy(&out.stdout);
    // The consumer's commit of every record, and its group before and after it left.
    let commit = r#"key: {"type":"1","data":{"group":"dumper","topic":"d","partition":0}} payload: {"version":"3","data":{"offset":200,"#;
    assert!(text.contains(commit), "{text}");
    let group = r#"key: {"type":"2","data":{"group":"dumper"}}"#;
    assert_eq!(text.matches(group).count(), 2, "{text}");
    broker.stop();
}
