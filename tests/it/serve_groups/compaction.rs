//! `__consumer_offsets` stays compact: a loop of offset commits for the same few partitions,
//! with small offsets segments and an eager cleaner, leaves the offsets partition bounded, and
//! the latest commit is still what OffsetFetch answers, also after a restart.

use std::time::{Duration, Instant};

use super::{FAST, commit, fetch_offsets, find_coordinator, produce};
use crate::serve_support::{KafkaConn, TestBroker};

const GROUP: &str = "loop";
const TOPIC: &str = "committed";
const PARTITIONS: i32 = 4;
const SEGMENT_BYTES: u64 = 64 * 1024;

/// Bytes of `.log` files in the broker's `__consumer_offsets` partitions, and the highest
/// segment base offset among them.
fn offsets_logs(broker: &TestBroker) -> (u64, i64) {
    let (mut total, mut last_base) = (0, 0);
    for dir in std::fs::read_dir(broker.data_dir()).unwrap() {
        let dir = dir.unwrap();
        if !dir
            .file_name()
            .to_string_lossy()
            .starts_with("__consumer_offsets-")
        {
            continue;
        }
        // The cleaner replaces and deletes segments while this reads: a file listed may be
        // gone by the time it is looked at.
        let Ok(files) = std::fs::read_dir(dir.path()) else {
            continue;
        };
        for f in files.filter_map(Result::ok) {
            let name = f.file_name().to_string_lossy().into_owned();
            if let Some(base) = name.strip_suffix(".log") {
                let Ok(meta) = f.metadata() else { continue };
                total += meta.len();
                last_base = last_base.max(base.parse::<i64>().unwrap());
            }
        }
    }
    (total, last_base)
}

fn latest(conn: &mut KafkaConn) -> (i16, Vec<i64>) {
    let partitions: Vec<i32> = (0..PARTITIONS).collect();
    let (code, rows) = fetch_offsets(conn, 7, GROUP, TOPIC, &partitions);
    (code, rows.into_iter().map(|(o, _, _)| o).collect())
}

#[test]
fn a_commit_loop_leaves_consumer_offsets_bounded() {
    let mut overrides = FAST.to_vec();
    overrides.extend([
        ("offsets.topic.num.partitions", "1"),
        ("offsets.topic.segment.bytes", "65536"),
        ("log.cleaner.backoff.ms", "100"),
        ("log.cleaner.min.cleanable.ratio", "0.1"),
    ]);
    let mut broker = TestBroker::start(&overrides);
    let mut c = KafkaConn::connect(broker.port());
    produce(&mut c, TOPIC, PARTITIONS);
    find_coordinator(&mut c, GROUP);
    // Each commit writes four records of about 200 bytes: 3000 commits are ~2.4 MB, dozens of
    // segments of 64 KiB.
    let commits = 3000i64;
    let metadata = "m".repeat(100);
    for i in 0..commits {
        let offsets: Vec<(i32, i64, &str)> = (0..PARTITIONS)
            .map(|p| (p, i * 10 + i64::from(p), metadata.as_str()))
            .collect();
        let codes = commit(&mut c, 8, GROUP, TOPIC, &offsets);
        assert!(codes.iter().all(|c| *c == 0), "commit {i}: {codes:?}");
    }
    let want: Vec<i64> = (0..PARTITIONS)
        .map(|p| (commits - 1) * 10 + i64::from(p))
        .collect();
    assert_eq!(latest(&mut c), (0, want.clone()));
    // The cleaner keeps the latest record per key, so a few segments' worth remains.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (bytes, last_base) = offsets_logs(&broker);
        if bytes <= 4 * SEGMENT_BYTES {
            // The log did roll through its 12,000 records: the old segments were cleaned.
            assert!(last_base > 6000, "the active segment starts at {last_base}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "__consumer_offsets still holds {bytes} bytes of logs"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // What is left loads back to the same offsets.
    broker.stop();
    broker.restart();
    let mut c = KafkaConn::connect(broker.port());
    find_coordinator(&mut c, GROUP);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (code, offsets) = latest(&mut c);
        if code == 0 {
            assert_eq!(offsets, want);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "OffsetFetch after restart: {code}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    broker.stop();
}
