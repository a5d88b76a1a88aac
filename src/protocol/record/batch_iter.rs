//! Shallow iteration over a buffer of record batches of any magic.
//!
//! Rules (Kafka's `FileLogInputStream`): fewer than 12 bytes left, or an entry extending past
//! the end of the buffer, ends the iteration quietly (a torn write at the end of a log); an entry
//! size below 14 (`RECORD_OVERHEAD_V0`) or above the maximum, or a magic other than 0, 1 or 2, is
//! an error, after which the iteration stops. [`BatchIter::position`] then says where the valid
//! data ends.

use super::batch::{
    LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V0, MAGIC_V1, MAGIC_V2, NO_TIMESTAMP, RecordBatchHeader,
    is_crc_valid,
};
use super::big_endian::read_i64;
use super::error::RecordError;
use super::legacy::{RECORD_OVERHEAD_V0, RECORD_OVERHEAD_V1};

/// One entry of a log buffer: a v2 batch or a legacy message (possibly a compressed wrapper).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchRef<'a> {
    /// Byte position of the entry in the iterated buffer.
    pub position: usize,
    /// The whole entry, 12-byte log overhead included.
    pub bytes: &'a [u8],
    pub magic: i8,
}

impl<'a> BatchRef<'a> {
    /// The offset field of the entry: a v2 batch's base offset; for v0/v1 the message offset
    /// (for a compressed wrapper that is the last inner offset, the first needs decompression).
    pub fn base_offset(&self) -> i64 {
        read_i64(self.bytes, 0).unwrap_or(-1)
    }

    /// v2: base offset + last offset delta; v0/v1: the entry's offset field.
    pub fn last_offset(&self) -> i64 {
        match self.header() {
            Some(h) => h.last_offset(),
            None => self.base_offset(),
        }
    }

    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The parsed header of a magic-2 batch at least 61 bytes long.
    pub fn header(&self) -> Option<RecordBatchHeader> {
        if self.magic != MAGIC_V2 {
            return None;
        }
        RecordBatchHeader::parse(self.bytes).ok()
    }

    /// v2: the header's max timestamp; v1: the message timestamp; v0: `NO_TIMESTAMP`.
    pub fn max_timestamp(&self) -> i64 {
        match self.magic {
            MAGIC_V2 => self.header().map_or(NO_TIMESTAMP, |h| h.max_timestamp),
            MAGIC_V1 => read_i64(self.bytes, MAGIC_OFFSET + 2).unwrap_or(NO_TIMESTAMP),
            _ => NO_TIMESTAMP,
        }
    }

    /// CRC-32C over bytes 21.. for v2; CRC-32 over magic..end for v0/v1. An entry too small for
    /// its magic's overhead is invalid.
    pub fn is_valid(&self) -> bool {
        match self.magic {
            MAGIC_V2 => is_crc_valid(self.bytes),
            MAGIC_V0 | MAGIC_V1 => {
                let overhead = if self.magic == MAGIC_V0 {
                    RECORD_OVERHEAD_V0
                } else {
                    RECORD_OVERHEAD_V1
                };
                if self.bytes.len() < LOG_OVERHEAD + overhead {
                    return false;
                }
                let stored = u32::from_be_bytes([
                    self.bytes[12],
                    self.bytes[13],
                    self.bytes[14],
                    self.bytes[15],
                ]);
                crc32fast::hash(&self.bytes[MAGIC_OFFSET..]) == stored
            }
            _ => false,
        }
    }
}

/// Iterator over the entries of a buffer; see the module docs for when it stops.
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    buf: &'a [u8],
    pos: usize,
    max: usize,
    done: bool,
}

impl<'a> BatchIter<'a> {
    /// Entries up to `i32::MAX` bytes.
    pub fn new(buf: &'a [u8]) -> Self {
        Self::with_max_size(buf, i32::MAX as usize)
    }

    /// Entries whose size field is at most `max`.
    pub fn with_max_size(buf: &'a [u8], max: usize) -> Self {
        BatchIter {
            buf,
            pos: 0,
            max,
            done: false,
        }
    }

    /// Bytes consumed by whole entries so far.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<BatchRef<'a>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.buf[self.pos..];
        if rest.len() < LOG_OVERHEAD {
            self.done = true;
            return None;
        }
        let size = i32::from_be_bytes([rest[8], rest[9], rest[10], rest[11]]);
        if size < RECORD_OVERHEAD_V0 as i32 {
            self.done = true;
            return Some(Err(RecordError::corrupt(
                self.pos + 8,
                format!(
                    "Record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                ),
            )));
        }
        let size = size as usize;
        if size > self.max {
            self.done = true;
            return Some(Err(RecordError::corrupt(
                self.pos + 8,
                format!(
                    "Record size {size} exceeds the largest allowable message size ({}).",
                    self.max
                ),
            )));
        }
        let total = LOG_OVERHEAD + size;
        if rest.len() < total {
            self.done = true;
            return None;
        }
        let magic = rest[MAGIC_OFFSET] as i8;
        if !(MAGIC_V0..=MAGIC_V2).contains(&magic) {
            self.done = true;
            return Some(Err(RecordError::corrupt(
                self.pos + MAGIC_OFFSET,
                format!("Invalid magic found in record: {magic}"),
            )));
        }
        let entry = BatchRef {
            position: self.pos,
            bytes: &rest[..total],
            magic,
        };
        self.pos += total;
        Some(Ok(entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use crate::protocol::record::compression::CompressionType;
    use proptest::prelude::*;

    fn log(n: usize) -> (Vec<u8>, Vec<usize>) {
        let mut buf = Vec::new();
        let mut ends = Vec::new();
        for i in 0..n {
            let mut b = RecordBatchBuilder::new(CompressionType::None);
            b.base_offset = (i * 3) as i64;
            for j in 0..3 {
                b.records.push(SimpleRecord::new(
                    j,
                    None,
                    Some(vec![j as u8; i + j as usize]),
                ));
            }
            buf.extend(b.build().unwrap());
            ends.push(buf.len());
        }
        (buf, ends)
    }

    #[test]
    fn iterates_whole_batches() {
        let (buf, ends) = log(4);
        let mut it = BatchIter::new(&buf);
        let got: Vec<_> = it.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(it.position(), buf.len());
        assert_eq!(got[1].position, ends[0]);
        assert_eq!((got[1].base_offset(), got[1].last_offset()), (3, 5));
        assert!(got.iter().all(|b| b.is_valid() && b.header().is_some()));
        assert_eq!(got[0].max_timestamp(), 2);
    }

    #[test]
    fn truncation_at_every_byte_stops_at_the_last_whole_batch() {
        let (buf, ends) = log(3);
        for cut in 0..=buf.len() {
            let mut it = BatchIter::new(&buf[..cut]);
            let n = it.by_ref().inspect(|r| assert!(r.is_ok())).count();
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(n, whole, "cut {cut}");
            assert_eq!(it.position(), if whole == 0 { 0 } else { ends[whole - 1] });
        }
    }

    #[test]
    fn bad_sizes_and_magic_are_errors() {
        let (mut buf, ends) = log(2);
        let mut small = buf.clone();
        small[ends[0] + 8..ends[0] + 12].copy_from_slice(&13i32.to_be_bytes());
        let mut it = BatchIter::new(&small);
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
        assert_eq!(it.position(), ends[0]);
        assert!(BatchIter::with_max_size(&buf, 20).next().unwrap().is_err());
        buf[MAGIC_OFFSET] = 3;
        assert!(BatchIter::new(&buf).next().unwrap().is_err());
    }

    proptest! {
        #[test]
        fn any_truncation_ends_at_the_last_whole_batch(
            sizes in proptest::collection::vec((0usize..4, 0usize..300, 0u8..5), 1..5),
        ) {
            let mut buf = Vec::new();
            let mut ends = Vec::new();
            for (i, &(n, len, codec)) in sizes.iter().enumerate() {
                let mut b = RecordBatchBuilder::new(CompressionType::from_id(codec).unwrap());
                b.base_offset = i as i64 * 10;
                for j in 0..n {
                    b.records.push(SimpleRecord::new(j as i64, None, Some(vec![j as u8; len])));
                }
                buf.extend(b.build().unwrap());
                ends.push(buf.len());
            }
            for cut in 0..=buf.len() {
                let mut it = BatchIter::new(&buf[..cut]);
                let got: Vec<_> = it.by_ref().collect::<Result<_, _>>().unwrap();
                let whole = ends.iter().filter(|&&e| e <= cut).count();
                prop_assert_eq!(got.len(), whole);
                prop_assert_eq!(it.position(), if whole == 0 { 0 } else { ends[whole - 1] });
                prop_assert!(got.iter().all(BatchRef::is_valid));
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut it = BatchIter::new(&bytes);
            for b in it.by_ref().flatten() {
                let _ = (b.is_valid(), b.last_offset(), b.max_timestamp(), b.header());
            }
            prop_assert!(it.position() <= bytes.len());
        }
    }
}
