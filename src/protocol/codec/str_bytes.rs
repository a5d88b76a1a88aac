//! [`StrBytes`]: a Kafka string as the bytes it was sent as, sliced from the frame.

use bytes::Bytes;
use std::fmt;

/// A Kafka `string` field, held as its raw bytes (a zero-copy slice of the frame it was decoded
/// from). Invariant: none. Kafka's Java decoder accepts invalid UTF-8 (it substitutes U+FFFD), so
/// the codec keeps the bytes as sent and re-encodes them unchanged; [`StrBytes::to_str`] tells
/// whether they are valid UTF-8.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StrBytes(Bytes);

impl StrBytes {
    /// A string from a static literal, without copying.
    pub const fn from_static(s: &'static str) -> Self {
        StrBytes(Bytes::from_static(s.as_bytes()))
    }

    /// Wraps raw bytes (not checked for UTF-8, as on the wire).
    pub fn from_bytes(bytes: Bytes) -> Self {
        StrBytes(bytes)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The underlying buffer (a slice of the frame when decoded).
    pub fn into_bytes(self) -> Bytes {
        self.0
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text, or an error when the bytes are not valid UTF-8.
    pub fn to_str(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.0)
    }

    /// The text as Java would see it: invalid sequences become U+FFFD.
    pub fn to_string_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
}

impl From<String> for StrBytes {
    fn from(s: String) -> Self {
        StrBytes(Bytes::from(s))
    }
}

impl From<&str> for StrBytes {
    fn from(s: &str) -> Self {
        StrBytes(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl PartialEq<str> for StrBytes {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for StrBytes {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl fmt::Debug for StrBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Display for StrBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}
