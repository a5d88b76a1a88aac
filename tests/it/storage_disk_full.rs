//! A log on a full file system: the append that does not fit fails with an I/O error (ENOSPC),
//! nothing partial stays in the log, everything appended before is still there, and the log
//! recovers the same records after a restart. The file system is a real 192 KiB tmpfs mounted
//! for the test (the test suite runs as root, as CI does).

use kcli::protocol::record::compression::CompressionType;
use kcli::storage::StorageError;
use kcli::storage::log_config::LogConfig;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::offset_index::OffsetIndex;

use crate::storage_support::{SmallFs, T0, batch, open_log, read_all};

/// `err` is the I/O error of a full file system (ENOSPC).
fn assert_no_space(err: &StorageError) {
    match err {
        StorageError::Io { source, .. } => {
            assert_eq!(source.raw_os_error(), Some(28), "ENOSPC: {err}")
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn a_full_disk_fails_the_append_and_leaves_the_log_consistent() {
    let fs = SmallFs::mount("192k");
    let dir = fs.path().join("t-0");
    let config = LogConfig {
        segment_index_bytes: 4096,
        segment_bytes: 1 << 20,
        ..LogConfig::default()
    };
    let mut log = open_log(&dir, config.clone(), 0, true);
    let mut appended = 0i64;
    let err = loop {
        let values = vec![vec![appended as u8; 3000]];
        match log.append_as_leader(
            &batch(&values, T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        ) {
            Ok(_) => appended += 1,
            Err(err) => break err,
        }
        assert!(appended < 1000, "the file system never filled up");
    };
    assert_no_space(&err);
    assert!(appended > 10);
    // Filled for real: blocks reserved ahead of the appends neither failed one that fit nor
    // stayed allocated past the data once the disk was full.
    assert!(fs.free_bytes() < 8192, "{} bytes free", fs.free_bytes());
    assert_eq!(log.log_end_offset(), appended);
    let before = read_all(&log, 0);
    assert_eq!(before.len() as i64, appended);
    // The same error again, not a panic or a torn batch.
    assert!(
        log.append_as_leader(
            &batch(&[vec![1; 3000]], T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0
        )
        .is_err()
    );
    assert_eq!(log.log_end_offset(), appended);
    drop(log);

    // After a crash and with room again, the log recovers exactly what it had acknowledged.
    fs.grow("1m");
    let log = open_log(&dir, config, 0, false);
    assert_eq!(read_all(&log, 0), before);
}

#[test]
fn an_index_entry_on_a_full_disk_is_an_io_error_not_a_sigbus() {
    // An index file is preallocated sparse and written through its map: before an entry lands
    // on a page with no block behind it, the block is allocated, so a full disk answers ENOSPC
    // instead of killing the process with SIGBUS on the write.
    let fs = SmallFs::mount("64k");
    let path = fs.path().join("00000000000000000000.index");
    let mut index = OffsetIndex::open(path.clone(), 0, 1 << 20).unwrap();
    // The first page's entries fit before the disk fills.
    for i in 0..10 {
        index.append(i, u32::try_from(i * 100).unwrap()).unwrap();
    }
    fs.fill();
    let mut appended = 10;
    let err = loop {
        match index.append(appended, u32::try_from(appended * 100).unwrap()) {
            Ok(()) => appended += 1,
            Err(err) => break err,
        }
        assert!(appended < 10_000, "no error past the reserved pages");
    };
    assert_no_space(&err);
    // The entries written before are there, on the page that was reserved.
    assert_eq!(index.entries(), usize::try_from(appended).unwrap());
    assert_eq!(appended % 512, 0, "the error comes at a page boundary");
    assert_eq!(index.lookup(5).offset, 5);
}
