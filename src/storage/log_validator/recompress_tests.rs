//! Tests of the leader's rebuild: when a batch is rebuilt and when it is kept, what the rebuilt
//! batch holds, and the errors on the way.

use super::super::tests::{NOW, builder, code, ctx, producer_set_log_append_time};
use super::super::*;
use crate::protocol::record::batch::is_crc_valid;
use crate::protocol::record::builder::{
    ControlRecordType, RecordBatchBuilder, SimpleRecord, build_control_batch, encode_record,
};
use crate::protocol::record::compression::CompressionType;
use crate::protocol::record::rebuild::Compression;
use crate::protocol::record::records::{RecordIter, batch_records};

fn to(codec: CompressionType) -> ValidationContext {
    let mut c = ctx(AppendOrigin::Client);
    c.target_compression = Some(Compression::of(codec));
    c
}

/// (timestamp, key, value) of a record.
type Decoded = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// Each record and the offset deltas.
fn records_of(batch: &[u8]) -> (Vec<Decoded>, Vec<i32>) {
    let h = RecordBatchHeader::parse(batch).unwrap();
    let records = batch_records(batch, &h, 1 << 24).unwrap();
    RecordIter::new(&records, h.records_count)
        .map(|r| {
            let r = r.unwrap();
            (
                (
                    r.timestamp(h.base_timestamp),
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                ),
                r.offset_delta,
            )
        })
        .unzip()
}

#[test]
fn every_codec_to_every_target_is_rebuilt_unless_they_match() {
    for from in CompressionType::ALL {
        let mut b = builder(from, 6);
        b.producer_id = 7;
        b.producer_epoch = 2;
        b.base_sequence = 40;
        let src = b.build().unwrap();
        let (want, _) = records_of(&src);
        for target in CompressionType::ALL {
            let v = validate_records(&src, &to(target)).unwrap();
            let vb = &v.batches[0];
            if from == target {
                assert_eq!(vb.rebuilt, None, "{from} -> {target}");
                assert_eq!(vb.bytes(&src), &src[..]);
                continue;
            }
            let out = vb.rebuilt.as_deref().unwrap();
            assert!(is_crc_valid(out));
            assert_eq!(vb.bytes(&src), out);
            assert_eq!(vb.size, out.len());
            let h = RecordBatchHeader::parse(out).unwrap();
            assert_eq!(h, vb.header);
            assert_eq!(h.compression().unwrap(), target);
            assert_eq!(
                (h.producer_id, h.producer_epoch, h.base_sequence),
                (7, 2, 40)
            );
            assert_eq!(records_of(out).0, want, "{from} -> {target}");
            // Timestamps NOW-10 + {0,3,6,2,5}: the max is NOW-4, and Kafka's rebuilt batch
            // reports its last offset for it.
            assert_eq!(
                (vb.max_timestamp, vb.offset_delta_of_max_timestamp),
                (NOW - 4, 5)
            );
            assert_eq!(h.max_timestamp, NOW - 4);
            assert_eq!(v.records_count, 6);
        }
    }
}

#[test]
fn producer_keeps_batches_zero_copy() {
    for codec in CompressionType::ALL {
        let src = builder(codec, 3).build().unwrap();
        let v = validate_records(&src, &ctx(AppendOrigin::Client)).unwrap();
        assert_eq!(v.batches[0].rebuilt, None);
    }
}

#[test]
fn log_append_time_targets_stamp_the_broker_clock() {
    let mut c = to(CompressionType::Gzip);
    c.timestamp_type = TimestampType::LogAppendTime;
    let src = builder(CompressionType::None, 3).build().unwrap();
    let v = validate_records(&src, &c).unwrap();
    let vb = &v.batches[0];
    assert_eq!(vb.header.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(
        (
            vb.header.max_timestamp,
            vb.max_timestamp,
            vb.offset_delta_of_max_timestamp
        ),
        (NOW, NOW, 2)
    );
}

#[test]
fn compressed_batches_with_offset_gaps_are_rebuilt_as_kafka_does() {
    let r = SimpleRecord::new(NOW, Some(b"k".to_vec()), Some(b"v".to_vec()));
    let mut body = Vec::new();
    encode_record(&mut body, 3, 0, &r);
    encode_record(&mut body, 8, 1, &r);
    let gapped = |codec| {
        let mut b = RecordBatchBuilder::new(codec);
        b.records = vec![r.clone(), r.clone()];
        let mut batch = b.build().unwrap();
        // Swap in the gapped records, recompressed.
        batch.truncate(61);
        let z = crate::protocol::record::compression::compress(codec, &body).unwrap();
        batch.extend_from_slice(&z);
        let len = (batch.len() - 12) as i32;
        batch[8..12].copy_from_slice(&len.to_be_bytes());
        super::super::tests::refresh_crc(&mut batch);
        batch
    };
    // Under `producer`: rebuilt at the batch's own codec, deltas 0, 1.
    let src = gapped(CompressionType::Lz4);
    let v = validate_records(&src, &ctx(AppendOrigin::Client)).unwrap();
    let out = v.batches[0].rebuilt.as_deref().unwrap();
    assert_eq!(
        RecordBatchHeader::parse(out)
            .unwrap()
            .compression()
            .unwrap(),
        CompressionType::Lz4
    );
    assert_eq!(records_of(out).1, vec![0, 1]);
    // Under a matching target too, and an uncompressed source to a codec.
    let v = validate_records(&src, &to(CompressionType::Lz4)).unwrap();
    assert_eq!(records_of(v.batches[0].bytes(&src)).1, vec![0, 1]);
    let plain = gapped(CompressionType::None);
    let v = validate_records(&plain, &to(CompressionType::Zstd)).unwrap();
    assert_eq!(records_of(v.batches[0].bytes(&plain)).1, vec![0, 1]);
    // An uncompressed batch kept as it is must be in order (kcli's own rule).
    assert_eq!(
        code(validate_records(&plain, &ctx(AppendOrigin::Client))).0,
        87
    );
    assert_eq!(
        code(validate_records(&plain, &to(CompressionType::None))).0,
        87
    );
}

#[test]
fn a_rebuilt_batch_over_max_message_bytes_is_too_large() {
    // Incompressible values grow under gzip's framing.
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    let mut x = 1u64;
    let value: Vec<u8> = (0..2000)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) as u8
        })
        .collect();
    b.records.push(SimpleRecord::new(NOW, None, Some(value)));
    let src = b.build().unwrap();
    let mut c = to(CompressionType::Gzip);
    c.max_message_bytes = src.len();
    let (k, m) = code(validate_records_for(&src, &c, "t-0"));
    assert_eq!(k, 10);
    assert!(
        m.starts_with("Message batch size is ")
            && m.ends_with(&format!(
                " bytes in append topartition t-0 which exceeds the maximum configured size of {}.",
                src.len()
            )),
        "{m}"
    );
}

#[test]
fn record_errors_while_rebuilding_describe_default_records() {
    let mut c = to(CompressionType::Snappy);
    c.timestamp_type = TimestampType::LogAppendTime;
    let e = producer_set_log_append_time(CompressionType::Gzip, &c);
    assert!(
        e.record_errors()[0]
            .1
            .contains("message DefaultRecord(offset=0"),
        "{:?}",
        e.record_errors()
    );
    // A compacted topic still needs keys, and a bomb is still capped.
    let mut c = to(CompressionType::Lz4);
    c.compacted = true;
    let e = validate_records(&builder(CompressionType::Zstd, 3).build().unwrap(), &c);
    assert_eq!(code(e).0, 87);
    let mut c = to(CompressionType::Lz4);
    c.max_decompressed_bytes = 100;
    let e = validate_records(&builder(CompressionType::Zstd, 30).build().unwrap(), &c);
    assert_eq!(code(e).0, 2);
}

#[test]
fn uncompressed_control_batches_are_kept() {
    let control = build_control_batch(ControlRecordType::Commit, 0, 0, 1, 0, 0, NOW).unwrap();
    let mut c = to(CompressionType::Gzip);
    c.origin = AppendOrigin::Coordinator;
    let v = validate_records(&control, &c).unwrap();
    assert_eq!(v.batches[0].rebuilt, None);
}
