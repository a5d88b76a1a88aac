//! Kafka's `SaslClientAuthenticator` as a broker runs it toward another broker's SASL
//! inter-broker listener (the network client's [`ClientAuthenticator`] seam): SaslHandshake v1
//! naming `sasl.mechanism.inter.broker.protocol`, then the mechanism's tokens in SaslAuthenticate
//! v2 requests until the client state machine (`security::sasl::client`) completes. The
//! credentials are the `username` and `password` options of the inter-broker listener's JAAS
//! config for that mechanism, as Kafka's broker takes them. A refusal (UNSUPPORTED_SASL_MECHANISM,
//! SASL_AUTHENTICATION_FAILED with the peer's message) or a SCRAM server that fails to prove
//! itself fails the connection.
//!
//! Kafka's client first asks ApiVersions for the SaslAuthenticate version; every broker that
//! has SASL_PLAINTEXT inter-broker listeners with SaslAuthenticate (Kafka 2.5+) takes v2, so
//! kcli sends it directly.

use std::fmt;

use crate::network::client_authenticator::ClientAuthenticationFuture;
use crate::network::{ClientAuthenticationError, ClientAuthenticationIo, ClientAuthenticator};
use crate::protocol::codec as c;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::sasl_authenticate_request::SaslAuthenticateRequest;
use crate::protocol::messages::sasl_handshake_request::SaslHandshakeRequest;
use crate::protocol::messages::{RequestKind, ResponseKind};
use crate::security::sasl::client::new_sasl_client;

const SASL_HANDSHAKE_VERSION: i16 = 1;
const SASL_AUTHENTICATE_VERSION: i16 = 2;

/// The broker's own credentials toward other brokers. `Debug` hides the password.
pub(crate) struct SaslClientAuthenticator {
    pub mechanism: String,
    pub username: String,
    pub password: String,
}

impl fmt::Debug for SaslClientAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslClientAuthenticator")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

fn failed(reason: impl Into<String>) -> ClientAuthenticationError {
    ClientAuthenticationError::Failed {
        reason: reason.into(),
    }
}

fn unexpected(what: &str) -> ClientAuthenticationError {
    ClientAuthenticationError::Protocol {
        reason: format!("a response of another kind to {what}"),
    }
}

impl ClientAuthenticator for SaslClientAuthenticator {
    fn authenticate<'a>(
        &'a self,
        io: &'a mut ClientAuthenticationIo<'_>,
    ) -> ClientAuthenticationFuture<'a> {
        Box::pin(async move {
            let handshake = RequestKind::SaslHandshake(SaslHandshakeRequest {
                mechanism: c::StrBytes::from(self.mechanism.clone()),
            });
            let ResponseKind::SaslHandshake(answer) =
                io.send(&handshake, SASL_HANDSHAKE_VERSION).await?
            else {
                return Err(unexpected("SaslHandshake"));
            };
            if answer.error_code != ErrorCode::None.code() {
                let enabled: Vec<String> =
                    answer.mechanisms.iter().map(|m| m.to_string()).collect();
                return Err(failed(format!(
                    "{} refused SASL mechanism {} (error code {}; it enables {})",
                    io.destination,
                    self.mechanism,
                    answer.error_code,
                    enabled.join(", ")
                )));
            }
            let mut client = new_sasl_client(&self.mechanism, &self.username, &self.password)
                .ok_or_else(|| failed(format!("no SASL client for {}", self.mechanism)))?;
            let mut token = client
                .initial_response()
                .map_err(|e| failed(e.to_string()))?;
            loop {
                let request = RequestKind::SaslAuthenticate(SaslAuthenticateRequest {
                    auth_bytes: bytes::Bytes::from(token),
                    ..SaslAuthenticateRequest::default()
                });
                let ResponseKind::SaslAuthenticate(answer) =
                    io.send(&request, SASL_AUTHENTICATE_VERSION).await?
                else {
                    return Err(unexpected("SaslAuthenticate"));
                };
                if answer.error_code != ErrorCode::None.code() {
                    let message = answer
                        .error_message
                        .as_ref()
                        .map_or_else(String::new, ToString::to_string);
                    return Err(failed(format!(
                        "{} answered error code {}: {message}",
                        io.destination, answer.error_code
                    )));
                }
                match client
                    .evaluate_challenge(&answer.auth_bytes)
                    .map_err(|e| failed(e.to_string()))?
                {
                    Some(next) => token = next,
                    None => return Ok(()),
                }
            }
        })
    }
}
