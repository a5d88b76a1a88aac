//! Walking the records of a v2 batch in place.
//!
//! Record format (Kafka's `DefaultRecord`), all varints zigzag:
//! `length varint` (bytes after it), `attributes i8`, `timestamp_delta varlong`,
//! `offset_delta varint`, `key_length varint` + key (negative = null), `value_length varint` +
//! value (negative = null), `headers_count varint`, then per header `key_length varint` + key
//! (never null), `value_length varint` + value (negative = null).
//!
//! Walking borrows from the input: keys, values and header bytes are sub-slices, and a record
//! costs no allocation. Error messages are Kafka's (`DefaultRecord.readFrom`,
//! `DefaultRecordBatch.RecordIterator`).

use std::borrow::Cow;

use super::batch::{RECORD_BATCH_OVERHEAD, RecordBatchHeader};
use super::compression::{CompressionType, decompress};
use super::error::RecordError;
use super::varint::{read_varint, read_varlong};

/// One record of a v2 batch, borrowing its key, value and headers from the batch bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// Bytes of the record including its length varint.
    pub size_in_bytes: usize,
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The encoded headers (after the count); checked when the record was read.
    headers_raw: &'a [u8],
    header_count: usize,
}

impl<'a> Record<'a> {
    /// The headers in order; keys may repeat.
    pub fn headers(&self) -> HeaderIter<'a> {
        HeaderIter {
            raw: self.headers_raw,
            pos: 0,
            left: self.header_count,
        }
    }

    pub fn header_count(&self) -> usize {
        self.header_count
    }

    /// Absolute timestamp given the batch's base timestamp.
    pub fn timestamp(&self, base_timestamp: i64) -> i64 {
        base_timestamp.wrapping_add(self.timestamp_delta)
    }

    /// Absolute offset given the batch's base offset.
    pub fn offset(&self, base_offset: i64) -> i64 {
        base_offset.wrapping_add(i64::from(self.offset_delta))
    }
}

/// One record header. Kafka allows the same key more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    pub key: &'a [u8],
    pub value: Option<&'a [u8]>,
}

/// The headers of a record, decoded lazily from bytes already checked when the record was read.
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    raw: &'a [u8],
    pos: usize,
    left: usize,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // The record reader validated these bytes, so an error here cannot happen; stopping is
        // the safe answer if it ever did.
        match read_header(self.raw, self.pos, 0) {
            Ok((h, next)) => {
                self.pos = next;
                Some(h)
            }
            Err(_) => {
                self.left = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// Takes a length-prefixed byte string at `*pos` (negative length = null).
#[inline(always)]
fn read_bytes<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    base: usize,
    what: &str,
) -> Result<Option<&'a [u8]>, RecordError> {
    let len = read_varint(buf, pos).map_err(|e| shift(e, base))?;
    if len < 0 {
        return Ok(None);
    }
    let len = len as usize;
    match buf.get(*pos..*pos + len) {
        Some(s) => {
            *pos += len;
            Ok(Some(s))
        }
        None => Err(overrun(buf, *pos, base, what, len)),
    }
}

#[cold]
fn overrun(buf: &[u8], pos: usize, base: usize, what: &str, len: usize) -> RecordError {
    overrun_at(base + pos, what, len, buf.len() - pos)
}

/// A length-prefixed field of `len` bytes at `position` with only `remain` bytes of its record
/// left.
#[cold]
pub(super) fn overrun_at(position: usize, what: &str, len: usize, remain: usize) -> RecordError {
    RecordError::corrupt(
        position,
        format!("Found invalid record structure: {what} of {len} bytes but only {remain} remain"),
    )
}

/// A record at `start` whose length varint says `size` when `remaining` bytes follow it.
#[cold]
pub(super) fn size_error(start: usize, size: i32, remaining: usize) -> RecordError {
    RecordError::corrupt(
        start,
        format!(
            "Invalid record size: expected {size} bytes in record payload, but instead the buffer has only {remaining} remaining bytes."
        ),
    )
}

/// Makes a position relative to a record body absolute within the records buffer.
#[cold]
pub(super) fn shift(e: RecordError, base: usize) -> RecordError {
    match e {
        RecordError::Corrupt { position, reason } => RecordError::Corrupt {
            position: position + base,
            reason: format!("Found invalid record structure: {reason}"),
        },
        other => other,
    }
}

/// Reads one header at `at`, returning it and the position after it. Takes and returns the
/// position by value so that callers' positions never have their address taken (which would
/// keep them in memory in the record loop).
fn read_header<'a>(
    buf: &'a [u8],
    at: usize,
    base: usize,
) -> Result<(Header<'a>, usize), RecordError> {
    let mut p = at;
    let pos = &mut p;
    let key_len = read_varint(buf, pos).map_err(|e| shift(e, base))?;
    if key_len < 0 {
        return Err(RecordError::corrupt(
            base + at,
            format!("Invalid negative header key size {key_len}"),
        ));
    }
    *pos = at;
    let key = read_bytes(buf, pos, base, "header key")?.unwrap_or(&[]);
    let value = read_bytes(buf, pos, base, "header value")?;
    Ok((Header { key, value }, p))
}

/// Reads one record at `*pos` of `buf`, advancing `*pos` past it.
#[inline(always)]
pub fn read_record<'a>(buf: &'a [u8], pos: &mut usize) -> Result<Record<'a>, RecordError> {
    let start = *pos;
    let size = read_varint(buf, pos)?;
    let body_start = *pos;
    let remaining = buf.len() - body_start;
    if size < 0 || size as usize > remaining {
        return Err(size_error(start, size, remaining));
    }
    let body = &buf[body_start..body_start + size as usize];
    let mut p = 0usize;
    let Some(&attributes) = body.first() else {
        return Err(RecordError::corrupt(
            body_start,
            "Found invalid record structure: empty record body",
        ));
    };
    p += 1;
    let timestamp_delta = read_varlong(body, &mut p).map_err(|e| shift(e, body_start))?;
    let offset_delta = read_varint(body, &mut p).map_err(|e| shift(e, body_start))?;
    let key = read_bytes(body, &mut p, body_start, "key")?;
    let value = read_bytes(body, &mut p, body_start, "value")?;
    let count = read_varint(body, &mut p).map_err(|e| shift(e, body_start))?;
    if count < 0 {
        return Err(RecordError::corrupt(
            body_start + p,
            format!("Found invalid number of record headers {count}"),
        ));
    }
    let headers_start = p;
    if count as usize > body.len() - p {
        return Err(RecordError::corrupt(
            body_start + p,
            format!(
                "Found invalid number of record headers. {count} is larger than the remaining size of the buffer"
            ),
        ));
    }
    for _ in 0..count {
        p = read_header(body, p, body_start)?.1;
    }
    if p != body.len() {
        return Err(RecordError::corrupt(
            start,
            format!(
                "Invalid record size: expected to read {size} bytes in record payload, but instead read {p}"
            ),
        ));
    }
    *pos = body_start + body.len();
    Ok(Record {
        size_in_bytes: *pos - start,
        attributes: attributes as i8,
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers_raw: &body[headers_start..],
        header_count: count as usize,
    })
}

/// Iterates the `count` records of an (uncompressed or decompressed) records section. Yields an
/// error, then stops, when a record is malformed, when the bytes run out before `count` records,
/// or when bytes remain after them.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    buf: &'a [u8],
    pos: usize,
    count: i32,
    read: i32,
    done: bool,
}

impl<'a> RecordIter<'a> {
    pub fn new(records: &'a [u8], count: i32) -> Self {
        RecordIter {
            buf: records,
            pos: 0,
            count,
            read: 0,
            done: false,
        }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn fail(&mut self, e: RecordError) -> Option<Result<Record<'a>, RecordError>> {
        self.done = true;
        Some(Err(e))
    }
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<Record<'a>, RecordError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.count < 0 {
            return self.fail(RecordError::corrupt(
                0,
                format!(
                    "Found invalid record count {} in magic v2 batch",
                    self.count
                ),
            ));
        }
        if self.read >= self.count {
            self.done = true;
            if self.pos != self.buf.len() {
                return self.fail(RecordError::corrupt(
                    self.pos,
                    "Incorrect declared batch size, records still remaining in file",
                ));
            }
            return None;
        }
        if self.pos >= self.buf.len() {
            return self.fail(RecordError::corrupt(
                self.pos,
                "Incorrect declared batch size, premature EOF reached",
            ));
        }
        self.read += 1;
        match read_record(self.buf, &mut self.pos) {
            Ok(r) => Some(Ok(r)),
            Err(e) => self.fail(e),
        }
    }
}

/// Calls `f(index, record)` for each of the `count` records of `records`, with the checks of
/// [`RecordIter`] (same errors, stopping at the first). The hot-path form of `RecordIter`: the
/// record is handed over by reference instead of being moved through `Option<Result<..>>`,
/// which keeps it in registers.
#[inline]
pub fn for_each_record<'a>(
    records: &'a [u8],
    count: i32,
    mut f: impl FnMut(i32, &Record<'a>),
) -> Result<(), RecordError> {
    if count < 0 {
        return Err(RecordError::corrupt(
            0,
            format!("Found invalid record count {count} in magic v2 batch"),
        ));
    }
    let mut pos = 0usize;
    for index in 0..count {
        if pos >= records.len() {
            return Err(RecordError::corrupt(
                pos,
                "Incorrect declared batch size, premature EOF reached",
            ));
        }
        let record = read_record(records, &mut pos)?;
        f(index, &record);
    }
    if pos != records.len() {
        return Err(RecordError::corrupt(
            pos,
            "Incorrect declared batch size, records still remaining in file",
        ));
    }
    Ok(())
}

/// The bytes after the 61-byte header of a v2 batch, as stored (compressed or not). `batch` is
/// the whole batch (at least `header.size_in_bytes()` bytes; more is ignored).
pub fn batch_body<'a>(
    batch: &'a [u8],
    header: &RecordBatchHeader,
) -> Result<&'a [u8], RecordError> {
    let size = header.size_in_bytes();
    batch.get(RECORD_BATCH_OVERHEAD..size).ok_or_else(|| {
        RecordError::corrupt(
            batch.len(),
            format!("batch of {size} bytes but only {} are present", batch.len()),
        )
    })
}

/// The record bytes of a v2 batch: borrowed when uncompressed, decompressed (capped) otherwise.
/// `batch` is the whole batch (at least `header.size_in_bytes()` bytes; more is ignored).
/// Inflating holds the whole records section: a batch that may be hostile is better walked with
/// `record_stream::for_each_batch_record`.
pub fn batch_records<'a>(
    batch: &'a [u8],
    header: &RecordBatchHeader,
    max_decompressed: usize,
) -> Result<Cow<'a, [u8]>, RecordError> {
    let body = batch_body(batch, header)?;
    match header.compression()? {
        CompressionType::None => Ok(Cow::Borrowed(body)),
        codec => Ok(Cow::Owned(decompress(codec, body, max_decompressed)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord, encode_record};
    use proptest::prelude::*;

    fn rec(ts: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> SimpleRecord {
        SimpleRecord::new(ts, key.map(<[u8]>::to_vec), value.map(<[u8]>::to_vec))
    }

    #[test]
    fn walks_nulls_and_repeated_headers() {
        let mut r = rec(5, None, Some(b"v"));
        r.headers = vec![
            ("h".into(), Some(b"1".to_vec())),
            ("h".into(), Some(b"2".to_vec())),
            ("n".into(), None),
        ];
        let mut buf = Vec::new();
        encode_record(&mut buf, 3, 7, &r);
        encode_record(&mut buf, 4, 8, &rec(0, Some(b"k"), None));
        let recs: Vec<_> = RecordIter::new(&buf, 2).collect::<Result<_, _>>().unwrap();
        assert_eq!(recs[0].key, None);
        assert_eq!(recs[0].value, Some(&b"v"[..]));
        assert_eq!((recs[0].offset_delta, recs[0].timestamp_delta), (3, 7));
        let h: Vec<_> = recs[0].headers().collect();
        assert_eq!(h.len(), 3);
        assert_eq!((h[0].key, h[0].value), (&b"h"[..], Some(&b"1"[..])));
        assert_eq!((h[1].key, h[1].value), (&b"h"[..], Some(&b"2"[..])));
        assert_eq!((h[2].key, h[2].value), (&b"n"[..], None));
        assert_eq!(recs[1].value, None);
        assert_eq!(recs[0].size_in_bytes + recs[1].size_in_bytes, buf.len());
    }

    #[test]
    fn count_must_match_the_bytes() {
        let mut buf = Vec::new();
        encode_record(&mut buf, 0, 0, &rec(0, Some(b"k"), Some(b"v")));
        encode_record(&mut buf, 1, 0, &rec(0, Some(b"k"), Some(b"v")));
        let short: Vec<_> = RecordIter::new(&buf, 3).collect();
        assert!(
            short[2]
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("premature EOF")
        );
        let long: Vec<_> = RecordIter::new(&buf, 1).collect();
        assert_eq!(long.len(), 2);
        assert!(
            long[1]
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("still remaining")
        );
        let neg: Vec<_> = RecordIter::new(&buf, -1).collect();
        assert!(neg[0].is_err());
        assert_eq!(RecordIter::new(&[], 0).count(), 0);
    }

    #[test]
    fn length_must_cover_the_body_exactly() {
        let mut buf = Vec::new();
        encode_record(&mut buf, 0, 0, &rec(0, Some(b"k"), Some(b"v")));
        // Claim one byte more than the body holds, with a trailing byte present.
        let mut bigger = buf.clone();
        bigger[0] += 2;
        bigger.push(0);
        assert!(RecordIter::new(&bigger, 1).next().unwrap().is_err());
        let mut smaller = buf.clone();
        smaller[0] -= 2;
        assert!(RecordIter::new(&smaller, 1).next().unwrap().is_err());
    }

    #[test]
    fn batch_records_borrows_or_decompresses() {
        for c in CompressionType::ALL {
            let mut b = RecordBatchBuilder::new(c);
            b.records.push(rec(1, Some(b"a"), Some(b"b")));
            let bytes = b.build().unwrap();
            let h = RecordBatchHeader::parse(&bytes).unwrap();
            let body = batch_records(&bytes, &h, 1 << 20).unwrap();
            assert_eq!(matches!(body, Cow::Borrowed(_)), c == CompressionType::None);
            let r: Vec<_> = RecordIter::new(&body, h.records_count)
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(r[0].key, Some(&b"a"[..]));
            assert!(batch_records(&bytes[..bytes.len() - 1], &h, 1 << 20).is_err());
        }
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), count in -2i32..10) {
            for r in RecordIter::new(&bytes, count).flatten() {
                let _ = r.headers().count();
            }
        }

        #[test]
        fn for_each_record_agrees_with_record_iter(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            count in -2i32..10,
        ) {
            let from_iter: Vec<_> = RecordIter::new(&bytes, count).collect();
            let mut seen = Vec::new();
            let res = for_each_record(&bytes, count, |i, r| seen.push((i, r.clone())));
            let ok: Vec<_> = from_iter.iter().filter_map(|r| r.as_ref().ok()).cloned().collect();
            prop_assert_eq!(seen.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(), ok);
            prop_assert!(seen.iter().enumerate().all(|(n, (i, _))| n as i32 == *i));
            prop_assert_eq!(res.is_err(), from_iter.iter().any(Result::is_err));
        }
    }
}
