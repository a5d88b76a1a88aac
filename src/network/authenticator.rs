//! The seam where a listener authenticates a connection before its requests reach the handler
//! (Kafka's `Authenticator` inside `KafkaChannel`): a listener with an [`Authenticator`] hands
//! each new connection to it first; the authenticator reads and answers frames through
//! [`AuthenticationIo`] (ApiVersions, SaslHandshake, SaslAuthenticate, or the raw tokens of
//! Kafka's legacy exchange) until it returns the connection's [`KafkaPrincipal`] or refuses the
//! connection, which is then closed. Every request after that carries the principal. A listener
//! without one (PLAINTEXT) serves its connections at once as `User:ANONYMOUS`.
//!
//! The network layer stays ignorant of the SASL protocol: it only moves frames. Frames read
//! during authentication are limited by the authenticator's own maximum
//! (`sasl.server.max.receive.size`), so a peer that has not authenticated cannot make the broker
//! allocate more than that, and each read waits at most `connections.max.idle.ms`.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncWriteExt;

use crate::cluster::kafka_principal::KafkaPrincipal;

use super::connection::{FrameError, read_frame};
use super::metrics::RequestRecorder;
use super::stream::ConnectionStream;

/// Why a connection was not authenticated; it is closed either way.
#[derive(Debug, thiserror::Error)]
pub enum AuthenticationError {
    /// The credentials or the exchange were refused (the client was told why, if the protocol
    /// allowed).
    #[error("authentication failed: {reason}")]
    Failed { reason: String },
    /// A frame other than the exchange allows (Kafka closes the connection without an answer).
    #[error("unexpected request before authentication: {what}")]
    Unexpected { what: String },
    /// A size prefix over the authenticator's limit (`sasl.server.max.receive.size` for SASL):
    /// nothing was allocated for the body. Named apart from [`FrameError::TooLarge`], whose
    /// limit is `socket.request.max.bytes`, so the log says which limit applied.
    #[error(
        "frame of {size} bytes before authentication is larger than \
         sasl.server.max.receive.size ({max})"
    )]
    TooLarge { size: i32, max: i32 },
    /// The peer closed, sent an invalid frame, or went idle.
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("no frame within connections.max.idle.ms ({idle_ms} ms) during authentication")]
    Idle { idle_ms: u64 },
    #[error("write failed during authentication: {0}")]
    Write(std::io::Error),
}

/// Where an authenticator meets its connection: frame in, frame out, and who is at the other end.
#[derive(Debug)]
pub struct AuthenticationIo<'a> {
    pub(super) stream: &'a mut ConnectionStream,
    pub(super) buf: &'a mut BytesMut,
    pub(super) idle: Duration,
    /// The client's address.
    pub peer: SocketAddr,
    /// The broker's address of the connection.
    pub local: SocketAddr,
    /// The listener's name.
    pub listener_name: &'a str,
    /// The connection's request metrics, for the client software an ApiVersions names before
    /// authentication.
    pub(super) recorder: &'a RequestRecorder,
}

impl AuthenticationIo<'_> {
    /// The client named its software in an ApiVersions before authenticating (valid by
    /// Kafka's rules, `unknown` for an empty field): the connection counts under it in
    /// `socket-server-metrics` `connections`, as Kafka's `SaslServerAuthenticator` registers it.
    pub fn client_software(&self, name: &str, version: &str) {
        self.recorder.client_software(name, version);
    }

    /// The next frame's body (no size prefix), at most `max_size` bytes; `Ok(None)` when the
    /// peer closed between frames.
    pub async fn read_frame(
        &mut self,
        max_size: i32,
    ) -> Result<Option<Bytes>, AuthenticationError> {
        match tokio::time::timeout(self.idle, read_frame(self.stream, self.buf, max_size)).await {
            Ok(Err(FrameError::TooLarge { size, max })) => {
                Err(AuthenticationError::TooLarge { size, max })
            }
            Ok(frame) => Ok(frame?),
            Err(_) => Err(AuthenticationError::Idle {
                idle_ms: u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    /// Writes `frame` as it is (a response already framed, its size prefix included).
    pub async fn write_framed(&mut self, frame: &[u8]) -> Result<(), AuthenticationError> {
        self.stream
            .write_all(frame)
            .await
            .map_err(AuthenticationError::Write)?;
        // On TLS the bytes may still sit in rustls's buffer.
        self.stream
            .flush()
            .await
            .map_err(AuthenticationError::Write)
    }

    /// Writes `body` as one frame (the 4-byte size prefix first).
    pub async fn write_frame(&mut self, body: &[u8]) -> Result<(), AuthenticationError> {
        let size = i32::try_from(body.len())
            .map_err(|_| AuthenticationError::Write(std::io::ErrorKind::InvalidInput.into()))?;
        self.stream
            .write_all(&size.to_be_bytes())
            .await
            .map_err(AuthenticationError::Write)?;
        self.stream
            .write_all(body)
            .await
            .map_err(AuthenticationError::Write)?;
        self.stream
            .flush()
            .await
            .map_err(AuthenticationError::Write)
    }
}

/// The future an [`Authenticator`] returns.
pub type AuthenticationFuture<'a> =
    Pin<Box<dyn Future<Output = Result<KafkaPrincipal, AuthenticationError>> + Send + 'a>>;

/// Authenticates the connections of one listener (the server layer's SASL authenticator).
pub trait Authenticator: Send + Sync + 'static {
    /// Runs the exchange on a new connection until it yields the principal or fails.
    fn authenticate<'a>(&'a self, io: &'a mut AuthenticationIo<'_>) -> AuthenticationFuture<'a>;
}

/// A listener's authenticator, as the socket server's configuration holds it (compared by
/// identity).
#[derive(Clone)]
pub struct ListenerAuthenticator(pub Arc<dyn Authenticator>);

impl fmt::Debug for ListenerAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ListenerAuthenticator(..)")
    }
}

impl PartialEq for ListenerAuthenticator {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ListenerAuthenticator {}
