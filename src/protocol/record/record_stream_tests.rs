//! Tests of the streaming record walk: it must give exactly the in-memory walk's answer (records,
//! errors, positions) for every codec, hold no more than its window, and stop bombs at the cap.

use std::io::Write;

use super::*;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord, encode_record};
use crate::protocol::record::compression::compress;
use crate::protocol::record::records::{batch_records, for_each_record};
use proptest::prelude::*;

const STREAMED: [CompressionType; 3] = [
    CompressionType::Gzip,
    CompressionType::Lz4,
    CompressionType::Zstd,
];

/// A walk's answer: the summaries, or whether the batch (not a record) failed and the message.
type Outcome = Result<Vec<RecordSummary>, (bool, String)>;

fn split(e: WalkError) -> (bool, String) {
    match e {
        WalkError::Batch(e) => (true, e.to_string()),
        WalkError::Records(e) => (false, e.to_string()),
    }
}

/// The reference: inflate everything, then walk in memory.
fn in_memory(codec: CompressionType, data: &[u8], count: i32, max: usize) -> Outcome {
    let raw = decompress(codec, data, max).map_err(|e| (true, e.to_string()))?;
    let mut out = Vec::new();
    for_each_record(&raw, count, |_, r| out.push(RecordSummary::from(r)))
        .map_err(|e| (false, e.to_string()))?;
    Ok(out)
}

fn streamed(codec: CompressionType, data: &[u8], count: i32, max: usize) -> Outcome {
    let mut out = Vec::new();
    let mut indexes_in_order = true;
    for_each_compressed_record(codec, data, count, max, |i, r| {
        indexes_in_order &= i as usize == out.len();
        out.push(*r);
        ControlFlow::Continue(())
    })
    .map_err(split)?;
    assert!(indexes_in_order);
    Ok(out)
}

/// Compresses `raw` and checks that both walks agree on it; returns the outcome.
fn agree(codec: CompressionType, raw: &[u8], count: i32) -> Outcome {
    let z = compress(codec, raw).unwrap();
    let max = raw.len().max(1) * 2;
    let expected = in_memory(codec, &z, count, max);
    assert_eq!(streamed(codec, &z, count, max), expected, "{codec}");
    expected
}

fn rec(key: Option<Vec<u8>>, value: Option<Vec<u8>>, headers: usize) -> SimpleRecord {
    let mut r = SimpleRecord::new(1_000 + headers as i64, key, value);
    r.headers = (0..headers)
        .map(|i| (format!("h{i}"), (i % 2 == 0).then(|| vec![i as u8; i * 7])))
        .collect();
    r
}

fn body(records: &[SimpleRecord]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        encode_record(&mut out, i as i32, r.timestamp, r);
    }
    out
}

/// Bytes that compress poorly, so a record's value really crosses window refills.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (s >> 56) as u8
        })
        .collect()
}

#[test]
fn every_codec_walks_builder_batches_like_memory() {
    for codec in CompressionType::ALL {
        let mut b = RecordBatchBuilder::new(codec);
        b.records = (0..50)
            .map(|i| {
                rec(
                    (i % 3 != 0).then(|| vec![i as u8; 3]),
                    Some(vec![7; i * 11]),
                    i % 4,
                )
            })
            .collect();
        let bytes = b.build().unwrap();
        let h = RecordBatchHeader::parse(&bytes).unwrap();
        let raw = batch_records(&bytes, &h, 1 << 20).unwrap();
        let mut expected = Vec::new();
        for_each_record(&raw, h.records_count, |_, r| {
            expected.push(RecordSummary::from(r))
        })
        .unwrap();
        let mut got = Vec::new();
        for_each_batch_record(&bytes, &h, 1 << 20, |_, r| {
            got.push(*r);
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(got, expected, "{codec}");
        assert_eq!(got[1].key_len, 3);
        assert_eq!(
            (got[0].key_len, got[0].value_len, got[3].header_count),
            (-1, 0, 3)
        );
    }
}

#[test]
fn records_larger_than_the_window_stream_through() {
    // Values well past WINDOW, values just around WHOLE_RECORD_MAX, and small records between,
    // so records start and end at every kind of refill boundary.
    let mut records = Vec::new();
    for (i, len) in [
        300_000usize,
        10,
        WHOLE_RECORD_MAX - 20,
        WHOLE_RECORD_MAX,
        70_000,
        5,
    ]
    .into_iter()
    .enumerate()
    {
        let key = Some(noise(if i == 4 { 40_000 } else { 8 }, i as u64));
        records.push(rec(key, Some(noise(len, 100 + i as u64)), i));
    }
    // A large header value too.
    records[5]
        .headers
        .push(("big".into(), Some(noise(100_000, 9))));
    records.extend((0..200).map(|i| rec(None, Some(noise(1000 + i * 37, i as u64)), 1)));
    let raw = body(&records);
    for codec in STREAMED {
        let got = agree(codec, &raw, records.len() as i32).unwrap();
        assert_eq!(got.len(), records.len());
        assert_eq!(got[0].value_len, 300_000);
        assert_eq!(got[4].key_len, 40_000);
        assert_eq!(got[5].header_count, 6);
        assert_eq!(
            got.iter().map(|r| r.size_in_bytes).sum::<usize>(),
            raw.len()
        );
    }
}

#[test]
fn the_window_stays_small_however_large_the_records() {
    let records = vec![
        rec(None, Some(noise(3 << 20, 1)), 0),
        rec(None, Some(vec![0; 20 << 20]), 2),
    ];
    let raw = body(&records);
    for codec in STREAMED {
        let z = compress(codec, &raw).unwrap();
        let mut s = Inflating::new(codec, &z, 64 << 20).unwrap();
        let mut seen = 0;
        s.walk(2, |_, _| {
            seen += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(seen, 2);
        // One 64 KiB lz4 block plus the unread tail of a record, or the reading window.
        assert!(
            s.buf.capacity() <= 128 << 10,
            "{codec}: {}",
            s.buf.capacity()
        );
    }
}

#[test]
fn bombs_past_the_cap_are_batch_errors() {
    let raw = body(&[rec(None, Some(vec![0; 2 << 20]), 0)]);
    for codec in STREAMED {
        let z = compress(codec, &raw).unwrap();
        assert!(z.len() < 16 << 10, "{codec}");
        let e =
            for_each_compressed_record(codec, &z, 1, 256 << 10, |_, _| ControlFlow::Continue(()))
                .unwrap_err();
        assert!(
            matches!(e, WalkError::Batch(RecordError::DecompressedTooLarge { limit, .. }) if limit == 256 << 10),
            "{codec}: {e}"
        );
        assert_eq!(
            streamed(codec, &z, 1, 256 << 10),
            in_memory(codec, &z, 1, 256 << 10)
        );
        // Exactly at the cap is allowed.
        assert!(streamed(codec, &z, 1, raw.len()).is_ok());
        assert!(streamed(codec, &z, 1, raw.len() - 1).is_err());
    }
}

#[test]
fn a_bomb_wins_over_an_earlier_record_error() {
    // Record 0 has a bad offset-free structure (count says 2, second record truncated) but the
    // stream then inflates past the cap: the in-memory walk never gets to the records.
    let mut raw = body(&[rec(None, Some(vec![1; 10]), 0)]);
    raw.push(0x7f); // a record length, then a huge run of zeros
    raw.extend(vec![0; 4 << 20]);
    for codec in STREAMED {
        let z = compress(codec, &raw).unwrap();
        let got = streamed(codec, &z, 2, 1 << 20);
        assert_eq!(got, in_memory(codec, &z, 2, 1 << 20));
        assert!(got.unwrap_err().0, "{codec}");
    }
}

#[test]
fn truncated_and_garbage_streams_are_batch_errors() {
    let raw = body(
        &(0..20)
            .map(|i| rec(None, Some(noise(500, i)), 1))
            .collect::<Vec<_>>(),
    );
    for codec in STREAMED {
        let z = compress(codec, &raw).unwrap();
        for cut in [1, z.len() / 2, z.len() - 1] {
            let got = streamed(codec, &z[..cut], 20, 1 << 20);
            assert!(
                got.as_ref().is_err_and(|e| e.0),
                "{codec} cut at {cut}: {got:?}"
            );
            assert!(in_memory(codec, &z[..cut], 20, 1 << 20).is_err());
        }
        let got = streamed(codec, b"definitely not compressed", 1, 1 << 20);
        assert!(got.as_ref().is_err_and(|e| e.0), "{codec}: {got:?}");
        // Trailing garbage after a valid stream.
        let mut tail = z.clone();
        tail.extend_from_slice(b"junk after the stream");
        let got = streamed(codec, &tail, 20, 1 << 20);
        assert!(got.as_ref().is_err_and(|e| e.0), "{codec}: {got:?}");
        assert_eq!(got, in_memory(codec, &tail, 20, 1 << 20));
    }
}

#[test]
fn malformed_records_give_the_in_memory_errors() {
    let small = body(&[rec(Some(b"k".to_vec()), Some(b"v".to_vec()), 1)]);
    let large = body(&[rec(Some(b"k".to_vec()), Some(noise(100_000, 3)), 2)]);
    let mut cases: Vec<(Vec<u8>, i32)> = vec![
        (small.clone(), 2),  // premature EOF
        (small.clone(), 0),  // records still remaining
        (small.clone(), -1), // invalid count
        (Vec::new(), 1),
        (vec![0x01], 1),                         // size -1
        (vec![0xff, 0xff, 0xff, 0xff, 0xff], 1), // varint too long
        (vec![0x80], 1),                         // varint truncated
    ];
    for (raw, framing) in [(&small, 40), (&large, 14)] {
        // Truncations, and byte changes in the record's framing (its head, and its headers).
        for cut in (0..raw.len()).step_by(1 + raw.len() / 40) {
            cases.push((raw[..cut].to_vec(), 1));
        }
        let tail = raw.len().saturating_sub(framing);
        for i in (0..framing.min(raw.len())).chain(tail..raw.len()) {
            for v in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                let mut m = raw.clone();
                m[i] = v;
                cases.push((m, 1));
            }
        }
    }
    // A large record whose length claims more than the stream holds.
    let mut short = large.clone();
    short.truncate(large.len() - 10);
    cases.push((short, 1));
    let mut messages = std::collections::BTreeSet::new();
    for (raw, count) in cases {
        for codec in STREAMED {
            if let Err((false, m)) = agree(codec, &raw, count) {
                // Positions vary; the kinds of problem should not.
                messages.insert(m.split_once(": ").map_or(m.clone(), |(_, r)| r.to_string()));
            }
        }
    }
    for kind in [
        "premature EOF",
        "records still remaining",
        "invalid record count",
        "Invalid record size: expected -1 bytes",
        "is too long",
        "runs past the end",
        "but instead read",
        "header key of",
        "Invalid negative header key size",
        "invalid number of record headers",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(kind)),
            "{kind} not seen in {messages:#?}"
        );
    }
}

#[test]
fn break_stops_the_walk() {
    let raw = body(
        &(0..10)
            .map(|i| rec(None, Some(vec![i; 5]), 0))
            .collect::<Vec<_>>(),
    );
    for codec in CompressionType::ALL {
        let z = compress(codec, &raw).unwrap();
        let mut seen = Vec::new();
        // A count that does not match: the walk stops before it would notice.
        for_each_compressed_record(codec, &z, 12, 1 << 20, |i, _| {
            seen.push(i);
            if i == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
        assert_eq!(seen, vec![0, 1, 2, 3], "{codec}");
    }
}

#[test]
fn lz4_frames_the_direct_decoder_leaves_are_read_generally() {
    use lz4_flex::frame::{BlockMode, FrameEncoder, FrameInfo};
    let records: Vec<_> = (0..300)
        .map(|i| rec(None, Some(noise(700, i)), 1))
        .collect();
    let raw = body(&records);
    let frame = |data: &[u8], mode: BlockMode| {
        let mut enc = FrameEncoder::with_frame_info(FrameInfo::new().block_mode(mode), Vec::new());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    };
    // A linked frame alone, and an independent frame followed by a linked one.
    let linked = frame(&raw, BlockMode::Linked);
    let (head, tail) = raw.split_at(100_000);
    let mut mixed = frame(head, BlockMode::Independent);
    mixed.extend(frame(tail, BlockMode::Linked));
    for z in [linked, mixed] {
        let codec = CompressionType::Lz4;
        let got = streamed(codec, &z, 300, 1 << 20);
        assert_eq!(got, in_memory(codec, &z, 300, 1 << 20));
        assert_eq!(got.unwrap().len(), 300);
    }
}

#[test]
fn zstd_without_content_size_and_gzip_members_stream() {
    let raw = body(
        &(0..100)
            .map(|i| rec(None, Some(noise(900, i)), 0))
            .collect::<Vec<_>>(),
    );
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.include_contentsize(false).unwrap();
    enc.write_all(&raw).unwrap();
    let z = enc.finish().unwrap();
    assert_eq!(
        streamed(CompressionType::Zstd, &z, 100, 1 << 20)
            .unwrap()
            .len(),
        100
    );
    let (a, b) = raw.split_at(raw.len() / 3);
    let mut g = compress(CompressionType::Gzip, a).unwrap();
    g.extend(compress(CompressionType::Gzip, b).unwrap());
    assert_eq!(
        streamed(CompressionType::Gzip, &g, 100, 1 << 20),
        in_memory(CompressionType::Gzip, &g, 100, 1 << 20)
    );
}

#[test]
fn zstd_windows_beyond_the_limit_are_batch_errors_in_the_stream_too() {
    let raw = body(&[rec(None, Some(noise(900, 1)), 0)]);
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.include_contentsize(false).unwrap();
    enc.window_log(crate::protocol::record::compression::ZSTD_WINDOW_LOG_MAX + 1)
        .unwrap();
    enc.write_all(&raw).unwrap();
    let z = enc.finish().unwrap();
    let (batch_level, message) = streamed(CompressionType::Zstd, &z, 1, 256 << 20).unwrap_err();
    assert!(batch_level, "{message}");
    assert!(message.contains("too much memory"), "{message}");
    assert_eq!(
        in_memory(CompressionType::Zstd, &z, 1, 256 << 20),
        Err((true, message))
    );
}

#[test]
fn batch_level_problems_are_batch_errors() {
    let bytes = RecordBatchBuilder::new(CompressionType::Zstd)
        .build()
        .unwrap();
    let h = RecordBatchHeader::parse(&bytes).unwrap();
    let go = |b: &[u8], h: &RecordBatchHeader| {
        for_each_batch_record(b, h, 1 << 20, |_, _| ControlFlow::Continue(()))
    };
    assert!(matches!(
        go(&bytes[..bytes.len() - 1], &h),
        Err(WalkError::Batch(_))
    ));
    let mut unknown = h;
    unknown.attributes |= 0x07;
    assert!(matches!(go(&bytes, &unknown), Err(WalkError::Batch(_))));
    assert!(go(&bytes, &h).is_ok());
}

fn arb_record(big: bool) -> impl Strategy<Value = SimpleRecord> {
    let max: usize = if big { 90_000 } else { 60 };
    let bytes = move || proptest::option::of((0..max, any::<u64>()).prop_map(|(n, s)| noise(n, s)));
    let header = (
        "[a-c]{0,2}",
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..30)),
    );
    (
        -5i64..5_000_000_000_000,
        bytes(),
        bytes(),
        proptest::collection::vec(header, 0..4),
    )
        .prop_map(|(timestamp, key, value, headers)| SimpleRecord {
            timestamp,
            key,
            value,
            headers,
        })
}

proptest! {
    #[test]
    fn streaming_agrees_with_memory_on_builder_batches(
        records in proptest::collection::vec(arb_record(false), 0..40),
        id in 0u8..5,
    ) {
        let codec = CompressionType::from_id(id).unwrap();
        let mut b = RecordBatchBuilder::new(codec);
        b.records = records;
        let bytes = b.build().unwrap();
        let h = RecordBatchHeader::parse(&bytes).unwrap();
        let raw = batch_records(&bytes, &h, 1 << 24).unwrap();
        let mut expected = Vec::new();
        for_each_record(&raw, h.records_count, |_, r| expected.push(RecordSummary::from(r))).unwrap();
        let mut got = Vec::new();
        for_each_batch_record(&bytes, &h, 1 << 24, |_, r| {
            got.push(*r);
            ControlFlow::Continue(())
        })
        .unwrap();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn streaming_agrees_with_memory_on_large_records(
        records in proptest::collection::vec(arb_record(true), 1..5),
        id in 0usize..3,
    ) {
        let raw = body(&records);
        prop_assert!(agree(STREAMED[id], &raw, records.len() as i32).is_ok());
    }

    #[test]
    fn streaming_agrees_with_memory_on_damaged_records(
        records in proptest::collection::vec(arb_record(false), 1..6),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        count_change in -1i32..2,
        id in 0usize..3,
    ) {
        let mut raw = body(&records);
        for (at, v) in edits {
            let i = at.index(raw.len());
            raw[i] = v;
        }
        if count_change != 0 {
            raw.truncate(cut.index(raw.len() + 1));
        }
        agree(STREAMED[id], &raw, records.len() as i32 + count_change).ok();
    }

    #[test]
    fn garbage_is_refused_as_in_memory(
        data in proptest::collection::vec(any::<u8>(), 0..300),
        id in 0usize..3,
        count in -1i32..4,
    ) {
        let codec = STREAMED[id];
        let got = streamed(codec, &data, count, 4096);
        match in_memory(codec, &data, count, 4096) {
            // Both read the stream with the same decoders, but codec messages are not compared:
            // where a decoder stops reading garbage is its own business.
            Err((true, _)) => prop_assert!(matches!(got, Err((true, _))), "{:?}", got),
            expected => prop_assert_eq!(got, expected),
        }
    }
}
