//! Property tests of the partition log against a simple in-memory model: random appends, rolls,
//! truncations, retention, clean reopens and crashes; after every step the log must hold
//! exactly the model's records. Also: recovery of every cut of a random log's tail, and indexes
//! rebuilt by recovery byte-identical to the online ones for random batch sizes and timestamps.

use std::fs;
use std::path::Path;

use kcli::protocol::record::compression::CompressionType;
use kcli::storage::log_config::LogConfig;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::unified_log::UnifiedLog;
use proptest::prelude::*;

use crate::storage_support::{T0, batch, open_log, read_all, small_config};

#[derive(Debug, Clone)]
enum Op {
    Append {
        records: usize,
        size: usize,
        lz4: bool,
        ts: i64,
    },
    Roll,
    /// Truncate to the base offset of the batch this picks.
    Truncate(prop::sample::Index),
    /// Retention by size down to this many bytes.
    Retention(u32),
    Reopen,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1usize..5, 1usize..700, any::<bool>(), 0i64..5000)
            .prop_map(|(records, size, lz4, ts)| Op::Append { records, size, lz4, ts }),
        1 => Just(Op::Roll),
        1 => any::<prop::sample::Index>().prop_map(Op::Truncate),
        1 => (0u32..20_000).prop_map(Op::Retention),
        1 => Just(Op::Reopen),
        1 => Just(Op::Crash),
    ]
}

/// The model: batches as (base offset, values), and the log start offset.
#[derive(Debug, Default)]
struct Model {
    batches: Vec<(i64, Vec<Vec<u8>>)>,
    log_start: i64,
    next_offset: i64,
}

impl Model {
    fn records(&self) -> Vec<(i64, Vec<u8>)> {
        self.batches
            .iter()
            .flat_map(|(base, values)| {
                values
                    .iter()
                    .enumerate()
                    .map(move |(i, v)| (base + i as i64, v.clone()))
            })
            .filter(|(offset, _)| *offset >= self.log_start)
            .collect()
    }
}

fn reopen(dir: &Path, mut log: UnifiedLog, model: &Model, crash: bool) -> UnifiedLog {
    let recovery_point = log.recovery_point();
    if crash {
        drop(log);
    } else {
        log.close(T0).unwrap();
    }
    let config = small_config();
    UnifiedLog::open(
        dir.to_path_buf(),
        kcli::cluster::TopicPartition::new("t", 0),
        config,
        if crash {
            recovery_point
        } else {
            model.next_offset
        },
        model.log_start,
        !crash,
        T0,
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_log_behaves_like_its_model(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let mut log = open_log(dir.path(), small_config(), 0, true);
        let mut model = Model::default();
        let mut tag = 0u8;
        for op in ops {
            match op {
                Op::Append { records, size, lz4, ts } => {
                    let values: Vec<Vec<u8>> = (0..records).map(|i| { tag = tag.wrapping_add(1); vec![tag; size + i] }).collect();
                    let codec = if lz4 { CompressionType::Lz4 } else { CompressionType::None };
                    let info = log.append_as_leader(&batch(&values, T0 + ts, codec), 0, AppendOrigin::Client, T0).unwrap();
                    prop_assert_eq!(info.first_offset, model.next_offset);
                    model.batches.push((model.next_offset, values));
                    model.next_offset += records as i64;
                }
                Op::Roll => log.roll(None, T0).unwrap(),
                Op::Truncate(pick) => {
                    let live: Vec<i64> = model.batches.iter().map(|(b, _)| *b).filter(|b| *b >= model.log_start).collect();
                    if !live.is_empty() {
                        let target = live[pick.index(live.len())];
                        log.truncate_to(target, T0).unwrap();
                        model.batches.retain(|(b, _)| *b < target);
                        model.next_offset = target;
                    }
                }
                Op::Retention(bytes) => {
                    let end = log.log_end_offset();
                    log.update_high_watermark(end).unwrap();
                    log.update_config(LogConfig { retention_bytes: i64::from(bytes), ..small_config() });
                    log.delete_old_segments(T0).unwrap();
                    log.update_config(small_config());
                    let start = log.log_start_offset();
                    prop_assert!(start >= model.log_start && start <= model.next_offset);
                    prop_assert!(
                        start == model.next_offset || model.batches.iter().any(|(b, _)| *b == start),
                        "log start {} is not a batch boundary", start
                    );
                    // Kafka's rule: the oldest segment stays only if deleting it would take the
                    // log below retention.bytes (or it is the one, empty, active segment).
                    let bases = log.segment_base_offsets();
                    let first = fs::metadata(dir.path().join(format!("{:020}.log", bases[0]))).unwrap().len();
                    prop_assert!(
                        (log.size() - first) < u64::from(bytes) || (bases.len() == 1 && first == 0),
                        "retention.bytes {} left {} bytes with a first segment of {}", bytes, log.size(), first
                    );
                    model.log_start = start;
                }
                Op::Reopen => log = reopen(dir.path(), log, &model, false),
                Op::Crash => log = reopen(dir.path(), log, &model, true),
            }
            prop_assert_eq!(log.log_end_offset(), model.next_offset);
            prop_assert_eq!(log.log_start_offset(), model.log_start);
            prop_assert_eq!(read_all(&log, model.log_start), model.records());
        }
    }

}

proptest! {
    // Each case reopens the log once per byte of its last two batches: few, small cases.
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn every_cut_of_the_tail_recovers_exactly_the_whole_batches_before_it(
        sizes in prop::collection::vec((1usize..4, 1usize..120), 3..8),
    ) {
        let src = tempfile::tempdir().unwrap();
        let config = LogConfig { segment_bytes: 1 << 20, ..small_config() };
        let mut log = open_log(src.path(), config.clone(), 0, true);
        let mut ends = vec![(0u64, 0i64)];
        for (i, (records, size)) in sizes.iter().enumerate() {
            let values: Vec<Vec<u8>> = (0..*records).map(|_| vec![i as u8; *size]).collect();
            log.append_as_leader(&batch(&values, T0, CompressionType::None), 0, AppendOrigin::Client, T0).unwrap();
            ends.push((log.size(), log.log_end_offset()));
        }
        log.close(T0).unwrap();
        let name = "00000000000000000000.log";
        let full = fs::read(src.path().join(name)).unwrap();
        let last_two = ends[ends.len() - 3].0;
        for cut in last_two..=full.len() as u64 {
            let dir = tempfile::tempdir().unwrap();
            fs::write(dir.path().join(name), &full[..cut as usize]).unwrap();
            let mut log = open_log(dir.path(), config.clone(), 0, false);
            let (size, end) = *ends.iter().rev().find(|(e, _)| *e <= cut).unwrap();
            prop_assert_eq!(log.size(), size, "cut at {}", cut);
            prop_assert_eq!(log.log_end_offset(), end, "cut at {}", cut);
            log.close(T0).unwrap();
        }
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn rebuilt_indexes_are_byte_identical_to_online_ones(
        batches in prop::collection::vec((1usize..4, 1usize..900, 0i64..10_000), 1..150),
        interval in prop_oneof![Just(0), Just(100), Just(4096)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig { segment_bytes: 16 * 1024, index_interval_bytes: interval, segment_index_bytes: 1 << 16, ..small_config() };
        let mut log = open_log(dir.path(), config.clone(), 0, true);
        for (records, size, ts) in batches {
            let values: Vec<Vec<u8>> = (0..records).map(|_| vec![7; size]).collect();
            log.append_as_leader(&batch(&values, T0 + ts, CompressionType::None), 0, AppendOrigin::Client, T0).unwrap();
        }
        log.close(T0).unwrap();
        let mut online = Vec::new();
        for entry in fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".index") || name.ends_with(".timeindex") {
                online.push((name, fs::read(&path).unwrap()));
                fs::remove_file(&path).unwrap();
            }
        }
        open_log(dir.path(), config, 0, true).close(T0).unwrap();
        for (name, bytes) in online {
            prop_assert!(fs::read(dir.path().join(&name)).unwrap() == bytes, "{} differs", name);
        }
    }
}
