//! [`Reader`]: a bounded cursor over a frame held in [`Bytes`]; variable-length values are
//! sliced from it without copying, and every length is checked against the bytes remaining
//! before it is used.

use super::error::{DecodeError, DecodeErrorKind};
use super::{Codec, Cx, RawTaggedField};
use bytes::{Buf, Bytes};

/// A cursor over the unread part of a frame. Invariant: reads never go past the end; a length or
/// count is compared with [`Reader::remaining`] before anything is sliced or allocated for it.
/// `field` names the field being read, for error messages.
#[derive(Debug, Clone)]
pub struct Reader {
    buf: Bytes,
    field: &'static str,
}

impl Reader {
    /// A reader over the whole of `buf`.
    pub fn new(buf: Bytes) -> Self {
        Reader { buf, field: "" }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// An error about the field being read.
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.field, kind)
    }

    fn need(&self, n: usize) -> Result<(), DecodeError> {
        if n > self.buf.len() {
            return Err(self.error(DecodeErrorKind::UnexpectedEof {
                needed: n,
                remaining: self.buf.len(),
            }));
        }
        Ok(())
    }

    /// The next `n` bytes as a slice of the frame (no copy).
    pub fn take(&mut self, n: usize) -> Result<Bytes, DecodeError> {
        self.need(n)?;
        Ok(self.buf.split_to(n))
    }

    /// An int8.
    pub fn i8(&mut self) -> Result<i8, DecodeError> {
        self.need(1)?;
        Ok(self.buf.get_i8())
    }

    /// A big-endian int16.
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        self.need(2)?;
        Ok(self.buf.get_i16())
    }

    /// A big-endian uint16.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        self.need(2)?;
        Ok(self.buf.get_u16())
    }

    /// A big-endian int32.
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        self.need(4)?;
        Ok(self.buf.get_i32())
    }

    /// A big-endian int64.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.need(8)?;
        Ok(self.buf.get_i64())
    }

    /// A big-endian IEEE 754 float64.
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        self.need(8)?;
        Ok(self.buf.get_f64())
    }

    /// An unsigned varint of at most 5 bytes, as Java's `readUnsignedVarint` reads it (bits past
    /// 32 are dropped).
    pub fn uvarint(&mut self) -> Result<u32, DecodeError> {
        let mut value = 0u32;
        for i in 0..5 {
            let b = self.i8()? as u8;
            value |= u32::from(b & 0x7f).wrapping_shl(7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.error(DecodeErrorKind::VarintTooLong))
    }

    /// A length prefix: `uvarint - 1` when compact (0 means null), else an int16 or int32.
    /// Negative means null. Java treats the varint as a signed int, and so does this.
    pub fn length(&mut self, compact: bool, wide: bool) -> Result<i32, DecodeError> {
        if compact {
            Ok((self.uvarint()? as i32).wrapping_sub(1))
        } else if wide {
            self.i32()
        } else {
            Ok(i32::from(self.i16()?))
        }
    }

    /// Checks a non-negative length or count against the bytes remaining (Kafka's rule: a
    /// collection of N elements needs at least N bytes) and returns it as a `usize`.
    pub fn checked_count(&self, n: i32) -> Result<usize, DecodeError> {
        let count = usize::try_from(n).map_err(|_| self.error(DecodeErrorKind::NullNotAllowed))?;
        if count > self.buf.len() {
            return Err(self.error(DecodeErrorKind::CountTooLarge {
                count: i64::from(n),
                remaining: self.buf.len(),
            }));
        }
        Ok(count)
    }

    /// Reads a field of type `T`, naming it in any error.
    pub fn read<T: Codec>(&mut self, field: &'static str, cx: Cx) -> Result<T, DecodeError> {
        self.field = field;
        T::read(self, cx)
    }

    /// Reads `count` elements into a vector. Only a bounded amount is reserved up front (at
    /// most 4 KiB worth of elements), so a count that passed [`Reader::checked_count`] but
    /// is not backed by real elements cannot make it allocate; after that the vector doubles
    /// as elements really arrive, but never past `count`.
    pub fn elements<T: Codec>(&mut self, count: usize, cx: Cx) -> Result<Vec<T>, DecodeError> {
        let cap = count.min(4096 / std::mem::size_of::<T>().max(1));
        let mut out = Vec::with_capacity(cap);
        for _ in 0..count {
            if out.len() == out.capacity() {
                out.reserve_exact((count - out.len()).min(out.len().max(1)));
            }
            out.push(T::read(self, cx)?);
        }
        Ok(out)
    }

    /// Reads a tagged-field section. `known(tag, reader)` decodes a tag the struct knows at
    /// this version from a reader over exactly its bytes and returns true, or returns false for
    /// an unknown tag, which is kept as raw bytes in wire order.
    pub fn tagged(
        &mut self,
        field: &'static str,
        mut known: impl FnMut(u32, &mut Reader) -> Result<bool, DecodeError>,
    ) -> Result<Vec<RawTaggedField>, DecodeError> {
        self.field = field;
        let count = self.uvarint()?;
        let count = self.checked_count(i32::try_from(count).unwrap_or(i32::MAX))?;
        let mut unknown = Vec::new();
        for _ in 0..count {
            self.field = field;
            let tag = self.uvarint()?;
            let size = self.uvarint()?;
            let size = self.checked_count(i32::try_from(size).unwrap_or(i32::MAX))?;
            let data = self.buf.split_to(size);
            let mut sub = Reader { buf: data, field };
            let before = sub.remaining();
            if known(tag, &mut sub)? {
                if sub.remaining() != 0 {
                    return Err(self.error(DecodeErrorKind::TaggedFieldSize {
                        tag,
                        declared: before,
                        used: before - sub.remaining(),
                    }));
                }
            } else {
                unknown.push(RawTaggedField { tag, data: sub.buf });
            }
        }
        Ok(unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_java_reads_them() {
        let mut r = Reader::new(Bytes::from_static(&[
            0x96, 0x01, 0x7f, 0x80, 0x80, 0x80, 0x80, 0x80,
        ]));
        assert_eq!(r.uvarint().unwrap(), 150);
        assert_eq!(r.uvarint().unwrap(), 127);
        assert_eq!(
            r.uvarint().unwrap_err().kind,
            DecodeErrorKind::VarintTooLong
        );
    }

    #[test]
    fn counts_are_checked_against_the_bytes_left() {
        let r = Reader::new(Bytes::from_static(&[0; 3]));
        assert_eq!(r.checked_count(3).unwrap(), 3);
        assert!(matches!(
            r.checked_count(4).unwrap_err().kind,
            DecodeErrorKind::CountTooLarge {
                count: 4,
                remaining: 3
            }
        ));
        assert_eq!(
            r.checked_count(-1).unwrap_err().kind,
            DecodeErrorKind::NullNotAllowed
        );
    }

    #[test]
    fn taken_bytes_are_slices_of_the_frame() {
        let frame = Bytes::from(vec![1u8, 2, 3, 4]);
        let mut r = Reader::new(frame.clone());
        let taken = r.take(2).unwrap();
        assert_eq!(taken.as_ptr(), frame.as_ptr());
        assert_eq!(r.remaining(), 2);
        assert!(r.take(3).is_err());
    }
}
