//! Read-only views of `.index` (8-byte entries `[relative offset i32][position i32]`) and
//! `.timeindex` (12-byte entries `[timestamp i64][relative offset i32]`) files, with Kafka's
//! `AbstractIndex` semantics as `DumpLogSegments` opens them: entries = length / entry size
//! (zero padding included), `lookup` is Kafka's warm-section binary search (so results on a
//! corrupt, non-monotonic index are the ones Kafka gets), `sanity_check` is the startup check.
//! The dumpers never write or create index files.

/// Kafka's `AbstractIndex.warmEntries`: the last 8 KiB of entries are searched first.
const WARM_BYTES: usize = 8192;

/// An offset index held in memory (index files are at most `segment.index.bytes`, 10 MiB by
/// default).
#[derive(Debug, Clone)]
pub struct OffsetIndexView<'a> {
    pub bytes: &'a [u8],
    pub base_offset: i64,
}

impl<'a> OffsetIndexView<'a> {
    pub const ENTRY_SIZE: usize = 8;

    pub fn entries(&self) -> usize {
        self.bytes.len() / Self::ENTRY_SIZE
    }

    /// Entry `n` (< `entries()`) as `(absolute offset, position)`.
    pub fn entry(&self, n: usize) -> (i64, i32) {
        let e = &self.bytes[n * 8..n * 8 + 8];
        let rel = i32::from_be_bytes([e[0], e[1], e[2], e[3]]);
        let pos = i32::from_be_bytes([e[4], e[5], e[6], e[7]]);
        (self.base_offset.wrapping_add(i64::from(rel)), pos)
    }

    /// `OffsetIndex.lookup`: the entry with the largest offset <= `target`, else `(base, 0)`.
    pub fn lookup(&self, target: i64) -> (i64, i32) {
        let entries = self.entries();
        match largest_lower_bound(entries, WARM_BYTES / Self::ENTRY_SIZE, target, |n| {
            self.entry(n).0
        }) {
            Some(slot) => self.entry(slot),
            None => (self.base_offset, 0),
        }
    }

    /// `OffsetIndex.sanityCheck`; the error is Kafka's `CorruptIndexException` message.
    pub fn sanity_check(&self, absolute_path: &str) -> Result<(), String> {
        let entries = self.entries();
        let last_offset = if entries == 0 {
            self.base_offset
        } else {
            self.entry(entries - 1).0
        };
        if entries != 0 && last_offset < self.base_offset {
            return Err(format!(
                "Corrupt index found, index file {absolute_path} has non-zero size but the last offset is {last_offset} which is less than the base offset {}",
                self.base_offset
            ));
        }
        if !self.bytes.len().is_multiple_of(Self::ENTRY_SIZE) {
            return Err(format!(
                "Index file {absolute_path} is corrupt, found {} bytes which is neither positive nor a multiple of 8",
                self.bytes.len()
            ));
        }
        Ok(())
    }
}

/// A time index held in memory.
#[derive(Debug, Clone)]
pub struct TimeIndexView<'a> {
    pub bytes: &'a [u8],
    pub base_offset: i64,
}

impl<'a> TimeIndexView<'a> {
    pub const ENTRY_SIZE: usize = 12;

    pub fn entries(&self) -> usize {
        self.bytes.len() / Self::ENTRY_SIZE
    }

    /// Entry `n` (< `entries()`) as `(timestamp, absolute offset)`.
    pub fn entry(&self, n: usize) -> (i64, i64) {
        let e = &self.bytes[n * 12..n * 12 + 12];
        let ts = i64::from_be_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]);
        let rel = i32::from_be_bytes([e[8], e[9], e[10], e[11]]);
        (ts, self.base_offset.wrapping_add(i64::from(rel)))
    }

    /// `TimeIndex.sanityCheck`; the error is Kafka's `CorruptIndexException` message.
    pub fn sanity_check(&self, absolute_path: &str) -> Result<(), String> {
        let entries = self.entries();
        let (last_ts, last_offset) = if entries == 0 {
            (-1, self.base_offset)
        } else {
            self.entry(entries - 1)
        };
        if entries != 0 {
            let first_ts = self.entry(0).0;
            if last_ts < first_ts {
                return Err(format!(
                    "Corrupt time index found, time index file ({absolute_path}) has non-zero size but the last timestamp is {last_ts} which is less than the first timestamp {first_ts}"
                ));
            }
            if last_offset < self.base_offset {
                return Err(format!(
                    "Corrupt time index found, time index file ({absolute_path}) has non-zero size but the last offset is {last_offset} which is less than the first offset {}",
                    self.base_offset
                ));
            }
        }
        if !self.bytes.len().is_multiple_of(Self::ENTRY_SIZE) {
            return Err(format!(
                "Time index file {absolute_path} is corrupt, found {} bytes which is neither positive nor a multiple of 12",
                self.bytes.len()
            ));
        }
        Ok(())
    }
}

/// `AbstractIndex.indexSlotRangeFor(..., LARGEST_LOWER_BOUND)` over `entries` keys given by
/// `key(n)`: the warm section (last `warm` entries) is searched first when the target lies in
/// it. `None` when every key is greater than the target.
fn largest_lower_bound(
    entries: usize,
    warm: usize,
    target: i64,
    key: impl Fn(usize) -> i64,
) -> Option<usize> {
    if entries == 0 {
        return None;
    }
    let first_hot = (entries - 1).saturating_sub(warm);
    if key(first_hot) < target {
        return Some(binary_search(first_hot, entries - 1, target, &key));
    }
    if key(0) > target {
        return None;
    }
    Some(binary_search(0, first_hot, target, &key))
}

fn binary_search(begin: usize, end: usize, target: i64, key: &impl Fn(usize) -> i64) -> usize {
    let (mut lo, mut hi) = (begin, end);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let found = key(mid);
        if found > target {
            hi = mid - 1;
        } else if found < target {
            lo = mid;
        } else {
            return mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_index(entries: &[(i32, i32)]) -> Vec<u8> {
        entries
            .iter()
            .flat_map(|(o, p)| o.to_be_bytes().into_iter().chain(p.to_be_bytes()))
            .collect()
    }

    #[test]
    fn lookup_finds_the_largest_entry_not_above_the_target() {
        let bytes = offset_index(&[(3, 100), (7, 200), (12, 300)]);
        let idx = OffsetIndexView {
            bytes: &bytes,
            base_offset: 50,
        };
        assert_eq!(idx.lookup(49), (50, 0));
        assert_eq!(idx.lookup(53), (53, 100));
        assert_eq!(idx.lookup(56), (53, 100));
        assert_eq!(idx.lookup(57), (57, 200));
        assert_eq!(idx.lookup(1000), (62, 300));
    }

    #[test]
    fn lookup_over_many_entries_uses_both_sections() {
        let entries: Vec<(i32, i32)> = (0..3000).map(|i| (i * 2 + 1, i * 10)).collect();
        let bytes = offset_index(&entries);
        let idx = OffsetIndexView {
            bytes: &bytes,
            base_offset: 0,
        };
        for target in [1i64, 2, 101, 4000, 5999, 6000, 9999] {
            let expected = entries
                .iter()
                .rev()
                .find(|(o, _)| i64::from(*o) <= target)
                .map(|(o, p)| (i64::from(*o), *p));
            assert_eq!(idx.lookup(target), expected.unwrap_or((0, 0)), "{target}");
        }
    }

    #[test]
    fn sanity_checks_match_kafkas_messages() {
        let bytes = offset_index(&[(-1, 0)]);
        let idx = OffsetIndexView {
            bytes: &bytes,
            base_offset: 10,
        };
        assert_eq!(
            idx.sanity_check("/d/10.index").unwrap_err(),
            "Corrupt index found, index file /d/10.index has non-zero size but the last offset is 9 which is less than the base offset 10"
        );
        let bytes = [0u8; 13];
        let ti = TimeIndexView {
            bytes: &bytes,
            base_offset: 0,
        };
        assert_eq!(
            ti.sanity_check("/d/0.timeindex").unwrap_err(),
            "Time index file /d/0.timeindex is corrupt, found 13 bytes which is neither positive nor a multiple of 12"
        );
    }
}
