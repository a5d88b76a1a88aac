//! The codec's errors: [`DecodeError`] names the message, version and field that could not be
//! read; [`EncodeError`] names the field that cannot be written at the requested version.

use thiserror::Error;

/// What went wrong while reading one field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    /// The field needs more bytes than the frame has left.
    #[error("needs {needed} bytes but only {remaining} remain")]
    UnexpectedEof { needed: usize, remaining: usize },
    /// A length or count larger than the bytes left (Kafka's "Tried to allocate a collection of
    /// size N, but there are only M bytes remaining"); nothing was allocated for it.
    #[error("count {count} exceeds the {remaining} bytes remaining")]
    CountTooLarge { count: i64, remaining: usize },
    /// A null (negative length or marker) in a version where the field is not nullable.
    #[error("non-nullable field was serialized as null")]
    NullNotAllowed,
    /// A string longer than Kafka's limit of 0x7fff bytes.
    #[error("string of {0} bytes is longer than 0x7fff")]
    StringTooLong(usize),
    /// An unsigned varint longer than 5 bytes.
    #[error("varint is too long")]
    VarintTooLong,
    /// A known tagged field whose declared size differs from what its value used.
    #[error("tagged field {tag} declared {declared} bytes but its value used {used}")]
    TaggedFieldSize {
        tag: u32,
        declared: usize,
        used: usize,
    },
    /// The version is outside the message's valid versions.
    #[error("unsupported version")]
    UnsupportedVersion,
    /// The API key is not one Kafka 3.9 defines.
    #[error("unknown api key {0}")]
    UnknownApiKey(i16),
    /// Bytes were left over after the whole message was read.
    #[error("{0} trailing bytes after the message")]
    TrailingBytes(usize),
}

/// A frame that could not be decoded: which message, which version, which field, and why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot decode {message} v{version}, field {field}: {kind}")]
pub struct DecodeError {
    /// The top-level message being decoded (`ProduceRequest`); empty until the message is known.
    pub message: &'static str,
    /// The version it was decoded at.
    pub version: i16,
    /// `Struct.field` of the innermost field being read when the error happened.
    pub field: &'static str,
    /// The reason.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// An error in `field` that is not yet attributed to a message.
    pub fn new(field: &'static str, kind: DecodeErrorKind) -> Self {
        DecodeError {
            message: "",
            version: -1,
            field,
            kind,
        }
    }

    /// Attributes the error to a top-level message and version.
    pub fn in_message(mut self, message: &'static str, version: i16) -> Self {
        if self.message.is_empty() {
            self.message = message;
            self.version = version;
        }
        self
    }
}

/// Why a value cannot be encoded at the requested version.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeErrorKind {
    /// A non-ignorable field holds a non-default value in a version that lacks it (Kafka's
    /// "Attempted to write a non-default X at version V").
    #[error("attempted to write a non-default value in a version without the field")]
    NonDefault,
    /// A null in a version where the field is not nullable.
    #[error("null in a version where the field is not nullable")]
    NullNotAllowed,
    /// A string, bytes or array longer than its length prefix can express.
    #[error("length {0} does not fit the length prefix")]
    TooLong(usize),
    /// The version is outside the message's valid versions.
    #[error("unsupported version")]
    UnsupportedVersion,
}

/// A value that cannot be written at the requested version.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot encode {message} v{version}, field {field}: {kind}")]
pub struct EncodeError {
    /// The top-level message; empty until known.
    pub message: &'static str,
    /// The version requested.
    pub version: i16,
    /// `Struct.field` of the offending field (empty until known).
    pub field: &'static str,
    /// The reason.
    pub kind: EncodeErrorKind,
}

impl EncodeError {
    /// An error not yet attributed to a field or message.
    pub fn new(kind: EncodeErrorKind) -> Self {
        EncodeError {
            message: "",
            version: -1,
            field: "",
            kind,
        }
    }

    /// A non-ignorable field with a non-default value at a version that lacks it.
    pub fn non_default(field: &'static str, version: i16) -> Self {
        EncodeError {
            message: "",
            version,
            field,
            kind: EncodeErrorKind::NonDefault,
        }
    }

    /// Names the field, unless an inner field was already named.
    pub fn at_field(mut self, field: &'static str, version: i16) -> Self {
        if self.field.is_empty() {
            self.field = field;
            self.version = version;
        }
        self
    }

    /// Attributes the error to a top-level message and version.
    pub fn in_message(mut self, message: &'static str, version: i16) -> Self {
        if self.message.is_empty() {
            self.message = message;
            self.version = version;
        }
        self
    }
}
