//! Fetch v0-3's down-conversion, Kafka's `RecordsUtil.downConvert`: stored magic-2 batches
//! become a message set of magic 0 (Fetch v0-1) or 1 (Fetch v2-3), one legacy entry per record
//! of an uncompressed batch, one compressed wrapper per compressed batch, offsets kept (a
//! compacted batch's gaps too).
//!
//! It streams record by record: a gzip or lz4 batch is inflated through its codec's reader, each
//! record is written out as a legacy entry (through the codec's [`Compressor`] for a wrapper)
//! and dropped, so a batch costs one record, the codec's window and its converted output,
//! however far it inflates (up to the storage layer's cap). Snappy is inflated whole (a raw
//! block needs it), which is bounded at about 21 times its input.
//!
//! Like Kafka's `LazyDownConversionRecords`, the converted set does not grow past the size of
//! what was read: once it holds that many bytes, the remaining batches are left for the
//! client's next fetch (the first is always converted whole).
//!
//! What cannot be expressed is refused as Kafka refuses it: headers are dropped (magic 0/1 have
//! none); zstd batches are `UNSUPPORTED_COMPRESSION_TYPE`; control batches are skipped.

use std::io::{BufRead, BufReader, Read};

use super::batch::{MAGIC_V0, MAGIC_V1, MAGIC_V2, NO_TIMESTAMP, RecordBatchHeader, TimestampType};
use super::batch_iter::BatchIter;
use super::builder::write_legacy_entry;
use super::compression::{CompressionType, Compressor, decompress};
use super::convert::{ConversionError, corrupt};
use super::error::RecordError;
use super::records::{Record, batch_body, for_each_record, read_record};
use crate::protocol::errors::ErrorCode;

/// The most a compressed batch may inflate to on this path, as the storage layer's cap.
const MAX_DECOMPRESSED: usize = 256 * 1024 * 1024;

/// What a compressed stream is read through: enough for many small records per refill.
const READ_BUFFER: usize = 32 * 1024;

/// Down-converts `data` (batches as read from the log; a partial batch at the end is dropped)
/// to a message set of `magic`.
pub fn batches_to_message_set(data: &[u8], magic: i8) -> Result<Vec<u8>, ConversionError> {
    if magic != MAGIC_V0 && magic != MAGIC_V1 {
        return Err(corrupt(format!("cannot down-convert to magic {magic}")));
    }
    let mut out = Vec::with_capacity(data.len());
    for entry in BatchIter::new(data) {
        let Ok(entry) = entry else {
            // A partial batch at the end of a read is normal; stop there as Kafka does.
            break;
        };
        if !out.is_empty() && out.len() >= data.len() {
            break;
        }
        if entry.magic < MAGIC_V2 {
            // Already old: passed on as it is.
            out.extend_from_slice(entry.bytes);
            continue;
        }
        let header = RecordBatchHeader::parse(entry.bytes).map_err(|e| corrupt(e.to_string()))?;
        if header.is_control() {
            continue;
        }
        convert_batch(entry.bytes, &header, magic, &mut out)?;
    }
    Ok(out)
}

/// Appends the legacy form of one magic-2 batch to `out`.
fn convert_batch(
    batch: &[u8],
    header: &RecordBatchHeader,
    magic: i8,
    out: &mut Vec<u8>,
) -> Result<(), ConversionError> {
    let codec = header.compression().map_err(|e| corrupt(e.to_string()))?;
    if codec == CompressionType::Zstd {
        return Err(zstd_unsupported());
    }
    let body = batch_body(batch, header).map_err(|e| corrupt(e.to_string()))?;
    let mut sink = EntrySink::new(magic, codec, header, out)?;
    let count = header.records_count;
    let walked = match codec {
        CompressionType::None => walk_in_place(body, count, &mut sink),
        CompressionType::Snappy => {
            let inflated =
                decompress(codec, body, MAX_DECOMPRESSED).map_err(|e| corrupt(e.to_string()))?;
            walk_in_place(&inflated, count, &mut sink)
        }
        CompressionType::Gzip => {
            let reader = flate2::bufread::MultiGzDecoder::new(body);
            walk_stream(reader, count, &mut sink)
        }
        CompressionType::Lz4 => {
            walk_stream(lz4_flex::frame::FrameDecoder::new(body), count, &mut sink)
        }
        CompressionType::Zstd => Err(zstd_unsupported()),
    };
    walked?;
    sink.finish()
}

fn zstd_unsupported() -> ConversionError {
    ConversionError {
        code: ErrorCode::UnsupportedCompressionType,
        message: "Down-conversion of zstandard-compressed batches is not supported".into(),
    }
}

/// Feeds the records of an inflated records section to `sink`.
fn walk_in_place(
    records: &[u8],
    count: i32,
    sink: &mut EntrySink<'_>,
) -> Result<(), ConversionError> {
    let mut failed = None;
    for_each_record(records, count, |_, r| {
        if failed.is_none() {
            failed = sink.append(r).err();
        }
    })
    .map_err(|e| corrupt(e.to_string()))?;
    failed.map_or(Ok(()), Err)
}

/// Reads `count` records from an inflating `reader`, one at a time into a reused buffer, and
/// feeds each to `sink`; more than [`MAX_DECOMPRESSED`] inflated bytes is an error.
fn walk_stream(
    reader: impl Read,
    count: i32,
    sink: &mut EntrySink<'_>,
) -> Result<(), ConversionError> {
    let mut reader = BufReader::with_capacity(READ_BUFFER, reader);
    let mut record = Vec::new();
    let mut inflated = 0usize;
    for _ in 0..count.max(0) {
        record.clear();
        let size = read_length(&mut reader, &mut record)?;
        let size = usize::try_from(size)
            .map_err(|_| corrupt(format!("Invalid record size {size} in a compressed batch")))?;
        inflated = inflated.saturating_add(record.len()).saturating_add(size);
        if inflated > MAX_DECOMPRESSED {
            return Err(corrupt(format!(
                "a compressed batch inflates past {MAX_DECOMPRESSED} bytes"
            )));
        }
        let wanted = record.len() + size;
        // `take` + `read_to_end` grows the buffer only as bytes arrive, so a record claiming
        // more than the stream holds costs no more than the stream.
        (&mut reader)
            .take(size as u64)
            .read_to_end(&mut record)
            .map_err(|e| corrupt(format!("a compressed batch does not inflate: {e}")))?;
        if record.len() < wanted {
            return Err(corrupt(
                "Incorrect declared batch size, premature EOF reached",
            ));
        }
        let mut pos = 0;
        let parsed = read_record(&record, &mut pos).map_err(|e| corrupt(e.to_string()))?;
        sink.append(&parsed)?;
    }
    Ok(())
}

/// Reads a record's zigzag varint length prefix byte by byte, keeping its bytes in `into` (the
/// record parser reads them again).
fn read_length(reader: &mut impl BufRead, into: &mut Vec<u8>) -> Result<i32, ConversionError> {
    let mut raw: u32 = 0;
    for shift in (0..35).step_by(7) {
        let mut byte = [0u8; 1];
        reader
            .read_exact(&mut byte)
            .map_err(|_| corrupt("Incorrect declared batch size, premature EOF reached"))?;
        into.push(byte[0]);
        raw |= u32::from(byte[0] & 0x7f) << shift;
        if byte[0] & 0x80 == 0 {
            return Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32));
        }
    }
    Err(corrupt("Invalid varint record size in a compressed batch"))
}

/// Where converted records go: straight to the output as legacy entries, or through the
/// batch's codec into one wrapper entry written by [`EntrySink::finish`].
struct EntrySink<'a> {
    magic: i8,
    base_offset: i64,
    base_timestamp: i64,
    /// `Some(max_timestamp)` when the batch has log-append time: every record gets it.
    log_append_time: Option<i64>,
    out: &'a mut Vec<u8>,
    /// The wrapper's codec stream, and one entry's scratch, for a compressed batch.
    wrapper: Option<(Compressor, Vec<u8>)>,
    codec: CompressionType,
    last_offset: i64,
    max_timestamp: i64,
    appended: usize,
}

impl<'a> EntrySink<'a> {
    fn new(
        magic: i8,
        codec: CompressionType,
        header: &RecordBatchHeader,
        out: &'a mut Vec<u8>,
    ) -> Result<Self, ConversionError> {
        let wrapper = match codec {
            CompressionType::None => None,
            codec => Some((
                Compressor::new(codec).map_err(|e| corrupt(e.to_string()))?,
                Vec::new(),
            )),
        };
        Ok(EntrySink {
            magic,
            base_offset: header.base_offset,
            base_timestamp: header.base_timestamp,
            log_append_time: (header.timestamp_type() == TimestampType::LogAppendTime)
                .then_some(header.max_timestamp),
            out,
            wrapper,
            codec,
            last_offset: header.base_offset,
            max_timestamp: NO_TIMESTAMP,
            appended: 0,
        })
    }

    fn append(&mut self, r: &Record<'_>) -> Result<(), ConversionError> {
        let offset = r.offset(self.base_offset);
        let timestamp = if self.magic == MAGIC_V0 {
            NO_TIMESTAMP
        } else {
            self.log_append_time
                .unwrap_or_else(|| r.timestamp(self.base_timestamp))
        };
        self.last_offset = offset;
        self.max_timestamp = self.max_timestamp.max(timestamp);
        self.appended += 1;
        let written = match &mut self.wrapper {
            None => write_legacy_entry(self.out, self.magic, 0, offset, timestamp, r.key, r.value),
            Some((compressor, scratch)) => {
                // Inside a magic-1 wrapper offsets are relative to the batch's base offset (the
                // wrapper carries the last absolute one); magic 0 keeps them absolute.
                let inner_offset = if self.magic == MAGIC_V1 {
                    offset.wrapping_sub(self.base_offset)
                } else {
                    offset
                };
                scratch.clear();
                write_legacy_entry(
                    scratch,
                    self.magic,
                    0,
                    inner_offset,
                    timestamp,
                    r.key,
                    r.value,
                )
                .and_then(|()| compressor.write(scratch))
            }
        };
        written.map_err(|e| corrupt(e.to_string()))
    }

    /// Writes the wrapper of a compressed batch that had records.
    fn finish(self) -> Result<(), ConversionError> {
        let Some((compressor, _)) = self.wrapper else {
            return Ok(());
        };
        if self.appended == 0 {
            return Ok(());
        }
        let compressed = compressor.finish().map_err(|e| corrupt(e.to_string()))?;
        write_legacy_entry(
            self.out,
            self.magic,
            self.codec.id() as i8,
            self.last_offset,
            self.max_timestamp,
            None,
            Some(&compressed),
        )
        .map_err(|e: RecordError| corrupt(e.to_string()))
    }
}

#[cfg(test)]
#[path = "down_convert_tests.rs"]
mod tests;
