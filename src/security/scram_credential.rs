//! SCRAM's mechanisms and stored credentials (RFC 5802 §3, RFC 7677), as Kafka 3.9's
//! `ScramMechanism`, `ScramCredential`, `ScramFormatter` and `ScramCredentialUtils`: the
//! hash and HMAC of each mechanism, Hi() (PBKDF2-HMAC), the derivation of StoredKey and
//! ServerKey from a password, and the string form Kafka keeps in ZooKeeper's `/config/users`.

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;

use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hmac, pbkdf2};

use crate::security::JAVA_BASE64;

/// The SCRAM mechanisms Kafka offers. Kafka's `ScramMechanism`: the `type` byte identifies the
/// mechanism in AlterUserScramCredentials/DescribeUserScramCredentials and must not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScramMechanism {
    /// `SCRAM-SHA-256`: SHA-256 and HMAC-SHA-256 (RFC 7677).
    ScramSha256,
    /// `SCRAM-SHA-512`: SHA-512 and HMAC-SHA-512.
    ScramSha512,
}

impl ScramMechanism {
    /// Every mechanism, in Kafka's declaration order.
    pub const ALL: [ScramMechanism; 2] = [ScramMechanism::ScramSha256, ScramMechanism::ScramSha512];

    /// The SASL mechanism name: `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    pub fn mechanism_name(self) -> &'static str {
        match self {
            ScramMechanism::ScramSha256 => "SCRAM-SHA-256",
            ScramMechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism with this exact (case-sensitive, as Kafka's map lookup) SASL name.
    pub fn for_mechanism_name(name: &str) -> Option<ScramMechanism> {
        ScramMechanism::ALL
            .into_iter()
            .find(|m| m.mechanism_name() == name)
    }

    /// Whether `name` is a SCRAM mechanism Kafka knows.
    pub fn is_scram(name: &str) -> bool {
        ScramMechanism::for_mechanism_name(name).is_some()
    }

    /// Kafka's wire identifier of the mechanism: 1 for SHA-256, 2 for SHA-512 (0 is UNKNOWN).
    pub fn mechanism_type(self) -> i8 {
        match self {
            ScramMechanism::ScramSha256 => 1,
            ScramMechanism::ScramSha512 => 2,
        }
    }

    /// The mechanism with Kafka's wire identifier `mechanism_type`.
    pub fn from_mechanism_type(mechanism_type: i8) -> Option<ScramMechanism> {
        ScramMechanism::ALL
            .into_iter()
            .find(|m| m.mechanism_type() == mechanism_type)
    }

    /// The fewest iterations Kafka accepts for a credential: 4096 (RFC 7677's minimum).
    pub fn min_iterations(self) -> u32 {
        4096
    }

    /// The most iterations Kafka accepts when a credential is created: 16384.
    pub fn max_iterations(self) -> u32 {
        16384
    }

    /// Bytes of the hash output, and so of StoredKey, ServerKey, proofs and signatures.
    pub fn hash_len(self) -> usize {
        self.digest_algorithm().output_len()
    }

    /// `H(data)`.
    pub fn hash(self, data: &[u8]) -> Vec<u8> {
        digest::digest(self.digest_algorithm(), data)
            .as_ref()
            .to_vec()
    }

    /// `HMAC(key, data)`.
    pub fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        let key = hmac::Key::new(self.hmac_algorithm(), key);
        hmac::sign(&key, data).as_ref().to_vec()
    }

    /// `SaltedPassword := Hi(Normalize(password), salt, i)`. Hi() is PBKDF2 with this
    /// mechanism's HMAC and one block of output. Normalize() is plain UTF-8, as in Kafka
    /// (no SASLprep).
    pub fn salted_password(self, password: &str, salt: &[u8], iterations: NonZeroU32) -> Vec<u8> {
        let mut out = vec![0u8; self.hash_len()];
        pbkdf2::derive(
            self.pbkdf2_algorithm(),
            iterations,
            salt,
            password.as_bytes(),
            &mut out,
        );
        out
    }

    fn digest_algorithm(self) -> &'static digest::Algorithm {
        match self {
            ScramMechanism::ScramSha256 => &digest::SHA256,
            ScramMechanism::ScramSha512 => &digest::SHA512,
        }
    }

    fn hmac_algorithm(self) -> hmac::Algorithm {
        match self {
            ScramMechanism::ScramSha256 => hmac::HMAC_SHA256,
            ScramMechanism::ScramSha512 => hmac::HMAC_SHA512,
        }
    }

    fn pbkdf2_algorithm(self) -> pbkdf2::Algorithm {
        match self {
            ScramMechanism::ScramSha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            ScramMechanism::ScramSha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }
}

impl fmt::Display for ScramMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mechanism_name())
    }
}

/// What the server keeps for one user and mechanism (RFC 5802 §3), Kafka's `ScramCredential`:
///
/// - `salt`: the salt of Hi(); Kafka generates the UTF-8 bytes of [`secure_random_string`]
///   (about 25 ASCII characters) and stores whatever salt a client sends through
///   AlterUserScramCredentials.
/// - `stored_key`: `H(HMAC(SaltedPassword, "Client Key"))`, which verifies a client's proof.
/// - `server_key`: `HMAC(SaltedPassword, "Server Key")`, which signs the server-final message.
/// - `iterations`: the iteration count of Hi().
///
/// The password itself is not recoverable from it. Kafka's string form, in the `config` map of
/// `/config/users/<user>` under the mechanism's name, is
/// `salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>` (standard base64 with
/// padding): see [`ScramCredential::to_credential_string`]. `Debug` hides the keys.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredential {
    pub salt: Vec<u8>,
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
    pub iterations: u32,
}

impl ScramCredential {
    /// The credential for `password` with this salt and iteration count (Kafka's
    /// `ScramFormatter.saltedPassword` then `generateCredential(salt, saltedPassword, i)`).
    /// Refuses an iteration count outside the mechanism's `min_iterations..=max_iterations`,
    /// as Kafka's tools and AlterUserScramCredentials do.
    pub fn generate(
        mechanism: ScramMechanism,
        password: &str,
        salt: &[u8],
        iterations: u32,
    ) -> Result<ScramCredential, ScramCredentialError> {
        let in_range = mechanism.min_iterations()..=mechanism.max_iterations();
        let checked = NonZeroU32::new(iterations).filter(|_| in_range.contains(&iterations));
        let Some(checked) = checked else {
            return Err(ScramCredentialError::IterationsOutOfRange {
                mechanism,
                iterations,
                min: mechanism.min_iterations(),
                max: mechanism.max_iterations(),
            });
        };
        let salted_password = mechanism.salted_password(password, salt, checked);
        Ok(ScramCredential::from_salted_password(
            mechanism,
            salt.to_vec(),
            &salted_password,
            iterations,
        ))
    }

    /// The credential for `password` with a fresh salt as Kafka makes one (Kafka's
    /// `ScramFormatter.generateCredential(password, iterations)`, what `kafka-configs
    /// --add-config 'SCRAM-SHA-512=[password=...]'` runs).
    pub fn generate_with_random_salt(
        mechanism: ScramMechanism,
        password: &str,
        iterations: u32,
    ) -> Result<ScramCredential, ScramCredentialError> {
        let salt = secure_random_string()?.into_bytes();
        ScramCredential::generate(mechanism, password, &salt, iterations)
    }

    /// The credential from an already salted password: AlterUserScramCredentials carries the
    /// salt and `SaltedPassword`, never the password. The caller checks the iteration range.
    pub fn from_salted_password(
        mechanism: ScramMechanism,
        salt: Vec<u8>,
        salted_password: &[u8],
        iterations: u32,
    ) -> ScramCredential {
        let client_key = mechanism.hmac(salted_password, b"Client Key");
        ScramCredential {
            salt,
            stored_key: mechanism.hash(&client_key),
            server_key: mechanism.hmac(salted_password, b"Server Key"),
            iterations,
        }
    }

    /// Kafka's `ScramCredentialUtils.credentialToString`:
    /// `salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>`.
    pub fn to_credential_string(&self) -> String {
        format!(
            "salt={},stored_key={},server_key={},iterations={}",
            JAVA_BASE64.encode(&self.salt),
            JAVA_BASE64.encode(&self.stored_key),
            JAVA_BASE64.encode(&self.server_key),
            self.iterations
        )
    }

    /// Kafka's `ScramCredentialUtils.credentialFromString`: comma-separated `key=value` tokens
    /// (split at each token's first `=`; a trailing comma is ignored, as Java's `split` drops
    /// trailing empty strings), exactly the four keys (a repeated key counts once, the last
    /// wins), base64 as Java decodes it, iterations as Java's `Integer.parseInt` reads it
    /// (a negative count is refused here, where Kafka would refuse it at authentication).
    pub fn from_credential_string(s: &str) -> Result<ScramCredential, ScramCredentialError> {
        let mut props: HashMap<&str, &str> = HashMap::new();
        for (index, token) in s.trim_end_matches(',').split(',').enumerate() {
            match token.split_once('=') {
                Some((key, value)) if !key.is_empty() => {
                    props.insert(key, value);
                }
                _ => return Err(ScramCredentialError::TokenWithoutKey { index }),
            }
        }
        let mut keys: Vec<String> = props.keys().map(|k| k.to_string()).collect();
        keys.sort();
        if keys != ["iterations", "salt", "server_key", "stored_key"] {
            return Err(ScramCredentialError::WrongKeys { found: keys });
        }
        let decode = |key: &'static str| {
            let value = props.get(key).copied().unwrap_or_default();
            JAVA_BASE64
                .decode(value)
                .map_err(|source| ScramCredentialError::InvalidBase64 { key, source })
        };
        let iterations_text = props.get("iterations").copied().unwrap_or_default();
        let iterations = iterations_text
            .parse::<i32>()
            .ok()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| ScramCredentialError::InvalidIterations {
                value: iterations_text.to_string(),
            })?;
        Ok(ScramCredential {
            salt: decode("salt")?,
            stored_key: decode("stored_key")?,
            server_key: decode("server_key")?,
            iterations,
        })
    }
}

impl fmt::Debug for ScramCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramCredential")
            .field("salt_len", &self.salt.len())
            .field("stored_key", &"[hidden]")
            .field("server_key", &"[hidden]")
            .field("iterations", &self.iterations)
            .finish()
    }
}

/// Kafka's `ScramFormatter.secureRandomString`: 130 bits from the operating system's secure
/// random source written in base 36 (`0-9a-z`, no leading zeros: usually 25 or 26 characters).
/// Kafka uses it for salts and for the server's part of the SCRAM nonce.
pub fn secure_random_string() -> Result<String, ScramCredentialError> {
    let mut bits = [0u8; 17];
    SystemRandom::new()
        .fill(&mut bits)
        .map_err(|_| ScramCredentialError::RandomUnavailable)?;
    // 17 bytes are 136 bits: keep the low 130, as Java's `new BigInteger(130, random)`.
    bits[0] &= 0x03;
    Ok(base36(&bits))
}

/// The big-endian unsigned integer `bytes` in base 36, lowercase, without leading zeros.
fn base36(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut number = bytes.to_vec();
    let mut digits = Vec::new();
    while number.iter().any(|&b| b != 0) {
        let mut remainder = 0u32;
        for byte in number.iter_mut() {
            let current = (remainder << 8) | u32::from(*byte);
            // current < 36 * 256, so the quotient fits a byte.
            *byte = (current / 36) as u8;
            remainder = current % 36;
        }
        digits.push(DIGITS[remainder as usize]);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    digits.reverse();
    digits.into_iter().map(char::from).collect()
}

/// A credential that cannot be made or read.
#[derive(Debug, thiserror::Error)]
pub enum ScramCredentialError {
    #[error("scram credential: token {index} is not key=value")]
    TokenWithoutKey { index: usize },
    #[error(
        "scram credential: expected the keys iterations, salt, server_key and stored_key, found {found:?}"
    )]
    WrongKeys { found: Vec<String> },
    #[error("scram credential: {key} is not valid base64")]
    InvalidBase64 {
        key: &'static str,
        #[source]
        source: base64::DecodeError,
    },
    #[error("scram credential: iterations {value:?} is not a non-negative 32-bit integer")]
    InvalidIterations { value: String },
    #[error("{mechanism}: {iterations} iterations is outside the allowed {min}..={max}")]
    IterationsOutOfRange {
        mechanism: ScramMechanism,
        iterations: u32,
        min: u32,
        max: u32,
    },
    #[error("the operating system's secure random source failed")]
    RandomUnavailable,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made once by hand with Kafka 3.9.1's own classes, from the jars of
    /// `.tools/kafka-3.9.1/` (`tests/install-kafka-tools`):
    ///
    /// ```text
    /// // KafkaScram.java
    /// ScramFormatter formatter = new ScramFormatter(ScramMechanism.forMechanismName(args[0]));
    /// ScramCredential c = formatter.generateCredential(args[1], Integer.parseInt(args[2]));
    /// System.out.println(ScramCredentialUtils.credentialToString(c));
    ///
    /// javac -cp '.tools/kafka-3.9.1/*' KafkaScram.java
    /// java -cp '.:.tools/kafka-3.9.1/*' KafkaScram SCRAM-SHA-256 alice-secret 4096
    /// java -cp '.:.tools/kafka-3.9.1/*' KafkaScram SCRAM-SHA-512 alice-secret 8192
    /// java -cp '.:.tools/kafka-3.9.1/*' KafkaScram SCRAM-SHA-512 'p@ss,w=rd' 4096
    /// ```
    const KAFKA_GENERATED: [(ScramMechanism, &str, &str); 3] = [
        (
            ScramMechanism::ScramSha256,
            "alice-secret",
            "salt=YjIyYW1ycXgzY3A3cmF0YTg0MWJ3cDFqZw==,stored_key=FFdHp3g3jnugkJym6EapUCwTXkiW3a91p3ZUVGzMWFg=,server_key=iXUAdLbxpUTdOuVusncJnqEPbKMevGyuZHv9oeg+bKU=,iterations=4096",
        ),
        (
            ScramMechanism::ScramSha512,
            "alice-secret",
            "salt=Z3N5anJ2MHQxZW4xNWVtM3pyMzJzeW93Zg==,stored_key=vsjK/k2FWqbjt5vmEx7U3yNI925dYbPYqUkgTr879BPoUX3bJ9EcW9kLzwiE9Lk1Z2PUgHP2IqGqaQtLBICKsA==,server_key=BeLDw0bvyKtSwl9taytul7GkvYSG4OfNxuYGROgi3tdOL82AiAjpZE+4y7gKohqnP3Zs+cToGwDx1D7SZ9O+Zg==,iterations=8192",
        ),
        (
            ScramMechanism::ScramSha512,
            "p@ss,w=rd",
            "salt=ZnZmYnEyZnVpaXpuamkyaG55ODNwMXZ4Zw==,stored_key=si37wt2kE/rCGHcAKeL/rQlk7HMEk5R4fGYnUYRcD734yHk6LvdfsiCMS09zvnPnC5C/81zCpAzbuj5JAgcwfw==,server_key=vrYvtNqMwmQqBuqIaZTitMavcVKF/67NIxjFU2j/0/kikii+XqBXvts4iJNq2TmGl1B1RgfHF3DhcIerbsh3Pg==,iterations=4096",
        ),
    ];

    #[test]
    fn generate_reproduces_credentials_kafka_made() {
        for (mechanism, password, kafka) in KAFKA_GENERATED {
            let parsed = ScramCredential::from_credential_string(kafka).unwrap();
            // Kafka's salts are its base-36 random strings.
            let salt_text = std::str::from_utf8(&parsed.salt).unwrap();
            assert!(
                salt_text.bytes().all(|b| b.is_ascii_alphanumeric()),
                "{salt_text}"
            );
            let ours =
                ScramCredential::generate(mechanism, password, &parsed.salt, parsed.iterations)
                    .unwrap();
            assert_eq!(ours, parsed, "{mechanism}");
            assert_eq!(ours.to_credential_string(), kafka);
        }
    }

    #[test]
    fn credential_string_round_trips() {
        let c =
            ScramCredential::generate_with_random_salt(ScramMechanism::ScramSha512, "secret", 4096)
                .unwrap();
        assert_eq!(c.stored_key.len(), 64);
        assert_eq!(c.server_key.len(), 64);
        let text = c.to_credential_string();
        assert!(text.starts_with("salt="), "{text}");
        assert!(text.ends_with(",iterations=4096"), "{text}");
        assert_eq!(ScramCredential::from_credential_string(&text).unwrap(), c);
    }

    #[test]
    fn credential_string_is_read_as_kafka_reads_it() {
        // Key order is free, a trailing comma is dropped as by Java's split, padding optional.
        let c = ScramCredential::from_credential_string(
            "iterations=4096,server_key=AAE=,stored_key=AAI,salt=YWJj,",
        )
        .unwrap();
        assert_eq!(c.salt, b"abc");
        assert_eq!(c.stored_key, [0, 2]);
        assert_eq!(c.server_key, [0, 1]);
        assert_eq!(c.iterations, 4096);
        // A repeated key counts once; the last value wins.
        let c = ScramCredential::from_credential_string(
            "salt=AA==,salt=YWJj,stored_key=AA==,server_key=AA==,iterations=+4096",
        )
        .unwrap();
        assert_eq!((c.salt.as_slice(), c.iterations), (&b"abc"[..], 4096));
    }

    #[test]
    fn malformed_credential_strings_name_the_problem() {
        let cases = [
            ("", "token 0 is not key=value"),
            ("salt=AA==,,stored_key=AA==", "token 1 is not key=value"),
            ("=AA==,stored_key=AA==", "token 0 is not key=value"),
            (
                "salt=AA==,stored_key=AA==,server_key=AA==",
                r#"found ["salt", "server_key", "stored_key"]"#,
            ),
            (
                "salt=AA==,stored_key=AA==,server_key=AA==,iterations=1,extra=1",
                "found [\"extra\"",
            ),
            (
                "salt=A!==,stored_key=AA==,server_key=AA==,iterations=4096",
                "salt is not valid base64",
            ),
            (
                "salt=AA==,stored_key=AA==,server_key=AA==,iterations=lots",
                "iterations \"lots\"",
            ),
            (
                "salt=AA==,stored_key=AA==,server_key=AA==,iterations=-1",
                "iterations \"-1\"",
            ),
            (
                "salt=AA==,stored_key=AA==,server_key=AA==,iterations=4294967296",
                "iterations \"4294967296\"",
            ),
        ];
        for (input, expected) in cases {
            let err = ScramCredential::from_credential_string(input).unwrap_err();
            assert!(err.to_string().contains(expected), "{input:?}: {err}");
        }
    }

    #[test]
    fn generate_refuses_iterations_outside_kafkas_range() {
        for mechanism in ScramMechanism::ALL {
            for iterations in [0, 1, 4095, 16385] {
                let err =
                    ScramCredential::generate(mechanism, "p", b"salt", iterations).unwrap_err();
                assert!(
                    matches!(
                        err,
                        ScramCredentialError::IterationsOutOfRange {
                            min: 4096,
                            max: 16384,
                            ..
                        }
                    ),
                    "{err}"
                );
            }
            for iterations in [4096, 16384] {
                ScramCredential::generate(mechanism, "p", b"salt", iterations).unwrap();
            }
        }
    }

    #[test]
    fn mechanisms_are_kafkas() {
        assert_eq!(
            ScramMechanism::for_mechanism_name("SCRAM-SHA-256"),
            Some(ScramMechanism::ScramSha256)
        );
        assert_eq!(
            ScramMechanism::for_mechanism_name("SCRAM-SHA-512"),
            Some(ScramMechanism::ScramSha512)
        );
        assert!(!ScramMechanism::is_scram("scram-sha-256"));
        assert!(!ScramMechanism::is_scram("PLAIN"));
        assert_eq!(ScramMechanism::ScramSha256.hash_len(), 32);
        assert_eq!(ScramMechanism::ScramSha512.hash_len(), 64);
        for m in ScramMechanism::ALL {
            assert_eq!(
                ScramMechanism::from_mechanism_type(m.mechanism_type()),
                Some(m)
            );
        }
        assert_eq!(ScramMechanism::from_mechanism_type(0), None);
    }

    #[test]
    fn random_strings_are_base36_of_130_bits() {
        let a = secure_random_string().unwrap();
        let b = secure_random_string().unwrap();
        assert_ne!(a, b);
        for s in [&a, &b] {
            assert!(s.len() <= 26, "{s}");
            assert!(
                s.bytes()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()),
                "{s}"
            );
        }
        assert_eq!(base36(&[0, 0]), "0");
        assert_eq!(base36(&[0, 35]), "z");
        assert_eq!(base36(&[0x01, 0x00]), "74");
        // 2^130 - 1, the largest value: 26 digits.
        let mut max = [0xffu8; 17];
        max[0] = 0x03;
        assert_eq!(base36(&max), "1omfro7zwmumr3umxudzyj6scf");
    }
}
