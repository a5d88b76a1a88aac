//! The broker's SASL keys (Kafka 3.9's `BrokerSecurityConfigs` and `SaslConfigs` as a broker
//! reads them), their listener-prefixed forms, and the cross-key checks of SASL listeners.
//!
//! Keys: `sasl.enabled.mechanisms` (LIST, default `GSSAPI`), `sasl.jaas.config` (PASSWORD),
//! `sasl.mechanism.inter.broker.protocol` (default `GSSAPI`), `sasl.server.max.receive.size`
//! (524288), `connections.max.reauth.ms` (0) and `connection.failed.authentication.delay.ms`
//! (100). Kafka reads a listener's security keys with `valuesWithPrefixOverride`: a key
//! `listener.name.<listener in lower case>.<key>` wins over `<key>` for that listener, and the
//! JAAS config of a mechanism is `listener.name.<listener>.<mechanism in lower case>.sasl.jaas.config`.
//! Every `listener.name.*` key is kept (the TLS keys of the same form are read elsewhere); the
//! values of the ones read here are checked as their unprefixed keys are.
//!
//! Where Kafka's broker ignores an unprefixed `sasl.jaas.config` (with a warning) and falls back
//! to the static JAAS file's `KafkaServer` section, kcli, which has no JAAS file, takes
//! `sasl.jaas.config` as that fallback.

use std::collections::BTreeMap;
use std::fmt;

use super::ConfigError;
use super::defs::{int_at_least, list, long_at_least, string};
use super::listeners::{EndPoint, SecurityProtocol};

/// The mechanisms kcli's SASL servers implement (security::sasl::new_sasl_server), in Kafka's
/// names. Config names nothing in `security`, so the list is repeated here.
pub(crate) const SUPPORTED_MECHANISMS: [&str; 3] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];

/// The prefix of listener-specific keys (Kafka's `ListenerName.configPrefix` without the name).
pub(crate) const LISTENER_PREFIX: &str = "listener.name.";

/// The SASL settings, unprefixed and per listener. `Debug` hides every value that may hold a
/// password (the JAAS configs and all listener-prefixed values).
#[derive(Clone, PartialEq, Eq)]
pub struct SaslSettings {
    pub sasl_enabled_mechanisms: Vec<String>,
    /// `sasl.jaas.config`: kcli's fallback when no listener- and mechanism-prefixed one is set.
    pub sasl_jaas_config: Option<String>,
    pub sasl_mechanism_inter_broker_protocol: String,
    /// Largest frame accepted before authentication completes.
    pub sasl_server_max_receive_size: i32,
    /// Only 0 is accepted (no KIP-368 re-authentication).
    pub connections_max_reauth_ms: i64,
    pub connection_failed_authentication_delay_ms: i32,
    /// Every `listener.name.<l>.<key>` as given, by its full key.
    pub listener_prefixed: BTreeMap<String, String>,
}

impl Default for SaslSettings {
    fn default() -> Self {
        SaslSettings {
            sasl_enabled_mechanisms: vec!["GSSAPI".to_string()],
            sasl_jaas_config: None,
            sasl_mechanism_inter_broker_protocol: "GSSAPI".to_string(),
            sasl_server_max_receive_size: 524_288,
            connections_max_reauth_ms: 0,
            connection_failed_authentication_delay_ms: 100,
            listener_prefixed: BTreeMap::new(),
        }
    }
}

impl fmt::Debug for SaslSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslSettings")
            .field("sasl_enabled_mechanisms", &self.sasl_enabled_mechanisms)
            .field(
                "sasl_jaas_config",
                &self.sasl_jaas_config.as_ref().map(|_| "[hidden]"),
            )
            .field(
                "sasl_mechanism_inter_broker_protocol",
                &self.sasl_mechanism_inter_broker_protocol,
            )
            .field(
                "sasl_server_max_receive_size",
                &self.sasl_server_max_receive_size,
            )
            .field("connections_max_reauth_ms", &self.connections_max_reauth_ms)
            .field(
                "connection_failed_authentication_delay_ms",
                &self.connection_failed_authentication_delay_ms,
            )
            .field(
                "listener_prefixed",
                &self.listener_prefixed.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A listener's own value of `key`, or the unprefixed one: which key it came from and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedValue<T> {
    pub key: String,
    pub value: T,
}

fn listener_key(listener: &str, key: &str) -> String {
    format!("{LISTENER_PREFIX}{}.{key}", listener.to_ascii_lowercase())
}

impl SaslSettings {
    /// Parses and stores one of the unprefixed keys; `Ok(false)` for a key that is not one.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        match key {
            "sasl.enabled.mechanisms" => self.sasl_enabled_mechanisms = list(value),
            "sasl.jaas.config" => {
                self.sasl_jaas_config = Some(value.trim().to_string()).filter(|v| !v.is_empty())
            }
            "sasl.mechanism.inter.broker.protocol" => {
                self.sasl_mechanism_inter_broker_protocol = string(value)
            }
            "sasl.server.max.receive.size" => {
                self.sasl_server_max_receive_size = parse_int(key, value)?
            }
            "connections.max.reauth.ms" => self.connections_max_reauth_ms = parse_long(key, value)?,
            "connection.failed.authentication.delay.ms" => {
                self.connection_failed_authentication_delay_ms =
                    int_at_least(value, 0).map_err(|reason| invalid(key, value, reason))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Stores a `listener.name.<l>.<key>` key, checking its value when `<key>` is one read
    /// here. The caller has checked the prefix.
    pub fn set_listener_prefixed(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let rest = key.strip_prefix(LISTENER_PREFIX).unwrap_or(key);
        let suffix = rest.split_once('.').map_or("", |(_, s)| s);
        match suffix {
            "sasl.enabled.mechanisms" => {}
            "sasl.server.max.receive.size" => {
                parse_int(key, value)?;
            }
            "connections.max.reauth.ms" => {
                parse_long(key, value)?;
            }
            _ => {}
        }
        self.listener_prefixed
            .insert(key.to_string(), value.to_string());
        Ok(())
    }

    fn prefixed(&self, listener: &str, key: &str) -> Option<(String, &str)> {
        let full = listener_key(listener, key);
        let value = self.listener_prefixed.get(&full)?;
        Some((full, value.as_str()))
    }

    /// `sasl.enabled.mechanisms` of `listener` (Kafka's `saslEnabledMechanisms(listenerName)`).
    pub fn enabled_mechanisms(&self, listener: &str) -> KeyedValue<Vec<String>> {
        match self.prefixed(listener, "sasl.enabled.mechanisms") {
            Some((key, value)) => KeyedValue {
                key,
                value: list(value),
            },
            None => KeyedValue {
                key: "sasl.enabled.mechanisms".to_string(),
                value: self.sasl_enabled_mechanisms.clone(),
            },
        }
    }

    /// `sasl.server.max.receive.size` of `listener`.
    pub fn max_receive_size(&self, listener: &str) -> i32 {
        self.prefixed(listener, "sasl.server.max.receive.size")
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(self.sasl_server_max_receive_size)
    }

    /// `connections.max.reauth.ms` of `listener`.
    pub fn max_reauth_ms(&self, listener: &str) -> KeyedValue<i64> {
        match self.prefixed(listener, "connections.max.reauth.ms") {
            Some((key, value)) => KeyedValue {
                value: value.trim().parse().unwrap_or(0),
                key,
            },
            None => KeyedValue {
                key: "connections.max.reauth.ms".to_string(),
                value: self.connections_max_reauth_ms,
            },
        }
    }

    /// The JAAS config of `mechanism` on `listener`: `listener.name.<l>.<m>.sasl.jaas.config`
    /// (both lower case, Kafka's `JaasContext.loadServerContext`), else `sasl.jaas.config`.
    pub fn jaas_config(&self, listener: &str, mechanism: &str) -> Option<KeyedValue<String>> {
        let mechanism_key = format!("{}.sasl.jaas.config", mechanism.to_ascii_lowercase());
        if let Some((key, value)) = self.prefixed(listener, &mechanism_key) {
            return Some(KeyedValue {
                key,
                value: value.trim().to_string(),
            });
        }
        self.sasl_jaas_config.as_ref().map(|value| KeyedValue {
            key: "sasl.jaas.config".to_string(),
            value: value.clone(),
        })
    }

    /// The key Kafka reads a mechanism's JAAS config of `listener` from, for messages.
    pub fn jaas_config_key(listener: &str, mechanism: &str) -> String {
        listener_key(
            listener,
            &format!("{}.sasl.jaas.config", mechanism.to_ascii_lowercase()),
        )
    }
}

fn invalid(key: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn parse_int(key: &str, value: &str) -> Result<i32, ConfigError> {
    int_at_least(value, i32::MIN).map_err(|reason| invalid(key, value, reason))
}

fn parse_long(key: &str, value: &str) -> Result<i64, ConfigError> {
    long_at_least(value, i64::MIN).map_err(|reason| invalid(key, value, reason))
}

/// Whether a listener of this protocol authenticates with SASL.
pub(crate) fn is_sasl(protocol: SecurityProtocol) -> bool {
    matches!(
        protocol,
        SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
    )
}

/// The checks of SASL listeners at startup: no re-authentication; every SASL listener enables
/// at least one mechanism and only ones kcli has (GSSAPI, Kafka's default, is refused naming
/// the key); and, when the inter-broker listener is a SASL one, Kafka's check that
/// `sasl.mechanism.inter.broker.protocol` is among its enabled mechanisms.
pub(crate) fn validate_sasl(
    sasl: &SaslSettings,
    listeners: &[EndPoint],
    inter_broker_listener: &str,
) -> Result<(), ConfigError> {
    let reauth_check = |listener: &str| {
        let reauth = sasl.max_reauth_ms(listener);
        if reauth.value != 0 {
            return Err(invalid(
                &reauth.key,
                &reauth.value.to_string(),
                "kcli does not re-authenticate connections (KIP-368): only 0 is supported",
            ));
        }
        Ok(())
    };
    reauth_check("")?;
    for listener in listeners.iter().filter(|l| is_sasl(l.security_protocol)) {
        let name = &listener.listener_name;
        reauth_check(name)?;
        let enabled = sasl.enabled_mechanisms(name);
        let text = enabled.value.join(",");
        if enabled.value.is_empty() {
            return Err(invalid(
                &enabled.key,
                &text,
                format!("SASL listener {name} enables no SASL mechanism"),
            ));
        }
        if let Some(missing) = enabled
            .value
            .iter()
            .find(|m| !SUPPORTED_MECHANISMS.contains(&m.as_str()))
        {
            return Err(invalid(
                &enabled.key,
                &text,
                format!(
                    "SASL listener {name} enables mechanism {missing}, which kcli does not \
                     implement (it has {})",
                    SUPPORTED_MECHANISMS.join(", ")
                ),
            ));
        }
    }
    let inter_broker = listeners
        .iter()
        .find(|l| l.listener_name == inter_broker_listener);
    if let Some(listener) = inter_broker.filter(|l| is_sasl(l.security_protocol)) {
        let mechanism = &sasl.sasl_mechanism_inter_broker_protocol;
        if !sasl
            .enabled_mechanisms(&listener.listener_name)
            .value
            .contains(mechanism)
        {
            return Err(invalid(
                "sasl.mechanism.inter.broker.protocol",
                mechanism,
                "sasl.mechanism.inter.broker.protocol must be included in \
                 sasl.enabled.mechanisms when SASL is used for inter-broker communication",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::listeners::parse_listeners;

    fn sasl(pairs: &[(&str, &str)]) -> SaslSettings {
        let mut s = SaslSettings::default();
        for (k, v) in pairs {
            if k.starts_with(LISTENER_PREFIX) {
                s.set_listener_prefixed(k, v).unwrap();
            } else {
                assert!(s.set(k, v).unwrap(), "{k}");
            }
        }
        s
    }

    fn listeners(value: &str) -> Vec<EndPoint> {
        let mut l = parse_listeners(value, true).unwrap();
        for e in &mut l {
            if e.listener_name == "CLIENTS" {
                e.security_protocol = SecurityProtocol::SaslPlaintext;
            }
        }
        l
    }

    #[test]
    fn listener_prefixed_values_win_for_their_listener() {
        let s = sasl(&[
            ("sasl.enabled.mechanisms", "PLAIN"),
            (
                "listener.name.sasl_plaintext.sasl.enabled.mechanisms",
                "SCRAM-SHA-512, PLAIN",
            ),
            ("sasl.jaas.config", "secret-fallback"),
            (
                "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
                " secret-scram ",
            ),
            (
                "listener.name.sasl_plaintext.sasl.server.max.receive.size",
                "1000",
            ),
        ]);
        let e = s.enabled_mechanisms("SASL_PLAINTEXT");
        assert_eq!(
            (e.key.as_str(), e.value),
            (
                "listener.name.sasl_plaintext.sasl.enabled.mechanisms",
                vec!["SCRAM-SHA-512".to_string(), "PLAIN".to_string()]
            )
        );
        assert_eq!(s.enabled_mechanisms("OTHER").value, ["PLAIN"]);
        let j = s.jaas_config("SASL_PLAINTEXT", "SCRAM-SHA-512").unwrap();
        assert_eq!(
            (j.key.as_str(), j.value.as_str()),
            (
                "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
                "secret-scram"
            )
        );
        let j = s.jaas_config("SASL_PLAINTEXT", "PLAIN").unwrap();
        assert_eq!(
            (j.key.as_str(), j.value.as_str()),
            ("sasl.jaas.config", "secret-fallback")
        );
        assert_eq!(s.max_receive_size("SASL_PLAINTEXT"), 1000);
        assert_eq!(s.max_receive_size("OTHER"), 524_288);
        let debug = format!("{s:?}");
        assert!(!debug.contains("secret"), "{debug}");
        let mut bad = SaslSettings::default();
        let err = bad
            .set_listener_prefixed("listener.name.x.connections.max.reauth.ms", "soon")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("listener.name.x.connections.max.reauth.ms")
        );
    }

    #[test]
    fn sasl_listeners_are_checked_naming_the_key() {
        let l = listeners("PLAINTEXT://:1,CLIENTS://:2");
        let fails = |s: &SaslSettings, ibl: &str, key: &str, want: &str| {
            let err = validate_sasl(s, &l, ibl).unwrap_err().to_string();
            assert!(err.contains(key) && err.contains(want), "{err}");
        };
        fails(
            &SaslSettings::default(),
            "PLAINTEXT",
            "sasl.enabled.mechanisms",
            "GSSAPI, which kcli does not implement",
        );
        fails(
            &sasl(&[(
                "listener.name.clients.sasl.enabled.mechanisms",
                "PLAIN,OAUTHBEARER",
            )]),
            "PLAINTEXT",
            "listener.name.clients.sasl.enabled.mechanisms",
            "OAUTHBEARER",
        );
        fails(
            &sasl(&[("sasl.enabled.mechanisms", "")]),
            "PLAINTEXT",
            "sasl.enabled.mechanisms",
            "no SASL mechanism",
        );
        fails(
            &sasl(&[
                ("sasl.enabled.mechanisms", "PLAIN"),
                ("connections.max.reauth.ms", "1"),
            ]),
            "PLAINTEXT",
            "connections.max.reauth.ms",
            "only 0",
        );
        fails(
            &sasl(&[
                ("sasl.enabled.mechanisms", "PLAIN"),
                ("listener.name.clients.connections.max.reauth.ms", "5"),
            ]),
            "PLAINTEXT",
            "listener.name.clients.connections.max.reauth.ms",
            "only 0",
        );
        // The inter-broker mechanism must be enabled on a SASL inter-broker listener.
        let plain = sasl(&[("sasl.enabled.mechanisms", "PLAIN")]);
        validate_sasl(&plain, &l, "PLAINTEXT").unwrap();
        fails(
            &plain,
            "CLIENTS",
            "sasl.mechanism.inter.broker.protocol",
            "must be included in sasl.enabled.mechanisms",
        );
        let scram = sasl(&[
            ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512"),
            ("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"),
        ]);
        validate_sasl(&scram, &l, "CLIENTS").unwrap();
        // Without SASL listeners GSSAPI is no problem.
        validate_sasl(
            &SaslSettings::default(),
            &listeners("PLAINTEXT://:1"),
            "PLAINTEXT",
        )
        .unwrap();
    }
}
