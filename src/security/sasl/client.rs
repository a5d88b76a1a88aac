//! The client side of SASL/PLAIN and SASL/SCRAM-SHA-256/512, as a broker uses it toward other
//! brokers (Kafka's `SaslClientAuthenticator` over the JDK's `PlainClient` and Kafka's
//! `ScramSaslClient`): pure state machines, bytes in and bytes out. The caller sends
//! [`SaslClient::initial_response`], then hands each server answer to
//! [`SaslClient::evaluate_challenge`] and sends what it returns, until it returns `None` with
//! the exchange complete.
//!
//! PLAIN: one token `NUL username NUL password` (no authorization id); the server's (empty)
//! answer completes it. SCRAM (RFC 5802): client-first `n,,n=<saslname>,r=<nonce>`; the
//! server-first `r=<nonce>,s=<salt>,i=<iterations>` must extend our nonce and give 4096 to
//! 16384 iterations; client-final `c=biws,r=<nonce>,p=<proof>`; the server-final `v=<signature>`
//! must be the server's signature of the AuthMessage, compared in constant time, which proves
//! the server knew the credential (an `e=<error>` answer fails the exchange).

use std::fmt;
use std::mem;
use std::num::NonZeroU32;

use base64::Engine;
use subtle::ConstantTimeEq;

use crate::security::JAVA_BASE64;
use crate::security::sasl::PLAIN_MECHANISM;
use crate::security::sasl::scram_messages::username_to_sasl_name;
use crate::security::scram_credential::{ScramMechanism, secure_random_string};

/// One connection's client side of a SASL exchange.
pub trait SaslClient: fmt::Debug + Send {
    /// The mechanism's SASL name.
    fn mechanism(&self) -> &'static str;

    /// The first token, sent before any challenge.
    fn initial_response(&mut self) -> Result<Vec<u8>, SaslClientError>;

    /// The server's answer to the last token: the next token to send, or `None` once the
    /// exchange is complete.
    fn evaluate_challenge(&mut self, challenge: &[u8]) -> Result<Option<Vec<u8>>, SaslClientError>;

    /// Whether the exchange completed (and, for SCRAM, the server proved itself).
    fn is_complete(&self) -> bool;
}

/// A client for `mechanism` (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`) authenticating as
/// `username` with `password`; `None` for a mechanism kcli lacks.
pub fn new_sasl_client(
    mechanism: &str,
    username: &str,
    password: &str,
) -> Option<Box<dyn SaslClient>> {
    if mechanism == PLAIN_MECHANISM {
        return Some(Box::new(PlainSaslClient {
            username: username.to_string(),
            password: password.to_string(),
            state: PlainClientState::Initial,
        }));
    }
    let scram = ScramMechanism::for_mechanism_name(mechanism)?;
    Some(Box::new(ScramSaslClient::new(scram, username, password)))
}

/// Why a client exchange failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaslClientError {
    #[error("{mechanism}: a token was asked for in state {state}")]
    IllegalState {
        mechanism: &'static str,
        state: &'static str,
    },
    #[error("PLAIN: the server answered the credentials with a non-empty challenge")]
    UnexpectedPlainChallenge,
    #[error("invalid SCRAM server first message: {problem}")]
    InvalidServerFirstMessage { problem: &'static str },
    #[error("SCRAM: the server nonce does not extend the client nonce")]
    NonceMismatch,
    #[error("SCRAM: the server asks for {iterations} iterations, outside {min}..={max}")]
    IterationsOutOfRange { iterations: u32, min: u32, max: u32 },
    #[error("SCRAM: the server refused the exchange: {message}")]
    ServerError { message: String },
    #[error("invalid SCRAM server final message")]
    InvalidServerFinalMessage,
    #[error("SCRAM: the server's signature is wrong (it does not hold this user's credential)")]
    InvalidServerSignature,
    #[error("SCRAM: no secure random bytes for the nonce")]
    RandomUnavailable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlainClientState {
    Initial,
    Sent,
    Complete,
    Failed,
}

/// SASL/PLAIN's client. `Debug` hides the password.
struct PlainSaslClient {
    username: String,
    password: String,
    state: PlainClientState,
}

impl fmt::Debug for PlainSaslClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlainSaslClient")
            .field("username", &self.username)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl SaslClient for PlainSaslClient {
    fn mechanism(&self) -> &'static str {
        PLAIN_MECHANISM
    }

    fn initial_response(&mut self) -> Result<Vec<u8>, SaslClientError> {
        if self.state != PlainClientState::Initial {
            return Err(self.illegal());
        }
        self.state = PlainClientState::Sent;
        Ok(format!("\0{}\0{}", self.username, self.password).into_bytes())
    }

    fn evaluate_challenge(&mut self, challenge: &[u8]) -> Result<Option<Vec<u8>>, SaslClientError> {
        if self.state != PlainClientState::Sent {
            return Err(self.illegal());
        }
        if !challenge.is_empty() {
            self.state = PlainClientState::Failed;
            return Err(SaslClientError::UnexpectedPlainChallenge);
        }
        self.state = PlainClientState::Complete;
        Ok(None)
    }

    fn is_complete(&self) -> bool {
        self.state == PlainClientState::Complete
    }
}

impl PlainSaslClient {
    fn illegal(&mut self) -> SaslClientError {
        let state = match self.state {
            PlainClientState::Initial => "INITIAL",
            PlainClientState::Sent => "SENT",
            PlainClientState::Complete => "COMPLETE",
            PlainClientState::Failed => "FAILED",
        };
        self.state = PlainClientState::Failed;
        SaslClientError::IllegalState {
            mechanism: PLAIN_MECHANISM,
            state,
        }
    }
}

/// Kafka's `ScramSaslClient` states, with what each step keeps for the next.
#[derive(Debug)]
enum ScramClientState {
    SendClientFirstMessage,
    ReceiveServerFirstMessage {
        client_first_bare: String,
        client_nonce: String,
    },
    ReceiveServerFinalMessage {
        expected_server_signature: Vec<u8>,
    },
    Complete,
    Failed,
}

/// SASL/SCRAM's client. `Debug` hides the password.
struct ScramSaslClient {
    mechanism: ScramMechanism,
    username: String,
    password: String,
    state: ScramClientState,
    /// Replaces the random client nonce, to replay RFC 7677's example in tests.
    #[cfg(test)]
    fixed_nonce: Option<String>,
}

impl fmt::Debug for ScramSaslClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramSaslClient")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl ScramSaslClient {
    fn new(mechanism: ScramMechanism, username: &str, password: &str) -> ScramSaslClient {
        ScramSaslClient {
            mechanism,
            username: username.to_string(),
            password: password.to_string(),
            state: ScramClientState::SendClientFirstMessage,
            #[cfg(test)]
            fixed_nonce: None,
        }
    }

    fn client_nonce(&self) -> Result<String, SaslClientError> {
        #[cfg(test)]
        if let Some(nonce) = &self.fixed_nonce {
            return Ok(nonce.clone());
        }
        secure_random_string().map_err(|_| SaslClientError::RandomUnavailable)
    }

    /// The client-final message and the server signature to expect, from the server-first.
    fn client_final(
        &self,
        client_first_bare: &str,
        client_nonce: &str,
        server_first: &[u8],
    ) -> Result<(String, Vec<u8>), SaslClientError> {
        let invalid = |problem| SaslClientError::InvalidServerFirstMessage { problem };
        let server_first = std::str::from_utf8(server_first).map_err(|_| invalid("not UTF-8"))?;
        if let Some(message) = server_first.strip_prefix("e=") {
            return Err(SaslClientError::ServerError {
                message: message.to_string(),
            });
        }
        let mut fields = server_first.split(',');
        let nonce = fields
            .next()
            .and_then(|f| f.strip_prefix("r="))
            .ok_or(invalid("no r=<nonce>"))?;
        let salt = fields
            .next()
            .and_then(|f| f.strip_prefix("s="))
            .and_then(|s| JAVA_BASE64.decode(s).ok())
            .ok_or(invalid("no s=<base64 salt>"))?;
        let iterations: u32 = fields
            .next()
            .and_then(|f| f.strip_prefix("i="))
            .and_then(|i| i.parse().ok())
            .ok_or(invalid("no i=<iterations>"))?;
        if nonce.len() <= client_nonce.len() || !nonce.starts_with(client_nonce) {
            return Err(SaslClientError::NonceMismatch);
        }
        let (min, max) = (
            self.mechanism.min_iterations(),
            self.mechanism.max_iterations(),
        );
        // Kafka's client checks only the minimum; the maximum keeps a hostile peer from making
        // the broker spin in PBKDF2 (no credential Kafka creates has more).
        let checked = NonZeroU32::new(iterations)
            .filter(|_| (min..=max).contains(&iterations))
            .ok_or(SaslClientError::IterationsOutOfRange {
                iterations,
                min,
                max,
            })?;
        let salted = self
            .mechanism
            .salted_password(&self.password, &salt, checked);
        let client_key = self.mechanism.hmac(&salted, b"Client Key");
        let stored_key = self.mechanism.hash(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
        let signature = self.mechanism.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = self.mechanism.hmac(&salted, b"Server Key");
        let server_signature = self.mechanism.hmac(&server_key, auth_message.as_bytes());
        Ok((
            format!("{without_proof},p={}", JAVA_BASE64.encode(proof)),
            server_signature,
        ))
    }
}

impl SaslClient for ScramSaslClient {
    fn mechanism(&self) -> &'static str {
        self.mechanism.mechanism_name()
    }

    fn initial_response(&mut self) -> Result<Vec<u8>, SaslClientError> {
        match mem::replace(&mut self.state, ScramClientState::Failed) {
            ScramClientState::SendClientFirstMessage => {
                let client_nonce = self.client_nonce()?;
                let client_first_bare = format!(
                    "n={},r={client_nonce}",
                    username_to_sasl_name(&self.username)
                );
                let message = format!("n,,{client_first_bare}");
                self.state = ScramClientState::ReceiveServerFirstMessage {
                    client_first_bare,
                    client_nonce,
                };
                Ok(message.into_bytes())
            }
            _ => Err(SaslClientError::IllegalState {
                mechanism: self.mechanism.mechanism_name(),
                state: "AFTER_CLIENT_FIRST_MESSAGE",
            }),
        }
    }

    fn evaluate_challenge(&mut self, challenge: &[u8]) -> Result<Option<Vec<u8>>, SaslClientError> {
        match mem::replace(&mut self.state, ScramClientState::Failed) {
            ScramClientState::ReceiveServerFirstMessage {
                client_first_bare,
                client_nonce,
            } => {
                let (message, expected_server_signature) =
                    self.client_final(&client_first_bare, &client_nonce, challenge)?;
                self.state = ScramClientState::ReceiveServerFinalMessage {
                    expected_server_signature,
                };
                Ok(Some(message.into_bytes()))
            }
            ScramClientState::ReceiveServerFinalMessage {
                expected_server_signature,
            } => {
                let text = std::str::from_utf8(challenge)
                    .map_err(|_| SaslClientError::InvalidServerFinalMessage)?;
                if let Some(message) = text.strip_prefix("e=") {
                    return Err(SaslClientError::ServerError {
                        message: message.to_string(),
                    });
                }
                let signature = text
                    .split(',')
                    .next()
                    .and_then(|v| v.strip_prefix("v="))
                    .and_then(|v| JAVA_BASE64.decode(v).ok())
                    .ok_or(SaslClientError::InvalidServerFinalMessage)?;
                if !bool::from(signature.ct_eq(&expected_server_signature)) {
                    return Err(SaslClientError::InvalidServerSignature);
                }
                self.state = ScramClientState::Complete;
                Ok(None)
            }
            ScramClientState::SendClientFirstMessage => Err(SaslClientError::IllegalState {
                mechanism: self.mechanism.mechanism_name(),
                state: "SEND_CLIENT_FIRST_MESSAGE",
            }),
            ScramClientState::Complete => Err(SaslClientError::IllegalState {
                mechanism: self.mechanism.mechanism_name(),
                state: "COMPLETE",
            }),
            ScramClientState::Failed => Err(SaslClientError::IllegalState {
                mechanism: self.mechanism.mechanism_name(),
                state: "FAILED",
            }),
        }
    }

    fn is_complete(&self) -> bool {
        matches!(self.state, ScramClientState::Complete)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::sasl::test_support::Users;
    use crate::security::sasl::{SaslServer, new_sasl_server};
    use crate::security::scram_credential::ScramCredential;

    /// Runs `client` against `server` to the end: Ok when both completed.
    fn run(client: &mut dyn SaslClient, server: &mut dyn SaslServer) -> Result<(), String> {
        let mut token = client.initial_response().map_err(|e| e.to_string())?;
        loop {
            let challenge = server
                .evaluate_response(&token)
                .map_err(|e| format!("server: {e}"))?;
            match client
                .evaluate_challenge(&challenge)
                .map_err(|e| format!("client: {e}"))?
            {
                Some(next) => token = next,
                None => break,
            }
        }
        assert!(client.is_complete() && server.is_complete());
        Ok(())
    }

    #[test]
    fn every_mechanism_authenticates_against_the_broker_side() {
        let users = Users::new(&[("broker", "broker-secret"), ("a,b=c", "odd")]);
        for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
            for (user, password) in [("broker", "broker-secret"), ("a,b=c", "odd")] {
                let mut client = new_sasl_client(mechanism, user, password).unwrap();
                assert_eq!(client.mechanism(), mechanism);
                let mut server = new_sasl_server(mechanism, users.clone()).unwrap();
                run(client.as_mut(), server.as_mut()).unwrap();
                assert_eq!(server.authorization_id(), Some(user));
            }
            let mut client = new_sasl_client(mechanism, "broker", "wrong").unwrap();
            let mut server = new_sasl_server(mechanism, users.clone()).unwrap();
            let err = run(client.as_mut(), server.as_mut()).unwrap_err();
            assert!(err.starts_with("server:"), "{mechanism}: {err}");
        }
        assert!(new_sasl_client("GSSAPI", "u", "p").is_none());
    }

    #[test]
    fn rfc_7677s_example_exchange() {
        // RFC 7677 §3: user "user", password "pencil".
        let mut client = ScramSaslClient::new(ScramMechanism::ScramSha256, "user", "pencil");
        client.fixed_nonce = Some("rOprNGfwEbeRWgbNEkqO".into());
        assert_eq!(
            client.initial_response().unwrap(),
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
        );
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
            s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let last = client.evaluate_challenge(server_first).unwrap().unwrap();
        assert_eq!(
            String::from_utf8(last).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert_eq!(
            client
                .evaluate_challenge(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
                .unwrap(),
            None
        );
        assert!(client.is_complete());
    }

    #[test]
    fn a_server_that_does_not_know_the_credential_is_refused() {
        let mut client = new_sasl_client("SCRAM-SHA-512", "broker", "broker-secret").unwrap();
        // The server holds another password's credential: its signature cannot match, and
        // neither does our proof, which the server refuses; a server that skipped the proof
        // check would still be caught by the signature.
        let other =
            ScramCredential::generate(ScramMechanism::ScramSha512, "x", b"salt", 4096).unwrap();
        let first = client.initial_response().unwrap();
        let first = String::from_utf8(first).unwrap();
        let nonce = first.rsplit_once("r=").unwrap().1;
        let server_first = format!(
            "r={nonce}server,s={},i=4096",
            JAVA_BASE64.encode(&other.salt)
        );
        client.evaluate_challenge(server_first.as_bytes()).unwrap();
        let forged = format!("v={}", JAVA_BASE64.encode([0u8; 64]));
        assert_eq!(
            client.evaluate_challenge(forged.as_bytes()).unwrap_err(),
            SaslClientError::InvalidServerSignature
        );
        assert!(!client.is_complete());
    }

    #[test]
    fn bad_server_first_messages_are_refused() {
        for (server_first, want) in [
            ("r=other,s=c2FsdA==,i=4096", "nonce"),
            ("r={n},s=c2FsdA==,i=4096", "nonce"),
            ("r={n}x,s=c2FsdA==,i=4095", "iterations"),
            ("r={n}x,s=c2FsdA==,i=100000000", "iterations"),
            ("r={n}x,s=!!,i=4096", "salt"),
            ("r={n}x,i=4096", "salt"),
            ("e=unknown-user", "refused"),
            ("", "nonce"),
        ] {
            let mut client = new_sasl_client("SCRAM-SHA-256", "u", "p").unwrap();
            let first = String::from_utf8(client.initial_response().unwrap()).unwrap();
            let nonce = first.rsplit_once("r=").unwrap().1;
            let message = server_first.replace("{n}", nonce);
            let err = client.evaluate_challenge(message.as_bytes()).unwrap_err();
            assert!(err.to_string().contains(want), "{message}: {err}");
            assert!(client.evaluate_challenge(b"v=").is_err());
        }
        let mut plain = new_sasl_client("PLAIN", "u", "p").unwrap();
        assert_eq!(plain.initial_response().unwrap(), b"\0u\0p");
        assert!(plain.evaluate_challenge(b"x").is_err());
        assert!(!plain.is_complete());
    }
}
