//! Client quota entities and keys, as Kafka names them (`ClientQuotaEntity`, `QuotaConfigs`,
//! `DynamicConfig.{User,Client,Ip}`): who a quota applies to, and which quotas there are.
//!
//! An entity is a user, a client id, a user and client id together, or an IP address; each
//! part is a name or the default (`<default>` in ZooKeeper, a null name on the wire). Users and
//! client ids take the four client quotas (`producer_byte_rate`, `consumer_byte_rate`,
//! `request_percentage`, `controller_mutation_rate`); IPs take `connection_creation_rate`.
//! Values travel as doubles (the wire's type); the stored text is Kafka's (whole numbers for
//! LONG and INT keys, `Double.toString` for DOUBLE ones, see [`java_double_to_string`]).

use std::fmt;

/// The wire's entity type of a user (`ClientQuotaEntity.USER`).
pub const USER: &str = "user";
/// The wire's entity type of a client id (`ClientQuotaEntity.CLIENT_ID`).
pub const CLIENT_ID: &str = "client-id";
/// The wire's entity type of an IP address (`ClientQuotaEntity.IP`).
pub const IP: &str = "ip";

/// One part of an entity: a name, or the default that applies to every name without its own.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QuotaEntityName {
    Default,
    Named(String),
}

impl QuotaEntityName {
    /// The wire's form: `None` is the default.
    pub fn from_wire(name: Option<&str>) -> QuotaEntityName {
        match name {
            None => QuotaEntityName::Default,
            Some(n) => QuotaEntityName::Named(n.to_string()),
        }
    }

    /// The wire's form: the default is `None`.
    pub fn as_wire(&self) -> Option<&str> {
        match self {
            QuotaEntityName::Default => None,
            QuotaEntityName::Named(n) => Some(n),
        }
    }
}

impl fmt::Display for QuotaEntityName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuotaEntityName::Default => f.write_str("<default>"),
            QuotaEntityName::Named(n) => f.write_str(n),
        }
    }
}

/// A user, a client id, or both (Kafka's `KafkaQuotaEntity`). Invariant: not both `None`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientQuotaEntity {
    pub user: Option<QuotaEntityName>,
    pub client_id: Option<QuotaEntityName>,
}

/// What a quota config applies to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QuotaEntity {
    /// Users and client ids: the four client quotas.
    Client(ClientQuotaEntity),
    /// An IP address (or `<default>`): `connection_creation_rate`.
    Ip(QuotaEntityName),
}

impl QuotaEntity {
    /// The keys this entity's type takes.
    pub fn keys(&self) -> &'static [QuotaKey] {
        match self {
            QuotaEntity::Client(_) => &QuotaKey::CLIENT_KEYS,
            QuotaEntity::Ip(_) => &QuotaKey::IP_KEYS,
        }
    }

    /// The wire's `(entity_type, entity_name)` pairs, user before client id.
    pub fn wire_entries(&self) -> Vec<(&'static str, Option<&str>)> {
        match self {
            QuotaEntity::Client(c) => {
                let mut out = Vec::with_capacity(2);
                if let Some(u) = &c.user {
                    out.push((USER, u.as_wire()));
                }
                if let Some(c) = &c.client_id {
                    out.push((CLIENT_ID, c.as_wire()));
                }
                out
            }
            QuotaEntity::Ip(ip) => vec![(IP, ip.as_wire())],
        }
    }
}

impl fmt::Display for QuotaEntity {
    /// `user=alice,client-id=<default>`, `ip=10.0.0.1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (t, n) in self.wire_entries() {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{t}={}", n.unwrap_or("<default>"))?;
        }
        Ok(())
    }
}

/// The type a key's value is stored with (its `ConfigDef.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaValueType {
    Long,
    Int,
    Double,
}

/// A quota config key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QuotaKey {
    ProducerByteRate,
    ConsumerByteRate,
    RequestPercentage,
    ControllerMutationRate,
    ConnectionCreationRate,
}

impl QuotaKey {
    /// The keys of users and client ids (`QuotaConfigs.userAndClientQuotaConfigs`).
    pub const CLIENT_KEYS: [QuotaKey; 4] = [
        QuotaKey::ProducerByteRate,
        QuotaKey::ConsumerByteRate,
        QuotaKey::RequestPercentage,
        QuotaKey::ControllerMutationRate,
    ];
    /// The keys of IPs (`QuotaConfigs.ipConfigs`).
    pub const IP_KEYS: [QuotaKey; 1] = [QuotaKey::ConnectionCreationRate];

    /// Kafka's config name.
    pub fn name(self) -> &'static str {
        match self {
            QuotaKey::ProducerByteRate => "producer_byte_rate",
            QuotaKey::ConsumerByteRate => "consumer_byte_rate",
            QuotaKey::RequestPercentage => "request_percentage",
            QuotaKey::ControllerMutationRate => "controller_mutation_rate",
            QuotaKey::ConnectionCreationRate => "connection_creation_rate",
        }
    }

    pub fn parse(name: &str) -> Option<QuotaKey> {
        Self::CLIENT_KEYS
            .into_iter()
            .chain(Self::IP_KEYS)
            .find(|k| k.name() == name)
    }

    pub fn value_type(self) -> QuotaValueType {
        match self {
            QuotaKey::ProducerByteRate | QuotaKey::ConsumerByteRate => QuotaValueType::Long,
            QuotaKey::RequestPercentage | QuotaKey::ControllerMutationRate => {
                QuotaValueType::Double
            }
            QuotaKey::ConnectionCreationRate => QuotaValueType::Int,
        }
    }
}

impl fmt::Display for QuotaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Java's `Double.toString` of a finite double: plain decimal with at least one fractional
/// digit for magnitudes in [1e-3, 1e7) (`12.5`, `100.0`), otherwise computerized scientific
/// notation (`1.0E7`, `1.5E-4`); the digits are the shortest that read back as the same value.
pub fn java_double_to_string(value: f64) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .to_string();
    }
    if !value.is_finite() {
        return if value.is_nan() {
            "NaN".to_string()
        } else if value > 0.0 {
            "Infinity".to_string()
        } else {
            "-Infinity".to_string()
        };
    }
    // Rust's `{:e}` gives the shortest round-tripping digits: `1.25e1`, `-3e-4`.
    let sci = format!("{:e}", value.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if value < 0.0 { "-" } else { "" };
    let abs = value.abs();
    if (1e-3..1e7).contains(&abs) {
        let point = exponent + 1;
        let (int_part, frac_part) = if point <= 0 {
            let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
            ("0".to_string(), format!("{zeros}{digits}"))
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            if digits.len() <= point {
                (
                    format!("{digits}{}", "0".repeat(point - digits.len())),
                    String::new(),
                )
            } else {
                (digits[..point].to_string(), digits[point..].to_string())
            }
        };
        let frac = if frac_part.is_empty() {
            "0".to_string()
        } else {
            frac_part
        };
        format!("{sign}{int_part}.{frac}")
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exponent}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_java() {
        for (v, want) in [
            (12.5, "12.5"),
            (100.0, "100.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1e7, "1.0E7"),
            (1.5e-4, "1.5E-4"),
            (9_999_999.5, "9999999.5"),
            (123_456_789.0, "1.23456789E8"),
            (2_147_483_647.0, "2.147483647E9"),
            (-42.0, "-42.0"),
            (0.0, "0.0"),
            (0.1, "0.1"),
        ] {
            assert_eq!(java_double_to_string(v), want, "{v}");
        }
    }

    #[test]
    fn keys_and_entities_name_as_kafka() {
        for k in QuotaKey::CLIENT_KEYS.into_iter().chain(QuotaKey::IP_KEYS) {
            assert_eq!(QuotaKey::parse(k.name()), Some(k));
        }
        assert_eq!(QuotaKey::parse("SCRAM-SHA-256"), None);
        let e = QuotaEntity::Client(ClientQuotaEntity {
            user: Some(QuotaEntityName::Named("alice".into())),
            client_id: Some(QuotaEntityName::Default),
        });
        assert_eq!(e.to_string(), "user=alice,client-id=<default>");
        assert_eq!(e.keys().len(), 4);
        assert_eq!(
            QuotaEntity::Ip(QuotaEntityName::Default).wire_entries(),
            vec![(IP, None)]
        );
    }
}
