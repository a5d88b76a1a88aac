//! What a reader of `/brokers/ids/<id>` sees beyond the [`BrokerRegistration`] a broker writes:
//! the registration's JSON version, its top-level `host`/`port` as written (`null`/-1 from
//! version 4 on when no listener is PLAINTEXT) and the version 5 `features` map
//! (`{"name":{"min_version":a,"max_version":b}}`), decoded as Kafka's `BrokerIdZNode.decode`
//! does for versions 1 to 5. Kept apart from `zk_data` so the writer's model stays as it is.

use std::collections::BTreeMap;

use serde_json::Value;

use super::zk_data::{BrokerRegistration, ZkDataError};

/// A feature's supported version range (`SupportedVersionRange`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureRange {
    pub min_version: i16,
    pub max_version: i16,
}

/// One decoded `/brokers/ids/<id>` payload, of any version Kafka writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerZNode {
    /// The JSON `version`, 1 to 5.
    pub version: i32,
    /// The top-level `host`: absent or `null` when the broker has no PLAINTEXT listener.
    pub host: Option<String>,
    /// The top-level `port`: -1 when absent (as Kafka writes it without PLAINTEXT).
    pub port: i32,
    pub registration: BrokerRegistration,
    /// Version 5's supported features; empty for older versions and ZooKeeper-mode brokers.
    pub features: BTreeMap<String, FeatureRange>,
}

impl BrokerZNode {
    pub fn decode(bytes: &[u8]) -> Result<Self, ZkDataError> {
        let registration = BrokerRegistration::decode(bytes)?;
        // `BrokerRegistration::decode` has checked the JSON is an object with a version.
        let m = match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(ZkDataError::Invalid("not a JSON object".into())),
            Err(e) => return Err(ZkDataError::Json(e.to_string())),
        };
        let version = m
            .get("version")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or(ZkDataError::Field("version"))?;
        let host = match m.get("host") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(ZkDataError::Field("host")),
        };
        let port = match m.get("port") {
            None => -1,
            Some(v) => v
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or(ZkDataError::Field("port"))?,
        };
        let features = match m.get("features") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(v) => decode_features(v)?,
        };
        Ok(BrokerZNode {
            version,
            host,
            port,
            registration,
            features,
        })
    }
}

fn decode_features(v: &Value) -> Result<BTreeMap<String, FeatureRange>, ZkDataError> {
    let bad = ZkDataError::Field("features");
    let mut out = BTreeMap::new();
    for (name, range) in v.as_object().ok_or(bad.clone())? {
        let range = range.as_object().ok_or(bad.clone())?;
        let get = |key: &str| {
            range
                .get(key)
                .and_then(Value::as_i64)
                .and_then(|v| i16::try_from(v).ok())
                .ok_or(ZkDataError::Field("features"))
        };
        out.insert(
            name.clone(),
            FeatureRange {
                min_version: get("min_version")?,
                max_version: get("max_version")?,
            },
        );
    }
    Ok(out)
}
