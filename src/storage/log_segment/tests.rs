//! Unit tests of one segment: index intervals, preallocation, relative offsets, rolls, reads
//! and truncation, timestamp search.

use super::*;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;

fn batch(base_offset: i64, records: usize, timestamp: i64) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.base_offset = base_offset;
    b.records = (0..records)
        .map(|i| SimpleRecord::new(timestamp + i as i64, None, Some(vec![2; 100])))
        .collect();
    b.build().unwrap()
}

fn append(segment: &mut LogSegment, b: &[u8]) {
    let header = RecordBatchHeader::parse(b).unwrap();
    segment
        .append(
            header.last_offset(),
            header.max_timestamp,
            header.last_offset(),
            &[IoSlice::new(b)],
        )
        .unwrap();
}

fn config() -> LogConfig {
    LogConfig {
        index_interval_bytes: 100,
        segment_index_bytes: 1024,
        ..LogConfig::default()
    }
}

#[test]
fn index_entries_follow_the_interval_and_skip_the_first_append() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = LogSegment::open(dir.path(), 10, &config(), true, 0, 0).unwrap();
    let first = batch(10, 1, 1000);
    append(&mut segment, &first);
    assert_eq!(segment.offset_index().entries(), 0);
    append(&mut segment, &batch(11, 1, 2000));
    assert_eq!(segment.offset_index().entries(), 1);
    assert_eq!(
        segment.offset_index().lookup(11).position,
        first.len() as u32
    );
    assert_eq!(segment.time_index().last_entry().timestamp, 2000);
    assert_eq!(segment.read_next_offset().unwrap(), 12);
}

#[test]
fn preallocate_reserves_segment_bytes_until_the_segment_stops_taking_appends() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        preallocate: true,
        segment_bytes: 1 << 20,
        ..config()
    };
    let mut segment = LogSegment::open(dir.path(), 0, &config, true, 0, 0).unwrap();
    let log_file = file_names::log_file(dir.path(), 0);
    let allocated = || std::fs::metadata(&log_file).unwrap().blocks() * 512;
    assert_eq!(allocated(), 1 << 20);
    append(&mut segment, &batch(0, 1, 1000));
    segment.on_become_inactive_segment().unwrap();
    assert_eq!(allocated(), segment.size().next_multiple_of(4096));
}

#[test]
fn offsets_outside_the_relative_range_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = LogSegment::open(dir.path(), 0, &config(), true, 0, 0).unwrap();
    let far = batch(i64::from(i32::MAX) + 1, 1, 0);
    let err = segment
        .append(i64::from(i32::MAX) + 1, 0, 0, &[IoSlice::new(&far)])
        .unwrap_err();
    assert!(matches!(err, StorageError::OffsetOverflow { .. }), "{err}");
    assert_eq!(segment.size(), 0);
}

#[test]
fn rolls_on_size_and_on_record_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = LogSegment::open(dir.path(), 0, &config(), true, 0, 0).unwrap();
    let b = batch(0, 1, 5000);
    append(&mut segment, &b);
    let params = |messages_size: usize, ts: i64| RollParams {
        max_segment_ms: 1000,
        max_segment_bytes: 1000,
        max_timestamp_in_messages: ts,
        max_offset_in_messages: 1,
        messages_size,
        now_ms: 0,
    };
    assert!(!segment.should_roll(&params(100, 5500)).unwrap());
    assert!(
        segment
            .should_roll(&params(1000 - b.len() + 1, 5500))
            .unwrap()
    );
    assert!(segment.should_roll(&params(100, 6001)).unwrap());
}

#[test]
fn reads_stop_at_max_position_and_truncation_cuts_whole_batches() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = LogSegment::open(dir.path(), 0, &config(), true, 0, 0).unwrap();
    let batches: Vec<Vec<u8>> = (0..5).map(|i| batch(2 * i, 2, 100 * i)).collect();
    for b in &batches {
        append(&mut segment, b);
    }
    let one = batches[0].len() as u64;
    let info = segment.read(3, 1 << 20, 3 * one, false).unwrap().unwrap();
    assert_eq!((info.records.position, info.records.size), (one, 2 * one));
    assert!(
        segment
            .read(10, 1 << 20, segment.size(), false)
            .unwrap()
            .is_none()
    );
    assert_eq!(segment.truncate_to(5, 0).unwrap(), 3 * one);
    assert_eq!(segment.read_next_offset().unwrap(), 4);
    assert_eq!(segment.max_timestamp_so_far(), 101);
}

#[test]
fn timestamp_search_walks_compressed_batches() {
    for codec in CompressionType::ALL {
        let dir = tempfile::tempdir().unwrap();
        let mut segment = LogSegment::open(dir.path(), 0, &config(), true, 0, 0).unwrap();
        for i in 0..3i64 {
            let mut b = RecordBatchBuilder::new(codec);
            b.base_offset = 4 * i;
            b.partition_leader_epoch = 7;
            b.records = (0..4)
                .map(|j| SimpleRecord::new(1000 * i + 10 * j, None, Some(vec![1; 50])))
                .collect();
            append(&mut segment, &b.build().unwrap());
        }
        let found = |ts, from| segment.find_offset_by_timestamp(ts, from).unwrap();
        let at = |timestamp, offset| TimestampAndOffset {
            timestamp,
            offset,
            leader_epoch: Some(7),
        };
        assert_eq!(found(1015, 0), Some(at(1020, 6)), "{codec}");
        assert_eq!(found(0, 5), Some(at(1010, 5)), "{codec}");
        assert_eq!(found(2030, 0), Some(at(2030, 11)), "{codec}");
        assert_eq!(found(2031, 0), None, "{codec}");
    }
}
