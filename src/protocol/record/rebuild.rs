//! Rebuilding a produced v2 batch with a target codec: what Kafka 3.9's `LogValidator` does
//! through `buildRecordsAndAssignOffsets` (a `MemoryRecordsBuilder` fed the validated records)
//! when a topic's `compression.type` differs from the batch's codec, or when a compressed
//! batch's inner offsets are not 0, 1, 2, ...
//!
//! What the rebuilt batch holds, as Kafka writes it: records re-encoded with offset deltas
//! 0..n-1, attributes 0, timestamp deltas from the first record's timestamp (the new base
//! timestamp), keys, values and headers byte for byte; base offset 0 (the log assigns it), the
//! source's partition leader epoch, producer id, epoch, base sequence and transactional flag,
//! never the control flag (Kafka's builder gets `isControlBatch = false`); the topic's timestamp
//! type, with max timestamp `log_append_time` under `LogAppendTime` and the largest record
//! timestamp otherwise; a fresh CRC.
//!
//! Codecs and levels (KIP-390), as Kafka's `Compression` classes use them: gzip at
//! `compression.gzip.level` (-1 = zlib's default, 6); lz4 frames of 64 KiB independent blocks
//! without checksums, liblz4's fast compressor at the default level 9 and its HC compressor at
//! any other level (lz4-java's `fastCompressor`/`highCompressor`); zstd at
//! `compression.zstd.level`; snappy in xerial framing. The compressed bytes differ from the JVM's
//! (other implementations), the format does not.
//!
//! Memory: the uncompressed records are re-encoded into a per-thread scratch buffer and
//! compressed from it; neither it nor the output ever exceeds `max_bytes` (the same cap as
//! decompression), which fails the rebuild with [`RecordError::DecompressedTooLarge`]. The zstd
//! context is kept per thread too, as Kafka recycles its buffers; lz4 allocates nothing but
//! the output, gzip its deflate state and snappy its framed output on top.

use std::cell::RefCell;
use std::io::Write;

use super::batch::{
    CRC_OFFSET, LOG_OVERHEAD, MAGIC_V2, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, RecordBatchHeader,
    TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK, TimestampType, compute_crc,
};
use super::compression::{CompressionType, codec_err, compress, too_large};
use super::error::RecordError;
use super::varint::write_varlong;
use super::varint::{read_varint, read_varlong, varint_size, varlong_size, write_varint};

/// The lz4 level at which Kafka uses lz4-java's fast compressor (its default).
pub(crate) const LZ4_FAST_LEVEL: i32 = 9;
/// The lz4 frame header Kafka writes: magic, FLG (version 1, independent blocks, no checksums,
/// no content size), BD (64 KiB blocks) and the descriptor's xxhash32 byte.
const LZ4_FRAME_HEADER: [u8; 7] = [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82];
const LZ4_BLOCK: usize = 64 << 10;
/// Set in an lz4 block length: the block is stored uncompressed.
const LZ4_UNCOMPRESSED_FLAG: u32 = 0x8000_0000;

/// A target codec and its level (Kafka's `Compression`); the level means nothing for `None`
/// and snappy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    pub codec: CompressionType,
    pub level: i32,
}

impl Compression {
    /// `codec` at Kafka's default level.
    pub fn of(codec: CompressionType) -> Self {
        let level = match codec {
            CompressionType::Gzip => -1,
            CompressionType::Lz4 => LZ4_FAST_LEVEL,
            CompressionType::Zstd => 3,
            CompressionType::None | CompressionType::Snappy => 0,
        };
        Compression { codec, level }
    }
}

/// What the rebuilt header takes from the source batch and the topic.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RebuildParams {
    pub target: Compression,
    /// The topic's `message.timestamp.type`.
    pub timestamp_type: TimestampType,
    /// The broker's clock, the max timestamp under `LogAppendTime`.
    pub log_append_time: i64,
    /// The cap on the re-encoded records and on the compressed output.
    pub max_bytes: usize,
}

/// Rebuilds the batch whose header is `source` from its `count` uncompressed, already
/// validated `records`. `timestamp_of(timestamp_delta)` gives a record's timestamp as Kafka
/// reads it (the batch max timestamp for a `LogAppendTime` batch). Returns the whole batch.
pub(crate) fn rebuild_batch(
    source: &RecordBatchHeader,
    records: &[u8],
    count: i32,
    timestamp_of: impl Fn(i64) -> i64,
    params: &RebuildParams,
) -> Result<Vec<u8>, RecordError> {
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        scratch.clear();
        let (base_timestamp, max_timestamp) = encode_records(
            records,
            count,
            &timestamp_of,
            params.max_bytes,
            &mut scratch,
        )?;
        let mut out = Vec::new();
        let reserve = match params.target.codec {
            CompressionType::None => scratch.len(),
            // A guess; the codecs grow the output as they need, up to the cap.
            _ => scratch.len() / 2 + 1024,
        };
        out.reserve(RECORD_BATCH_OVERHEAD + reserve.min(params.max_bytes));
        out.resize(RECORD_BATCH_OVERHEAD, 0);
        compress_into(params.target, &scratch, &mut out, params.max_bytes)?;
        let max_timestamp = if params.timestamp_type == TimestampType::LogAppendTime {
            params.log_append_time
        } else {
            max_timestamp
        };
        write_header(
            &mut out,
            source,
            count,
            base_timestamp,
            max_timestamp,
            params,
        )?;
        Ok(out)
    })
}

thread_local! {
    /// The re-encoded records of the batch being rebuilt on this thread.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// This thread's zstd context and the level it is set to.
    static ZSTD: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
}

/// Re-encodes the records with offset deltas 0..n-1 and timestamp deltas from the first
/// record's timestamp; returns (base timestamp, max timestamp).
fn encode_records(
    records: &[u8],
    count: i32,
    timestamp_of: &impl Fn(i64) -> i64,
    max_bytes: usize,
    out: &mut Vec<u8>,
) -> Result<(i64, i64), RecordError> {
    let mut pos = 0usize;
    let mut base_timestamp = None;
    let mut max_timestamp = NO_TIMESTAMP;
    out.reserve(records.len().min(max_bytes));
    for index in 0..count {
        let start = pos;
        let size = read_varint(records, &mut pos)?;
        let body_end = usize::try_from(size)
            .ok()
            .and_then(|s| pos.checked_add(s))
            .filter(|&end| end <= records.len())
            .ok_or_else(|| RecordError::corrupt(start, "record overruns the batch"))?;
        // Attributes, then the two deltas; the rest (key, value, headers) is copied.
        let mut p = pos + 1;
        let timestamp_delta = read_varlong(records, &mut p)?;
        read_varint(records, &mut p)?;
        let tail = records
            .get(p..body_end)
            .ok_or_else(|| RecordError::corrupt(start, "record overruns the batch"))?;
        let timestamp = timestamp_of(timestamp_delta);
        let base = *base_timestamp.get_or_insert(timestamp);
        max_timestamp = max_timestamp.max(timestamp);
        let new_delta = timestamp.wrapping_sub(base);
        let body_len = 1 + varlong_size(new_delta) + varint_size(index) + tail.len();
        let body_len_i32 =
            i32::try_from(body_len).map_err(|_| RecordError::corrupt(start, "record too large"))?;
        if out.len() + varint_size(body_len_i32) + body_len > max_bytes {
            return Err(too_large(CompressionType::None, max_bytes));
        }
        write_varint(out, body_len_i32);
        out.push(0);
        write_varlong(out, new_delta);
        write_varint(out, index);
        out.extend_from_slice(tail);
        pos = body_end;
    }
    Ok((base_timestamp.unwrap_or(NO_TIMESTAMP), max_timestamp))
}

/// Fills the 61-byte header at the start of `out` (the records follow it) and the CRC.
fn write_header(
    out: &mut [u8],
    source: &RecordBatchHeader,
    count: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    params: &RebuildParams,
) -> Result<(), RecordError> {
    let batch_length = i32::try_from(out.len() - LOG_OVERHEAD)
        .map_err(|_| too_large(params.target.codec, params.max_bytes))?;
    let mut attributes = i16::from(params.target.codec.id());
    if params.timestamp_type == TimestampType::LogAppendTime {
        attributes |= TIMESTAMP_TYPE_MASK;
    }
    if source.is_transactional() {
        attributes |= TRANSACTIONAL_FLAG_MASK;
    }
    let mut h = Vec::with_capacity(RECORD_BATCH_OVERHEAD);
    h.extend_from_slice(&0i64.to_be_bytes());
    h.extend_from_slice(&batch_length.to_be_bytes());
    h.extend_from_slice(&source.partition_leader_epoch.to_be_bytes());
    h.push(MAGIC_V2 as u8);
    h.extend_from_slice(&[0; 4]);
    h.extend_from_slice(&attributes.to_be_bytes());
    h.extend_from_slice(&(count - 1).max(0).to_be_bytes());
    h.extend_from_slice(&base_timestamp.to_be_bytes());
    h.extend_from_slice(&max_timestamp.to_be_bytes());
    h.extend_from_slice(&source.producer_id.to_be_bytes());
    h.extend_from_slice(&source.producer_epoch.to_be_bytes());
    h.extend_from_slice(&source.base_sequence.to_be_bytes());
    h.extend_from_slice(&count.to_be_bytes());
    out[..RECORD_BATCH_OVERHEAD].copy_from_slice(&h);
    let crc = compute_crc(out);
    out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// A writer into `out` that refuses to let what it appended pass `max` bytes.
struct CappedWriter<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    max: usize,
}

impl Write for CappedWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.out.len() - self.start + buf.len() > self.max {
            return Err(std::io::Error::other("capped"));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Appends `data` compressed with `c` to `out`; more than `max` compressed bytes is
/// [`RecordError::DecompressedTooLarge`], with nothing allocated past the cap.
pub(crate) fn compress_into(
    c: Compression,
    data: &[u8],
    out: &mut Vec<u8>,
    max: usize,
) -> Result<(), RecordError> {
    let codec = c.codec;
    let start = out.len();
    match codec {
        CompressionType::None => {
            if data.len() > max {
                return Err(too_large(codec, max));
            }
            out.extend_from_slice(data);
        }
        CompressionType::Gzip => {
            let level = if (0..=9).contains(&c.level) {
                flate2::Compression::new(c.level.unsigned_abs())
            } else {
                flate2::Compression::default()
            };
            let writer = CappedWriter { out, start, max };
            let mut enc = flate2::write::GzEncoder::new(writer, level);
            enc.write_all(data)
                .and_then(|()| enc.try_finish())
                .map_err(|_| too_large(codec, max))?;
        }
        CompressionType::Snappy => {
            // Bounded by snappy's own worst case (about 1/6 over the input).
            let z = compress(codec, data)?;
            if z.len() > max {
                return Err(too_large(codec, max));
            }
            out.extend_from_slice(&z);
        }
        CompressionType::Lz4 => lz4_frame_into(c.level, data, out, max)?,
        CompressionType::Zstd => zstd_into(c.level, data, out, max)?,
    }
    Ok(())
}

/// One lz4 frame as Kafka's `Lz4BlockOutputStream` writes it: 64 KiB blocks, each compressed
/// or, when that does not make it smaller, stored; an end mark.
fn lz4_frame_into(
    level: i32,
    data: &[u8],
    out: &mut Vec<u8>,
    max: usize,
) -> Result<(), RecordError> {
    let codec = CompressionType::Lz4;
    let start = out.len();
    let mode = if level == LZ4_FAST_LEVEL {
        lz4::block::CompressionMode::DEFAULT
    } else {
        lz4::block::CompressionMode::HIGHCOMPRESSION(level)
    };
    let bound =
        lz4::block::compress_bound(LZ4_BLOCK).map_err(|e| codec_err("compress", codec, e))?;
    let fits = |out: &Vec<u8>, more: usize| out.len() - start + more <= max;
    if !fits(out, LZ4_FRAME_HEADER.len()) {
        return Err(too_large(codec, max));
    }
    out.extend_from_slice(&LZ4_FRAME_HEADER);
    for block in data.chunks(LZ4_BLOCK) {
        let at = out.len();
        out.resize(at + 4 + bound, 0);
        let n = lz4::block::compress_to_buffer(block, Some(mode), false, &mut out[at + 4..])
            .map_err(|e| codec_err("compress", codec, e))?;
        if n < block.len() {
            out.truncate(at + 4 + n);
            out[at..at + 4].copy_from_slice(&(n as u32).to_le_bytes());
        } else {
            out.truncate(at + 4);
            out[at..at + 4]
                .copy_from_slice(&(block.len() as u32 | LZ4_UNCOMPRESSED_FLAG).to_le_bytes());
            out.extend_from_slice(block);
        }
        if !fits(out, 0) {
            out.truncate(start);
            return Err(too_large(codec, max));
        }
    }
    if !fits(out, 4) {
        return Err(too_large(codec, max));
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    Ok(())
}

/// One zstd frame from this thread's context at `level`.
fn zstd_into(level: i32, data: &[u8], out: &mut Vec<u8>, max: usize) -> Result<(), RecordError> {
    let codec = CompressionType::Zstd;
    let at = out.len();
    let room = zstd::zstd_safe::compress_bound(data.len()).min(max);
    out.resize(at + room, 0);
    let written = ZSTD.with(|cell| {
        let mut cell = cell.borrow_mut();
        let stale = !matches!(&*cell, Some((l, _)) if *l == level);
        if stale {
            let compressor =
                zstd::bulk::Compressor::new(level).map_err(|e| codec_err("compress", codec, e))?;
            *cell = Some((level, compressor));
        }
        match cell.as_mut() {
            Some((_, compressor)) => compressor
                .compress_to_buffer(data, &mut out[at..])
                .map_err(|_| too_large(codec, max)),
            None => Err(codec_err("compress", codec, "no context")),
        }
    });
    match written {
        Ok(n) => {
            out.truncate(at + n);
            Ok(())
        }
        Err(e) => {
            out.truncate(at);
            Err(e)
        }
    }
}

#[cfg(test)]
#[path = "rebuild_tests.rs"]
mod tests;
