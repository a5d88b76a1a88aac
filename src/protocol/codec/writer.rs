//! [`Writer`]: where encoders put bytes. One type serves three purposes: writing into a
//! `BytesMut`, only counting (for `compute_size` and tagged-field sizes), and writing in
//! segments so that `records` fields are passed through by reference rather than copied (a
//! Fetch response's record data can then go out with `writev` or `sendfile`).

use super::error::{EncodeError, EncodeErrorKind};
use super::{Codec, Cx, RawTaggedField};
use bytes::{BufMut, Bytes, BytesMut};

/// One piece of a segmented encoding, in output order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Encoded protocol bytes.
    Inline(Bytes),
    /// The contents of a `records` field, exactly as the value held them (its length prefix is
    /// at the end of the preceding `Inline` segment). When the records came from a file, the
    /// caller can send that file region in its place.
    Records(Bytes),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Buffer,
    Count,
    Segments,
}

/// An output sink for encoders. Invariant: [`Writer::len`] is the number of bytes written so
/// far in every mode, including records passed through by reference.
#[derive(Debug)]
pub struct Writer {
    buf: BytesMut,
    len: usize,
    mode: Mode,
    segments: Vec<Segment>,
}

impl Default for Writer {
    fn default() -> Self {
        Writer::new()
    }
}

impl Writer {
    /// A writer into a growable buffer.
    pub fn new() -> Self {
        Writer::with_capacity(0)
    }

    /// A writer into a buffer of the given initial capacity (use `compute_size` for one pass).
    pub fn with_capacity(capacity: usize) -> Self {
        Writer {
            buf: BytesMut::with_capacity(capacity),
            len: 0,
            mode: Mode::Buffer,
            segments: Vec::new(),
        }
    }

    /// A writer that only counts bytes.
    pub fn counter() -> Self {
        Writer {
            buf: BytesMut::new(),
            len: 0,
            mode: Mode::Count,
            segments: Vec::new(),
        }
    }

    /// A writer that keeps `records` fields as separate [`Segment::Records`].
    pub fn segmented() -> Self {
        Writer {
            mode: Mode::Segments,
            ..Writer::new()
        }
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The written bytes (empty for a counter; the tail after the last records for segments).
    pub fn into_bytes(self) -> BytesMut {
        self.buf
    }

    /// The output as segments, in order (a buffer writer yields one `Inline` segment).
    pub fn into_segments(mut self) -> Vec<Segment> {
        if !self.buf.is_empty() {
            self.segments
                .push(Segment::Inline(self.buf.split().freeze()));
        }
        self.segments
    }

    /// Appends raw bytes.
    pub fn put_slice(&mut self, b: &[u8]) {
        self.len += b.len();
        if self.mode != Mode::Count {
            self.buf.put_slice(b);
        }
    }

    /// Appends the contents of a `records` field: by reference in segmented mode.
    pub fn put_records(&mut self, b: &Bytes) {
        if self.mode == Mode::Segments && !b.is_empty() {
            self.len += b.len();
            self.segments
                .push(Segment::Inline(self.buf.split().freeze()));
            self.segments.push(Segment::Records(b.clone()));
        } else {
            self.put_slice(b);
        }
    }

    /// An int8.
    pub fn put_i8(&mut self, v: i8) {
        self.put_slice(&v.to_be_bytes());
    }

    /// A big-endian int16.
    pub fn put_i16(&mut self, v: i16) {
        self.put_slice(&v.to_be_bytes());
    }

    /// A big-endian int32.
    pub fn put_i32(&mut self, v: i32) {
        self.put_slice(&v.to_be_bytes());
    }

    /// An unsigned varint.
    pub fn put_uvarint(&mut self, mut v: u32) {
        let mut tmp = [0u8; 5];
        let mut n = 0;
        while v >= 0x80 {
            tmp[n] = (v as u8 & 0x7f) | 0x80;
            v >>= 7;
            n += 1;
        }
        tmp[n] = v as u8;
        self.put_slice(&tmp[..=n]);
    }

    /// A length prefix for `len` items (or null for `None`): compact `len + 1` varint, else an
    /// int16 (`wide == false`) or int32.
    pub fn put_length(
        &mut self,
        len: Option<usize>,
        compact: bool,
        wide: bool,
    ) -> Result<(), EncodeError> {
        let too_long = |n: usize| EncodeError::new(EncodeErrorKind::TooLong(n));
        match len {
            None if compact => self.put_uvarint(0),
            None if wide => self.put_i32(-1),
            None => self.put_i16(-1),
            Some(n) if compact => {
                let n1 = u32::try_from(n)
                    .ok()
                    .filter(|&n| n < i32::MAX as u32)
                    .ok_or_else(|| too_long(n))?;
                self.put_uvarint(n1 + 1);
            }
            Some(n) if wide => self.put_i32(i32::try_from(n).map_err(|_| too_long(n))?),
            Some(n) => self.put_i16(i16::try_from(n).map_err(|_| too_long(n))?),
        }
        Ok(())
    }

    /// Writes a field of type `T`, naming it in any error.
    pub fn put<T: Codec>(
        &mut self,
        field: &'static str,
        value: &T,
        cx: Cx,
    ) -> Result<(), EncodeError> {
        value
            .write(self, cx)
            .map_err(|e| e.at_field(field, cx.version))
    }

    /// Starts a tagged-field section of `known` tagged fields plus `unknown` raw ones; the
    /// returned [`TagWriter`] interleaves the raw fields in tag order.
    pub fn tags<'a>(
        &mut self,
        known: usize,
        unknown: &'a [RawTaggedField],
    ) -> Result<TagWriter<'a>, EncodeError> {
        let total = known + unknown.len();
        let total =
            u32::try_from(total).map_err(|_| EncodeError::new(EncodeErrorKind::TooLong(total)))?;
        self.put_uvarint(total);
        Ok(TagWriter { unknown, next: 0 })
    }
}

/// Writes the known tagged fields of a struct in tag order, merging in the unknown ones it
/// kept (as Java's `RawTaggedFieldWriter` does: every unknown tag below the next known one
/// goes first).
#[derive(Debug)]
pub struct TagWriter<'a> {
    unknown: &'a [RawTaggedField],
    next: usize,
}

impl TagWriter<'_> {
    fn flush_below(&mut self, w: &mut Writer, tag: u64) -> Result<(), EncodeError> {
        while let Some(raw) = self.unknown.get(self.next) {
            if u64::from(raw.tag) >= tag {
                break;
            }
            w.put_uvarint(raw.tag);
            w.put_uvarint(size_u32(raw.data.len())?);
            w.put_slice(&raw.data);
            self.next += 1;
        }
        Ok(())
    }

    /// Writes one known tagged field: tag, size, value.
    pub fn put<T: Codec>(
        &mut self,
        w: &mut Writer,
        tag: u32,
        field: &'static str,
        value: &T,
        cx: Cx,
    ) -> Result<(), EncodeError> {
        self.flush_below(w, u64::from(tag))?;
        let mut counter = Writer::counter();
        counter.put(field, value, cx)?;
        let size = counter.len();
        w.put_uvarint(tag);
        w.put_uvarint(size_u32(size)?);
        w.put(field, value, cx)
    }

    /// Writes the remaining unknown tagged fields.
    pub fn finish(mut self, w: &mut Writer) -> Result<(), EncodeError> {
        self.flush_below(w, u64::MAX)
    }
}

fn size_u32(n: usize) -> Result<u32, EncodeError> {
    u32::try_from(n).map_err(|_| EncodeError::new(EncodeErrorKind::TooLong(n)))
}
