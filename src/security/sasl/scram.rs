//! SASL/SCRAM-SHA-256 and SCRAM-SHA-512 on the broker (RFC 5802, RFC 7677), as Kafka 3.9's
//! `ScramSaslServer`, with the client-final nonce check of Kafka 3.9.1 (CVE-2024-56128).

use std::fmt;
use std::mem;
use std::sync::Arc;

use subtle::ConstantTimeEq;

use crate::security::sasl::scram_messages::{
    ClientFinalMessage, ClientFirstMessage, ServerFirstMessage, server_final_message,
};
use crate::security::sasl::{
    AuthenticationFailure, CredentialFailure, CredentialProvider, SaslError, SaslServer,
};
use crate::security::scram_credential::{ScramCredential, ScramMechanism, secure_random_string};

/// One SCRAM exchange, Kafka's state machine:
///
/// ```text
/// RECEIVE_CLIENT_FIRST_MESSAGE --client-first--> RECEIVE_CLIENT_FINAL_MESSAGE --client-final--> COMPLETE
///            \________________________ any error _________________________/---------------> FAILED
/// ```
///
/// Client-first (`n,,n=<user>,r=<cnonce>`): refused when malformed, for a delegation token
/// (`tokenauth=true`: kcli has none), for a user without a credential for this mechanism
/// (failing at once, as Kafka does, with the same fixed message as a wrong password), for an
/// authorization id other than the user, and for a credential below the mechanism's minimum
/// iterations. The answer is server-first `r=<cnonce><snonce>,s=<salt>,i=<iterations>`, the
/// server's nonce part being Kafka's 130-bit base-36 random string.
///
/// Client-final (`c=<cbind>,r=<nonce>,p=<proof>`): the nonce must end with the server-first
/// nonce (CVE-2024-56128; Kafka 3.9.1 checks `endsWith`, which old librdkafka relies on), `c=` must be the base64 of the client-first's gs2 header (`biws` for
/// `n,,`), and `H(proof XOR HMAC(StoredKey, AuthMessage))` must equal StoredKey, compared in
/// constant time. AuthMessage is `client-first-bare "," server-first "," client-final-without-proof`.
/// The answer is server-final `v=<base64 HMAC(ServerKey, AuthMessage)>`.
pub struct ScramSaslServer {
    mechanism: ScramMechanism,
    credentials: Arc<dyn CredentialProvider>,
    state: ScramState,
    /// Replaces the random server nonce, to replay a recorded exchange in tests.
    #[cfg(test)]
    fixed_server_nonce: Option<String>,
}

#[derive(Debug)]
enum ScramState {
    ReceiveClientFirstMessage,
    ReceiveClientFinalMessage(Box<Exchange>),
    Complete { authorization_id: String },
    Failed,
}

/// What the client-first step leaves for the client-final step.
#[derive(Debug)]
struct Exchange {
    username: String,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    credential: ScramCredential,
}

impl ScramSaslServer {
    pub fn new(mechanism: ScramMechanism, credentials: Arc<dyn CredentialProvider>) -> Self {
        ScramSaslServer {
            mechanism,
            credentials,
            state: ScramState::ReceiveClientFirstMessage,
            #[cfg(test)]
            fixed_server_nonce: None,
        }
    }

    /// A server whose nonce part is `server_nonce` instead of a random one.
    #[cfg(test)]
    pub(crate) fn with_server_nonce(
        mechanism: ScramMechanism,
        credentials: Arc<dyn CredentialProvider>,
        server_nonce: &str,
    ) -> Self {
        let mut server = ScramSaslServer::new(mechanism, credentials);
        server.fixed_server_nonce = Some(server_nonce.to_string());
        server
    }

    fn invalid(&self, reason: CredentialFailure) -> SaslError {
        SaslError::InvalidCredentials {
            mechanism: self.mechanism.mechanism_name(),
            reason,
        }
    }

    fn server_nonce(&self) -> Result<String, SaslError> {
        #[cfg(test)]
        if let Some(nonce) = &self.fixed_server_nonce {
            return Ok(nonce.clone());
        }
        secure_random_string().map_err(|_| self.invalid(CredentialFailure::RandomUnavailable))
    }

    fn client_first(&self, response: &[u8]) -> Result<Exchange, SaslError> {
        let first = ClientFirstMessage::parse(response).map_err(|r| self.invalid(r))?;
        if first.token_authenticated() {
            return Err(self.invalid(CredentialFailure::DelegationTokenUnsupported {
                token_id: first.username,
            }));
        }
        let server_nonce = self.server_nonce()?;
        let credential = self
            .credentials
            .scram_credential(self.mechanism, &first.username)
            .ok_or_else(|| {
                self.invalid(CredentialFailure::UnknownUser {
                    user: first.username.clone(),
                })
            })?;
        if !first.authorization_id.is_empty() && first.authorization_id != first.username {
            return Err(SaslError::AuthenticationFailed(
                AuthenticationFailure::AuthorizationIdMismatch,
            ));
        }
        if credential.iterations < self.mechanism.min_iterations() {
            return Err(self.invalid(CredentialFailure::TooFewIterations {
                iterations: credential.iterations,
                minimum: self.mechanism.min_iterations(),
                mechanism: self.mechanism,
            }));
        }
        let server_first = ServerFirstMessage {
            nonce: format!("{}{server_nonce}", first.nonce),
            salt: credential.salt.clone(),
            iterations: credential.iterations,
        };
        Ok(Exchange {
            username: first.username,
            gs2_header: first.gs2_header,
            client_first_bare: first.bare,
            server_first: server_first.to_message(),
            nonce: server_first.nonce,
            credential,
        })
    }

    /// The server-final message, once the proof verifies.
    fn client_final(&self, exchange: &Exchange, response: &[u8]) -> Result<Vec<u8>, SaslError> {
        let last = ClientFinalMessage::parse(response).map_err(|r| self.invalid(r))?;
        // Kafka 3.9.1 checks `endsWith`, not equality: librdkafka before 2.6.1 sends the
        // client nonce once more in front (confluentinc/librdkafka#4895), and the proof, which
        // signs the message as sent, still binds the server's nonce.
        if !last.nonce.ends_with(&exchange.nonce) {
            return Err(self.invalid(CredentialFailure::NonceMismatch));
        }
        if last.channel_binding != exchange.gs2_header.as_bytes() {
            return Err(self.invalid(CredentialFailure::ChannelBindingMismatch));
        }
        let auth_message = format!(
            "{},{},{}",
            exchange.client_first_bare, exchange.server_first, last.without_proof
        );
        let stored_key = &exchange.credential.stored_key;
        let client_signature = self.mechanism.hmac(stored_key, auth_message.as_bytes());
        if last.proof.len() != client_signature.len() {
            return Err(self.invalid(CredentialFailure::InvalidProof));
        }
        let client_key: Vec<u8> = last
            .proof
            .iter()
            .zip(&client_signature)
            .map(|(p, s)| p ^ s)
            .collect();
        let computed_stored_key = self.mechanism.hash(&client_key);
        if !bool::from(computed_stored_key.ct_eq(stored_key)) {
            return Err(self.invalid(CredentialFailure::InvalidProof));
        }
        let server_signature = self
            .mechanism
            .hmac(&exchange.credential.server_key, auth_message.as_bytes());
        Ok(server_final_message(&server_signature).into_bytes())
    }
}

impl SaslServer for ScramSaslServer {
    fn mechanism(&self) -> &'static str {
        self.mechanism.mechanism_name()
    }

    fn evaluate_response(&mut self, response: &[u8]) -> Result<Vec<u8>, SaslError> {
        // Every error leaves the exchange FAILED, and the credential is dropped either way.
        match mem::replace(&mut self.state, ScramState::Failed) {
            ScramState::ReceiveClientFirstMessage => {
                let exchange = self.client_first(response)?;
                let reply = exchange.server_first.clone().into_bytes();
                self.state = ScramState::ReceiveClientFinalMessage(Box::new(exchange));
                Ok(reply)
            }
            ScramState::ReceiveClientFinalMessage(exchange) => {
                let reply = self.client_final(&exchange, response)?;
                self.state = ScramState::Complete {
                    authorization_id: exchange.username,
                };
                Ok(reply)
            }
            ScramState::Complete { .. } => Err(SaslError::IllegalState {
                mechanism: self.mechanism.mechanism_name(),
                state: "COMPLETE",
            }),
            ScramState::Failed => Err(SaslError::IllegalState {
                mechanism: self.mechanism.mechanism_name(),
                state: "FAILED",
            }),
        }
    }

    fn is_complete(&self) -> bool {
        matches!(self.state, ScramState::Complete { .. })
    }

    fn authorization_id(&self) -> Option<&str> {
        match &self.state {
            ScramState::Complete { authorization_id } => Some(authorization_id),
            _ => None,
        }
    }
}

impl fmt::Debug for ScramSaslServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramSaslServer")
            .field("mechanism", &self.mechanism)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[path = "scram_tests.rs"]
mod tests;
