//! Tests of `FileRecords`: appends, scans, slices, reservations, truncation.
use super::*;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;
use std::fs::OpenOptions;

fn batch(base_offset: i64, records: usize) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.base_offset = base_offset;
    b.records = (0..records)
        .map(|i| SimpleRecord::new(i as i64, None, Some(vec![1; 50])))
        .collect();
    b.build().unwrap()
}

fn file_with(batches: &[Vec<u8>]) -> (tempfile::TempDir, FileRecords) {
    let dir = tempfile::tempdir().unwrap();
    let mut records = FileRecords::open(dir.path().join("00000000000000000000.log"), true).unwrap();
    for b in batches {
        records
            .append(&[IoSlice::new(&b[..10]), IoSlice::new(&b[10..])])
            .unwrap();
    }
    (dir, records)
}

#[test]
fn appends_and_scans_back_entry_by_entry() {
    let batches = [batch(0, 3), batch(3, 1), batch(4, 5)];
    let (_dir, records) = file_with(&batches);
    let total: usize = batches.iter().map(Vec::len).sum();
    assert_eq!(records.size_in_bytes(), total as u64);
    // A tiny chunk forces a window refill for every entry.
    let mut scanner = records.scanner(0, 20);
    let mut seen = Vec::new();
    while let Some(entry) = scanner.next_entry(true).unwrap() {
        assert!(entry.batch().is_valid());
        seen.push((entry.position, entry.base_offset(), entry.last_offset()));
    }
    let p1 = batches[0].len() as u64;
    let p2 = p1 + batches[1].len() as u64;
    assert_eq!(seen, vec![(0, 0, 2), (p1, 3, 3), (p2, 4, 8)]);
    assert_eq!(scanner.position(), total as u64);
}

#[test]
fn a_slice_cut_mid_entry_is_cut_back_to_its_last_whole_entry() {
    let batches = [batch(0, 3), batch(3, 1), batch(4, 5)];
    let (_dir, records) = file_with(&batches);
    let (a, b) = (batches[0].len() as u64, batches[1].len() as u64);
    let cut = records
        .slice(0, a + b + 7)
        .unwrap()
        .whole_entries()
        .unwrap();
    assert_eq!((cut.position, cut.size), (0, a + b));
    // Already whole: unchanged; from the second entry: only it.
    assert_eq!(
        records.slice(0, a).unwrap().whole_entries().unwrap().size,
        a
    );
    let from_second = records.slice(a, b + 20).unwrap().whole_entries().unwrap();
    assert_eq!((from_second.position, from_second.size), (a, b));
    // A first entry cut short is left as it is: there is no whole one to keep.
    assert_eq!(
        records
            .slice(0, a - 1)
            .unwrap()
            .whole_entries()
            .unwrap()
            .size,
        a - 1
    );
}

#[test]
fn searches_find_the_batch_holding_an_offset() {
    let batches = [batch(0, 3), batch(3, 1), batch(4, 5)];
    let (_dir, records) = file_with(&batches);
    let found = records.search_for_offset_with_size(6, 0).unwrap().unwrap();
    assert_eq!(found.offset, 8);
    assert_eq!(found.position, (batches[0].len() + batches[1].len()) as u64);
    assert_eq!(found.size, batches[2].len());
    assert!(records.search_for_offset_with_size(9, 0).unwrap().is_none());
}

#[test]
fn a_torn_tail_ends_the_scan_and_a_bad_size_is_corruption() {
    let batches = [batch(0, 3), batch(3, 2)];
    let (_dir, mut records) = file_with(&batches);
    let whole = batches[0].len() as u64;
    records.truncate_to(whole + 30).unwrap();
    let mut scanner = records.scanner(0, 4096);
    assert!(scanner.next_entry(true).unwrap().is_some());
    assert!(scanner.next_entry(true).unwrap().is_none());
    assert_eq!(scanner.position(), whole);

    let mut bad = batch(0, 1);
    bad[8..12].copy_from_slice(&5i32.to_be_bytes());
    let (_dir, records) = file_with(&[bad]);
    let err = records.scanner(0, 4096).next_entry(false).unwrap_err();
    assert!(
        err.to_string()
            .contains("smaller than minimum record overhead"),
        "{err}"
    );
}

#[test]
fn slices_are_clamped_to_the_file_and_outlive_a_rename() {
    let batches = [batch(0, 2)];
    let (dir, mut records) = file_with(&batches);
    let slice = records.slice(10, 1 << 20).unwrap();
    assert_eq!(slice.size, batches[0].len() as u64 - 10);
    records
        .rename_to(dir.path().join("00000000000000000000.log.deleted"))
        .unwrap();
    assert_eq!(slice.read_to_vec().unwrap(), batches[0][10..].to_vec());
    assert_eq!(records.slice(1 << 20, 5).unwrap().size, 0);
}

/// Bytes allocated to the file, and its length.
fn allocated_and_len(path: &Path) -> (u64, u64) {
    let meta = std::fs::metadata(path).unwrap();
    (meta.blocks() * 512, meta.len())
}

#[test]
fn appends_reserve_blocks_past_the_data_and_a_roll_gives_them_back_keeping_the_age() {
    let batches = [batch(0, 3), batch(3, 1)];
    let (_dir, mut records) = file_with(&batches[..1]);
    let data = batches[0].len() as u64;
    let (allocated, len) = allocated_and_len(records.path());
    assert_eq!(len, data, "the length stays the data's");
    assert!(allocated >= data + MIN_RESERVE_AHEAD, "{allocated}");
    let before = allocated;
    records.append(&[IoSlice::new(&batches[1])]).unwrap();
    assert_eq!(
        allocated_and_len(records.path()).0,
        before,
        "within the reservation"
    );

    let age = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    records.file().unwrap().set_modified(age).unwrap();
    records.release_reserved().unwrap();
    let (allocated, len) = allocated_and_len(records.path());
    assert_eq!(len, records.size_in_bytes());
    assert!(allocated <= len.next_multiple_of(4096), "{allocated}");
    assert_eq!(
        std::fs::metadata(records.path())
            .unwrap()
            .modified()
            .unwrap(),
        age
    );
    let mut scanner = records.scanner(0, 4096);
    assert!(scanner.next_entry(true).unwrap().is_some());
    assert!(scanner.next_entry(true).unwrap().is_some());
    assert!(scanner.next_entry(true).unwrap().is_none());
}

#[test]
fn a_cut_frees_the_reservation_and_the_next_append_reserves_again() {
    let batches = [batch(0, 3), batch(3, 1)];
    let (_dir, mut records) = file_with(&batches);
    let first = batches[0].len() as u64;
    records.truncate_to(first).unwrap();
    let (allocated, len) = allocated_and_len(records.path());
    assert_eq!(len, first);
    assert!(allocated <= first.next_multiple_of(4096), "{allocated}");
    records.append(&[IoSlice::new(&batches[1])]).unwrap();
    assert!(allocated_and_len(records.path()).0 >= records.size_in_bytes() + MIN_RESERVE_AHEAD);
}

#[test]
fn blocks_a_crash_left_past_the_data_are_given_back_on_open() {
    let batches = [batch(0, 3)];
    let (_dir, records) = file_with(&batches);
    let path = records.path().to_path_buf();
    drop(records);
    // As a crash leaves it: a reservation past the end, the age of the last append.
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    fallocate(&file, FallocateFlags::FALLOC_FL_KEEP_SIZE, 0, 1 << 20).unwrap();
    let age = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    file.set_modified(age).unwrap();
    drop(file);
    assert!(allocated_and_len(&path).0 >= 1 << 20);

    let records = FileRecords::open(path.clone(), false).unwrap();
    let (allocated, len) = allocated_and_len(&path);
    assert_eq!(len, batches[0].len() as u64);
    assert_eq!(records.size_in_bytes(), len);
    assert!(allocated <= len.next_multiple_of(4096), "{allocated}");
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), age);
}

#[test]
fn preallocate_reserves_the_whole_length_asked_and_views_reserve_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut records = FileRecords::open(dir.path().join("00000000000000000000.log"), true).unwrap();
    records.preallocate(8 << 20);
    assert_eq!(allocated_and_len(records.path()), (8 << 20, 0));
    let b = batch(0, 2);
    records.append(&[IoSlice::new(&b)]).unwrap();
    assert_eq!(allocated_and_len(records.path()).0, 8 << 20);
    let mut view = records.snapshot();
    view.release_reserved().unwrap();
    assert_eq!(
        allocated_and_len(records.path()).0,
        8 << 20,
        "a view gives nothing back"
    );
    records.release_reserved().unwrap();
    assert_eq!(allocated_and_len(records.path()).0, 4096);
}
