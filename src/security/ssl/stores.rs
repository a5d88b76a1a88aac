//! Loading key stores and trust stores (PEM files, inline PEM, PKCS12 files) into the DER
//! certificates and private key rustls takes. Errors name the key whose store failed to load.

use std::fs;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::ssl_config::{Found, KeyStoreConfig, SslConfigError, TrustStoreConfig};

/// A certificate chain (the end entity's first) and its private key.
#[derive(Debug)]
pub(crate) struct KeyStore {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

fn failed(found: &Found, reason: String) -> SslConfigError {
    SslConfigError {
        key: found.key.clone(),
        value: found.value.clone(),
        reason,
    }
}

/// A secret's failure: the key is named, its value is not shown.
fn failed_secret(found: &Found, reason: String) -> SslConfigError {
    SslConfigError {
        key: found.key.clone(),
        value: "[hidden]".to_string(),
        reason,
    }
}

fn read(found: &Found) -> Result<Vec<u8>, SslConfigError> {
    fs::read(found.path()).map_err(|e| failed(found, format!("cannot read the file: {e}")))
}

/// Loads the key store.
pub(crate) fn load_keystore(config: &KeyStoreConfig) -> Result<KeyStore, SslConfigError> {
    match config {
        KeyStoreConfig::PemFile { location } => {
            let bytes = read(location)?;
            pem_keystore(&bytes, &bytes, location, location)
        }
        KeyStoreConfig::PemInline {
            key,
            certificate_chain,
        } => pem_keystore(
            certificate_chain.value.as_bytes(),
            key.value.as_bytes(),
            certificate_chain,
            key,
        ),
        KeyStoreConfig::Pkcs12 { location, password } => {
            let bytes = read(location)?;
            let store = p12_keystore::KeyStore::from_pkcs12(
                &bytes,
                &password.value,
                p12_keystore::Pkcs12ImportPolicy::Strict,
            )
            .map_err(|e| {
                failed_secret(
                    password,
                    format!("cannot open the PKCS12 key store {}: {e}", location.value),
                )
            })?;
            let Some((_alias, chain)) = store.private_key_chain() else {
                return Err(failed(
                    location,
                    "the PKCS12 key store holds no private key with its certificate".to_string(),
                ));
            };
            Ok(KeyStore {
                chain: chain
                    .certs()
                    .iter()
                    .map(|c| CertificateDer::from(c.as_der().to_vec()))
                    .collect(),
                key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec())),
            })
        }
    }
}

fn pem_keystore(
    chain_pem: &[u8],
    key_pem: &[u8],
    chain_key: &Found,
    key_key: &Found,
) -> Result<KeyStore, SslConfigError> {
    let chain = pem_certificates(chain_pem, chain_key)?;
    if chain.is_empty() {
        return Err(failed(chain_key, "no PEM CERTIFICATE in it".to_string()));
    }
    if String::from_utf8_lossy(key_pem).contains("ENCRYPTED PRIVATE KEY") {
        return Err(failed_secret(
            key_key,
            "the PEM private key is encrypted: kcli reads unencrypted keys only".to_string(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| failed_secret(key_key, format!("no usable PEM private key in it: {e}")))?;
    Ok(KeyStore { chain, key })
}

fn pem_certificates(
    pem: &[u8],
    found: &Found,
) -> Result<Vec<CertificateDer<'static>>, SslConfigError> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| failed(found, format!("invalid PEM certificate: {e}")))
}

/// Loads the trusted certificates (never empty).
pub(crate) fn load_truststore(
    config: &TrustStoreConfig,
) -> Result<Vec<CertificateDer<'static>>, SslConfigError> {
    let (certs, found) = match config {
        TrustStoreConfig::PemFile { location } => {
            (pem_certificates(&read(location)?, location)?, location)
        }
        TrustStoreConfig::PemInline { certificates } => (
            pem_certificates(certificates.value.as_bytes(), certificates)?,
            certificates,
        ),
        TrustStoreConfig::Pkcs12 { location, password } => {
            let bytes = read(location)?;
            let pass = password.as_ref().map_or("", |p| p.value.as_str());
            let archive = p12_keystore::Pkcs12Archive::from_pkcs12(&bytes, pass).map_err(|e| {
                let found = password.as_ref().unwrap_or(location);
                failed_secret(
                    found,
                    format!("cannot open the PKCS12 trust store {}: {e}", location.value),
                )
            })?;
            // Java's trust stores mark trusted entries; openssl's carry no mark. Every
            // certificate without a private key is taken as a trust anchor.
            let certs = archive
                .certs
                .iter()
                .filter(|bag| bag.local_key_id.is_none())
                .map(|bag| CertificateDer::from(bag.cert.as_der().to_vec()))
                .collect();
            (certs, location)
        }
    };
    if certs.is_empty() {
        return Err(failed(
            found,
            "the trust store holds no certificate".to_string(),
        ));
    }
    Ok(certs)
}
