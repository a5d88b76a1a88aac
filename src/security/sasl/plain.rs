//! SASL/PLAIN (RFC 4616) on the broker, as Kafka 3.9's `PlainSaslServer` with its
//! `PlainServerCallbackHandler`: one client token `[authzid] NUL authcid NUL passwd`, checked
//! against the password the [`CredentialProvider`] holds for `authcid`.

use std::fmt;
use std::sync::Arc;

use ring::digest;
use subtle::ConstantTimeEq;

use crate::security::sasl::{
    AuthenticationFailure, CredentialProvider, PLAIN_MECHANISM, SaslError, SaslServer,
};

/// One PLAIN exchange: a single token, then complete or failed.
///
/// Kafka's rules, in its order: the token decodes as UTF-8 (invalid sequences replaced, as
/// Java's `new String(bytes, UTF_8)`) and splits at NUL into exactly 3 parts; the username and
/// the password must not be empty; the password must match (compared in constant time,
/// CVE-2021-38153; an unknown user fails with the same message); only then is an authorization
/// id other than empty or the username refused (CVE-2017-12610).
pub struct PlainSaslServer {
    credentials: Arc<dyn CredentialProvider>,
    state: PlainState,
}

#[derive(Debug)]
enum PlainState {
    ReceiveResponse,
    Complete { authorization_id: String },
    Failed,
}

impl PlainSaslServer {
    pub fn new(credentials: Arc<dyn CredentialProvider>) -> PlainSaslServer {
        PlainSaslServer {
            credentials,
            state: PlainState::ReceiveResponse,
        }
    }

    fn authenticate(&self, response: &[u8]) -> Result<String, AuthenticationFailure> {
        let response = String::from_utf8_lossy(response);
        // Kafka looks for at most 4 parts, so a token with more NULs reports 4.
        let tokens: Vec<&str> = response.splitn(4, '\0').collect();
        let [authorization_id, username, password] = tokens.as_slice() else {
            return Err(AuthenticationFailure::PlainTokenCount {
                tokens: tokens.len(),
            });
        };
        if username.is_empty() {
            return Err(AuthenticationFailure::UsernameNotSpecified);
        }
        if password.is_empty() {
            return Err(AuthenticationFailure::PasswordNotSpecified);
        }
        let expected = self.credentials.plain_password(username);
        if !expected.is_some_and(|expected| passwords_match(password, &expected)) {
            return Err(AuthenticationFailure::InvalidUsernameOrPassword);
        }
        if !authorization_id.is_empty() && authorization_id != username {
            return Err(AuthenticationFailure::AuthorizationIdMismatch);
        }
        Ok(username.to_string())
    }
}

/// Constant-time equality that hides the lengths too: the digests are compared, not the
/// passwords, so neither an early exit nor a length check tells how much of a guess was right.
fn passwords_match(given: &str, expected: &str) -> bool {
    let given = digest::digest(&digest::SHA512, given.as_bytes());
    let expected = digest::digest(&digest::SHA512, expected.as_bytes());
    given.as_ref().ct_eq(expected.as_ref()).into()
}

impl SaslServer for PlainSaslServer {
    fn mechanism(&self) -> &'static str {
        PLAIN_MECHANISM
    }

    fn evaluate_response(&mut self, response: &[u8]) -> Result<Vec<u8>, SaslError> {
        let state = match self.state {
            PlainState::ReceiveResponse => None,
            PlainState::Complete { .. } => Some("COMPLETE"),
            PlainState::Failed => Some("FAILED"),
        };
        if let Some(state) = state {
            self.state = PlainState::Failed;
            return Err(SaslError::IllegalState {
                mechanism: PLAIN_MECHANISM,
                state,
            });
        }
        match self.authenticate(response) {
            Ok(authorization_id) => {
                self.state = PlainState::Complete { authorization_id };
                Ok(Vec::new())
            }
            Err(failure) => {
                self.state = PlainState::Failed;
                Err(SaslError::AuthenticationFailed(failure))
            }
        }
    }

    fn is_complete(&self) -> bool {
        matches!(self.state, PlainState::Complete { .. })
    }

    fn authorization_id(&self) -> Option<&str> {
        match &self.state {
            PlainState::Complete { authorization_id } => Some(authorization_id),
            _ => None,
        }
    }
}

impl fmt::Debug for PlainSaslServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlainSaslServer")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::sasl::test_support::Users;
    use crate::security::sasl::{ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED, new_sasl_server};
    use proptest::prelude::*;

    fn server() -> Box<dyn SaslServer + Send> {
        new_sasl_server("PLAIN", Users::new(&[("alice", "alice-secret")])).unwrap()
    }

    fn fails_with(token: &[u8], message: &str) {
        let mut s = server();
        let err = s.evaluate_response(token).unwrap_err();
        assert_eq!(err.error_code(), SASL_AUTHENTICATION_FAILED, "{token:?}");
        assert_eq!(err.error_message(), message, "{token:?}");
        assert!(!s.is_complete());
        assert_eq!(s.authorization_id(), None);
    }

    #[test]
    fn a_right_password_authenticates() {
        for token in [&b"\0alice\0alice-secret"[..], b"alice\0alice\0alice-secret"] {
            let mut s = server();
            assert_eq!(s.mechanism(), "PLAIN");
            assert_eq!(s.evaluate_response(token).unwrap(), b"");
            assert!(s.is_complete());
            assert_eq!(s.authorization_id(), Some("alice"));
        }
    }

    #[test]
    fn failures_carry_kafkas_messages() {
        let invalid = "Authentication failed: Invalid username or password";
        fails_with(b"\0alice\0wrong", invalid);
        fails_with(b"\0alice\0alice-secreT", invalid);
        fails_with(b"\0alice\0alice-secret-and-more", invalid);
        fails_with(b"\0bob\0alice-secret", invalid);
        fails_with(b"\0\0x", "Authentication failed: username not specified");
        fails_with(
            b"\0alice\0",
            "Authentication failed: password not specified",
        );
        fails_with(b"", "Invalid SASL/PLAIN response: expected 3 tokens, got 1");
        fails_with(
            b"alice",
            "Invalid SASL/PLAIN response: expected 3 tokens, got 1",
        );
        fails_with(
            b"\0alice",
            "Invalid SASL/PLAIN response: expected 3 tokens, got 2",
        );
        fails_with(
            b"\0alice\0alice-secret\0",
            "Invalid SASL/PLAIN response: expected 3 tokens, got 4",
        );
        fails_with(
            b"a\0b\0c\0d\0e\0f",
            "Invalid SASL/PLAIN response: expected 3 tokens, got 4",
        );
    }

    #[test]
    fn another_authorization_id_is_refused_after_the_password_checks() {
        // CVE-2017-12610: authenticating as alice must not make the client admin.
        fails_with(
            b"admin\0alice\0alice-secret",
            "Authentication failed: Client requested an authorization id that is different from username",
        );
        // With a wrong password the answer is about the password, as in Kafka.
        fails_with(
            b"admin\0alice\0wrong",
            "Authentication failed: Invalid username or password",
        );
    }

    #[test]
    fn a_second_token_is_an_illegal_state() {
        let mut s = server();
        s.evaluate_response(b"\0alice\0alice-secret").unwrap();
        let err = s.evaluate_response(b"\0alice\0alice-secret").unwrap_err();
        assert_eq!(err.error_code(), ILLEGAL_SASL_STATE);
        assert_eq!(
            err.error_message(),
            "Unexpected challenge in Sasl server state COMPLETE"
        );
        assert!(!s.is_complete());

        let mut s = server();
        s.evaluate_response(b"\0alice\0wrong").unwrap_err();
        let err = s.evaluate_response(b"\0alice\0alice-secret").unwrap_err();
        assert_eq!(err.error_code(), ILLEGAL_SASL_STATE);
        assert!(!s.is_complete());
    }

    #[test]
    fn invalid_utf8_is_replaced_not_trusted() {
        fails_with(
            b"\0alice\0alice-secre\xff",
            "Authentication failed: Invalid username or password",
        );
    }

    proptest! {
        #[test]
        fn arbitrary_tokens_never_panic(first in proptest::collection::vec(any::<u8>(), 0..300),
                                        second in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut s = server();
            let result = s.evaluate_response(&first);
            prop_assert_eq!(result.is_ok(), s.is_complete());
            prop_assert_eq!(s.is_complete(), s.authorization_id() == Some("alice"));
            prop_assert!(s.evaluate_response(&second).is_err());
        }
    }
}
