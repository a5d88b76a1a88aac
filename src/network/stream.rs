//! The byte stream under a connection: plain TCP, or TLS (rustls) over TCP, on either side of
//! the connection (the socket server accepts, the inter-broker client connects).
//!
//! An enum rather than a trait object, so each read or write costs one match and the plaintext
//! path stays what it was: the `TcpStream` itself, reachable with [`ConnectionStream::as_plain`]
//! for `sendfile(2)`. TLS streams are boxed (rustls keeps its record buffers inline).

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsStream;

/// A connection's stream. Invariant: the TLS variant has completed its handshake.
#[derive(Debug)]
pub enum ConnectionStream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl ConnectionStream {
    /// The TCP stream when there is no TLS layer, for writes that bypass user space.
    pub fn as_plain(&self) -> Option<&TcpStream> {
        match self {
            ConnectionStream::Plain(tcp) => Some(tcp),
            ConnectionStream::Tls(_) => None,
        }
    }

    /// Whether bytes written go through TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, ConnectionStream::Tls(_))
    }

    /// The DER certificates the peer presented in the TLS handshake, its own first; `None` on
    /// plain TCP or when it presented none.
    pub fn peer_certificates(&self) -> Option<&[rustls_pki_types::CertificateDer<'static>]> {
        match self {
            ConnectionStream::Plain(_) => None,
            ConnectionStream::Tls(tls) => tls.get_ref().1.peer_certificates(),
        }
    }
}

impl From<TcpStream> for ConnectionStream {
    fn from(tcp: TcpStream) -> Self {
        ConnectionStream::Plain(tcp)
    }
}

impl AsyncRead for ConnectionStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ConnectionStream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            ConnectionStream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ConnectionStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ConnectionStream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            ConnectionStream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ConnectionStream::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            ConnectionStream::Tls(tls) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            ConnectionStream::Plain(tcp) => tcp.is_write_vectored(),
            ConnectionStream::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ConnectionStream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            ConnectionStream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ConnectionStream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            ConnectionStream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}
