//! The broker's SASL mechanisms: a [`SaslServer`] per authenticating connection, as Kafka's
//! `SaslServerAuthenticator` drives a `javax.security.sasl.SaslServer`, the errors it answers
//! with, and the [`CredentialProvider`] it reads users from.
//!
//! - `plain`: SASL/PLAIN (RFC 4616), Kafka's `PlainSaslServer`.
//! - `scram`: SASL/SCRAM-SHA-256/512 (RFC 5802, RFC 7677), Kafka's `ScramSaslServer`.
//! - `scram_messages`: SCRAM's client messages parsed and server messages written.
//! - [`client`]: the client side of PLAIN and SCRAM, for the broker's inter-broker connections.
//!
//! How a caller uses it: on SaslHandshake, [`new_sasl_server`] for the mechanism; then each
//! SaslAuthenticate's `auth_bytes` (or each unframed token after SaslHandshake v0) goes to
//! [`SaslServer::evaluate_response`], whose bytes go back to the client (also when empty,
//! in SaslAuthenticate); once [`SaslServer::is_complete`], the principal is
//! `User:` + [`SaslServer::authorization_id`]. A [`SaslError`] ends the exchange: see its
//! docs for the error code and message Kafka answers with.

pub mod client;
pub(crate) mod plain;
pub(crate) mod scram;
pub(crate) mod scram_messages;

use std::fmt;
use std::sync::Arc;

use crate::security::scram_credential::{ScramCredential, ScramMechanism};

pub use plain::PlainSaslServer;
pub use scram::ScramSaslServer;

/// Kafka's `Errors.SASL_AUTHENTICATION_FAILED`.
pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// Kafka's `Errors.ILLEGAL_SASL_STATE`.
pub const ILLEGAL_SASL_STATE: i16 = 34;

/// Kafka's name of the PLAIN mechanism.
pub const PLAIN_MECHANISM: &str = "PLAIN";

/// One connection's side of a SASL exchange, as Kafka uses `javax.security.sasl.SaslServer`.
///
/// Invariants: once [`evaluate_response`](SaslServer::evaluate_response) has returned an error
/// or completed the exchange, every further call fails with [`SaslError::IllegalState`];
/// [`authorization_id`](SaslServer::authorization_id) is `Some` exactly when
/// [`is_complete`](SaslServer::is_complete).
pub trait SaslServer: fmt::Debug {
    /// The mechanism's SASL name (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`).
    fn mechanism(&self) -> &'static str;

    /// Takes the client's next token and returns the challenge to send back (empty for none).
    fn evaluate_response(&mut self, response: &[u8]) -> Result<Vec<u8>, SaslError>;

    /// Whether the client has authenticated.
    fn is_complete(&self) -> bool;

    /// The authenticated user, once the exchange is complete.
    fn authorization_id(&self) -> Option<&str>;
}

/// Where the SASL servers find users: the broker implements it from the JAAS config's
/// `user_<name>` entries (PLAIN) and from ZooKeeper's `/config/users/<user>` (SCRAM).
/// Lookups happen on the connection's task, so they must not block on I/O.
pub trait CredentialProvider: Send + Sync {
    /// The PLAIN password of `user`, if the user exists.
    fn plain_password(&self, user: &str) -> Option<String>;

    /// The SCRAM credential of `user` for `mechanism`, if there is one.
    fn scram_credential(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential>;
}

/// A server for `mechanism` (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`; case-sensitive, as
/// Kafka's), or `None` for a mechanism kcli lacks.
pub fn new_sasl_server(
    mechanism: &str,
    credentials: Arc<dyn CredentialProvider>,
) -> Option<Box<dyn SaslServer + Send>> {
    if mechanism == PLAIN_MECHANISM {
        return Some(Box::new(PlainSaslServer::new(credentials)));
    }
    let scram = ScramMechanism::for_mechanism_name(mechanism)?;
    Some(Box::new(ScramSaslServer::new(scram, credentials)))
}

/// Why an exchange failed, grouped as Kafka's exceptions are, since the group decides what the
/// client is told. `Display` is exactly the `error_message` Kafka puts in SaslAuthenticate's
/// response; [`SaslError::error_code`] its error code.
#[derive(Debug, thiserror::Error)]
pub enum SaslError {
    /// Kafka's `SaslAuthenticationException`: SASL_AUTHENTICATION_FAILED, and the client is told
    /// the reason.
    #[error("{0}")]
    AuthenticationFailed(AuthenticationFailure),
    /// Kafka's `SaslException`: SASL_AUTHENTICATION_FAILED with a fixed message, because the
    /// reason may reveal whether the user exists. `reason` is for the broker's log only. (Kafka
    /// says "re-authentication" during KIP-368 re-authentication, which kcli does not offer.)
    #[error(
        "Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
    )]
    InvalidCredentials {
        mechanism: &'static str,
        #[source]
        reason: CredentialFailure,
    },
    /// Kafka's `IllegalSaslStateException`: a token after the exchange ended (completed or
    /// failed). ILLEGAL_SASL_STATE. Kafka's authenticator sends no SaslAuthenticate response
    /// for it and closes the connection.
    #[error("Unexpected challenge in Sasl server state {state}")]
    IllegalState {
        mechanism: &'static str,
        state: &'static str,
    },
}

impl SaslError {
    /// The Kafka error code for SaslAuthenticate's response.
    pub fn error_code(&self) -> i16 {
        match self {
            SaslError::IllegalState { .. } => ILLEGAL_SASL_STATE,
            SaslError::AuthenticationFailed(_) | SaslError::InvalidCredentials { .. } => {
                SASL_AUTHENTICATION_FAILED
            }
        }
    }

    /// The `error_message` for SaslAuthenticate's response (the same as `Display`).
    pub fn error_message(&self) -> String {
        self.to_string()
    }
}

/// The failures whose reason Kafka tells the client (its `SaslAuthenticationException`s); the
/// messages are Kafka's, word for word.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthenticationFailure {
    /// PLAIN: the token is not `[authzid] NUL authcid NUL passwd`. `tokens` counts the
    /// NUL-separated parts, at most 4, as Kafka stops counting there.
    #[error("Invalid SASL/PLAIN response: expected 3 tokens, got {tokens}")]
    PlainTokenCount { tokens: usize },
    #[error("Authentication failed: username not specified")]
    UsernameNotSpecified,
    #[error("Authentication failed: password not specified")]
    PasswordNotSpecified,
    /// PLAIN: unknown user or wrong password, indistinguishably.
    #[error("Authentication failed: Invalid username or password")]
    InvalidUsernameOrPassword,
    /// The client asked to act as someone else (CVE-2017-12610).
    #[error(
        "Authentication failed: Client requested an authorization id that is different from username"
    )]
    AuthorizationIdMismatch,
}

/// Why a SCRAM exchange failed, for the broker's log; the client only sees
/// [`SaslError::InvalidCredentials`]'s fixed message. Kafka's `SaslException` messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialFailure {
    #[error("Invalid SCRAM client first message format: {problem}")]
    InvalidClientFirstMessage { problem: &'static str },
    #[error("Invalid SCRAM client final message format: {problem}")]
    InvalidClientFinalMessage { problem: &'static str },
    /// No credential for this user and mechanism.
    #[error("Authentication failed: Invalid user credentials (user {user:?})")]
    UnknownUser { user: String },
    /// `tokenauth=true`: delegation tokens are not supported, so no token id is known, which
    /// is how Kafka fails a token id it does not know.
    #[error("Token Authentication failed: Invalid tokenId : {token_id}")]
    DelegationTokenUnsupported { token_id: String },
    #[error("Iterations {iterations} is less than the minimum {minimum} for {mechanism}")]
    TooFewIterations {
        iterations: u32,
        minimum: u32,
        mechanism: ScramMechanism,
    },
    /// CVE-2024-56128: the client-final nonce must end with the server-first nonce.
    #[error("Invalid client nonce in the final client message.")]
    NonceMismatch,
    /// The client-final `c=` is not the base64 of the client-first's gs2 header.
    #[error("Invalid channel binding in the final client message.")]
    ChannelBindingMismatch,
    /// The proof does not verify against the StoredKey: a wrong password.
    #[error("Invalid client credentials")]
    InvalidProof,
    #[error("Authentication failed: Credentials could not be obtained (no secure random bytes)")]
    RandomUnavailable,
}

#[cfg(test)]
pub(crate) mod test_support;
