//! Legacy magic 0/1 message sets.
//!
//! Entry format (big-endian): `[offset i64][message_size i32][crc u32][magic i8][attributes i8]`
//! `[timestamp i64, v1 only][key_length i32 + key][value_length i32 + value]`; a negative length
//! is null. The CRC is CRC-32 (IEEE) over magic..end. Attribute bits 0-2 are the codec, bit 3 (v1)
//! the timestamp type. A compressed entry (wrapper) has a null key and holds the compressed inner
//! message set as its value; its offset is the last inner offset. Inner offsets are absolute in
//! v0 and relative (0-based) in v1.

use super::batch::{LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V0, MAGIC_V1, NO_TIMESTAMP, TimestampType};
use super::big_endian::{read_i32, read_i64};
use super::compression::{CompressionType, decompress};
use super::error::RecordError;

/// Kafka's `LegacyRecord.RECORD_OVERHEAD_V0`: crc, magic, attributes, key and value lengths.
pub(crate) const RECORD_OVERHEAD_V0: usize = 14;
/// Kafka's `LegacyRecord.RECORD_OVERHEAD_V1`: v0 plus the timestamp.
pub(crate) const RECORD_OVERHEAD_V1: usize = 22;

/// One legacy entry, borrowing key and value from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LegacyRecord<'a> {
    pub offset: i64,
    pub crc: u32,
    pub magic: i8,
    pub attributes: i8,
    /// `NO_TIMESTAMP` for v0.
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The bytes the CRC covers (magic..end).
    crc_input: &'a [u8],
}

/// A legacy record with owned bytes and an absolute offset, as returned by [`deep_records`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnedLegacyRecord {
    pub offset: i64,
    pub crc: u32,
    pub magic: i8,
    pub attributes: i8,
    pub timestamp: i64,
    pub timestamp_type: TimestampType,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    /// Whether the inner message's own CRC matched.
    pub crc_valid: bool,
}

impl<'a> LegacyRecord<'a> {
    /// Parses one whole entry (log overhead included). The size field must match the entry's
    /// length and the key and value must fill it exactly. The CRC is not checked here.
    pub(crate) fn parse(entry: &'a [u8]) -> Result<Self, RecordError> {
        let short = || RecordError::corrupt(entry.len(), "legacy message is truncated");
        let offset = read_i64(entry, 0).ok_or_else(short)?;
        let size = read_i32(entry, 8).ok_or_else(short)?;
        if size < 0 || LOG_OVERHEAD + size as usize != entry.len() {
            return Err(RecordError::corrupt(
                8,
                format!(
                    "legacy message size {size} does not match the {} bytes present",
                    entry.len().saturating_sub(LOG_OVERHEAD)
                ),
            ));
        }
        let magic = *entry.get(MAGIC_OFFSET).ok_or_else(short)? as i8;
        let overhead = match magic {
            MAGIC_V0 => RECORD_OVERHEAD_V0,
            MAGIC_V1 => RECORD_OVERHEAD_V1,
            other => return Err(RecordError::UnknownMagic(other)),
        };
        if (size as usize) < overhead {
            return Err(RecordError::corrupt(
                8,
                format!("Record size {size} is less than the minimum record overhead ({overhead})"),
            ));
        }
        let crc = read_i32(entry, 12).ok_or_else(short)? as u32;
        let attributes = entry[MAGIC_OFFSET + 1] as i8;
        let mut pos = MAGIC_OFFSET + 2;
        let timestamp = if magic == MAGIC_V1 {
            pos += 8;
            read_i64(entry, MAGIC_OFFSET + 2).ok_or_else(short)?
        } else {
            NO_TIMESTAMP
        };
        let mut field = |what: &str| -> Result<Option<&'a [u8]>, RecordError> {
            let len = read_i32(entry, pos).ok_or_else(short)?;
            pos += 4;
            if len < 0 {
                return Ok(None);
            }
            let s = entry.get(pos..pos + len as usize).ok_or_else(|| {
                RecordError::corrupt(
                    pos,
                    format!("legacy message {what} of {len} bytes overruns the message"),
                )
            })?;
            pos += len as usize;
            Ok(Some(s))
        };
        let key = field("key")?;
        let value = field("value")?;
        if pos != entry.len() {
            return Err(RecordError::corrupt(
                pos,
                "legacy message has bytes after its value",
            ));
        }
        Ok(LegacyRecord {
            offset,
            crc,
            magic,
            attributes,
            timestamp,
            key,
            value,
            crc_input: &entry[MAGIC_OFFSET..],
        })
    }

    /// Whether the stored CRC-32 matches magic..end.
    pub(crate) fn is_valid(&self) -> bool {
        crc32fast::hash(self.crc_input) == self.crc
    }

    pub(crate) fn compression(&self) -> Result<CompressionType, RecordError> {
        CompressionType::from_id((self.attributes & 0x07) as u8)
    }

    /// `NoTimestampType` for v0; bit 3 of the attributes for v1.
    pub(crate) fn timestamp_type(&self) -> TimestampType {
        if self.magic == MAGIC_V0 {
            TimestampType::NoTimestampType
        } else if self.attributes & 0x08 != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    fn to_owned_at(
        &self,
        offset: i64,
        timestamp: i64,
        ts_type: TimestampType,
    ) -> OwnedLegacyRecord {
        OwnedLegacyRecord {
            offset,
            crc: self.crc,
            magic: self.magic,
            attributes: self.attributes,
            timestamp,
            timestamp_type: ts_type,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            crc_valid: self.is_valid(),
        }
    }
}

/// Inner messages of a compressed wrapper with absolute offsets (v1 relative inner offsets
/// resolved as Kafka does: `wrapper_offset - last_inner_offset + inner_offset`). An uncompressed
/// entry yields itself. With a LogAppendTime v1 wrapper, inner timestamps are the wrapper's.
pub(crate) fn deep_records(
    entry: &[u8],
    max_decompressed: usize,
) -> Result<Vec<OwnedLegacyRecord>, RecordError> {
    let wrapper = LegacyRecord::parse(entry)?;
    let codec = wrapper.compression()?;
    if codec == CompressionType::None {
        return Ok(vec![wrapper.to_owned_at(
            wrapper.offset,
            wrapper.timestamp,
            wrapper.timestamp_type(),
        )]);
    }
    let data = wrapper.value.unwrap_or(&[]);
    let inner_bytes = decompress(codec, data, max_decompressed)?;
    let mut inner = Vec::new();
    let mut pos = 0usize;
    while pos < inner_bytes.len() {
        let size = read_i32(&inner_bytes, pos + 8).ok_or_else(|| {
            RecordError::corrupt(pos, "truncated inner message in compressed wrapper")
        })?;
        if size < 0 {
            return Err(RecordError::corrupt(pos + 8, "negative inner message size"));
        }
        let end = pos + LOG_OVERHEAD + size as usize;
        let bytes = inner_bytes.get(pos..end).ok_or_else(|| {
            RecordError::corrupt(pos, "inner message runs past the decompressed data")
        })?;
        let r = LegacyRecord::parse(bytes)?;
        if r.magic != wrapper.magic {
            return Err(RecordError::corrupt(
                pos,
                format!(
                    "inner message magic {} does not match the wrapper's {}",
                    r.magic, wrapper.magic
                ),
            ));
        }
        if r.compression()? != CompressionType::None {
            return Err(RecordError::corrupt(
                pos,
                "Compressed outer record should not have an inner record with a compression attribute set",
            ));
        }
        inner.push((r, bytes.len()));
        pos = end;
    }
    let last_inner = inner.last().map_or(0, |(r, _)| r.offset);
    let wrapper_ts_type = wrapper.timestamp_type();
    Ok(inner
        .iter()
        .map(|(r, _)| {
            let (offset, timestamp, ts_type) = if wrapper.magic == MAGIC_V1 {
                let offset = wrapper.offset - last_inner + r.offset;
                if wrapper_ts_type == TimestampType::LogAppendTime {
                    (offset, wrapper.timestamp, wrapper_ts_type)
                } else {
                    (offset, r.timestamp, TimestampType::CreateTime)
                }
            } else {
                (r.offset, NO_TIMESTAMP, TimestampType::NoTimestampType)
            };
            r.to_owned_at(offset, timestamp, ts_type)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::batch_iter::BatchIter;
    use crate::protocol::record::builder::{SimpleRecord, build_legacy_message_set};
    use proptest::prelude::*;

    fn records(n: usize) -> Vec<SimpleRecord> {
        (0..n)
            .map(|i| {
                SimpleRecord::new(
                    1000 + i as i64,
                    if i % 3 == 0 {
                        None
                    } else {
                        Some(format!("k{i}").into_bytes())
                    },
                    if i % 4 == 1 {
                        None
                    } else {
                        Some(vec![i as u8; i * 10])
                    },
                )
            })
            .collect()
    }

    #[test]
    fn uncompressed_sets_parse_back() {
        for magic in [0i8, 1] {
            let recs = records(5);
            let set = build_legacy_message_set(magic, CompressionType::None, 40, &recs).unwrap();
            let entries: Vec<_> = BatchIter::new(&set).collect::<Result<_, _>>().unwrap();
            assert_eq!(entries.len(), 5);
            for (i, e) in entries.iter().enumerate() {
                assert!(e.is_valid());
                assert_eq!(e.magic, magic);
                let r = LegacyRecord::parse(e.bytes).unwrap();
                assert!(r.is_valid());
                assert_eq!(r.offset, 40 + i as i64);
                assert_eq!(r.key, recs[i].key.as_deref());
                assert_eq!(r.value, recs[i].value.as_deref());
                let want_ts = if magic == 1 {
                    recs[i].timestamp
                } else {
                    NO_TIMESTAMP
                };
                assert_eq!(r.timestamp, want_ts);
                assert_eq!(e.max_timestamp(), want_ts);
            }
        }
    }

    #[test]
    fn compressed_wrappers_resolve_inner_offsets() {
        for magic in [0i8, 1] {
            for codec in [
                CompressionType::Gzip,
                CompressionType::Snappy,
                CompressionType::Lz4,
            ] {
                let recs = records(6);
                let set = build_legacy_message_set(magic, codec, 100, &recs).unwrap();
                let entries: Vec<_> = BatchIter::new(&set).collect::<Result<_, _>>().unwrap();
                assert_eq!(entries.len(), 1);
                assert_eq!(entries[0].last_offset(), 105);
                assert!(entries[0].is_valid());
                let wrapper = LegacyRecord::parse(entries[0].bytes).unwrap();
                assert_eq!(wrapper.compression().unwrap(), codec);
                assert_eq!(wrapper.key, None);
                let deep = deep_records(entries[0].bytes, 1 << 20).unwrap();
                assert_eq!(deep.len(), 6);
                for (i, d) in deep.iter().enumerate() {
                    assert_eq!(d.offset, 100 + i as i64, "{magic} {codec}");
                    assert!(d.crc_valid);
                    assert_eq!(d.key, recs[i].key);
                    assert_eq!(d.value, recs[i].value);
                    if magic == 1 {
                        assert_eq!(d.timestamp, recs[i].timestamp);
                    }
                }
                assert!(deep_records(entries[0].bytes, 10).is_err());
            }
        }
    }

    #[test]
    fn corrupt_crc_and_sizes_are_caught() {
        let set = build_legacy_message_set(1, CompressionType::None, 0, &records(1)).unwrap();
        let mut bad = set.clone();
        bad[20] ^= 0xff; // a timestamp byte

        assert!(!LegacyRecord::parse(&bad).unwrap().is_valid());
        assert!(LegacyRecord::parse(&set[..set.len() - 1]).is_err());
        let mut long = set.clone();
        long.push(0);
        assert!(LegacyRecord::parse(&long).is_err());
        let mut magic = set.clone();
        magic[MAGIC_OFFSET] = 7;
        assert!(LegacyRecord::parse(&magic).is_err());
    }

    proptest! {
        #[test]
        fn random_entries_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = LegacyRecord::parse(&bytes).map(|r| r.is_valid());
            let _ = deep_records(&bytes, 4096);
        }
    }
}
