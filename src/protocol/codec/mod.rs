//! The Kafka protocol codec's hand-written primitives, shared by the generated messages in
//! [`super::messages`].
//!
//! - [`Reader`]: bounded, zero-copy decoding from a `Bytes` frame.
//! - [`Writer`]: encoding into a buffer, counting (`compute_size`), or in [`Segment`]s that pass
//!   `records` through by reference.
//! - [`Codec`]: how each field type (ints, `string`, `bytes`, `records`, `uuid`, arrays,
//!   nullable values, structs) is read and written at a given [`Cx`].
//! - [`Message`]: the entry points of a top-level message (request, response, header or data).
//! - [`JsonWriter`]/[`ToJson`]: the JSON of Kafka's generated `JsonConverter` classes.
//! - [`ApiInfo`]: one row of the API key table (valid, flexible and deprecated versions,
//!   listeners, header versions).
//!
//! Wire rules (Kafka's `ByteBufferAccessor`/`MessageUtil`): big-endian fixed-width ints;
//! non-flexible strings have an int16 length, bytes/arrays/records an int32 length, -1 = null;
//! flexible versions use compact forms (unsigned varint of length + 1, 0 = null) and end every
//! struct with a tagged-field section (varint count, then varint tag, varint size, value).

mod error;
mod json;
mod reader;
mod str_bytes;
mod values;
mod writer;

pub use bytes::{Bytes, BytesMut};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
pub use json::{JsonWriter, ToJson, base64, java_double, kafka_uuid_string};
pub use reader::Reader;
pub use str_bytes::StrBytes;
pub use uuid::Uuid;
pub use writer::{Segment, TagWriter, Writer};

/// How a field is read or written at one version: the version (for structs), whether lengths
/// are compact (flexible version, and the field does not opt out), whether null is allowed, and
/// whether a `bytes` value is a `records` field (passed by reference by a segmented writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cx {
    /// The message version.
    pub version: i16,
    /// Compact (varint) lengths.
    pub compact: bool,
    /// Null is allowed at this version.
    pub nullable: bool,
    /// The value is a `records` field.
    pub records: bool,
}

/// A context for a non-nullable field at version `version`, compact when `compact`.
pub const fn cx(version: i16, compact: bool) -> Cx {
    Cx {
        version,
        compact,
        nullable: false,
        records: false,
    }
}

impl Cx {
    /// The same context with nullability set.
    pub const fn n(self, nullable: bool) -> Cx {
        Cx { nullable, ..self }
    }

    /// The same context for a `records` field.
    pub const fn rec(self) -> Cx {
        Cx {
            records: true,
            ..self
        }
    }

    /// The context for the elements of an array: never null, never records.
    pub const fn element(self) -> Cx {
        Cx {
            nullable: false,
            records: false,
            ..self
        }
    }
}

/// A tagged field the struct does not know at the version it was decoded at, kept (with its
/// bytes sliced from the frame) so that it is re-emitted unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawTaggedField {
    /// The tag.
    pub tag: u32,
    /// The value's bytes, without the tag and size.
    pub data: Bytes,
}

/// A value that can be read from and written to the wire.
pub trait Codec: Sized {
    /// Reads a non-null value.
    fn read(r: &mut Reader, cx: Cx) -> Result<Self, DecodeError>;
    /// Writes a non-null value.
    fn write(&self, w: &mut Writer, cx: Cx) -> Result<(), EncodeError>;
    /// Reads a value that may be null. The default is a struct's: an int8 marker, negative for
    /// null.
    fn read_nullable(r: &mut Reader, cx: Cx) -> Result<Option<Self>, DecodeError> {
        if r.i8()? < 0 {
            Ok(None)
        } else {
            Self::read(r, cx).map(Some)
        }
    }
    /// Writes a value that may be null (the default writes a struct's int8 marker).
    fn write_nullable(value: Option<&Self>, w: &mut Writer, cx: Cx) -> Result<(), EncodeError> {
        match value {
            None => {
                w.put_i8(-1);
                Ok(())
            }
            Some(v) => {
                w.put_i8(1);
                v.write(w, cx)
            }
        }
    }
}

/// What a top-level spec describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A request body.
    Request,
    /// A response body.
    Response,
    /// A request or response header.
    Header,
    /// A data type, written by its user with an int16 version prefix.
    Data,
}

/// An inclusive range of versions. `min > max` means none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionRange {
    /// The lowest version.
    pub min: i16,
    /// The highest version.
    pub max: i16,
}

impl VersionRange {
    /// Whether `version` is in the range.
    pub const fn contains(self, version: i16) -> bool {
        self.min <= version && version <= self.max
    }
}

/// A top-level message from one spec file.
pub trait Message: Codec + ToJson + Default + Clone + PartialEq + std::fmt::Debug {
    /// The spec's name (`ProduceRequest`).
    const NAME: &'static str;
    /// Request, response, header or data.
    const KIND: MessageKind;
    /// The API key, for requests and responses.
    const API_KEY: Option<i16>;
    /// `validVersions`.
    const VERSIONS: VersionRange;
    /// The first flexible version, if any (`flexibleVersions` is always `N+` or `none`).
    const FLEXIBLE_MIN: Option<i16>;

    /// Decodes the message at `version` from `r`, leaving any bytes after it unread.
    fn decode(r: &mut Reader, version: i16) -> Result<Self, DecodeError> {
        if !Self::VERSIONS.contains(version) {
            return Err(r
                .error(DecodeErrorKind::UnsupportedVersion)
                .in_message(Self::NAME, version));
        }
        let cx = cx(version, false);
        Self::read(r, cx).map_err(|e| e.in_message(Self::NAME, version))
    }

    /// Decodes the message at `version` from all of `buf`; leftover bytes are an error.
    fn decode_bytes(buf: Bytes, version: i16) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let m = Self::decode(&mut r, version)?;
        if r.remaining() != 0 {
            return Err(r
                .error(DecodeErrorKind::TrailingBytes(r.remaining()))
                .in_message(Self::NAME, version));
        }
        Ok(m)
    }

    /// Encodes the message at `version` into `w`.
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {
        if !Self::VERSIONS.contains(version) {
            return Err(EncodeError::new(EncodeErrorKind::UnsupportedVersion)
                .in_message(Self::NAME, version));
        }
        self.write(w, cx(version, false))
            .map_err(|e| e.in_message(Self::NAME, version))
    }

    /// The encoded size at `version`, without encoding.
    fn compute_size(&self, version: i16) -> Result<usize, EncodeError> {
        let mut w = Writer::counter();
        self.encode(&mut w, version)?;
        Ok(w.len())
    }

    /// Encodes into a buffer sized exactly by [`Message::compute_size`].
    fn encode_to_bytes(&self, version: i16) -> Result<BytesMut, EncodeError> {
        let mut w = Writer::with_capacity(self.compute_size(version)?);
        self.encode(&mut w, version)?;
        Ok(w.into_bytes())
    }

    /// The JSON that Kafka's generated `JsonConverter.write(message, version)` produces
    /// (see [`JsonWriter`]).
    fn to_json_string(&self, version: i16) -> String {
        let mut j = JsonWriter::new();
        self.to_json(&mut j, cx(version, false));
        j.finish()
    }

    /// Encodes with every `records` field passed through as its own [`Segment::Records`], so
    /// record data is never copied (a Fetch response's partitions can then be sent with
    /// `writev`, or `sendfile` for records that came from a segment file).
    fn encode_segments(&self, version: i16) -> Result<Vec<Segment>, EncodeError> {
        let mut w = Writer::segmented();
        self.encode(&mut w, version)?;
        Ok(w.into_segments())
    }
}

/// Which kinds of process serve an API (`listeners` in the spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// A ZooKeeper-mode broker.
    ZkBroker,
    /// A KRaft broker.
    Broker,
    /// A KRaft controller.
    Controller,
}

/// One row of the API key table, generated from a request spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiInfo {
    /// The API key.
    pub key: i16,
    /// The API's name (`Produce`).
    pub name: &'static str,
    /// `validVersions`.
    pub valid: VersionRange,
    /// The first flexible version, if any.
    pub flexible_min: Option<i16>,
    /// `deprecatedVersions`, if any.
    pub deprecated: Option<VersionRange>,
    /// The `listeners` that serve it.
    pub listeners: &'static [Listener],
    /// `latestVersionUnstable`: the highest valid version is never advertised.
    pub latest_version_unstable: bool,
    /// Request versions that use request header v0 (ControlledShutdown v0 only).
    pub request_header_v0: Option<VersionRange>,
    /// The response header is v0 at every version (ApiVersions, so that any client can read it).
    pub response_header_always_v0: bool,
}

impl ApiInfo {
    /// Whether `version` is flexible.
    pub const fn is_flexible(&self, version: i16) -> bool {
        match self.flexible_min {
            Some(min) => version >= min,
            None => false,
        }
    }

    /// The request header version used with request `version` (0, 1 or 2).
    pub fn request_header_version(&self, version: i16) -> i16 {
        if self.request_header_v0.is_some_and(|r| r.contains(version)) {
            0
        } else if self.is_flexible(version) {
            2
        } else {
            1
        }
    }

    /// The response header version used with response `version` (0 or 1).
    pub fn response_header_version(&self, version: i16) -> i16 {
        if !self.response_header_always_v0 && self.is_flexible(version) {
            1
        } else {
            0
        }
    }

    /// Whether a ZooKeeper-mode broker serves this API.
    pub fn zk_broker(&self) -> bool {
        self.listeners.contains(&Listener::ZkBroker)
    }

    /// The highest version a broker should advertise (skipping an unstable latest version).
    pub fn max_stable_version(&self) -> i16 {
        if self.latest_version_unstable {
            self.valid.max - 1
        } else {
            self.valid.max
        }
    }
}
