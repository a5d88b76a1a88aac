//! Pipelined answers (`Response::Pipelined`): the connection reads on and hands over its next
//! requests while answers wait, at most `MAX_PIPELINED_RESPONSES` outstanding, and writes every
//! answer in request order, a pipelined close included.

use std::sync::atomic::Ordering;
use std::time::Duration;

use kcli::network::MAX_PIPELINED_RESPONSES;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use super::{LIMIT, TestHandler, closed_by_server, config, eventually, frame, receive, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_answers_let_the_connection_read_on_and_keep_request_order() {
    timeout(LIMIT, async {
        let (server, address, handler) = start(config(|_| {}), TestHandler::default()).await;
        let started = || handler.started.load(Ordering::SeqCst);
        let mut stream = TcpStream::connect(address).await.unwrap();
        // Three pipelined requests, then an ordinary one: all four are handled (in order, one
        // at a time) while no pipelined answer is ready.
        let mut all = Vec::new();
        for body in ["H0", "H1", "H2", "E3"] {
            all.extend(frame(body.as_bytes()));
        }
        stream.write_all(&all).await.unwrap();
        eventually("all four requests handled", || started() == 4).await;
        // ... but nothing is answered before the first answer: the echo waits its turn.
        let mut byte = [0u8; 1];
        assert!(
            timeout(Duration::from_millis(50), stream.read(&mut byte))
                .await
                .is_err(),
            "an answer overtook the pipelined ones before it"
        );
        handler.pipeline_gate.0.add_permits(3);
        for body in ["H0", "H1", "H2", "E3"] {
            assert_eq!(receive(&mut stream).await, body.as_bytes());
        }
        assert!(!handler.overlap_within_connection.load(Ordering::SeqCst));
        let log = handler.log.lock().unwrap().clone();
        let order: Vec<&[u8]> = log.iter().map(|(_, f)| &f[..]).collect();
        assert_eq!(order, [&b"H0"[..], b"H1", b"H2", b"E3"]);

        // At most MAX_PIPELINED_RESPONSES answers outstanding: the next frame is read only once
        // the oldest is written.
        let before = started();
        let mut all = Vec::new();
        for i in 0..=MAX_PIPELINED_RESPONSES {
            all.extend(frame(format!("H{i}").as_bytes()));
        }
        stream.write_all(&all).await.unwrap();
        eventually("the outstanding limit reached", || {
            started() == before + MAX_PIPELINED_RESPONSES
        })
        .await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(started(), before + MAX_PIPELINED_RESPONSES);
        handler.pipeline_gate.0.add_permits(1);
        assert_eq!(receive(&mut stream).await, b"H0");
        eventually("the last request read", || {
            started() == before + MAX_PIPELINED_RESPONSES + 1
        })
        .await;
        handler.pipeline_gate.0.add_permits(MAX_PIPELINED_RESPONSES);
        for i in 1..=MAX_PIPELINED_RESPONSES {
            assert_eq!(receive(&mut stream).await, format!("H{i}").into_bytes());
        }

        // A pipelined answer may still close the connection, after the answers before it.
        let mut close = frame(b"H9");
        close.extend(frame(b"X"));
        stream.write_all(&close).await.unwrap();
        handler.pipeline_gate.0.add_permits(1);
        assert_eq!(receive(&mut stream).await, b"H9");
        assert!(closed_by_server(&mut stream).await);
        server.shutdown().await;
    })
    .await
    .unwrap();
}
