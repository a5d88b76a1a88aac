//! SCRAM's messages (RFC 5802 §7) as Kafka 3.9's `ScramMessages` reads and writes them: the
//! client-first and client-final messages parsed from a client's bytes, the server-first and
//! server-final messages written.
//!
//! Kafka matches each client message against a regular expression over 7-bit characters, so a
//! byte outside `0x01..=0x7F` never parses. Where Kafka rebuilds the messages from their parts
//! to compute the AuthMessage, this keeps the bytes the client sent, as RFC 5802 defines it;
//! for the messages Kafka accepts from a standard client the two are the same.

use base64::Engine;

use crate::security::JAVA_BASE64;
use crate::security::sasl::CredentialFailure;

/// Kafka's `ScramLoginModule.TOKEN_AUTH_CONFIG`: the extension that marks a delegation token.
pub(crate) const TOKEN_AUTH_EXTENSION: &str = "tokenauth";

/// `gs2-header [reserved-mext ","] username "," nonce ["," extensions]`.
///
/// Accepted: gs2 header `n,,` or `n,a=<saslname>,` (Kafka supports no channel binding, so
/// `y` and `p=` are refused); `n=<saslname>` with `=2C`/`=3D` escapes; `r=<printable>`; then
/// `key=value` extensions with alphabetic keys. The reserved `m=` is refused, as RFC 5802
/// requires (Kafka would skip it and then fail the proof).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientFirstMessage {
    /// The gs2 header as sent, with its trailing comma: what `c=` must encode.
    pub gs2_header: String,
    /// The decoded `a=` of the gs2 header; empty when absent.
    pub authorization_id: String,
    /// The decoded `n=`.
    pub username: String,
    /// The client's nonce, `r=`.
    pub nonce: String,
    /// The extensions in the client's order.
    pub extensions: Vec<(String, String)>,
    /// `client-first-message-bare` as sent: everything after the gs2 header.
    pub bare: String,
}

impl ClientFirstMessage {
    pub(crate) fn parse(bytes: &[u8]) -> Result<ClientFirstMessage, CredentialFailure> {
        let invalid = |problem| CredentialFailure::InvalidClientFirstMessage { problem };
        let text = seven_bit(bytes).ok_or(invalid("a byte outside 0x01..=0x7f"))?;
        let parts: Vec<&str> = text.split(',').collect();
        match parts.first().copied() {
            Some("n") => {}
            Some("y") => return Err(invalid("channel binding (y) is not supported")),
            Some(p) if p.starts_with("p=") => {
                return Err(invalid("channel binding (p=) is not supported"));
            }
            _ => return Err(invalid("the gs2 header does not start with n")),
        }
        let authzid_field = parts.get(1).copied().ok_or(invalid("no gs2 header"))?;
        let authorization_id = if authzid_field.is_empty() {
            String::new()
        } else {
            let name = authzid_field
                .strip_prefix("a=")
                .ok_or(invalid("the gs2 header's authzid is not a="))?;
            sasl_name_to_username(name).ok_or(invalid("the authzid is not a saslname"))?
        };
        let gs2_len = 1 + 1 + authzid_field.len() + 1;
        let bare = text.get(gs2_len..).ok_or(invalid("no username"))?;
        let mut fields = parts.get(2..).unwrap_or_default().iter().copied();
        let username_field = fields.next().ok_or(invalid("no username"))?;
        if username_field.starts_with("m=") {
            return Err(invalid("the reserved m= attribute is present"));
        }
        let username = username_field
            .strip_prefix("n=")
            .and_then(sasl_name_to_username)
            .ok_or(invalid("the username is not n=<saslname>"))?;
        let nonce = fields
            .next()
            .and_then(|f| f.strip_prefix("r="))
            .filter(|n| is_printable(n))
            .ok_or(invalid("the nonce is not r=<printable>"))?;
        let extensions = fields
            .map(parse_extension)
            .collect::<Option<Vec<_>>>()
            .ok_or(invalid("an extension is not <alpha>=<value>"))?;
        Ok(ClientFirstMessage {
            gs2_header: text[..gs2_len].to_string(),
            authorization_id,
            username,
            nonce: nonce.to_string(),
            extensions,
            bare: bare.to_string(),
        })
    }

    /// The value of extension `key` (the last one if repeated, as Kafka's map keeps it).
    pub(crate) fn extension(&self, key: &str) -> Option<&str> {
        self.extensions
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `tokenauth` is `true` (any case, as Java's `Boolean.parseBoolean`).
    pub(crate) fn token_authenticated(&self) -> bool {
        self.extension(TOKEN_AUTH_EXTENSION)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}

/// `channel-binding "," nonce ["," extensions] "," proof`: `c=<base64>,r=<printable>,...,p=<base64>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientFinalMessage {
    /// The decoded `c=`.
    pub channel_binding: Vec<u8>,
    /// `r=`: must be the server-first nonce.
    pub nonce: String,
    /// The decoded `p=`.
    pub proof: Vec<u8>,
    /// `client-final-message-without-proof` as sent.
    pub without_proof: String,
}

impl ClientFinalMessage {
    pub(crate) fn parse(bytes: &[u8]) -> Result<ClientFinalMessage, CredentialFailure> {
        let invalid = |problem| CredentialFailure::InvalidClientFinalMessage { problem };
        let text = seven_bit(bytes).ok_or(invalid("a byte outside 0x01..=0x7f"))?;
        let (without_proof, proof) = text.rsplit_once(',').ok_or(invalid("no proof"))?;
        let proof = proof
            .strip_prefix("p=")
            .and_then(strict_base64)
            .ok_or(invalid("the proof is not p=<base64>"))?;
        let mut fields = without_proof.split(',');
        let channel_binding = fields
            .next()
            .and_then(|f| f.strip_prefix("c="))
            .and_then(strict_base64)
            .ok_or(invalid("the channel binding is not c=<base64>"))?;
        let nonce = fields
            .next()
            .and_then(|f| f.strip_prefix("r="))
            .filter(|n| is_printable(n))
            .ok_or(invalid("the nonce is not r=<printable>"))?;
        if !fields.all(|f| parse_extension(f).is_some()) {
            return Err(invalid("an extension is not <alpha>=<value>"));
        }
        Ok(ClientFinalMessage {
            channel_binding,
            nonce: nonce.to_string(),
            proof,
            without_proof: without_proof.to_string(),
        })
    }
}

/// `r=<nonce>,s=<base64 salt>,i=<iterations>`: the nonce is the client's followed by the
/// server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerFirstMessage {
    pub nonce: String,
    pub salt: Vec<u8>,
    pub iterations: u32,
}

impl ServerFirstMessage {
    pub(crate) fn to_message(&self) -> String {
        format!(
            "r={},s={},i={}",
            self.nonce,
            JAVA_BASE64.encode(&self.salt),
            self.iterations
        )
    }
}

/// `v=<base64 ServerSignature>`.
pub(crate) fn server_final_message(server_signature: &[u8]) -> String {
    format!("v={}", JAVA_BASE64.encode(server_signature))
}

/// A username as a saslname: `=` as `=3D`, `,` as `=2C` (Kafka's `ScramFormatter.saslName`).
pub(crate) fn username_to_sasl_name(username: &str) -> String {
    username.replace('=', "=3D").replace(',', "=2C")
}

/// A saslname decoded: non-empty, `=` only in `=2C` or `=3D`, no `,`; `None` otherwise.
pub(crate) fn sasl_name_to_username(sasl_name: &str) -> Option<String> {
    if sasl_name.is_empty() {
        return None;
    }
    let mut username = String::with_capacity(sasl_name.len());
    let mut rest = sasl_name;
    while let Some(c) = rest.chars().next() {
        if c == '=' {
            if let Some(after) = rest.strip_prefix("=2C") {
                username.push(',');
                rest = after;
            } else if let Some(after) = rest.strip_prefix("=3D") {
                username.push('=');
                rest = after;
            } else {
                return None;
            }
        } else if c == ',' {
            return None;
        } else {
            username.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(username)
}

/// The message as text if every byte is in Kafka's character classes' range `0x01..=0x7F`.
fn seven_bit(bytes: &[u8]) -> Option<&str> {
    if bytes.iter().all(|b| (0x01..=0x7f).contains(b)) {
        std::str::from_utf8(bytes).ok()
    } else {
        None
    }
}

/// RFC 5802's `printable` without `,` (already split off): one or more of `0x21..=0x7E`.
fn is_printable(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// `ALPHA+ "=" VALUE+` where VALUE is any 7-bit character but `,` (so it may hold `=`).
fn parse_extension(field: &str) -> Option<(String, String)> {
    let (key, value) = field.split_once('=')?;
    let key_ok = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphabetic());
    (key_ok && !value.is_empty()).then(|| (key.to_string(), value.to_string()))
}

/// Base64 in the canonical padded form Kafka's pattern demands (whole quartets of the standard
/// alphabet, `=` only as the last quartet's padding), then decoded; the empty string is empty.
fn strict_base64(s: &str) -> Option<Vec<u8>> {
    let body = s
        .strip_suffix("==")
        .or_else(|| s.strip_suffix('='))
        .unwrap_or(s);
    let alphabet_only = body
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    if !s.len().is_multiple_of(4) || !alphabet_only {
        return None;
    }
    JAVA_BASE64.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_first_messages_parse() {
        let m = ClientFirstMessage::parse(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO").unwrap();
        assert_eq!(m.gs2_header, "n,,");
        assert_eq!(m.authorization_id, "");
        assert_eq!(m.username, "user");
        assert_eq!(m.nonce, "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(m.bare, "n=user,r=rOprNGfwEbeRWgbNEkqO");
        assert!(m.extensions.is_empty());
        assert!(!m.token_authenticated());

        let m =
            ClientFirstMessage::parse(b"n,a=a=2Cb=3Dc,n=a=2Cb=3Dc,r=x%y,tokenauth=TRUE,other=k=v")
                .unwrap();
        assert_eq!(m.gs2_header, "n,a=a=2Cb=3Dc,");
        assert_eq!(m.authorization_id, "a,b=c");
        assert_eq!(m.username, "a,b=c");
        assert_eq!(m.bare, "n=a=2Cb=3Dc,r=x%y,tokenauth=TRUE,other=k=v");
        assert_eq!(m.extension("other"), Some("k=v"));
        assert!(m.token_authenticated());
    }

    #[test]
    fn malformed_client_first_messages_are_refused() {
        for bad in [
            &b""[..],
            b"n",
            b"n,,",
            b"y,,n=user,r=abc",
            b"p=tls-unique,,n=user,r=abc",
            b"n,,m=ext,n=user,r=abc",
            b"n,x=y,n=user,r=abc",
            b"n,a=,n=user,r=abc",
            b"n,,n=,r=abc",
            b"n,,n=us=er,r=abc",
            b"n,,n=us=2Der,r=abc",
            b"n,,n=user,r=",
            b"n,,n=user,r=a b",
            b"n,,n=user",
            b"n,,r=abc,n=user",
            b"n,,n=user,r=abc,",
            b"n,,n=user,r=abc,1=2",
            b"n,,n=user,r=abc,k=",
            b"n,,n=user,r=abc,=v",
            b"n,,n=us\xc3\xa9r,r=abc",
            b"n,,n=us\0r,r=abc",
        ] {
            let err = ClientFirstMessage::parse(bad).unwrap_err();
            assert!(
                matches!(err, CredentialFailure::InvalidClientFirstMessage { .. }),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn client_final_messages_parse() {
        let m = ClientFinalMessage::parse(b"c=biws,r=abc,ext=1,p=AAEC").unwrap();
        assert_eq!(m.channel_binding, b"n,,");
        assert_eq!(m.nonce, "abc");
        assert_eq!(m.proof, [0, 1, 2]);
        assert_eq!(m.without_proof, "c=biws,r=abc,ext=1");
        let m = ClientFinalMessage::parse(b"c=,r=abc,p=").unwrap();
        assert!(m.channel_binding.is_empty() && m.proof.is_empty());
    }

    #[test]
    fn malformed_client_final_messages_are_refused() {
        for bad in [
            &b""[..],
            b"p=AAEC",
            b"c=biws,p=AAEC",
            b"c=biws,r=abc",
            b"c=biws,r=abc,p=AAE",
            b"c=biws,r=abc,p=AA=C",
            b"c=biw,r=abc,p=AAEC",
            b"c=biws,r=abc,p=AA-_",
            b"r=abc,c=biws,p=AAEC",
            b"c=biws,r=abc,1=x,p=AAEC",
            b"c=biws,r=abc,p=AAEC,x=y",
            b"c=biws,r=\xffabc,p=AAEC",
        ] {
            let err = ClientFinalMessage::parse(bad).unwrap_err();
            assert!(
                matches!(err, CredentialFailure::InvalidClientFinalMessage { .. }),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn sasl_names_escape_and_unescape() {
        for name in ["user", "a,b", "a=b", "=,=,", "ü"] {
            let escaped = username_to_sasl_name(name);
            assert!(!escaped.contains(','), "{escaped}");
            assert_eq!(sasl_name_to_username(&escaped).as_deref(), Some(name));
        }
        assert_eq!(username_to_sasl_name("a=2C"), "a=3D2C");
        assert_eq!(sasl_name_to_username("a=3D2C").as_deref(), Some("a=2C"));
        assert_eq!(sasl_name_to_username("=2"), None);
        assert_eq!(sasl_name_to_username(""), None);
    }

    #[test]
    fn server_messages_are_written_as_kafka_writes_them() {
        let first = ServerFirstMessage {
            nonce: "abc123".into(),
            salt: b"salt".to_vec(),
            iterations: 4096,
        };
        assert_eq!(first.to_message(), "r=abc123,s=c2FsdA==,i=4096");
        assert_eq!(server_final_message(&[0xfb, 0xff]), "v=+/8=");
    }
}
