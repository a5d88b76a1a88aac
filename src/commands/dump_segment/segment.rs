//! Reading a `.log` file the way Kafka's `DumpLogSegments` sees it: `FileLogInputStream`'s rules
//! for where iteration ends, the batch fields `FileChannelRecordBatch` exposes for magic 0, 1 and
//! 2, and `batch.iterator()`'s record semantics (lazy for uncompressed v2 batches, all-or-nothing
//! for compressed ones, absolute offsets and wrapper timestamps for legacy compressed wrappers).
//!
//! Batches are streamed through one reusable buffer; nothing here loads a whole file. Every
//! length read from the file is checked against the bytes that remain before it is used.

use std::io::{self, Read, Seek, SeekFrom};

use super::records::{LegacyRecord, legacy_compression, legacy_crc_valid, legacy_timestamp_type};
pub(crate) use super::records::{RecordView, for_each_record};
use crate::protocol::record::batch::{RecordBatchHeader, TimestampType, is_crc_valid};
use crate::protocol::record::big_endian::{i32_at, i64_at, u32_at};
use crate::protocol::record::compression::CompressionType;

pub(crate) use crate::protocol::record::batch::{LOG_OVERHEAD, RECORD_BATCH_OVERHEAD};
/// `Records.HEADER_SIZE_UP_TO_MAGIC`: offset, size, partition leader epoch / crc, magic.
const HEADER_SIZE_UP_TO_MAGIC: u64 = 17;
/// `LegacyRecord.RECORD_OVERHEAD_V0`, the smallest size field Kafka accepts, as the size field's
/// type.
pub(crate) const RECORD_OVERHEAD_V0: i32 =
    crate::protocol::record::legacy::RECORD_OVERHEAD_V0 as i32;
/// Decompressed batches larger than this are reported as corrupt rather than allocated (Java
/// cannot hold more in one buffer either).
pub(super) const MAX_DECOMPRESSED: usize = i32::MAX as usize;

/// Why the batches or records of a file could not be read further. Kafka's tool stops with an
/// exception in each of these cases; kcli reports the message and goes on with the next file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SegmentError {
    /// Reading the file failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The bytes are not a valid batch or record (Kafka's Corrupt/InvalidRecordException).
    #[error("{0}")]
    Corrupt(String),
}

/// One log entry (a v2 batch, or a v0/v1 message possibly wrapping compressed messages) as
/// `FileLogInputStream.nextBatch` yields it. `bytes` is the whole entry including its 12-byte
/// log overhead, so `bytes.len() == size field + 12`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Batch<'a> {
    /// Byte position of the entry in the file.
    pub position: u64,
    /// The whole entry.
    pub bytes: &'a [u8],
    /// The magic byte (offset 16).
    pub magic: i8,
    /// For a v2 entry shorter than the 61-byte header: the file's bytes after it, up to 61 in
    /// all. Kafka reads the header from the file at the entry's position whatever the entry's
    /// size, so a shrunken size field prints a header made partly of the next entry.
    pub header_ext: &'a [u8],
}

/// Iterates the entries of `[start, end)` of a file with Kafka's rules: iteration ends quietly
/// when 17 or fewer bytes remain or when an entry extends past `end`; a size field below 14 is an
/// error.
#[derive(Debug)]
pub(crate) struct BatchReader<R> {
    reader: R,
    position: u64,
    end: u64,
    buf: Vec<u8>,
    ext: Vec<u8>,
}

impl<R: Read + Seek> BatchReader<R> {
    /// `reader` must be positioned at `start`.
    pub(crate) fn new(reader: R, start: u64, end: u64) -> Self {
        BatchReader {
            reader,
            position: start,
            end,
            buf: Vec::new(),
            ext: Vec::new(),
        }
    }

    /// The next entry, `None` at the end of the valid data.
    pub(crate) fn next_batch(&mut self) -> Result<Option<Batch<'_>>, SegmentError> {
        if self.position + HEADER_SIZE_UP_TO_MAGIC >= self.end {
            return Ok(None);
        }
        self.buf.resize(HEADER_SIZE_UP_TO_MAGIC as usize, 0);
        self.reader.read_exact(&mut self.buf)?;
        let size = i32_at(&self.buf, 8);
        if size < RECORD_OVERHEAD_V0 {
            return Err(SegmentError::Corrupt(format!(
                "Found record size {size} smaller than minimum record overhead ({RECORD_OVERHEAD_V0})"
            )));
        }
        // `size` is positive here, and the check is against the bytes that remain, so the
        // allocation below is bounded by the file.
        let entry_len = LOG_OVERHEAD as u64 + size as u64;
        if self.position + entry_len > self.end {
            return Ok(None);
        }
        let entry_len = entry_len as usize;
        self.buf.resize(entry_len, 0);
        self.reader
            .read_exact(&mut self.buf[HEADER_SIZE_UP_TO_MAGIC as usize..])?;
        let position = self.position;
        self.position += entry_len as u64;
        let magic = self.buf[16] as i8;
        self.ext.clear();
        if magic >= 2 && entry_len < RECORD_BATCH_OVERHEAD {
            // Peek (then step back over) what follows, as far as the file goes.
            let want = (RECORD_BATCH_OVERHEAD - entry_len) as u64;
            (&mut self.reader).take(want).read_to_end(&mut self.ext)?;
            self.reader
                .seek(SeekFrom::Current(-(self.ext.len() as i64)))?;
        }
        Ok(Some(Batch {
            position,
            bytes: &self.buf,
            magic,
            header_ext: &self.ext,
        }))
    }
}

impl Batch<'_> {
    /// `FileChannelRecordBatch.lastOffset` alone, as index verification reads it: the offset
    /// field for magic 0/1 (any magic below 2, with no other check), base offset + last offset
    /// delta from the 61-byte header otherwise.
    pub(crate) fn last_offset(&self) -> Result<i64, SegmentError> {
        if self.magic < 2 {
            return Ok(i64_at(self.bytes, 0));
        }
        if self.bytes.len() + self.header_ext.len() < RECORD_BATCH_OVERHEAD {
            return Err(SegmentError::Corrupt(format!(
                "the file ends inside the 61-byte v2 header of the batch at position {}",
                self.position
            )));
        }
        let mut delta = [0u8; 4];
        for (i, b) in delta.iter_mut().enumerate() {
            let at = 23 + i;
            *b = match self.bytes.get(at) {
                Some(b) => *b,
                None => self.header_ext[at - self.bytes.len()],
            };
        }
        Ok(i64_at(self.bytes, 0).wrapping_add(i64::from(i32::from_be_bytes(delta))))
    }
}

/// The batch-level fields `DumpLogSegments.printBatchLevel` prints, for any magic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BatchInfo {
    pub position: u64,
    /// Entry size including the log overhead.
    pub size: usize,
    pub magic: i8,
    /// v2: the base offset; legacy: the entry's offset field (a wrapper's last inner offset).
    pub base_offset: i64,
    pub last_offset: i64,
    /// v2 only (Kafka's `countOrNull`).
    pub count: Option<i32>,
    pub base_sequence: i32,
    pub last_sequence: i32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub partition_leader_epoch: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub delete_horizon_ms: Option<i64>,
    pub timestamp_type: TimestampType,
    pub max_timestamp: i64,
    /// The codec; `None` (with `unknown_compression` set) when the id is not one Kafka knows.
    pub compression: CompressionType,
    /// An unknown compression id (5..=7): Kafka's tool dies on it when it prints the codec.
    pub unknown_compression: Option<u8>,
    /// The stored checksum (CRC-32C for v2, CRC-32 for v0/v1).
    pub crc: u32,
    pub is_valid: bool,
}

impl BatchInfo {
    /// Reads the batch-level fields. Fails where Kafka's tool throws: an unknown magic or
    /// compression id, or a v2 entry shorter than its 61-byte header.
    pub(crate) fn parse(batch: &Batch<'_>) -> Result<Self, SegmentError> {
        let bytes = batch.bytes;
        match batch.magic {
            // FileLogInputStream treats every magic above 1 as a v2 batch, so a flipped magic
            // byte (not covered by the CRC) still prints as one.
            m if m >= 2 => {
                let mut header = [0u8; RECORD_BATCH_OVERHEAD];
                let short = bytes.len() < RECORD_BATCH_OVERHEAD;
                if short {
                    if bytes.len() + batch.header_ext.len() < RECORD_BATCH_OVERHEAD {
                        return Err(corrupt(
                            batch,
                            "the file ends inside the 61-byte v2 header of a batch",
                        ));
                    }
                    header[..bytes.len()].copy_from_slice(bytes);
                    header[bytes.len()..]
                        .copy_from_slice(&batch.header_ext[..RECORD_BATCH_OVERHEAD - bytes.len()]);
                } else {
                    header.copy_from_slice(&bytes[..RECORD_BATCH_OVERHEAD]);
                }
                header[16] = 2;
                if short {
                    // The size comes from the entry; give the parser a length it accepts.
                    header[8..12].copy_from_slice(&49i32.to_be_bytes());
                }
                let h = RecordBatchHeader::parse(&header)
                    .map_err(|e| corrupt(batch, &e.to_string()))?;
                let (compression, unknown_compression) = match h.compression() {
                    Ok(c) => (c, None),
                    Err(_) => (CompressionType::None, Some((h.attributes & 0x07) as u8)),
                };
                Ok(BatchInfo {
                    position: batch.position,
                    size: bytes.len(),
                    magic: m,
                    base_offset: h.base_offset,
                    last_offset: h.last_offset(),
                    count: Some(h.records_count),
                    base_sequence: h.base_sequence,
                    last_sequence: h.last_sequence(),
                    producer_id: h.producer_id,
                    producer_epoch: h.producer_epoch,
                    partition_leader_epoch: h.partition_leader_epoch,
                    is_transactional: h.is_transactional(),
                    is_control: h.is_control(),
                    delete_horizon_ms: h.has_delete_horizon().then_some(h.base_timestamp),
                    timestamp_type: h.timestamp_type(),
                    max_timestamp: h.max_timestamp,
                    compression,
                    unknown_compression,
                    crc: h.crc,
                    is_valid: is_crc_valid(bytes),
                })
            }
            0 | 1 => {
                let rec = &bytes[LOG_OVERHEAD..];
                let attributes = rec[5] as i8;
                let (compression, unknown_compression) = match legacy_compression(attributes) {
                    Ok(c) => (c, None),
                    Err(_) => (CompressionType::None, Some((attributes & 0x07) as u8)),
                };
                let (timestamp_type, max_timestamp) = if batch.magic == 0 {
                    (TimestampType::NoTimestampType, -1)
                } else {
                    (legacy_timestamp_type(attributes), i64_at(rec, 6))
                };
                Ok(BatchInfo {
                    position: batch.position,
                    size: bytes.len(),
                    magic: batch.magic,
                    base_offset: i64_at(bytes, 0),
                    last_offset: i64_at(bytes, 0),
                    count: None,
                    base_sequence: -1,
                    last_sequence: -1,
                    producer_id: -1,
                    producer_epoch: -1,
                    partition_leader_epoch: -1,
                    is_transactional: false,
                    is_control: false,
                    delete_horizon_ms: None,
                    timestamp_type,
                    max_timestamp,
                    compression,
                    unknown_compression,
                    crc: u32_at(rec, 0),
                    is_valid: legacy_crc_valid(rec),
                })
            }
            m => Err(corrupt(batch, &format!("unknown magic {m}"))),
        }
    }
}

fn corrupt(batch: &Batch<'_>, reason: &str) -> SegmentError {
    SegmentError::Corrupt(format!("{reason} (batch at position {})", batch.position))
}

/// The size of a compressed batch's records once decompressed (`None` when uncompressed): the
/// v2 records section, or a legacy wrapper's value.
pub(crate) fn decompressed_size(
    batch: &Batch<'_>,
    info: &BatchInfo,
) -> Result<Option<usize>, SegmentError> {
    if let Some(id) = info.unknown_compression {
        return Err(SegmentError::Corrupt(format!(
            "Unknown compression type id: {id}"
        )));
    }
    if info.compression == CompressionType::None {
        return Ok(None);
    }
    let compressed = if batch.magic >= 2 {
        batch.bytes.get(RECORD_BATCH_OVERHEAD..).unwrap_or_default()
    } else {
        let wrapper = LegacyRecord {
            rec: &batch.bytes[LOG_OVERHEAD..],
        };
        match wrapper.key_value()?.3 {
            Some(v) => v,
            None => return Ok(Some(0)),
        }
    };
    let data = super::records::decompress_like_java(info.compression, compressed, MAX_DECOMPRESSED)
        .map_err(|e| SegmentError::Corrupt(format!("Failed to decompress record stream: {e}")))?;
    Ok(Some(data.len()))
}

/// The size of the compressed bytes `decompressed_size` decompresses.
pub(crate) fn compressed_size(batch: &Batch<'_>) -> usize {
    if batch.magic >= 2 {
        batch.bytes.len().saturating_sub(RECORD_BATCH_OVERHEAD)
    } else {
        batch.bytes.len().saturating_sub(LOG_OVERHEAD + 26)
    }
}

/// The earliest timestamp a batch header tells without reading records: the v2 base timestamp
/// (unless it holds a delete horizon or the batch uses LogAppendTime), else the max timestamp.
pub(crate) fn first_timestamp(batch: &Batch<'_>, info: &BatchInfo) -> i64 {
    if batch.magic >= 2
        && info.delete_horizon_ms.is_none()
        && info.timestamp_type == TimestampType::CreateTime
    {
        i64_at(batch.bytes, 27)
    } else {
        info.max_timestamp
    }
}
