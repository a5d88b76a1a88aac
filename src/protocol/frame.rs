//! Request and response framing over the generated messages: the 4-byte size prefix, the header
//! version Kafka's `ApiKeys.requestHeaderVersion`/`responseHeaderVersion` choose for each API and
//! version, and whole frames in one allocation or, for Fetch responses, as segments whose
//! records are passed by reference. Hand-written; the generated `messages` module re-exports it.

use super::codec as c;
use super::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};

fn size_prefix(len: usize) -> Result<i32, c::EncodeError> {
    i32::try_from(len).map_err(|_| c::EncodeError::new(c::EncodeErrorKind::TooLong(len)))
}

/// Reads a request header from the start of a request (the frame after its size prefix). The
/// API key and version are peeked first to choose the header version as Kafka's
/// `ApiKeys.requestHeaderVersion` does, so a version newer than Kafka 3.9 knows (an
/// ApiVersions probe) still yields its header. An unknown API key is an error.
pub fn decode_request_header(r: &mut c::Reader) -> Result<RequestHeader, c::DecodeError> {
    use c::Message as _;
    let mut peek = r.clone();
    let key = peek.i16().map_err(|e| e.in_message("RequestHeader", -1))?;
    let version = peek.i16().map_err(|e| e.in_message("RequestHeader", -1))?;
    let api = ApiKey::from_i16(key).ok_or_else(|| {
        r.error(c::DecodeErrorKind::UnknownApiKey(key))
            .in_message("RequestHeader", -1)
    })?;
    RequestHeader::decode(r, api.info().request_header_version(version))
}

/// Decodes a whole request (the frame after its size prefix): header, then body. Bytes after
/// the body are ignored, as Kafka's broker ignores them.
pub fn decode_request(frame: c::Bytes) -> Result<(RequestHeader, RequestKind), c::DecodeError> {
    let mut r = c::Reader::new(frame);
    let header = decode_request_header(&mut r)?;
    let key = header.request_api_key;
    let api = ApiKey::from_i16(key).ok_or_else(|| {
        r.error(c::DecodeErrorKind::UnknownApiKey(key))
            .in_message("RequestHeader", -1)
    })?;
    let body = RequestKind::decode(api, &mut r, header.request_api_version)?;
    Ok((header, body))
}

fn write_response(
    w: &mut c::Writer,
    correlation_id: i32,
    body: &ResponseKind,
    version: i16,
) -> Result<(), c::EncodeError> {
    use c::Message as _;
    let header = ResponseHeader {
        correlation_id,
        ..ResponseHeader::default()
    };
    let header_version = body.api_key().info().response_header_version(version);
    let mut counter = c::Writer::counter();
    header.encode(&mut counter, header_version)?;
    body.encode(&mut counter, version)?;
    w.put_i32(size_prefix(counter.len())?);
    header.encode(w, header_version)?;
    body.encode(w, version)
}

/// A complete response frame: int32 size, the response header of the right version (v0 for
/// ApiVersions), the body. Sized in one counting pass, written in one allocation.
pub fn encode_response_frame(
    correlation_id: i32,
    body: &ResponseKind,
    version: i16,
) -> Result<c::BytesMut, c::EncodeError> {
    let mut counter = c::Writer::counter();
    write_response(&mut counter, correlation_id, body, version)?;
    let mut w = c::Writer::with_capacity(counter.len());
    write_response(&mut w, correlation_id, body, version)?;
    Ok(w.into_bytes())
}

/// [`encode_response_frame`] as [`c::Segment`]s: every `records` field (a Fetch response's
/// partition data) is passed through by reference, never copied, for `writev`/`sendfile`.
pub fn encode_response_segments(
    correlation_id: i32,
    body: &ResponseKind,
    version: i16,
) -> Result<Vec<c::Segment>, c::EncodeError> {
    let mut w = c::Writer::segmented();
    write_response(&mut w, correlation_id, body, version)?;
    Ok(w.into_segments())
}

/// A complete request frame: int32 size, the header (its version chosen from the body's API
/// key and `header.request_api_version`), the body.
pub fn encode_request_frame(
    header: &RequestHeader,
    body: &RequestKind,
) -> Result<c::BytesMut, c::EncodeError> {
    use c::Message as _;
    let version = header.request_api_version;
    let header_version = body.api_key().info().request_header_version(version);
    let mut counter = c::Writer::counter();
    header.encode(&mut counter, header_version)?;
    body.encode(&mut counter, version)?;
    let mut w = c::Writer::with_capacity(counter.len() + 4);
    w.put_i32(size_prefix(counter.len())?);
    header.encode(&mut w, header_version)?;
    body.encode(&mut w, version)?;
    Ok(w.into_bytes())
}
