//! The broker's `ssl.*` keys and their listener overrides (`listener.name.<listener>.ssl.*`,
//! the listener name in lower case as Kafka's `ListenerName.configPrefix` writes it), kept as
//! given and resolved per listener into a checked [`SslConfig`]: the listener's key wins over
//! the plain one, as in Kafka's `KafkaConfig.valuesWithPrefixOverride`.
//!
//! These keys are not in the `defs` table: their meaning (store types, files, rules) belongs to
//! `security::ssl`, which checks them; config only finds them. A listener whose protocol is SSL
//! or SASL_SSL is checked when the configuration loads, so a bad value (a JKS key store, say)
//! stops the broker naming the key; the stores themselves are read at startup.

use std::collections::BTreeMap;

use super::{BrokerConfig, ConfigError, SecurityProtocol};
use crate::security::ssl::{Found, SslConfig, SslConfigError};

/// Whether `key` is one of these: `ssl.*` or `listener.name.<listener>.ssl.*`.
pub(crate) fn is_ssl_key(key: &str) -> bool {
    if key.starts_with("ssl.") {
        return true;
    }
    key.strip_prefix("listener.name.")
        .and_then(|rest| rest.split_once('.'))
        .is_some_and(|(_, base)| base.starts_with("ssl."))
}

/// The `ssl.*` values as given, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SslValues(pub BTreeMap<String, String>);

impl SslValues {
    /// Keeps `key`'s value (a later one replaces it).
    pub(crate) fn insert(&mut self, key: &str, value: &str) {
        self.0.insert(key.to_string(), value.to_string());
    }

    /// The checked TLS configuration of `listener_name` (any case).
    pub(crate) fn for_listener(&self, listener_name: &str) -> Result<SslConfig, ConfigError> {
        let prefix = format!("listener.name.{}.", listener_name.to_ascii_lowercase());
        SslConfig::from_lookup(&|key| {
            let prefixed = format!("{prefix}{key}");
            self.0
                .get(&prefixed)
                .map(|value| Found {
                    key: prefixed.clone(),
                    value: value.clone(),
                })
                .or_else(|| {
                    self.0.get(key).map(|value| Found {
                        key: key.to_string(),
                        value: value.clone(),
                    })
                })
        })
        .map_err(config_error)
    }
}

impl BrokerConfig {
    /// Checks the `ssl.*` keys of every SSL and SASL_SSL listener (see [`ssl_configs`]).
    pub(super) fn validate_ssl_listeners(&self) -> Result<(), ConfigError> {
        for listener in &self.settings.listeners {
            if matches!(
                listener.security_protocol,
                SecurityProtocol::Ssl | SecurityProtocol::SaslSsl
            ) {
                self.ssl_values.for_listener(&listener.listener_name)?;
            }
        }
        Ok(())
    }

    /// The checked TLS configuration of `listener_name`: its `listener.name.<l>.ssl.*` keys
    /// over the plain `ssl.*` ones.
    pub fn ssl_config(&self, listener_name: &str) -> Result<SslConfig, ConfigError> {
        self.ssl_values.for_listener(listener_name)
    }
}

fn config_error(e: SslConfigError) -> ConfigError {
    ConfigError::InvalidValue {
        key: e.key,
        value: e.value,
        reason: e.reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ssl_keys_and_listener_overrides() {
        assert!(is_ssl_key("ssl.keystore.location"));
        assert!(is_ssl_key("listener.name.internal.ssl.client.auth"));
        assert!(!is_ssl_key("listener.name.internal.plain.sasl.jaas.config"));
        assert!(!is_ssl_key("sasl.enabled.mechanisms"));
    }

    #[test]
    fn the_listener_key_wins() {
        let values = SslValues(
            [
                ("ssl.client.auth", "none"),
                ("listener.name.internal.ssl.client.auth", "bogus"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        assert!(values.for_listener("EXTERNAL").is_ok());
        let err = values.for_listener("INTERNAL").unwrap_err().to_string();
        assert!(
            err.contains("listener.name.internal.ssl.client.auth"),
            "{err}"
        );
    }
}
