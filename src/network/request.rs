//! What passes between the network layer and the request handler: a [`Request`] (one frame read
//! from a connection), the [`Response`] the handler gives back, and the [`RequestHandler`] trait
//! the server layer implements. Kafka's `RequestChannel.Request` / `RequestChannel.Response`.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::channel_throttle::ChannelThrottle;
use super::metrics::RequestRecorder;
use crate::cluster::kafka_principal::KafkaPrincipal;

/// Identifies one accepted connection for the life of a [`SocketServer`](super::SocketServer).
///
/// Invariant: unique per server, assigned in accept order starting at 0, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u64);

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "conn-{}", self.0)
    }
}

/// One request frame as read from a connection.
///
/// `frame` is the frame body without its 4-byte size prefix: the request header followed by the
/// request body, exactly as the client sent it. It is a slice of the connection's read buffer, so
/// the codec can hand out sub-slices (record batches) without copying.
///
/// Invariant: `frame.len() <= socket.request.max.bytes` of the listener's server.
#[derive(Debug, Clone)]
pub struct Request {
    pub frame: Bytes,
    pub connection_id: ConnectionId,
    /// The client's address.
    pub peer: SocketAddr,
    /// The broker's address of this connection (which interface the client reached).
    pub local: SocketAddr,
    /// The listener's name (`PLAINTEXT`, or the name given in `listeners`).
    pub listener_name: Arc<str>,
    /// Who the connection authenticated as; `User:ANONYMOUS` on a listener without
    /// authentication.
    pub principal: Arc<KafkaPrincipal>,
    /// When the whole frame had been read; the start of the request's time in the broker.
    pub received_at: Instant,
    /// Where the handler reports what the request metrics need and only it knows (the kind of
    /// fetch, the errors of the response).
    pub recorder: RequestRecorder,
    /// The connection's mute deadline: a handler that throttles the client for a quota sets
    /// it, and the connection reads nothing more before it.
    pub throttle: ChannelThrottle,
}

/// A byte range of a file, written to the socket with `sendfile(2)` without passing through user
/// space (the fetch path's segment data).
///
/// Invariant (the handler's to keep): `position + len` is within the file when the response is
/// written. A file found shorter than that ends the connection, since the client would otherwise
/// read a corrupt response.
#[derive(Debug, Clone)]
pub struct FileRange {
    pub file: Arc<std::fs::File>,
    pub position: u64,
    pub len: u64,
}

/// One piece of a response, written in order after the previous one.
#[derive(Debug, Clone)]
pub enum ResponsePart {
    /// Written as it is.
    Bytes(Bytes),
    /// Sent from the file with `sendfile(2)`.
    File(FileRange),
}

impl ResponsePart {
    /// How many bytes this part puts on the wire.
    pub fn len(&self) -> u64 {
        match self {
            ResponsePart::Bytes(bytes) => bytes.len() as u64,
            ResponsePart::File(range) => range.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Bytes> for ResponsePart {
    fn from(bytes: Bytes) -> Self {
        ResponsePart::Bytes(bytes)
    }
}

impl From<FileRange> for ResponsePart {
    fn from(range: FileRange) -> Self {
        ResponsePart::File(range)
    }
}

/// A response that is not ready yet; see [`Response::Deferred`].
pub type DeferredResponse = Pin<Box<dyn Future<Output = Response> + Send + 'static>>;

/// What the handler wants done with a request's connection. Kafka's `SendResponse`,
/// `NoOpResponse` and `CloseConnectionResponse`.
pub enum Response {
    /// Write these parts, in order, then read the next request. The handler frames the response:
    /// the first part starts with the 4-byte size prefix, which counts every byte that follows it
    /// in all parts.
    Send(Vec<ResponsePart>),
    /// Write nothing and read the next request (a produce with acks=0).
    NoOp,
    /// Close the connection without writing anything (a malformed request, or an error on an
    /// acks=0 produce, where closing is the only way to tell the client).
    CloseConnection,
    /// The answer comes later (a long-poll fetch, an acks=all produce waiting in purgatory). The
    /// future is awaited by the connection's own task, not by an I/O handler task, so a parked
    /// request does not hold one of the `num.io.threads` handlers; the connection still reads
    /// nothing more until it resolves and is written.
    Deferred(DeferredResponse),
    /// The request's effects are done and only its answer waits (an acks=all produce whose
    /// batches are in the log, waiting for the followers): the connection goes on reading and
    /// handing over its next requests while this resolves, up to
    /// [`MAX_PIPELINED_RESPONSES`] answers outstanding, and writes every answer in request
    /// order. Each later request is still handed over only once the handling of the one before
    /// it has returned, so effects keep request order; only the answers overlap.
    ///
    /// Kafka mutes the channel until each response is sent, so a producer's five requests in
    /// flight reach one partition's log one replication round trip apart; pipelined, the
    /// followers fetch them together. Appends still happen one request at a time, in order.
    Pipelined(DeferredResponse),
}

/// How many [`Response::Pipelined`] answers a connection holds outstanding before it stops
/// reading: the Java producer's default `max.in.flight.requests.per.connection`, the most an
/// idempotent producer may have.
pub const MAX_PIPELINED_RESPONSES: usize = 5;

impl Response {
    /// A response written from one buffer (size prefix included).
    pub fn bytes(bytes: Bytes) -> Self {
        Response::Send(vec![ResponsePart::Bytes(bytes)])
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Response::Send(parts) => f.debug_tuple("Send").field(parts).finish(),
            Response::NoOp => f.write_str("NoOp"),
            Response::CloseConnection => f.write_str("CloseConnection"),
            Response::Deferred(_) => f.write_str("Deferred(..)"),
            Response::Pipelined(_) => f.write_str("Pipelined(..)"),
        }
    }
}

/// Answers requests; the server layer's `KafkaApis` implements it. The network layer knows
/// nothing of Kafka's APIs: it hands over frames and writes back what it is given.
///
/// Called from the `num.io.threads` handler tasks, several requests at once (but never two of one
/// connection). A panic in `handle` closes that request's connection only.
pub trait RequestHandler: Send + Sync + 'static {
    fn handle(&self, request: Request) -> impl Future<Output = Response> + Send;
}
