//! The JSON Lines format of `kcli dump-segment --format json` (schema in
//! docs/dump-segment-json.md): one object per batch, index entry, producer-snapshot entry or
//! aborted transaction, each naming its `file` and its `type`. Written by hand with serde_json's
//! string escaping, so a 1 GiB segment does not build a tree per batch.

use std::io::Write;

use super::segment::{BatchInfo, RecordView, SegmentError};
use super::text::{ControlRecord, timestamp_type_name};

/// A JSON string literal (escaped by serde_json).
pub(crate) fn write_str(out: &mut dyn Write, s: &str) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, s).map_err(std::io::Error::from)
}

/// Bytes as a JSON value: `null` when absent, a string when they are UTF-8, otherwise
/// `{"base64": "<standard base64 with padding>"}`.
pub(crate) fn write_bytes(out: &mut dyn Write, bytes: Option<&[u8]>) -> std::io::Result<()> {
    match bytes {
        None => out.write_all(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => write_str(out, s),
            Err(_) => {
                out.write_all(b"{\"base64\":\"")?;
                out.write_all(base64(b).as_bytes())?;
                out.write_all(b"\"}")
            }
        },
    }
}

/// Standard base64 (RFC 4648 alphabet, `=` padding).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                s.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// The batch fields, without the closing brace (records may follow).
pub(crate) fn write_batch_open(
    out: &mut dyn Write,
    file: &str,
    b: &BatchInfo,
) -> std::io::Result<()> {
    out.write_all(b"{\"type\":\"batch\",\"file\":")?;
    write_str(out, file)?;
    write!(
        out,
        ",\"position\":{},\"size\":{},\"magic\":{},\"base_offset\":{},\"last_offset\":{},\"count\":",
        b.position, b.size, b.magic, b.base_offset, b.last_offset
    )?;
    match b.count {
        Some(c) => write!(out, "{c}")?,
        None => out.write_all(b"null")?,
    }
    write!(
        out,
        ",\"compression\":\"{}\",\"timestamp_type\":\"{}\",\"max_timestamp\":{},\"partition_leader_epoch\":{},\"producer_id\":{},\"producer_epoch\":{},\"base_sequence\":{},\"last_sequence\":{},\"is_transactional\":{},\"is_control\":{},\"delete_horizon_ms\":",
        b.compression.name(),
        timestamp_type_name(b.timestamp_type),
        b.max_timestamp,
        b.partition_leader_epoch,
        b.producer_id,
        b.producer_epoch,
        b.base_sequence,
        b.last_sequence,
        b.is_transactional,
        b.is_control,
    )?;
    match b.delete_horizon_ms {
        Some(d) => write!(out, "{d}")?,
        None => out.write_all(b"null")?,
    }
    write!(out, ",\"crc\":{},\"is_valid\":{}", b.crc, b.is_valid)
}

/// One element of a batch's `records` array.
pub(crate) fn write_record(
    out: &mut dyn Write,
    batch: &BatchInfo,
    rec: &RecordView<'_>,
    offsets_decoder: bool,
) -> Result<(), SegmentError> {
    rec.check_data()?;
    let control = if batch.is_control {
        Some(ControlRecord::parse(rec)?)
    } else {
        None
    };
    write!(
        out,
        "{{\"offset\":{},\"timestamp\":{},\"key_size\":{},\"value_size\":{},\"key\":",
        rec.offset, rec.timestamp, rec.key_size, rec.value_size
    )?;
    write_bytes(out, rec.key)?;
    out.write_all(b",\"value\":")?;
    write_bytes(out, rec.value)?;
    out.write_all(b",\"headers\":[")?;
    for (i, (key, value)) in rec.headers().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"{\"key\":")?;
        write_bytes(out, Some(key))?;
        out.write_all(b",\"value\":")?;
        write_bytes(out, value)?;
        out.write_all(b"}")?;
    }
    out.write_all(b"]")?;
    if batch.magic >= 2 {
        write!(out, ",\"sequence\":{}", rec.sequence)?;
    }
    if let Some(legacy) = rec.legacy {
        write!(
            out,
            ",\"crc\":{},\"is_valid\":{}",
            legacy.crc, legacy.is_valid
        )?;
    }
    match control {
        Some(
            c @ ControlRecord::EndTxn {
                coordinator_epoch, ..
            },
        ) => write!(
            out,
            ",\"control\":{{\"type\":\"{}\",\"coordinator_epoch\":{coordinator_epoch}}}",
            c.type_name()
        )?,
        Some(c @ ControlRecord::Other { type_id }) => write!(
            out,
            ",\"control\":{{\"type\":\"{}\",\"type_id\":{type_id}}}",
            c.type_name()
        )?,
        None => {}
    }
    if offsets_decoder && !batch.is_control {
        write_offsets_record(out, rec)?;
    }
    out.write_all(b"}")?;
    Ok(())
}

/// `offsets_key` and `offsets_value`: the `--offsets-decoder` documents as JSON values (the
/// text format's `key:` and `payload:`); a record that does not decode has its message as the
/// key and a null value, a tombstone a null value.
fn write_offsets_record(out: &mut dyn Write, rec: &RecordView<'_>) -> Result<(), SegmentError> {
    let decoded = super::offsets_decoder::decode(rec.offset, rec.key, rec.value)?;
    let as_json = |doc: &str| {
        if doc.starts_with('{') {
            doc.to_string()
        } else {
            serde_json::Value::String(doc.to_string()).to_string()
        }
    };
    write!(out, ",\"offsets_key\":{}", as_json(&decoded.key))?;
    let value = match decoded.payload.as_deref() {
        None | Some("<DELETE>") => "null".to_string(),
        Some(doc) => as_json(doc),
    };
    write!(out, ",\"offsets_value\":{value}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn bytes_are_strings_when_utf8_and_base64_otherwise() {
        let render = |b: Option<&[u8]>| {
            let mut out = Vec::new();
            write_bytes(&mut out, b).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(render(None), "null");
        assert_eq!(render(Some(b"a\"b")), "\"a\\\"b\"");
        assert_eq!(render(Some(b"\xff\x00")), "{\"base64\":\"/wA=\"}");
    }
}
