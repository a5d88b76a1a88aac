//! A partition's segments in base-offset order and their lookups (Kafka 3.9's `LogSegments`):
//! the segment holding an offset (`floor_segment`), the ones below and above it
//! (`lower_segment`, `higher_segments`), the first and last (active) segment, the segments of an offset range, and
//! adding and removing segments. It owns no files: opening, rolling and deleting them is the
//! log's work.

use std::collections::BTreeMap;

use super::log_segment::LogSegment;

/// The segments of one log, keyed by base offset.
///
/// Invariants: each segment is keyed by its own `base_offset()`, so iteration is in increasing
/// offset order; the last segment, when there is one, is the log's active segment. The log that
/// owns these segments keeps them non-empty between calls; this type does not check it (a log
/// is loaded, truncated fully and closed through an empty state).
#[derive(Debug, Default)]
pub(crate) struct LogSegments {
    segments: BTreeMap<i64, LogSegment>,
}

impl LogSegments {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    pub(crate) fn number_of_segments(&self) -> usize {
        self.segments.len()
    }

    /// Adds `segment` at its base offset; returns the segment it replaced there, if any.
    pub(crate) fn add(&mut self, segment: LogSegment) -> Option<LogSegment> {
        self.segments.insert(segment.base_offset(), segment)
    }

    /// Takes the segment at base offset `offset` out, if there is one. Its files stay.
    pub(crate) fn remove(&mut self, offset: i64) -> Option<LogSegment> {
        self.segments.remove(&offset)
    }

    /// Takes every segment out, oldest first. Their files stay.
    pub(crate) fn clear(&mut self) -> impl Iterator<Item = LogSegment> + use<> {
        std::mem::take(&mut self.segments).into_values()
    }

    /// The segment with base offset `offset`.
    pub(crate) fn get(&self, offset: i64) -> Option<&LogSegment> {
        self.segments.get(&offset)
    }

    pub(crate) fn get_mut(&mut self, offset: i64) -> Option<&mut LogSegment> {
        self.segments.get_mut(&offset)
    }

    /// The base offsets, in increasing order.
    pub(crate) fn base_offsets(&self) -> impl DoubleEndedIterator<Item = i64> + '_ {
        self.segments.keys().copied()
    }

    /// Every segment, oldest first.
    pub(crate) fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut LogSegment> + '_ {
        self.segments.values_mut()
    }

    /// Kafka's `values(from, to)`: the segments from the one holding `from` (or the first, when
    /// `from` is below every base) to the last whose base is below `to`. Empty when that start
    /// is not below `to`. Unlike Kafka's, a `to` at or below `from` but above the start still
    /// gives the segment holding `from`: a flush up to the recovery point fsyncs it again.
    pub(crate) fn values_in(
        &self,
        from: i64,
        to: i64,
    ) -> impl DoubleEndedIterator<Item = &LogSegment> + '_ {
        let start = self.floor_or_first_base(from).filter(|start| *start < to);
        start
            .map(|start| self.segments.range(start..to))
            .into_iter()
            .flatten()
            .map(|(_, segment)| segment)
    }

    /// The segments from the one holding `from` (or the first, when `from` is below every
    /// base) to the last.
    pub(crate) fn values_from(&self, from: i64) -> impl DoubleEndedIterator<Item = &LogSegment> {
        let start = self.floor_or_first_base(from).unwrap_or(i64::MAX);
        self.segments.range(start..).map(|(_, segment)| segment)
    }

    /// Kafka's `floorSegment`: the segment with the greatest base offset at or below `offset`.
    pub(crate) fn floor_segment(&self, offset: i64) -> Option<&LogSegment> {
        self.segments
            .range(..=offset)
            .next_back()
            .map(|(_, segment)| segment)
    }

    /// Kafka's `lowerSegment`: the segment with the greatest base offset below `offset`.
    pub(crate) fn lower_segment(&self, offset: i64) -> Option<&LogSegment> {
        self.segments
            .range(..offset)
            .next_back()
            .map(|(_, segment)| segment)
    }

    /// Kafka's `higherSegments`: every segment whose base offset is above `offset`.
    pub(crate) fn higher_segments(
        &self,
        offset: i64,
    ) -> impl DoubleEndedIterator<Item = &LogSegment> + '_ {
        self.segments
            .range(offset.saturating_add(1)..)
            .map(|(_, segment)| segment)
            .filter(move |segment| segment.base_offset() > offset)
    }

    pub(crate) fn first_segment_base_offset(&self) -> Option<i64> {
        self.segments.keys().next().copied()
    }

    /// The newest segment: the log's active one.
    pub(crate) fn last_segment(&self) -> Option<&LogSegment> {
        self.segments.values().next_back()
    }

    pub(crate) fn last_segment_mut(&mut self) -> Option<&mut LogSegment> {
        self.segments.values_mut().next_back()
    }

    /// The sum of the segments' sizes in bytes.
    pub(crate) fn size_in_bytes(&self) -> u64 {
        self.segments.values().map(LogSegment::size).sum()
    }

    /// The base of the segment holding `offset`, else the first segment's.
    fn floor_or_first_base(&self, offset: i64) -> Option<i64> {
        self.segments
            .range(..=offset)
            .next_back()
            .or_else(|| self.segments.iter().next())
            .map(|(base, _)| *base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::log_config::LogConfig;

    const T: i64 = 1_700_000_000_000;

    fn segments(dir: &std::path::Path, bases: &[i64]) -> LogSegments {
        let mut segments = LogSegments::new();
        for base in bases {
            let segment = LogSegment::open(dir, *base, &LogConfig::default(), true, 0, T).unwrap();
            assert!(segments.add(segment).is_none());
        }
        segments
    }

    fn bases<'a>(it: impl Iterator<Item = &'a LogSegment>) -> Vec<i64> {
        it.map(LogSegment::base_offset).collect()
    }

    #[test]
    fn lookups_follow_kafkas_log_segments() {
        let dir = tempfile::tempdir().unwrap();
        let s = segments(dir.path(), &[10, 20, 30]);
        assert_eq!(s.number_of_segments(), 3);
        assert!(s.get(20).is_some() && s.get(25).is_none());
        assert_eq!(s.floor_segment(25).map(LogSegment::base_offset), Some(20));
        assert_eq!(s.floor_segment(20).map(LogSegment::base_offset), Some(20));
        assert!(s.floor_segment(5).is_none());
        assert_eq!(s.lower_segment(20).map(LogSegment::base_offset), Some(10));
        assert_eq!(bases(s.higher_segments(30)), Vec::<i64>::new());
        assert_eq!(bases(s.higher_segments(10)), vec![20, 30]);
        assert_eq!(s.first_segment_base_offset(), Some(10));
        assert_eq!(s.last_segment().map(LogSegment::base_offset), Some(30));
        assert_eq!(bases(s.values_in(25, 31)), vec![20, 30]);
        assert_eq!(bases(s.values_in(5, 30)), vec![10, 20]);
        assert_eq!(bases(s.values_in(25, 25)), vec![20]);
        assert_eq!(bases(s.values_in(25, 20)), Vec::<i64>::new());
        assert_eq!(bases(s.values_in(20, 20)), Vec::<i64>::new());
        assert_eq!(bases(s.values_from(25)), vec![20, 30]);
        assert_eq!(bases(s.values_from(0)), vec![10, 20, 30]);
        assert_eq!(s.base_offsets().collect::<Vec<_>>(), vec![10, 20, 30]);
    }

    #[test]
    fn add_remove_and_clear() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = segments(dir.path(), &[0, 5]);
        assert_eq!(s.remove(5).map(|seg| seg.base_offset()), Some(5));
        assert!(s.remove(5).is_none());
        assert_eq!(s.clear().count(), 1);
        assert!(s.is_empty());
        assert!(s.values_from(0).next().is_none());
    }
}
