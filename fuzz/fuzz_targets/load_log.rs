//! Fuzzes opening a partition directory whose files are damaged: a segment's `.log`, `.index`
//! and `.timeindex` with any bytes, opened after a clean or an unclean shutdown (Kafka's
//! `LogLoader`: index sanity checks, index rebuilds, recovery cutting the log at the first
//! invalid byte). Opening must succeed or fail with a storage error, never panic; and after an
//! unclean open:
//! - the `.log` left is a prefix of the bytes given, made of whole batches with valid CRCs;
//! - opening it again, as after a clean shutdown, succeeds with the same log end offset.
//!
//! Input: two little-endian u16 lengths (of the `.index` and `.timeindex` parts), one flags byte
//! (bit 0: the shutdown was clean), then the index bytes, the time index bytes, and the rest is
//! the `.log`.

#![no_main]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use kcli::cluster::TopicPartition;
use kcli::protocol::record::batch_iter::BatchIter;
use kcli::storage::log_config::LogConfig;
use kcli::storage::unified_log::UnifiedLog;
use libfuzzer_sys::fuzz_target;

const NOW_MS: i64 = 1_700_000_000_000;
const SEGMENT: &str = "00000000000000000000";

fn open(dir: &Path, clean: bool) -> Result<UnifiedLog, kcli::storage::StorageError> {
    // Small preallocated indexes: a 10 MiB mapping per input would dominate the run.
    let config = LogConfig {
        index_interval_bytes: 512,
        segment_index_bytes: 64 * 1024,
        ..LogConfig::default()
    };
    UnifiedLog::open(
        dir.to_path_buf(),
        TopicPartition::new("fuzz", 0),
        config,
        0,
        0,
        clean,
        NOW_MS,
    )
}

static RUN: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let index_len = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let time_index_len = usize::from(u16::from_le_bytes([data[2], data[3]]));
    let clean = data[4] & 1 != 0;
    let rest = &data[5..];
    let index = &rest[..index_len.min(rest.len())];
    let rest = &rest[index.len()..];
    let time_index = &rest[..time_index_len.min(rest.len())];
    let log = &rest[time_index.len()..];

    let root = std::env::temp_dir().join(format!(
        "kcli-fuzz-load-log-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    let dir = root.join("fuzz-0");
    std::fs::create_dir_all(&dir).expect("a temp dir");
    std::fs::write(dir.join(format!("{SEGMENT}.log")), log).expect("write .log");
    std::fs::write(dir.join(format!("{SEGMENT}.index")), index).expect("write .index");
    std::fs::write(dir.join(format!("{SEGMENT}.timeindex")), time_index).expect("write .timeindex");

    if let Ok(opened) = open(&dir, clean) {
        let end = opened.log_end_offset();
        drop(opened);
        if !clean {
            let kept = std::fs::read(dir.join(format!("{SEGMENT}.log"))).expect("read .log");
            assert!(log.starts_with(&kept), "recovery changed bytes it kept");
            let mut whole = 0;
            for batch in BatchIter::new(&kept) {
                let batch = batch.expect("recovery kept a malformed entry");
                assert!(batch.is_valid(), "recovery kept a batch with a bad CRC");
                whole = batch.position + batch.bytes.len();
            }
            assert_eq!(whole, kept.len(), "recovery kept a partial batch");
            let again = open(&dir, true).expect("a recovered log opens cleanly");
            assert_eq!(again.log_end_offset(), end);
        }
    }
    let _ = std::fs::remove_dir_all(&root);
});
