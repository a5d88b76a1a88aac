//! The seam where the outbound client authenticates a new connection before its first request
//! (Kafka's `SaslClientAuthenticator` inside the client's `KafkaChannel`): a
//! [`NetworkClient`](super::NetworkClient) given a [`ClientAuthenticator`] hands it every
//! connection it makes, and sends requests on it only once the authenticator returned `Ok`.
//! The authenticator speaks through [`ClientAuthenticationIo`]: requests out, responses in, on
//! the client's correlation ids, or raw size-prefixed tokens.
//!
//! The network layer stays ignorant of SASL: the server layer implements the exchange
//! (SaslHandshake, SaslAuthenticate) over `security`'s client state machines.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::stream::ConnectionStream;
use bytes::BytesMut;

use crate::protocol::codec as c;
use crate::protocol::messages::{RequestHeader, RequestKind, ResponseKind, encode_request_frame};

use super::network_client::{ExchangeError, exchange};

/// Why a new connection was not authenticated; the client closes it and the request fails.
#[derive(Debug, thiserror::Error)]
pub enum ClientAuthenticationError {
    /// The peer refused the credentials or the mechanism (its message, when it sent one).
    #[error("authentication failed: {reason}")]
    Failed { reason: String },
    /// The peer's answer did not follow the protocol.
    #[error("unexpected answer during authentication: {reason}")]
    Protocol { reason: String },
    #[error("connection lost during authentication: {0}")]
    Io(#[source] std::io::Error),
}

/// A new connection, as its authenticator sees it.
#[derive(Debug)]
pub struct ClientAuthenticationIo<'a> {
    pub(super) stream: &'a mut ConnectionStream,
    pub(super) buffer: &'a mut BytesMut,
    pub(super) next_correlation_id: &'a mut i32,
    pub(super) client_id: &'a str,
    pub(super) max_response_bytes: usize,
    /// `host:port` of the peer.
    pub destination: &'a str,
}

impl ClientAuthenticationIo<'_> {
    /// Sends `body` at `version` (the caller picks a version the peer takes) and reads its
    /// response.
    pub async fn send(
        &mut self,
        body: &RequestKind,
        version: i16,
    ) -> Result<ResponseKind, ClientAuthenticationError> {
        let api = body.api_key();
        let correlation_id = *self.next_correlation_id;
        *self.next_correlation_id = correlation_id.checked_add(1).unwrap_or(0);
        let header = RequestHeader {
            request_api_key: api.info().key,
            request_api_version: version,
            correlation_id,
            client_id: Some(c::StrBytes::from(self.client_id.to_string())),
            unknown_tagged_fields: Vec::new(),
        };
        let frame = encode_request_frame(&header, body).map_err(|e| {
            ClientAuthenticationError::Protocol {
                reason: format!("cannot encode {} v{version}: {e}", api.info().name),
            }
        })?;
        exchange(
            self.stream,
            self.buffer,
            &frame,
            api,
            version,
            correlation_id,
            self.max_response_bytes,
        )
        .await
        .map_err(|e| match e {
            ExchangeError::Io(e) => ClientAuthenticationError::Io(e),
            ExchangeError::TooLarge(size) => ClientAuthenticationError::Protocol {
                reason: format!("a {size}-byte response"),
            },
            ExchangeError::Mismatch(id) => ClientAuthenticationError::Protocol {
                reason: format!("correlation id {id}, expected {correlation_id}"),
            },
            ExchangeError::Decode(e) => ClientAuthenticationError::Protocol {
                reason: format!("undecodable {} response: {e}", api.info().name),
            },
        })
    }
}

/// The future a [`ClientAuthenticator`] returns.
pub(crate) type ClientAuthenticationFuture<'a> =
    Pin<Box<dyn Future<Output = Result<(), ClientAuthenticationError>> + Send + 'a>>;

/// Authenticates each connection the client makes (the server layer's SASL client).
pub trait ClientAuthenticator: Send + Sync + 'static {
    fn authenticate<'a>(
        &'a self,
        io: &'a mut ClientAuthenticationIo<'_>,
    ) -> ClientAuthenticationFuture<'a>;
}

/// A client's authenticator as its configuration holds it.
#[derive(Clone)]
pub struct ClientAuthenticatorHandle(pub Arc<dyn ClientAuthenticator>);

impl fmt::Debug for ClientAuthenticatorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientAuthenticatorHandle(..)")
    }
}
