//! The per-batch part of Kafka's `LogValidator` for leader appends: the client-only batch
//! checks of `validateBatch` and the walk over every record (structure, offset deltas, keys on
//! compacted topics, timestamps), with Kafka's messages and `processRecordErrors` rules.

use std::ops::ControlFlow;

use super::recompress::{rebuild_target, validate_and_rebuild};
use super::{BatchIndexError, LogValidationError, ValidatedBatch, ValidationContext, reason};
use crate::protocol::record::RecordError;
use crate::protocol::record::batch::{NO_TIMESTAMP, RecordBatchHeader, TimestampType};
use crate::protocol::record::batch_iter::BatchRef;
use crate::protocol::record::compression::CompressionType;
use crate::protocol::record::rebuild::Compression;
use crate::protocol::record::record_stream::{RecordSummary, WalkError, for_each_batch_record};
use crate::protocol::record::records::{batch_body, for_each_record};

/// The client-only part of `LogValidator.validateBatch`.
pub(super) fn validate_client_batch(
    h: &RecordBatchHeader,
    in_tp: &str,
) -> Result<(), LogValidationError> {
    let (base, last) = (h.base_offset, h.last_offset());
    let count_from_offsets = i64::from(h.last_offset_delta) + 1;
    if count_from_offsets <= 0 {
        return Err(LogValidationError::invalid(format!(
            "Batch has an invalid offset range: [{base}, {last}]{in_tp}"
        )));
    }
    let count = h.records_count;
    if count <= 0 {
        return Err(LogValidationError::invalid(format!(
            "Invalid reported count for record batch: {count}{in_tp}"
        )));
    }
    if count_from_offsets != i64::from(count) {
        return Err(LogValidationError::invalid(format!(
            "Inconsistent batch offset range [{base}, {last}] and count of records {count}{in_tp}"
        )));
    }
    if h.is_control() {
        return Err(LogValidationError::invalid(format!(
            "Clients are not allowed to write control records{in_tp}"
        )));
    }
    if h.has_producer_id() && h.base_sequence < 0 {
        return Err(LogValidationError::invalid(format!(
            "Invalid sequence number {} in record batch with producerId {}{in_tp}",
            h.base_sequence, h.producer_id
        )));
    }
    Ok(())
}

/// The record as Kafka's message prints it: `DefaultRecord.toString` for an uncompressed batch
/// (a null key or value counts 0 bytes), `PartialDefaultRecord.toString` for a compressed one,
/// which Kafka walks with `skipKeyValueIterator` (a null counts -1).
fn describe(r: &RecordSummary, offset: i64, timestamp: i64, compressed: bool) -> String {
    if compressed {
        format!(
            "PartialDefaultRecord(offset={offset}, timestamp={timestamp}, key={} bytes, value={} bytes)",
            r.key_len, r.value_len
        )
    } else {
        format!(
            "DefaultRecord(offset={offset}, timestamp={timestamp}, key={} bytes, value={} bytes)",
            r.key_len.max(0),
            r.value_len.max(0)
        )
    }
}

/// The records a walk reads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Walk<'a> {
    /// The batch as produced: uncompressed records in place, compressed ones as they inflate.
    Batch(&'a [u8]),
    /// The whole records section, uncompressed (inflated first when the batch is rebuilt).
    Inflated(&'a [u8]),
}

/// Calls `f` for each record of the batch. Uncompressed records are walked in place (the hot
/// path: nothing copied); compressed ones as they inflate, through a small window, so a batch
/// that inflates hugely costs no more memory than a small one.
#[inline(always)]
fn walk_records(
    walk: Walk<'_>,
    h: &RecordBatchHeader,
    ctx: &ValidationContext,
    in_tp: &str,
    mut f: impl FnMut(i32, &RecordSummary),
) -> Result<(), LogValidationError> {
    let in_memory = |records: &[u8], f: &mut dyn FnMut(i32, &RecordSummary)| {
        for_each_record(records, h.records_count, |index, r| {
            f(index, &RecordSummary::from(r));
        })
        .map_err(WalkError::Records)
    };
    let walked = match walk {
        Walk::Inflated(records) => in_memory(records, &mut f),
        Walk::Batch(batch) if h.attributes & 0x07 == 0 => match batch_body(batch, h) {
            Ok(body) => in_memory(body, &mut f),
            Err(e) => Err(WalkError::Batch(e)),
        },
        Walk::Batch(batch) => {
            for_each_batch_record(batch, h, ctx.max_decompressed_bytes, |index, r| {
                f(index, r);
                ControlFlow::Continue(())
            })
        }
    };
    walked.map_err(|e| match e {
        WalkError::Batch(e) => corrupt(e, in_tp),
        WalkError::Records(e) => LogValidationError::invalid(reason(e)),
    })
}

/// A batch that does not inflate (or inflates past the cap): `CORRUPT_MESSAGE`.
pub(super) fn corrupt(e: RecordError, in_tp: &str) -> LogValidationError {
    LogValidationError::CorruptMessage {
        message: format!("{}{in_tp}", reason(e)),
    }
}

/// What a checked walk found: the largest record timestamp, the offset delta of its first
/// record, and whether the offset deltas were 0, 1, 2, ...
#[derive(Debug, Clone, Copy)]
pub(super) struct Walked {
    pub max_timestamp: i64,
    pub max_timestamp_delta: i32,
    pub offsets_in_order: bool,
}

/// Walks the records with `checks`; any rejected record fails the batch with every record error.
#[inline(always)]
pub(super) fn check_records(
    walk: Walk<'_>,
    checks: &Checks<'_>,
    in_tp: &str,
) -> Result<Walked, LogValidationError> {
    // The hot loop only notes that something is wrong; the messages are built by a second,
    // cold walk, so nothing in this loop escapes to memory.
    let mut any_problem = false;
    let mut out = Walked {
        max_timestamp: NO_TIMESTAMP,
        max_timestamp_delta: -1,
        offsets_in_order: true,
    };
    walk_records(walk, checks.h, checks.ctx, in_tp, |index, r| {
        let timestamp = checks.timestamp(r);
        any_problem |= checks.problem(index, r, timestamp).is_some();
        out.offsets_in_order &= r.offset_delta == index;
        if timestamp > out.max_timestamp {
            out.max_timestamp = timestamp;
            out.max_timestamp_delta = r.offset_delta;
        }
    })?;
    if any_problem {
        return Err(collect_errors(walk, checks, in_tp));
    }
    Ok(out)
}

/// Walks the records of one batch: structure, offset deltas, keys, timestamps; computes the
/// batch's max timestamp as Kafka would store it. A batch whose codec is not the topic's
/// target, or a compressed one whose offset deltas are not 0, 1, 2, ..., is rebuilt
/// (`recompress`).
pub(super) fn validate_batch_records(
    entry: &BatchRef<'_>,
    h: RecordBatchHeader,
    ctx: &ValidationContext,
    in_tp: &str,
    tp: &str,
) -> Result<ValidatedBatch, LogValidationError> {
    if let Some(target) = rebuild_target(&h, ctx) {
        return validate_and_rebuild(entry, h, ctx, (in_tp, tp), target);
    }
    let compressed = h.attributes & 0x07 != 0;
    let checks = Checks::new(ctx, &h, compressed);
    let walked = check_records(Walk::Batch(entry.bytes), &checks, in_tp)?;
    if !walked.offsets_in_order {
        // Only a compressed batch gets here (the walk refuses uncompressed ones): Kafka
        // rebuilds it rather than refuse it, at the topic's codec or the batch's own.
        let target = ctx
            .target_compression
            .unwrap_or_else(|| Compression::of(codec_of(&h)));
        return validate_and_rebuild(entry, h, ctx, (in_tp, tp), target);
    }
    let (max_timestamp, offset_delta_of_max_timestamp) =
        if ctx.timestamp_type == TimestampType::LogAppendTime {
            (ctx.now_ms, if compressed { 0 } else { h.last_offset_delta })
        } else {
            (walked.max_timestamp, walked.max_timestamp_delta)
        };
    Ok(ValidatedBatch {
        position: entry.position,
        size: entry.bytes.len(),
        header: h,
        max_timestamp,
        offset_delta_of_max_timestamp,
        rebuilt: None,
    })
}

/// The batch's codec; its id was checked by the shallow checks.
fn codec_of(h: &RecordBatchHeader) -> CompressionType {
    h.compression().unwrap_or(CompressionType::None)
}

/// The per-record checks of `LogValidator.validateRecord` for one batch.
pub(super) struct Checks<'c> {
    ctx: &'c ValidationContext,
    h: &'c RecordBatchHeader,
    batch_log_append: bool,
    check_create_time: bool,
    /// The records are walked in place and compressed: Kafka's `skipKeyValueIterator`, whose
    /// records its messages describe as `PartialDefaultRecord`.
    partial: bool,
    /// Offset deltas other than 0, 1, 2, ... are an error (the batch is kept uncompressed as
    /// it is); otherwise they are noted and the batch is rebuilt.
    offsets_must_match: bool,
}

impl<'c> Checks<'c> {
    /// The checks of a batch walked as produced (compressed: `partial`); an uncompressed one
    /// is kept as it is, so its offset deltas must be in order.
    pub(super) fn new(ctx: &'c ValidationContext, h: &'c RecordBatchHeader, partial: bool) -> Self {
        Checks {
            ctx,
            h,
            batch_log_append: h.timestamp_type() == TimestampType::LogAppendTime,
            check_create_time: ctx.timestamp_type == TimestampType::CreateTime,
            partial,
            offsets_must_match: !partial,
        }
    }

    /// The checks of a batch walked whole to be rebuilt: any offset deltas will do.
    pub(super) fn rebuilding(ctx: &'c ValidationContext, h: &'c RecordBatchHeader) -> Self {
        Checks {
            partial: false,
            offsets_must_match: false,
            ..Checks::new(ctx, h, false)
        }
    }

    /// The timestamp of a record with `timestamp_delta`, as Kafka reads it.
    pub(super) fn timestamp_at(&self, timestamp_delta: i64) -> i64 {
        if self.batch_log_append {
            self.h.max_timestamp
        } else {
            self.h.base_timestamp.wrapping_add(timestamp_delta)
        }
    }

    /// The record's timestamp as Kafka reads it: the batch max timestamp under LogAppendTime.
    #[inline(always)]
    fn timestamp(&self, r: &RecordSummary) -> i64 {
        if self.batch_log_append {
            self.h.max_timestamp
        } else {
            r.timestamp(self.h.base_timestamp)
        }
    }

    /// The first problem with a record, in Kafka's order (key before timestamp).
    #[inline(always)]
    fn problem(&self, index: i32, r: &RecordSummary, timestamp: i64) -> Option<Problem> {
        let ctx = self.ctx;
        if self.offsets_must_match && r.offset_delta != index {
            Some(Problem::OffsetDelta)
        } else if ctx.compacted && !r.has_key() {
            Some(Problem::NoKey)
        } else if self.check_create_time && timestamp != NO_TIMESTAMP {
            let diff = ctx.now_ms.wrapping_sub(timestamp);
            (diff > ctx.timestamp_before_max_ms || diff.wrapping_neg() > ctx.timestamp_after_max_ms)
                .then_some(Problem::OutOfRange)
        } else if self.batch_log_append {
            Some(Problem::LogAppendTime)
        } else {
            None
        }
    }
}

/// Second walk of a batch known to hold rejected records: every record error with its message.
#[cold]
#[inline(never)]
fn collect_errors(walk: Walk<'_>, checks: &Checks<'_>, in_tp: &str) -> LogValidationError {
    let mut errors: Vec<(bool, BatchIndexError)> = Vec::new();
    // The first walk succeeded on the same bytes, so this one cannot fail.
    let _ = walk_records(walk, checks.h, checks.ctx, in_tp, |index, r| {
        let timestamp = checks.timestamp(r);
        if let Some(p) = checks.problem(index, r, timestamp) {
            push_error(&mut errors, p, index, r, checks, timestamp, in_tp);
        }
    });
    record_errors(errors)
}

/// What is wrong with one record.
#[derive(Debug, Clone, Copy)]
enum Problem {
    OffsetDelta,
    NoKey,
    OutOfRange,
    LogAppendTime,
}

/// Records one rejected record with Kafka's message; `true` marks a timestamp error.
fn push_error(
    errors: &mut Vec<(bool, BatchIndexError)>,
    problem: Problem,
    index: i32,
    r: &RecordSummary,
    checks: &Checks<'_>,
    timestamp: i64,
    in_tp: &str,
) {
    let (h, ctx) = (checks.h, checks.ctx);
    let offset = r.offset(h.base_offset);
    let entry = match problem {
        Problem::OffsetDelta => (
            false,
            format!(
                "Record offset delta {} does not match its position {index} in the batch{in_tp}",
                r.offset_delta
            ),
        ),
        Problem::NoKey => (
            false,
            format!("Compacted topic cannot accept message without key{in_tp}"),
        ),
        Problem::OutOfRange => (
            true,
            format!(
                "Timestamp {timestamp} of message with offset {offset} is out of range. The timestamp should be within [{}, {}]",
                ctx.now_ms.wrapping_sub(ctx.timestamp_before_max_ms),
                ctx.now_ms.wrapping_add(ctx.timestamp_after_max_ms)
            ),
        ),
        Problem::LogAppendTime => (
            true,
            format!(
                "Invalid timestamp type in message {}. Producer should not set timestamp type to LogAppendTime.",
                describe(r, offset, timestamp, checks.partial)
            ),
        ),
    };
    errors.push((entry.0, (index, entry.1)));
}

/// Kafka's `LogValidator.processRecordErrors`: any timestamp error makes the whole answer
/// `INVALID_TIMESTAMP`; otherwise `INVALID_RECORD` quoting at most three errors.
fn record_errors(errors: Vec<(bool, BatchIndexError)>) -> LogValidationError {
    let any_timestamp = errors.iter().any(|(ts, _)| *ts);
    let record_errors: Vec<BatchIndexError> = errors.into_iter().map(|(_, e)| e).collect();
    if any_timestamp {
        return LogValidationError::InvalidTimestamp {
            message: "One or more records have been rejected due to invalid timestamp".to_string(),
            record_errors,
        };
    }
    let shown: Vec<String> = record_errors
        .iter()
        .take(3)
        .map(|(i, m)| format!("RecordError(batchIndex={i}, message='{m}')"))
        .collect();
    LogValidationError::InvalidRecord {
        message: format!(
            "One or more records have been rejected due to {} record errors in total, and only showing the first three errors at most: [{}]",
            record_errors.len(),
            shown.join(", ")
        ),
        record_errors,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{NOW, builder, code, ctx, producer_set_log_append_time, refresh_crc};
    use super::super::*;
    use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord, encode_record};
    use crate::protocol::record::compression::CompressionType;

    #[test]
    fn log_append_time_topic_uses_now() {
        let mut c = ctx(AppendOrigin::Client);
        c.timestamp_type = TimestampType::LogAppendTime;
        let b = builder(CompressionType::None, 4).build().unwrap();
        let v = validate_records(&b, &c).unwrap();
        assert_eq!(
            (
                v.batches[0].max_timestamp,
                v.batches[0].offset_delta_of_max_timestamp
            ),
            (NOW, 3)
        );
        let z = builder(CompressionType::Lz4, 4).build().unwrap();
        assert_eq!(
            validate_records(&z, &c).unwrap().batches[0].offset_delta_of_max_timestamp,
            0
        );
        // A producer may not set LogAppendTime itself.
        let e = producer_set_log_append_time(CompressionType::None, &c);
        assert!(
            e.record_errors()[0]
                .1
                .contains("Producer should not set timestamp type")
        );
    }

    #[test]
    fn compressed_records_are_described_as_kafka_walks_them() {
        let mut c = ctx(AppendOrigin::Client);
        c.timestamp_type = TimestampType::LogAppendTime;
        for codec in CompressionType::ALL {
            let e = producer_set_log_append_time(codec, &c);
            let expected = if codec == CompressionType::None {
                format!(
                    "message DefaultRecord(offset=1, timestamp={}, key=0 bytes, value=30 bytes)",
                    NOW - 7
                )
            } else {
                // Kafka skips keys and values of compressed records: a null key is -1 bytes.
                format!(
                    "message PartialDefaultRecord(offset=1, timestamp={}, key=-1 bytes, value=30 bytes)",
                    NOW - 7
                )
            };
            assert!(e.record_errors()[1].1.contains(&expected), "{codec}: {e:?}");
        }
    }

    #[test]
    fn large_inflation_under_the_cap_validates_by_streaming() {
        // 8 MiB of zeros in a few KiB: accepted under a 16 MiB cap, refused under 4 MiB, and
        // a malformed record behind the inflation is a record error, as in memory.
        for codec in [
            CompressionType::Gzip,
            CompressionType::Lz4,
            CompressionType::Zstd,
        ] {
            let mut b = RecordBatchBuilder::new(codec);
            for _ in 0..4 {
                b.records
                    .push(SimpleRecord::new(NOW, None, Some(vec![0; 2 << 20])));
            }
            let bytes = b.build().unwrap();
            assert!(bytes.len() < 64 << 10);
            let mut c = ctx(AppendOrigin::Client);
            c.max_decompressed_bytes = 16 << 20;
            let v = validate_records(&bytes, &c).unwrap();
            assert_eq!(v.records_count, 4);
            c.max_decompressed_bytes = 4 << 20;
            assert_eq!(code(validate_records(&bytes, &c)).0, 2, "{codec}");
            let mut more = bytes.clone();
            more[57..61].copy_from_slice(&5i32.to_be_bytes());
            more[23..27].copy_from_slice(&4i32.to_be_bytes());
            refresh_crc(&mut more);
            c.max_decompressed_bytes = 16 << 20;
            assert_eq!(
                code(validate_records(&more, &c)),
                (
                    87,
                    "Incorrect declared batch size, premature EOF reached".to_string()
                ),
                "{codec}"
            );
        }
    }

    #[test]
    fn timestamp_bounds() {
        let mut c = ctx(AppendOrigin::Client);
        c.timestamp_before_max_ms = 5;
        c.timestamp_after_max_ms = 0;
        let e =
            validate_records(&builder(CompressionType::Gzip, 3).build().unwrap(), &c).unwrap_err();
        assert_eq!(e.error_code(), ErrorCode::InvalidTimestamp);
        assert_eq!(
            e.to_string(),
            "One or more records have been rejected due to invalid timestamp"
        );
        // NOW-10 and NOW-7 are too old; NOW-4 is fine.
        let idx: Vec<i32> = e.record_errors().iter().map(|(i, _)| *i).collect();
        assert_eq!(idx, vec![0, 1]);
        assert_eq!(
            e.record_errors()[0].1,
            format!(
                "Timestamp {} of message with offset 0 is out of range. The timestamp should be within [{}, {}]",
                NOW - 10,
                NOW - 5,
                NOW
            )
        );
        // NO_TIMESTAMP records are never out of range.
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.records.push(SimpleRecord::new(-1, None, None));
        assert!(validate_records(&b.build().unwrap(), &c).is_ok());
    }

    #[test]
    fn compacted_topics_need_keys() {
        let mut c = ctx(AppendOrigin::Client);
        c.compacted = true;
        let e = validate_records(&builder(CompressionType::Snappy, 4).build().unwrap(), &c)
            .unwrap_err();
        assert_eq!(e.error_code(), ErrorCode::InvalidRecord);
        assert_eq!(
            e.record_errors()
                .iter()
                .map(|(i, _)| *i)
                .collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert!(e.to_string().starts_with(
            "One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='Compacted topic cannot accept message without key')"
        ));
    }

    #[test]
    fn count_and_offsets_must_agree() {
        let c = ctx(AppendOrigin::Client);
        let b = builder(CompressionType::None, 3).build().unwrap();
        // last_offset_delta 1 with 3 records.
        let mut range = b.clone();
        range[23..27].copy_from_slice(&1i32.to_be_bytes());
        refresh_crc(&mut range);
        assert!(
            code(validate_records(&range, &c))
                .1
                .starts_with("Inconsistent batch offset range [0, 1]")
        );
        // Count and range agree at 4 but only 3 records are present.
        let mut count = b.clone();
        count[23..27].copy_from_slice(&3i32.to_be_bytes());
        count[57..61].copy_from_slice(&4i32.to_be_bytes());
        refresh_crc(&mut count);
        let (k, m) = code(validate_records(&count, &c));
        assert_eq!(
            (k, m.as_str()),
            (87, "Incorrect declared batch size, premature EOF reached")
        );
        // Offset deltas 0, 2: rejected (kcli does not rebuild batches).
        let mut body = Vec::new();
        encode_record(&mut body, 0, 0, &SimpleRecord::new(NOW, None, None));
        encode_record(&mut body, 2, 0, &SimpleRecord::new(NOW, None, None));
        let mut holes = builder(CompressionType::None, 2).build().unwrap();
        holes.truncate(61);
        holes.extend_from_slice(&body);
        let len = (holes.len() - 12) as i32;
        holes[8..12].copy_from_slice(&len.to_be_bytes());
        refresh_crc(&mut holes);
        let e = validate_records(&holes, &c).unwrap_err();
        assert_eq!(
            (e.error_code(), e.record_errors()[0].0),
            (ErrorCode::InvalidRecord, 1)
        );
    }

    #[test]
    fn compressed_bombs_and_garbage_are_corrupt() {
        let mut b = RecordBatchBuilder::new(CompressionType::Gzip);
        b.records.push(SimpleRecord::new(
            NOW,
            Some(b"k".to_vec()),
            Some(vec![0; 1 << 20]),
        ));
        let bytes = b.build().unwrap();
        let mut c = ctx(AppendOrigin::Client);
        c.max_decompressed_bytes = 64 << 10;
        assert_eq!(code(validate_records(&bytes, &c)).0, 2);
        let mut garbage = bytes[..61].to_vec();
        garbage.extend_from_slice(&[1, 2, 3, 4, 5]);
        let len = (garbage.len() - 12) as i32;
        garbage[8..12].copy_from_slice(&len.to_be_bytes());
        refresh_crc(&mut garbage);
        assert_eq!(code(validate_records(&garbage, &c)).0, 2);
    }
}
