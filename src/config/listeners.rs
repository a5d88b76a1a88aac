//! `listeners` / `advertised.listeners` values: comma-separated `NAME://host:port` endpoints, as
//! Kafka's `CoreUtils.listenerListToEndPoints` parses them (`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)`).
//!
//! The listener name is upper-cased (Kafka's `ListenerName.normalised`) and mapped to a
//! security protocol through Kafka's default `listener.security.protocol.map`, where each
//! protocol's name maps to itself. An empty host (`PLAINTEXT://:9092`) means every interface;
//! an IPv6 host is written in brackets (`PLAINTEXT://[::1]:9092`).

use std::fmt;

use super::ConfigError;

/// A listener's security protocol (Kafka's `SecurityProtocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecurityProtocol {
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    /// Kafka's name for it (`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`).
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    fn from_listener_name(name: &str) -> Option<Self> {
        [
            SecurityProtocol::Plaintext,
            SecurityProtocol::Ssl,
            SecurityProtocol::SaslPlaintext,
            SecurityProtocol::SaslSsl,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

/// One endpoint of `listeners` or `advertised.listeners`.
///
/// Invariant: `listener_name` is upper case and non-empty; `host` is `None` for "every
/// interface" and otherwise non-empty without brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndPoint {
    pub listener_name: String,
    pub security_protocol: SecurityProtocol,
    pub host: Option<String>,
    /// 0 asks the OS for a free port when binding.
    pub port: u16,
}

impl fmt::Display for EndPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.host.as_deref() {
            Some(h) if h.contains(':') => write!(f, "{}://[{h}]:{}", self.listener_name, self.port),
            Some(h) => write!(f, "{}://{h}:{}", self.listener_name, self.port),
            None => write!(f, "{}://:{}", self.listener_name, self.port),
        }
    }
}

/// Parses a listener list. Names must be distinct, and so must non-zero ports when
/// `distinct_ports` (Kafka requires both for `listeners`, only the names for
/// `advertised.listeners`). The error says why, for the caller to name the key.
pub fn parse_listeners(value: &str, distinct_ports: bool) -> Result<Vec<EndPoint>, String> {
    let mut endpoints: Vec<EndPoint> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let endpoint = parse_endpoint(item)?;
        if endpoints
            .iter()
            .any(|e| e.listener_name == endpoint.listener_name)
        {
            return Err(format!(
                "each listener must have a different name, {} appears twice",
                endpoint.listener_name
            ));
        }
        if distinct_ports && endpoint.port != 0 && endpoints.iter().any(|e| e.port == endpoint.port)
        {
            return Err(format!(
                "each listener must have a different port, {} appears twice",
                endpoint.port
            ));
        }
        endpoints.push(endpoint);
    }
    Ok(endpoints)
}

fn parse_endpoint(item: &str) -> Result<EndPoint, String> {
    let unparsable = || format!("unable to parse {item} to a broker endpoint");
    let (name, address) = item.rsplit_once("://").ok_or_else(unparsable)?;
    let name = name.to_ascii_uppercase();
    if name.is_empty() {
        return Err(unparsable());
    }
    let (host, port) = if let Some(bracketed) = address.strip_prefix('[') {
        let (host, rest) = bracketed.split_once(']').ok_or_else(unparsable)?;
        let port = rest.strip_prefix(':').ok_or_else(unparsable)?;
        (host, port)
    } else {
        address.rsplit_once(':').ok_or_else(unparsable)?
    };
    let host_ok = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '%' | '.' | '_' | ':'));
    if !host_ok || port.is_empty() {
        return Err(unparsable());
    }
    let port: u16 = port
        .parse()
        .map_err(|_| format!("invalid port {port} in {item}: must be 0 to 65535"))?;
    let security_protocol = SecurityProtocol::from_listener_name(&name)
        .ok_or_else(|| format!("no security protocol defined for listener {name}"))?;
    Ok(EndPoint {
        listener_name: name,
        security_protocol,
        host: (!host.is_empty()).then(|| host.to_string()),
        port,
    })
}

/// Refuses (naming the listener and the key) any listener whose security protocol is not
/// PLAINTEXT: until SSL and SASL are implemented, serving such a listener would accept
/// unauthenticated plaintext where its name promises otherwise. Advertised listeners are a
/// subset of these names, so checking `listeners` covers them.
pub fn only_plaintext_listeners(listeners: &[EndPoint]) -> Result<(), ConfigError> {
    match listeners
        .iter()
        .find(|e| e.security_protocol != SecurityProtocol::Plaintext)
    {
        Some(endpoint) => Err(ConfigError::UnsupportedSecurityProtocol {
            key: "listeners",
            listener: endpoint.to_string(),
            protocol: endpoint.security_protocol.name(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(name: &str, host: Option<&str>, port: u16) -> EndPoint {
        EndPoint {
            listener_name: name.into(),
            security_protocol: SecurityProtocol::from_listener_name(name).unwrap(),
            host: host.map(String::from),
            port,
        }
    }

    #[test]
    fn parses_kafkas_forms() {
        assert_eq!(
            parse_listeners("PLAINTEXT://:9092", true).unwrap(),
            vec![ep("PLAINTEXT", None, 9092)]
        );
        assert_eq!(
            parse_listeners(
                " plaintext://127.0.0.1:9092 , SSL://[::1]:9093,SASL_SSL://my-host.example:0,",
                true
            )
            .unwrap(),
            vec![
                ep("PLAINTEXT", Some("127.0.0.1"), 9092),
                ep("SSL", Some("::1"), 9093),
                ep("SASL_SSL", Some("my-host.example"), 0),
            ]
        );
        assert!(parse_listeners("", true).unwrap().is_empty());
        assert_eq!(ep("SSL", Some("::1"), 9093).to_string(), "SSL://[::1]:9093");
        assert_eq!(ep("PLAINTEXT", None, 1).to_string(), "PLAINTEXT://:1");
    }

    #[test]
    fn rejects_bad_endpoints_saying_why() {
        for (value, want) in [
            ("localhost:9092", "unable to parse"),
            ("PLAINTEXT://host", "unable to parse"),
            ("PLAINTEXT://host:", "unable to parse"),
            ("PLAINTEXT://ho st:1", "unable to parse"),
            ("://host:1", "unable to parse"),
            ("PLAINTEXT://[::1:1", "unable to parse"),
            ("PLAINTEXT://h:70000", "invalid port 70000"),
            ("PLAINTEXT://h:-1", "invalid port -1"),
            (
                "INTERNAL://h:1",
                "no security protocol defined for listener INTERNAL",
            ),
            ("PLAINTEXT://a:1,plaintext://b:2", "different name"),
            ("PLAINTEXT://a:1,SSL://b:1", "different port"),
        ] {
            let err = parse_listeners(value, true).unwrap_err();
            assert!(err.contains(want), "{value}: {err}");
        }
        // Port 0 may repeat, and advertised listeners may share ports.
        assert!(parse_listeners("PLAINTEXT://a:0,SSL://b:0", true).is_ok());
        assert!(parse_listeners("PLAINTEXT://a:1,SSL://b:1", false).is_ok());
    }

    #[test]
    fn only_plaintext_listeners_are_served() {
        let ok = parse_listeners("PLAINTEXT://127.0.0.1:9092", false).unwrap();
        assert!(only_plaintext_listeners(&ok).is_ok());
        for (value, named) in [
            ("PLAINTEXT://a:1,SSL://a:2", "SSL://a:2"),
            ("SASL_PLAINTEXT://a:1", "SASL_PLAINTEXT://a:1"),
            ("sasl_ssl://a:1", "SASL_SSL://a:1"),
        ] {
            let listeners = parse_listeners(value, false).unwrap();
            let err = only_plaintext_listeners(&listeners)
                .unwrap_err()
                .to_string();
            assert!(err.contains(named) && err.contains("listeners"), "{err}");
        }
    }
}
