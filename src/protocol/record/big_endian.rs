//! Big-endian integers at byte positions, the one reader every file and wire format here shares
//! (batch headers, legacy messages, producer snapshots, index entries, dump-segment).
//!
//! Two flavours with one rule on short input, never a panic:
//! - `read_*` answer `None` when the bytes end before the field (peer or file input whose
//!   length is not known yet);
//! - `*_at` answer 0 when short, for fields at fixed positions of a slice whose length the caller
//!   has already checked (a 61-byte header, a whole index entry), where shortness cannot occur.

#[inline]
fn array<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

#[inline]
pub(crate) fn read_i16(b: &[u8], at: usize) -> Option<i16> {
    array(b, at).map(i16::from_be_bytes)
}

#[inline]
pub(crate) fn read_i32(b: &[u8], at: usize) -> Option<i32> {
    array(b, at).map(i32::from_be_bytes)
}

#[inline]
pub(crate) fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_be_bytes)
}

#[inline]
pub(crate) fn read_i64(b: &[u8], at: usize) -> Option<i64> {
    array(b, at).map(i64::from_be_bytes)
}

#[inline]
pub(crate) fn i16_at(b: &[u8], at: usize) -> i16 {
    read_i16(b, at).unwrap_or(0)
}

#[inline]
pub(crate) fn i32_at(b: &[u8], at: usize) -> i32 {
    read_i32(b, at).unwrap_or(0)
}

#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    read_u32(b, at).unwrap_or(0)
}

#[inline]
pub(crate) fn i64_at(b: &[u8], at: usize) -> i64 {
    read_i64(b, at).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_and_refuses_short_input_without_panicking() {
        let b = [0x80, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
        assert_eq!(read_i16(&b, 0), Some(i16::from_be_bytes([0x80, 0x01])));
        assert_eq!(read_i32(&b, 1), Some(0x0102_0304));
        assert_eq!(read_u32(&b, 0), Some(0x8001_0203));
        assert_eq!(read_i64(&b, 1), Some(0x0102_0304_0506_0708));
        assert_eq!(read_i64(&b, 2), None);
        assert_eq!(read_i32(&b, 6), None);
        assert_eq!(read_i16(&b, usize::MAX), None);
        assert_eq!(i64_at(&b, 2), 0);
        assert_eq!(i32_at(&b, 1), 0x0102_0304);
        assert_eq!(u32_at(&b, 8), 0);
        assert_eq!(i16_at(&[], 0), 0);
    }
}
