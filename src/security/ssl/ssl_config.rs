//! The `ssl.*` keys of one listener (or of the inter-broker client), read and checked as Kafka
//! 3.9's `SslConfigs`/`DefaultSslEngineFactory` read them, with what kcli cannot do refused by a
//! message naming the key:
//!
//! | key | Kafka default | kcli |
//! |---|---|---|
//! | `ssl.keystore.type` | JKS | PEM or PKCS12; JKS refused |
//! | `ssl.keystore.location` | — | a PEM file (key + chain) or a PKCS12 file |
//! | `ssl.keystore.password` | — | PKCS12's password |
//! | `ssl.keystore.key`, `ssl.keystore.certificate.chain` | — | inline PEM (type PEM) |
//! | `ssl.key.password` | — | PKCS12: must equal the store's; PEM: refused (encrypted keys) |
//! | `ssl.truststore.type` | JKS | PEM or PKCS12; JKS refused |
//! | `ssl.truststore.location`, `ssl.truststore.password` | — | a PEM file of certificates or a PKCS12 file |
//! | `ssl.truststore.certificates` | — | inline PEM (type PEM) |
//! | `ssl.client.auth` | none | `required`, `requested`, `none` |
//! | `ssl.principal.mapping.rules` | DEFAULT | Kafka's rules ([`SslPrincipalMapper`]) |
//! | `ssl.enabled.protocols` | TLSv1.2,TLSv1.3 | those two only |
//! | `ssl.protocol` | TLSv1.3 | TLSv1.2, TLSv1.3 or TLS |
//!
//! The caller resolves each key (a `listener.name.<listener>.` key before the plain one) and
//! says under which name it found it, so errors name the key the operator wrote. Nothing is
//! read from disk here: [`super::stores`] loads the files when the broker starts.

use std::path::PathBuf;

use super::principal_mapper::SslPrincipalMapper;

/// A configuration value and the key it was found under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub key: String,
    pub value: String,
}

/// A bad `ssl.*` value, or one kcli does not support, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value {value:?} for configuration {key}: {reason}")]
pub struct SslConfigError {
    pub key: String,
    pub value: String,
    pub reason: String,
}

/// Where the key and certificate chain come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStoreConfig {
    /// A PEM file holding the private key (PKCS#8, PKCS#1 or SEC1, unencrypted) and the chain.
    PemFile { location: Found },
    /// `ssl.keystore.key` and `ssl.keystore.certificate.chain` as PEM text.
    PemInline {
        key: Found,
        certificate_chain: Found,
    },
    /// A PKCS12 file and its password.
    Pkcs12 { location: Found, password: Found },
}

/// Where the trusted certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStoreConfig {
    PemFile {
        location: Found,
    },
    PemInline {
        certificates: Found,
    },
    /// A PKCS12 file; without a password the empty one is tried.
    Pkcs12 {
        location: Found,
        password: Option<Found>,
    },
}

/// `ssl.client.auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslClientAuth {
    Required,
    Requested,
    None,
}

/// A TLS version kcli can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsProtocol {
    Tls12,
    Tls13,
}

/// The checked `ssl.*` configuration of one listener or client.
#[derive(Debug, Clone)]
pub struct SslConfig {
    pub keystore: Option<KeyStoreConfig>,
    pub truststore: Option<TrustStoreConfig>,
    pub client_auth: SslClientAuth,
    pub principal_mapper: SslPrincipalMapper,
    /// `ssl.enabled.protocols`, deduplicated and sorted; never empty.
    pub enabled_protocols: Vec<TlsProtocol>,
}

impl SslConfig {
    /// Reads the keys through `lookup` (key name → where it was found and its value).
    pub fn from_lookup(
        lookup: &dyn Fn(&str) -> Option<Found>,
    ) -> Result<SslConfig, SslConfigError> {
        let keystore = keystore(lookup)?;
        let truststore = truststore(lookup)?;
        let client_auth = match lookup("ssl.client.auth") {
            None => SslClientAuth::None,
            Some(found) => match found.value.trim() {
                "required" => SslClientAuth::Required,
                "requested" => SslClientAuth::Requested,
                "none" => SslClientAuth::None,
                _ => return Err(invalid(&found, "must be one of required, requested, none")),
            },
        };
        let principal_mapper = match lookup("ssl.principal.mapping.rules") {
            None => SslPrincipalMapper::default(),
            Some(found) => {
                SslPrincipalMapper::from_rules(&found.value).map_err(|e| invalid(&found, &e))?
            }
        };
        let mut enabled_protocols = Vec::new();
        match lookup("ssl.enabled.protocols") {
            None => enabled_protocols.extend([TlsProtocol::Tls12, TlsProtocol::Tls13]),
            Some(found) => {
                for name in found
                    .value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                {
                    enabled_protocols.push(match name {
                        "TLSv1.2" => TlsProtocol::Tls12,
                        "TLSv1.3" => TlsProtocol::Tls13,
                        _ => {
                            return Err(invalid(
                                &found,
                                &format!(
                                    "{name} is not supported: kcli speaks TLSv1.2 and TLSv1.3"
                                ),
                            ));
                        }
                    });
                }
                if enabled_protocols.is_empty() {
                    return Err(invalid(&found, "at least one protocol must be enabled"));
                }
            }
        }
        enabled_protocols.sort_unstable();
        enabled_protocols.dedup();
        if let Some(found) = lookup("ssl.protocol")
            && !matches!(found.value.trim(), "TLSv1.2" | "TLSv1.3" | "TLS")
        {
            return Err(invalid(&found, "kcli supports TLSv1.2, TLSv1.3 and TLS"));
        }
        Ok(SslConfig {
            keystore,
            truststore,
            client_auth,
            principal_mapper,
            enabled_protocols,
        })
    }
}

fn invalid(found: &Found, reason: &str) -> SslConfigError {
    SslConfigError {
        key: found.key.clone(),
        value: found.value.clone(),
        reason: reason.to_string(),
    }
}

/// A value that must not be shown (passwords, keys): the error names the key only.
fn invalid_secret(found: &Found, reason: &str) -> SslConfigError {
    SslConfigError {
        key: found.key.clone(),
        value: "[hidden]".to_string(),
        reason: reason.to_string(),
    }
}

/// The store type under `key`, upper-cased as Java compares them; Kafka's default JKS.
fn store_type(lookup: &dyn Fn(&str) -> Option<Found>, key: &str) -> Found {
    lookup(key).map_or_else(
        || Found {
            key: key.to_string(),
            value: "JKS".to_string(),
        },
        |f| Found {
            value: f.value.trim().to_ascii_uppercase(),
            ..f
        },
    )
}

fn refuse_type(found: &Found) -> SslConfigError {
    let reason = if found.value == "JKS" {
        "JKS key stores (Kafka's default type) are not supported by kcli: use PEM or PKCS12 \
         (keytool -importkeystore -deststoretype PKCS12 converts one)"
    } else {
        "kcli supports the store types PEM and PKCS12"
    };
    invalid(found, reason)
}

fn keystore(
    lookup: &dyn Fn(&str) -> Option<Found>,
) -> Result<Option<KeyStoreConfig>, SslConfigError> {
    let kind = store_type(lookup, "ssl.keystore.type");
    let location = lookup("ssl.keystore.location");
    let password = lookup("ssl.keystore.password");
    let key = lookup("ssl.keystore.key");
    let chain = lookup("ssl.keystore.certificate.chain");
    let key_password = lookup("ssl.key.password");
    if key.is_some() || chain.is_some() {
        if kind.value != "PEM" {
            return Err(invalid(
                &kind,
                "SSL private key can be specified only for PEM key stores",
            ));
        }
        let (Some(key), Some(certificate_chain)) = (key.clone(), chain.clone()) else {
            let missing = if key.is_none() {
                "ssl.keystore.key"
            } else {
                "ssl.keystore.certificate.chain"
            };
            let given = key.or(chain).map(|f| f.key).unwrap_or_default();
            return Err(SslConfigError {
                key: missing.to_string(),
                value: String::new(),
                reason: format!("must be set together with {given}"),
            });
        };
        if let Some(location) = location {
            return Err(invalid(
                &location,
                "a key store location cannot be given with an inline PEM key",
            ));
        }
        if let Some(key_password) = key_password {
            return Err(invalid_secret(
                &key_password,
                "encrypted PEM keys are not supported by kcli: give the key unencrypted",
            ));
        }
        return Ok(Some(KeyStoreConfig::PemInline {
            key,
            certificate_chain,
        }));
    }
    let Some(location) = location else {
        if let Some(password) = password {
            return Err(invalid_secret(
                &password,
                "SSL key store is not specified, but key store password is specified.",
            ));
        }
        return Ok(None);
    };
    match kind.value.as_str() {
        "PEM" => {
            if let Some(key_password) = key_password {
                return Err(invalid_secret(
                    &key_password,
                    "encrypted PEM keys are not supported by kcli: give the key unencrypted",
                ));
            }
            Ok(Some(KeyStoreConfig::PemFile { location }))
        }
        "PKCS12" => {
            let Some(password) = password else {
                return Err(SslConfigError {
                    key: "ssl.keystore.password".to_string(),
                    value: String::new(),
                    reason: format!(
                        "SSL key store is specified ({}), but key store password is not specified.",
                        location.key
                    ),
                });
            };
            if let Some(key_password) = key_password
                && key_password.value != password.value
            {
                return Err(invalid_secret(
                    &key_password,
                    "kcli reads PKCS12 key stores whose key password is the store password",
                ));
            }
            Ok(Some(KeyStoreConfig::Pkcs12 { location, password }))
        }
        _ => Err(refuse_type(&kind)),
    }
}

fn truststore(
    lookup: &dyn Fn(&str) -> Option<Found>,
) -> Result<Option<TrustStoreConfig>, SslConfigError> {
    let kind = store_type(lookup, "ssl.truststore.type");
    let location = lookup("ssl.truststore.location");
    let password = lookup("ssl.truststore.password");
    if let Some(certificates) = lookup("ssl.truststore.certificates") {
        if kind.value != "PEM" {
            return Err(invalid(
                &kind,
                "SSL trust store certificates can be specified only for PEM trust stores",
            ));
        }
        if let Some(location) = location {
            return Err(invalid(
                &location,
                "a trust store location cannot be given with inline certificates",
            ));
        }
        return Ok(Some(TrustStoreConfig::PemInline { certificates }));
    }
    let Some(location) = location else {
        if let Some(password) = password {
            return Err(invalid_secret(
                &password,
                "SSL trust store is not specified, but trust store password is specified.",
            ));
        }
        return Ok(None);
    };
    match kind.value.as_str() {
        "PEM" => Ok(Some(TrustStoreConfig::PemFile { location })),
        "PKCS12" => Ok(Some(TrustStoreConfig::Pkcs12 { location, password })),
        _ => Err(refuse_type(&kind)),
    }
}

impl Found {
    /// The value as a path.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(self.value.trim())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<SslConfig, SslConfigError> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SslConfig::from_lookup(&|key| {
            let prefixed = format!("listener.name.ssl.{key}");
            map.get(&prefixed)
                .map(|v| Found {
                    key: prefixed.clone(),
                    value: v.clone(),
                })
                .or_else(|| {
                    map.get(key).map(|v| Found {
                        key: key.to_string(),
                        value: v.clone(),
                    })
                })
        })
    }

    #[test]
    fn defaults_are_kafkas() {
        let c = config(&[]).unwrap();
        assert_eq!(c.keystore, None);
        assert_eq!(c.truststore, None);
        assert_eq!(c.client_auth, SslClientAuth::None);
        assert_eq!(
            c.enabled_protocols,
            vec![TlsProtocol::Tls12, TlsProtocol::Tls13]
        );
        assert_eq!(c.principal_mapper.name("CN=a").unwrap(), "CN=a");
    }

    #[test]
    fn jks_is_refused_naming_the_type_key() {
        let err = config(&[
            ("ssl.keystore.location", "/k.jks"),
            ("ssl.keystore.password", "p"),
        ])
        .unwrap_err();
        assert_eq!(err.key, "ssl.keystore.type");
        assert!(err.reason.contains("JKS"), "{err}");
        let err = config(&[
            ("listener.name.ssl.ssl.truststore.location", "/t.jks"),
            ("ssl.truststore.type", "jks"),
        ])
        .unwrap_err();
        assert_eq!(err.key, "ssl.truststore.type");
    }

    #[test]
    fn pem_and_pkcs12_stores() {
        let c = config(&[
            ("ssl.keystore.type", "PEM"),
            ("listener.name.ssl.ssl.keystore.location", "/k.pem"),
            ("ssl.truststore.type", "PKCS12"),
            ("ssl.truststore.location", "/t.p12"),
            ("ssl.client.auth", "required"),
        ])
        .unwrap();
        assert!(matches!(
            c.keystore,
            Some(KeyStoreConfig::PemFile { ref location }) if location.key == "listener.name.ssl.ssl.keystore.location"
        ));
        assert!(matches!(
            c.truststore,
            Some(TrustStoreConfig::Pkcs12 { password: None, .. })
        ));
        assert_eq!(c.client_auth, SslClientAuth::Required);
        let c = config(&[
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.key", "-----BEGIN PRIVATE KEY-----"),
            (
                "ssl.keystore.certificate.chain",
                "-----BEGIN CERTIFICATE-----",
            ),
        ])
        .unwrap();
        assert!(matches!(c.keystore, Some(KeyStoreConfig::PemInline { .. })));
    }

    #[test]
    fn refusals_name_their_key() {
        for (pairs, key) in [
            (
                &[
                    ("ssl.keystore.type", "PKCS12"),
                    ("ssl.keystore.location", "/k"),
                ][..],
                "ssl.keystore.password",
            ),
            (&[("ssl.keystore.key", "k")][..], "ssl.keystore.type"),
            (
                &[("ssl.keystore.type", "PEM"), ("ssl.keystore.key", "k")][..],
                "ssl.keystore.certificate.chain",
            ),
            (
                &[
                    ("ssl.keystore.type", "PEM"),
                    ("ssl.keystore.location", "/k"),
                    ("ssl.key.password", "x"),
                ][..],
                "ssl.key.password",
            ),
            (
                &[("ssl.keystore.password", "x")][..],
                "ssl.keystore.password",
            ),
            (&[("ssl.client.auth", "always")][..], "ssl.client.auth"),
            (
                &[("ssl.enabled.protocols", "TLSv1.1")][..],
                "ssl.enabled.protocols",
            ),
            (&[("ssl.protocol", "SSLv3")][..], "ssl.protocol"),
            (
                &[("ssl.principal.mapping.rules", "DEFAULT/L")][..],
                "ssl.principal.mapping.rules",
            ),
            (
                &[
                    ("listener.name.ssl.ssl.keystore.type", "BKS"),
                    ("ssl.keystore.location", "/k"),
                ][..],
                "listener.name.ssl.ssl.keystore.type",
            ),
        ] {
            let err = config(pairs).unwrap_err();
            assert_eq!(err.key, key, "{pairs:?}: {err}");
        }
        // Secrets are not echoed.
        let err = config(&[("ssl.keystore.password", "hunter2")]).unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }
}
