//! Transactions through cleanings, as Kafka's cleaner treats them: aborted data goes, and a
//! transaction marker stays while its data does, then goes after its delete horizon.

use kcli::protocol::record::batch::RecordBatchHeader;
use kcli::protocol::record::batch_iter::BatchIter;
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;
use kcli::protocol::record::records::{batch_records, for_each_record};
use kcli::storage::log_config::LogConfig;
use kcli::storage::log_reads::FetchIsolation;
use kcli::storage::log_validator::AppendOrigin;
use kcli::storage::unified_log::UnifiedLog;

use super::{compact_config, fixture, keyed_batch};
use crate::storage_support::T0;

/// (base offset, control, records, delete horizon set, each record's key) of every batch of
/// the log, read through its own read path.
type BatchRow = (i64, bool, i32, bool, Vec<String>);

fn batch_rows(log: &UnifiedLog) -> Vec<BatchRow> {
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
            let records = batch_records(entry.bytes, &h, 1 << 30).unwrap();
            let mut keys = Vec::new();
            for_each_record(&records, h.records_count, |_, r| {
                keys.push(String::from_utf8_lossy(r.key.unwrap_or_default()).into_owned());
            })
            .unwrap();
            out.push((
                h.base_offset,
                h.is_control(),
                h.records_count,
                h.has_delete_horizon(),
                keys,
            ));
            next = h.next_offset();
        }
    }
    out
}

/// Transactions through cleanings, as Kafka's cleaner treats them: an aborted record neither
/// survives nor makes the committed record of its key look outdated; the abort marker stays,
/// indexed, while data of its transaction does; once none does, a marker (abort or commit) gets
/// a delete horizon and goes at the first cleaning past it.
#[test]
fn aborted_data_goes_and_markers_stay_while_their_data_does() {
    use kcli::protocol::record::builder::{ControlRecordType, build_control_batch};
    const RETENTION: i64 = 60_000;
    let f = fixture(LogConfig {
        delete_retention_ms: RETENTION,
        ..compact_config()
    });
    let now = T0 + 1000;
    let seq = std::cell::Cell::new(0);
    let data = |key: &str, transactional: bool| {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.producer_id = 7;
        b.producer_epoch = 0;
        b.base_sequence = seq.get();
        seq.set(seq.get() + 1);
        b.is_transactional = transactional;
        b.records = vec![SimpleRecord::new(
            now,
            Some(key.as_bytes().to_vec()),
            Some(vec![1; 50]),
        )];
        f.append(&b.build().unwrap(), now);
    };
    let marker = |kind| {
        let mut log = f.log.lock().unwrap();
        let batch = build_control_batch(kind, 0, -1, 7, 0, 1, now).unwrap();
        log.append_as_leader(&batch, 0, AppendOrigin::Coordinator, now)
            .unwrap();
        let end = log.log_end_offset();
        log.update_high_watermark(end).unwrap();
    };
    let fill = |round: i64| {
        for i in 0..12 {
            let records = vec![(format!("fill{}", i % 4), Some(format!("r{round}-{i}")))];
            f.append(&keyed_batch(&records, now, CompressionType::None), now);
        }
        f.log.lock().unwrap().roll(None, now).unwrap();
    };
    let batch_at = |offset: i64| {
        batch_rows(&f.log.lock().unwrap())
            .into_iter()
            .find(|b| b.0 == offset)
    };
    let aborted_indexed = || {
        f.log
            .lock()
            .unwrap()
            .collect_aborted_transactions(0, i64::MAX)
    };
    data("k", true); // 0: committed
    marker(ControlRecordType::Commit); // 1
    data("k", true); // 2: aborted, a later record of the same key
    marker(ControlRecordType::Abort); // 3
    data("k7", true); // 4: the producer's last data
    marker(ControlRecordType::Commit); // 5
    fill(0);
    assert_eq!(aborted_indexed().len(), 1);

    assert!(f.clean_once(now));
    assert_eq!(batch_at(0).map(|b| b.4), Some(vec!["k".to_string()]));
    assert_eq!(batch_at(2), None, "the aborted batch is gone");
    assert_eq!(batch_at(3).map(|b| (b.1, b.3)), Some((true, false)));
    assert_eq!(batch_at(1).map(|b| (b.1, b.3)), Some((true, false)));
    assert_eq!(aborted_indexed().len(), 1, "its marker stays indexed");

    // The abort's data is gone: its marker gets a horizon and loses its index entry. A plain
    // record of "k" supersedes the committed one, whose marker is seen with it this time.
    f.append(
        &keyed_batch(
            &[("k".into(), Some("plain".into()))],
            now,
            CompressionType::None,
        ),
        now,
    );
    fill(1);
    assert!(f.clean_once(now + 1));
    assert_eq!(batch_at(0), None, "superseded");
    assert_eq!(batch_at(3).map(|b| (b.1, b.3)), Some((true, true)));
    assert_eq!(batch_at(1).map(|b| (b.1, b.3)), Some((true, false)));
    assert!(aborted_indexed().is_empty());

    // The commit's data is gone now too: a horizon for its marker; the abort marker's has
    // not passed yet.
    fill(2);
    assert!(f.clean_once(now + 2));
    assert_eq!(batch_at(1).map(|b| (b.1, b.3)), Some((true, true)));
    assert!(batch_at(3).is_some());

    // Past the horizons both go; the marker of the producer's last transaction, whose data
    // stays, does not.
    fill(3);
    assert!(f.clean_once(now + 2 + RETENTION + 1));
    assert_eq!(batch_at(1), None);
    assert_eq!(batch_at(3), None);
    assert_eq!(batch_at(5).map(|b| (b.1, b.3)), Some((true, false)));
    assert_eq!(batch_at(4).map(|b| b.4), Some(vec!["k7".to_string()]));
}
