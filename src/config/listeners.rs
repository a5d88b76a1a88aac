//! `listeners` / `advertised.listeners` values: comma-separated `NAME://host:port` endpoints, as
//! Kafka's `CoreUtils.listenerListToEndPoints` parses them (`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)`).
//!
//! The listener name is upper-cased (Kafka's `ListenerName.normalised`) and mapped to a
//! security protocol through `listener.security.protocol.map` (`NAME:PROTOCOL,...`; by default
//! each protocol's name maps to itself), once every key is known
//! ([`resolve_security_protocols`]): a listener named in no entry is an error. An empty host
//! (`PLAINTEXT://:9092`) means every interface; an IPv6 host is written in brackets
//! (`PLAINTEXT://[::1]:9092`).

use std::collections::BTreeMap;
use std::fmt;

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

    /// The protocol of this name (`SecurityProtocol.forName`: exact, upper case).
    pub fn from_name(name: &str) -> Option<Self> {
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

/// `listener.security.protocol.map`: listener name (upper case) → security protocol.
pub(crate) type SecurityProtocolMap = BTreeMap<String, SecurityProtocol>;

/// Kafka's default map: each protocol's name is a listener name for it.
pub(crate) fn default_security_protocol_map() -> SecurityProtocolMap {
    [
        SecurityProtocol::Plaintext,
        SecurityProtocol::Ssl,
        SecurityProtocol::SaslPlaintext,
        SecurityProtocol::SaslSsl,
    ]
    .into_iter()
    .map(|p| (p.name().to_string(), p))
    .collect()
}

/// Parses `listener.security.protocol.map` as Kafka's `Csv.parseCsvMap` and
/// `getSecurityProtocol` do: comma-separated `name:protocol` entries split at the last `:`,
/// names normalised to upper case, protocols by their exact name. The error says why.
pub(crate) fn parse_security_protocol_map(value: &str) -> Result<SecurityProtocolMap, String> {
    let mut map = SecurityProtocolMap::new();
    for entry in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, protocol) = entry.rsplit_once(':').ok_or_else(|| {
            format!("map entries must be of the form name:protocol, not `{entry}`")
        })?;
        let protocol = protocol.trim();
        let protocol = SecurityProtocol::from_name(protocol).ok_or_else(|| {
            format!(
                "Invalid security protocol `{protocol}` defined in listener.security.protocol.map"
            )
        })?;
        map.insert(name.trim().to_ascii_uppercase(), protocol);
    }
    Ok(map)
}

/// Gives each endpoint the protocol `map` names for its listener; the error is Kafka's for a
/// listener the map does not name.
pub(crate) fn resolve_security_protocols(
    endpoints: &mut [EndPoint],
    map: &SecurityProtocolMap,
) -> Result<(), String> {
    for endpoint in endpoints {
        endpoint.security_protocol = *map.get(&endpoint.listener_name).ok_or_else(|| {
            format!(
                "No security protocol defined for listener {}",
                endpoint.listener_name
            )
        })?;
    }
    Ok(())
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
/// `advertised.listeners`). The error says why, for the caller to name the key. Each endpoint's
/// protocol is the default map's, PLAINTEXT for a name that map lacks, until
/// [`resolve_security_protocols`] applies the configured map.
pub(crate) fn parse_listeners(value: &str, distinct_ports: bool) -> Result<Vec<EndPoint>, String> {
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
    let security_protocol =
        SecurityProtocol::from_name(&name).unwrap_or(SecurityProtocol::Plaintext);
    Ok(EndPoint {
        listener_name: name,
        security_protocol,
        host: (!host.is_empty()).then(|| host.to_string()),
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(name: &str, host: Option<&str>, port: u16) -> EndPoint {
        EndPoint {
            listener_name: name.into(),
            security_protocol: SecurityProtocol::from_name(name).unwrap(),
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
    fn the_security_protocol_map_names_each_listener_protocol() {
        let map =
            parse_security_protocol_map(" internal:PLAINTEXT, EXTERNAL : SASL_SSL ,").unwrap();
        assert_eq!(
            map,
            [
                ("EXTERNAL".to_string(), SecurityProtocol::SaslSsl),
                ("INTERNAL".to_string(), SecurityProtocol::Plaintext)
            ]
            .into_iter()
            .collect()
        );
        let mut endpoints = parse_listeners("INTERNAL://a:1,external://b:2", true).unwrap();
        resolve_security_protocols(&mut endpoints, &map).unwrap();
        assert_eq!(
            endpoints
                .iter()
                .map(|e| e.security_protocol)
                .collect::<Vec<_>>(),
            [SecurityProtocol::Plaintext, SecurityProtocol::SaslSsl]
        );
        let err = resolve_security_protocols(&mut endpoints, &default_security_protocol_map())
            .unwrap_err();
        assert_eq!(err, "No security protocol defined for listener INTERNAL");
        for (value, want) in [
            ("INTERNAL:TLS", "Invalid security protocol `TLS` defined in"),
            (
                "INTERNAL:plaintext",
                "Invalid security protocol `plaintext`",
            ),
            ("INTERNAL", "name:protocol"),
        ] {
            let err = parse_security_protocol_map(value).unwrap_err();
            assert!(err.contains(want), "{value}: {err}");
        }
    }
}
