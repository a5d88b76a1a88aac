//! One task per connection: reads 4-byte size-prefixed frames, puts each on the request queue,
//! waits for its response and writes it before reading the next frame. So a connection has at
//! most one request in processing, as in Kafka (which mutes the channel while a request is out),
//! and its responses keep request order. The one exception: a request answered
//! [`Response::Pipelined`] is done but for its answer, and the connection reads on while up to
//! [`MAX_PIPELINED_RESPONSES`] such answers are outstanding, writing them in request order.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::authenticator::{AuthenticationIo, ListenerAuthenticator};
use super::channel_throttle::{ChannelThrottle, NetworkTimeCallback};
use super::connection_quotas::{ConnectionQuotas, ConnectionSlot};
use super::memory_pool::PooledBytes;
use super::metrics::{Kind, NetworkMetrics, RequestRecorder, RequestTimes, api_of};
use super::request::{ConnectionId, DeferredResponse, MAX_PIPELINED_RESPONSES, Request, Response};
use super::stream::ConnectionStream;
use super::tls::{ListenerTls, accept_tls};
use super::transmit::{TlsStaging, write_parts};
use crate::cluster::kafka_principal::KafkaPrincipal;

/// Bytes of a frame's size prefix: a big-endian INT32 counting the bytes after it.
const SIZE_PREFIX: usize = 4;
/// The read buffer grows by at least this much, so small pipelined requests share reads.
const MIN_READ: usize = 16 * 1024;
/// ... and by at most this much at a time: a size prefix alone never makes us allocate the whole
/// frame; memory follows the bytes that actually arrive.
const MAX_READ_STEP: usize = 1024 * 1024;

/// A request waiting on the queue, with the way back to its connection.
#[derive(Debug)]
pub(crate) struct QueuedRequest {
    pub request: Request,
    pub reply: oneshot::Sender<Handled>,
}

/// A handler task's answer to a request, with when it took the request up and when the
/// handler returned.
#[derive(Debug)]
pub(crate) struct Handled {
    pub response: Response,
    pub dequeued: Instant,
    pub local_done: Instant,
}

/// A request whose answer is not written yet: its API and version (when its header had them),
/// the kind the handler reported and its instants so far.
#[derive(Debug)]
struct InFlight {
    api: Option<(i16, i16)>,
    kind: Kind,
    times: RequestTimes,
    /// Told how long writing the answer took, for the request quota.
    network_time: Option<NetworkTimeCallback>,
}

/// Why a connection stopped reading frames.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("negative frame size {0}")]
    NegativeSize(i32),
    #[error("frame of {size} bytes is larger than socket.request.max.bytes ({max})")]
    TooLarge { size: i32, max: i32 },
    #[error("connection closed inside a frame ({0} bytes of it read)")]
    Truncated(usize),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Reads the next frame's body (without its size prefix). `Ok(None)` is a clean end of stream
/// between frames. The size is checked before anything is allocated for the body.
///
/// Cancel-safe: bytes read so far stay in `buf`.
pub(crate) async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut BytesMut,
    max_size: i32,
) -> Result<Option<Bytes>, FrameError> {
    match read_frame_size(reader, buf, max_size).await? {
        Some(size) => read_frame_body(reader, buf, size).await.map(Some),
        None => Ok(None),
    }
}

/// Reads until the next frame's size prefix is in `buf` and returns the checked size, leaving
/// the prefix in place. `Ok(None)` is a clean end of stream between frames.
///
/// Cancel-safe: bytes read so far stay in `buf`.
async fn read_frame_size<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut BytesMut,
    max_size: i32,
) -> Result<Option<usize>, FrameError> {
    loop {
        if let Some(prefix) = buf.get(..SIZE_PREFIX) {
            let size = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
            if size < 0 {
                return Err(FrameError::NegativeSize(size));
            }
            if size > max_size {
                return Err(FrameError::TooLarge {
                    size,
                    max: max_size,
                });
            }
            // size is non-negative and i32, so it fits usize on every platform we build for.
            return Ok(Some(size as usize));
        }
        buf.reserve(MIN_READ);
        if reader.read_buf(buf).await? == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(FrameError::Truncated(buf.len()))
            };
        }
    }
}

/// Reads the rest of a frame of `size` bytes whose prefix [`read_frame_size`] found, and takes
/// it (prefix and body) off `buf`.
///
/// Cancel-safe: bytes read so far stay in `buf`.
async fn read_frame_body<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut BytesMut,
    size: usize,
) -> Result<Bytes, FrameError> {
    let want = SIZE_PREFIX + size;
    while buf.len() < want {
        let missing = want - buf.len();
        buf.reserve(missing.clamp(MIN_READ, MAX_READ_STEP));
        if reader.read_buf(buf).await? == 0 {
            return Err(FrameError::Truncated(buf.len()));
        }
    }
    buf.advance(SIZE_PREFIX);
    Ok(buf.split_to(size).freeze())
}

/// [`read_frame`], taking the frame's size from the memory pool before its body is read.
async fn read_pooled_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut BytesMut,
    max_size: i32,
    quotas: &ConnectionQuotas,
) -> Result<Option<(Bytes, PooledBytes)>, FrameError> {
    let Some(size) = read_frame_size(reader, buf, max_size).await? else {
        return Ok(None);
    };
    let pooled = quotas.allocate(size).await;
    let frame = read_frame_body(reader, buf, size).await?;
    Ok(Some((frame, pooled)))
}

/// What a connection task needs from its server.
#[derive(Debug, Clone)]
pub(crate) struct ConnectionContext {
    pub id: ConnectionId,
    pub peer: SocketAddr,
    pub local: SocketAddr,
    pub listener_name: Arc<str>,
    pub authenticator: Option<ListenerAuthenticator>,
    pub tls: Option<ListenerTls>,
    pub socket_request_max_bytes: i32,
    pub connections_max_idle: Duration,
    pub queue: mpsc::Sender<QueuedRequest>,
    pub shutdown: CancellationToken,
    pub active_connections: Arc<AtomicUsize>,
    pub quotas: Arc<ConnectionQuotas>,
    pub metrics: Arc<NetworkMetrics>,
    /// The listener's index among the server's, which indexes its metrics.
    pub listener_index: usize,
}

/// Counts a connection's opening and closing in its listener's metrics, however it ends.
struct ConnectionCounted {
    metrics: Arc<NetworkMetrics>,
    listener: usize,
}

impl ConnectionCounted {
    fn new(metrics: Arc<NetworkMetrics>, listener: usize) -> Self {
        metrics.connection_created(listener);
        ConnectionCounted { metrics, listener }
    }
}

impl Drop for ConnectionCounted {
    fn drop(&mut self) {
        self.metrics.connection_closed(self.listener);
    }
}

/// Counts a connection as active from accept until its task ends, however it ends.
struct ActiveGuard(Arc<AtomicUsize>);

impl ActiveGuard {
    fn new(count: Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        ActiveGuard(count)
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Serves one connection until the peer closes it, it breaks the protocol, the handler asks to
/// close it, no frame arrives for `connections.max.idle.ms` (counted from the last response, or
/// from accept), or shutdown is requested while no request of it is in processing. Every error ends
/// this connection only. The caller instruments it with a span naming the connection id and peer.
pub(crate) async fn run_connection(tcp: TcpStream, ctx: ConnectionContext, _slot: ConnectionSlot) {
    let _active = ActiveGuard::new(Arc::clone(&ctx.active_connections));
    let _counted = ConnectionCounted::new(Arc::clone(&ctx.metrics), ctx.listener_index);
    // Counted under unknown client software until an ApiVersions names it, as Kafka does.
    let recorder = RequestRecorder::new(Arc::clone(&ctx.metrics), ctx.listener_index);
    debug!("accepted");
    let (mut stream, transport_principal) = match &ctx.tls {
        None => (ConnectionStream::Plain(tcp), KafkaPrincipal::anonymous()),
        Some(tls) => {
            let accepted = tokio::select! {
                biased;
                () = ctx.shutdown.cancelled() => {
                    debug!("shutdown during the TLS handshake");
                    return;
                }
                accepted = accept_tls(tcp, tls, ctx.connections_max_idle) => accepted,
            };
            match accepted {
                Ok((stream, principal)) => {
                    // Kafka logs the SSL principal at DEBUG; INFO here, once per connection,
                    // so operators (and tests) see who connected with which certificate.
                    info!(peer = %ctx.peer, listener = %ctx.listener_name, %principal, "TLS handshake completed");
                    (stream, principal)
                }
                Err(error) => {
                    info!(peer = %ctx.peer, listener = %ctx.listener_name, %error, "closing connection: TLS failed");
                    return;
                }
            }
        }
    };
    let mut buf = BytesMut::new();
    let mut staging = TlsStaging::default();
    let principal = match &ctx.authenticator {
        None => Arc::new(transport_principal),
        Some(authenticator) => {
            let mut io = AuthenticationIo {
                stream: &mut stream,
                buf: &mut buf,
                idle: ctx.connections_max_idle,
                peer: ctx.peer,
                local: ctx.local,
                listener_name: &ctx.listener_name,
                recorder: &recorder,
            };
            let authenticated = tokio::select! {
                biased;
                () = ctx.shutdown.cancelled() => {
                    debug!("shutdown during authentication");
                    return;
                }
                authenticated = authenticator.0.authenticate(&mut io) => authenticated,
            };
            match authenticated {
                Ok(principal) => {
                    debug!(%principal, "authenticated");
                    Arc::new(principal)
                }
                Err(error) => {
                    // Kafka logs failed authentications at INFO, with the peer.
                    info!(%error, "closing connection: not authenticated");
                    return;
                }
            }
        }
    };
    let throttle = ChannelThrottle::new();
    // Pipelined answers not written yet, oldest first, each with its frame's pool bytes.
    let mut outstanding: VecDeque<(DeferredResponse, PooledBytes, InFlight)> = VecDeque::new();
    let reason = loop {
        // Idle time counts only while nothing is outstanding; a pipelined answer resolves
        // within its request's own timeout.
        let idle = if outstanding.is_empty() {
            ctx.connections_max_idle
        } else {
            Duration::MAX
        };
        // A client throttled for a quota is not read from until its throttle ends (Kafka mutes
        // the channel); answers already due still go out.
        let muted = throttle.muted_until(Instant::now());
        let event = tokio::select! {
            biased;
            () = ctx.shutdown.cancelled(), if outstanding.is_empty() => break "shutdown",
            answer = oldest_answer(&mut outstanding) => Event::Answer(answer),
            () = sleep_until_unmuted(muted), if muted.is_some() => continue,
            frame = tokio::time::timeout(
                idle,
                read_pooled_frame(&mut stream, &mut buf, ctx.socket_request_max_bytes, &ctx.quotas),
            ), if outstanding.len() < MAX_PIPELINED_RESPONSES && muted.is_none() => Event::Frame(frame),
        };
        let frame = match event {
            Event::Answer(answer) => {
                let Some((_, _pooled, mut in_flight)) = outstanding.pop_front() else {
                    continue;
                };
                in_flight.times.response_done = Instant::now();
                let written =
                    write_response(&mut stream, &mut staging, answer, &mut in_flight).await;
                record(&ctx.metrics, &recorder, &mut in_flight, &written);
                match written {
                    Ok(()) => continue,
                    Err(reason) => break reason,
                }
            }
            Event::Frame(frame) => frame,
        };
        let frame = match frame {
            Err(_elapsed) => break "idle longer than connections.max.idle.ms",
            Ok(frame) => frame,
        };
        // The frame's bytes are the pool's until its response is written.
        let (frame, pooled) = match frame {
            Ok(Some(frame)) => frame,
            Ok(None) => break "closed by peer",
            Err(FrameError::Io(error)) => {
                debug!(%error, "read failed");
                break "read error";
            }
            Err(error @ FrameError::Truncated(_)) => {
                debug!(%error, "truncated frame");
                break "truncated frame";
            }
            Err(error) => {
                warn!(%error, "closing connection: invalid frame");
                break "invalid frame";
            }
        };
        let (reply, response) = oneshot::channel();
        let received = Instant::now();
        let mut in_flight = InFlight {
            api: api_of(&frame),
            kind: Kind::Plain,
            times: RequestTimes {
                request_bytes: frame.len() as u64,
                ..RequestTimes::new(received)
            },
            network_time: None,
        };
        let request = Request {
            frame,
            connection_id: ctx.id,
            peer: ctx.peer,
            local: ctx.local,
            listener_name: Arc::clone(&ctx.listener_name),
            principal: Arc::clone(&principal),
            received_at: received,
            recorder: recorder.clone(),
            throttle: throttle.clone(),
        };
        // Waits while the queue is full: the backpressure of queued.max.requests. A request read
        // before shutdown is still queued and answered.
        if ctx
            .queue
            .send(QueuedRequest { request, reply })
            .await
            .is_err()
        {
            break "request queue closed";
        }
        let handled = match response.await {
            Ok(handled) => handled,
            Err(_) => break "request handler failed",
        };
        ctx.metrics.response_queued(-1);
        in_flight.kind = recorder.take_kind();
        in_flight.network_time = throttle.take_network_time_callback();
        in_flight.times.dequeued = handled.dequeued;
        in_flight.times.local_done = handled.local_done;
        in_flight.times.response_done = handled.local_done;
        let response = match handled.response {
            Response::Pipelined(answer) => {
                outstanding.push_back((answer, pooled, in_flight));
                continue;
            }
            response => response,
        };
        // Answers keep request order: the pipelined ones before this go out first.
        let mut written = Ok(());
        while let Some((answer, _pooled, mut earlier)) = outstanding.pop_front() {
            let answer = answer.await;
            earlier.times.response_done = Instant::now();
            written = write_response(&mut stream, &mut staging, answer, &mut earlier).await;
            record(&ctx.metrics, &recorder, &mut earlier, &written);
            if written.is_err() {
                break;
            }
        }
        if let Err(reason) = written {
            break reason;
        }
        let written = write_response(&mut stream, &mut staging, response, &mut in_flight).await;
        record(&ctx.metrics, &recorder, &mut in_flight, &written);
        if let Err(reason) = written {
            break reason;
        }
        drop(pooled);
    };
    debug!(reason, "connection closed");
}

/// Waits out a quota throttle's deadline.
async fn sleep_until_unmuted(muted: Option<Instant>) {
    if let Some(until) = muted {
        tokio::time::sleep_until(until.into()).await;
    }
}

/// What woke a connection's loop.
enum Event<F> {
    /// The oldest pipelined answer resolved.
    Answer(Response),
    /// A frame was read (or the read ended).
    Frame(F),
}

/// The oldest outstanding pipelined answer, once it resolves; never, while none is outstanding.
async fn oldest_answer(
    outstanding: &mut VecDeque<(DeferredResponse, PooledBytes, InFlight)>,
) -> Response {
    match outstanding.front_mut() {
        Some((answer, _, _)) => answer.as_mut().await,
        None => std::future::pending().await,
    }
}

/// Why a connection ends when its handler asks it to close.
const CLOSED_BY_HANDLER: &str = "closed by the request handler";

/// Writes `response` once it is ready (a deferred or pipelined one is awaited first), noting in
/// `in_flight` when it was ready and written. `Err` carries why the connection ends.
async fn write_response(
    stream: &mut ConnectionStream,
    staging: &mut TlsStaging,
    mut response: Response,
    in_flight: &mut InFlight,
) -> Result<(), &'static str> {
    loop {
        response = match response {
            Response::Deferred(later) | Response::Pipelined(later) => {
                let answer = later.await;
                in_flight.times.response_done = Instant::now();
                answer
            }
            Response::Send(parts) => {
                in_flight.times.send_start = Instant::now();
                let written = write_parts(stream, &parts, staging).await.map_err(|error| {
                    debug!(%error, "write failed");
                    "write error"
                });
                in_flight.times.sent = Instant::now();
                return written;
            }
            Response::NoOp => {
                in_flight.times.send_start = Instant::now();
                in_flight.times.sent = in_flight.times.send_start;
                return Ok(());
            }
            Response::CloseConnection => {
                in_flight.times.send_start = Instant::now();
                in_flight.times.sent = in_flight.times.send_start;
                return Err(CLOSED_BY_HANDLER);
            }
        };
    }
}

/// Records a request's metrics once its answer was written (or its connection closed on the
/// handler's word, as Kafka records a `CloseConnectionResponse`); not when the write failed.
fn record(
    metrics: &NetworkMetrics,
    recorder: &RequestRecorder,
    in_flight: &mut InFlight,
    written: &Result<(), &'static str>,
) {
    if let Some(callback) = in_flight.network_time.take() {
        let times = &in_flight.times;
        callback.call(times.sent.saturating_duration_since(times.send_start));
    }
    let Some((api_key, version)) = in_flight.api else {
        return;
    };
    if written.is_ok() || *written == Err(CLOSED_BY_HANDLER) {
        metrics.record_request(api_key, version, in_flight.kind, &in_flight.times);
        metrics.record_deprecated(api_key, version, in_flight.kind, recorder);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use proptest::prelude::*;
    use tokio::io::ReadBuf;

    use super::*;

    /// Hands out its bytes in the given pieces, one piece (or what fits) per read.
    struct Chunked(VecDeque<Vec<u8>>);

    impl AsyncRead for Chunked {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            if let Some(mut piece) = self.0.pop_front() {
                let n = piece.len().min(buf.remaining());
                buf.put_slice(&piece[..n]);
                if n < piece.len() {
                    self.0.push_front(piece.split_off(n));
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    fn pieces(bytes: &[u8], cuts: &[usize]) -> Chunked {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut out = VecDeque::new();
        let mut at = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            if cut > at {
                out.push_back(bytes[at..cut].to_vec());
                at = cut;
            }
        }
        Chunked(out)
    }

    fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    proptest! {
        /// However the stream is cut into reads, the same frames come out, then a clean end.
        #[test]
        fn any_chunking_yields_the_frames(
            bodies in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..8),
            cuts in prop::collection::vec(any::<usize>(), 0..20),
        ) {
            let slices: Vec<&[u8]> = bodies.iter().map(|b| &b[..]).collect();
            let mut reader = pieces(&framed(&slices), &cuts);
            let got = block_on(async {
                let mut buf = BytesMut::new();
                let mut got = Vec::new();
                while let Some(frame) = read_frame(&mut reader, &mut buf, 300).await.unwrap() {
                    got.push(frame.to_vec());
                }
                got
            });
            prop_assert_eq!(got, bodies);
        }

        /// Arbitrary bytes end in frames no larger than the limit and then an error or the end;
        /// never a panic, never a buffer much larger than the input.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
            let mut reader = &bytes[..];
            block_on(async {
                let mut buf = BytesMut::new();
                while let Ok(Some(frame)) = read_frame(&mut reader, &mut buf, 1000).await {
                    assert!(frame.len() <= 1000);
                }
                assert!(buf.capacity() <= 2 * MAX_READ_STEP);
            });
        }
    }

    fn framed(bodies: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for body in bodies {
            out.extend_from_slice(&(body.len() as i32).to_be_bytes());
            out.extend_from_slice(body);
        }
        out
    }

    #[tokio::test]
    async fn reads_pipelined_frames_then_clean_eof() {
        let bytes = framed(&[b"one", b"", b"three"]);
        let mut reader = &bytes[..];
        let mut buf = BytesMut::new();
        for want in [&b"one"[..], b"", b"three"] {
            let frame = read_frame(&mut reader, &mut buf, 100).await.unwrap();
            assert_eq!(frame.as_deref(), Some(want));
        }
        assert!(
            read_frame(&mut reader, &mut buf, 100)
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn frames_split_across_reads() {
        let bytes = framed(&[b"hello world"]);
        let (mut client, mut server) = tokio::io::duplex(64);
        let task = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for byte in bytes {
                client.write_all(&[byte]).await.unwrap();
            }
        });
        let mut buf = BytesMut::new();
        let frame = read_frame(&mut server, &mut buf, 100).await.unwrap();
        assert_eq!(frame.as_deref(), Some(&b"hello world"[..]));
        task.await.unwrap();
    }

    #[tokio::test]
    async fn rejects_negative_and_oversized_sizes_before_allocating() {
        let mut buf = BytesMut::new();
        let negative = (-1i32).to_be_bytes();
        let err = read_frame(&mut &negative[..], &mut buf, 100).await;
        assert!(matches!(err, Err(FrameError::NegativeSize(-1))));

        let mut buf = BytesMut::new();
        let huge = i32::MAX.to_be_bytes();
        let err = read_frame(&mut &huge[..], &mut buf, 100).await;
        assert!(matches!(
            err,
            Err(FrameError::TooLarge {
                size: i32::MAX,
                max: 100
            })
        ));
        assert!(buf.capacity() < 1024 * 1024);

        // Exactly the limit is allowed.
        let mut buf = BytesMut::new();
        let body = [7u8; 100];
        let bytes = framed(&[&body]);
        let frame = read_frame(&mut &bytes[..], &mut buf, 100).await.unwrap();
        assert_eq!(frame.map(|f| f.len()), Some(100));
    }

    #[tokio::test]
    async fn eof_inside_a_frame_is_truncated() {
        let mut bytes = framed(&[b"abcdef"]);
        bytes.truncate(7);
        let mut buf = BytesMut::new();
        let err = read_frame(&mut &bytes[..], &mut buf, 100).await;
        assert!(matches!(err, Err(FrameError::Truncated(7))));
        let err = read_frame(&mut &[0u8, 0][..], &mut BytesMut::new(), 100).await;
        assert!(matches!(err, Err(FrameError::Truncated(2))));
    }
}
