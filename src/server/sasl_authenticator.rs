//! Kafka's `SaslServerAuthenticator`: the exchange a SASL listener runs on each new connection
//! before any other request (the network layer's [`Authenticator`] seam).
//!
//! States, as Kafka's: first an optional ApiVersions (answered as on any listener), then
//! SaslHandshake naming a mechanism of `sasl.enabled.mechanisms` (UNSUPPORTED_SASL_MECHANISM and
//! closed otherwise), then the mechanism's tokens until its server completes:
//! - after SaslHandshake v1+, each token is the `auth_bytes` of a SaslAuthenticate request and
//!   its answer a SaslAuthenticate response (`session_lifetime_ms` 0: no KIP-368
//!   re-authentication); a failure is answered with SASL_AUTHENTICATION_FAILED and its message,
//!   then the connection is closed;
//! - after SaslHandshake v0 (old clients, kafka-python's `api_version=(0,10,1)`), tokens are
//!   raw size-prefixed frames both ways, and a failure just closes the connection.
//!
//! Any other request before authentication closes the connection unanswered, and every frame is
//! limited by `sasl.server.max.receive.size`. The principal is `User:` + the mechanism's
//! authorization id. A refused connection is closed after `connection.failed.authentication.delay.ms`
//! (Kafka's 100 ms default), which slows down password guessing.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::cluster::kafka_principal::KafkaPrincipal;
use crate::network::authenticator::AuthenticationFuture;
use crate::network::{AuthenticationError, AuthenticationIo, Authenticator};
use crate::protocol::codec::{self as c, Reader};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::sasl_authenticate_response::SaslAuthenticateResponse;
use crate::protocol::messages::sasl_handshake_response::SaslHandshakeResponse;
use crate::protocol::messages::{
    self, ApiKey, RequestHeader, RequestKind, ResponseKind, decode_request_header,
};
use crate::security::sasl::{CredentialProvider, SaslError, SaslServer, new_sasl_server};

use super::api_versions::advertised;
use super::apis::api_versions;

/// The SASL settings of one listener.
pub struct SaslAuthenticator {
    /// `sasl.enabled.mechanisms` of the listener, in the configured order (SaslHandshake
    /// answers with them).
    pub enabled_mechanisms: Vec<String>,
    pub credentials: Arc<dyn CredentialProvider>,
    /// `sasl.server.max.receive.size`.
    pub max_receive_size: i32,
    /// `connection.failed.authentication.delay.ms`.
    pub failed_authentication_delay: Duration,
}

impl std::fmt::Debug for SaslAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslAuthenticator")
            .field("enabled_mechanisms", &self.enabled_mechanisms)
            .finish()
    }
}

impl Authenticator for SaslAuthenticator {
    fn authenticate<'a>(&'a self, io: &'a mut AuthenticationIo<'_>) -> AuthenticationFuture<'a> {
        Box::pin(async move {
            let result = self.exchange(io).await;
            if matches!(result, Err(AuthenticationError::Failed { .. })) {
                tokio::time::sleep(self.failed_authentication_delay).await;
            }
            result
        })
    }
}

/// Where the exchange is (Kafka's `SaslState`, with the mechanism's server once chosen).
enum State {
    HandshakeOrVersions,
    Handshake,
    Authenticate {
        server: Box<dyn SaslServer + Send>,
        /// SaslHandshake v1+: tokens come in SaslAuthenticate requests.
        framed: bool,
    },
}

fn unexpected(what: impl Into<String>) -> AuthenticationError {
    AuthenticationError::Unexpected { what: what.into() }
}

fn failed(reason: impl Into<String>) -> AuthenticationError {
    AuthenticationError::Failed {
        reason: reason.into(),
    }
}

impl SaslAuthenticator {
    async fn exchange(
        &self,
        io: &mut AuthenticationIo<'_>,
    ) -> Result<KafkaPrincipal, AuthenticationError> {
        let mut state = State::HandshakeOrVersions;
        loop {
            let frame = io
                .read_frame(self.max_receive_size)
                .await?
                .ok_or_else(|| failed("closed by the client"))?;
            state = match state {
                State::HandshakeOrVersions | State::Handshake => {
                    self.handle_kafka_request(
                        io,
                        frame,
                        matches!(state, State::HandshakeOrVersions),
                    )
                    .await?
                }
                State::Authenticate { mut server, framed } => {
                    if framed {
                        let (header, token) = self.sasl_authenticate_token(frame)?;
                        self.evaluate_framed(io, &mut server, &header, &token)
                            .await?;
                    } else {
                        let challenge = server.evaluate_response(&frame).map_err(|e| {
                            tracing::info!(mechanism = server.mechanism(), error = %e,
                                reason = failure_reason(&e), "SASL authentication failed");
                            failed(e.error_message())
                        })?;
                        // Kafka answers every token of the unframed exchange, an empty one too.
                        io.write_frame(&challenge).await?;
                    }
                    if server.is_complete() {
                        let user = server
                            .authorization_id()
                            .ok_or_else(|| failed("no authorization id"))?;
                        return Ok(KafkaPrincipal::user(user));
                    }
                    State::Authenticate { server, framed }
                }
            };
        }
    }

    /// ApiVersions (first only) or SaslHandshake; anything else closes the connection.
    async fn handle_kafka_request(
        &self,
        io: &mut AuthenticationIo<'_>,
        frame: Bytes,
        versions_allowed: bool,
    ) -> Result<State, AuthenticationError> {
        let mut r = Reader::new(frame);
        let header = decode_request_header(&mut r)
            .map_err(|e| unexpected(format!("undecodable request header: {e}")))?;
        let api = ApiKey::from_i16(header.request_api_key)
            .ok_or_else(|| unexpected(format!("api key {}", header.request_api_key)))?;
        let version = header.request_api_version;
        match api {
            ApiKey::ApiVersions if versions_allowed => {
                let supported = advertised(api).is_some_and(|range| range.contains(version));
                if !supported {
                    // KIP-511: a v0 answer the client can pick a version from; try again.
                    let body =
                        ResponseKind::ApiVersions(api_versions::unsupported_version_response());
                    respond(io, &header, &body, 0).await?;
                    return Ok(State::HandshakeOrVersions);
                }
                let request = match RequestKind::decode(api, &mut r, version) {
                    Ok(RequestKind::ApiVersions(request)) => request,
                    Ok(_) => return Err(unexpected("undecodable ApiVersions")),
                    Err(e) => return Err(unexpected(format!("undecodable ApiVersions: {e}"))),
                };
                // Kafka's SaslServerAuthenticator: an invalid one is answered INVALID_REQUEST
                // and another may follow; a valid one names the client's software.
                let Some((name, software_version)) =
                    api_versions::client_software(&request, version)
                else {
                    let body = ResponseKind::ApiVersions(api_versions::invalid_request_response());
                    respond(io, &header, &body, version).await?;
                    return Ok(State::HandshakeOrVersions);
                };
                io.client_software(&name, &software_version);
                let body = ResponseKind::ApiVersions(api_versions::response());
                respond(io, &header, &body, version).await?;
                Ok(State::Handshake)
            }
            ApiKey::SaslHandshake if advertised(api).is_some_and(|r| r.contains(version)) => {
                let request = match RequestKind::decode(api, &mut r, version) {
                    Ok(RequestKind::SaslHandshake(request)) => request,
                    Ok(_) | Err(_) => return Err(unexpected("undecodable SaslHandshake")),
                };
                let mechanism = request.mechanism.to_string();
                let mechanisms: Vec<c::StrBytes> = self
                    .enabled_mechanisms
                    .iter()
                    .map(|m| c::StrBytes::from(m.as_str()))
                    .collect();
                let server = self
                    .enabled_mechanisms
                    .contains(&mechanism)
                    .then(|| new_sasl_server(&mechanism, Arc::clone(&self.credentials)))
                    .flatten();
                let code = if server.is_some() {
                    ErrorCode::None
                } else {
                    ErrorCode::UnsupportedSaslMechanism
                };
                let body = ResponseKind::SaslHandshake(SaslHandshakeResponse {
                    error_code: code.code(),
                    mechanisms,
                });
                respond(io, &header, &body, version).await?;
                match server {
                    Some(server) => Ok(State::Authenticate {
                        server,
                        framed: version >= 1,
                    }),
                    None => Err(failed(format!("Unsupported SASL mechanism {mechanism}"))),
                }
            }
            other => Err(unexpected(format!(
                "Unexpected Kafka request of type {other:?} v{version} during SASL handshake."
            ))),
        }
    }

    /// The header and `auth_bytes` of a SaslAuthenticate request; any other request closes the
    /// connection.
    fn sasl_authenticate_token(
        &self,
        frame: Bytes,
    ) -> Result<(RequestHeader, Bytes), AuthenticationError> {
        let mut r = Reader::new(frame);
        let header = decode_request_header(&mut r)
            .map_err(|e| unexpected(format!("undecodable request header: {e}")))?;
        let api = ApiKey::from_i16(header.request_api_key);
        let version = header.request_api_version;
        if api != Some(ApiKey::SaslAuthenticate)
            || !advertised(ApiKey::SaslAuthenticate).is_some_and(|r| r.contains(version))
        {
            return Err(unexpected(format!(
                "Unexpected Kafka request of type {api:?} v{version} during SASL authentication."
            )));
        }
        match RequestKind::decode(ApiKey::SaslAuthenticate, &mut r, version) {
            Ok(RequestKind::SaslAuthenticate(request)) => Ok((header, request.auth_bytes)),
            _ => Err(unexpected("undecodable SaslAuthenticate")),
        }
    }

    /// One SaslAuthenticate: the server's answer, or its failure answered and the connection
    /// refused. ILLEGAL_SASL_STATE is not answered (Kafka closes at once).
    async fn evaluate_framed(
        &self,
        io: &mut AuthenticationIo<'_>,
        server: &mut Box<dyn SaslServer + Send>,
        header: &RequestHeader,
        token: &[u8],
    ) -> Result<(), AuthenticationError> {
        let version = header.request_api_version;
        match server.evaluate_response(token) {
            Ok(challenge) => {
                let body = ResponseKind::SaslAuthenticate(SaslAuthenticateResponse {
                    auth_bytes: Bytes::from(challenge),
                    session_lifetime_ms: 0,
                    ..SaslAuthenticateResponse::default()
                });
                respond(io, header, &body, version).await
            }
            Err(e @ SaslError::IllegalState { .. }) => Err(failed(e.error_message())),
            Err(e) => {
                tracing::info!(mechanism = server.mechanism(), peer = %io.peer, error = %e,
                    reason = failure_reason(&e), "SASL authentication failed");
                let body = ResponseKind::SaslAuthenticate(SaslAuthenticateResponse {
                    error_code: e.error_code(),
                    error_message: Some(c::StrBytes::from(e.error_message())),
                    ..SaslAuthenticateResponse::default()
                });
                respond(io, header, &body, version).await?;
                Err(failed(e.error_message()))
            }
        }
    }
}

/// Writes `body` as the answer to `header`'s request at `version`.
async fn respond(
    io: &mut AuthenticationIo<'_>,
    header: &RequestHeader,
    body: &ResponseKind,
    version: i16,
) -> Result<(), AuthenticationError> {
    let frame = messages::encode_response_frame(header.correlation_id, body, version)
        .map_err(|e| failed(format!("cannot encode the response: {e}")))?;
    io.write_framed(&frame).await
}

/// What the client is not told of a failure (whether the user exists, which check failed): for
/// the broker's log only.
fn failure_reason(e: &SaslError) -> String {
    std::error::Error::source(e).map_or_else(String::new, |s| s.to_string())
}
