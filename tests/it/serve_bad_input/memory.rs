//! The broker's memory under hostile input: a storm of bad frames and held partial frames, and
//! decompression bombs (small zstd batches that inflate to hundreds of MiB).

use super::*;

/// A storm from several threads at once: random bytes, hostile counts, oversized prefixes,
/// truncated frames, and 20 connections that each declare a frame of the full
/// `socket.request.max.bytes` (100 MiB) but send only 64 KiB and hold on. The broker's VmRSS
/// stays under 200 MB while they hold on and after, and it answers correctly afterwards.
#[test]
fn a_storm_of_hostile_frames_keeps_memory_bounded() {
    let mut broker = TestBroker::start(&[]);
    let port = broker.port();
    let expected = advertised(port);
    let rss_before = broker.vm_rss_kib();
    let started = Instant::now();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut g = Gen::new(0x5eed_0000 + t);
                let hostile = hostile_count_frames();
                for i in 0..150 {
                    let bytes: Vec<u8> = match i % 3 {
                        0 => {
                            let n = 1 + g.below(64 * 1024) as usize;
                            (0..n).map(|_| g.next() as u8).collect()
                        }
                        1 => hostile[g.below(hostile.len() as u64) as usize].1.clone(),
                        _ => {
                            // A random size prefix, then some random bytes.
                            let mut b = (g.next() as i32).to_be_bytes().to_vec();
                            b.extend((0..g.below(512)).map(|_| g.next() as u8));
                            b
                        }
                    };
                    // Random garbage may happen to be a frame still waiting for its end:
                    // close our side so the broker sees the end of the stream.
                    let _ = closes(port, &bytes, i % 3 != 1);
                }
            })
        })
        .collect();
    let mut holders = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(&104_857_600i32.to_be_bytes()).unwrap();
        let mut body = vec![0u8; 64 * 1024];
        body[..2].copy_from_slice(&0i16.to_be_bytes()); // Produce
        let _ = s.write_all(&body);
        holders.push(s);
    }
    for t in threads {
        t.join().unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    let rss_holding = broker.vm_rss_kib();
    for s in &mut holders {
        // Still open: the broker waits for the rest of a frame it allows.
        s.set_nonblocking(true).unwrap();
        let mut b = [0u8; 1];
        let e = s.read(&mut b).unwrap_err();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::WouldBlock,
            "a held connection was closed"
        );
    }
    assert!(
        rss_holding < RSS_LIMIT_KIB,
        "VmRSS {rss_holding} KiB with 20 partial 100 MiB frames held open (was {rss_before} KiB)"
    );
    drop(holders);
    assert_healthy(&mut broker, &expected, "the storm");
    let rss_after = broker.vm_rss_kib();
    eprintln!(
        "storm took {:?}; VmRSS {rss_before} KiB before, {rss_holding} KiB while holding, {rss_after} KiB after",
        started.elapsed()
    );
    assert!(
        rss_after < RSS_LIMIT_KIB,
        "VmRSS {rss_after} KiB after the storm"
    );
    // And the connections that held partial frames were let go.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&[0, 0, 0, 1]).unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    s.set_read_timeout(Some(CLOSE_LIMIT)).unwrap();
    let _ = s.read_to_end(&mut rest);
    assert!(rest.is_empty(), "an answer to a 1-byte frame: {rest:?}");
}

/// Appends `v` as a zigzag varint (the record format's signed varints).
fn varint(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// A zstd batch of `records` records whose values are `value_len` zero bytes each: a few KiB on
/// the wire, `records * value_len` bytes once inflated. The inflated records are streamed into
/// the encoder, never held in memory here.
fn zstd_bomb(records: usize, value_len: usize) -> Vec<u8> {
    use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use kcli::protocol::record::compression::CompressionType;
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for i in 0..records {
        let mut head = Vec::new();
        varint(&mut head, 0); // attributes
        varint(&mut head, 0); // timestamp delta
        varint(&mut head, i as i64); // offset delta
        varint(&mut head, -1); // null key
        varint(&mut head, value_len as i64);
        let mut len = Vec::new();
        varint(&mut len, (head.len() + value_len + 1) as i64);
        encoder.write_all(&len).unwrap();
        encoder.write_all(&head).unwrap();
        let mut left = value_len;
        while left > 0 {
            let n = left.min(zeros.len());
            encoder.write_all(&zeros[..n]).unwrap();
            left -= n;
        }
        encoder.write_all(&[0]).unwrap(); // no headers
    }
    let body = encoder.finish().unwrap();
    // The header of a real batch of as many records, re-pointed at the zstd body.
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.records = (0..records)
        .map(|_| SimpleRecord::new(crate::serve_support::now_ms(), None, None))
        .collect();
    let mut batch = b.build().unwrap()[..61].to_vec();
    batch.extend_from_slice(&body);
    let batch_length = (batch.len() - 12) as i32;
    batch[8..12].copy_from_slice(&batch_length.to_be_bytes());
    batch[22] = (batch[22] & !0x07) | 4; // zstd
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
    batch
}

/// Small zstd batches that inflate to hundreds of MiB, several at once: each is answered (an
/// append, or CORRUPT_MESSAGE past the broker's cap on inflated batches), and the broker's
/// peak resident memory stays bounded, since validating records needs no more than a record
/// at a time (Kafka validates compressed batches with a streaming iterator that skips keys
/// and values).
#[test]
fn decompression_bombs_keep_memory_bounded() {
    let mut broker = TestBroker::start(&[("num.partitions", "4")]);
    let port = broker.port();
    let expected = advertised(port);
    let mut conn = KafkaConn::connect(port);
    conn.call(
        &RequestKind::Metadata(MetadataRequest {
            topics: Some(vec![metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("bomb")),
                ..Default::default()
            }]),
            allow_auto_topic_creation: true,
            ..Default::default()
        }),
        9,
    );
    let inflating = zstd_bomb(4, 50 << 20); // 200 MiB inflated, under the broker's cap
    let over_cap = zstd_bomb(1, 300 << 20); // 300 MiB inflated, over the cap
    eprintln!(
        "bombs: {} and {} bytes on the wire",
        inflating.len(),
        over_cap.len()
    );
    let hwm_before = broker.vm_hwm_kib();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let batch = if i % 2 == 0 {
                inflating.clone()
            } else {
                over_cap.clone()
            };
            std::thread::spawn(move || {
                let mut conn = KafkaConn::connect(port);
                // One partition each, so nothing serialises them.
                let r = conn.call(&produce_request("bomb", i, batch, 1), PRODUCE_VERSION);
                produce_result(&r).0
            })
        })
        .collect();
    let codes: Vec<i16> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let hwm = broker.vm_hwm_kib();
    eprintln!("bomb answers {codes:?}; VmHWM {hwm_before} KiB before, {hwm} KiB after");
    assert_healthy(&mut broker, &expected, "decompression bombs");
    assert!(
        hwm < RSS_LIMIT_KIB,
        "peak VmRSS {hwm} KiB while validating 4 zstd batches of a few KiB each"
    );
}
