//! TLS on both sides of the network layer, with rustls: a listener's [`ListenerTls`] (the
//! server configuration and the builder that turns the client's certificate into the
//! connection's principal) and the handshake a connection task runs before anything else; the
//! inter-broker client's handshake at connect (`connect_tls`).
//!
//! The rustls configurations are built elsewhere (the server layer, from the `ssl.*` keys); this
//! layer only runs handshakes. On an SSL listener the principal comes from the certificate; on a
//! SASL_SSL listener the authenticator runs after the handshake, over the TLS stream, and its
//! principal replaces it (Kafka's `SaslServerAuthenticator` does the same).

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::{TlsAcceptor, TlsConnector, TlsStream};

use super::stream::ConnectionStream;
use crate::cluster::kafka_principal::KafkaPrincipal;

/// Turns the certificates a TLS client presented into its principal (Kafka's
/// `DefaultKafkaPrincipalBuilder` for SSL: `User:` + the mapped subject, or `User:ANONYMOUS`
/// without a certificate).
pub trait SslPrincipalBuilder: Send + Sync + 'static {
    /// `peer_certificates` is the client's chain, its own certificate first, already verified
    /// by rustls; `None` when it presented none. The error says why the certificate yields no
    /// principal; the connection is then closed.
    fn build(
        &self,
        peer_certificates: Option<&[CertificateDer<'static>]>,
    ) -> Result<KafkaPrincipal, String>;
}

/// A listener's TLS: every connection starts with a handshake under `config`. Compared by
/// identity.
#[derive(Clone)]
pub struct ListenerTls {
    pub config: Arc<rustls::ServerConfig>,
    pub principal_builder: Arc<dyn SslPrincipalBuilder>,
}

impl fmt::Debug for ListenerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ListenerTls(..)")
    }
}

impl PartialEq for ListenerTls {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.config, &other.config)
            && Arc::ptr_eq(&self.principal_builder, &other.principal_builder)
    }
}

impl Eq for ListenerTls {}

/// Why a TLS connection was not established; it is closed.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS handshake failed: {0}")]
    Handshake(#[source] io::Error),
    #[error("no TLS handshake within {timeout_ms} ms")]
    Timeout { timeout_ms: u64 },
    #[error("the client certificate yields no principal: {reason}")]
    Principal { reason: String },
    #[error("{host:?} is not a valid TLS server name")]
    ServerName { host: String },
}

/// Runs the server side of the handshake on `tcp`, within `timeout`, and builds the
/// principal from the client's certificate.
pub(crate) async fn accept_tls(
    tcp: TcpStream,
    tls: &ListenerTls,
    timeout: Duration,
) -> Result<(ConnectionStream, KafkaPrincipal), TlsError> {
    let acceptor = TlsAcceptor::from(Arc::clone(&tls.config));
    let stream = tokio::time::timeout(timeout, acceptor.accept(tcp))
        .await
        .map_err(|_| TlsError::Timeout {
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        })?
        .map_err(TlsError::Handshake)?;
    let stream = ConnectionStream::Tls(Box::new(TlsStream::Server(stream)));
    let principal = tls
        .principal_builder
        .build(stream.peer_certificates())
        .map_err(|reason| TlsError::Principal { reason })?;
    Ok((stream, principal))
}

/// Runs the client side of the handshake on `tcp` to `destination` (`host:port`, the host
/// checked against the server's certificate).
pub(crate) async fn connect_tls(
    tcp: TcpStream,
    config: &Arc<rustls::ClientConfig>,
    destination: &str,
) -> Result<ConnectionStream, TlsError> {
    let host = destination
        .rsplit_once(':')
        .map_or(destination, |(host, _port)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(host.to_string()).map_err(|_| TlsError::ServerName {
        host: host.to_string(),
    })?;
    let stream = TlsConnector::from(Arc::clone(config))
        .connect(name, tcp)
        .await
        .map_err(TlsError::Handshake)?;
    Ok(ConnectionStream::Tls(Box::new(TlsStream::Client(stream))))
}
