//! Authentication without I/O: the broker side of SASL as Kafka 3.9 has it.
//!
//! - [`sasl`]: the [`sasl::SaslServer`] state machines for PLAIN and SCRAM-SHA-256/512, the
//!   errors they answer with, and the [`sasl::CredentialProvider`] they look users up in; and
//!   the client side ([`sasl::client`]) a broker authenticates to other brokers with.
//! - [`scram_credential`]: SCRAM mechanisms, the stored credential (salt, StoredKey, ServerKey,
//!   iterations) in Kafka's ZooKeeper string form, and its derivation from a password.
//! - `jaas`: the `sasl.jaas.config` value parsed as Kafka's `JaasConfig` does, with the
//!   `PlainLoginModule` and `ScramLoginModule` options the broker reads.
//! - `ssl`: TLS: the `ssl.*` keys, PEM/PKCS12 stores, rustls configurations, and the principal
//!   of a client certificate (RFC 2253 subject, `ssl.principal.mapping.rules`).
//!
//! - `acl`: the ACL model and the `AclAuthorizer` decision (authorization).
//!
//! Bytes in, bytes out: the network layer frames SaslHandshake/SaslAuthenticate and feeds the
//! tokens here; ZooKeeper's `/config/users` and the JAAS config are read elsewhere and offered
//! through [`sasl::CredentialProvider`].
//!
//! Layering: names nothing else in the crate.

pub(crate) mod acl;
pub(crate) mod jaas;
pub mod sasl;
pub mod scram_credential;
pub(crate) mod ssl;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// Base64 as Java's `Base64.getEncoder()`/`getDecoder()`, which Kafka uses for SCRAM: the
/// standard alphabet, padded on encode; on decode padding may be absent (but must be complete
/// when present) and unused trailing bits are ignored.
pub(crate) const JAVA_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);
