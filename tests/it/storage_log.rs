//! The partition log on real files: appends and reads across rolls, roll triggers, truncation,
//! timestamps, retention, clean reopen, and recovery after crashes and damage.

use std::fs;

use kcli::protocol::record::batch::{RecordBatchHeader, TimestampType, is_crc_valid};
use kcli::protocol::record::compression::CompressionType;
use kcli::storage::StorageError;
use kcli::storage::log_config::LogConfig;
use kcli::storage::log_reads::{FetchIsolation, MAX_TIMESTAMP};
use kcli::storage::log_validator::AppendOrigin;

use crate::storage_support::{T0, batch, open_log, read_all, small_config};

fn values(n: usize, size: usize, tag: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![(tag + i) as u8; size]).collect()
}

fn segment_files(dir: &std::path::Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

#[test]
fn appends_get_consecutive_offsets_and_read_back_across_rolls() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let mut expected = Vec::new();
    for i in 0..40 {
        let vals = values(3, 300, i);
        let info = log
            .append_as_leader(
                &batch(&vals, T0 + i as i64, CompressionType::None),
                7,
                AppendOrigin::Client,
                T0,
            )
            .unwrap();
        assert_eq!(info.first_offset, 3 * i as i64);
        assert_eq!(info.last_offset, 3 * i as i64 + 2);
        for (j, v) in vals.into_iter().enumerate() {
            expected.push((3 * i as i64 + j as i64, v));
        }
    }
    assert_eq!(log.log_end_offset(), 120);
    assert!(log.number_of_segments() > 3, "8 KiB segments must roll");
    assert_eq!(read_all(&log, 0), expected);
    assert_eq!(read_all(&log, 61), expected[61..].to_vec());
    assert_eq!(log.leader_epoch_cache().latest_epoch(), Some(7));

    // The stored batches carry the assigned offsets and the leader epoch, with a valid CRC.
    let info = log.read(0, 1 << 20, FetchIsolation::LogEnd, true).unwrap();
    let bytes = info.records.read_to_vec().unwrap();
    let header = RecordBatchHeader::parse(&bytes).unwrap();
    assert_eq!((header.base_offset, header.partition_leader_epoch), (0, 7));
    assert!(is_crc_valid(&bytes[..header.size_in_bytes()]));
}

#[test]
fn every_codec_round_trips_through_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let mut expected = Vec::new();
    for (i, codec) in [
        CompressionType::None,
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ]
    .into_iter()
    .enumerate()
    {
        let vals = values(5, 100, i * 10);
        let info = log
            .append_as_leader(&batch(&vals, T0, codec), 0, AppendOrigin::Client, T0)
            .unwrap();
        for (j, v) in vals.into_iter().enumerate() {
            expected.push((info.first_offset + j as i64, v));
        }
    }
    assert_eq!(read_all(&log, 0), expected);
}

#[test]
fn log_append_time_rewrites_the_timestamp_and_keeps_the_crc_valid() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        message_timestamp_type: TimestampType::LogAppendTime,
        ..small_config()
    };
    let mut log = open_log(dir.path(), config, 0, true);
    let now = T0 + 12_345;
    let info = log
        .append_as_leader(
            &batch(&values(2, 10, 0), 1, CompressionType::Lz4),
            0,
            AppendOrigin::Client,
            now,
        )
        .unwrap();
    assert_eq!(info.log_append_time, now);
    let bytes = log
        .read(0, 4096, FetchIsolation::LogEnd, true)
        .unwrap()
        .records
        .read_to_vec()
        .unwrap();
    let header = RecordBatchHeader::parse(&bytes).unwrap();
    assert_eq!(header.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(header.max_timestamp, now);
    assert!(is_crc_valid(&bytes[..header.size_in_bytes()]));
}

#[test]
fn a_batch_over_max_message_bytes_is_rejected_and_the_log_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        max_message_bytes: 1000,
        ..small_config()
    };
    let mut log = open_log(dir.path(), config, 0, true);
    let err = log
        .append_as_leader(
            &batch(&values(1, 2000, 0), T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap_err();
    match err {
        StorageError::Validation(e) => assert_eq!(
            e.error_code(),
            kcli::protocol::errors::ErrorCode::MessageTooLarge
        ),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log.size(), 0);
}

#[test]
fn reads_stop_at_the_high_watermark_and_reject_offsets_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    for i in 0..4 {
        log.append_as_leader(
            &batch(&values(2, 50, i), T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    log.update_high_watermark(4).unwrap();
    let consumer = log
        .read(0, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    let follower = log.read(0, 1 << 20, FetchIsolation::LogEnd, true).unwrap();
    assert!(consumer.records.size < follower.records.size);
    assert_eq!(
        log.read(4, 1 << 20, FetchIsolation::HighWatermark, true)
            .unwrap()
            .records
            .size,
        0
    );
    assert_eq!(
        log.read(8, 1 << 20, FetchIsolation::LogEnd, true)
            .unwrap()
            .records
            .size,
        0
    );
    assert!(matches!(
        log.read(9, 100, FetchIsolation::LogEnd, true),
        Err(StorageError::OffsetOutOfRange { offset: 9, .. })
    ));
    // KIP-74: the first batch comes whole even when it is larger than the limit.
    let tiny = log.read(0, 1, FetchIsolation::LogEnd, true).unwrap();
    assert!(tiny.records.size > 1);
    let strict = log.read(0, 1, FetchIsolation::LogEnd, false).unwrap();
    assert!(strict.first_entry_incomplete);
}

#[test]
fn a_fetch_offset_inside_a_batch_returns_the_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    log.append_as_leader(
        &batch(&values(10, 10, 0), T0, CompressionType::None),
        0,
        AppendOrigin::Client,
        T0,
    )
    .unwrap();
    let bytes = log
        .read(5, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap()
        .records
        .read_to_vec()
        .unwrap();
    assert_eq!(RecordBatchHeader::parse(&bytes).unwrap().base_offset, 0);
}

#[test]
fn segments_roll_on_record_time_and_on_a_full_index() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_ms: 1000,
        segment_bytes: 1 << 30,
        ..small_config()
    };
    let mut log = open_log(dir.path(), config, 0, true);
    log.append_as_leader(
        &batch(&values(1, 10, 0), T0, CompressionType::None),
        0,
        AppendOrigin::Client,
        T0,
    )
    .unwrap();
    log.append_as_leader(
        &batch(&values(1, 10, 0), T0 + 999, CompressionType::None),
        0,
        AppendOrigin::Client,
        T0,
    )
    .unwrap();
    assert_eq!(log.number_of_segments(), 1);
    // Record timestamps, not the wall clock, decide.
    log.append_as_leader(
        &batch(&values(1, 10, 0), T0 + 1001, CompressionType::None),
        0,
        AppendOrigin::Client,
        T0,
    )
    .unwrap();
    assert_eq!(log.segment_base_offsets(), vec![0, 2]);

    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_bytes: 1 << 30,
        index_interval_bytes: 0,
        segment_index_bytes: 64,
        ..small_config()
    };
    let mut log = open_log(dir.path(), config, 0, true);
    for _ in 0..20 {
        log.append_as_leader(
            &batch(&values(1, 10, 0), T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    assert!(
        log.number_of_segments() > 1,
        "a 64-byte index holds 5 time-index entries"
    );
    assert_eq!(read_all(&log, 0).len(), 20);
}

#[test]
fn offsets_beyond_the_relative_range_roll_a_new_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let mut first = kcli::protocol::record::builder::RecordBatchBuilder::new(CompressionType::None);
    first.records = vec![kcli::protocol::record::builder::SimpleRecord::new(
        T0,
        None,
        Some(b"a".to_vec()),
    )];
    log.append_as_follower(&first.build().unwrap(), T0).unwrap();
    let far = i64::from(i32::MAX) + 10;
    first.base_offset = far;
    log.append_as_follower(&first.build().unwrap(), T0).unwrap();
    assert_eq!(log.segment_base_offsets(), vec![0, far]);
    assert_eq!(log.log_end_offset(), far + 1);
}

#[test]
fn follower_appends_keep_offsets_and_reject_going_backwards() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    let mut b = kcli::protocol::record::builder::RecordBatchBuilder::new(CompressionType::None);
    b.base_offset = 0;
    b.partition_leader_epoch = 3;
    b.records =
        vec![kcli::protocol::record::builder::SimpleRecord::new(T0, None, Some(b"a".to_vec())); 4];
    log.append_as_follower(&b.build().unwrap(), T0).unwrap();
    assert_eq!(log.log_end_offset(), 4);
    assert_eq!(log.leader_epoch_cache().latest_epoch(), Some(3));
    b.base_offset = 2;
    assert!(matches!(
        log.append_as_follower(&b.build().unwrap(), T0),
        Err(StorageError::OffsetsOutOfOrder { .. })
    ));
}

#[test]
fn truncate_to_removes_everything_from_the_offset_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    for i in 0..30 {
        log.append_as_leader(
            &batch(&values(2, 200, i), T0, CompressionType::None),
            i as i32 / 10,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    let before = read_all(&log, 0);
    assert!(log.truncate_to(24, T0).unwrap());
    assert_eq!(log.log_end_offset(), 24);
    assert_eq!(read_all(&log, 0), before[..24].to_vec());
    assert_eq!(log.leader_epoch_cache().latest_epoch(), Some(1));
    // The log takes appends again from the new end.
    let info = log
        .append_as_leader(
            &batch(&values(1, 5, 0), T0, CompressionType::None),
            5,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    assert_eq!(info.first_offset, 24);
    assert!(!log.truncate_to(100, T0).unwrap());
}

#[test]
fn offsets_for_timestamps_and_the_max_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    for i in 0..50i64 {
        // Timestamps T0 + 10*i .. + 2; batch 45 carries the largest.
        let ts = if i == 45 { T0 + 100_000 } else { T0 + 10 * i };
        log.append_as_leader(
            &batch(&values(3, 100, 0), ts, CompressionType::Gzip),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    let found = log.fetch_offset_by_timestamp(T0 + 301).unwrap().unwrap();
    assert_eq!((found.offset, found.timestamp), (91, T0 + 301));
    let found = log.fetch_offset_by_timestamp(T0).unwrap().unwrap();
    assert_eq!(found.offset, 0);
    assert!(
        log.fetch_offset_by_timestamp(T0 + 200_000)
            .unwrap()
            .is_none()
    );
    let max = log
        .fetch_offset_by_timestamp(MAX_TIMESTAMP)
        .unwrap()
        .unwrap();
    assert_eq!((max.offset, max.timestamp), (137, T0 + 100_002));
}

#[test]
fn a_clean_reopen_keeps_everything_and_leaves_trimmed_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    for i in 0..60 {
        log.append_as_leader(
            &batch(&values(2, 150, i), T0 + i as i64, CompressionType::None),
            2,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    let before = read_all(&log, 0);
    log.close(T0).unwrap();
    for name in segment_files(dir.path(), ".index") {
        let len = fs::metadata(dir.path().join(name)).unwrap().len();
        assert!(len.is_multiple_of(8) && len < 4096, "index trimmed: {len}");
    }
    for name in segment_files(dir.path(), ".timeindex") {
        let len = fs::metadata(dir.path().join(name)).unwrap().len();
        assert!(
            len.is_multiple_of(12) && len < 4092,
            "time index trimmed: {len}"
        );
    }
    let log = open_log(dir.path(), small_config(), 120, true);
    assert_eq!(log.log_end_offset(), 120);
    assert_eq!(read_all(&log, 0), before);
    assert_eq!(log.leader_epoch_cache().latest_epoch(), Some(2));
}

#[test]
fn a_crash_without_close_recovers_every_appended_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    for i in 0..45 {
        log.append_as_leader(
            &batch(&values(3, 120, i), T0, CompressionType::Snappy),
            1,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    let before = read_all(&log, 0);
    drop(log); // no close: untrimmed indexes, no final time-index entries
    let log = open_log(dir.path(), small_config(), 0, false);
    assert_eq!(log.log_end_offset(), 135);
    assert_eq!(read_all(&log, 0), before);
}

#[test]
fn a_torn_tail_is_cut_at_the_last_whole_batch_for_every_cut_point() {
    let src = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_bytes: 1 << 20,
        ..small_config()
    };
    let mut log = open_log(src.path(), config.clone(), 0, true);
    let mut ends = vec![0u64];
    for i in 0..6 {
        log.append_as_leader(
            &batch(&values(2, 40 + i * 7, i), T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
        ends.push(log.size());
    }
    log.close(T0).unwrap();
    let segment = "00000000000000000000.log";
    let full = fs::read(src.path().join(segment)).unwrap();
    // Every byte offset of the last three batches.
    for cut in ends[3]..=ends[6] {
        let dir = tempfile::tempdir().unwrap();
        for entry in fs::read_dir(src.path()).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
        fs::write(dir.path().join(segment), &full[..cut as usize]).unwrap();
        let log = open_log(dir.path(), config.clone(), 0, false);
        let whole = ends.iter().filter(|&&e| e <= cut).count() as i64 - 1;
        assert_eq!(log.log_end_offset(), 2 * whole, "cut at byte {cut}");
        assert_eq!(log.size(), ends[whole as usize], "cut at byte {cut}");
        assert_eq!(read_all(&log, 0).len() as i64, 2 * whole);
    }
}

#[test]
fn a_bit_flip_truncates_at_the_damaged_batch_and_drops_later_segments() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    for i in 0..60 {
        log.append_as_leader(
            &batch(&values(2, 150, i), T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    let before = read_all(&log, 0);
    let bases = log.segment_base_offsets();
    assert!(bases.len() >= 3);
    drop(log);
    // Flip a byte inside the second segment's third batch.
    let victim = dir.path().join(format!("{:020}.log", bases[1]));
    let mut bytes = fs::read(&victim).unwrap();
    let third_batch = 2 * RecordBatchHeader::parse(&bytes).unwrap().size_in_bytes();
    bytes[third_batch + 100] ^= 0x40;
    fs::write(&victim, bytes).unwrap();
    let log = open_log(dir.path(), small_config(), 0, false);
    assert_eq!(log.segment_base_offsets(), bases[..2].to_vec());
    assert_eq!(log.log_end_offset(), bases[1] + 4);
    assert_eq!(
        read_all(&log, 0),
        before[..(bases[1] + 4) as usize].to_vec()
    );
}

#[test]
fn indexes_rebuilt_by_recovery_are_byte_identical_to_the_online_ones() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_bytes: 64 * 1024,
        index_interval_bytes: 1000,
        segment_index_bytes: 1 << 20,
        ..small_config()
    };
    let mut log = open_log(dir.path(), config.clone(), 0, true);
    for i in 0..400usize {
        let n = 1 + i % 4;
        let ts = T0 + (i as i64 * 37) % 1000; // timestamps go up and down
        log.append_as_leader(
            &batch(
                &values(n, 20 + (i * 13) % 300, i),
                ts,
                CompressionType::None,
            ),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    log.close(T0).unwrap();
    let mut online = Vec::new();
    for suffix in [".index", ".timeindex"] {
        for name in segment_files(dir.path(), suffix) {
            online.push((name.clone(), fs::read(dir.path().join(&name)).unwrap()));
            fs::remove_file(dir.path().join(&name)).unwrap();
        }
    }
    assert!(online.len() >= 4);
    let mut log = open_log(dir.path(), config, 0, true);
    log.close(T0).unwrap();
    for (name, bytes) in online {
        assert!(
            fs::read(dir.path().join(&name)).unwrap() == bytes,
            "{name} differs after rebuild"
        );
    }
}

#[test]
fn a_corrupt_index_is_rebuilt_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open_log(dir.path(), small_config(), 0, true);
    for i in 0..30 {
        log.append_as_leader(
            &batch(&values(2, 150, i), T0, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    let before = read_all(&log, 0);
    log.close(T0).unwrap();
    let index = dir.path().join("00000000000000000000.index");
    let good = fs::read(&index).unwrap();
    fs::write(&index, &good[..good.len() - 3]).unwrap(); // not a whole number of entries
    let mut log = open_log(dir.path(), small_config(), 60, true);
    assert_eq!(read_all(&log, 0), before);
    log.close(T0).unwrap();
    assert_eq!(fs::read(&index).unwrap(), good);
}

#[test]
fn retention_by_size_and_time_deletes_whole_old_segments_below_the_high_watermark() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        retention_bytes: 20 * 1024,
        file_delete_delay_ms: 1000,
        ..small_config()
    };
    let mut log = open_log(dir.path(), config, 0, true);
    for i in 0..100 {
        log.append_as_leader(
            &batch(&values(2, 200, i), T0 + i as i64, CompressionType::None),
            0,
            AppendOrigin::Client,
            T0,
        )
        .unwrap();
    }
    // Nothing is deleted while the high watermark is at 0.
    assert_eq!(log.delete_old_segments(T0).unwrap(), 0);
    log.update_high_watermark(log.log_end_offset()).unwrap();
    let segments_before = log.number_of_segments();
    let deleted = log.delete_old_segments(T0).unwrap();
    assert!(deleted > 0);
    assert_eq!(log.number_of_segments(), segments_before - deleted);
    assert!(log.size() >= 20 * 1024 - 8 * 1024 && log.size() <= 20 * 1024 + 8 * 1024);
    assert_eq!(log.log_start_offset(), log.segment_base_offsets()[0]);
    assert!(
        !segment_files(dir.path(), ".deleted").is_empty(),
        "renamed first"
    );
    log.delete_due_files(T0 + 999).unwrap();
    assert!(!segment_files(dir.path(), ".deleted").is_empty());
    log.delete_due_files(T0 + 1000).unwrap();
    assert!(
        segment_files(dir.path(), ".deleted").is_empty(),
        "removed after file.delete.delay.ms"
    );
    let start = log.log_start_offset();
    assert!(matches!(
        log.read(start - 1, 100, FetchIsolation::LogEnd, true),
        Err(StorageError::OffsetOutOfRange { .. })
    ));
    assert_eq!(read_all(&log, start).len() as i64, 200 - start);

    // By time: everything is older than 1 s at T0 + 10 s; the log keeps its end in a new segment.
    let config = LogConfig {
        retention_ms: 1000,
        ..small_config()
    };
    log.update_config(config);
    log.delete_old_segments(T0 + 10_000).unwrap();
    assert_eq!(log.number_of_segments(), 1);
    assert_eq!(log.log_start_offset(), 200);
    assert_eq!(log.log_end_offset(), 200);
    assert_eq!(log.size(), 0);
}
