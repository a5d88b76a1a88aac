//! A follower's in-place append (`UnifiedLog::append_as_follower_from`, records written into the
//! segment file before they are checked) against the buffered one: the same files, offsets,
//! epochs and producer state; a partial or corrupt tail never becomes part of the log, and
//! nothing is left past the segment's end.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::StorageError;
use kcli::storage::records_source::RecordsSource;
use kcli::storage::unified_log::UnifiedLog;

use crate::storage_support::{T0, open_log, read_all, small_config};

/// What a leader would send: `count` batches of three 200-byte records from `base`, leader
/// epoch 5, an idempotent producer's sequences.
fn leader_batches(base: i64, count: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..count {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.base_offset = base + 3 * i as i64;
        b.partition_leader_epoch = 5;
        b.producer_id = 42;
        b.producer_epoch = 0;
        b.base_sequence = 3 * i as i32;
        b.records = (0..3)
            .map(|r| SimpleRecord::new(T0 + r, None, Some(vec![i as u8; 200])))
            .collect();
        out.extend_from_slice(&b.build().unwrap());
    }
    out
}

/// Every file of a log dir, name and bytes, sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The `.log` files' total size on disk.
fn log_bytes_on_disk(dir: &Path) -> u64 {
    files(dir)
        .iter()
        .filter(|(name, _)| name.ends_with(".log"))
        .map(|(_, bytes)| bytes.len() as u64)
        .sum()
}

fn state(log: &UnifiedLog) -> (i64, Option<i32>, Vec<(i64, i32)>) {
    let producers = log
        .producer_state()
        .active_producers()
        .map(|p| (p.producer_id, p.last_seq()))
        .collect();
    (
        log.log_end_offset(),
        log.leader_epoch_cache().latest_epoch(),
        producers,
    )
}

/// Appends `chunks` both ways into two fresh logs and returns them.
fn both_ways(
    config: kcli::storage::log_config::LogConfig,
    chunks: &[Vec<u8>],
) -> (tempfile::TempDir, UnifiedLog, tempfile::TempDir, UnifiedLog) {
    let (buffered_dir, in_place_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut buffered = open_log(buffered_dir.path(), config.clone(), 0, true);
    let mut in_place = open_log(in_place_dir.path(), config, 0, true);
    let mut scratch = Vec::new();
    for chunk in chunks {
        buffered.append_as_follower(chunk, T0).unwrap();
        let mut source: &[u8] = chunk;
        in_place
            .append_as_follower_from(&mut source, &mut scratch, T0)
            .unwrap();
    }
    (buffered_dir, buffered, in_place_dir, in_place)
}

#[test]
fn in_place_appends_leave_the_same_files_and_state_as_buffered_ones_across_rolls() {
    // 8 KiB segments, an index entry every 512 bytes: 40 chunks of two batches roll often.
    let chunks: Vec<Vec<u8>> = (0..40).map(|i| leader_batches(6 * i, 2)).collect();
    let (buffered_dir, buffered, in_place_dir, in_place) = both_ways(small_config(), &chunks);
    assert!(buffered.segment_base_offsets().len() > 5);
    assert_eq!(
        in_place.segment_base_offsets(),
        buffered.segment_base_offsets()
    );
    assert_eq!(state(&in_place), state(&buffered));
    assert_eq!(read_all(&in_place, 0), read_all(&buffered, 0));
    drop((buffered, in_place));
    assert_eq!(files(in_place_dir.path()), files(buffered_dir.path()));
}

#[test]
fn a_partial_last_batch_is_cut_off_and_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let whole = leader_batches(0, 3);
    let next = leader_batches(9, 1);
    let mut chunk = whole.clone();
    chunk.extend_from_slice(&next[..next.len() / 2]);
    let mut source: &[u8] = &chunk;
    let info = log
        .append_as_follower_from(&mut source, &mut Vec::new(), T0)
        .unwrap();
    assert_eq!(info.valid_bytes, whole.len());
    assert_eq!(log.log_end_offset(), 9);
    assert_eq!(log_bytes_on_disk(dir.path()), whole.len() as u64);
    // The next fetch brings the batch whole, right after the kept ones.
    let mut source: &[u8] = &next;
    log.append_as_follower_from(&mut source, &mut Vec::new(), T0)
        .unwrap();
    assert_eq!(log.log_end_offset(), 12);
    assert_eq!(read_all(&log, 0).len(), 12);
}

#[test]
fn a_corrupt_batch_is_refused_and_nothing_stays_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let first = leader_batches(0, 1);
    let mut source: &[u8] = &first;
    log.append_as_follower_from(&mut source, &mut Vec::new(), T0)
        .unwrap();
    let mut corrupt = leader_batches(3, 2);
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xff;
    let mut source: &[u8] = &corrupt;
    let refused = log.append_as_follower_from(&mut source, &mut Vec::new(), T0);
    assert!(
        matches!(refused, Err(StorageError::CorruptBatch { .. })),
        "{refused:?}"
    );
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log_bytes_on_disk(dir.path()), first.len() as u64);
    // Offsets that go backwards are refused the same way.
    let mut source: &[u8] = &first;
    let refused = log.append_as_follower_from(&mut source, &mut Vec::new(), T0);
    assert!(matches!(
        refused,
        Err(StorageError::OffsetsOutOfOrder { .. })
    ));
    assert_eq!(log_bytes_on_disk(dir.path()), first.len() as u64);
}

/// A source whose bytes cannot be written (a full disk, say).
struct FailingWrite(Vec<u8>);

impl RecordsSource for FailingWrite {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn write_to(&mut self, file: &File, position: u64) -> io::Result<()> {
        // Half of it lands, then the write fails.
        std::os::unix::fs::FileExt::write_all_at(file, &self.0[..self.0.len() / 2], position)?;
        Err(io::Error::from_raw_os_error(28))
    }

    fn read_into(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.extend_from_slice(&self.0);
        Ok(())
    }
}

#[test]
fn a_failed_write_is_an_io_error_and_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let mut source = FailingWrite(leader_batches(0, 2));
    let failed = log.append_as_follower_from(&mut source, &mut Vec::new(), T0);
    assert!(matches!(failed, Err(StorageError::Io { .. })), "{failed:?}");
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log_bytes_on_disk(dir.path()), 0);
}
