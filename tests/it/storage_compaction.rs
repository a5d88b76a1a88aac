//! The log cleaner on real files and in `kcli serve`: a log with many updates per key compacts to
//! the latest value of each key at the same offsets; tombstones stay until their batch's delete
//! horizon (`delete.retention.ms` after the cleaning that first kept them) and go at the next
//! cleaning after it; compressed batches stay compressed with their codec and readable;
//! `min.compaction.lag.ms` holds young segments back and `max.compaction.lag.ms` forces a
//! cleaning below `min.cleanable.dirty.ratio`; retention still deletes for `compact,delete`;
//! random workloads keep every key's latest record against a model; truncation and deletion
//! abort a running cleaning; aborted transactional data goes and transaction markers stay while
//! their data does; Kafka's DumpLogSegments reads cleaned segments as kcli does. `serve` runs the cleaner in `kcli serve`, with kill -9.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kcli::cluster::TopicPartition;
use kcli::protocol::record::batch::RecordBatchHeader;
use kcli::protocol::record::batch_iter::BatchIter;
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use kcli::protocol::record::records::{batch_records, for_each_record};
use kcli::storage::log_cleaner::{CleanerConfig, LogCleaner};
use kcli::storage::log_config::{CleanupPolicy, LogConfig};
use kcli::storage::log_manager::SharedLog;
use kcli::storage::log_reads::FetchIsolation;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::unified_log::UnifiedLog;

use crate::storage_support::T0;

mod serve;
mod transactions;

/// (offset, key, value or None for a tombstone, batch codec, batch has a delete horizon).
type Row = (i64, String, Option<String>, CompressionType, bool);

fn compact_config() -> LogConfig {
    LogConfig {
        segment_bytes: 2048,
        index_interval_bytes: 256,
        segment_index_bytes: 4096,
        file_delete_delay_ms: 0,
        min_cleanable_dirty_ratio: 0.01,
        cleanup_policy: CleanupPolicy {
            delete: false,
            compact: true,
        },
        ..LogConfig::default()
    }
}

pub(super) fn keyed_batch(
    records: &[(String, Option<String>)],
    timestamp: i64,
    codec: CompressionType,
) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(codec);
    b.records = records
        .iter()
        .map(|(k, v)| {
            SimpleRecord::new(
                timestamp,
                Some(k.clone().into_bytes()),
                v.clone().map(String::into_bytes),
            )
        })
        .collect();
    b.build().unwrap()
}

struct Fixture {
    _root: tempfile::TempDir,
    log_dir: PathBuf,
    log: SharedLog,
    cleaner: LogCleaner,
}

fn fixture(config: LogConfig) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let log_dir = root.path().to_path_buf();
    let log = UnifiedLog::open(
        log_dir.join("t-0"),
        TopicPartition::new("t", 0),
        config,
        0,
        0,
        true,
        T0,
    )
    .unwrap();
    let cleaner = LogCleaner::new(
        CleanerConfig {
            dedupe_buffer_size: 4 << 20,
            ..CleanerConfig::default()
        },
        std::slice::from_ref(&log_dir),
    )
    .unwrap();
    Fixture {
        _root: root,
        log_dir,
        log: Arc::new(Mutex::new(log)),
        cleaner,
    }
}

impl Fixture {
    fn append(&self, batch: &[u8], now: i64) {
        let mut log = self.log.lock().unwrap();
        log.append_as_leader(batch, 0, AppendOrigin::Client, now)
            .unwrap();
        let end = log.log_end_offset();
        log.update_high_watermark(end).unwrap();
    }

    /// One grab-and-clean at `now`, as a cleaner thread does it; whether a log was cleaned.
    fn clean_once(&self, now: i64) -> bool {
        let logs = vec![(
            TopicPartition::new("t", 0),
            Arc::clone(&self.log),
            self.log_dir.clone(),
        )];
        let manager = self.cleaner.manager();
        let Some(cleanable) = manager.grab_filthiest_compacted_log(&logs, manager.removals(), now)
        else {
            return false;
        };
        let mut cleaner = self.cleaner.new_cleaner(0);
        let (end, _) = cleaner.clean(&cleanable, now, &|| Ok(())).unwrap();
        manager.done_cleaning(&cleanable.topic_partition, &self.log_dir, end);
        true
    }

    fn rows(&self) -> Vec<Row> {
        rows(&self.log.lock().unwrap())
    }
}

/// Every record of the log, read through the log's own read path.
fn rows(log: &UnifiedLog) -> Vec<Row> {
    let mut out = Vec::new();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let info = log
            .read(next, 1 << 20, FetchIsolation::LogEnd, true)
            .unwrap();
        let bytes = info.records.read_to_vec().unwrap();
        assert!(!bytes.is_empty(), "empty read at {next}");
        for entry in BatchIter::new(&bytes) {
            let entry = entry.unwrap();
            assert!(entry.is_valid(), "bad CRC at {next}");
            let h = RecordBatchHeader::parse(entry.bytes).unwrap();
            let codec = h.compression().unwrap();
            let records = batch_records(entry.bytes, &h, 1 << 30).unwrap();
            for_each_record(&records, h.records_count, |_, r| {
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                out.push((
                    r.offset(h.base_offset),
                    text(r.key.unwrap()),
                    r.value.map(text),
                    codec,
                    h.has_delete_horizon(),
                ));
            })
            .unwrap();
            next = h.next_offset();
        }
    }
    out
}

/// The latest (offset, value) of every key among `rows`.
fn latest(rows: &[Row]) -> BTreeMap<String, (i64, Option<String>)> {
    rows.iter()
        .map(|(o, k, v, _, _)| (k.clone(), (*o, v.clone())))
        .collect()
}

#[test]
fn many_updates_per_key_compact_to_the_latest_values() {
    let f = fixture(compact_config());
    for round in 0..80 {
        let records: Vec<_> = (0..5)
            .map(|i| {
                (
                    format!("k{}", (round * 5 + i) % 12),
                    Some(format!("v{round}-{i}")),
                )
            })
            .collect();
        f.append(
            &keyed_batch(&records, T0 + round, CompressionType::None),
            T0,
        );
    }
    let before = f.rows();
    let segments_before = f.log.lock().unwrap().number_of_segments();
    assert!(segments_before > 3, "{segments_before} segments");
    assert!(f.clean_once(T0));
    let after = f.rows();
    let log = f.log.lock().unwrap();
    let active_base = *log.segment_base_offsets().last().unwrap();
    drop(log);
    // Below the active segment only each key's latest record is left; offsets never move.
    let below =
        |rows: &[Row]| -> Vec<Row> { rows.iter().filter(|r| r.0 < active_base).cloned().collect() };
    let cleaned = below(&after);
    let expected_cleaned = latest(&below(&before));
    assert_eq!(cleaned.len(), expected_cleaned.len());
    for (offset, key, value, _, _) in &cleaned {
        assert_eq!(expected_cleaned[key], (*offset, value.clone()), "{key}");
    }
    // The active segment is untouched, and every key still reads its latest value.
    let active = |rows: &[Row]| -> Vec<Row> {
        rows.iter()
            .filter(|r| r.0 >= active_base)
            .cloned()
            .collect()
    };
    assert_eq!(active(&after), active(&before));
    assert_eq!(latest(&after), latest(&before));
    assert!(
        after.len() < before.len() / 2,
        "{} of {}",
        after.len(),
        before.len()
    );
    // Groups are bounded by segment.bytes over the source segments, so full segments are
    // cleaned one by one; the small cleaned ones merge at the next cleaning.
    assert_eq!(f.log.lock().unwrap().number_of_segments(), segments_before);
    // Progress is checkpointed: nothing is left to clean now.
    let checkpoint = std::fs::read_to_string(f.log_dir.join("cleaner-offset-checkpoint")).unwrap();
    assert!(checkpoint.starts_with("0\n1\nt 0 "), "{checkpoint}");
    assert!(!f.clean_once(T0));
    // The cleaned log reopens (as after a crash) with the same contents.
    let reopened = UnifiedLog::open(
        f.log_dir.join("t-0"),
        TopicPartition::new("t", 0),
        compact_config(),
        0,
        0,
        false,
        T0,
    )
    .unwrap();
    assert_eq!(rows(&reopened), after);
    drop(reopened);
    for round in 80..160 {
        let records: Vec<_> = (0..5)
            .map(|i| {
                (
                    format!("k{}", (round * 5 + i) % 12),
                    Some(format!("v{round}-{i}")),
                )
            })
            .collect();
        f.append(
            &keyed_batch(&records, T0 + round, CompressionType::None),
            T0,
        );
    }
    let before = f.rows();
    let segments = f.log.lock().unwrap().number_of_segments();
    assert!(f.clean_once(T0));
    // Emptied segments merge into the next group: at most its first and last base remain.
    assert!(f.log.lock().unwrap().number_of_segments() < segments);
    assert_eq!(latest(&f.rows()), latest(&before));
}

#[test]
fn tombstones_go_after_delete_retention_ms() {
    let config = LogConfig {
        delete_retention_ms: 60_000,
        ..compact_config()
    };
    let f = fixture(config);
    let now = T0 + 1000;
    let fill = |round: i64| {
        for i in 0..12 {
            let records = vec![(format!("fill{}", i % 4), Some(format!("r{round}-{i}")))];
            f.append(&keyed_batch(&records, now, CompressionType::None), now);
        }
    };
    f.append(
        &keyed_batch(
            &[("gone".into(), Some("v".into()))],
            now,
            CompressionType::None,
        ),
        now,
    );
    f.append(
        &keyed_batch(
            &[("gone".into(), None), ("kept".into(), Some("k".into()))],
            now,
            CompressionType::None,
        ),
        now,
    );
    fill(0);
    f.log.lock().unwrap().roll(None, now).unwrap();
    assert!(f.clean_once(now));
    // The first cleaning keeps the tombstone and gives its batch a delete horizon.
    let rows = f.rows();
    let tombstone = rows.iter().find(|r| r.1 == "gone").unwrap();
    assert_eq!(tombstone.2, None);
    assert!(tombstone.4, "no delete horizon on {tombstone:?}");
    // Before the horizon another cleaning still keeps it.
    fill(1);
    f.log.lock().unwrap().roll(None, now).unwrap();
    assert!(f.clean_once(now + 59_000));
    assert!(f.rows().iter().any(|r| r.1 == "gone"));
    // Past the horizon it goes; the other record of its batch stays.
    fill(2);
    f.log.lock().unwrap().roll(None, now).unwrap();
    assert!(f.clean_once(now + 60_001));
    let rows = f.rows();
    assert!(!rows.iter().any(|r| r.1 == "gone"), "{rows:?}");
    assert_eq!(
        rows.iter().find(|r| r.1 == "kept").unwrap().2.as_deref(),
        Some("k")
    );
}

#[test]
fn a_producers_last_batch_keeps_its_header_when_emptied() {
    let f = fixture(compact_config());
    let at = |base: i64, producer_id: i64, value: &str| {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.base_offset = base;
        b.producer_id = producer_id;
        b.producer_epoch = if producer_id >= 0 { 3 } else { -1 };
        b.base_sequence = if producer_id >= 0 { base as i32 } else { -1 };
        b.records = vec![SimpleRecord::new(
            T0,
            Some(b"a".to_vec()),
            Some(value.as_bytes().to_vec()),
        )];
        b.build().unwrap()
    };
    {
        let mut log = f.log.lock().unwrap();
        for (base, pid, value) in [(0, 7, "1"), (1, 7, "2"), (2, -1, "3")] {
            log.append_as_follower(&at(base, pid, value), T0).unwrap();
        }
        log.roll(None, T0).unwrap();
        let end = log.log_end_offset();
        log.update_high_watermark(end).unwrap();
    }
    assert!(f.clean_once(T0));
    let log = f.log.lock().unwrap();
    let bytes = log
        .read(0, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap()
        .records
        .read_to_vec()
        .unwrap();
    let batches: Vec<(i64, i32, i64, i32)> = BatchIter::new(&bytes)
        .map(|e| {
            let h = RecordBatchHeader::parse(e.unwrap().bytes).unwrap();
            (
                h.base_offset,
                h.last_offset_delta,
                h.producer_id,
                h.records_count,
            )
        })
        .collect();
    // Producer 7's first batch goes; its last one, superseded, stays as an empty header that
    // still carries its offsets and producer id.
    assert_eq!(batches, vec![(1, 0, 7, 0), (2, 0, -1, 1)]);
}

/// Random workloads (keys, tombstones, codecs, rolls) against a model of the latest record per
/// key, cleaned repeatedly while the clock passes delete horizons: every record left is one
/// that was produced at that offset; every key's last record is its latest unless that was a
/// tombstone old enough to go; offsets only increase; a reopened log reads the same.
#[test]
fn random_workloads_keep_the_latest_record_of_every_key() {
    use rand::{Rng, SeedableRng};
    let (mut cleanings, mut tombstones_gone) = (0, 0);
    for seed in 0..8u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let delete_retention_ms = 10_000;
        let f = fixture(LogConfig {
            delete_retention_ms,
            segment_bytes: rng.random_range(600..3000),
            ..compact_config()
        });
        let mut produced: BTreeMap<i64, (String, Option<String>)> = BTreeMap::new();
        let mut now = T0;
        for step in 0..60 {
            let codec = CompressionType::ALL[rng.random_range(0..5)];
            let records: Vec<(String, Option<String>)> = (0..rng.random_range(1..6))
                .map(|i| {
                    let key = format!("k{}", rng.random_range(0..15));
                    let value = rng.random_bool(0.8).then(|| format!("{seed}-{step}-{i}"));
                    (key, value)
                })
                .collect();
            let first = f.log.lock().unwrap().log_end_offset();
            f.append(&keyed_batch(&records, now, codec), now);
            for (i, r) in records.into_iter().enumerate() {
                produced.insert(first + i as i64, r);
            }
            if rng.random_bool(0.1) {
                f.log.lock().unwrap().roll(None, now).unwrap();
            }
            if rng.random_bool(0.2) {
                now += rng.random_range(0..2 * delete_retention_ms);
                cleanings += usize::from(f.clean_once(now));
                check_against_model(&f.rows(), &produced, seed);
            }
        }
        let rows = f.rows();
        tombstones_gone += check_against_model(&rows, &produced, seed);
        let reopened = UnifiedLog::open(
            f.log_dir.join("t-0"),
            TopicPartition::new("t", 0),
            f.log.lock().unwrap().config().clone(),
            0,
            0,
            false,
            T0,
        )
        .unwrap();
        assert_eq!(self::rows(&reopened), rows, "seed {seed}");
    }
    // The workloads did compact, and did outlive some tombstones.
    assert!(
        cleanings > 8 && tombstones_gone > 0,
        "{cleanings} cleanings, {tombstones_gone} tombstones gone"
    );
}

/// Checks `rows` against what was produced; returns how many keys are gone (their latest
/// record a tombstone that was removed).
fn check_against_model(
    rows: &[Row],
    produced: &BTreeMap<i64, (String, Option<String>)>,
    seed: u64,
) -> usize {
    let mut last = -1;
    for (offset, key, value, _, _) in rows {
        assert!(*offset > last, "seed {seed}: offsets go back at {offset}");
        last = *offset;
        assert_eq!(
            produced.get(offset),
            Some(&(key.clone(), value.clone())),
            "seed {seed}: offset {offset}"
        );
    }
    let expected: BTreeMap<&String, (i64, &Option<String>)> =
        produced.iter().map(|(o, (k, v))| (k, (*o, v))).collect();
    let got: BTreeMap<&String, (i64, &Option<String>)> =
        rows.iter().map(|(o, k, v, _, _)| (k, (*o, v))).collect();
    let mut gone = 0;
    for (key, (offset, value)) in &expected {
        match got.get(key) {
            Some(found) => assert_eq!(found, &(*offset, *value), "seed {seed}: {key}"),
            None => {
                assert!(value.is_none(), "seed {seed}: {key} lost its latest value");
                gone += 1;
            }
        }
    }
    gone
}

#[test]
fn compressed_batches_stay_compressed_and_readable() {
    for codec in CompressionType::ALL {
        let f = fixture(compact_config());
        for round in 0..30 {
            let records: Vec<_> = (0..6)
                .map(|i| {
                    (
                        format!("k{}", i % 3),
                        Some(format!("{codec}-{round}-{i}-{}", "x".repeat(40))),
                    )
                })
                .collect();
            f.append(&keyed_batch(&records, T0, codec), T0);
        }
        let before = f.rows();
        assert!(f.clean_once(T0));
        let after = f.rows();
        assert!(after.len() < before.len(), "{codec}");
        assert!(after.iter().all(|r| r.3 == codec), "{codec}: {after:?}");
        assert_eq!(latest(&after), latest(&before), "{codec}");
    }
}

#[test]
fn kafkas_dump_log_segments_reads_cleaned_segments_as_kcli_does() {
    // Kafka 3.9.1's DumpLogSegments reads the cleaned batches (CRCs, delete horizons, every
    // codec) and indexes exactly as kcli's dump-segment does.
    let f = fixture(LogConfig {
        delete_retention_ms: 60_000,
        ..compact_config()
    });
    for (round, codec) in CompressionType::ALL.iter().cycle().take(25).enumerate() {
        let mut records: Vec<_> = (0..4)
            .map(|i| {
                (
                    format!("k{}", (round + i) % 6),
                    Some(format!("v{round}-{i}")),
                )
            })
            .collect();
        if round % 7 == 3 {
            records.push((format!("gone{round}"), None));
        }
        f.append(&keyed_batch(&records, T0 + round as i64, *codec), T0);
    }
    f.log.lock().unwrap().roll(None, T0).unwrap();
    assert!(f.clean_once(T0 + 1000));
    let dir = f.log_dir.join("t-0");
    // The cleaned segments: everything but the active one (whose indexes are still
    // preallocated, which Kafka's tool reads differently).
    let active = kcli::storage::file_names::filename_prefix_from_offset(
        *f.log.lock().unwrap().segment_base_offsets().last().unwrap(),
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log") || n.ends_with(".index") || n.ends_with(".timeindex"))
        .filter(|n| !n.starts_with(&active))
        .collect();
    names.sort();
    let files: Vec<&str> = names.iter().map(String::as_str).collect();
    use crate::dump_segment::support::{kafka, kcli, text};
    let args = ["--deep-iteration", "--print-data-log"];
    let (theirs, ours) = (kafka(&dir, &files, &args), kcli(&dir, &files, &args));
    let text = text(&ours.stdout);
    assert_eq!(text, crate::dump_segment::support::text(&theirs.stdout));
    // Both report the offset gaps compaction leaves; Kafka lists the files in hash order.
    let sorted = |b: &[u8]| {
        let mut lines: Vec<String> = String::from_utf8_lossy(b)
            .lines()
            .map(String::from)
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&ours.stderr), sorted(&theirs.stderr));
    assert!(String::from_utf8_lossy(&ours.stderr).contains("Non-consecutive offsets"));
    // The kept tombstones' batches carry their delete horizon.
    assert!(
        text.contains(&format!(
            "deleteHorizonMs: OptionalLong[{}]",
            T0 + 1000 + 60_000
        )),
        "{text}"
    );
}

#[test]
fn compaction_lags_bound_what_is_cleaned() {
    // Records younger than min.compaction.lag.ms are not cleaned.
    let young = fixture(LogConfig {
        min_compaction_lag_ms: 3_600_000,
        ..compact_config()
    });
    for round in 0..30 {
        let records = vec![("k".to_string(), Some(format!("v{round}")))];
        young.append(&keyed_batch(&records, T0, CompressionType::None), T0);
    }
    let rows = young.rows().len();
    assert!(!young.clean_once(T0 + 1000));
    assert!(young.clean_once(T0 + 3_600_001));
    assert!(young.rows().len() < rows);
    // Below the dirty ratio nothing is cleaned, unless max.compaction.lag.ms has passed. (The
    // ratio is of the cleanable part to the clean plus cleanable parts: a log never cleaned is
    // all dirty.)
    let lagging = fixture(LogConfig {
        min_cleanable_dirty_ratio: 0.99,
        max_compaction_lag_ms: 60_000,
        ..compact_config()
    });
    let append_updates = |from: usize| {
        for round in from..from + 30 {
            let records = vec![("k".to_string(), Some(format!("v{round}")))];
            lagging.append(&keyed_batch(&records, T0, CompressionType::None), T0);
        }
    };
    append_updates(0);
    assert!(lagging.clean_once(T0 + 1000));
    append_updates(30);
    let rows = lagging.rows().len();
    assert!(!lagging.clean_once(T0 + 2000));
    assert_eq!(lagging.rows().len(), rows);
    assert!(lagging.clean_once(T0 + 60_001));
    assert!(lagging.rows().len() < rows);
}

#[test]
fn retention_still_deletes_segments_of_compact_delete_logs() {
    let f = fixture(LogConfig {
        retention_ms: 1000,
        cleanup_policy: CleanupPolicy {
            delete: true,
            compact: true,
        },
        ..compact_config()
    });
    for round in 0..30 {
        let records = vec![(format!("k{round}"), Some("v".repeat(100)))];
        f.append(&keyed_batch(&records, T0, CompressionType::None), T0);
    }
    let segments = f.log.lock().unwrap().number_of_segments();
    assert!(segments > 2);
    // A cleaner pass runs the compacted logs' retention (records from 2026-01-01 are old).
    let logs: kcli::storage::log_cleaner::LogSource = {
        let log = Arc::clone(&f.log);
        let dir = f.log_dir.clone();
        Arc::new(move || vec![(TopicPartition::new("t", 0), Arc::clone(&log), dir.clone())])
    };
    let mut cleaner = f.cleaner.new_cleaner(0);
    f.cleaner.do_work(
        &mut cleaner,
        &logs,
        &tokio_util::sync::CancellationToken::new(),
    );
    let log = f.log.lock().unwrap();
    assert!(log.log_start_offset() > 0, "nothing deleted");
    assert!(log.number_of_segments() < segments);
}

/// Polls `cond` every 5 ms for up to 10 s.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn truncation_and_deletion_abort_a_running_cleaning() {
    use kcli::storage::log_cleaner::cleaner_manager::LogCleaningState;
    use kcli::storage::log_manager::{LogManager, LogManagerConfig};
    let root = tempfile::tempdir().unwrap();
    let mut config = LogManagerConfig::new(vec![root.path().to_path_buf()], 1, "c");
    // Throttled to 20 KB/s, so that a cleaning of ~60 KB lasts seconds.
    config.cleaner = CleanerConfig {
        dedupe_buffer_size: 4 << 20,
        backoff_ms: 10,
        max_io_bytes_per_second: 20_000.0,
        ..CleanerConfig::default()
    };
    let manager = Arc::new(LogManager::startup(config, T0).unwrap());
    let tp = TopicPartition::new("t", 0);
    let fill = |log: &SharedLog| {
        let mut log = log.lock().unwrap();
        for round in 0..150 {
            let records: Vec<_> = (0..4)
                .map(|i| (format!("k{i}"), Some(format!("{round}-{}", "v".repeat(80)))))
                .collect();
            log.append_as_leader(
                &keyed_batch(&records, T0, CompressionType::None),
                0,
                AppendOrigin::Client,
                T0,
            )
            .unwrap();
        }
        let end = log.log_end_offset();
        log.update_high_watermark(end).unwrap();
    };
    let log = manager
        .get_or_create_log(&tp, None, compact_config(), T0)
        .unwrap();
    fill(&log);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tracker = tokio_util::task::TaskTracker::new();
    let shutdown = tokio_util::sync::CancellationToken::new();
    {
        let _guard = runtime.enter();
        manager.spawn_background_tasks(&tracker, shutdown.clone());
    }
    let cleaner = Arc::clone(manager.cleaner().unwrap());
    let state = || cleaner.manager().cleaning_state(&tp);
    wait_for("a cleaning", || {
        state() == Some(LogCleaningState::InProgress)
    });
    // Truncation (of the active segment here) waits for the cleaning to stop, then lets it
    // start again.
    let end = log.lock().unwrap().log_end_offset();
    let started = Instant::now();
    assert!(manager.truncate_to(&tp, end - 4, T0).unwrap());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(log.lock().unwrap().log_end_offset(), end - 4);
    assert_ne!(state(), Some(LogCleaningState::Aborted));
    let no_cleaned_files = |dir: &Path| {
        std::fs::read_dir(dir).map_or(true, |entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .all(|n| !n.ends_with(".cleaned") && !n.ends_with(".swap"))
        })
    };
    assert!(no_cleaned_files(&root.path().join("t-0")));
    // It resumes and runs again; deleting the partition aborts it as well.
    wait_for("the cleaning to restart", || {
        state() == Some(LogCleaningState::InProgress)
    });
    let started = Instant::now();
    assert!(manager.delete_log(&tp).unwrap());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(state(), None);
    assert!(!root.path().join("t-0").exists());
    shutdown.cancel();
    tracker.close();
    runtime.block_on(tracker.wait());
    let checkpoint =
        std::fs::read_to_string(root.path().join("cleaner-offset-checkpoint")).unwrap_or_default();
    assert!(!checkpoint.contains("t 0"), "{checkpoint}");
}
