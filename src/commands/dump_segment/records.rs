//! The records of a batch as Kafka's `batch.iterator()` yields them to `DumpLogSegments`: v2
//! records walked in place (`DefaultRecord.readFrom`'s checks, lazily for uncompressed batches
//! and all at once for compressed ones), legacy v0/v1 messages and the inner messages of
//! compressed wrappers (absolute offsets, wrapper timestamps), with Kafka's failure points.

use super::segment::{
    Batch, BatchInfo, LOG_OVERHEAD, MAX_DECOMPRESSED, RECORD_BATCH_OVERHEAD, RECORD_OVERHEAD_V0,
    SegmentError,
};
use crate::protocol::record::batch::TimestampType;
use crate::protocol::record::big_endian::{i32_at, i64_at, read_i32, u32_at};
use std::io::Read;

use crate::protocol::record::compression::{CompressionType, decompress};
use crate::protocol::record::error::RecordError;
use crate::protocol::record::varint::{read_varint, read_varlong};

/// Extra fields of a v0/v1 record (Kafka prints ` isValid: … crc: …}` for them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LegacyInfo {
    pub is_valid: bool,
    pub crc: u32,
    /// Whether the key and value lie inside the message. Kafka reads the size fields for the
    /// record line and the bytes only to print them, so a size running past the message fails
    /// only when data is printed; `key`/`value` are `None` then.
    pub data_in_bounds: bool,
}

/// One record as `batch.iterator()` yields it, borrowing the batch (or its decompressed bytes).
#[derive(Debug, Clone)]
pub(crate) struct RecordView<'a> {
    pub offset: i64,
    pub timestamp: i64,
    /// Kafka's `keySize`: -1 for a null key in v2; the raw size field for v0/v1.
    pub key_size: i32,
    pub value_size: i32,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// v2: base sequence + offset delta (wrapping), or -1; legacy: -1.
    pub sequence: i32,
    /// The headers' bytes (validated) and their count; empty for legacy records.
    headers_raw: &'a [u8],
    header_count: usize,
    /// Set for v0/v1 records.
    pub legacy: Option<LegacyInfo>,
}

impl<'a> RecordView<'a> {
    /// Fails when the key or value bytes cannot be shown (a legacy size running past its
    /// message), as Kafka does when it prints them.
    pub(crate) fn check_data(&self) -> Result<(), SegmentError> {
        match self.legacy {
            Some(l) if !l.data_in_bounds => Err(SegmentError::Corrupt(format!(
                "record at offset {}: key or value extends past the record",
                self.offset
            ))),
            _ => Ok(()),
        }
    }

    /// The headers in order (keys may repeat). The bytes were validated when the record was
    /// read, so iteration stops only at the end.
    pub(crate) fn headers(&self) -> impl Iterator<Item = (&'a [u8], Option<&'a [u8]>)> + use<'a> {
        let raw = self.headers_raw;
        let mut pos = 0usize;
        (0..self.header_count).map_while(move |_| {
            let key = read_sized(raw, &mut pos).ok()??;
            let value = read_sized(raw, &mut pos).ok()?;
            Some((key, value))
        })
    }
}

/// Calls `f` for each record of `batch` in order, with Kafka's failure points: an uncompressed
/// v2 batch yields the records before a broken one; a compressed batch is decoded whole first,
/// so a broken one yields nothing. Returns `Err` when the records cannot be read; errors of `f`
/// are passed through.
pub(crate) fn for_each_record<F>(
    batch: &Batch<'_>,
    info: &BatchInfo,
    mut f: F,
) -> Result<(), SegmentError>
where
    F: FnMut(&RecordView<'_>) -> Result<(), SegmentError>,
{
    if let Some(id) = info.unknown_compression {
        return Err(SegmentError::Corrupt(format!(
            "Unknown compression type id: {id}"
        )));
    }
    if batch.magic >= 2 {
        v2_records(batch, info, &mut f)
    } else {
        legacy_records(batch, info, &mut f)
    }
}

fn v2_records(
    batch: &Batch<'_>,
    info: &BatchInfo,
    f: &mut dyn FnMut(&RecordView<'_>) -> Result<(), SegmentError>,
) -> Result<(), SegmentError> {
    if batch.bytes.len() < RECORD_BATCH_OVERHEAD {
        return Err(SegmentError::Corrupt(
            "batch is smaller than the 61-byte v2 header".into(),
        ));
    }
    let count = info.count.unwrap_or(0);
    if count == 0 {
        return Ok(());
    }
    if count < 0 {
        return Err(SegmentError::Corrupt(format!(
            "Found invalid record count {count} in magic v2 batch"
        )));
    }
    let bytes = batch.bytes;
    let base_timestamp = i64_at(bytes, 27);
    let log_append_time =
        (info.timestamp_type == TimestampType::LogAppendTime).then_some(info.max_timestamp);
    let ctx = V2Context {
        base_offset: info.base_offset,
        base_timestamp,
        base_sequence: info.base_sequence,
        log_append_time,
    };
    let payload = &bytes[RECORD_BATCH_OVERHEAD..];
    if info.compression == CompressionType::None {
        let mut pos = 0usize;
        for i in 0..count {
            let rec = read_v2_record(payload, &mut pos, &ctx)?;
            if i == count - 1 && pos != payload.len() {
                return Err(SegmentError::Corrupt(
                    "Incorrect declared batch size, records still remaining in file".into(),
                ));
            }
            f(&rec)?;
        }
        Ok(())
    } else {
        let data =
            decompress_like_java(info.compression, payload, MAX_DECOMPRESSED).map_err(|e| {
                SegmentError::Corrupt(format!("Failed to decompress record stream: {e}"))
            })?;
        let mut pos = 0usize;
        // Kafka's iterator() decodes every record before returning the first one; so does this,
        // allocating at most one view per record that actually exists in the data.
        let mut records = Vec::new();
        for i in 0..count {
            let rec = read_v2_record(&data, &mut pos, &ctx)?;
            if i == count - 1 && pos != data.len() {
                return Err(SegmentError::Corrupt(
                    "Incorrect declared batch size, records still remaining in file".into(),
                ));
            }
            records.push(rec);
        }
        for rec in &records {
            f(rec)?;
        }
        Ok(())
    }
}

struct V2Context {
    base_offset: i64,
    base_timestamp: i64,
    base_sequence: i32,
    log_append_time: Option<i64>,
}

/// `DefaultRecord.readFrom`: one record at `*pos`, which advances past it.
fn read_v2_record<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    ctx: &V2Context,
) -> Result<RecordView<'a>, SegmentError> {
    let invalid =
        |what: &str| SegmentError::Corrupt(format!("Found invalid record structure: {what}"));
    let body_size = read_varint(buf, pos).map_err(|e| invalid(&e.to_string()))?;
    let remaining = buf.len() - *pos;
    if body_size < 0 || body_size as usize > remaining {
        return Err(SegmentError::Corrupt(format!(
            "Invalid record size: expected {body_size} bytes in record payload, but instead the buffer has only {remaining} remaining bytes."
        )));
    }
    let start = *pos;
    let body = &buf[..start + body_size as usize];
    let mut p = start;
    if p >= body.len() {
        return Err(invalid("no attributes"));
    }
    p += 1; // attributes: unused
    let timestamp_delta = read_varlong(body, &mut p).map_err(|e| invalid(&e.to_string()))?;
    let offset_delta = read_varint(body, &mut p).map_err(|e| invalid(&e.to_string()))?;
    let key = read_sized(body, &mut p).map_err(|e| invalid(&e))?;
    let value = read_sized(body, &mut p).map_err(|e| invalid(&e))?;
    let header_count = read_varint(body, &mut p).map_err(|e| invalid(&e.to_string()))?;
    if header_count < 0 {
        return Err(SegmentError::Corrupt(format!(
            "Found invalid number of record headers {header_count}"
        )));
    }
    if header_count as usize > body.len() - p {
        return Err(SegmentError::Corrupt(format!(
            "Found invalid number of record headers. {header_count} is larger than the remaining size of the buffer"
        )));
    }
    let headers_start = p;
    for _ in 0..header_count {
        let key_len = read_varint(body, &mut p).map_err(|e| invalid(&e.to_string()))?;
        if key_len < 0 {
            return Err(SegmentError::Corrupt(format!(
                "Invalid negative header key size {key_len}"
            )));
        }
        if key_len as usize > body.len() - p {
            return Err(invalid("header key extends past the record"));
        }
        p += key_len as usize;
        read_sized(body, &mut p).map_err(|e| invalid(&e))?;
    }
    let headers_raw = &body[headers_start..p];
    if p != body.len() {
        return Err(SegmentError::Corrupt(format!(
            "Invalid record size: expected to read {body_size} bytes in record payload, but instead read {}",
            p - start
        )));
    }
    *pos = p;
    let timestamp = ctx
        .log_append_time
        .unwrap_or(ctx.base_timestamp.wrapping_add(timestamp_delta));
    let sequence = if ctx.base_sequence >= 0 {
        increment_sequence(ctx.base_sequence, offset_delta)
    } else {
        -1
    };
    Ok(RecordView {
        offset: ctx.base_offset.wrapping_add(offset_delta as i64),
        timestamp,
        key_size: key.map_or(-1, |k| k.len() as i32),
        value_size: value.map_or(-1, |v| v.len() as i32),
        key,
        value,
        sequence,
        headers_raw,
        header_count: header_count as usize,
        legacy: None,
    })
}

// Kafka's `DefaultRecordBatch.incrementSequence` / `decrementSequence`, shared with the broker.
pub(crate) use crate::protocol::record::batch::increment_sequence;

/// A varint length followed by that many bytes; a negative length is null (`Utils.readBytes`).
fn read_sized<'a>(buf: &'a [u8], pos: &mut usize) -> Result<Option<&'a [u8]>, String> {
    let len = read_varint(buf, pos).map_err(|e| e.to_string())?;
    if len < 0 {
        return Ok(None);
    }
    let len = len as usize;
    if len > buf.len() - *pos {
        return Err(format!(
            "length {len} exceeds the {} bytes remaining",
            buf.len() - *pos
        ));
    }
    let bytes = &buf[*pos..*pos + len];
    *pos += len;
    Ok(Some(bytes))
}

/// `(key size, key, value size, value)` of a legacy record.
type KeyValue<'a> = (i32, Option<&'a [u8]>, i32, Option<&'a [u8]>);

/// A v0/v1 record (the bytes after the 12-byte log overhead) with Kafka's accessors.
#[derive(Debug, Clone, Copy)]
pub(super) struct LegacyRecord<'a> {
    pub(super) rec: &'a [u8],
}

impl<'a> LegacyRecord<'a> {
    fn magic(&self) -> i8 {
        self.rec[4] as i8
    }
    fn attributes(&self) -> i8 {
        self.rec[5] as i8
    }
    fn key_size_offset(&self) -> usize {
        if self.magic() == 0 { 6 } else { 14 }
    }
    /// `keySize`, `key`, `valueSize`, `value` as `LegacyRecord` reads them; out-of-bounds sizes
    /// are errors (Java throws from the buffer).
    pub(super) fn key_value(&self) -> Result<KeyValue<'a>, SegmentError> {
        let (kv, in_bounds) = self.key_value_lenient()?;
        if in_bounds {
            Ok(kv)
        } else {
            Err(SegmentError::Corrupt(
                "record key or value extends past the record".into(),
            ))
        }
    }

    /// As `key_value`, but only the size fields must be readable (what Kafka's record line
    /// reads); key or value bytes running past the message read as `None` with `false`.
    fn key_value_lenient(&self) -> Result<(KeyValue<'a>, bool), SegmentError> {
        let oob = || SegmentError::Corrupt("record key or value size lies past the record".into());
        let ko = self.key_size_offset();
        let key_size = read_i32(self.rec, ko).ok_or_else(oob)?;
        let vo = (ko + 4)
            .checked_add(key_size.max(0) as usize)
            .ok_or_else(oob)?;
        let value_size = read_i32(self.rec, vo).ok_or_else(oob)?;
        let key = sized_slice(self.rec, ko + 4, key_size);
        let value = sized_slice(self.rec, vo + 4, value_size);
        let in_bounds = key.is_some() && value.is_some();
        Ok((
            (key_size, key.flatten(), value_size, value.flatten()),
            in_bounds,
        ))
    }
}

/// `Some(None)` for a negative size (null), `Some(Some(bytes))` when in bounds.
fn sized_slice(buf: &[u8], start: usize, size: i32) -> Option<Option<&[u8]>> {
    if size < 0 {
        return Some(None);
    }
    let end = start.checked_add(size as usize)?;
    buf.get(start..end).map(Some)
}

fn legacy_records(
    batch: &Batch<'_>,
    info: &BatchInfo,
    f: &mut dyn FnMut(&RecordView<'_>) -> Result<(), SegmentError>,
) -> Result<(), SegmentError> {
    let wrapper = LegacyRecord {
        rec: &batch.bytes[LOG_OVERHEAD..],
    };
    if info.compression == CompressionType::None {
        let ((key_size, key, value_size, value), data_in_bounds) = wrapper.key_value_lenient()?;
        let view = RecordView {
            offset: info.last_offset,
            timestamp: info.max_timestamp,
            key_size,
            value_size,
            key,
            value,
            sequence: -1,
            headers_raw: &[],
            header_count: 0,
            legacy: Some(LegacyInfo {
                is_valid: info.is_valid,
                crc: info.crc,
                data_in_bounds,
            }),
        };
        f(&view)?;
        return Ok(());
    }
    // AbstractLegacyRecordBatch.DeepRecordsIterator.
    let wrapper_magic = wrapper.magic();
    if info.compression == CompressionType::Zstd {
        return Err(SegmentError::Corrupt(format!(
            "Invalid wrapper compressionType found in legacy deep record iterator {wrapper_magic}"
        )));
    }
    let (_, _, _, value) = wrapper.key_value()?;
    let Some(value) = value else {
        return Err(SegmentError::Corrupt(format!(
            "Found invalid compressed record set with null value (magic = {wrapper_magic})"
        )));
    };
    let data = decompress_like_java(info.compression, value, MAX_DECOMPRESSED)
        .map_err(|e| SegmentError::Corrupt(format!("Failed to decompress record stream: {e}")))?;
    // DataLogInputStream: entries until a short read; a size below 14 is an error.
    let mut inner: Vec<(i64, LegacyRecord<'_>)> = Vec::new();
    let mut pos = 0usize;
    while data.len() - pos >= LOG_OVERHEAD {
        let offset = i64_at(&data, pos);
        let size = i32_at(&data, pos + 8);
        if size < RECORD_OVERHEAD_V0 {
            return Err(SegmentError::Corrupt(format!(
                "Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
            )));
        }
        let start = pos + LOG_OVERHEAD;
        if size as usize > data.len() - start {
            break;
        }
        inner.push((
            offset,
            LegacyRecord {
                rec: &data[start..start + size as usize],
            },
        ));
        pos = start + size as usize;
    }
    let Some(&(last_inner_offset, _)) = inner.last() else {
        return Err(SegmentError::Corrupt(
            "Found invalid compressed record set with no inner records".into(),
        ));
    };
    let absolute_base = if wrapper_magic == 1 {
        if info.last_offset == 0 {
            Some(0)
        } else if info.last_offset < last_inner_offset {
            return Err(SegmentError::Corrupt(format!(
                "Found invalid wrapper offset in compressed v1 message set, wrapper offset '{}' is less than the last inner message offset '{last_inner_offset}' and it is not zero.",
                info.last_offset
            )));
        } else {
            Some(info.last_offset.wrapping_sub(last_inner_offset))
        }
    } else {
        None
    };
    for (offset, rec) in inner {
        let offset = absolute_base.map_or(offset, |b| b.wrapping_add(offset));
        if legacy_compression(rec.attributes()) != Ok(CompressionType::None) {
            return Err(SegmentError::Corrupt(
                "Inner messages must not be compressed".into(),
            ));
        }
        let timestamp = if rec.magic() == 0 {
            -1
        } else if info.timestamp_type == TimestampType::LogAppendTime {
            info.max_timestamp
        } else {
            i64_at(rec.rec, 6)
        };
        let ((key_size, key, value_size, value), data_in_bounds) = rec.key_value_lenient()?;
        let view = RecordView {
            offset,
            timestamp,
            key_size,
            value_size,
            key,
            value,
            sequence: -1,
            headers_raw: &[],
            header_count: 0,
            legacy: Some(LegacyInfo {
                is_valid: legacy_crc_valid(rec.rec),
                crc: u32_at(rec.rec, 0),
                data_in_bounds,
            }),
        };
        f(&view)?;
    }
    Ok(())
}

/// The codec of legacy attributes (bits 0–2); ids above 4 are errors as in Kafka.
pub(super) fn legacy_compression(attributes: i8) -> Result<CompressionType, String> {
    let id = (attributes & 0x07) as u8;
    CompressionType::from_id(id).map_err(|_| format!("Unknown compression type id: {id}"))
}

pub(super) fn legacy_timestamp_type(attributes: i8) -> TimestampType {
    if attributes & 0x08 == 0 {
        TimestampType::CreateTime
    } else {
        TimestampType::LogAppendTime
    }
}

/// `LegacyRecord.isValid`: CRC-32 of magic..end equals the stored one. `rec` is at least 14
/// bytes (the reader guarantees it for entries, the inner loop for inner records).
pub(super) fn legacy_crc_valid(rec: &[u8]) -> bool {
    rec.len() >= RECORD_OVERHEAD_V0 as usize && crc32fast::hash(&rec[4..]) == u32_at(rec, 0)
}

/// `decompress`, except that gzip follows Java's `GZIPInputStream`, which Kafka reads batches
/// through: members are decoded in sequence and bytes after a member that do not start another
/// gzip header are ignored (a batch whose size field grew keeps its records).
pub(super) fn decompress_like_java(
    codec: CompressionType,
    data: &[u8],
    max_output: usize,
) -> Result<Vec<u8>, RecordError> {
    if codec != CompressionType::Gzip {
        return decompress(codec, data, max_output);
    }
    let fail = |e: std::io::Error| RecordError::Codec {
        op: "decompress",
        codec: "gzip",
        reason: e.to_string(),
    };
    let mut out = Vec::new();
    let mut rest = data;
    loop {
        let mut member = flate2::bufread::GzDecoder::new(rest);
        let room = max_output.saturating_sub(out.len()).saturating_add(1) as u64;
        (&mut member)
            .take(room)
            .read_to_end(&mut out)
            .map_err(fail)?;
        if out.len() > max_output {
            return Err(RecordError::DecompressedTooLarge {
                codec: "gzip",
                limit: max_output,
            });
        }
        rest = member.into_inner();
        // Java reads another member only when a gzip header (magic, deflate) follows.
        if rest.len() < 10 || rest[..3] != [0x1f, 0x8b, 8] {
            return Ok(out);
        }
    }
}
