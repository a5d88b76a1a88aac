//! The leader's rebuild of a produced batch: Kafka 3.9's `LogValidator`
//! `validateMessagesAndAssignOffsetsCompressed` when in-place assignment is not possible, then
//! `buildRecordsAndAssignOffsets`, then `UnifiedLog.append`'s re-check of the rebuilt size.
//!
//! When: the topic's `compression.type` names a codec other than the batch's (an uncompressed
//! control batch excepted, as Kafka keeps those), or a compressed batch's offset deltas are not
//! 0, 1, 2, ... (Kafka's fix-up for old clients, at the batch's own codec under `producer`).
//! How: the records section is inflated whole (capped by `max_decompressed_bytes`, a codec error
//! or the cap is `CORRUPT_MESSAGE`), every record is checked as Kafka checks records it walks
//! with its streaming iterator (record errors describe `DefaultRecord`s), and the batch is
//! rebuilt by `protocol::record::rebuild` with the topic's level and timestamp type. A rebuilt
//! batch over `max.message.bytes` is `MESSAGE_TOO_LARGE` with Kafka's message.
//!
//! The `producer` path and a matching codec never come here: they stay zero-copy.

use super::record_checks::{Checks, Walk, check_records, corrupt};
use super::{LogValidationError, ValidatedBatch, ValidationContext};
use crate::protocol::record::batch::{NO_TIMESTAMP, RecordBatchHeader, TimestampType};
use crate::protocol::record::batch_iter::BatchRef;
use crate::protocol::record::rebuild::{Compression, RebuildParams, rebuild_batch};
use crate::protocol::record::records::batch_records;

/// The codec a batch must be rebuilt to before anything is walked, if any.
#[inline(always)]
pub(super) fn rebuild_target(
    h: &RecordBatchHeader,
    ctx: &ValidationContext,
) -> Option<Compression> {
    let target = ctx.target_compression?;
    let source = h.attributes & 0x07;
    if i16::from(target.codec.id()) == source || (source == 0 && h.is_control()) {
        return None;
    }
    Some(target)
}

/// Validates every record of the batch and rebuilds it with `target`. `names` is
/// (`" in topic partition <tp>"` or empty, `<tp>`).
#[cold]
pub(super) fn validate_and_rebuild(
    entry: &BatchRef<'_>,
    h: RecordBatchHeader,
    ctx: &ValidationContext,
    names: (&str, &str),
    target: Compression,
) -> Result<ValidatedBatch, LogValidationError> {
    let (in_tp, tp) = names;
    let records = batch_records(entry.bytes, &h, ctx.max_decompressed_bytes)
        .map_err(|e| corrupt(e, in_tp))?;
    let checks = Checks::rebuilding(ctx, &h);
    let walked = check_records(Walk::Inflated(&records), &checks, in_tp)?;
    let params = RebuildParams {
        target,
        timestamp_type: ctx.timestamp_type,
        log_append_time: ctx.now_ms,
        max_bytes: ctx.max_decompressed_bytes,
    };
    let rebuilt = rebuild_batch(
        &h,
        &records,
        h.records_count,
        |delta| checks.timestamp_at(delta),
        &params,
    )
    .map_err(|e| corrupt(e, in_tp))?;
    if rebuilt.len() > ctx.max_message_bytes {
        // Kafka's wording, missing space included.
        return Err(LogValidationError::MessageTooLarge {
            message: format!(
                "Message batch size is {} bytes in append topartition {tp} which exceeds the maximum configured size of {}.",
                rebuilt.len(),
                ctx.max_message_bytes
            ),
        });
    }
    let header = RecordBatchHeader::parse(&rebuilt).map_err(|e| corrupt(e, in_tp))?;
    let max_timestamp = if ctx.timestamp_type == TimestampType::LogAppendTime {
        ctx.now_ms
    } else {
        walked.max_timestamp
    };
    // Kafka's `RecordsInfo` for a rebuilt v2 batch: the last offset, or none without a
    // timestamp.
    let offset_delta_of_max_timestamp = if max_timestamp == NO_TIMESTAMP {
        -1
    } else {
        header.last_offset_delta
    };
    Ok(ValidatedBatch {
        position: entry.position,
        size: rebuilt.len(),
        header,
        max_timestamp,
        offset_delta_of_max_timestamp,
        rebuilt: Some(rebuilt),
    })
}

#[cfg(test)]
#[path = "recompress_tests.rs"]
mod tests;
