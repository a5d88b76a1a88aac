//! A connection whose handler throttles its client for a quota (Kafka's channel muting,
//! KIP-219): the answer goes out at once, the next request is read only once the throttle is
//! over, other connections are not held, and the handler hears how long the write took.

use std::time::Instant;

use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

use super::{LIMIT, THROTTLE, TestHandler, config, frame, receive, send, start};

/// A handler that throttles its client (a quota) has its answer written at once, and the
/// connection reads the next request only once the throttle is over; other connections are not
/// held. The handler is told how long writing the answer took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_connection_reads_nothing_until_its_throttle_ends() {
    timeout(LIMIT, async {
        let (server, address, handler) = start(config(|_| {}), TestHandler::default()).await;
        let mut stream = TcpStream::connect(address).await.unwrap();
        let mut other = TcpStream::connect(address).await.unwrap();
        let mut both = frame(b"T1");
        both.extend(frame(b"E2"));
        let sent = Instant::now();
        stream.write_all(&both).await.unwrap();
        assert_eq!(receive(&mut stream).await, b"T1");
        assert!(
            sent.elapsed() < THROTTLE,
            "the throttled answer was held back"
        );
        send(&mut other, b"E3").await;
        assert_eq!(receive(&mut other).await, b"E3");
        assert!(
            sent.elapsed() < THROTTLE,
            "another connection was held back"
        );
        assert_eq!(receive(&mut stream).await, b"E2");
        assert!(
            sent.elapsed() >= THROTTLE,
            "the next request was read {:?} after the throttled one",
            sent.elapsed()
        );
        let order: Vec<Bytes> = handler
            .log
            .lock()
            .unwrap()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        assert_eq!(order, [&b"T1"[..], b"E3", b"E2"]);
        assert_eq!(handler.network_times.lock().unwrap().len(), 1);
        server.shutdown().await;
    })
    .await
    .unwrap();
}
