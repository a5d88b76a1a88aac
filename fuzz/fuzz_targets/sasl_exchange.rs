//! Fuzzes the broker's side of a SASL exchange (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) for one
//! user, `alice`. Two modes:
//! - raw: any tokens, in order, to a fresh server. Nothing may panic; once the exchange fails or
//!   completes every further token is an illegal state; a SCRAM exchange can never complete
//!   (the server's nonce is random), and a PLAIN one only with alice's password.
//! - driven: a correct exchange built by a client written here (RFC 5802 from the primitives),
//!   with the client nonce taken from the input and the client-final (or PLAIN) message then
//!   changed at input-chosen bytes. The unchanged message must authenticate alice, with a
//!   server signature the client verifies; any changed one (a tampered nonce, proof, channel
//!   binding, ...) must be refused unless it parses to the same message.
//!
//! Input: mode byte (bit 0: driven), mechanism byte (0 PLAIN, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512),
//! then for raw mode tokens each prefixed by a little-endian u16 length; for driven mode the
//! client nonce up to a 0 byte, then (u16 position, xor byte) edits.

#![no_main]

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kcli::security::sasl::scram_messages::ClientFinalMessage;
use kcli::security::sasl::{CredentialProvider, SaslError, SaslServer, new_sasl_server};
use kcli::security::scram_credential::{ScramCredential, ScramMechanism};
use libfuzzer_sys::fuzz_target;

const USER: &str = "alice";
const PASSWORD: &str = "alice-secret";
const SALT: &[u8] = b"salt-of-alice";
const ITERATIONS: u32 = 4096;

/// Alice's credentials, derived once per process (4096 PBKDF2 rounds are costly per input).
struct Alice {
    salted: HashMap<ScramMechanism, Vec<u8>>,
}

impl Alice {
    fn get() -> &'static Alice {
        static ALICE: OnceLock<Alice> = OnceLock::new();
        ALICE.get_or_init(|| Alice {
            salted: [ScramMechanism::ScramSha256, ScramMechanism::ScramSha512]
                .into_iter()
                .map(|m| {
                    let i = std::num::NonZeroU32::new(ITERATIONS).expect("non-zero");
                    (m, m.salted_password(PASSWORD, SALT, i))
                })
                .collect(),
        })
    }
}

impl CredentialProvider for Alice {
    fn plain_password(&self, user: &str) -> Option<String> {
        (user == USER).then(|| PASSWORD.to_string())
    }

    fn scram_credential(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        let salted = self.salted.get(&mechanism)?;
        (user == USER).then(|| {
            ScramCredential::from_salted_password(mechanism, SALT.to_vec(), salted, ITERATIONS)
        })
    }
}

struct Shared(&'static Alice);

impl CredentialProvider for Shared {
    fn plain_password(&self, user: &str) -> Option<String> {
        self.0.plain_password(user)
    }
    fn scram_credential(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        self.0.scram_credential(mechanism, user)
    }
}

fn server(mechanism: &str) -> Box<dyn SaslServer + Send> {
    new_sasl_server(mechanism, Arc::new(Shared(Alice::get()))).expect("a known mechanism")
}

/// Feeds `token`; checks the state machine's invariants after it.
fn step(server: &mut Box<dyn SaslServer + Send>, token: &[u8]) -> Option<Vec<u8>> {
    let was_done = server.is_complete();
    let answer = server.evaluate_response(token);
    if was_done {
        assert!(
            matches!(answer, Err(SaslError::IllegalState { .. })),
            "a token after completion was not an illegal state"
        );
    }
    assert_eq!(server.is_complete(), server.authorization_id().is_some());
    answer.ok()
}

fn raw(mechanism: &str, mut data: &[u8]) {
    let mut s = server(mechanism);
    let mut failed = false;
    while data.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([data[0], data[1]]));
        let token = &data[2..(2 + len).min(data.len())];
        data = &data[2 + token.len()..];
        let answer = step(&mut s, token);
        if failed {
            assert!(answer.is_none(), "a failed exchange answered again");
        }
        failed |= answer.is_none();
        if s.is_complete() {
            assert_eq!(s.authorization_id(), Some(USER));
            assert_eq!(
                mechanism, "PLAIN",
                "a SCRAM exchange completed without the nonce"
            );
            let password = token.rsplit(|&b| b == 0).next();
            assert_eq!(password, Some(PASSWORD.as_bytes()));
        }
    }
}

fn edited(message: &[u8], edits: &[u8]) -> Vec<u8> {
    let mut out = message.to_vec();
    for edit in edits.chunks_exact(3) {
        if out.is_empty() {
            break;
        }
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % out.len();
        out[at] ^= edit[2];
    }
    out
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

fn driven_scram(mechanism: ScramMechanism, data: &[u8]) {
    let (nonce, edits) = match data.iter().position(|&b| b == 0) {
        Some(end) => (&data[..end], &data[end + 1..]),
        None => (data, &[][..]),
    };
    let mut client_nonce: String = nonce
        .iter()
        .map(|&b| char::from(b))
        .filter(|c| c.is_ascii_graphic() && *c != ',')
        .collect();
    if client_nonce.is_empty() {
        client_nonce.push_str("fuzz");
    }
    let mut s = server(mechanism.mechanism_name());
    let client_first_bare = format!("n={USER},r={client_nonce}");
    let server_first = step(&mut s, format!("n,,{client_first_bare}").as_bytes())
        .expect("a well-formed client-first is answered");
    let server_first = String::from_utf8(server_first).expect("server-first is text");
    let mut fields = server_first.split(',');
    let nonce = fields
        .next()
        .and_then(|f| f.strip_prefix("r="))
        .expect("r=");
    assert!(nonce.starts_with(&client_nonce) && nonce.len() > client_nonce.len());
    let salt = fields
        .next()
        .and_then(|f| f.strip_prefix("s="))
        .expect("s=");
    assert_eq!(STANDARD.decode(salt).ok().as_deref(), Some(SALT));
    assert_eq!(fields.next(), Some(format!("i={ITERATIONS}").as_str()));

    let salted = &Alice::get().salted[&mechanism];
    let without_proof = format!("c=biws,r={nonce}");
    let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
    let client_key = mechanism.hmac(salted, b"Client Key");
    let stored_key = mechanism.hash(&client_key);
    let proof = xor(
        &client_key,
        &mechanism.hmac(&stored_key, auth_message.as_bytes()),
    );
    let client_final = format!("{without_proof},p={}", STANDARD.encode(proof));
    let sent = edited(client_final.as_bytes(), edits);

    let answer = step(&mut s, &sent);
    if sent == client_final.as_bytes() {
        let answer = answer.expect("the correct client-final authenticates");
        assert_eq!(s.authorization_id(), Some(USER));
        let server_key = mechanism.hmac(salted, b"Server Key");
        let signature = mechanism.hmac(&server_key, auth_message.as_bytes());
        assert_eq!(
            answer,
            format!("v={}", STANDARD.encode(signature)).into_bytes()
        );
    } else if answer.is_some() {
        // Only a change the parser reads back to the same message may pass: base64 as Java
        // decodes it ignores a final character's unused bits.
        let same = ClientFinalMessage::parse(&sent).ok()
            == ClientFinalMessage::parse(client_final.as_bytes()).ok();
        assert!(
            same && s.authorization_id() == Some(USER),
            "a changed client-final was accepted: {:?}",
            String::from_utf8_lossy(&sent)
        );
    } else {
        assert!(!s.is_complete());
    }
    assert!(
        step(&mut s, b"c=biws").is_none(),
        "the exchange went on after it ended"
    );
}

fn driven_plain(edits: &[u8]) {
    let token = format!("\0{USER}\0{PASSWORD}").into_bytes();
    let sent = edited(&token, edits);
    let mut s = server("PLAIN");
    let answer = step(&mut s, &sent);
    if sent == token {
        assert!(answer.is_some() && s.authorization_id() == Some(USER));
    } else {
        assert!(!s.is_complete(), "a changed PLAIN token authenticated");
    }
}

fuzz_target!(|data: &[u8]| {
    let [mode, mechanism, rest @ ..] = data else {
        return;
    };
    let driven = mode & 1 != 0;
    match (mechanism % 3, driven) {
        (0, false) => raw("PLAIN", rest),
        (0, true) => driven_plain(rest),
        (1, false) => raw("SCRAM-SHA-256", rest),
        (1, true) => driven_scram(ScramMechanism::ScramSha256, rest),
        (_, false) => raw("SCRAM-SHA-512", rest),
        (_, true) => driven_scram(ScramMechanism::ScramSha512, rest),
    }
});
