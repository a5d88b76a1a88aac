//! Filtering one record batch for the cleaner (Kafka's `MemoryRecords.filterTo` and
//! `buildRetainedRecordsInto` for magic 2).
//!
//! What comes out of a batch, as Kafka 3.9 writes it:
//!
//! - every record kept and no delete horizon to set: the batch's original bytes;
//! - some records kept, or a tombstone kept in a batch without a delete horizon: a rebuilt
//!   batch with the same base offset, last offset delta (so the producer's last sequence
//!   survives), partition leader epoch, producer id/epoch, base sequence, timestamp type,
//!   transactional and control flags and codec (recompressed at the codec's default level),
//!   the kept records' offset deltas, keys, values and headers unchanged and a fresh CRC. Its
//!   base timestamp is the delete horizon when it has one (attribute bit 6, KIP-534), else the
//!   first kept record's timestamp; its max timestamp the kept records' largest (the original
//!   one under `LogAppendTime`). A tombstone kept in a batch that had no horizon sets it to
//!   `now + delete.retention.ms`; a later cleaning past the horizon drops the tombstone;
//! - a transaction marker whose transaction has no data left gets a delete horizon the same way;
//! - nothing kept: the batch is dropped, except that a batch the producer state still needs
//!   (`RetainEmpty`) keeps a 61-byte header with no records (Kafka's `writeEmptyHeader`).

use crate::protocol::record::RecordError;
use crate::protocol::record::batch::{
    CONTROL_FLAG_MASK, CRC_OFFSET, DELETE_HORIZON_FLAG_MASK, LOG_OVERHEAD, NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD, RecordBatchHeader, TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK,
    TimestampType, compute_crc,
};
use crate::protocol::record::compression::{CompressionType, compress};
use crate::protocol::record::records::{Record, batch_records, read_record};
use crate::protocol::record::varint::{
    read_varint, read_varlong, varlong_size, write_varint, write_varlong,
};

/// Kafka's `RecordFilter.BatchRetention`: what happens to a batch none of whose records is
/// kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchRetention {
    /// Drop the batch and all its records.
    Delete,
    /// Drop the batch only if no record is kept.
    DeleteEmpty,
    /// Keep at least the batch header.
    RetainEmpty,
}

/// The outcome for one batch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Filtered<'a> {
    /// Every record kept, nothing to change: the input bytes.
    Original(&'a [u8]),
    /// A rebuilt batch (fewer records, or a delete horizon set).
    Rebuilt(Vec<u8>),
    /// The 61-byte header of an empty batch.
    EmptyHeader(Vec<u8>),
    /// Nothing left.
    Dropped,
}

/// A record as the filter sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordView<'r> {
    pub offset: i64,
    pub key: Option<&'r [u8]>,
    pub has_value: bool,
}

/// How a batch is filtered.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FilterParams {
    pub retention: BatchRetention,
    pub now_ms: i64,
    pub delete_retention_ms: i64,
    pub max_decompressed_bytes: usize,
    /// A marker whose transaction has no data left (Kafka's `containsMarkerForEmptyTxn`): kept
    /// now, it gets a delete horizon as a kept tombstone does, and goes once that passes.
    pub contains_marker_for_empty_txn: bool,
}

/// What filtering read and kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FilterCounts {
    pub records_read: usize,
    pub records_retained: usize,
}

/// Filters the v2 batch `batch` (its whole bytes; `header` parsed from it), keeping the records
/// for which `retain` answers true; see the module docs.
pub(crate) fn filter_batch<'a>(
    batch: &'a [u8],
    header: &RecordBatchHeader,
    params: FilterParams,
    mut retain: impl FnMut(&RecordView<'_>) -> bool,
) -> Result<(Filtered<'a>, FilterCounts), RecordError> {
    let batch = batch.get(..header.size_in_bytes()).unwrap_or(batch);
    let records = batch_records(batch, header, params.max_decompressed_bytes)?;
    let log_append_time = header.timestamp_type() == TimestampType::LogAppendTime;
    // (tail start, end, timestamp) of each kept record in `records`.
    let mut kept: Vec<(usize, usize, i64)> = Vec::new();
    let mut counts = FilterCounts::default();
    let mut contains_tombstones = false;
    let mut pos = 0usize;
    for _ in 0..header.records_count.max(0) {
        if pos >= records.len() {
            return Err(RecordError::corrupt(
                pos,
                "Incorrect declared batch size, premature EOF reached",
            ));
        }
        let start = pos;
        let record: Record<'_> = read_record(&records, &mut pos)?;
        counts.records_read += 1;
        let timestamp = if log_append_time {
            header.max_timestamp
        } else {
            record.timestamp(header.base_timestamp)
        };
        let view = RecordView {
            offset: record.offset(header.base_offset),
            key: record.key,
            has_value: record.value.is_some(),
        };
        if params.retention != BatchRetention::Delete && retain(&view) {
            contains_tombstones |= !view.has_value;
            kept.push((tail_start(&records, start)?, pos, timestamp));
        }
    }
    if pos != records.len() {
        return Err(RecordError::corrupt(
            pos,
            "Incorrect declared batch size, records still remaining in file",
        ));
    }
    counts.records_retained = kept.len();
    if kept.is_empty() {
        let outcome = if params.retention == BatchRetention::RetainEmpty {
            Filtered::EmptyHeader(empty_header(header))
        } else {
            Filtered::Dropped
        };
        return Ok((outcome, counts));
    }
    let need_delete_horizon = (contains_tombstones || params.contains_marker_for_empty_txn)
        && !header.has_delete_horizon();
    if kept.len() == counts.records_read && !need_delete_horizon {
        return Ok((Filtered::Original(batch), counts));
    }
    let delete_horizon = if need_delete_horizon {
        params.now_ms.saturating_add(params.delete_retention_ms)
    } else if header.has_delete_horizon() {
        header.base_timestamp
    } else {
        NO_TIMESTAMP
    };
    let base_timestamp = if delete_horizon >= 0 {
        delete_horizon
    } else {
        kept[0].2
    };
    let mut body = Vec::with_capacity(records.len());
    let mut max_timestamp = NO_TIMESTAMP;
    for &(tail, end, timestamp) in &kept {
        max_timestamp = max_timestamp.max(timestamp);
        let delta = timestamp.wrapping_sub(base_timestamp);
        let rest = &records[tail..end];
        let length = 1 + varlong_size(delta) + rest.len();
        write_varint(&mut body, i32::try_from(length).unwrap_or(i32::MAX));
        // Kafka's `DefaultRecord.writeTo` writes attributes 0.
        body.push(0);
        write_varlong(&mut body, delta);
        body.extend_from_slice(rest);
    }
    if log_append_time {
        max_timestamp = header.max_timestamp;
    }
    let codec = header.compression()?;
    if codec != CompressionType::None {
        body = compress(codec, &body)?;
    }
    let mut attributes = header.attributes
        & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)
        | i16::from(codec.id());
    if delete_horizon >= 0 {
        attributes |= DELETE_HORIZON_FLAG_MASK;
    }
    let fields = HeaderFields {
        attributes,
        base_timestamp,
        max_timestamp,
        records_count: i32::try_from(kept.len()).unwrap_or(i32::MAX),
    };
    Ok((
        Filtered::Rebuilt(write_batch(header, fields, &body)?),
        counts,
    ))
}

/// Where a record's bytes after its timestamp delta start (offset delta, key, value, headers
/// are copied from there unchanged).
fn tail_start(records: &[u8], start: usize) -> Result<usize, RecordError> {
    let mut pos = start;
    read_varint(records, &mut pos)?;
    pos += 1;
    read_varlong(records, &mut pos)?;
    Ok(pos)
}

/// The header fields a rewrite changes.
#[derive(Debug, Clone, Copy)]
struct HeaderFields {
    attributes: i16,
    base_timestamp: i64,
    max_timestamp: i64,
    records_count: i32,
}

fn write_batch(
    original: &RecordBatchHeader,
    fields: HeaderFields,
    body: &[u8],
) -> Result<Vec<u8>, RecordError> {
    let size = RECORD_BATCH_OVERHEAD + body.len();
    let batch_length = i32::try_from(size - LOG_OVERHEAD)
        .map_err(|_| RecordError::corrupt(0, format!("batch of {size} bytes is too large")))?;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&original.base_offset.to_be_bytes());
    out.extend_from_slice(&batch_length.to_be_bytes());
    out.extend_from_slice(&original.partition_leader_epoch.to_be_bytes());
    out.push(original.magic as u8);
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&fields.attributes.to_be_bytes());
    out.extend_from_slice(&original.last_offset_delta.to_be_bytes());
    out.extend_from_slice(&fields.base_timestamp.to_be_bytes());
    out.extend_from_slice(&fields.max_timestamp.to_be_bytes());
    out.extend_from_slice(&original.producer_id.to_be_bytes());
    out.extend_from_slice(&original.producer_epoch.to_be_bytes());
    out.extend_from_slice(&original.base_sequence.to_be_bytes());
    out.extend_from_slice(&fields.records_count.to_be_bytes());
    out.extend_from_slice(body);
    let crc = compute_crc(&out);
    out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(out)
}

/// Kafka's `writeEmptyHeader`: no records, no compression, base timestamp -1, the original max
/// timestamp, offsets, producer fields and flags.
fn empty_header(header: &RecordBatchHeader) -> Vec<u8> {
    let fields = HeaderFields {
        attributes: header.attributes
            & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK),
        base_timestamp: NO_TIMESTAMP,
        max_timestamp: header.max_timestamp,
        records_count: 0,
    };
    // A header alone always fits an i32 length.
    write_batch(header, fields, &[]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::batch::is_crc_valid;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use crate::protocol::record::records::RecordIter;

    fn params(retention: BatchRetention) -> FilterParams {
        FilterParams {
            retention,
            now_ms: 10_000,
            delete_retention_ms: 500,
            max_decompressed_bytes: 1 << 20,
            contains_marker_for_empty_txn: false,
        }
    }

    fn build(codec: CompressionType, records: &[(&str, Option<&str>)]) -> Vec<u8> {
        let mut b = RecordBatchBuilder::new(codec);
        b.base_offset = 100;
        b.partition_leader_epoch = 3;
        b.records = records
            .iter()
            .enumerate()
            .map(|(i, (k, v))| {
                let mut r = SimpleRecord::new(
                    1000 + 10 * i as i64,
                    Some(k.as_bytes().to_vec()),
                    v.map(|v| v.as_bytes().to_vec()),
                );
                r.headers = vec![("h".into(), Some(vec![i as u8]))];
                r
            })
            .collect();
        b.build().unwrap()
    }

    /// (offset, timestamp, key, value, header value) of a record.
    type Decoded = (i64, i64, String, Option<String>, u8);

    fn decode(batch: &[u8]) -> (RecordBatchHeader, Vec<Decoded>) {
        assert!(is_crc_valid(batch));
        let h = RecordBatchHeader::parse(batch).unwrap();
        assert_eq!(h.size_in_bytes(), batch.len());
        let records = batch_records(batch, &h, 1 << 20).unwrap();
        let out = RecordIter::new(&records, h.records_count)
            .map(|r| {
                let r = r.unwrap();
                let s = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                let header = r.headers().next().unwrap().value.unwrap()[0];
                (
                    r.offset(h.base_offset),
                    r.timestamp(h.base_timestamp),
                    s(r.key.unwrap()),
                    r.value.map(s),
                    header,
                )
            })
            .collect();
        (h, out)
    }

    #[test]
    fn keeps_offsets_and_codec_and_rewrites_the_crc() {
        for codec in CompressionType::ALL {
            let input = build(
                codec,
                &[("a", Some("1")), ("b", Some("2")), ("c", Some("3"))],
            );
            let header = RecordBatchHeader::parse(&input).unwrap();
            let (out, counts) =
                filter_batch(&input, &header, params(BatchRetention::DeleteEmpty), |r| {
                    r.key != Some(b"a")
                })
                .unwrap();
            assert_eq!(
                counts,
                FilterCounts {
                    records_read: 3,
                    records_retained: 2
                }
            );
            let Filtered::Rebuilt(bytes) = out else {
                panic!("{codec}: {out:?}")
            };
            let (h, records) = decode(&bytes);
            assert_eq!(h.compression().unwrap(), codec);
            assert_eq!((h.base_offset, h.last_offset_delta), (100, 2));
            assert_eq!(h.partition_leader_epoch, 3);
            assert_eq!((h.base_timestamp, h.max_timestamp), (1010, 1020));
            assert!(!h.has_delete_horizon());
            assert_eq!(
                records,
                vec![
                    (101, 1010, "b".into(), Some("2".into()), 1),
                    (102, 1020, "c".into(), Some("3".into()), 2)
                ]
            );
        }
    }

    #[test]
    fn untouched_batches_are_written_as_they_were() {
        let input = build(CompressionType::Lz4, &[("a", Some("1")), ("b", Some("2"))]);
        let header = RecordBatchHeader::parse(&input).unwrap();
        let (out, _) = filter_batch(&input, &header, params(BatchRetention::DeleteEmpty), |_| {
            true
        })
        .unwrap();
        assert_eq!(out, Filtered::Original(&input[..]));
    }

    #[test]
    fn a_kept_tombstone_sets_the_delete_horizon_once() {
        let input = build(CompressionType::Zstd, &[("a", None), ("b", Some("2"))]);
        let header = RecordBatchHeader::parse(&input).unwrap();
        let (out, _) = filter_batch(&input, &header, params(BatchRetention::DeleteEmpty), |_| {
            true
        })
        .unwrap();
        let Filtered::Rebuilt(bytes) = out else {
            panic!("{out:?}")
        };
        let (h, records) = decode(&bytes);
        assert!(h.has_delete_horizon());
        assert_eq!(h.base_timestamp, 10_500);
        assert_eq!(h.max_timestamp, 1010);
        // Timestamps survive the new base.
        assert_eq!(records[0].1, 1000);
        assert_eq!(records[1].1, 1010);
        // Filtering again keeps the horizon and the bytes.
        let again = RecordBatchHeader::parse(&bytes).unwrap();
        let mut later = params(BatchRetention::DeleteEmpty);
        later.now_ms = 20_000;
        let (out, _) = filter_batch(&bytes, &again, later, |_| true).unwrap();
        assert_eq!(out, Filtered::Original(&bytes[..]));
        let (out, _) = filter_batch(&bytes, &again, later, |r| r.has_value).unwrap();
        let Filtered::Rebuilt(bytes) = out else {
            panic!("{out:?}")
        };
        let (h, records) = decode(&bytes);
        assert!(h.has_delete_horizon());
        assert_eq!(h.base_timestamp, 10_500);
        assert_eq!(records, vec![(101, 1010, "b".into(), Some("2".into()), 1)]);
    }

    #[test]
    fn empty_batches_go_unless_retained_as_a_header() {
        let input = build(CompressionType::Gzip, &[("a", Some("1")), ("b", Some("2"))]);
        let header = RecordBatchHeader::parse(&input).unwrap();
        let (out, _) = filter_batch(&input, &header, params(BatchRetention::DeleteEmpty), |_| {
            false
        })
        .unwrap();
        assert_eq!(out, Filtered::Dropped);
        let (out, counts) =
            filter_batch(&input, &header, params(BatchRetention::Delete), |_| true).unwrap();
        assert_eq!((out, counts.records_retained), (Filtered::Dropped, 0));
        let (out, _) = filter_batch(&input, &header, params(BatchRetention::RetainEmpty), |_| {
            false
        })
        .unwrap();
        let Filtered::EmptyHeader(bytes) = out else {
            panic!("{out:?}")
        };
        let (h, records) = decode(&bytes);
        assert_eq!(bytes.len(), RECORD_BATCH_OVERHEAD);
        assert!(records.is_empty());
        assert_eq!((h.base_offset, h.last_offset_delta), (100, 1));
        assert_eq!((h.base_timestamp, h.max_timestamp), (NO_TIMESTAMP, 1010));
        assert_eq!(h.compression().unwrap(), CompressionType::None);
    }
}
