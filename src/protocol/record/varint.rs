//! Protobuf zigzag varints as used inside v2 records.
//!
//! Format: little-endian base-128 groups, the high bit of each byte saying "more follows", of the
//! zigzag-mapped value (`(v << 1) ^ (v >> 31)`), so small negative numbers stay short. An `i32`
//! takes at most 5 bytes and an `i64` at most 10; a longer encoding is rejected, exactly where
//! Kafka's `ByteUtils.readVarint`/`readVarlong` reject it. Like Kafka, the bits of the last
//! allowed byte that do not fit the type are dropped rather than rejected, so every encoding Kafka
//! accepts is accepted here.

use super::error::RecordError;

/// Reads a zigzag varint (at most 5 bytes) at `*pos`, advancing `*pos` past it.
#[inline(always)]
pub(crate) fn read_varint(buf: &[u8], pos: &mut usize) -> Result<i32, RecordError> {
    // Fast paths for one and two bytes (values in -8192..8192): record lengths, deltas and
    // key/value lengths of typical records. Everything else goes to the out-of-line loop, which
    // takes and returns plain values so `*pos` can stay in a register in the caller's loop.
    let p = *pos;
    if let Some(&b0) = buf.get(p) {
        if b0 < 0x80 {
            *pos = p + 1;
            return Ok(unzigzag32(u32::from(b0)));
        }
        if let Some(&b1) = buf.get(p + 1)
            && b1 < 0x80
        {
            *pos = p + 2;
            return Ok(unzigzag32(u32::from(b0 & 0x7f) | (u32::from(b1) << 7)));
        }
    }
    let (raw, next) = decode_slow(buf, p, 28);
    if next == TRUNCATED || next == TOO_LONG {
        return Err(varint_error(next, p, "varint", "5th"));
    }
    *pos = next;
    Ok(unzigzag32(raw as u32))
}

/// The zigzag varint at `pos` and the position after it, or `None` where [`read_varint`] would
/// fail: for looking ahead where a failure is not an error, so building its message would be
/// wasted.
#[inline(always)]
pub(crate) fn peek_varint(buf: &[u8], pos: usize) -> Option<(i32, usize)> {
    let b0 = *buf.get(pos)?;
    if b0 < 0x80 {
        return Some((unzigzag32(u32::from(b0)), pos + 1));
    }
    if let Some(&b1) = buf.get(pos + 1)
        && b1 < 0x80
    {
        return Some((
            unzigzag32(u32::from(b0 & 0x7f) | (u32::from(b1) << 7)),
            pos + 2,
        ));
    }
    let (raw, next) = decode_slow(buf, pos, 28);
    if next == TRUNCATED || next == TOO_LONG {
        return None;
    }
    Some((unzigzag32(raw as u32), next))
}

/// Reads a zigzag varlong (at most 10 bytes) at `*pos`, advancing `*pos` past it.
#[inline(always)]
pub(crate) fn read_varlong(buf: &[u8], pos: &mut usize) -> Result<i64, RecordError> {
    let p = *pos;
    if let Some(&b0) = buf.get(p) {
        if b0 < 0x80 {
            *pos = p + 1;
            return Ok(unzigzag64(u64::from(b0)));
        }
        if let Some(&b1) = buf.get(p + 1)
            && b1 < 0x80
        {
            *pos = p + 2;
            return Ok(unzigzag64(u64::from(b0 & 0x7f) | (u64::from(b1) << 7)));
        }
    }
    let (raw, next) = decode_slow(buf, p, 63);
    if next == TRUNCATED || next == TOO_LONG {
        return Err(varint_error(next, p, "varlong", "10th"));
    }
    *pos = next;
    Ok(unzigzag64(raw))
}

#[inline(always)]
fn unzigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

#[inline(always)]
fn unzigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// `decode_slow`'s "next position" when the buffer ends inside the varint.
const TRUNCATED: usize = usize::MAX;
/// `decode_slow`'s "next position" when the continuation bit is set past the last allowed byte.
const TOO_LONG: usize = usize::MAX - 1;

/// The general base-128 loop: the raw (still zigzagged) value and the position after it, or
/// [`TRUNCATED`] / [`TOO_LONG`]. `max_shift` is 28 for varints and 63 for varlongs, where Kafka
/// stops; like Java's `b << i`, bits of the last byte past the type's width are dropped.
#[cold]
#[inline(never)]
fn decode_slow(buf: &[u8], start: usize, max_shift: u32) -> (u64, usize) {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    let mut i = start;
    loop {
        let Some(&b) = buf.get(i) else {
            return (0, TRUNCATED);
        };
        i += 1;
        if b & 0x80 == 0 {
            value |= u64::from(b).wrapping_shl(shift);
            // A varint's 5th byte contributes only its low 4 bits to the 32-bit value.
            if max_shift == 28 {
                value &= u64::from(u32::MAX);
            }
            return (value, i);
        }
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if shift > max_shift {
            return (0, TOO_LONG);
        }
    }
}

#[cold]
#[inline(never)]
fn varint_error(kind: usize, start: usize, what: &str, byte: &str) -> RecordError {
    if kind == TRUNCATED {
        RecordError::corrupt(start, format!("{what} runs past the end of the buffer"))
    } else {
        RecordError::corrupt(
            start,
            format!("{what} is too long, the most significant bit in the {byte} byte is set"),
        )
    }
}

/// Appends `v` as a zigzag varint.
pub(crate) fn write_varint(out: &mut Vec<u8>, v: i32) {
    let mut z = ((v << 1) ^ (v >> 31)) as u32;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Appends `v` as a zigzag varlong.
pub(crate) fn write_varlong(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Bytes [`write_varint`] uses for `v`.
pub(crate) fn varint_size(v: i32) -> usize {
    let z = ((v << 1) ^ (v >> 31)) as u32;
    let bits = 32 - (z | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Bytes [`write_varlong`] uses for `v`.
pub(crate) fn varlong_size(v: i64) -> usize {
    let z = ((v << 1) ^ (v >> 63)) as u64;
    let bits = 64 - (z | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_encodings() {
        let cases: &[(i32, &[u8])] = &[
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (63, &[0x7e]),
            (-64, &[0x7f]),
            (64, &[0x80, 0x01]),
            (i32::MAX, &[0xfe, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ];
        for &(v, bytes) in cases {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(out, bytes, "{v}");
            assert_eq!(varint_size(v), bytes.len());
            let mut pos = 0;
            assert_eq!(read_varint(bytes, &mut pos).unwrap(), v);
            assert_eq!(pos, bytes.len());
        }
    }

    #[test]
    fn rejects_over_long_and_truncated() {
        let mut pos = 0;
        assert!(read_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], &mut pos).is_err());
        assert_eq!(pos, 0);
        assert!(read_varint(&[0x80], &mut pos).is_err());
        assert!(read_varint(&[], &mut pos).is_err());
        assert!(read_varlong(&[0xff; 11], &mut pos).is_err());
        assert!(read_varlong(&[0xff; 3], &mut pos).is_err());
        // Ten bytes is the longest legal varlong.
        let mut ten = vec![0xff; 9];
        ten.push(0x01);
        assert_eq!(read_varlong(&ten, &mut pos).unwrap(), i64::MIN);
    }

    #[test]
    fn high_bits_of_the_last_byte_are_dropped_like_java() {
        let mut pos = 0;
        assert_eq!(
            read_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f], &mut pos).unwrap(),
            i32::MIN
        );
        assert_eq!(pos, 5);
        let mut pos = 0;
        let mut ten = vec![0xff; 9];
        ten.push(0x7f);
        // Only the low bit of the 10th byte survives the shift by 63: all 64 bits set.
        assert_eq!(read_varlong(&ten, &mut pos).unwrap(), i64::MIN);
    }

    #[test]
    fn redundant_zero_groups_are_accepted_like_kafka() {
        // 0 written with an extra continuation group: legal length, so Kafka reads it.
        let mut pos = 0;
        assert_eq!(read_varint(&[0x80, 0x00], &mut pos).unwrap(), 0);
        assert_eq!(pos, 2);
    }

    proptest! {
        #[test]
        fn peek_varint_agrees_with_read_varint(
            bytes in proptest::collection::vec(any::<u8>(), 0..8),
            at in 0usize..3,
        ) {
            let mut pos = at;
            let read = read_varint(&bytes, &mut pos).ok().map(|v| (v, pos));
            prop_assert_eq!(peek_varint(&bytes, at), read);
        }

        #[test]
        fn varint_round_trip(v in any::<i32>()) {
            let mut out = vec![0xaa];
            write_varint(&mut out, v);
            prop_assert_eq!(out.len() - 1, varint_size(v));
            let mut pos = 1;
            prop_assert_eq!(read_varint(&out, &mut pos).unwrap(), v);
            prop_assert_eq!(pos, out.len());
        }

        #[test]
        fn varlong_round_trip(v in any::<i64>()) {
            let mut out = Vec::new();
            write_varlong(&mut out, v);
            prop_assert_eq!(out.len(), varlong_size(v));
            let mut pos = 0;
            prop_assert_eq!(read_varlong(&out, &mut pos).unwrap(), v);
            prop_assert_eq!(pos, out.len());
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            let mut pos = 0;
            let _ = read_varint(&bytes, &mut pos);
            prop_assert!(pos <= bytes.len());
            let mut pos = 0;
            let _ = read_varlong(&bytes, &mut pos);
            prop_assert!(pos <= bytes.len());
        }
    }
}
