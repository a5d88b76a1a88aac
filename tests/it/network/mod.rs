//! The socket server over real loopback sockets, with a test handler whose behaviour is chosen by
//! the first byte of each frame: ordering under pipelining, one request in processing per
//! connection, bad frames, sendfile responses, no-response and close instructions, handler
//! panics, backpressure of the bounded queue and graceful shutdown; `pipelining` and
//! `throttle` test pipelined answers and a quota's muting with the same handler.

mod pipelining;
mod throttle;

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use kcli::cluster::kafka_principal::KafkaPrincipal;
use kcli::network::{
    AuthenticationError, AuthenticationIo, Authenticator, ConnectionId, EndPoint, FileRange,
    ListenerAuthenticator, NetworkTimeCallback, Request, RequestHandler, Response, ResponsePart,
    SocketServer, SocketServerConfig,
};
use rand::RngCore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

const LIMIT: Duration = Duration::from_secs(20);
/// How long a `T` request mutes its connection.
const THROTTLE: Duration = Duration::from_millis(300);

/// Frames start with a command byte:
/// `E` echo, `S` sleep 30 ms then echo, `N` no response, `C` close, `B` wait for a gate permit
/// then echo, `F` the handler's file range between a header and a trailer (`G`: a range past the
/// file's end), `P` panic,
/// `D` a deferred echo, `M` the frame 1000 times in 2000 parts, `W` the connection's principal,
/// `H` a pipelined echo that waits for a gate permit, `X` a pipelined close, `T` an echo that
/// mutes the connection for 300 ms (a quota's throttle) and asks for its network time.
#[derive(Default)]
struct TestHandler {
    gate: Gate,
    started: AtomicUsize,
    current: AtomicUsize,
    max_concurrent: AtomicUsize,
    per_connection: Mutex<HashMap<ConnectionId, usize>>,
    overlap_within_connection: AtomicBool,
    /// (connection, frame) in the order handling started.
    log: Mutex<Vec<(ConnectionId, Bytes)>>,
    file: Option<(Arc<File>, u64, u64)>,
    /// Permits for the answers of `H` requests; none at first.
    pipeline_gate: Arc<Gate>,
    /// The network times reported for `T` requests.
    network_times: Arc<Mutex<Vec<Duration>>>,
}

/// Permits for `B` requests; none at first.
struct Gate(Semaphore);

impl Default for Gate {
    fn default() -> Self {
        Gate(Semaphore::new(0))
    }
}

fn echo(frame: &Bytes) -> Response {
    let mut out = BytesMut::with_capacity(4 + frame.len());
    out.put_i32(frame.len() as i32);
    out.put_slice(frame);
    Response::bytes(out.freeze())
}

impl RequestHandler for TestHandler {
    async fn handle(&self, request: Request) -> Response {
        self.started.fetch_add(1, Ordering::SeqCst);
        let now = self.current.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_concurrent.fetch_max(now, Ordering::SeqCst);
        {
            let mut per = self.per_connection.lock().unwrap();
            let n = per.entry(request.connection_id).or_default();
            *n += 1;
            if *n > 1 {
                self.overlap_within_connection.store(true, Ordering::SeqCst);
            }
        }
        self.log
            .lock()
            .unwrap()
            .push((request.connection_id, request.frame.clone()));
        let frame = request.frame.clone();
        let response = match frame.first() {
            Some(b'S') => {
                tokio::time::sleep(Duration::from_millis(30)).await;
                echo(&frame)
            }
            Some(b'N') => Response::NoOp,
            Some(b'C') => Response::CloseConnection,
            Some(b'B') => {
                self.gate.0.acquire().await.unwrap().forget();
                echo(&frame)
            }
            Some(cmd @ (b'F' | b'G')) => {
                let (file, position, mut len) = self.file.clone().unwrap();
                if *cmd == b'G' {
                    len += 1_000_000; // past the end of the file
                }
                let mut head = BytesMut::new();
                head.put_i32((3 + len + 3) as i32);
                head.put_slice(b"hdr");
                Response::Send(vec![
                    ResponsePart::Bytes(head.freeze()),
                    ResponsePart::File(FileRange {
                        file,
                        position,
                        len,
                    }),
                    ResponsePart::Bytes(Bytes::from_static(b"end")),
                ])
            }
            Some(b'M') => {
                // The frame 1000 times as separate parts (with empty ones between), so writes go
                // out in several writev calls and partially.
                let mut parts = vec![ResponsePart::Bytes(Bytes::from(
                    ((frame.len() * 1000) as i32).to_be_bytes().to_vec(),
                ))];
                for _ in 0..1000 {
                    parts.push(ResponsePart::Bytes(frame.clone()));
                    parts.push(ResponsePart::Bytes(Bytes::new()));
                }
                Response::Send(parts)
            }
            Some(b'P') => panic!("test handler asked to panic"),
            Some(b'W') => echo(&Bytes::from(request.principal.to_string())),
            Some(b'D') => Response::Deferred(Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                echo(&frame)
            })),
            Some(b'H') => {
                let gate = Arc::clone(&self.pipeline_gate);
                Response::Pipelined(Box::pin(async move {
                    gate.0.acquire().await.unwrap().forget();
                    echo(&frame)
                }))
            }
            Some(b'X') => Response::Pipelined(Box::pin(async { Response::CloseConnection })),
            Some(b'T') => {
                request.throttle.throttle_for(THROTTLE);
                let times = Arc::clone(&self.network_times);
                request
                    .throttle
                    .on_network_time(NetworkTimeCallback::new(move |time| {
                        times.lock().unwrap().push(time);
                    }));
                echo(&frame)
            }
            _ => echo(&frame),
        };
        *self
            .per_connection
            .lock()
            .unwrap()
            .get_mut(&request.connection_id)
            .unwrap() -= 1;
        self.current.fetch_sub(1, Ordering::SeqCst);
        response
    }
}

fn config(tweak: impl FnOnce(&mut SocketServerConfig)) -> SocketServerConfig {
    let mut config = SocketServerConfig {
        listeners: vec![EndPoint::new("PLAINTEXT", "127.0.0.1", 0)],
        num_io_threads: 4,
        queued_max_requests: 16,
        socket_request_max_bytes: 1024,
        connections_max_idle_ms: 600_000,
        ..SocketServerConfig::default()
    };
    tweak(&mut config);
    config
}

async fn start(
    config: SocketServerConfig,
    handler: TestHandler,
) -> (SocketServer, SocketAddr, Arc<TestHandler>) {
    let handler = Arc::new(handler);
    let server = SocketServer::startup(config, Arc::clone(&handler), CancellationToken::new())
        .await
        .unwrap();
    let address = server.bound_endpoints()[0].address;
    assert_eq!(server.bound_port("PLAINTEXT"), Some(address.port()));
    assert_ne!(address.port(), 0);
    (server, address, handler)
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

async fn send(stream: &mut TcpStream, body: &[u8]) {
    stream.write_all(&frame(body)).await.unwrap();
}

async fn receive(stream: &mut TcpStream) -> Vec<u8> {
    let size = stream.read_i32().await.unwrap();
    let mut body = vec![0; size as usize];
    stream.read_exact(&mut body).await.unwrap();
    body
}

/// True when the server closed the connection: end of stream (or a reset) with nothing before it.
async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.read(&mut byte).await, Ok(0) | Err(_))
}

async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_answered_in_order() {
    timeout(LIMIT, async {
        let (server, address, handler) = start(config(|_| {}), TestHandler::default()).await;
        let mut stream = TcpStream::connect(address).await.unwrap();
        // 100 frames in one write, without waiting; every third one is slow.
        let mut all = Vec::new();
        for i in 0..100 {
            let cmd = if i % 3 == 0 { 'S' } else { 'E' };
            all.extend(frame(format!("{cmd}{i}").as_bytes()));
        }
        stream.write_all(&all).await.unwrap();
        for i in 0..100 {
            let cmd = if i % 3 == 0 { 'S' } else { 'E' };
            assert_eq!(receive(&mut stream).await, format!("{cmd}{i}").into_bytes());
        }
        assert!(!handler.overlap_within_connection.load(Ordering::SeqCst));
        assert_eq!(server.active_connections(), 1);
        drop(stream);
        eventually("the connection to be closed", || {
            server.active_connections() == 0
        })
        .await;
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_in_processing_per_connection_while_others_proceed() {
    timeout(LIMIT, async {
        let (server, address, handler) = start(config(|_| {}), TestHandler::default()).await;
        let started = || handler.started.load(Ordering::SeqCst);
        let mut blocked = TcpStream::connect(address).await.unwrap();
        let mut other = TcpStream::connect(address).await.unwrap();
        // Five pipelined requests that each wait for a gate permit, with idle handler tasks
        // around: still only the first reaches the handler.
        let mut pipelined = Vec::new();
        for i in 0..5 {
            pipelined.extend(frame(format!("B{i}").as_bytes()));
        }
        blocked.write_all(&pipelined).await.unwrap();
        eventually("the first request in the handler", || started() == 1).await;
        // Another connection is served meanwhile.
        send(&mut other, b"Eother").await;
        assert_eq!(receive(&mut other).await, b"Eother");
        assert_eq!(started(), 2);
        assert_eq!(handler.max_concurrent.load(Ordering::SeqCst), 2);
        for i in 0..5 {
            handler.gate.0.add_permits(1);
            assert_eq!(receive(&mut blocked).await, format!("B{i}").into_bytes());
            if i < 4 {
                // The next one is read only now that this response is written.
                eventually("the next request in the handler", || started() == 3 + i).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
                assert_eq!(started(), 3 + i);
            }
        }
        assert!(!handler.overlap_within_connection.load(Ordering::SeqCst));
        // The blocked connection's requests reached the handler in the order sent.
        let log = handler.log.lock().unwrap().clone();
        let blocked_id = log[0].0;
        let frames: Vec<Bytes> = log
            .iter()
            .filter(|(c, _)| *c == blocked_id)
            .map(|(_, f)| f.clone())
            .collect();
        let sent: Vec<Bytes> = (0..5).map(|i| Bytes::from(format!("B{i}"))).collect();
        assert_eq!(frames, sent);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_negative_frames_close_only_their_connection() {
    timeout(LIMIT, async {
        let (server, address, _handler) = start(config(|_| {}), TestHandler::default()).await;
        let mut good = TcpStream::connect(address).await.unwrap();
        send(&mut good, b"Ebefore").await;
        assert_eq!(receive(&mut good).await, b"Ebefore");

        let mut oversized = TcpStream::connect(address).await.unwrap();
        oversized.write_all(&1025i32.to_be_bytes()).await.unwrap();
        assert!(closed_by_server(&mut oversized).await);

        let mut negative = TcpStream::connect(address).await.unwrap();
        negative.write_all(&(-1i32).to_be_bytes()).await.unwrap();
        assert!(closed_by_server(&mut negative).await);

        let mut huge = TcpStream::connect(address).await.unwrap();
        huge.write_all(&i32::MAX.to_be_bytes()).await.unwrap();
        assert!(closed_by_server(&mut huge).await);

        // A frame of exactly socket.request.max.bytes is fine, and the good connection lives on.
        let mut at_limit = vec![b'E'; 1024];
        at_limit[1] = b'x';
        send(&mut good, &at_limit).await;
        assert_eq!(receive(&mut good).await, at_limit);
        send(&mut good, b"Eafter").await;
        assert_eq!(receive(&mut good).await, b"Eafter");
        eventually("bad connections to be gone", || {
            server.active_connections() == 1
        })
        .await;
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_range_is_sent_byte_exact() {
    timeout(LIMIT, async {
        let mut content = vec![0u8; 3 * 1024 * 1024 + 123];
        rand::rng().fill_bytes(&mut content);
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&content).unwrap();
        let (position, len) = (17u64, content.len() as u64 - 100);
        let handler = TestHandler {
            file: Some((Arc::new(file), position, len)),
            ..TestHandler::default()
        };
        let (server, address, _handler) = start(config(|_| {}), handler).await;
        // Two connections at once share the file; sendfile never moves the file's position.
        let mut clients = Vec::new();
        for _ in 0..2 {
            clients.push(tokio::spawn(async move {
                let mut stream = TcpStream::connect(address).await.unwrap();
                let mut bodies = Vec::new();
                for _ in 0..2 {
                    send(&mut stream, b"F").await;
                    bodies.push(receive(&mut stream).await);
                }
                bodies
            }));
        }
        let mut expected = b"hdr".to_vec();
        expected.extend_from_slice(&content[position as usize..(position + len) as usize]);
        expected.extend_from_slice(b"end");
        for client in clients {
            for body in client.await.unwrap() {
                assert!(body == expected, "file bytes differ");
            }
        }
        // A range past the end of the file cannot be sent whole: the connection is closed
        // after what the file had, rather than leaving the client a corrupt response.
        let mut stream = TcpStream::connect(address).await.unwrap();
        send(&mut stream, b"G").await;
        let mut got = Vec::new();
        let _ = stream.read_to_end(&mut got).await;
        assert_eq!(got.len(), 4 + 3 + content.len() - position as usize);
        assert_eq!(got[7..], content[position as usize..]);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_buffer_parts_are_written_whole_and_in_order() {
    timeout(LIMIT, async {
        let (server, address, _handler) = start(config(|_| {}), TestHandler::default()).await;
        let mut stream = TcpStream::connect(address).await.unwrap();
        let mut body: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        body[0] = b'M';
        for _ in 0..3 {
            send(&mut stream, &body).await;
            // Read slowly at first so the server's writes are partial.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let response = receive(&mut stream).await;
            assert_eq!(response.len(), body.len() * 1000);
            assert!(response.chunks(body.len()).all(|chunk| chunk == body));
        }
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_response_close_deferred_and_panic() {
    timeout(LIMIT, async {
        let (server, address, _handler) =
            start(config(|c| c.num_io_threads = 1), TestHandler::default()).await;
        let mut stream = TcpStream::connect(address).await.unwrap();
        // NoOp: nothing written, the next request is read and answered.
        let mut both = frame(b"N1");
        both.extend(frame(b"D2"));
        both.extend(frame(b"E3"));
        stream.write_all(&both).await.unwrap();
        assert_eq!(receive(&mut stream).await, b"D2");
        assert_eq!(receive(&mut stream).await, b"E3");

        // A panicking handler closes its connection only, and the handler task survives.
        let mut panicking = TcpStream::connect(address).await.unwrap();
        send(&mut panicking, b"P").await;
        assert!(closed_by_server(&mut panicking).await);
        send(&mut stream, b"E4").await;
        assert_eq!(receive(&mut stream).await, b"E4");

        // CloseConnection: closed without a response; requests after it are never handled.
        let mut close = frame(b"C");
        close.extend(frame(b"E5"));
        stream.write_all(&close).await.unwrap();
        assert!(closed_by_server(&mut stream).await);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_queue_makes_connections_wait() {
    timeout(LIMIT, async {
        let settings = config(|c| {
            c.num_io_threads = 1;
            c.queued_max_requests = 1;
        });
        let (server, address, handler) = start(settings, TestHandler::default()).await;
        let mut streams = Vec::new();
        for i in 0..3 {
            let mut stream = TcpStream::connect(address).await.unwrap();
            send(&mut stream, format!("B{i}").as_bytes()).await;
            streams.push(stream);
            if i == 0 {
                eventually("the first request in the handler", || {
                    handler.started.load(Ordering::SeqCst) == 1
                })
                .await;
            }
        }
        // One request in the blocked handler, one on the queue, the third waits to be queued.
        eventually("a full queue", || server.request_queue_size() == 1).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(handler.started.load(Ordering::SeqCst), 1);
        assert_eq!(server.request_queue_size(), 1);

        handler.gate.0.add_permits(1);
        eventually("the second request in the handler", || {
            handler.started.load(Ordering::SeqCst) == 2
        })
        .await;
        // The third request took the freed place on the queue.
        eventually("the third request queued", || {
            server.request_queue_size() == 1
        })
        .await;

        handler.gate.0.add_permits(2);
        let mut answered = Vec::new();
        for stream in &mut streams {
            answered.push(String::from_utf8(receive(stream).await).unwrap());
        }
        answered.sort();
        assert_eq!(answered, ["B0", "B1", "B2"]);
        assert_eq!(server.request_queue_size(), 0);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_answers_in_flight_requests_then_closes() {
    timeout(LIMIT, async {
        let (server, address, handler) = start(config(|_| {}), TestHandler::default()).await;
        let server = Arc::new(server);
        let mut idle = TcpStream::connect(address).await.unwrap();
        send(&mut idle, b"Eidle").await;
        assert_eq!(receive(&mut idle).await, b"Eidle");
        let mut busy = TcpStream::connect(address).await.unwrap();
        send(&mut busy, b"Bbusy").await;
        eventually("the request in the handler", || {
            handler.started.load(Ordering::SeqCst) == 2
        })
        .await;

        let stopping = tokio::spawn({
            let server = Arc::clone(&server);
            async move { server.shutdown().await }
        });
        // The idle connection is closed and no new connection is accepted...
        assert!(closed_by_server(&mut idle).await);
        eventually("the listener to close", || {
            std::net::TcpStream::connect(address).is_err()
        })
        .await;
        // ...but shutdown waits for the request in processing.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!stopping.is_finished());

        handler.gate.0.add_permits(1);
        assert_eq!(receive(&mut busy).await, b"Bbusy");
        assert!(closed_by_server(&mut busy).await);
        stopping.await.unwrap();
        assert_eq!(server.active_connections(), 0);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed() {
    timeout(LIMIT, async {
        let settings = config(|c| c.connections_max_idle_ms = 300);
        let (server, address, _handler) = start(settings, TestHandler::default()).await;
        let mut idle = TcpStream::connect(address).await.unwrap();
        let mut busy = TcpStream::connect(address).await.unwrap();
        let began = Instant::now();
        for i in 0..8 {
            send(&mut busy, format!("E{i}").as_bytes()).await;
            assert_eq!(receive(&mut busy).await, format!("E{i}").into_bytes());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(closed_by_server(&mut idle).await);
        assert!(began.elapsed() >= Duration::from_millis(300));
        send(&mut busy, b"Estill").await;
        assert_eq!(receive(&mut busy).await, b"Estill");
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn bad_settings_and_busy_ports_are_errors() {
    timeout(LIMIT, async {
        let handler = Arc::new(TestHandler::default());
        let zero_threads = config(|c| c.num_io_threads = 0);
        let err =
            SocketServer::startup(zero_threads, Arc::clone(&handler), CancellationToken::new())
                .await
                .unwrap_err();
        assert!(err.to_string().contains("num.io.threads"), "{err}");

        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let busy = config(|c| c.listeners = vec![EndPoint::new("PLAINTEXT", "127.0.0.1", port)]);
        let err = SocketServer::startup(busy, handler, CancellationToken::new())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("PLAINTEXT"), "{err}");
    })
    .await
    .unwrap();
}

/// Lets in a connection whose first frame is `user:<name>`, answering `ok`, as that user; refuses
/// anything else. Frames over 64 bytes are refused before they are read whole.
struct TestAuthenticator;

impl Authenticator for TestAuthenticator {
    fn authenticate<'a>(
        &'a self,
        io: &'a mut AuthenticationIo<'_>,
    ) -> kcli::network::authenticator::AuthenticationFuture<'a> {
        Box::pin(async move {
            let frame = io
                .read_frame(64)
                .await?
                .ok_or(AuthenticationError::Failed {
                    reason: "closed".into(),
                })?;
            let name = std::str::from_utf8(&frame)
                .ok()
                .and_then(|s| s.strip_prefix("user:"))
                .ok_or_else(|| AuthenticationError::Failed {
                    reason: "bad token".into(),
                })?
                .to_string();
            io.write_frame(b"ok").await?;
            Ok(KafkaPrincipal::user(name))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_authenticates_connections_before_their_requests() {
    let authenticator = ListenerAuthenticator(Arc::new(TestAuthenticator));
    let (server, address, handler) = start(
        config(|c| {
            c.listeners =
                vec![EndPoint::new("PLAINTEXT", "127.0.0.1", 0).with_authenticator(authenticator)]
        }),
        TestHandler::default(),
    )
    .await;
    timeout(LIMIT, async {
        // Authenticated: every request carries the principal.
        let mut alice = TcpStream::connect(address).await.unwrap();
        send(&mut alice, b"user:alice").await;
        assert_eq!(receive(&mut alice).await, b"ok");
        send(&mut alice, b"W").await;
        assert_eq!(receive(&mut alice).await, b"User:alice");
        // Refused, or too large for the exchange: closed, and no request reached the handler.
        let mut bad = TcpStream::connect(address).await.unwrap();
        send(&mut bad, b"W").await;
        assert!(closed_by_server(&mut bad).await);
        let mut large = TcpStream::connect(address).await.unwrap();
        large.write_all(&500i32.to_be_bytes()).await.unwrap();
        assert!(closed_by_server(&mut large).await);
        assert_eq!(handler.started.load(Ordering::SeqCst), 1);
    })
    .await
    .unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_per_ip_limit_are_closed_and_max_connections_waits() {
    let (server, address, _) = start(
        config(|c| c.limits.max_connections_per_ip = Some(2)),
        TestHandler::default(),
    )
    .await;
    timeout(LIMIT, async {
        let mut open = Vec::new();
        for _ in 0..2 {
            let mut s = TcpStream::connect(address).await.unwrap();
            send(&mut s, b"E1").await;
            assert_eq!(receive(&mut s).await, b"E1");
            open.push(s);
        }
        let mut third = TcpStream::connect(address).await.unwrap();
        assert!(
            closed_by_server(&mut third).await,
            "over max.connections.per.ip"
        );
        drop(open.pop());
        // The slot comes back once the server has seen the close.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut again = TcpStream::connect(address).await.unwrap();
            send(&mut again, b"E2").await;
            let mut size = [0u8; 4];
            if again.read_exact(&mut size).await.is_ok() {
                break;
            }
            assert!(Instant::now() < deadline, "no slot after a close");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    server.shutdown().await;

    let (server, address, _) = start(
        config(|c| c.limits.max_connections = Some(1)),
        TestHandler::default(),
    )
    .await;
    timeout(LIMIT, async {
        let mut first = TcpStream::connect(address).await.unwrap();
        send(&mut first, b"E1").await;
        assert_eq!(receive(&mut first).await, b"E1");
        // The second waits in the listen backlog, unserved, until the first closes.
        let mut second = TcpStream::connect(address).await.unwrap();
        send(&mut second, b"E2").await;
        assert!(
            timeout(Duration::from_millis(300), second.read_i32())
                .await
                .is_err()
        );
        drop(first);
        assert_eq!(receive(&mut second).await, b"E2");
    })
    .await
    .unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_memory_pool_a_frame_waits_for_the_bytes_of_those_in_processing() {
    let (server, address, handler) = start(
        config(|c| c.limits.queued_max_request_bytes = Some(1024)),
        TestHandler::default(),
    )
    .await;
    timeout(LIMIT, async {
        let mut big = TcpStream::connect(address).await.unwrap();
        let mut body = vec![b'B'];
        body.resize(1000, b'x');
        send(&mut big, &body).await;
        eventually("the gated request started", || {
            handler.started.load(Ordering::SeqCst) == 1
        })
        .await;
        // 24 bytes of the pool are free: a 100-byte frame is not read until the first is done.
        let mut small = TcpStream::connect(address).await.unwrap();
        send(&mut small, &[b'E'; 100]).await;
        assert!(
            timeout(Duration::from_millis(300), small.read_i32())
                .await
                .is_err()
        );
        assert_eq!(handler.started.load(Ordering::SeqCst), 1);
        handler.gate.0.add_permits(1);
        assert_eq!(receive(&mut big).await, body);
        assert_eq!(receive(&mut small).await, vec![b'E'; 100]);
    })
    .await
    .unwrap();
    server.shutdown().await;
}
