//! `--verify`: the existing `.index` and `.timeindex` of a segment checked against its batches,
//! in the same pass that scans the `.log`.
//!
//! Kafka's rules for an index it trusts: the file is whole entries; offsets strictly increase
//! and are not below the segment's base; every offset-index entry `(offset, position)` points
//! at the start of a batch whose last offset is `offset`; time-index timestamps strictly
//! increase (an entry is only ever appended for a new maximum) and every entry
//! `(timestamp, offset)` names a batch whose last offset is `offset` and whose max timestamp is
//! `timestamp`. The first entry (by entry number) breaking any rule is reported per file.

use crate::protocol::record::big_endian::{i32_at, i64_at};
use crate::storage::offset_index::OFFSET_INDEX_ENTRY_SIZE;
use crate::storage::segment_scan::ScannedBatch;
use crate::storage::time_index::TIME_INDEX_ENTRY_SIZE;

/// The first bad entry of an index file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadEntry {
    /// The entry's number, from 0.
    pub entry: usize,
    /// The entry's fields as read (`offset`, `position`, `timestamp`); empty for a partial
    /// entry.
    pub values: Vec<(&'static str, i64)>,
    pub detail: String,
}

impl BadEntry {
    /// `entry 3 (offset 57, position 4104)`.
    pub(crate) fn describe(&self) -> String {
        if self.values.is_empty() {
            format!("entry {}", self.entry)
        } else {
            format!("entry {} ({})", self.entry, self.fields())
        }
    }

    /// `offset 57, position 4104`.
    fn fields(&self) -> String {
        let values: Vec<String> = self
            .values
            .iter()
            .map(|(name, value)| format!("{name} {value}"))
            .collect();
        values.join(", ")
    }
}

/// The index-kind-specific part of a check: how entries parse, which fields they show, how
/// two neighbours must relate and which batch an entry must match.
trait EntryKind: Copy {
    const SIZE: usize;
    fn parse(bytes: &[u8], base_offset: i64) -> Self;
    fn offset(&self) -> i64;
    fn values(&self) -> Vec<(&'static str, i64)>;
    /// Why `self` may not follow `previous`, if it may not.
    fn out_of_order(&self, previous: &Self) -> Option<String>;
}

#[derive(Debug, Clone, Copy)]
struct OffsetEntry {
    offset: i64,
    position: u32,
}

impl EntryKind for OffsetEntry {
    const SIZE: usize = OFFSET_INDEX_ENTRY_SIZE;
    fn parse(bytes: &[u8], base_offset: i64) -> Self {
        OffsetEntry {
            offset: base_offset.saturating_add(i64::from(i32_at(bytes, 0))),
            position: i32_at(bytes, 4) as u32,
        }
    }
    fn offset(&self) -> i64 {
        self.offset
    }
    fn values(&self) -> Vec<(&'static str, i64)> {
        vec![
            ("offset", self.offset),
            ("position", i64::from(self.position)),
        ]
    }
    fn out_of_order(&self, previous: &Self) -> Option<String> {
        (self.offset <= previous.offset).then(|| {
            format!(
                "offset {} does not increase on the previous entry's {}",
                self.offset, previous.offset
            )
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct TimeEntry {
    timestamp: i64,
    offset: i64,
}

impl EntryKind for TimeEntry {
    const SIZE: usize = TIME_INDEX_ENTRY_SIZE;
    fn parse(bytes: &[u8], base_offset: i64) -> Self {
        TimeEntry {
            timestamp: i64_at(bytes, 0),
            offset: base_offset.saturating_add(i64::from(i32_at(bytes, 8))),
        }
    }
    fn offset(&self) -> i64 {
        self.offset
    }
    fn values(&self) -> Vec<(&'static str, i64)> {
        vec![("timestamp", self.timestamp), ("offset", self.offset)]
    }
    fn out_of_order(&self, previous: &Self) -> Option<String> {
        if self.timestamp <= previous.timestamp {
            Some(format!(
                "timestamp {} does not increase on the previous entry's {}",
                self.timestamp, previous.timestamp
            ))
        } else if self.offset <= previous.offset {
            Some(format!(
                "offset {} does not increase on the previous entry's {}",
                self.offset, previous.offset
            ))
        } else {
            None
        }
    }
}

/// The entries of one index file and what has been found wrong with them so far.
#[derive(Debug)]
struct Check<E> {
    /// Whole entries in the file.
    whole: usize,
    entries: Vec<E>,
    /// The first entry breaking a rule that needs no batch: size, order, base.
    structural: Option<BadEntry>,
    /// The first entry (by number) not matching the batches.
    against_batches: Option<BadEntry>,
}

impl<E: EntryKind> Check<E> {
    /// Parses `bytes` and applies the rules that need no batch. Entries from the first one
    /// breaking them on are not matched against batches: the report names the first only.
    fn new(bytes: &[u8], base_offset: i64) -> Self {
        let whole = bytes.len() / E::SIZE;
        let mut check = Check {
            whole,
            entries: Vec::with_capacity(whole),
            structural: None,
            against_batches: None,
        };
        for (n, chunk) in bytes.chunks_exact(E::SIZE).enumerate() {
            let entry = E::parse(chunk, base_offset);
            let problem = if entry.offset() < base_offset {
                Some(format!(
                    "offset {} is below the segment's base offset {base_offset}",
                    entry.offset()
                ))
            } else {
                check
                    .entries
                    .last()
                    .and_then(|prev| entry.out_of_order(prev))
            };
            if let Some(detail) = problem {
                let detail = if n > 0 && bytes[n * E::SIZE..].iter().all(|b| *b == 0) {
                    format!(
                        "the file is zero from here on ({} empty entries): an index never \
                         trimmed, as a broker that did not shut down cleanly leaves it",
                        whole - n
                    )
                } else {
                    detail
                };
                check.structural = Some(BadEntry {
                    entry: n,
                    values: entry.values(),
                    detail,
                });
                return check;
            }
            check.entries.push(entry);
        }
        if !bytes.len().is_multiple_of(E::SIZE) {
            check.structural = Some(BadEntry {
                entry: whole,
                values: Vec::new(),
                detail: format!(
                    "the file is {} bytes, not a whole number of {}-byte entries: the last \
                     entry is cut short",
                    bytes.len(),
                    E::SIZE
                ),
            });
        }
        check
    }

    fn mismatch(&mut self, n: usize, detail: String) {
        if self
            .against_batches
            .as_ref()
            .is_none_or(|bad| n < bad.entry)
        {
            let values = self.entries.get(n).map(E::values).unwrap_or_default();
            self.against_batches = Some(BadEntry {
                entry: n,
                values,
                detail,
            });
        }
    }

    fn first_bad(self) -> Option<BadEntry> {
        match (self.structural, self.against_batches) {
            (Some(a), Some(b)) => Some(if b.entry < a.entry { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// Checks a segment's two index files against the batches the scan visits.
///
/// Feed it every valid batch in file order with [`IndexVerifier::visit`], then call
/// [`IndexVerifier::finish`]. Memory is proportional to the index entries, not the batches.
#[derive(Debug)]
pub(super) struct IndexVerifier {
    offsets: Option<Check<OffsetEntry>>,
    times: Option<Check<TimeEntry>>,
    /// Offset-index entry numbers sorted by position, and the next one to match.
    by_position: Vec<usize>,
    next_by_position: usize,
    /// The next time-index entry to match (entries are in offset order).
    next_time: usize,
    previous: Option<ScannedBatch>,
}

/// What [`IndexVerifier::finish`] found for one index file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The file does not exist.
    Missing,
    /// `entries` whole entries, the first bad one if any.
    Checked {
        entries: usize,
        first_bad: Option<BadEntry>,
    },
}

impl IndexVerifier {
    /// `offset_index` and `time_index` are the files' bytes (`None` when missing).
    pub(super) fn new(
        offset_index: Option<&[u8]>,
        time_index: Option<&[u8]>,
        base_offset: i64,
    ) -> Self {
        let offsets = offset_index.map(|b| Check::<OffsetEntry>::new(b, base_offset));
        let times = time_index.map(|b| Check::<TimeEntry>::new(b, base_offset));
        let mut by_position: Vec<usize> = offsets
            .as_ref()
            .map_or(0..0, |c| 0..c.entries.len())
            .collect();
        if let Some(check) = &offsets {
            by_position.sort_by_key(|n| (check.entries[*n].position, *n));
        }
        IndexVerifier {
            offsets,
            times,
            by_position,
            next_by_position: 0,
            next_time: 0,
            previous: None,
        }
    }

    /// Matches the entries that point at or before `batch`, the next valid batch in the file.
    pub(super) fn visit(&mut self, batch: &ScannedBatch) {
        if let Some(check) = self.offsets.as_mut() {
            while let Some(&n) = self.by_position.get(self.next_by_position) {
                let entry = check.entries[n];
                let position = u64::from(entry.position);
                if position > batch.position {
                    break;
                }
                self.next_by_position += 1;
                if position < batch.position {
                    let inside = self.previous.map_or_else(String::new, |p| {
                        format!(
                            " (it is inside the batch at position {} ending at offset {})",
                            p.position, p.last_offset
                        )
                    });
                    check.mismatch(
                        n,
                        format!("position {position} is not the start of a batch{inside}"),
                    );
                } else if batch.last_offset != entry.offset {
                    check.mismatch(
                        n,
                        format!(
                            "the batch at position {position} ends at offset {}, not {}",
                            batch.last_offset, entry.offset
                        ),
                    );
                }
            }
        }
        if let Some(check) = self.times.as_mut() {
            while let Some(entry) = check.entries.get(self.next_time).copied() {
                if entry.offset > batch.last_offset {
                    break;
                }
                let n = self.next_time;
                self.next_time += 1;
                if entry.offset < batch.last_offset {
                    check.mismatch(
                        n,
                        format!(
                            "no batch ends at offset {} (it is inside the batch at position {} \
                             ending at offset {})",
                            entry.offset, batch.position, batch.last_offset
                        ),
                    );
                } else if entry.timestamp != batch.max_timestamp {
                    check.mismatch(
                        n,
                        format!(
                            "the batch ending at offset {} (position {}) has max timestamp {}, \
                             not {}",
                            entry.offset, batch.position, batch.max_timestamp, entry.timestamp
                        ),
                    );
                }
            }
        }
        self.previous = Some(*batch);
    }

    /// Entries left unmatched point past the valid batches. Returns the verdicts for the
    /// offset index and the time index.
    pub(super) fn finish(mut self, valid_bytes: u64, next_offset: i64) -> (Verdict, Verdict) {
        if let Some(check) = self.offsets.as_mut() {
            for &n in &self.by_position[self.next_by_position.min(self.by_position.len())..] {
                let position = check.entries[n].position;
                check.mismatch(
                    n,
                    format!(
                        "position {position} is past the end of the valid batches \
                         ({valid_bytes} bytes)"
                    ),
                );
            }
        }
        if let Some(check) = self.times.as_mut()
            && let Some(entry) = check.entries.get(self.next_time).copied()
        {
            let n = self.next_time;
            check.mismatch(
                n,
                format!(
                    "offset {} is past the last valid batch (the next offset is \
                     {next_offset})",
                    entry.offset
                ),
            );
        }
        (verdict(self.offsets), verdict(self.times))
    }
}

fn verdict<E: EntryKind>(check: Option<Check<E>>) -> Verdict {
    match check {
        None => Verdict::Missing,
        Some(check) => Verdict::Checked {
            entries: check.whole,
            first_bad: check.first_bad(),
        },
    }
}

/// The first difference between an `.index` and its rebuild (`--strict`).
pub(super) fn first_offset_index_difference(
    existing: &[u8],
    rebuilt: &[u8],
    base_offset: i64,
) -> Option<BadEntry> {
    first_difference::<OffsetEntry>(existing, rebuilt, base_offset)
}

/// The first difference between a `.timeindex` and its rebuild (`--strict`).
pub(super) fn first_time_index_difference(
    existing: &[u8],
    rebuilt: &[u8],
    base_offset: i64,
) -> Option<BadEntry> {
    first_difference::<TimeEntry>(existing, rebuilt, base_offset)
}

/// The first difference, as a bad entry of the existing file: an entry that differs, one the
/// rebuild does not have, or the first the existing file lacks.
fn first_difference<E: EntryKind>(
    existing: &[u8],
    rebuilt: &[u8],
    base_offset: i64,
) -> Option<BadEntry> {
    if existing == rebuilt {
        return None;
    }
    let common = existing
        .iter()
        .zip(rebuilt)
        .take_while(|(a, b)| a == b)
        .count();
    let entry = common / E::SIZE;
    let at = |bytes: &[u8]| {
        bytes
            .get(entry * E::SIZE..(entry + 1) * E::SIZE)
            .map(|b| E::parse(b, base_offset))
    };
    let have = existing.len() / E::SIZE;
    let want = rebuilt.len() / E::SIZE;
    let (values, detail) = match (at(existing), at(rebuilt)) {
        (Some(mine), Some(theirs)) => (
            mine.values(),
            format!(
                "differs from the rebuild's entry {entry} ({})",
                BadEntry {
                    entry,
                    values: theirs.values(),
                    detail: String::new()
                }
                .fields()
            ),
        ),
        (Some(mine), None) => (
            mine.values(),
            format!("the file has {have} entries where the rebuild has {want}"),
        ),
        (None, _) => (
            Vec::new(),
            format!(
                "the file has {have} entries ({} bytes) where the rebuild has {want}",
                existing.len()
            ),
        ),
    };
    Some(BadEntry {
        entry,
        values,
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const BASE: i64 = 100;

    fn offset_entries(entries: &[(i64, u32)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (offset, position) in entries {
            out.extend_from_slice(&((offset - BASE) as i32).to_be_bytes());
            out.extend_from_slice(&position.to_be_bytes());
        }
        out
    }

    fn time_entries(entries: &[(i64, i64)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (timestamp, offset) in entries {
            out.extend_from_slice(&timestamp.to_be_bytes());
            out.extend_from_slice(&((offset - BASE) as i32).to_be_bytes());
        }
        out
    }

    /// Batches of 1000 bytes ending at offsets 104, 109, ... with max timestamp 10 × offset.
    fn batches(n: u64) -> Vec<ScannedBatch> {
        (0..n)
            .map(|i| ScannedBatch {
                position: i * 1000,
                size: 1000,
                last_offset: BASE + 4 + 5 * i as i64,
                max_timestamp: 10 * (BASE + 4 + 5 * i as i64),
            })
            .collect()
    }

    fn check(index: &[u8], time: &[u8]) -> (Verdict, Verdict) {
        let mut verifier = IndexVerifier::new(Some(index), Some(time), BASE);
        let all = batches(10);
        for batch in &all {
            verifier.visit(batch);
        }
        verifier.finish(10_000, BASE + 50)
    }

    fn first_bad(verdict: Verdict) -> Option<BadEntry> {
        match verdict {
            Verdict::Checked { first_bad, .. } => first_bad,
            Verdict::Missing => panic!("missing"),
        }
    }

    #[test]
    fn good_indexes_have_no_bad_entry() {
        let index = offset_entries(&[(109, 1000), (124, 4000), (149, 9000)]);
        let time = time_entries(&[(1090, 109), (1490, 149)]);
        let (i, t) = check(&index, &time);
        assert_eq!(
            i,
            Verdict::Checked {
                entries: 3,
                first_bad: None
            }
        );
        assert_eq!(
            t,
            Verdict::Checked {
                entries: 2,
                first_bad: None
            }
        );
        let empty = check(&[], &[]);
        assert_eq!(first_bad(empty.0), None);
        assert_eq!(first_bad(empty.1), None);
    }

    #[test]
    fn the_first_bad_entry_wins_whatever_rule_it_breaks() {
        // Entry 1 points mid-batch; entry 2 goes backwards: entry 1 is reported.
        let index = offset_entries(&[(109, 1000), (114, 2500), (110, 3000)]);
        let bad = first_bad(check(&index, &[]).0).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(
            bad.detail.contains("not the start of a batch"),
            "{}",
            bad.detail
        );
        assert_eq!(bad.describe(), "entry 1 (offset 114, position 2500)");
        // Entry 0 names the wrong batch end.
        let index = offset_entries(&[(110, 1000)]);
        let bad = first_bad(check(&index, &[]).0).unwrap();
        assert!(
            bad.detail.contains("ends at offset 109, not 110"),
            "{}",
            bad.detail
        );
    }

    #[test]
    fn sizes_bases_padding_and_the_end_of_the_data() {
        let mut index = offset_entries(&[(109, 1000)]);
        index.push(7);
        let bad = first_bad(check(&index, &[]).0).unwrap();
        assert_eq!((bad.entry, bad.values.len()), (1, 0));
        assert!(bad.detail.contains("9 bytes"), "{}", bad.detail);

        let index = offset_entries(&[(99, 0)]);
        let bad = first_bad(check(&index, &[]).0).unwrap();
        assert!(
            bad.detail.contains("below the segment's base"),
            "{}",
            bad.detail
        );

        let mut index = offset_entries(&[(109, 1000)]);
        index.extend_from_slice(&[0; 24]);
        let bad = first_bad(check(&index, &[]).0).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(bad.detail.contains("3 empty entries"), "{}", bad.detail);

        let index = offset_entries(&[(109, 1000), (160, 11_000)]);
        let bad = first_bad(check(&index, &[]).0).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(bad.detail.contains("past the end"), "{}", bad.detail);

        let time = time_entries(&[(1090, 109), (2000, 160)]);
        let bad = first_bad(check(&[], &time).1).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(
            bad.detail.contains("past the last valid batch"),
            "{}",
            bad.detail
        );
    }

    #[test]
    fn time_entries_must_rise_and_match_their_batch() {
        let time = time_entries(&[(1090, 109), (1090, 114)]);
        let bad = first_bad(check(&[], &time).1).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(
            bad.detail.contains("timestamp 1090 does not increase"),
            "{}",
            bad.detail
        );

        let time = time_entries(&[(1090, 109), (1200, 114)]);
        let bad = first_bad(check(&[], &time).1).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(
            bad.detail.contains("has max timestamp 1140, not 1200"),
            "{}",
            bad.detail
        );

        let time = time_entries(&[(1090, 110)]);
        let bad = first_bad(check(&[], &time).1).unwrap();
        assert!(
            bad.detail.contains("no batch ends at offset 110"),
            "{}",
            bad.detail
        );
    }

    #[test]
    fn missing_files_are_reported_as_such() {
        let verifier = IndexVerifier::new(None, None, BASE);
        assert_eq!(
            verifier.finish(0, BASE),
            (Verdict::Missing, Verdict::Missing)
        );
    }

    #[test]
    fn strict_differences_name_the_entry() {
        let rebuilt = offset_entries(&[(109, 1000), (124, 4000)]);
        assert_eq!(
            first_offset_index_difference(&rebuilt, &rebuilt, BASE),
            None
        );
        let other = offset_entries(&[(109, 1000), (129, 5000)]);
        let bad = first_offset_index_difference(&other, &rebuilt, BASE).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(
            bad.detail.contains("offset 124, position 4000"),
            "{}",
            bad.detail
        );
        let shorter = offset_entries(&[(109, 1000)]);
        let bad = first_offset_index_difference(&shorter, &rebuilt, BASE).unwrap();
        assert_eq!(bad.entry, 1);
        assert!(bad.detail.contains("1 entries"), "{}", bad.detail);
        let time = time_entries(&[(1090, 109)]);
        let bad = first_time_index_difference(&time, &[], BASE).unwrap();
        assert_eq!(bad.describe(), "entry 0 (timestamp 1090, offset 109)");
    }

    proptest! {
        /// Index bytes from anywhere never panic the verifier.
        #[test]
        fn arbitrary_index_bytes_never_panic(
            index in proptest::collection::vec(any::<u8>(), 0..200),
            time in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let _ = check(&index, &time);
            let _ = first_offset_index_difference(&index, &time, BASE);
            let _ = first_time_index_difference(&time, &index, BASE);
        }
    }
}
