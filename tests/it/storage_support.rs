//! Helpers shared by the storage tests: building batches, opening logs with small settings,
//! reading a log back as (offset, value) pairs, and a small tmpfs to fill up.

use std::path::{Path, PathBuf};
use std::process::Command;

use kcli::cluster::TopicPartition;
use kcli::protocol::record::batch::RecordBatchHeader;
use kcli::protocol::record::batch_iter::BatchIter;
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use kcli::protocol::record::records::{RecordIter, batch_records};
use kcli::storage::log_config::LogConfig;
use kcli::storage::log_manager::LogManagerConfig;
use kcli::storage::log_reads::FetchIsolation;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::unified_log::UnifiedLog;

/// A fixed clock start for tests: 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000;

/// A batch of `values`, each record stamped `timestamp + i`.
pub fn batch(values: &[Vec<u8>], timestamp: i64, codec: CompressionType) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(codec);
    builder.records = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            SimpleRecord::new(
                timestamp + i as i64,
                Some(format!("k{i}").into_bytes()),
                Some(v.clone()),
            )
        })
        .collect();
    builder.build().unwrap()
}

/// Small segments and dense indexes so that a few KiB exercise rolls and index entries.
pub fn small_config() -> LogConfig {
    LogConfig {
        segment_bytes: 8 * 1024,
        index_interval_bytes: 512,
        segment_index_bytes: 4096,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    }
}

/// A log manager over `dirs` (one recovery thread) whose logs have the small settings.
pub fn manager_config(dirs: &[PathBuf]) -> LogManagerConfig {
    let mut config = LogManagerConfig::new(dirs.to_vec(), 1, "kcli-test-cluster");
    config.default_log_config = small_config();
    config
}

/// Appends `n` batches of one 100-byte record as the leader and moves the high watermark to
/// the log end.
pub fn append_n(log: &mut UnifiedLog, n: usize) {
    for i in 0..n {
        log.append_as_leader(
            &batch(&[vec![i as u8; 100]], T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    let end = log.log_end_offset();
    log.update_high_watermark(end).unwrap();
}

pub fn open_log(dir: &Path, config: LogConfig, recovery_point: i64, clean: bool) -> UnifiedLog {
    UnifiedLog::open(
        dir.to_path_buf(),
        TopicPartition::new("t", 0),
        config,
        recovery_point,
        0,
        clean,
        T0,
    )
    .unwrap()
}

/// Every record from `from` to the log end, as (offset, value).
pub fn read_all(log: &UnifiedLog, from: i64) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut next = from;
    while next < log.log_end_offset() {
        let info = log
            .read(next, 64 * 1024, FetchIsolation::LogEnd, true)
            .unwrap();
        let bytes = info.records.read_to_vec().unwrap();
        assert!(
            !bytes.is_empty(),
            "empty read at {next} below the log end {}",
            log.log_end_offset()
        );
        for entry in BatchIter::new(&bytes) {
            let entry = entry.unwrap();
            let header = RecordBatchHeader::parse(entry.bytes).unwrap();
            let records = batch_records(entry.bytes, &header, 1 << 30).unwrap();
            for record in RecordIter::new(&records, header.records_count) {
                let record = record.unwrap();
                let offset = header.base_offset + i64::from(record.offset_delta);
                if offset >= next {
                    out.push((offset, record.value.unwrap_or_default().to_vec()));
                }
            }
            next = header.last_offset() + 1;
        }
    }
    out
}

/// A tmpfs mounted for the life of the value (the suite runs as root, as tests/run and CI do).
pub struct SmallFs {
    mount: PathBuf,
    _parent: tempfile::TempDir,
}

impl SmallFs {
    pub fn mount(size: &str) -> SmallFs {
        let parent = tempfile::tempdir().unwrap();
        let mount = parent.path().join("fs");
        std::fs::create_dir(&mount).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount)
            .status()
            .expect("running mount(8)");
        assert!(
            status.success(),
            "mounting a tmpfs needs root, as tests/run and CI have"
        );
        SmallFs {
            mount,
            _parent: parent,
        }
    }

    pub fn path(&self) -> &Path {
        &self.mount
    }

    /// The bytes still free.
    pub fn free_bytes(&self) -> u64 {
        let stat = nix::sys::statvfs::statvfs(&self.mount).unwrap();
        stat.blocks_available() * stat.fragment_size()
    }

    /// Gives the file system more room, as an operator freeing space would.
    pub fn grow(&self, size: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.mount)
            .status()
            .expect("running mount(8)");
        assert!(status.success());
    }

    /// Fills the file system with a file outside the log dir, as another process would.
    pub fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.mount.join("filler")).unwrap();
        let chunk = vec![7u8; 64 * 1024];
        loop {
            if f.write_all(&chunk).is_err() {
                break;
            }
        }
        // The last partial chunks: byte by byte is too slow; halve until nothing fits.
        let mut size = chunk.len() / 2;
        while size > 0 {
            if f.write_all(&chunk[..size]).is_err() {
                size /= 2;
            }
        }
        let _ = f.flush();
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// The `.txnindex` files of a partition directory, sorted.
pub fn txn_index_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txnindex"))
        .collect();
    names.sort();
    names
}
