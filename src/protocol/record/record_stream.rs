//! Walking the records of a compressed v2 batch while the codec inflates it, through a small
//! window instead of the whole records section: Kafka's `DefaultRecordBatch.skipKeyValueIterator`
//! (`DefaultRecord.readPartiallyFrom`), which its `LogValidator` uses so that a small batch that
//! inflates hugely (a decompression bomb) costs time but not memory.
//!
//! Each record yields a [`RecordSummary`] (size, attributes, deltas, key and value lengths,
//! header count); keys, values and headers are skipped as they stream past. A record of up to
//! [`WHOLE_RECORD_MAX`] bytes is read whole from the window with [`read_record`]; a larger one
//! field by field, with the same checks. The window holds at most [`WINDOW`] bytes for gzip and
//! zstd, and the unread tail of a record plus one block for lz4 (64 KiB for the frames Kafka
//! and librdkafka write, 4 MiB at most), so a batch costs a few hundred KiB however large its
//! records or its inflated size; zstd's decoder adds the frame's window on top, as it does for
//! whole-batch inflation.
//!
//! The outcome is exactly the in-memory walk's over the inflated bytes ([`for_each_record`](super::records::for_each_record)
//! after [`super::compression::decompress`]): the same records, the same errors with the same
//! positions. Since that walk inflates everything before reading a record, a codec error or the
//! `max_decompressed` cap anywhere in the stream wins over a record error, so on a record error
//! the rest of the stream is inflated (into the same window) before answering; that costs the
//! time a valid batch of that size costs, never the memory.
//!
//! Snappy and uncompressed batches are walked in memory: raw snappy needs the whole block, and
//! its inflation is bounded (about 21 times the input).

use std::io::Read;
use std::ops::ControlFlow;

use super::batch::RecordBatchHeader;
use super::compression::{CompressionType, codec_err, decompress, too_large, zstd_decoder};
use super::error::RecordError;
use super::lz4_frame::{Lz4Blocks, Lz4Step};
use super::records::{Record, RecordIter, batch_body, overrun_at, read_record, shift, size_error};
use super::varint::{peek_varint, read_varint, read_varlong};

/// The most inflated bytes the window holds for a reading codec (gzip, zstd, lz4 frames the
/// direct decoder does not handle).
pub(crate) const WINDOW: usize = 64 << 10;
/// Records up to this size, length varint included, are read whole from the window.
pub(crate) const WHOLE_RECORD_MAX: usize = 32 << 10;
/// The window's first size for a reading codec; it doubles up to [`WINDOW`] as needed, so a
/// small batch does not zero 64 KiB.
const FIRST_WINDOW: usize = 4 << 10;

/// What validating a record needs from it: everything but the bytes of its key, value and
/// headers. Null key or value: length -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordSummary {
    /// Bytes of the record including its length varint.
    pub size_in_bytes: usize,
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key_len: i32,
    pub value_len: i32,
    pub header_count: usize,
}

impl RecordSummary {
    pub(crate) fn has_key(&self) -> bool {
        self.key_len >= 0
    }

    /// Absolute timestamp given the batch's base timestamp.
    pub(crate) fn timestamp(&self, base_timestamp: i64) -> i64 {
        base_timestamp.wrapping_add(self.timestamp_delta)
    }

    /// Absolute offset given the batch's base offset.
    pub(crate) fn offset(&self, base_offset: i64) -> i64 {
        base_offset.wrapping_add(i64::from(self.offset_delta))
    }
}

/// A field's length as the summary stores it: the varint it came from fits an `i32`.
#[inline(always)]
fn len_or_null(field: Option<&[u8]>) -> i32 {
    field.map_or(-1, |f| i32::try_from(f.len()).unwrap_or(i32::MAX))
}

impl From<&Record<'_>> for RecordSummary {
    #[inline(always)]
    fn from(r: &Record<'_>) -> Self {
        RecordSummary {
            size_in_bytes: r.size_in_bytes,
            attributes: r.attributes,
            timestamp_delta: r.timestamp_delta,
            offset_delta: r.offset_delta,
            key_len: len_or_null(r.key),
            value_len: len_or_null(r.value),
            header_count: r.header_count(),
        }
    }
}

/// Why a batch's records could not be walked, split as the validator answers: a batch that does
/// not inflate is `CORRUPT_MESSAGE`, a malformed record `INVALID_RECORD`.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// The records section is missing, its codec is unknown, it does not decode, or it
    /// inflates past the cap: what `batch_records` reports.
    #[error(transparent)]
    Batch(RecordError),
    /// The inflated bytes are not `count` well-formed records: what `for_each_record` reports.
    #[error(transparent)]
    Records(RecordError),
}

impl From<WalkError> for RecordError {
    fn from(e: WalkError) -> Self {
        match e {
            WalkError::Batch(e) | WalkError::Records(e) => e,
        }
    }
}

/// Calls `f(index, summary)` for each record of a v2 batch until it breaks, with the checks of
/// [`for_each_record`](super::records::for_each_record) over [`super::records::batch_records`]'s bytes; gzip, lz4 and zstd are
/// streamed (see the module doc). `batch` is the whole batch (at least
/// `header.size_in_bytes()` bytes; more is ignored).
pub(crate) fn for_each_batch_record(
    batch: &[u8],
    header: &RecordBatchHeader,
    max_decompressed: usize,
    f: impl FnMut(i32, &RecordSummary) -> ControlFlow<()>,
) -> Result<(), WalkError> {
    let body = batch_body(batch, header).map_err(WalkError::Batch)?;
    let codec = header.compression().map_err(WalkError::Batch)?;
    for_each_compressed_record(codec, body, header.records_count, max_decompressed, f)
}

/// [`for_each_batch_record`] over a records section `data` compressed with `codec`.
pub(crate) fn for_each_compressed_record(
    codec: CompressionType,
    data: &[u8],
    count: i32,
    max_decompressed: usize,
    f: impl FnMut(i32, &RecordSummary) -> ControlFlow<()>,
) -> Result<(), WalkError> {
    match codec {
        CompressionType::None => walk_in_memory(data, count, f),
        CompressionType::Snappy => {
            let records = decompress(codec, data, max_decompressed).map_err(WalkError::Batch)?;
            walk_in_memory(&records, count, f)
        }
        CompressionType::Gzip | CompressionType::Lz4 | CompressionType::Zstd => {
            let mut stream = Inflating::new(codec, data, max_decompressed)?;
            match stream.walk(count, f) {
                Ok(()) => Ok(()),
                Err(fail) => Err(stream.resolve(fail)),
            }
        }
    }
}

fn walk_in_memory(
    records: &[u8],
    count: i32,
    mut f: impl FnMut(i32, &RecordSummary) -> ControlFlow<()>,
) -> Result<(), WalkError> {
    // RecordIter rather than for_each_record: it can stop early.
    for (index, record) in (0i32..).zip(RecordIter::new(records, count)) {
        let record = record.map_err(WalkError::Records)?;
        if f(index, &RecordSummary::from(&record)).is_break() {
            break;
        }
    }
    Ok(())
}

/// A streaming decoder over the compressed records section.
enum Decoder<'a> {
    Gzip(Box<flate2::bufread::MultiGzDecoder<&'a [u8]>>),
    Zstd(Box<zstd::stream::read::Decoder<'static, &'a [u8]>>),
    /// The crate's direct lz4 decoder, one block at a time straight into the window.
    Lz4(Lz4Blocks<'a>),
    /// lz4 frames the direct decoder does not handle (linked blocks, dictionaries), from the
    /// first such frame on.
    Lz4Frame(Box<lz4_flex::frame::FrameDecoder<&'a [u8]>>),
}

/// How a streamed walk failed, before [`Inflating::resolve`] turns it into the in-memory walk's
/// answer.
#[derive(Debug)]
enum Fail {
    /// The codec failed or the cap was passed.
    Batch(RecordError),
    /// A malformed record, or a wrong record count.
    Record(RecordError),
    /// The record at `start` claims `size` bytes from `body_start`, and the stream ended
    /// before them (or `size` is negative); the message needs the stream's length.
    Size {
        start: usize,
        size: i32,
        body_start: usize,
    },
}

/// The window over the inflated stream: `buf[start..end]` are decoded bytes not yet read, and
/// `buf[0]` is byte `base` of the stream, so `base + end` bytes have been produced so far.
struct Inflating<'a> {
    codec: CompressionType,
    decoder: Decoder<'a>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    base: usize,
    max: usize,
    eof: bool,
}

impl<'a> Inflating<'a> {
    fn new(codec: CompressionType, data: &'a [u8], max: usize) -> Result<Self, WalkError> {
        let decoder = match codec {
            CompressionType::Gzip => {
                Decoder::Gzip(Box::new(flate2::bufread::MultiGzDecoder::new(data)))
            }
            CompressionType::Zstd => Decoder::Zstd(Box::new(
                zstd_decoder(data)
                    .map_err(|e| WalkError::Batch(codec_err("decompress", codec, e)))?,
            )),
            CompressionType::Lz4 => Decoder::Lz4(Lz4Blocks::new(data)),
            CompressionType::None | CompressionType::Snappy => {
                return Err(WalkError::Batch(codec_err(
                    "stream",
                    codec,
                    "only gzip, lz4 and zstd are streamed",
                )));
            }
        };
        Ok(Inflating {
            codec,
            decoder,
            buf: Vec::new(),
            start: 0,
            end: 0,
            base: 0,
            max,
            eof: false,
        })
    }

    /// Stream position of the next unread byte.
    #[inline(always)]
    fn pos(&self) -> usize {
        self.base + self.start
    }

    #[inline(always)]
    fn available(&self) -> usize {
        self.end - self.start
    }

    /// Makes at least `want` (at most [`WHOLE_RECORD_MAX`] + 5) bytes readable, unless the
    /// stream ends first.
    #[inline(always)]
    fn fill(&mut self, want: usize) -> Result<(), Fail> {
        while self.available() < want && !self.eof {
            self.refill().map_err(Fail::Batch)?;
        }
        Ok(())
    }

    /// Moves the unread bytes to the front of the window and decodes more after them.
    #[inline(never)]
    fn refill(&mut self) -> Result<(), RecordError> {
        if self.start > 0 {
            if self.start < self.end {
                self.buf.copy_within(self.start..self.end, 0);
            }
            self.base += self.start;
            self.end -= self.start;
            self.start = 0;
        }
        let produced = self.base + self.end;
        let (n, ended) = match &mut self.decoder {
            Decoder::Lz4(blocks) => {
                let room = self.max.saturating_sub(produced);
                match blocks.next_block(&mut self.buf, self.end, room) {
                    // An lz4 block may decode to nothing; only the end of the frames ends it.
                    Lz4Step::Block(n) => (n, false),
                    Lz4Step::End => (0, true),
                    Lz4Step::Unsupported => {
                        let rest = blocks.rest();
                        self.decoder =
                            Decoder::Lz4Frame(Box::new(lz4_flex::frame::FrameDecoder::new(rest)));
                        (0, false)
                    }
                    Lz4Step::TooLarge => return Err(too_large(self.codec, self.max)),
                    Lz4Step::Corrupt(reason) => {
                        return Err(codec_err("decompress", self.codec, reason));
                    }
                }
            }
            Decoder::Gzip(r) => read_some(&mut **r, &mut self.buf, self.end, produced, self.codec)?,
            Decoder::Zstd(r) => read_some(&mut **r, &mut self.buf, self.end, produced, self.codec)?,
            Decoder::Lz4Frame(r) => {
                read_some(&mut **r, &mut self.buf, self.end, produced, self.codec)?
            }
        };
        self.eof = ended;
        self.end += n;
        if self.base + self.end > self.max {
            return Err(too_large(self.codec, self.max));
        }
        Ok(())
    }

    /// Inflates the rest of the stream, discarding it.
    fn drain(&mut self) -> Result<(), RecordError> {
        while !self.eof {
            self.start = self.end;
            self.refill()?;
        }
        Ok(())
    }

    /// Skips `n` bytes; `false` when the stream ends first.
    fn skip(&mut self, mut n: usize) -> Result<bool, Fail> {
        loop {
            let step = n.min(self.available());
            self.start += step;
            n -= step;
            if n == 0 {
                return Ok(true);
            }
            if self.eof {
                return Ok(false);
            }
            self.refill().map_err(Fail::Batch)?;
        }
    }

    /// The in-memory walk's answer for a failed streamed walk (see the module doc).
    #[cold]
    fn resolve(&mut self, fail: Fail) -> WalkError {
        if let Fail::Batch(e) = fail {
            return WalkError::Batch(e);
        }
        if let Err(e) = self.drain() {
            return WalkError::Batch(e);
        }
        let total = self.base + self.end;
        match fail {
            Fail::Batch(e) => WalkError::Batch(e),
            Fail::Record(e) => WalkError::Records(e),
            Fail::Size {
                start,
                size,
                body_start,
            } => WalkError::Records(size_error(start, size, total - body_start)),
        }
    }

    /// [`for_each_record`](super::records::for_each_record)'s loop over the stream.
    fn walk(
        &mut self,
        count: i32,
        mut f: impl FnMut(i32, &RecordSummary) -> ControlFlow<()>,
    ) -> Result<(), Fail> {
        if count < 0 {
            return Err(Fail::Record(RecordError::corrupt(
                0,
                format!("Found invalid record count {count} in magic v2 batch"),
            )));
        }
        let mut index = 0i32;
        while index < count {
            self.fill(1)?;
            if self.available() == 0 {
                return Err(Fail::Record(RecordError::corrupt(
                    self.pos(),
                    "Incorrect declared batch size, premature EOF reached",
                )));
            }
            // The records wholly in the window are read in place, as the in-memory walk reads
            // them: that is where almost every record is.
            let window = &self.buf[..self.end];
            let mut pos = self.start;
            while index < count {
                // A record cut by the window's end, or malformed, is left to `read_one` below,
                // which refills and reports exact errors; the look-ahead keeps the common case
                // (the window's end) from building an error message.
                let Some((size, body)) = peek_varint(window, pos) else {
                    break;
                };
                match usize::try_from(size) {
                    Ok(size) if size <= window.len() - body => {}
                    _ => break,
                }
                let mut next = pos;
                let Ok(record) = read_record(window, &mut next) else {
                    break;
                };
                pos = next;
                let at = index;
                index += 1;
                if f(at, &RecordSummary::from(&record)).is_break() {
                    return Ok(());
                }
            }
            self.start = pos;
            if index == count {
                break;
            }
            if self.available() > 0 {
                let record = self.read_one()?;
                let at = index;
                index += 1;
                if f(at, &record).is_break() {
                    return Ok(());
                }
            }
        }
        self.fill(1)?;
        if self.available() > 0 {
            return Err(Fail::Record(RecordError::corrupt(
                self.pos(),
                "Incorrect declared batch size, records still remaining in file",
            )));
        }
        Ok(())
    }

    /// Reads the record at the cursor: whole from the window when small, else field by field.
    #[inline(always)]
    fn read_one(&mut self) -> Result<RecordSummary, Fail> {
        let start = self.pos();
        // A varint takes at most 5 bytes: with those (or the rest of the stream) in the window,
        // reading it sees what the in-memory walk sees.
        self.fill(5)?;
        let mut p = 0usize;
        let size = read_varint(&self.buf[self.start..self.end], &mut p)
            .map_err(|e| Fail::Record(moved(e, start)))?;
        let size_err = Fail::Size {
            start,
            size,
            body_start: start + p,
        };
        let Ok(body_len) = usize::try_from(size) else {
            return Err(size_err);
        };
        let total = p + body_len;
        if total > WHOLE_RECORD_MAX {
            self.start += p;
            return self.read_large(start, size, body_len);
        }
        self.fill(total)?;
        if self.available() < total {
            return Err(size_err);
        }
        let window = &self.buf[self.start..self.start + total];
        let mut q = 0usize;
        let record = read_record(window, &mut q).map_err(|e| Fail::Record(moved(e, start)))?;
        let summary = RecordSummary::from(&record);
        self.start += total;
        Ok(summary)
    }

    /// A record too large to hold, its length varint consumed: its body is `body_len` bytes
    /// from the cursor.
    #[cold]
    #[inline(never)]
    fn read_large(
        &mut self,
        start: usize,
        size: i32,
        body_len: usize,
    ) -> Result<RecordSummary, Fail> {
        let body = Body {
            start: self.pos(),
            end: self.pos() + body_len,
            record_start: start,
            size,
        };
        match self.read_large_body(&body) {
            // The in-memory walk checks the record's size before its fields, so a field error
            // stands only if the stream holds the whole body.
            Err(Fail::Record(e)) => {
                let left = body.end - self.pos();
                if self.skip(left)? {
                    Err(Fail::Record(e))
                } else {
                    Err(body.size_error())
                }
            }
            other => other,
        }
    }

    fn read_large_body(&mut self, body: &Body) -> Result<RecordSummary, Fail> {
        self.fill(1)?;
        let Some(&attributes) = self.buf[self.start..self.end].first() else {
            return Err(body.size_error());
        };
        self.start += 1;
        let timestamp_delta = self.body_varint(body, true)?;
        let offset_delta = self.body_varint(body, false)? as i32;
        let key_len = self.body_bytes(body, "key")?;
        let value_len = self.body_bytes(body, "value")?;
        let count = self.body_varint(body, false)? as i32;
        if count < 0 {
            return Err(Fail::Record(RecordError::corrupt(
                self.pos(),
                format!("Found invalid number of record headers {count}"),
            )));
        }
        if count as usize > body.end - self.pos() {
            return Err(Fail::Record(RecordError::corrupt(
                self.pos(),
                format!(
                    "Found invalid number of record headers. {count} is larger than the remaining size of the buffer"
                ),
            )));
        }
        for _ in 0..count {
            let at = self.pos();
            let key_len = self.body_varint(body, false)? as i32;
            if key_len < 0 {
                return Err(Fail::Record(RecordError::corrupt(
                    at,
                    format!("Invalid negative header key size {key_len}"),
                )));
            }
            self.skip_field(body, "header key", key_len)?;
            self.body_bytes(body, "header value")?;
        }
        let read = self.pos() - body.start;
        if self.pos() != body.end {
            return Err(Fail::Record(RecordError::corrupt(
                body.record_start,
                format!(
                    "Invalid record size: expected to read {} bytes in record payload, but instead read {read}",
                    body.size
                ),
            )));
        }
        Ok(RecordSummary {
            size_in_bytes: body.end - body.record_start,
            attributes: attributes as i8,
            timestamp_delta,
            offset_delta,
            key_len,
            value_len,
            header_count: count as usize,
        })
    }

    /// A varint (or varlong) inside `body`, read from no more bytes than the body has left.
    fn body_varint(&mut self, body: &Body, long: bool) -> Result<i64, Fail> {
        let at = self.pos();
        let need = (body.end - at).min(if long { 10 } else { 5 });
        self.fill(need)?;
        if self.available() < need {
            return Err(body.size_error());
        }
        let bytes = &self.buf[self.start..self.start + need];
        let mut p = 0usize;
        let v = if long {
            read_varlong(bytes, &mut p)
        } else {
            read_varint(bytes, &mut p).map(i64::from)
        };
        let v = v.map_err(|e| Fail::Record(shift(e, at)))?;
        self.start += p;
        Ok(v)
    }

    /// A length-prefixed field inside `body`, skipped; its length, -1 when null.
    fn body_bytes(&mut self, body: &Body, what: &str) -> Result<i32, Fail> {
        let len = self.body_varint(body, false)? as i32;
        if len < 0 {
            return Ok(-1);
        }
        self.skip_field(body, what, len)?;
        Ok(len)
    }

    /// Skips the `len` bytes of a field whose length prefix was just read.
    fn skip_field(&mut self, body: &Body, what: &str, len: i32) -> Result<(), Fail> {
        let remain = body.end - self.pos();
        let len = len as usize;
        if len > remain {
            return Err(Fail::Record(overrun_at(self.pos(), what, len, remain)));
        }
        if self.skip(len)? {
            Ok(())
        } else {
            Err(body.size_error())
        }
    }
}

/// Where the body of a large record lies in the stream.
#[derive(Debug)]
struct Body {
    start: usize,
    end: usize,
    record_start: usize,
    size: i32,
}

impl Body {
    /// The stream ended inside this body.
    fn size_error(&self) -> Fail {
        Fail::Size {
            start: self.record_start,
            size: self.size,
            body_start: self.start,
        }
    }
}

/// Reads what `reader` gives into the window after `end`, growing the window (up to
/// [`WINDOW`]) when it is full or the stream has outgrown it (`produced` bytes so far), so that
/// a long stream is read in large chunks: the bytes read and whether the stream has ended.
fn read_some(
    reader: &mut impl Read,
    buf: &mut Vec<u8>,
    end: usize,
    produced: usize,
    codec: CompressionType,
) -> Result<(usize, bool), RecordError> {
    if end == buf.len() || (produced >= buf.len() && buf.len() < WINDOW) {
        // `end` is below WHOLE_RECORD_MAX + 5 here (the window was just compacted), so
        // doubling towards WINDOW always makes room.
        let grown = buf
            .len()
            .saturating_mul(2)
            .max(FIRST_WINDOW)
            .min(WINDOW.max(end + 1));
        buf.resize(grown, 0);
    }
    loop {
        match reader.read(&mut buf[end..]) {
            Ok(n) => return Ok((n, n == 0)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(codec_err("decompress", codec, e)),
        }
    }
}

/// Makes a position relative to the window absolute within the stream.
#[cold]
fn moved(e: RecordError, base: usize) -> RecordError {
    match e {
        RecordError::Corrupt { position, reason } => RecordError::Corrupt {
            position: position + base,
            reason,
        },
        other => other,
    }
}

#[cfg(test)]
#[path = "record_stream_tests.rs"]
mod tests;
