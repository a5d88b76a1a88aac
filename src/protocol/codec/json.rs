//! JSON output in the exact form of Kafka's generated `*JsonConverter.write` classes serialized
//! by Jackson's `JsonNode.toString()` (what `kafka-dump-log.sh --offsets-decoder` and the
//! transaction-log decoder print): compact, fields in spec order, camelCase names; int8/int16/
//! int32/int64/uint16 as numbers, float64 as Java's `Double.toString`, uuid as Kafka's
//! base64url `Uuid.toString()`, bytes as standard base64, records as `<name>SizeInBytes` (the
//! KIP-673 form), strings escaped as Jackson does (invalid UTF-8 read as U+FFFD, like Java).

use super::{Cx, StrBytes};
use bytes::Bytes;
use std::fmt::Write;
use uuid::Uuid;

/// A value with a Kafka JSON form.
pub trait ToJson {
    /// Appends the JSON form of the value at the context's version.
    fn to_json(&self, j: &mut JsonWriter, cx: Cx);
}

/// Builds one compact JSON document. Invariant: `first` is true right after an opening
/// bracket, so separators are written exactly between members.
#[derive(Debug, Default)]
pub struct JsonWriter {
    out: String,
    first: bool,
}

impl JsonWriter {
    /// An empty document.
    pub fn new() -> Self {
        JsonWriter::default()
    }

    /// The document.
    pub fn finish(self) -> String {
        self.out
    }

    fn sep(&mut self) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
    }

    /// Starts an object.
    pub fn begin_object(&mut self) {
        self.out.push('{');
        self.first = true;
    }

    /// Ends an object.
    pub fn end_object(&mut self) {
        self.out.push('}');
        self.first = false;
    }

    /// Writes `"name":value`.
    pub fn field<T: ToJson>(&mut self, name: &str, value: &T, cx: Cx) {
        self.key(name);
        value.to_json(self, cx);
    }

    /// Writes a `records` field as Kafka's request logger does: `"<name>SizeInBytes":N`, or
    /// `"<name>":null`.
    pub fn records_field(&mut self, name: &str, value: Option<&Bytes>) {
        match value {
            Some(b) => {
                self.key(&format!("{name}SizeInBytes"));
                write!(self.out, "{}", b.len()).ok();
            }
            None => {
                self.key(name);
                self.out.push_str("null");
            }
        }
    }

    fn key(&mut self, name: &str) {
        self.sep();
        self.string(name);
        self.out.push(':');
    }

    /// Writes a string with Jackson's escapes.
    pub fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\t' => self.out.push_str("\\t"),
                '\r' => self.out.push_str("\\r"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    write!(self.out, "\\u{:04X}", c as u32).ok();
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    /// Writes a raw JSON token (a number or `null`).
    pub fn raw(&mut self, token: &str) {
        self.out.push_str(token);
    }

    /// Writes an array of elements.
    pub fn array<T: ToJson>(&mut self, items: &[T], cx: Cx) {
        self.out.push('[');
        self.first = true;
        for item in items {
            self.sep();
            item.to_json(self, cx);
        }
        self.out.push(']');
        self.first = false;
    }
}

macro_rules! json_int {
    ($($t:ty),*) => {$(
        impl ToJson for $t {
            fn to_json(&self, j: &mut JsonWriter, _cx: Cx) {
                j.raw(&self.to_string());
            }
        }
    )*};
}
json_int!(i8, i16, u16, i32, i64);

impl ToJson for bool {
    fn to_json(&self, j: &mut JsonWriter, _cx: Cx) {
        j.raw(if *self { "true" } else { "false" });
    }
}

/// Java's `Double.toString`: plain decimal for 1e-3 <= |x| < 1e7, else `d.dddE±n`; always a
/// fractional part.
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = x.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let s = format!("{x:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.to_string()
        } else {
            format!("{m}.0")
        };
        format!("{m}E{e}")
    }
}

impl ToJson for f64 {
    fn to_json(&self, j: &mut JsonWriter, _cx: Cx) {
        let s = java_double(*self);
        if self.is_finite() {
            j.raw(&s);
        } else {
            // Jackson quotes non-finite numbers by default.
            j.string(&s);
        }
    }
}

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 of `data` with the given alphabet, padded with `=` when `pad`.
pub fn base64(data: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(alphabet[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding.
pub fn kafka_uuid_string(u: &Uuid) -> String {
    base64(u.as_bytes(), URL, false)
}

impl ToJson for Uuid {
    fn to_json(&self, j: &mut JsonWriter, _cx: Cx) {
        j.string(&kafka_uuid_string(self));
    }
}

impl ToJson for StrBytes {
    fn to_json(&self, j: &mut JsonWriter, _cx: Cx) {
        j.string(&self.to_string_lossy());
    }
}

impl ToJson for Bytes {
    fn to_json(&self, j: &mut JsonWriter, _cx: Cx) {
        j.string(&base64(self, STD, true));
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self, j: &mut JsonWriter, cx: Cx) {
        j.array(self, cx.element());
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self, j: &mut JsonWriter, cx: Cx) {
        match self {
            Some(v) => v.to_json(j, cx),
            None => j.raw("null"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_java_does() {
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(1.5e-4), "1.5E-4");
        assert_eq!(java_double(-0.0), "-0.0");
    }

    #[test]
    fn uuids_and_bytes_use_kafkas_base64_forms() {
        assert_eq!(kafka_uuid_string(&Uuid::nil()), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(base64(b"ab", STD, true), "YWI=");
        assert_eq!(base64(&[0xfb, 0xff], URL, false), "-_8");
    }

    #[test]
    fn strings_are_escaped_as_jackson_does() {
        let mut j = JsonWriter::new();
        j.string("a\"\\\n\u{1}é/");
        assert_eq!(j.finish(), "\"a\\\"\\\\\\n\\u0001é/\"");
    }
}
