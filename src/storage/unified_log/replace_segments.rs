//! Swapping cleaned segments into a log, one file rename at a time, and the frozen views the
//! cleaner takes; the protocol and why it is crash-safe are in `crate::storage::replace_segments`.

use std::sync::Arc;

use super::UnifiedLog;
use crate::storage::StorageError;
use crate::storage::checkpoint_file::flush_parent_dir;
use crate::storage::file_names::{CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};
use crate::storage::log_segment::{LogSegment, SegmentFile};
use crate::storage::replace_segments::{LogSnapshot, SegmentView};

impl UnifiedLog {
    /// A view of every segment, taken under the log's lock; the cleaner reads the sealed ones
    /// after releasing it.
    pub fn cleaner_snapshot(&mut self) -> Result<LogSnapshot, StorageError> {
        let log_segments = self.local_log.segments_mut();
        let mut segments = Vec::with_capacity(log_segments.number_of_segments());
        for segment in log_segments.values_mut() {
            segments.push(SegmentView {
                base_offset: segment.base_offset(),
                records: segment.log().snapshot(),
                offset_index_bytes: segment.offset_index().size_in_bytes(),
                time_index_bytes: segment.time_index().size_in_bytes(),
                largest_timestamp: segment.largest_timestamp()?,
                first_batch_timestamp: segment.first_batch_timestamp()?,
                last_modified_ms: segment.last_modified_ms()?,
                aborted_txns: segment.txn_index().entries().to_vec(),
            });
        }
        Ok(LogSnapshot {
            topic_partition: self.topic_partition().clone(),
            dir: self.dir().to_path_buf(),
            config: self.config().clone(),
            log_start_offset: self.log_start_offset(),
            log_end_offset: self.log_end_offset(),
            last_stable_offset: self.last_stable_offset(),
            segments,
        })
    }

    /// Swaps `new_segments` (files named `.cleaned`, sealed, fsynced) in for the segments `old`
    /// describes; see the module docs. `CleaningAborted` when the log changed since `old` was
    /// taken: nothing was renamed then, and the caller deletes the `.cleaned` files.
    pub fn replace_segments(
        &mut self,
        new_segments: Vec<LogSegment>,
        old: &[&SegmentView],
        now_ms: i64,
    ) -> Result<(), StorageError> {
        self.replace_segments_until(new_segments, old, now_ms, None)
            .map(|_| ())
    }

    /// The swap, stopping before rename number `stop_before` when given (a crash injected by
    /// tests); returns whether it ran to the end.
    fn replace_segments_until(
        &mut self,
        mut new_segments: Vec<LogSegment>,
        old: &[&SegmentView],
        now_ms: i64,
        stop_before: Option<usize>,
    ) -> Result<bool, StorageError> {
        self.check_unchanged(old)?;
        new_segments.sort_by_key(LogSegment::base_offset);
        let mut step = 0usize;
        let mut crash = || {
            let stop = stop_before == Some(step);
            step += 1;
            stop
        };
        for segment in new_segments.iter_mut().rev() {
            for file in SegmentFile::ALL {
                if crash() {
                    return Ok(false);
                }
                segment.change_file_suffix(file, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)?;
            }
        }
        flush_parent_dir(&crate::storage::file_names::log_file(self.dir(), 0))?;
        for view in old {
            let Some(mut segment) = self.local_log.segments_mut().remove(view.base_offset) else {
                continue;
            };
            for file in SegmentFile::ALL {
                if crash() {
                    return Ok(false);
                }
                segment.change_file_suffix(file, "", DELETED_FILE_SUFFIX)?;
            }
            self.local_log.push_pending_delete(segment, now_ms);
        }
        for mut segment in new_segments {
            for file in SegmentFile::ALL {
                if crash() {
                    return Ok(false);
                }
                segment.change_file_suffix(file, SWAP_FILE_SUFFIX, "")?;
            }
            self.local_log.segments_mut().add(segment);
        }
        flush_parent_dir(&crate::storage::file_names::log_file(self.dir(), 0))?;
        Ok(true)
    }

    /// Every old segment must still be in the log, sealed, the same file at the same size.
    fn check_unchanged(&self, old: &[&SegmentView]) -> Result<(), StorageError> {
        let active_base = self.active_segment()?.base_offset();
        let unchanged = old.iter().all(|view| {
            self.local_log
                .segments()
                .get(view.base_offset)
                .is_some_and(|segment| {
                    view.base_offset < active_base
                        && segment.size() == view.size()
                        && Arc::ptr_eq(&segment.log().file_handle(), &view.records.file_handle())
                })
        });
        if unchanged {
            Ok(())
        } else {
            Err(StorageError::CleaningAborted {
                topic_partition: self.topic_partition().clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::TopicPartition;
    use crate::protocol::record::batch::RecordBatchHeader;
    use crate::protocol::record::batch_iter::BatchIter;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use crate::protocol::record::compression::CompressionType;
    use crate::protocol::record::records::{RecordIter, batch_records};
    use crate::storage::log_config::LogConfig;
    use crate::storage::log_reads::FetchIsolation;
    use std::io::IoSlice;

    const T: i64 = 1_767_225_600_000;

    fn config() -> LogConfig {
        LogConfig {
            segment_bytes: 400,
            index_interval_bytes: 64,
            segment_index_bytes: 1024,
            file_delete_delay_ms: 0,
            ..LogConfig::default()
        }
    }

    fn batch(base: i64, key: &str, value: &str) -> Vec<u8> {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.base_offset = base;
        b.records = vec![SimpleRecord::new(
            T + base,
            Some(key.as_bytes().to_vec()),
            Some(value.as_bytes().to_vec()),
        )];
        b.build().unwrap()
    }

    /// Every record of the log as (offset, key, value).
    fn contents(log: &UnifiedLog) -> Vec<(i64, String, String)> {
        let mut out = Vec::new();
        let mut next = log.log_start_offset();
        while next < log.log_end_offset() {
            let info = log
                .read(next, 1 << 20, FetchIsolation::LogEnd, true)
                .unwrap();
            let bytes = info.records.read_to_vec().unwrap();
            if bytes.is_empty() {
                break;
            }
            for entry in BatchIter::new(&bytes) {
                let entry = entry.unwrap();
                let h = RecordBatchHeader::parse(entry.bytes).unwrap();
                let records = batch_records(entry.bytes, &h, 1 << 20).unwrap();
                for r in RecordIter::new(&records, h.records_count) {
                    let r = r.unwrap();
                    let text =
                        |b: Option<&[u8]>| String::from_utf8_lossy(b.unwrap_or(b"")).into_owned();
                    out.push((r.offset(h.base_offset), text(r.key), text(r.value)));
                }
                next = h.next_offset();
            }
        }
        out
    }

    /// A log of three sealed segments (offsets 0-2, 3-5, 6-8) and an active one from 9, where
    /// keys repeat so that a cleaned copy of the first three holds only offsets 2, 5 and 8.
    fn build_log(dir: &std::path::Path) -> UnifiedLog {
        let mut log = UnifiedLog::open(
            dir.to_path_buf(),
            TopicPartition::new("t", 0),
            config(),
            0,
            0,
            true,
            T,
        )
        .unwrap();
        for i in 0..10 {
            let b = batch(0, &format!("k{}", i % 3), &format!("v{i}"));
            if i % 3 == 0 && i > 0 {
                log.roll(None, T).unwrap();
            }
            log.append_as_leader(
                &b,
                0,
                crate::storage::log_validator::AppendOrigin::Client,
                T,
            )
            .unwrap();
        }
        log
    }

    /// A cleaned segment at `base` holding one batch at each of `offsets` (key `k2`, value
    /// `v<offset>`, as the original has them), named `.cleaned`.
    fn cleaned_segment(log: &UnifiedLog, base: i64, offsets: &[i64]) -> LogSegment {
        let mut seg = LogSegment::open_with_suffix(
            log.dir(),
            base,
            &config(),
            true,
            0,
            T,
            CLEANED_FILE_SUFFIX,
        )
        .unwrap();
        for &offset in offsets {
            let b = batch(offset, "k2", &format!("v{offset}"));
            seg.append(offset, T + offset, offset, &[IoSlice::new(&b)])
                .unwrap();
        }
        seg.on_become_inactive_segment().unwrap();
        seg.flush().unwrap();
        seg
    }

    /// Swaps `new` (base, offsets) in for the first three segments, stopping before each
    /// rename in turn, and reopens the log as after a crash: it holds either the old records or
    /// exactly `kept` plus the active segment's, with no temporary file left.
    fn crash_at_every_rename(new: &[(i64, &[i64])], kept: &[i64]) {
        // Each segment's files are renamed one by one: its log and its three indexes. These
        // segments have no `.txnindex`, so renaming it (the last of each) renames nothing.
        let files = SegmentFile::ALL.len();
        let steps = files * new.len() + files * 3 + files * new.len();
        let mut outcomes = Vec::new();
        for stop in 0..=steps {
            let dir = tempfile::tempdir().unwrap();
            let pdir = dir.path().join("t-0");
            let mut log = build_log(&pdir);
            let before = contents(&log);
            let snapshot = log.cleaner_snapshot().unwrap();
            let old: Vec<&SegmentView> = snapshot.segments[..3].iter().collect();
            let segments = new
                .iter()
                .map(|(base, offsets)| cleaned_segment(&log, *base, offsets))
                .collect();
            let done = log
                .replace_segments_until(segments, &old, T, Some(stop).filter(|s| *s < steps))
                .unwrap();
            assert_eq!(done, stop == steps);
            let expected_new: Vec<_> = before
                .iter()
                .filter(|(o, _, _)| kept.contains(o) || *o == 9)
                .cloned()
                .collect();
            // The crash: nothing closed or flushed beyond what the protocol did.
            drop(snapshot);
            drop(log);
            let reopened = UnifiedLog::open(
                pdir.clone(),
                TopicPartition::new("t", 0),
                config(),
                0,
                0,
                false,
                T,
            )
            .unwrap();
            let after = contents(&reopened);
            // Committed once every file there is of the new segments is a `.swap`: the last
            // step of that phase is a missing `.txnindex`'s.
            let committed = stop >= files * new.len() - 1;
            if committed {
                assert_eq!(after, expected_new, "stop before rename {stop}");
            } else {
                assert_eq!(after, before, "stop before rename {stop}");
            }
            assert_eq!(reopened.log_end_offset(), 10);
            let leftovers: Vec<String> = std::fs::read_dir(&pdir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    n.ends_with(".cleaned") || n.ends_with(".swap") || n.ends_with(".deleted")
                })
                .collect();
            assert!(leftovers.is_empty(), "{leftovers:?}");
            outcomes.push(committed);
        }
        assert!(outcomes.contains(&true) && outcomes.contains(&false));
    }

    #[test]
    fn a_crash_before_or_after_any_rename_leaves_the_old_or_the_new_log() {
        crash_at_every_rename(&[(0, &[2, 5, 8])], &[2, 5, 8]);
    }

    #[test]
    fn an_empty_last_segment_makes_recovery_replace_every_old_segment() {
        // The kept data ends at offset 2, below the last old segment (6): without the empty
        // segment at 6, recovery would keep the old segments at 3 and 6 and their records.
        crash_at_every_rename(&[(0, &[2]), (6, &[])], &[2]);
    }

    #[test]
    fn a_changed_log_refuses_the_swap() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = build_log(dir.path());
        let snapshot = log.cleaner_snapshot().unwrap();
        let old: Vec<&SegmentView> = snapshot.segments[..3].iter().collect();
        log.truncate_to(4, T).unwrap();
        let new = cleaned_segment(&log, 0, &[2]);
        let err = log.replace_segments(vec![new], &old, T).unwrap_err();
        assert!(matches!(err, StorageError::CleaningAborted { .. }), "{err}");
        assert!(crate::storage::file_names::log_file(dir.path(), 0).exists());
    }
}
