//! Tests of the batch rebuild: fields kept, offsets and timestamps as Kafka's builder writes
//! them, a valid CRC, every codec and level decoding back to the same records, the cap.

use super::*;
use crate::protocol::record::batch::{NO_SEQUENCE, is_crc_valid};
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord, encode_record};
use crate::protocol::record::compression::decompress;
use crate::protocol::record::records::{RecordIter, batch_records};
use proptest::prelude::*;

const NOW: i64 = 1_700_000_000_000;

fn params(codec: CompressionType, level: i32) -> RebuildParams {
    RebuildParams {
        target: Compression { codec, level },
        timestamp_type: TimestampType::CreateTime,
        log_append_time: NOW,
        max_bytes: 1 << 24,
    }
}

/// (timestamp, key, value, headers) of every record, with absolute timestamps.
type Decoded = (
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Vec<u8>, Option<Vec<u8>>)>,
);

fn decode(batch: &[u8]) -> (RecordBatchHeader, Vec<Decoded>, Vec<i32>) {
    let h = RecordBatchHeader::parse(batch).unwrap();
    let records = batch_records(batch, &h, 1 << 26).unwrap();
    let mut out = Vec::new();
    let mut deltas = Vec::new();
    for r in RecordIter::new(&records, h.records_count) {
        let r = r.unwrap();
        deltas.push(r.offset_delta);
        let headers = r
            .headers()
            .map(|hd| (hd.key.to_vec(), hd.value.map(<[u8]>::to_vec)))
            .collect();
        out.push((
            r.timestamp(h.base_timestamp),
            r.key.map(<[u8]>::to_vec),
            r.value.map(<[u8]>::to_vec),
            headers,
        ));
    }
    (h, out, deltas)
}

fn sample(n: usize) -> RecordBatchBuilder {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    for i in 0..n {
        let mut r = SimpleRecord::new(
            NOW - 100 + (i as i64 * 7) % 13,
            (i % 3 != 0).then(|| format!("k{i}").into_bytes()),
            (i % 5 != 4).then(|| vec![b'v'; 40 + i]),
        );
        r.headers
            .push((format!("h{i}"), (i % 2 == 0).then(|| vec![i as u8])));
        b.records.push(r);
    }
    b.producer_id = 42;
    b.producer_epoch = 3;
    b.base_sequence = 17;
    b.is_transactional = true;
    b.partition_leader_epoch = 9;
    b
}

fn rebuild_of(src: &[u8], p: &RebuildParams) -> Vec<u8> {
    let h = RecordBatchHeader::parse(src).unwrap();
    let records = batch_records(src, &h, 1 << 26).unwrap();
    rebuild_batch(&h, &records, h.records_count, |d| h.base_timestamp + d, p).unwrap()
}

#[test]
fn every_codec_and_level_keeps_records_and_producer_fields() {
    let src_builder = sample(50);
    let src = src_builder.build().unwrap();
    let (_, want, _) = decode(&src);
    let levels: &[(CompressionType, &[i32])] = &[
        (CompressionType::None, &[0]),
        (CompressionType::Gzip, &[-1, 1, 9]),
        (CompressionType::Snappy, &[0]),
        (CompressionType::Lz4, &[1, 9, 17]),
        (CompressionType::Zstd, &[-5, 3, 19]),
    ];
    for (codec, levels) in levels {
        for &level in *levels {
            let out = rebuild_of(&src, &params(*codec, level));
            assert!(is_crc_valid(&out), "{codec} {level}");
            let (h, got, deltas) = decode(&out);
            assert_eq!(got, want, "{codec} {level}");
            assert_eq!(deltas, (0..50).collect::<Vec<_>>());
            assert_eq!(h.compression().unwrap(), *codec);
            assert_eq!(
                (h.producer_id, h.producer_epoch, h.base_sequence),
                (42, 3, 17)
            );
            assert!(h.is_transactional() && !h.is_control());
            assert_eq!(
                (h.partition_leader_epoch, h.base_offset, h.last_offset_delta),
                (9, 0, 49)
            );
            assert_eq!(h.records_count, 50);
            assert_eq!(h.base_timestamp, want[0].0);
            assert_eq!(h.max_timestamp, want.iter().map(|r| r.0).max().unwrap());
            assert_eq!(h.timestamp_type(), TimestampType::CreateTime);
            assert_eq!(h.size_in_bytes(), out.len());
        }
    }
}

#[test]
fn lz4_frames_are_kafkas_and_decode_with_lz4_flex() {
    // The frame header is the one lz4_flex writes for Kafka's frame settings.
    let flex = compress(CompressionType::Lz4, b"x").unwrap();
    assert_eq!(flex[..7], LZ4_FRAME_HEADER);
    // Incompressible data is stored in uncompressed blocks.
    let noise = noise(200_000);
    for level in [1, 9, 12] {
        let mut out = Vec::new();
        compress_into(
            Compression {
                codec: CompressionType::Lz4,
                level,
            },
            &noise,
            &mut out,
            1 << 20,
        )
        .unwrap();
        let mut dec = lz4_flex::frame::FrameDecoder::new(&out[..]);
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut dec, &mut back).unwrap();
        assert_eq!(back, noise);
        assert_eq!(
            decompress(CompressionType::Lz4, &out, noise.len()).unwrap(),
            noise
        );
    }
}

#[test]
fn log_append_time_sets_the_type_and_the_max_timestamp() {
    let src = sample(4).build().unwrap();
    let mut p = params(CompressionType::Zstd, 3);
    p.timestamp_type = TimestampType::LogAppendTime;
    let out = rebuild_of(&src, &p);
    let (h, got, _) = decode(&out);
    assert_eq!(h.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(h.max_timestamp, NOW);
    // The records keep their CreateTime deltas, as Kafka's builder writes them.
    assert_eq!(got[0].0, NOW - 100);
}

#[test]
fn records_get_fresh_deltas_and_the_first_timestamp_as_base() {
    // Offset deltas 5, 9 and a base timestamp far from the records'.
    let mut body = Vec::new();
    let r = SimpleRecord::new(0, Some(b"a".to_vec()), Some(b"b".to_vec()));
    encode_record(&mut body, 5, 1000, &r);
    encode_record(&mut body, 9, 400, &r);
    let mut h = RecordBatchHeader::parse(&sample(1).build().unwrap()).unwrap();
    h.base_timestamp = 10;
    h.producer_id = -1;
    h.base_sequence = NO_SEQUENCE;
    let out = rebuild_batch(&h, &body, 2, |d| 10 + d, &params(CompressionType::Gzip, -1)).unwrap();
    let (nh, got, deltas) = decode(&out);
    assert_eq!(deltas, vec![0, 1]);
    assert_eq!((nh.base_timestamp, nh.max_timestamp), (1010, 1010));
    assert_eq!((got[0].0, got[1].0), (1010, 410));
}

#[test]
fn output_and_scratch_are_capped() {
    let src = sample(200).build().unwrap();
    let h = RecordBatchHeader::parse(&src).unwrap();
    let records = batch_records(&src, &h, 1 << 26).unwrap();
    for codec in CompressionType::ALL {
        let mut p = params(codec, Compression::of(codec).level);
        p.max_bytes = 100;
        let err = rebuild_batch(&h, &records, 200, |d| h.base_timestamp + d, &p).unwrap_err();
        assert!(
            matches!(err, RecordError::DecompressedTooLarge { .. }),
            "{codec}: {err}"
        );
    }
    // Compressed output over the cap, the records under it.
    let zeros = vec![0u8; 4000];
    for codec in [
        CompressionType::Gzip,
        CompressionType::Lz4,
        CompressionType::Zstd,
        CompressionType::Snappy,
    ] {
        let mut out = Vec::new();
        let err = compress_into(Compression::of(codec), &noise(4000), &mut out, 3000).unwrap_err();
        assert!(
            matches!(err, RecordError::DecompressedTooLarge { .. }),
            "{codec}"
        );
        out.clear();
        compress_into(Compression::of(codec), &zeros, &mut out, 3000).unwrap();
        assert!(out.len() <= 3000);
    }
}

/// Incompressible bytes (xorshift64).
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn arb_record() -> impl Strategy<Value = SimpleRecord> {
    (
        0i64..1_000_000,
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
        proptest::collection::vec(
            (
                "[a-z]{0,5}",
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..8)),
            ),
            0..3,
        ),
    )
        .prop_map(|(ts, key, value, headers)| SimpleRecord {
            timestamp: ts,
            key,
            value,
            headers,
        })
}

proptest! {
    #[test]
    fn round_trip_from_any_codec_to_any_codec(
        records in proptest::collection::vec(arb_record(), 1..20),
        from in 0u8..5,
        to in 0u8..5,
    ) {
        let mut b = RecordBatchBuilder::new(CompressionType::from_id(from).unwrap());
        b.records = records;
        let src = b.build().unwrap();
        let (_, want, _) = decode(&src);
        let target = CompressionType::from_id(to).unwrap();
        let out = rebuild_of(&src, &params(target, Compression::of(target).level));
        prop_assert!(is_crc_valid(&out));
        let (h, got, deltas) = decode(&out);
        prop_assert_eq!(got, want);
        prop_assert_eq!(deltas, (0..h.records_count).collect::<Vec<_>>());
        prop_assert_eq!(h.compression().unwrap(), target);
    }
}
