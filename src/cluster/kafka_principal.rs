//! `KafkaPrincipal`: who a connection is, as the authorizer and ACLs name it (`User:alice`).
//! A PLAINTEXT or SSL-without-client-certificate connection is `User:ANONYMOUS`, as in Kafka.

use std::fmt;

/// A principal: a type (always `User` for the principals Kafka's builders make) and a name.
///
/// Invariant: neither part contains the `:` that separates them in `type:name`, except that a
/// name may (Kafka splits at the first `:` only).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KafkaPrincipal {
    pub principal_type: String,
    pub name: String,
}

impl KafkaPrincipal {
    /// `User`, Kafka's `KafkaPrincipal.USER_TYPE`.
    pub const USER_TYPE: &'static str = "User";

    pub fn user(name: impl Into<String>) -> Self {
        KafkaPrincipal {
            principal_type: Self::USER_TYPE.to_string(),
            name: name.into(),
        }
    }

    /// `User:ANONYMOUS`, the principal of an unauthenticated connection.
    pub fn anonymous() -> Self {
        Self::user("ANONYMOUS")
    }

    /// Parses `type:name` as Kafka's `SecurityUtils.parseKafkaPrincipal` (in `super.users`, in
    /// ACLs): split at the first `:`; `None` without one or with an empty part.
    pub fn parse(s: &str) -> Option<Self> {
        let (principal_type, name) = s.split_once(':')?;
        (!principal_type.is_empty() && !name.is_empty()).then(|| KafkaPrincipal {
            principal_type: principal_type.to_string(),
            name: name.to_string(),
        })
    }
}

impl fmt::Display for KafkaPrincipal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_as_kafka() {
        let p = KafkaPrincipal::parse("User:CN=broker,O=kcli").unwrap();
        assert_eq!(p, KafkaPrincipal::user("CN=broker,O=kcli"));
        assert_eq!(p.to_string(), "User:CN=broker,O=kcli");
        assert_eq!(KafkaPrincipal::anonymous().to_string(), "User:ANONYMOUS");
        assert_eq!(KafkaPrincipal::parse("alice"), None);
        assert_eq!(KafkaPrincipal::parse("User:"), None);
    }
}
