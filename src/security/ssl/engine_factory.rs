//! Kafka's `DefaultSslEngineFactory` over rustls (ring provider): the server configuration of
//! an SSL listener and the client configuration of the inter-broker client, from a checked
//! [`SslConfig`], and the principal of a client certificate.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig, SupportedProtocolVersion};
use rustls_pki_types::CertificateDer;

use super::distinguished_name::subject_rfc2253;
use super::ssl_config::{SslClientAuth, SslConfig, SslConfigError, TlsProtocol};
use super::stores::{load_keystore, load_truststore};

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn versions(config: &SslConfig) -> Vec<&'static SupportedProtocolVersion> {
    config
        .enabled_protocols
        .iter()
        .map(|p| match p {
            TlsProtocol::Tls12 => &rustls::version::TLS12,
            TlsProtocol::Tls13 => &rustls::version::TLS13,
        })
        .collect()
}

fn error(key: &str, reason: String) -> SslConfigError {
    SslConfigError {
        key: key.to_string(),
        value: String::new(),
        reason,
    }
}

fn roots(config: &SslConfig, why: &str) -> Result<RootCertStore, SslConfigError> {
    let Some(truststore) = &config.truststore else {
        return Err(error(
            "ssl.truststore.location",
            format!(
                "a trust store is needed {why}: set ssl.truststore.location or ssl.truststore.certificates"
            ),
        ));
    };
    let mut roots = RootCertStore::empty();
    for cert in load_truststore(truststore)? {
        roots.add(cert).map_err(|e| {
            error(
                "ssl.truststore.location",
                format!("unusable trusted certificate: {e}"),
            )
        })?;
    }
    Ok(roots)
}

/// The server side of a listener: its key store, and client certificates checked against the
/// trust store when `ssl.client.auth` asks for them.
pub(crate) fn server_config(config: &SslConfig) -> Result<Arc<ServerConfig>, SslConfigError> {
    let Some(keystore) = &config.keystore else {
        return Err(error(
            "ssl.keystore.location",
            "an SSL listener needs a key store: set ssl.keystore.location (PEM or PKCS12) or \
             ssl.keystore.key and ssl.keystore.certificate.chain"
                .to_string(),
        ));
    };
    let keystore = load_keystore(keystore)?;
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&versions(config))
        .map_err(|e| error("ssl.enabled.protocols", e.to_string()))?;
    let builder = match config.client_auth {
        SslClientAuth::None => builder.with_no_client_auth(),
        auth => {
            let roots = roots(config, "to verify client certificates (ssl.client.auth)")?;
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider());
            let verifier = if auth == SslClientAuth::Requested {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|e| error("ssl.truststore.location", e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let server = builder
        .with_single_cert(keystore.chain, keystore.key)
        .map_err(|e| {
            error(
                "ssl.keystore.location",
                format!("the key store is unusable: {e}"),
            )
        })?;
    Ok(Arc::new(server))
}

/// The client side (the inter-broker client): servers checked against the trust store, their
/// host names verified (Kafka's default `ssl.endpoint.identification.algorithm=https`), and
/// the key store presented when there is one.
pub(crate) fn client_config(config: &SslConfig) -> Result<Arc<ClientConfig>, SslConfigError> {
    let roots = roots(config, "to verify other brokers")?;
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&versions(config))
        .map_err(|e| error("ssl.enabled.protocols", e.to_string()))?
        .with_root_certificates(roots);
    let client = match &config.keystore {
        None => builder.with_no_client_auth(),
        Some(keystore) => {
            let keystore = load_keystore(keystore)?;
            builder
                .with_client_auth_cert(keystore.chain, keystore.key)
                .map_err(|e| {
                    error(
                        "ssl.keystore.location",
                        format!("the key store is unusable: {e}"),
                    )
                })?
        }
    };
    Ok(Arc::new(client))
}

/// The principal name of a TLS client (Kafka's `DefaultKafkaPrincipalBuilder`): its
/// certificate's subject in RFC 2253 form through the mapping rules, or `None` (anonymous)
/// without a certificate.
pub(crate) fn ssl_principal_name(
    config: &SslConfig,
    peer_certificates: Option<&[CertificateDer<'_>]>,
) -> Result<Option<String>, String> {
    let Some(cert) = peer_certificates.and_then(|c| c.first()) else {
        return Ok(None);
    };
    let dn = subject_rfc2253(cert.as_ref())?;
    config.principal_mapper.name(&dn).map(Some)
}
