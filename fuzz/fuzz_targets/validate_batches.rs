//! Fuzzes what a produce request's records go through before they reach the log: legacy
//! message sets (magic 0/1) up-converted as Produce v0-2 has them, then the log validator for a
//! leader, follower or coordinator append, with every topic codec. Any bytes must be accepted
//! or refused with a Kafka error code, never panic or allocate past the validator's cap; and
//! what is accepted must be what the log would write safely:
//! - every batch the log would write has a valid CRC-32C and lies inside the input (or is the
//!   validator's own rebuild);
//! - a batch the leader rebuilt for the topic's codec is accepted by a follower, and on a
//!   `CreateTime` topic validates again, unchanged, as a client batch of that codec.
//!
//! Input: one flags byte, then the records. Flags: bits 0-1 the origin (client, replication,
//! coordinator), bit 2 a compacted topic, bit 3 `LogAppendTime`, bits 4-6 the topic's
//! `compression.type` (0 `producer`, 1-5 none, gzip, snappy, lz4, zstd), bit 7 legacy: the
//! records are a Produce v0-2 message set.

#![no_main]

use kcli::protocol::errors::ErrorCode;
use kcli::protocol::record::batch::{TimestampType, is_crc_valid};
use kcli::protocol::record::compression::CompressionType;
use kcli::protocol::record::convert::message_set_to_batch;
use kcli::protocol::record::rebuild::Compression;
use kcli::storage::log_validator::{AppendOrigin, ValidationContext, validate_records};
use libfuzzer_sys::fuzz_target;

const NOW_MS: i64 = 1_700_000_000_000;

fn context(flags: u8) -> ValidationContext {
    let origin = match flags & 0b11 {
        0 | 3 => AppendOrigin::Client,
        1 => AppendOrigin::Replication,
        _ => AppendOrigin::Coordinator,
    };
    let target_compression = match (flags >> 4) & 0b111 {
        0 | 6 | 7 => None,
        n => CompressionType::from_id(n - 1).ok().map(Compression::of),
    };
    ValidationContext {
        origin,
        compacted: flags & 0b100 != 0,
        timestamp_type: if flags & 0b1000 != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        },
        now_ms: NOW_MS,
        timestamp_before_max_ms: i64::MAX,
        timestamp_after_max_ms: 3_600_000,
        max_message_bytes: 1 << 20,
        max_decompressed_bytes: 8 << 20,
        target_compression,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, records)) = data.split_first() else {
        return;
    };
    let ctx = context(flags);
    let converted;
    let records = if flags & 0x80 != 0 {
        match message_set_to_batch(records) {
            Ok(batch) => {
                assert!(is_crc_valid(&batch), "an up-converted batch has a bad CRC");
                converted = batch;
                &converted[..]
            }
            Err(e) => {
                assert_ne!(
                    e.code,
                    ErrorCode::None,
                    "a refused message set needs an error code"
                );
                return;
            }
        }
    } else {
        records
    };
    let validated = match validate_records(records, &ctx) {
        Ok(v) => v,
        Err(e) => {
            assert_ne!(e.error_code(), ErrorCode::None);
            return;
        }
    };
    assert!(validated.total_size <= records.len());
    for batch in &validated.batches {
        let bytes = batch.bytes(records);
        assert!(
            is_crc_valid(bytes),
            "the log would write a batch with a bad CRC"
        );
        match &batch.rebuilt {
            None => assert_eq!(
                bytes.len(),
                batch.size,
                "a kept batch lies outside the input"
            ),
            Some(rebuilt) => {
                // A follower takes the rebuilt batch as the leader wrote it.
                let follower = ValidationContext {
                    origin: AppendOrigin::Replication,
                    ..ctx.clone()
                };
                if let Err(e) = validate_records(rebuilt, &follower) {
                    panic!("a follower refuses a rebuilt batch: {e}");
                }
                // On a CreateTime topic the rebuild is also a batch a producer could send.
                if ctx.origin == AppendOrigin::Client
                    && ctx.timestamp_type == TimestampType::CreateTime
                {
                    let again = validate_records(rebuilt, &ctx)
                        .unwrap_or_else(|e| panic!("a rebuilt batch is refused: {e}"));
                    assert!(
                        again.batches.iter().all(|b| b.rebuilt.is_none()),
                        "a rebuilt batch is rebuilt again"
                    );
                }
            }
        }
    }
});
