//! Validation of produced batches, as Kafka 3.9's `LogValidator` (plus the checks of
//! `ProduceRequest.validateRecords` and `UnifiedLog.analyzeAndValidateRecords` that precede it)
//! does for a leader append of magic-2 batches.
//!
//! The validator only reads the input: it walks the batches in place (a compressed batch as it
//! inflates, through a small window and capped, so a decompression bomb costs time but not
//! memory) and reports what the log must write. Offsets, the partition leader epoch and, for
//! `LogAppendTime` or a changed `max_timestamp`, the timestamp fields and CRC are patched by the
//! log in a copy of the 61-byte header (see `protocol::record::batch::set_max_timestamp`); the
//! record bytes are stored untouched. The one exception is a batch the topic's
//! `compression.type` makes the leader rebuild (`recompress`: another codec, or a compressed
//! batch with inner offset gaps): it is inflated whole (capped), validated record by record and
//! handed to the log as a new batch ([`ValidatedBatch::rebuilt`]). `producer` and a matching
//! codec never rebuild and allocate nothing.
//!
//! Order of checks, each failing the whole append with Kafka's error code and message:
//! 1. shallow iteration (entry sizes, magic): `CORRUPT_MESSAGE`;
//! 2. client requests: at least one batch, magic 2, exactly one batch: `INVALID_RECORD`;
//! 3. per batch: client base offset 0 (`INVALID_RECORD`), size against `max.message.bytes`
//!    (`MESSAGE_TOO_LARGE`, not for replication), CRC-32C (`CORRUPT_MESSAGE`), a known codec
//!    (`UNSUPPORTED_COMPRESSION_TYPE`); replication additionally needs increasing offsets;
//! 4. leader appends (client, coordinator): one batch only, then per batch the client checks of
//!    `LogValidator.validateBatch` (offset range vs count, no control batches, a sequence with a
//!    producer id), then every record: structure (`INVALID_RECORD`), key on compacted topics
//!    (`INVALID_RECORD` with record errors) and `CreateTime` bounds / a producer-set
//!    `LogAppendTime` (`INVALID_TIMESTAMP` with record errors);
//! 5. a rebuilt batch: its size against `max.message.bytes` again (`MESSAGE_TOO_LARGE`, as
//!    `UnifiedLog.append` re-checks it).
//!
//! Differences from Kafka: an uncompressed batch kept as it is must have record offset deltas
//! 0, 1, 2, ... (Kafka stores such a batch with its inner deltas as they are; kcli's reads
//! rely on them), while a compressed one with gaps is rebuilt as Kafka rebuilds it; an unknown
//! codec id answers `UNSUPPORTED_COMPRESSION_TYPE` (Kafka answers `UNKNOWN_SERVER_ERROR` from
//! an uncaught `IllegalArgumentException`); a compressed stream that fails to decode, or
//! decodes past `max_decompressed_bytes`, answers `CORRUPT_MESSAGE`, and so does a rebuild whose
//! records or compressed output would pass that cap (Kafka has no cap).

use crate::protocol::errors::ErrorCode;
use crate::protocol::record::RecordError;
use crate::protocol::record::batch::{
    MAGIC_V2, NO_TIMESTAMP, RecordBatchHeader, TimestampType, is_crc_valid,
};
use crate::protocol::record::batch_iter::{BatchIter, BatchRef};
use crate::protocol::record::rebuild::Compression;

mod recompress;
mod record_checks;

use record_checks::{validate_batch_records, validate_client_batch};

/// Who is appending; Kafka's `AppendOrigin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendOrigin {
    /// A producer's Produce request: the full leader validation.
    Client,
    /// A follower copying the leader's log: shallow checks only (CRC, structure, offsets).
    Replication,
    /// The group or transaction coordinator writing to its own partitions (control batches
    /// allowed, no client-only batch checks).
    Coordinator,
}

/// The topic settings and clock a validation runs with.
#[derive(Debug, Clone)]
pub struct ValidationContext {
    pub origin: AppendOrigin,
    /// `cleanup.policy` contains `compact`: every record needs a key.
    pub compacted: bool,
    /// `message.timestamp.type` of the topic.
    pub timestamp_type: TimestampType,
    pub now_ms: i64,
    /// `message.timestamp.before.max.ms`.
    pub timestamp_before_max_ms: i64,
    /// `message.timestamp.after.max.ms`.
    pub timestamp_after_max_ms: i64,
    /// `max.message.bytes`: the largest batch (log overhead included) accepted.
    pub max_message_bytes: usize,
    /// Cap on the decompressed records of one batch, and on a rebuilt batch's records and
    /// compressed output.
    pub max_decompressed_bytes: usize,
    /// The topic's `compression.type` as a codec and its level; `None` for `producer`.
    pub target_compression: Option<Compression>,
}

/// One accepted batch and what the log must write into its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedBatch {
    /// Byte position of the batch in the validated buffer.
    pub position: usize,
    /// Bytes of the batch, log overhead included.
    pub size: usize,
    pub header: RecordBatchHeader,
    /// The batch's max timestamp as Kafka stores it: `now_ms` for a `LogAppendTime` topic, else
    /// the largest record timestamp (`NO_TIMESTAMP` when no record has one). For replication,
    /// the header's value.
    pub max_timestamp: i64,
    /// Offset delta of the record carrying `max_timestamp` (the first such); -1 when no record
    /// has a timestamp. For `LogAppendTime`, the last record when uncompressed and the first
    /// when compressed, as Kafka reports it.
    pub offset_delta_of_max_timestamp: i32,
    /// The batch rebuilt for the topic's codec (`recompress`), which the log writes instead of
    /// the produced bytes; `header`, `size` and the timestamps then describe it.
    pub rebuilt: Option<Vec<u8>>,
}

impl ValidatedBatch {
    /// The bytes to write: the rebuilt batch, or the batch's slice of the validated buffer.
    pub fn bytes<'a>(&'a self, records: &'a [u8]) -> &'a [u8] {
        match &self.rebuilt {
            Some(rebuilt) => rebuilt,
            None => records
                .get(self.position..self.position + self.size)
                .unwrap_or_default(),
        }
    }
}

/// The outcome of a successful validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedRecords {
    pub batches: Vec<ValidatedBatch>,
    /// Records over all batches.
    pub records_count: usize,
    /// Largest `max_timestamp` over the batches (`NO_TIMESTAMP` when none).
    pub max_timestamp: i64,
    /// Bytes of whole batches from the start of the buffer; trailing partial bytes are ignored,
    /// as Kafka trims them.
    pub total_size: usize,
}

/// Kafka's `ProduceResponse.RecordError`: the index of a rejected record in its batch, and why.
pub type BatchIndexError = (i32, String);

/// Why an append was refused, with the Kafka error code the produce response carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogValidationError {
    /// `CORRUPT_MESSAGE` (2): bad CRC, bad entry sizes, undecodable compressed data.
    #[error("{message}")]
    CorruptMessage { message: String },
    /// `MESSAGE_TOO_LARGE` (10): a batch over `max.message.bytes`.
    #[error("{message}")]
    MessageTooLarge { message: String },
    /// `INVALID_TIMESTAMP` (32), with every rejected record of the batch.
    #[error("{message}")]
    InvalidTimestamp {
        message: String,
        record_errors: Vec<BatchIndexError>,
    },
    /// `UNSUPPORTED_COMPRESSION_TYPE` (76): a codec id Kafka does not define.
    #[error("{message}")]
    UnsupportedCompressionType { message: String },
    /// `INVALID_RECORD` (87): bad batch or record structure, client rules, keys on compacted
    /// topics. `record_errors` is empty unless individual records were rejected.
    #[error("{message}")]
    InvalidRecord {
        message: String,
        record_errors: Vec<BatchIndexError>,
    },
    /// Replication only: batch offsets that do not increase. Kafka raises an internal
    /// `OffsetsOutOfOrderException` (`UNKNOWN_SERVER_ERROR`, -1).
    #[error("{message}")]
    OffsetsOutOfOrder { message: String },
}

impl LogValidationError {
    /// The Kafka error code for the produce response.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            LogValidationError::CorruptMessage { .. } => ErrorCode::CorruptMessage,
            LogValidationError::MessageTooLarge { .. } => ErrorCode::MessageTooLarge,
            LogValidationError::InvalidTimestamp { .. } => ErrorCode::InvalidTimestamp,
            LogValidationError::UnsupportedCompressionType { .. } => {
                ErrorCode::UnsupportedCompressionType
            }
            LogValidationError::InvalidRecord { .. } => ErrorCode::InvalidRecord,
            LogValidationError::OffsetsOutOfOrder { .. } => ErrorCode::UnknownServerError,
        }
    }

    /// The per-record errors (batch index, message), as Kafka returns them in `record_errors`.
    pub fn record_errors(&self) -> &[BatchIndexError] {
        match self {
            LogValidationError::InvalidTimestamp { record_errors, .. }
            | LogValidationError::InvalidRecord { record_errors, .. } => record_errors,
            _ => &[],
        }
    }

    fn invalid(message: String) -> Self {
        LogValidationError::InvalidRecord {
            message,
            record_errors: Vec::new(),
        }
    }
}

/// Validates `records` (a produce request's or a fetch response's records for one partition).
/// Messages name no topic partition; see [`validate_records_for`].
pub fn validate_records(
    records: &[u8],
    ctx: &ValidationContext,
) -> Result<ValidatedRecords, LogValidationError> {
    validate_records_for(records, ctx, "")
}

/// [`validate_records`] with Kafka's `" in topic partition <tp>"` in messages (`tp` as
/// `topic-partition`; empty leaves it out).
pub fn validate_records_for(
    records: &[u8],
    ctx: &ValidationContext,
    topic_partition: &str,
) -> Result<ValidatedRecords, LogValidationError> {
    let in_tp = if topic_partition.is_empty() {
        String::new()
    } else {
        format!(" in topic partition {topic_partition}")
    };
    // Pass 1: shallow iteration only (no storage), so a request costs one allocation.
    let mut iter = BatchIter::new(records);
    let mut count = 0usize;
    let mut first: Option<BatchRef<'_>> = None;
    for entry in iter.by_ref() {
        let entry = entry.map_err(|e| LogValidationError::CorruptMessage { message: reason(e) })?;
        first.get_or_insert(entry);
        count += 1;
    }
    let total_size = iter.position();
    let client = ctx.origin == AppendOrigin::Client;
    if client {
        check_produce_request(first.as_ref(), count)?;
    }
    let mut out = ValidatedRecords {
        batches: Vec::with_capacity(count),
        records_count: 0,
        max_timestamp: NO_TIMESTAMP,
        total_size,
    };
    let Some(first) = first else {
        return Ok(out);
    };
    // Pass 2: `analyzeAndValidateRecords` over every batch.
    let mut last_offset: Option<i64> = None;
    for entry in BatchIter::new(&records[..total_size]).flatten() {
        let header = shallow_check(&entry, ctx, &in_tp, topic_partition)?;
        if ctx.origin == AppendOrigin::Replication {
            if let Some(last) = last_offset
                && last >= header.last_offset()
            {
                return Err(LogValidationError::OffsetsOutOfOrder {
                    message: format!(
                        "Out of order offsets found in append{in_tp}: batch ending at {} follows offset {last}",
                        header.last_offset()
                    ),
                });
            }
            last_offset = Some(header.last_offset());
            out.push(ValidatedBatch {
                position: entry.position,
                size: entry.bytes.len(),
                header,
                max_timestamp: header.max_timestamp,
                offset_delta_of_max_timestamp: header.last_offset_delta,
                rebuilt: None,
            });
        }
    }
    if ctx.origin == AppendOrigin::Replication {
        return Ok(out);
    }
    // Pass 3: the leader's `LogValidator`, which takes exactly one batch.
    if count > 1 {
        return Err(LogValidationError::invalid(
            "Compressed outer record has more than one batch".to_string(),
        ));
    }
    // shallow_check passed on this batch, so its header parses.
    let header = RecordBatchHeader::parse(first.bytes)
        .map_err(|e| LogValidationError::CorruptMessage { message: reason(e) })?;
    if client {
        validate_client_batch(&header, &in_tp)?;
    }
    out.push(validate_batch_records(
        &first,
        header,
        ctx,
        &in_tp,
        topic_partition,
    )?);
    Ok(out)
}

impl ValidatedRecords {
    fn push(&mut self, batch: ValidatedBatch) {
        self.records_count += batch.header.records_count.max(0) as usize;
        self.max_timestamp = self.max_timestamp.max(batch.max_timestamp);
        self.batches.push(batch);
    }
}

/// The reason of a record error without the byte position, as Kafka words it.
fn reason(e: RecordError) -> String {
    match e {
        RecordError::Corrupt { reason, .. } => reason,
        other => other.to_string(),
    }
}

/// `ProduceRequest.validateRecords`: at least one batch, magic 2, exactly one batch.
fn check_produce_request(
    first: Option<&BatchRef<'_>>,
    count: usize,
) -> Result<(), LogValidationError> {
    let Some(first) = first else {
        return Err(LogValidationError::invalid(
            "Produce requests must have at least one record batch per partition".to_string(),
        ));
    };
    if first.magic != MAGIC_V2 {
        return Err(LogValidationError::invalid(
            "Produce requests are only allowed to contain record batches with magic version 2"
                .to_string(),
        ));
    }
    if count > 1 {
        return Err(LogValidationError::invalid(
            "Produce requests are only allowed to contain exactly one record batch per partition"
                .to_string(),
        ));
    }
    Ok(())
}

/// `UnifiedLog.analyzeAndValidateRecords` for one batch: base offset, size, CRC, codec.
fn shallow_check(
    entry: &BatchRef<'_>,
    ctx: &ValidationContext,
    in_tp: &str,
    tp: &str,
) -> Result<RecordBatchHeader, LogValidationError> {
    if entry.magic != MAGIC_V2 {
        return Err(LogValidationError::invalid(format!(
            "Batch magic {} is not supported{in_tp}: only magic 2 batches are stored",
            entry.magic
        )));
    }
    let header = RecordBatchHeader::parse(entry.bytes)
        .map_err(|e| LogValidationError::CorruptMessage { message: reason(e) })?;
    if ctx.origin == AppendOrigin::Client && header.base_offset != 0 {
        return Err(LogValidationError::invalid(format!(
            "The baseOffset of the record batch in the append to {tp} should be 0, but it is {}",
            header.base_offset
        )));
    }
    let size = entry.bytes.len();
    if ctx.origin != AppendOrigin::Replication && size > ctx.max_message_bytes {
        return Err(LogValidationError::MessageTooLarge {
            message: format!(
                "The record batch size in the append to {tp} is {size} bytes which exceeds the maximum configured value of {}.",
                ctx.max_message_bytes
            ),
        });
    }
    if !is_crc_valid(entry.bytes) {
        return Err(LogValidationError::CorruptMessage {
            message: format!("Record is corrupt (stored crc = {}){in_tp}.", header.crc),
        });
    }
    header
        .compression()
        .map_err(|e| LogValidationError::UnsupportedCompressionType { message: reason(e) })?;
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::batch::{CRC_OFFSET, compute_crc};
    use crate::protocol::record::builder::{
        ControlRecordType, RecordBatchBuilder, SimpleRecord, build_control_batch,
        build_legacy_message_set,
    };
    use crate::protocol::record::compression::CompressionType;

    pub(crate) const NOW: i64 = 1_700_000_000_000;

    pub(crate) fn ctx(origin: AppendOrigin) -> ValidationContext {
        ValidationContext {
            origin,
            compacted: false,
            timestamp_type: TimestampType::CreateTime,
            now_ms: NOW,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: i64::MAX,
            max_message_bytes: 1 << 20,
            max_decompressed_bytes: 1 << 24,
            target_compression: None,
        }
    }

    pub(crate) fn builder(codec: CompressionType, n: usize) -> RecordBatchBuilder {
        let mut b = RecordBatchBuilder::new(codec);
        for i in 0..n {
            b.records.push(SimpleRecord::new(
                NOW - 10 + i as i64 * 3 % 7,
                (i % 2 == 0).then(|| vec![i as u8]),
                Some(vec![7; 30]),
            ));
        }
        b
    }

    /// Validates two records of `codec` that the producer stamped LogAppendTime itself (which
    /// only the broker may do) under `c`; asserts both are refused with INVALID_TIMESTAMP.
    pub(crate) fn producer_set_log_append_time(
        codec: CompressionType,
        c: &ValidationContext,
    ) -> LogValidationError {
        let mut p = builder(codec, 2);
        p.timestamp_type = TimestampType::LogAppendTime;
        let e = validate_records(&p.build().unwrap(), c).unwrap_err();
        assert_eq!(
            (e.error_code(), e.record_errors().len()),
            (ErrorCode::InvalidTimestamp, 2)
        );
        e
    }

    pub(crate) fn refresh_crc(b: &mut [u8]) {
        let crc = compute_crc(b);
        b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    }

    pub(crate) fn code(r: Result<ValidatedRecords, LogValidationError>) -> (i16, String) {
        let e = r.unwrap_err();
        (e.error_code().code(), e.to_string())
    }

    #[test]
    fn accepts_every_codec_and_reports_max_timestamp() {
        for codec in CompressionType::ALL {
            let b = builder(codec, 5).build().unwrap();
            let v = validate_records(&b, &ctx(AppendOrigin::Client)).unwrap();
            assert_eq!((v.records_count, v.total_size), (5, b.len()));
            let vb = &v.batches[0];
            // Timestamps NOW-10 + {0,3,6,2,5}: the max is at index 2.
            assert_eq!(
                (vb.max_timestamp, vb.offset_delta_of_max_timestamp),
                (NOW - 4, 2)
            );
            assert_eq!(v.max_timestamp, NOW - 4);
            assert_eq!(vb.header.records_count, 5);
        }
    }

    #[test]
    fn size_crc_and_codec() {
        let b = builder(CompressionType::None, 3).build().unwrap();
        let mut c = ctx(AppendOrigin::Client);
        c.max_message_bytes = b.len() - 1;
        assert_eq!(code(validate_records(&b, &c)).0, 10);
        let mut bad = b.clone();
        bad[70] ^= 1;
        let (code_, msg) = code(validate_records_for(
            &bad,
            &ctx(AppendOrigin::Client),
            "t-0",
        ));
        assert_eq!(code_, 2);
        assert!(
            msg.starts_with("Record is corrupt (stored crc = ")
                && msg.ends_with(" in topic partition t-0.")
        );
        let mut codec = b.clone();
        codec[22] |= 0x07;
        refresh_crc(&mut codec);
        assert_eq!(
            code(validate_records(&codec, &ctx(AppendOrigin::Client))).0,
            76
        );
    }

    #[test]
    fn client_batch_rules() {
        let c = ctx(AppendOrigin::Client);
        let mut two = builder(CompressionType::None, 1).build().unwrap();
        two.extend(two.clone());
        assert_eq!(code(validate_records(&two, &c)).0, 87);
        assert_eq!(code(validate_records(&[], &c)).0, 87);
        let mut based = builder(CompressionType::None, 1);
        based.base_offset = 5;
        assert_eq!(code(validate_records(&based.build().unwrap(), &c)).0, 87);
        let control = build_control_batch(ControlRecordType::Commit, 0, 0, 1, 0, 0, NOW).unwrap();
        let (k, m) = code(validate_records(&control, &c));
        assert_eq!(
            (k, m.as_str()),
            (87, "Clients are not allowed to write control records")
        );
        assert!(validate_records(&control, &ctx(AppendOrigin::Coordinator)).is_ok());
        let mut seq = builder(CompressionType::None, 1);
        seq.producer_id = 3;
        assert_eq!(code(validate_records(&seq.build().unwrap(), &c)).0, 87);
        let legacy =
            build_legacy_message_set(1, CompressionType::None, 0, &[SimpleRecord::default()])
                .unwrap();
        assert_eq!(code(validate_records(&legacy, &c)).0, 87);
    }

    #[test]
    fn replication_is_shallow_and_ordered() {
        let c = ctx(AppendOrigin::Replication);
        let mut a = builder(CompressionType::None, 2);
        a.base_offset = 10;
        let mut b = builder(CompressionType::Zstd, 2);
        b.base_offset = 12;
        let mut buf = a.build().unwrap();
        buf.extend(b.build().unwrap());
        let partial = buf.len();
        // A torn write at the end: ignored, as Kafka trims it.
        buf.extend_from_slice(&a.build().unwrap()[..20]);
        let v = validate_records(&buf, &c).unwrap();
        assert_eq!(
            (v.batches.len(), v.records_count, v.total_size),
            (2, 4, partial)
        );
        assert_eq!(v.batches[1].position, partial - v.batches[1].size);
        let mut back = b.build().unwrap();
        back.extend(a.build().unwrap());
        assert_eq!(code(validate_records(&back, &c)).0, -1);
        assert!(validate_records(&[], &c).unwrap().batches.is_empty());
        // Coordinators write one batch at a time.
        assert_eq!(
            code(validate_records(
                &buf[..partial],
                &ctx(AppendOrigin::Coordinator)
            ))
            .0,
            87
        );
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            for origin in [AppendOrigin::Client, AppendOrigin::Coordinator, AppendOrigin::Replication] {
                let _ = validate_records(&bytes, &ctx(origin));
            }
        }
    }

    #[test]
    fn input_is_never_modified_and_garbage_never_panics() {
        let b = builder(CompressionType::Lz4, 3).build().unwrap();
        let copy = b.clone();
        let _ = validate_records(&b, &ctx(AppendOrigin::Client));
        assert_eq!(b, copy);
        for cut in 0..b.len() {
            let _ = validate_records(&b[..cut], &ctx(AppendOrigin::Client));
        }
        for i in 0..b.len() {
            let mut m = b.clone();
            m[i] ^= 0x5a;
            refresh_crc(&mut m);
            let _ = validate_records(&m, &ctx(AppendOrigin::Coordinator));
        }
    }
}
