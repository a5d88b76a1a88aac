//! [`Codec`] for the spec's value types: fixed-width numbers, `bool`, `uuid`, `string`
//! ([`StrBytes`]), `bytes` and `records` ([`Bytes`]), arrays (`Vec<T>`) and nullable values
//! (`Option<T>`, whose null form each type defines).

use super::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use super::{Codec, Cx, Reader, StrBytes, Writer};
use bytes::Bytes;
use uuid::Uuid;

macro_rules! fixed {
    ($t:ty, $read:ident) => {
        impl Codec for $t {
            fn read(r: &mut Reader, _cx: Cx) -> Result<Self, DecodeError> {
                r.$read()
            }
            fn write(&self, w: &mut Writer, _cx: Cx) -> Result<(), EncodeError> {
                w.put_slice(&self.to_be_bytes());
                Ok(())
            }
        }
    };
}

fixed!(i8, i8);
fixed!(i16, i16);
fixed!(u16, u16);
fixed!(i32, i32);
fixed!(i64, i64);
fixed!(f64, f64);

impl Codec for bool {
    fn read(r: &mut Reader, _cx: Cx) -> Result<Self, DecodeError> {
        Ok(r.i8()? != 0)
    }
    fn write(&self, w: &mut Writer, _cx: Cx) -> Result<(), EncodeError> {
        w.put_i8(i8::from(*self));
        Ok(())
    }
}

impl Codec for Uuid {
    fn read(r: &mut Reader, _cx: Cx) -> Result<Self, DecodeError> {
        let hi = r.i64()? as u64;
        let lo = r.i64()? as u64;
        Ok(Uuid::from_u64_pair(hi, lo))
    }
    fn write(&self, w: &mut Writer, _cx: Cx) -> Result<(), EncodeError> {
        w.put_slice(self.as_bytes());
        Ok(())
    }
}

/// Reads a length-prefixed byte run; `None` when the length is negative (null).
fn read_run(r: &mut Reader, cx: Cx, wide: bool) -> Result<Option<Bytes>, DecodeError> {
    let len = r.length(cx.compact, wide)?;
    if len < 0 {
        return Ok(None);
    }
    let len = r.checked_count(len)?;
    r.take(len).map(Some)
}

fn null_error(r: &Reader) -> DecodeError {
    r.error(DecodeErrorKind::NullNotAllowed)
}

fn write_run(w: &mut Writer, b: &Bytes, cx: Cx, wide: bool) -> Result<(), EncodeError> {
    w.put_length(Some(b.len()), cx.compact, wide)?;
    if cx.records {
        w.put_records(b);
    } else {
        w.put_slice(b);
    }
    Ok(())
}

/// Kafka strings are at most `0x7fff` bytes, compact or not (Java's generated readers reject
/// longer ones, and its writers refuse to write them).
const MAX_STRING: usize = 0x7fff;

fn read_string(r: &mut Reader, cx: Cx) -> Result<Option<StrBytes>, DecodeError> {
    let s = read_run(r, cx, false)?;
    if let Some(s) = &s
        && s.len() > MAX_STRING
    {
        return Err(r.error(DecodeErrorKind::StringTooLong(s.len())));
    }
    Ok(s.map(StrBytes::from_bytes))
}

impl Codec for StrBytes {
    fn read(r: &mut Reader, cx: Cx) -> Result<Self, DecodeError> {
        read_string(r, cx)?.ok_or_else(|| null_error(r))
    }
    fn read_nullable(r: &mut Reader, cx: Cx) -> Result<Option<Self>, DecodeError> {
        read_string(r, cx)
    }
    fn write(&self, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        if self.len() > MAX_STRING {
            return Err(EncodeError::new(EncodeErrorKind::TooLong(self.len())));
        }
        w.put_length(Some(self.len()), cx.compact, false)?;
        w.put_slice(self.as_bytes());
        Ok(())
    }
    fn write_nullable(value: Option<&Self>, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        match value {
            Some(s) => s.write(w, cx),
            None => w.put_length(None, cx.compact, false),
        }
    }
}

impl Codec for Bytes {
    fn read(r: &mut Reader, cx: Cx) -> Result<Self, DecodeError> {
        read_run(r, cx, true)?.ok_or_else(|| null_error(r))
    }
    fn read_nullable(r: &mut Reader, cx: Cx) -> Result<Option<Self>, DecodeError> {
        read_run(r, cx, true)
    }
    fn write(&self, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        write_run(w, self, cx, true)
    }
    fn write_nullable(value: Option<&Self>, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        match value {
            Some(b) => write_run(w, b, cx, true),
            None => w.put_length(None, cx.compact, true),
        }
    }
}

fn read_array<T: Codec>(r: &mut Reader, cx: Cx) -> Result<Option<Vec<T>>, DecodeError> {
    let count = r.length(cx.compact, true)?;
    if count < 0 {
        return Ok(None);
    }
    let count = r.checked_count(count)?;
    r.elements(count, cx.element()).map(Some)
}

impl<T: Codec> Codec for Vec<T> {
    fn read(r: &mut Reader, cx: Cx) -> Result<Self, DecodeError> {
        read_array(r, cx)?.ok_or_else(|| null_error(r))
    }
    fn read_nullable(r: &mut Reader, cx: Cx) -> Result<Option<Self>, DecodeError> {
        read_array(r, cx)
    }
    fn write(&self, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        w.put_length(Some(self.len()), cx.compact, true)?;
        let ecx = cx.element();
        for item in self {
            item.write(w, ecx)?;
        }
        Ok(())
    }
    fn write_nullable(value: Option<&Self>, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        match value {
            Some(v) => v.write(w, cx),
            None => w.put_length(None, cx.compact, true),
        }
    }
}

/// A nullable field: at versions where it is nullable, the type's null form; elsewhere the
/// plain form, and `None` cannot be encoded.
impl<T: Codec> Codec for Option<T> {
    fn read(r: &mut Reader, cx: Cx) -> Result<Self, DecodeError> {
        if cx.nullable {
            T::read_nullable(r, cx)
        } else {
            T::read(r, cx).map(Some)
        }
    }
    fn write(&self, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        if cx.nullable {
            T::write_nullable(self.as_ref(), w, cx)
        } else {
            match self {
                Some(v) => v.write(w, cx),
                None => Err(EncodeError::new(EncodeErrorKind::NullNotAllowed)),
            }
        }
    }
}
