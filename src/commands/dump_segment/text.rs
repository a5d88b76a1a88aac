//! Kafka's text format: the batch and record lines of `DumpLogSegments.printBatchLevel` and
//! `dumpLog`, byte for byte (field names, spacing, Java's `OptionalLong` and boolean spellings,
//! the stray `}` after a legacy record's crc).

use std::io::Write;

use super::offsets_decoder;
use super::segment::{BatchInfo, RecordView, SegmentError};
use crate::protocol::record::batch::TimestampType;
use crate::protocol::record::big_endian::{i16_at, i32_at};

/// What Kafka's `DefaultRecordBatch`/legacy batch `timestampType.toString` prints.
pub(crate) fn timestamp_type_name(t: TimestampType) -> &'static str {
    match t {
        TimestampType::NoTimestampType => "NoTimestampType",
        TimestampType::CreateTime => "CreateTime",
        TimestampType::LogAppendTime => "LogAppendTime",
    }
}

/// Java's `OptionalLong.toString`.
fn optional_long(v: Option<i64>) -> OptionalLong {
    OptionalLong(v)
}

struct OptionalLong(Option<i64>);

impl std::fmt::Display for OptionalLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(v) => write!(f, "OptionalLong[{v}]"),
            None => f.write_str("OptionalLong.empty"),
        }
    }
}

/// One batch line, `position` being the bytes of valid batches before it.
pub(crate) fn write_batch_line(out: &mut dyn Write, b: &BatchInfo) -> std::io::Result<()> {
    write_batch_head(out, b)?;
    writeln!(
        out,
        " position: {} {}: {} size: {} magic: {} compresscodec: {} crc: {} isvalid: {}",
        b.position,
        timestamp_type_name(b.timestamp_type),
        b.max_timestamp,
        b.size,
        b.magic,
        b.compression.name(),
        b.crc,
        b.is_valid,
    )
}

/// The first part of a batch line, the one Kafka prints before it reads the codec (and so what
/// it leaves behind when the codec id is unknown).
pub(crate) fn write_batch_head(out: &mut dyn Write, b: &BatchInfo) -> std::io::Result<()> {
    if b.magic >= 2 {
        write!(
            out,
            "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {}",
            b.base_offset,
            b.last_offset,
            b.count.unwrap_or(0),
            b.base_sequence,
            b.last_sequence,
            b.producer_id,
            b.producer_epoch,
            b.partition_leader_epoch,
            b.is_transactional,
            b.is_control,
            optional_long(b.delete_horizon_ms),
        )?;
    } else {
        write!(out, "offset: {}", b.last_offset)?;
    }
    Ok(())
}

/// What a control record's key and value say, as `DumpLogSegments` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ControlRecord {
    /// A transaction marker (type 0 abort, 1 commit) with its coordinator epoch.
    EndTxn {
        commit: bool,
        coordinator_epoch: i32,
    },
    /// Any other control type (KRaft's, or unknown) by id.
    Other { type_id: i16 },
}

impl ControlRecord {
    /// `ControlRecordType.parseTypeId` and `EndTransactionMarker.deserializeValue`.
    pub(crate) fn parse(rec: &RecordView<'_>) -> Result<Self, SegmentError> {
        let key = rec.key.ok_or_else(|| {
            SegmentError::Corrupt(format!(
                "control record at offset {} has a null key",
                rec.offset
            ))
        })?;
        if key.len() < 4 {
            return Err(SegmentError::Corrupt(format!(
                "Invalid value size found for end control record key. Must have at least 4 bytes, but found only {}",
                key.len()
            )));
        }
        let version = i16_at(key, 0);
        if version < 0 {
            return Err(SegmentError::Corrupt(format!(
                "Invalid version found for control record: {version}. May indicate data corruption"
            )));
        }
        let type_id = i16_at(key, 2);
        if type_id != 0 && type_id != 1 {
            return Ok(ControlRecord::Other { type_id });
        }
        let value = rec.value.ok_or_else(|| {
            SegmentError::Corrupt(format!(
                "end transaction marker at offset {} has a null value",
                rec.offset
            ))
        })?;
        if value.len() < 6 {
            return Err(SegmentError::Corrupt(format!(
                "Invalid value size found for end transaction marker. Must have at least 6 bytes, but found only {}",
                value.len()
            )));
        }
        let version = i16_at(value, 0);
        if version < 0 {
            return Err(SegmentError::Corrupt(format!(
                "Invalid version found for end transaction marker: {version}. May indicate data corruption"
            )));
        }
        Ok(ControlRecord::EndTxn {
            commit: type_id == 1,
            coordinator_epoch: i32_at(value, 2),
        })
    }

    /// `ControlRecordType`'s enum name.
    pub(crate) fn type_name(&self) -> &'static str {
        match *self {
            ControlRecord::EndTxn { commit: true, .. } => "COMMIT",
            ControlRecord::EndTxn { commit: false, .. } => "ABORT",
            ControlRecord::Other { type_id } => match type_id {
                0 => "ABORT",
                1 => "COMMIT",
                2 => "LEADER_CHANGE",
                3 => "SNAPSHOT_HEADER",
                4 => "SNAPSHOT_FOOTER",
                5 => "KRAFT_VERSION",
                6 => "KRAFT_VOTERS",
                _ => "UNKNOWN",
            },
        }
    }
}

/// Options of the record line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordLineOptions {
    pub skip_record_metadata: bool,
    pub print_data_log: bool,
    /// Keys and payloads as `__consumer_offsets` records.
    pub offsets_decoder: bool,
    /// Keys and payloads as `__transaction_state` records.
    pub transaction_log_decoder: bool,
}

/// One `| offset: …` record line (with `--skip-record-metadata`, only the key and payload).
pub(crate) fn write_record_line(
    out: &mut dyn Write,
    batch: &BatchInfo,
    rec: &RecordView<'_>,
    opts: RecordLineOptions,
) -> Result<(), SegmentError> {
    let mut prefix = "| ";
    if !opts.skip_record_metadata {
        write!(
            out,
            "{prefix}offset: {} {}: {} keySize: {} valueSize: {}",
            rec.offset,
            timestamp_type_name(batch.timestamp_type),
            rec.timestamp,
            rec.key_size,
            rec.value_size
        )?;
        prefix = " ";
        if batch.magic >= 2 {
            write!(out, " sequence: {} headerKeys: [", rec.sequence)?;
            for (i, (key, _)) in rec.headers().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_java_string(out, key)?;
            }
            out.write_all(b"]")?;
        }
        if let Some(legacy) = rec.legacy {
            write!(out, " isValid: {} crc: {}}}", legacy.is_valid, legacy.crc)?;
        }
        // Kafka reads the control record only now, after printing the rest of the metadata.
        let control = match batch
            .is_control
            .then(|| ControlRecord::parse(rec))
            .transpose()
        {
            Ok(c) => c,
            Err(e) => {
                out.write_all(b"\n")?;
                return Err(e);
            }
        };
        match control {
            Some(
                c @ ControlRecord::EndTxn {
                    coordinator_epoch, ..
                },
            ) => write!(
                out,
                " endTxnMarker: {} coordinatorEpoch: {coordinator_epoch}",
                c.type_name()
            )?,
            Some(c @ ControlRecord::Other { type_id }) => {
                write!(out, " controlType: {}({type_id})", c.type_name())?
            }
            None => {}
        }
    }
    if opts.print_data_log && !batch.is_control {
        // Kafka has printed the metadata when reading the bytes fails; end that line.
        if let Err(e) = rec.check_data() {
            out.write_all(b"\n")?;
            return Err(e);
        }
        if opts.offsets_decoder || opts.transaction_log_decoder {
            // Kafka's tool dies on a keyless record, its line left unterminated.
            let decoded = if opts.offsets_decoder {
                offsets_decoder::decode(rec.offset, rec.key, rec.value)?
            } else {
                super::transaction_log_decoder::decode(rec.offset, rec.key, rec.value)?
            };
            write!(out, "{prefix}key: {}", decoded.key)?;
            if let Some(payload) = decoded.payload {
                write!(out, " payload: {payload}")?;
            }
        } else {
            if let Some(key) = rec.key {
                write!(out, "{prefix}key: ")?;
                write_java_string(out, key)?;
            }
            if let Some(value) = rec.value {
                out.write_all(b" payload: ")?;
                write_java_string(out, value)?;
            }
        }
    }
    out.write_all(b"\n")?;
    Ok(())
}

/// Bytes as Java's `new String(bytes, UTF_8)` then printed as UTF-8: valid UTF-8 unchanged,
/// each malformed sequence replaced by U+FFFD.
pub(crate) fn write_java_string(out: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    match std::str::from_utf8(bytes) {
        Ok(_) => out.write_all(bytes),
        Err(_) => out.write_all(String::from_utf8_lossy(bytes).as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::compression::CompressionType;

    fn v2_batch() -> BatchInfo {
        BatchInfo {
            position: 0,
            size: 131,
            magic: 2,
            base_offset: 0,
            last_offset: 0,
            count: Some(1),
            base_sequence: -1,
            last_sequence: -1,
            producer_id: -1,
            producer_epoch: -1,
            partition_leader_epoch: 0,
            is_transactional: false,
            is_control: false,
            delete_horizon_ms: None,
            timestamp_type: TimestampType::CreateTime,
            max_timestamp: 1739569505569,
            compression: CompressionType::None,
            unknown_compression: None,
            crc: 90285099,
            is_valid: true,
        }
    }

    #[test]
    fn v2_batch_line_matches_kafka() {
        let mut out = Vec::new();
        write_batch_line(&mut out, &v2_batch()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1739569505569 size: 131 magic: 2 compresscodec: none crc: 90285099 isvalid: true\n"
        );
    }

    #[test]
    fn legacy_batch_line_starts_with_the_offset() {
        let mut b = v2_batch();
        b.magic = 0;
        b.last_offset = 7;
        b.timestamp_type = TimestampType::NoTimestampType;
        b.max_timestamp = -1;
        b.delete_horizon_ms = Some(5);
        let mut out = Vec::new();
        write_batch_line(&mut out, &b).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "offset: 7 position: 0 NoTimestampType: -1 size: 131 magic: 0 compresscodec: none crc: 90285099 isvalid: true\n"
        );
    }

    #[test]
    fn optional_long_is_javas() {
        assert_eq!(optional_long(Some(12)).to_string(), "OptionalLong[12]");
        assert_eq!(optional_long(None).to_string(), "OptionalLong.empty");
    }

    #[test]
    fn malformed_utf8_is_replaced() {
        let mut out = Vec::new();
        write_java_string(&mut out, b"a\xffb").unwrap();
        assert_eq!(out, "a\u{fffd}b".as_bytes());
    }
}
