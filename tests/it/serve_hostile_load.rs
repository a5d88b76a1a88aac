//! The broker as a whole under hostile or heavy load: many connections each announcing a
//! 100 MiB request and sending its body slowly, with `queued.max.request.bytes` set; a zstd
//! frame that declares a huge window; 1,000 unauthenticated connections to a SASL listener
//! announcing frames over `sasl.server.max.receive.size` or stopping inside a handshake. The
//! broker's peak RSS stays within what the configured limits allow, it says which limit it
//! applied, and it keeps serving an ordinary (or authenticated) client.

// Test code: a failed expectation panics with the message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{ErrorKind, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::serve_support::{
    KafkaConn, TestBroker, batch_of, closed_within, create_topic_with, produce_request,
    produce_result, read_partition,
};

const MIB: usize = 1 << 20;

/// One ordinary round trip: a produce that is acknowledged and read back.
fn produce_and_read_back(conn: &mut KafkaConn, topic: &str, value: &[u8]) {
    let batch = batch_of(&[value.to_vec()]);
    let (code, offset) = produce_result(&conn.call(&produce_request(topic, 0, batch, 1), 9));
    assert_eq!(code, 0, "produce refused");
    let records = read_partition(conn, topic, 0);
    assert_eq!(
        records.last().map(|(o, v)| (*o, v.as_slice())),
        Some((offset, value))
    );
}

/// 200 connections each send the size prefix of a 100 MiB request, then its body a little at a
/// time for several seconds: unchecked, the broker would buffer what each has sent (about a
/// gigabyte over the test). With `queued.max.request.bytes` = 128 MiB, only the frames that fit
/// the pool are read; the others wait in the kernel's socket buffers. Meanwhile an ordinary
/// client's requests still go through: the pool is not first come, first served, so a small
/// request that fits beside the admitted 100 MiB frame is read at once.
#[test]
fn the_request_memory_pool_bounds_many_slow_100_mib_requests() {
    const POOL: usize = 128 * MIB;
    let broker = TestBroker::start(&[
        ("queued.max.request.bytes", &POOL.to_string()),
        ("socket.request.max.bytes", &(100 * MIB).to_string()),
    ]);
    let mut client = KafkaConn::connect(broker.port());
    create_topic_with(&mut client, "t", 1, &[]);
    produce_and_read_back(&mut client, "t", b"before");
    let baseline_kib = broker.vm_rss_kib();

    let frame_size = i32::try_from(100 * MIB).unwrap();
    let mut slow: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", broker.port())).unwrap();
            // An ApiVersions header, so the frame is a plausible request.
            s.write_all(&frame_size.to_be_bytes()).unwrap();
            s.write_all(&[0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff]).unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let chunk = vec![0x5au8; 64 * 1024];
    let mut sent = 0usize;
    let deadline = Instant::now() + Duration::from_secs(6);
    while Instant::now() < deadline {
        for s in &mut slow {
            match s.write(&chunk) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => panic!("a slow connection failed: {e}"),
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The bodies were sent, not refused: the broker holds them back rather than closing.
    assert!(sent > 200 * MIB, "only {sent} bytes of bodies were sent");
    let grown_kib = broker.vm_hwm_kib().saturating_sub(baseline_kib);
    let bound_kib = (POOL / 1024 + 32 * 1024) as u64;
    assert!(
        grown_kib < bound_kib,
        "peak RSS grew by {grown_kib} KiB under {} connections that sent {} MiB, bound {bound_kib} KiB (pool + 32 MiB)",
        slow.len(),
        sent / MIB
    );
    assert!(
        broker
            .stderr()
            .contains("a request waits for memory: queued.max.request.bytes is in use"),
        "the broker did not say which limit it applied:\n{}",
        broker.stderr()
    );
    // The slow frames still hold the pool and wait for it; the ordinary client is served now,
    // not once they are gone.
    let started = Instant::now();
    produce_and_read_back(&mut client, "t", b"during");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the ordinary client waited {:?} behind the slow frames",
        started.elapsed()
    );
    drop(slow);
    produce_and_read_back(&mut client, "t", b"after");
}

/// A zstd frame that declares a 128 MiB window (zstd's own default limit, so zstd alone would
/// accept it) is refused as corrupt before its window is allocated, and the broker goes on.
#[test]
fn a_zstd_frame_declaring_a_huge_window_is_refused_as_corrupt() {
    use kcli::protocol::record::batch::{RECORD_BATCH_OVERHEAD, compute_crc};
    use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord, encode_record};
    use kcli::protocol::record::compression::CompressionType;
    let broker = TestBroker::start(&[]);
    let mut client = KafkaConn::connect(broker.port());
    create_topic_with(&mut client, "z", 1, &[]);

    let record = SimpleRecord::new(0, None, Some(vec![1; 100]));
    let mut body = Vec::new();
    encode_record(&mut body, 0, 0, &record);
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.include_contentsize(false).unwrap();
    enc.window_log(27).unwrap();
    enc.write_all(&body).unwrap();
    let compressed = enc.finish().unwrap();
    let mut b = RecordBatchBuilder::new(CompressionType::Zstd);
    b.records = vec![SimpleRecord::new(
        crate::serve_support::now_ms(),
        None,
        None,
    )];
    let mut batch = b.build().unwrap()[..RECORD_BATCH_OVERHEAD].to_vec();
    batch.extend_from_slice(&compressed);
    let batch_length = i32::try_from(batch.len() - 12).unwrap();
    batch[8..12].copy_from_slice(&batch_length.to_be_bytes());
    let crc = compute_crc(&batch);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());

    let before_kib = broker.vm_hwm_kib();
    let (code, _) = produce_result(&client.call(&produce_request("z", 0, batch, 1), 9));
    assert_eq!(code, 2, "CORRUPT_MESSAGE expected");
    let grown_kib = broker.vm_hwm_kib().saturating_sub(before_kib);
    assert!(grown_kib < 64 * 1024, "peak RSS grew by {grown_kib} KiB");
    produce_and_read_back(&mut client, "z", b"still served");
}

/// Raises this process's soft RLIMIT_NOFILE to its hard limit (the broker it starts inherits
/// it) and returns the soft limit now in force.
fn raise_nofile_limit() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).unwrap();
    }
    getrlimit(Resource::RLIMIT_NOFILE).unwrap().0
}

/// 1,000 connections to a SASL_PLAINTEXT listener that never authenticate: 500 announce a
/// 100 MiB frame (over `sasl.server.max.receive.size`, 16 KiB here), which the broker refuses
/// from the size prefix, naming that limit, before allocating anything for it; 500 send half
/// of a SaslHandshake request and stop, and are held. An unauthenticated connection can make
/// the broker hold at most one frame of `sasl.server.max.receive.size` plus its 16 KiB read
/// buffer, so peak RSS may grow by at most 1,000 x 32 KiB + 32 MiB (runtime and task slack).
/// Meanwhile a SCRAM-SHA-512 client authenticates, produces and reads back; and garbage sent
/// before authentication closes only its own connection.
#[test]
fn unauthenticated_connections_to_a_sasl_listener_are_bounded_by_its_receive_size() {
    use crate::serve_sasl_clients::{add_scram_user, scram_connect};
    use crate::support::zookeeper::ZkServer;
    const MAX_RECEIVE: usize = 16 * 1024;
    const EACH: usize = 500;
    assert!(
        raise_nofile_limit() > 2 * EACH as u64 + 200,
        "RLIMIT_NOFILE is too low for {} connections",
        2 * EACH
    );
    let _one = crate::support::cluster::exclusive();
    let zk = ZkServer::start();
    add_scram_user(&zk.connect_string(), "alice", "alice-secret");
    let connect = zk.connect_string();
    let broker = TestBroker::start(&[
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{port2}",
        ),
        ("zookeeper.connect", &connect),
        ("broker.id", "1"),
        ("sasl.enabled.mechanisms", "SCRAM-SHA-512"),
        (
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        ),
        ("sasl.server.max.receive.size", &MAX_RECEIVE.to_string()),
    ]);
    let sasl_port = broker.port2();
    let mut client = scram_connect(sasl_port, "alice", "alice-secret").unwrap();
    create_topic_with(&mut client, "s", 1, &[]);
    produce_and_read_back(&mut client, "s", b"before");
    let baseline_kib = broker.vm_rss_kib();

    // SaslHandshake v1 (api key 17), correlation id 1, null client id, "SCRAM-SHA-512".
    let mut handshake = vec![0, 17, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 13];
    handshake.extend_from_slice(b"SCRAM-SHA-512");
    let handshake_size = i32::try_from(handshake.len()).unwrap();
    let oversized = i32::try_from(100 * MIB).unwrap();
    let mut held = Vec::with_capacity(EACH);
    let mut refused = Vec::with_capacity(EACH);
    for _ in 0..EACH {
        let mut s = TcpStream::connect(("127.0.0.1", sasl_port)).unwrap();
        s.write_all(&handshake_size.to_be_bytes()).unwrap();
        s.write_all(&handshake[..handshake.len() / 2]).unwrap();
        held.push(s);
        let mut s = TcpStream::connect(("127.0.0.1", sasl_port)).unwrap();
        s.write_all(&oversized.to_be_bytes()).unwrap();
        s.write_all(&handshake).unwrap();
        refused.push(s);
    }
    // Every oversized announcement is refused: its connection is closed.
    for s in &mut refused {
        assert!(
            closed_within(s, Duration::from_secs(10)),
            "an oversized frame's connection is still open"
        );
    }
    let stderr = broker.stderr();
    let wanted = format!("larger than sasl.server.max.receive.size ({MAX_RECEIVE})");
    assert!(
        stderr.matches(wanted.as_str()).count() >= EACH,
        "the broker did not say which limit it applied ({wanted}):\n{stderr}"
    );
    // The authenticated client is served beside the 500 held half-handshakes.
    let started = Instant::now();
    produce_and_read_back(&mut client, "s", b"during");
    assert!(
        scram_connect(sasl_port, "alice", "alice-secret").is_ok(),
        "a new SCRAM login failed under load"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    // Garbage before authentication (a frame that is no request) closes that connection only.
    let mut garbage = TcpStream::connect(("127.0.0.1", sasl_port)).unwrap();
    garbage.write_all(&8i32.to_be_bytes()).unwrap();
    garbage
        .write_all(&[0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef])
        .unwrap();
    assert!(closed_within(&mut garbage, Duration::from_secs(10)));
    assert!(
        !closed_within(&mut held[0], Duration::from_millis(500)),
        "a held half-handshake was closed by another connection's garbage"
    );
    produce_and_read_back(&mut client, "s", b"after garbage");

    let grown_kib = broker.vm_hwm_kib().saturating_sub(baseline_kib);
    let bound_kib = (2 * EACH * (MAX_RECEIVE + 16 * 1024) / 1024 + 32 * 1024) as u64;
    assert!(
        grown_kib < bound_kib,
        "peak RSS grew by {grown_kib} KiB under {} unauthenticated connections, bound \
         {bound_kib} KiB",
        2 * EACH
    );
    drop(held);
}
