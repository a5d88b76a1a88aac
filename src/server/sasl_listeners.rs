//! What the SASL listeners are made of, built once at startup from the config (Kafka's
//! `SaslChannelBuilder.configure` for each SASL listener): per listener, the JAAS config of
//! every enabled mechanism (`listener.name.<l>.<m>.sasl.jaas.config`, else `sasl.jaas.config`:
//! see `config::sasl_config`), parsed and holding exactly one login module; the PLAIN users of
//! its `PlainLoginModule` entry; a [`SaslAuthenticator`] over a [`BrokerCredentialProvider`];
//! and one [`ScramCredentialCache`] for the SCRAM mechanisms any listener enables. When the
//! inter-broker listener is a SASL one, the broker's own client credentials: the `username` and
//! `password` options of that listener's JAAS config for `sasl.mechanism.inter.broker.protocol`.
//! Every error names the key to fix.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::config::BrokerConfig;
use crate::config::sasl_config::{SaslSettings, is_sasl};
use crate::network::{ClientAuthenticatorHandle, ListenerAuthenticator};
use crate::security::jaas::{
    AppConfigurationEntry, JaasConfig, JaasError, PLAIN_LOGIN_MODULE, PLAIN_USER_PREFIX,
};
use crate::security::sasl::PLAIN_MECHANISM;
use crate::security::scram_credential::ScramMechanism;

use super::credential_provider::BrokerCredentialProvider;
use super::sasl_authenticator::SaslAuthenticator;
use super::sasl_client_authenticator::SaslClientAuthenticator;
use super::scram_credential_cache::ScramCredentialCache;

/// A SASL setting the broker cannot start with.
#[derive(Debug, thiserror::Error)]
pub enum SaslSetupError {
    #[error(
        "SASL listener {listener} enables {mechanism} but has no JAAS config: set {key} \
         (or sasl.jaas.config)"
    )]
    MissingJaasConfig {
        listener: String,
        mechanism: String,
        key: String,
    },
    #[error("invalid JAAS config in {key}: {source}")]
    InvalidJaasConfig {
        key: String,
        #[source]
        source: JaasError,
    },
    #[error(
        "the JAAS config in {key} has no {option} option, which the broker needs as the client \
         of the inter-broker listener {listener}"
    )]
    MissingInterBrokerCredential {
        key: String,
        option: &'static str,
        listener: String,
    },
}

/// The SASL parts of the listeners and the inter-broker client.
#[derive(Debug, Default)]
pub(crate) struct SaslListeners {
    /// Shared by every listener; loaded from `/config/users` and kept current by the config
    /// change listener.
    pub scram_cache: Arc<ScramCredentialCache>,
    /// By listener name.
    pub authenticators: BTreeMap<String, ListenerAuthenticator>,
    /// Set when the inter-broker listener is a SASL one.
    pub inter_broker_client: Option<ClientAuthenticatorHandle>,
}

/// The parsed single login module of `mechanism`'s JAAS config on `listener`.
fn jaas_entry(
    sasl: &SaslSettings,
    listener: &str,
    mechanism: &str,
) -> Result<(String, AppConfigurationEntry), SaslSetupError> {
    let jaas =
        sasl.jaas_config(listener, mechanism)
            .ok_or_else(|| SaslSetupError::MissingJaasConfig {
                listener: listener.to_string(),
                mechanism: mechanism.to_string(),
                key: SaslSettings::jaas_config_key(listener, mechanism),
            })?;
    let invalid = |source| SaslSetupError::InvalidJaasConfig {
        key: jaas.key.clone(),
        source,
    };
    let parsed = JaasConfig::parse(&jaas.value).map_err(invalid)?;
    let entry = parsed.single_entry().map_err(invalid)?.clone();
    Ok((jaas.key, entry))
}

impl SaslListeners {
    /// Builds every SASL listener's parts; empty when there is none.
    pub(crate) fn from_config(config: &BrokerConfig) -> Result<SaslListeners, SaslSetupError> {
        let sasl = &config.sasl;
        let listeners: Vec<&str> = config
            .listeners
            .iter()
            .filter(|l| is_sasl(l.security_protocol))
            .map(|l| l.listener_name.as_str())
            .collect();
        let scram: BTreeSet<ScramMechanism> = listeners
            .iter()
            .flat_map(|l| sasl.enabled_mechanisms(l).value)
            .filter_map(|m| ScramMechanism::for_mechanism_name(&m))
            .collect();
        let scram_cache = Arc::new(ScramCredentialCache::new(scram));
        let mut authenticators = BTreeMap::new();
        for listener in listeners {
            let enabled = sasl.enabled_mechanisms(listener).value;
            let mut plain_users = BTreeMap::new();
            for mechanism in &enabled {
                let (_, entry) = jaas_entry(sasl, listener, mechanism)?;
                // Kafka's `PlainServerCallbackHandler`: the `user_<name>` options of the
                // PLAIN mechanism's `PlainLoginModule` entry.
                if mechanism == PLAIN_MECHANISM && entry.login_module_name == PLAIN_LOGIN_MODULE {
                    plain_users = entry
                        .options
                        .iter()
                        .filter_map(|(key, password)| {
                            let user = key.strip_prefix(PLAIN_USER_PREFIX)?;
                            Some((user.to_string(), password.clone()))
                        })
                        .collect();
                }
            }
            let authenticator = SaslAuthenticator {
                enabled_mechanisms: enabled,
                credentials: Arc::new(BrokerCredentialProvider::new(
                    plain_users,
                    Arc::clone(&scram_cache),
                )),
                max_receive_size: sasl.max_receive_size(listener),
                failed_authentication_delay: Duration::from_millis(
                    u64::try_from(sasl.connection_failed_authentication_delay_ms).unwrap_or(0),
                ),
            };
            authenticators.insert(
                listener.to_string(),
                ListenerAuthenticator(Arc::new(authenticator)),
            );
        }
        let inter_broker_listener = config.inter_broker_listener_name();
        let inter_broker_is_sasl = config
            .listeners
            .iter()
            .any(|l| l.listener_name == inter_broker_listener && is_sasl(l.security_protocol));
        let inter_broker_client = if inter_broker_is_sasl {
            let mechanism = &sasl.sasl_mechanism_inter_broker_protocol;
            let (key, entry) = jaas_entry(sasl, &inter_broker_listener, mechanism)?;
            let option = |option: &'static str, value: Option<&str>| {
                value.map(str::to_string).ok_or_else(|| {
                    SaslSetupError::MissingInterBrokerCredential {
                        key: key.clone(),
                        option,
                        listener: inter_broker_listener.clone(),
                    }
                })
            };
            let client = SaslClientAuthenticator {
                mechanism: mechanism.clone(),
                username: option("username", entry.username())?,
                password: option("password", entry.password())?,
            };
            Some(ClientAuthenticatorHandle(Arc::new(client)))
        } else {
            None
        };
        Ok(SaslListeners {
            scram_cache,
            authenticators,
            inter_broker_client,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> BrokerConfig {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        BrokerConfig::from_sources(&[], &pairs, &[]).unwrap()
    }

    const BASE: [(&str, &str); 3] = [
        ("listeners", "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093"),
        ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512"),
        ("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"),
    ];

    #[test]
    fn sasl_listeners_get_their_users_and_the_inter_broker_client_its_credentials() {
        let mut pairs = BASE.to_vec();
        pairs.extend([
            (
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required \
                 user_alice=\"alice-secret\" user_bob=\"bob-secret\";",
            ),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required \
                 username=\"broker\" password=\"broker-secret\";",
            ),
        ]);
        let built = SaslListeners::from_config(&config(&pairs)).unwrap();
        assert_eq!(
            built.authenticators.keys().collect::<Vec<_>>(),
            ["SASL_PLAINTEXT"]
        );
        assert!(built.inter_broker_client.is_none());

        pairs.push(("security.inter.broker.protocol", "SASL_PLAINTEXT"));
        let built = SaslListeners::from_config(&config(&pairs)).unwrap();
        let client = format!("{:?}", built.inter_broker_client.unwrap());
        assert!(!client.contains("broker-secret"), "{client}");
    }

    #[test]
    fn missing_or_bad_jaas_configs_name_the_key() {
        let err = SaslListeners::from_config(&config(&BASE))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("listener.name.sasl_plaintext.plain.sasl.jaas.config"),
            "{err}"
        );
        let mut pairs = BASE.to_vec();
        pairs.push((
            "listener.name.sasl_plaintext.plain.sasl.jaas.config",
            "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"a\"",
        ));
        pairs.push(("sasl.jaas.config", "x required; y required;"));
        let err = SaslListeners::from_config(&config(&pairs))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("listener.name.sasl_plaintext.plain.sasl.jaas.config")
                && err.contains("semi-colon"),
            "{err}"
        );
        pairs[3].1 = "org.apache.kafka.common.security.plain.PlainLoginModule required;";
        pairs.push(("security.inter.broker.protocol", "SASL_PLAINTEXT"));
        let err = SaslListeners::from_config(&config(&pairs))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sasl.jaas.config") && err.contains("2 login modules"),
            "{err}"
        );
        pairs[4].1 = "org.apache.kafka.common.security.scram.ScramLoginModule required \
                      username=\"broker\";";
        let err = SaslListeners::from_config(&config(&pairs))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sasl.jaas.config") && err.contains("password"),
            "{err}"
        );
    }
}
