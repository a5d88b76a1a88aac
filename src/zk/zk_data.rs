//! Kafka's znode paths and JSON payloads, byte for byte as Kafka 3.9 (ZooKeeper mode, IBP 3.9)
//! writes them (`kafka.zk.ZkData`): compact JSON, keys in the iteration order of the Scala or
//! Java map Kafka encodes (see `json_order`), strings escaped as serde_json does (identical to
//! Jackson for printable text). Decoders accept any key order and ignore unknown keys, as
//! Kafka's do.

use std::collections::BTreeMap;

use serde_json::Value;
use uuid::Uuid;

use super::json_order::{
    java_properties_order, literal_capacity, scala_immutable_order, scala_mutable_order,
};
use crate::cluster::{BrokerId, TopicPartition};

pub use super::broker_znode::{BrokerZNode, FeatureRange};
pub use super::zk_paths::*;

/// A payload that is not what Kafka writes at that path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZkDataError {
    #[error("invalid JSON: {0}")]
    Json(String),
    #[error("missing or mistyped field {0:?}")]
    Field(&'static str),
    #[error("invalid value: {0}")]
    Invalid(String),
}

// ---- JSON writing helpers -------------------------------------------------------------------

fn js_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn js_ints(v: &[i32]) -> String {
    let items: Vec<String> = v.iter().map(i32::to_string).collect();
    format!("[{}]", items.join(","))
}

/// `{"k":v,...}` with the entries written in `order` (keys missing from `entries` skipped).
fn js_obj(entries: &[(&str, String)], order: &[&str]) -> String {
    let mut out = String::from("{");
    for key in order {
        if let Some((_, v)) = entries.iter().find(|(k, _)| k == key) {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&js_str(key));
            out.push(':');
            out.push_str(v);
        }
    }
    out.push('}');
    out
}

/// An object whose keys keep the given order (Scala `Map1`..`Map4`).
fn js_obj_in_order(entries: &[(&str, String)]) -> String {
    let order: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
    js_obj(entries, &order)
}

// ---- JSON reading helpers -------------------------------------------------------------------

fn parse(bytes: &[u8]) -> Result<serde_json::Map<String, Value>, ZkDataError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ZkDataError::Invalid("not a JSON object".into())),
        Err(e) => Err(ZkDataError::Json(e.to_string())),
    }
}

fn get_i64(m: &serde_json::Map<String, Value>, key: &'static str) -> Result<i64, ZkDataError> {
    m.get(key)
        .and_then(Value::as_i64)
        .ok_or(ZkDataError::Field(key))
}

fn get_i32(m: &serde_json::Map<String, Value>, key: &'static str) -> Result<i32, ZkDataError> {
    i32::try_from(get_i64(m, key)?).map_err(|_| ZkDataError::Field(key))
}

fn get_str<'a>(
    m: &'a serde_json::Map<String, Value>,
    key: &'static str,
) -> Result<&'a str, ZkDataError> {
    m.get(key)
        .and_then(Value::as_str)
        .ok_or(ZkDataError::Field(key))
}

/// A string holding a decimal integer (Kafka writes timestamps and producer ids that way).
fn get_str_i64(m: &serde_json::Map<String, Value>, key: &'static str) -> Result<i64, ZkDataError> {
    get_str(m, key)?
        .parse()
        .map_err(|_| ZkDataError::Field(key))
}

fn ints(v: &Value, key: &'static str) -> Result<Vec<i32>, ZkDataError> {
    v.as_array()
        .ok_or(ZkDataError::Field(key))?
        .iter()
        .map(|x| {
            x.as_i64()
                .and_then(|x| i32::try_from(x).ok())
                .ok_or(ZkDataError::Field(key))
        })
        .collect()
}

// ---- Kafka's Uuid text form ---------------------------------------------------------------

const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Kafka's `Uuid.toString`: the 16 bytes in URL-safe base64 without padding (22 characters).
/// A fresh random id for a topic or a cluster, as Kafka's `Uuid.randomUuid` draws it: never the
/// nil id or the metadata topic's (`0`/`1`), and never one whose text starts with `-`, which
/// command-line tools would read as an option (`--topic-id -x...`).
pub fn random_uuid() -> Uuid {
    loop {
        let id = Uuid::new_v4();
        // The text's first character is the top 6 bits in URL-safe base64, where 62 is `-`.
        if !id.is_nil() && id.as_u128() != 1 && id.as_bytes()[0] >> 2 != 62 {
            return id;
        }
    }
}

pub fn topic_id_to_string(id: Uuid) -> String {
    let bytes = id.as_bytes();
    let mut out = String::with_capacity(22);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(B64URL[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Parses Kafka's 22-character URL-safe base64 `Uuid` text.
pub fn topic_id_from_string(s: &str) -> Result<Uuid, ZkDataError> {
    let bad = || ZkDataError::Invalid(format!("bad topic id {s:?}"));
    if s.len() != 22 {
        return Err(bad());
    }
    let mut bits: u128 = 0;
    for (i, c) in s.bytes().enumerate() {
        let v = B64URL.iter().position(|&x| x == c).ok_or_else(bad)? as u128;
        if i == 21 {
            // The last character carries 2 bits; the other 4 must be zero.
            if v & 0xf != 0 {
                return Err(bad());
            }
            bits = (bits << 2) | (v >> 4);
        } else {
            bits = (bits << 6) | v;
        }
    }
    Ok(Uuid::from_u128(bits))
}

// ---- /cluster/id -------------------------------------------------------------------------

/// `/cluster/id`: `{"version":"1","id":"<cluster id>"}` (the version is a string here).
pub fn encode_cluster_id(id: &str) -> Vec<u8> {
    js_obj_in_order(&[("version", js_str("1")), ("id", js_str(id))]).into_bytes()
}

pub fn decode_cluster_id(bytes: &[u8]) -> Result<String, ZkDataError> {
    Ok(get_str(&parse(bytes)?, "id")?.to_string())
}

// ---- /brokers/ids/<id> -------------------------------------------------------------------

/// One advertised listener: `LISTENER://host:port` with its security protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndPoint {
    pub listener_name: String,
    pub host: String,
    pub port: i32,
    pub security_protocol: String,
}

impl EndPoint {
    /// `NAME://host:port`, an IPv6 host in brackets (Kafka's `connectionString`).
    pub fn connection_string(&self) -> String {
        if self.host.contains(':') {
            format!("{}://[{}]:{}", self.listener_name, self.host, self.port)
        } else {
            format!("{}://{}:{}", self.listener_name, self.host, self.port)
        }
    }
}

/// A broker's registration at `/brokers/ids/<id>` (an ephemeral node). Encoded as version 5
/// with empty `features` (ZooKeeper-mode brokers advertise none); `host`/`port` are the first
/// PLAINTEXT endpoint's, or `null`/-1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRegistration {
    pub endpoints: Vec<EndPoint>,
    pub rack: Option<String>,
    /// -1 when JMX is off.
    pub jmx_port: i32,
    /// Registration time, epoch ms (written as a string).
    pub timestamp_ms: i64,
}

impl BrokerRegistration {
    pub fn encode(&self) -> Vec<u8> {
        let plaintext = self
            .endpoints
            .iter()
            .find(|e| e.security_protocol == "PLAINTEXT");
        let endpoints: Vec<String> = self
            .endpoints
            .iter()
            .map(|e| js_str(&e.connection_string()))
            .collect();
        let names: Vec<&str> = self
            .endpoints
            .iter()
            .map(|e| e.listener_name.as_str())
            .collect();
        let protos: Vec<(&str, String)> = self
            .endpoints
            .iter()
            .map(|e| (e.listener_name.as_str(), js_str(&e.security_protocol)))
            .collect();
        let mut entries = vec![
            ("version", "5".to_string()),
            (
                "host",
                plaintext.map_or("null".to_string(), |e| js_str(&e.host)),
            ),
            ("port", plaintext.map_or(-1, |e| e.port).to_string()),
            ("endpoints", format!("[{}]", endpoints.join(","))),
            ("jmx_port", self.jmx_port.to_string()),
            ("timestamp", js_str(&self.timestamp_ms.to_string())),
        ];
        if let Some(rack) = &self.rack {
            entries.push(("rack", js_str(rack)));
        }
        entries.push((
            "listener_security_protocol_map",
            js_obj(&protos, &scala_immutable_order(&names)),
        ));
        entries.push(("features", "{}".to_string()));
        let keys: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
        js_obj(&entries, &scala_mutable_order(&keys, literal_capacity(6))).into_bytes()
    }

    /// Parses versions 1 to 5 like `BrokerIdZNode.decode` (requires `version` and `jmx_port`).
    pub fn decode(bytes: &[u8]) -> Result<Self, ZkDataError> {
        let m = parse(bytes)?;
        let version = get_i32(&m, "version")?;
        let jmx_port = get_i32(&m, "jmx_port")?;
        let timestamp_ms = get_str_i64(&m, "timestamp").unwrap_or(-1);
        let rack = m.get("rack").and_then(Value::as_str).map(str::to_string);
        let endpoints = if version < 1 {
            return Err(ZkDataError::Invalid(format!(
                "broker registration version {version}"
            )));
        } else if version == 1 {
            vec![EndPoint {
                listener_name: "PLAINTEXT".into(),
                host: get_str(&m, "host")?.to_string(),
                port: get_i32(&m, "port")?,
                security_protocol: "PLAINTEXT".into(),
            }]
        } else {
            let protos = m
                .get("listener_security_protocol_map")
                .and_then(Value::as_object);
            let list = m
                .get("endpoints")
                .and_then(Value::as_array)
                .ok_or(ZkDataError::Field("endpoints"))?;
            list.iter()
                .map(|v| {
                    let s = v.as_str().ok_or(ZkDataError::Field("endpoints"))?;
                    parse_endpoint(s, protos)
                })
                .collect::<Result<_, _>>()?
        };
        Ok(BrokerRegistration {
            endpoints,
            rack,
            jmx_port,
            timestamp_ms,
        })
    }
}

fn parse_endpoint(
    s: &str,
    protos: Option<&serde_json::Map<String, Value>>,
) -> Result<EndPoint, ZkDataError> {
    let bad = || ZkDataError::Invalid(format!("bad endpoint {s:?}"));
    let (name, rest) = s.split_once("://").ok_or_else(bad)?;
    let (host, port) = rest.rsplit_once(':').ok_or_else(bad)?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port: i32 = port.parse().map_err(|_| bad())?;
    let security_protocol = match protos {
        Some(p) => p
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(bad)?
            .to_string(),
        None => name.to_string(),
    };
    Ok(EndPoint {
        listener_name: name.to_string(),
        host: host.to_string(),
        port,
        security_protocol,
    })
}

// ---- /brokers/topics/<t> -----------------------------------------------------------------

/// A topic's replica assignment at `/brokers/topics/<t>` (version 3). Only partitions with a
/// reassignment in flight appear in `adding_replicas` / `removing_replicas`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicAssignment {
    pub topic_id: Option<Uuid>,
    pub partitions: BTreeMap<i32, Vec<i32>>,
    pub adding_replicas: BTreeMap<i32, Vec<i32>>,
    pub removing_replicas: BTreeMap<i32, Vec<i32>>,
}

/// A `mutable.Map[String, List]()` of partition → replicas, as Kafka orders it.
fn partition_map(map: &BTreeMap<i32, Vec<i32>>) -> String {
    let keys: Vec<String> = map.keys().map(i32::to_string).collect();
    let entries: Vec<(&str, String)> = keys
        .iter()
        .zip(map.values())
        .map(|(k, v)| (k.as_str(), js_ints(v)))
        .collect();
    let names: Vec<&str> = keys.iter().map(String::as_str).collect();
    js_obj(&entries, &scala_mutable_order(&names, 16))
}

fn decode_partition_map(
    v: Option<&Value>,
    key: &'static str,
) -> Result<BTreeMap<i32, Vec<i32>>, ZkDataError> {
    let mut out = BTreeMap::new();
    let Some(v) = v else { return Ok(out) };
    for (p, replicas) in v.as_object().ok_or(ZkDataError::Field(key))? {
        let p: i32 = p.parse().map_err(|_| ZkDataError::Field(key))?;
        out.insert(p, ints(replicas, key)?);
    }
    Ok(out)
}

impl TopicAssignment {
    pub fn encode(&self) -> Vec<u8> {
        let mut entries = vec![
            ("version", "3".to_string()),
            ("partitions", partition_map(&self.partitions)),
            ("adding_replicas", partition_map(&self.adding_replicas)),
            ("removing_replicas", partition_map(&self.removing_replicas)),
        ];
        if let Some(id) = self.topic_id {
            entries.push(("topic_id", js_str(&topic_id_to_string(id))));
        }
        let keys: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
        js_obj(&entries, &scala_mutable_order(&keys, literal_capacity(4))).into_bytes()
    }

    /// Parses versions 1 to 3.
    pub fn decode(bytes: &[u8]) -> Result<Self, ZkDataError> {
        let m = parse(bytes)?;
        let topic_id = match m.get("topic_id").and_then(Value::as_str) {
            Some(s) => Some(topic_id_from_string(s)?),
            None => None,
        };
        Ok(TopicAssignment {
            topic_id,
            partitions: decode_partition_map(m.get("partitions"), "partitions")?,
            adding_replicas: decode_partition_map(m.get("adding_replicas"), "adding_replicas")?,
            removing_replicas: decode_partition_map(
                m.get("removing_replicas"),
                "removing_replicas",
            )?,
        })
    }
}

// ---- /brokers/topics/<t>/partitions/<p>/state --------------------------------------------

/// Leader, epoch and ISR of a partition (`LeaderIsrAndControllerEpoch`). The node's zkVersion
/// (not in the JSON) is the partition epoch. `leader` -1 means no leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    pub leader: BrokerId,
    pub leader_epoch: i32,
    pub isr: Vec<BrokerId>,
    pub controller_epoch: i32,
    /// 0 = RECOVERED (not written), 1 = RECOVERING (KIP-704).
    pub leader_recovery_state: i8,
}

impl PartitionState {
    /// The ISR less the members `keep` refuses, in order; if none would remain, the ISR as it
    /// is, as Kafka's controller leaves an offline partition's ISR (its last members are the
    /// only clean leaders it can come back with).
    pub fn shrunk_isr(&self, keep: impl Fn(BrokerId) -> bool) -> Vec<BrokerId> {
        let isr: Vec<BrokerId> = self.isr.iter().copied().filter(|id| keep(*id)).collect();
        if isr.is_empty() {
            self.isr.clone()
        } else {
            isr
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut entries = vec![
            ("version", "1".to_string()),
            ("leader", self.leader.to_string()),
            ("leader_epoch", self.leader_epoch.to_string()),
            ("controller_epoch", self.controller_epoch.to_string()),
            ("isr", js_ints(&self.isr)),
        ];
        if self.leader_recovery_state != 0 {
            entries.push((
                "leader_recovery_state",
                self.leader_recovery_state.to_string(),
            ));
        }
        let keys: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
        js_obj(&entries, &scala_immutable_order(&keys)).into_bytes()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, ZkDataError> {
        let m = parse(bytes)?;
        let recovery = match m.get("leader_recovery_state") {
            Some(v) => v
                .as_i64()
                .and_then(|v| i8::try_from(v).ok())
                .ok_or(ZkDataError::Field("leader_recovery_state"))?,
            None => 0,
        };
        Ok(PartitionState {
            leader: get_i32(&m, "leader")?,
            leader_epoch: get_i32(&m, "leader_epoch")?,
            isr: ints(m.get("isr").ok_or(ZkDataError::Field("isr"))?, "isr")?,
            controller_epoch: get_i32(&m, "controller_epoch")?,
            leader_recovery_state: recovery,
        })
    }
}

// ---- /controller, /controller_epoch ------------------------------------------------------

/// `/controller` (ephemeral), version 2: `{"version":2,"brokerid":b,"timestamp":"ms","kraftControllerEpoch":-1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRegistration {
    pub broker_id: BrokerId,
    pub timestamp_ms: i64,
    /// -1 for a ZooKeeper-mode controller.
    pub kraft_controller_epoch: i32,
}

impl ControllerRegistration {
    pub fn encode(&self) -> Vec<u8> {
        js_obj_in_order(&[
            ("version", "2".to_string()),
            ("brokerid", self.broker_id.to_string()),
            ("timestamp", js_str(&self.timestamp_ms.to_string())),
            (
                "kraftControllerEpoch",
                self.kraft_controller_epoch.to_string(),
            ),
        ])
        .into_bytes()
    }

    /// Only `brokerid` is required, as in Kafka.
    pub fn decode(bytes: &[u8]) -> Result<Self, ZkDataError> {
        let m = parse(bytes)?;
        Ok(ControllerRegistration {
            broker_id: get_i32(&m, "brokerid")?,
            timestamp_ms: get_str_i64(&m, "timestamp").unwrap_or(-1),
            kraft_controller_epoch: get_i32(&m, "kraftControllerEpoch").unwrap_or(-1),
        })
    }
}

/// `/controller_epoch`: the epoch as ASCII decimal (not JSON).
pub fn encode_controller_epoch(epoch: i32) -> Vec<u8> {
    epoch.to_string().into_bytes()
}

pub fn decode_controller_epoch(bytes: &[u8]) -> Result<i32, ZkDataError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| ZkDataError::Invalid("controller epoch".into()))
}

// ---- /config/<type>/<name>, /config/changes ----------------------------------------------

/// `/config/<type>/<name>`: `{"version":1,"config":{...}}`, values as strings, the config map
/// in `java.util.Properties` order.
pub fn encode_entity_config(config: &BTreeMap<String, String>) -> Vec<u8> {
    let keys: Vec<&str> = config.keys().map(String::as_str).collect();
    let entries: Vec<(&str, String)> = config
        .iter()
        .map(|(k, v)| (k.as_str(), js_str(v)))
        .collect();
    let inner = js_obj(&entries, &java_properties_order(&keys));
    js_obj_in_order(&[("version", "1".to_string()), ("config", inner)]).into_bytes()
}

/// The overrides of an entity config; a missing `config` reads as none, like Kafka, and so
/// does a znode without data (a user's znode created as the parent of
/// `/config/users/<user>/clients/<client-id>`).
pub fn decode_entity_config(bytes: &[u8]) -> Result<BTreeMap<String, String>, ZkDataError> {
    if bytes.is_empty() {
        return Ok(BTreeMap::new());
    }
    let m = parse(bytes)?;
    let mut out = BTreeMap::new();
    if let Some(Value::Object(config)) = m.get("config") {
        for (k, v) in config {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.insert(k.clone(), v);
        }
    }
    Ok(out)
}

/// `/config/changes/config_change_N`: `{"version":2,"entity_path":"topics/<t>"}`.
pub fn encode_config_change(entity_path: &str) -> Vec<u8> {
    js_obj_in_order(&[
        ("version", "2".to_string()),
        ("entity_path", js_str(entity_path)),
    ])
    .into_bytes()
}

/// The entity path (`<type>/<name>`) a change notification names: version 2's `entity_path`,
/// or version 1's `entity_type` and `entity_name` (still read by Kafka 3.9's `ZkConfigManager`).
pub fn decode_config_change(bytes: &[u8]) -> Result<String, ZkDataError> {
    let m = parse(bytes)?;
    match get_i64(&m, "version")? {
        1 => Ok(format!(
            "{}/{}",
            get_str(&m, "entity_type")?,
            get_str(&m, "entity_name")?
        )),
        2 => Ok(get_str(&m, "entity_path")?.to_string()),
        v => Err(ZkDataError::Invalid(format!(
            "config change notification version {v}"
        ))),
    }
}

// ---- notifications, producer ids ---------------------------------------------------------

fn encode_partition_list(partitions: &[TopicPartition]) -> String {
    let items: Vec<String> = partitions
        .iter()
        .map(|tp| {
            js_obj_in_order(&[
                ("topic", js_str(&tp.topic)),
                ("partition", tp.partition.to_string()),
            ])
        })
        .collect();
    js_obj_in_order(&[
        ("version", "1".to_string()),
        ("partitions", format!("[{}]", items.join(","))),
    ])
}

/// `/isr_change_notification/isr_change_N`: `{"version":1,"partitions":[{"topic":..,"partition":..}]}`
/// (Kafka iterates a Set; the list is written in the given order).
pub fn encode_isr_change(partitions: &[TopicPartition]) -> Vec<u8> {
    encode_partition_list(partitions).into_bytes()
}

pub fn decode_isr_change(bytes: &[u8]) -> Result<Vec<TopicPartition>, ZkDataError> {
    let m = parse(bytes)?;
    let list = m
        .get("partitions")
        .and_then(Value::as_array)
        .ok_or(ZkDataError::Field("partitions"))?;
    list.iter()
        .map(|v| {
            let o = v.as_object().ok_or(ZkDataError::Field("partitions"))?;
            Ok(TopicPartition::new(
                get_str(o, "topic")?,
                get_i32(o, "partition")?,
            ))
        })
        .collect()
}

/// `/admin/preferred_replica_election` (written by admin tools that talk to ZooKeeper
/// directly, as `kafka-preferred-replica-election.sh --zookeeper` did): the same
/// `{"version":1,"partitions":[{"topic":..,"partition":..}]}` as an ISR change notification.
pub fn encode_preferred_replica_election(partitions: &[TopicPartition]) -> Vec<u8> {
    encode_partition_list(partitions).into_bytes()
}

pub fn decode_preferred_replica_election(bytes: &[u8]) -> Result<Vec<TopicPartition>, ZkDataError> {
    decode_isr_change(bytes)
}

/// `/admin/reassign_partitions` (Kafka's `ReassignPartitionsZNode`, the legacy way to start a
/// reassignment, written by tools that talk to ZooKeeper): each partition with its target
/// replicas, `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]}`, in
/// the given order. A partition named twice keeps its last entry when decoded, as Kafka's
/// `toMap` does.
pub fn encode_partition_reassignment(partitions: &[(TopicPartition, Vec<BrokerId>)]) -> Vec<u8> {
    let items: Vec<String> = partitions
        .iter()
        .map(|(tp, replicas)| {
            js_obj_in_order(&[
                ("topic", js_str(&tp.topic)),
                ("partition", tp.partition.to_string()),
                ("replicas", js_ints(replicas)),
            ])
        })
        .collect();
    js_obj_in_order(&[
        ("version", "1".to_string()),
        ("partitions", format!("[{}]", items.join(","))),
    ])
    .into_bytes()
}

pub fn decode_partition_reassignment(
    bytes: &[u8],
) -> Result<Vec<(TopicPartition, Vec<BrokerId>)>, ZkDataError> {
    let m = parse(bytes)?;
    let list = m
        .get("partitions")
        .and_then(Value::as_array)
        .ok_or(ZkDataError::Field("partitions"))?;
    let mut out: Vec<(TopicPartition, Vec<BrokerId>)> = Vec::with_capacity(list.len());
    for v in list {
        let o = v.as_object().ok_or(ZkDataError::Field("partitions"))?;
        let tp = TopicPartition::new(get_str(o, "topic")?, get_i32(o, "partition")?);
        let replicas = ints(
            o.get("replicas").ok_or(ZkDataError::Field("replicas"))?,
            "replicas",
        )?;
        out.retain(|(t, _)| *t != tp);
        out.push((tp, replicas));
    }
    Ok(out)
}

/// `/log_dir_event_notification/log_dir_event_N`: `{"version":1,"broker":b,"event":1}`.
pub fn encode_log_dir_event(broker: BrokerId) -> Vec<u8> {
    js_obj_in_order(&[
        ("version", "1".to_string()),
        ("broker", broker.to_string()),
        ("event", "1".to_string()),
    ])
    .into_bytes()
}

/// The broker a log dir event names (Kafka reads only `broker`).
pub fn decode_log_dir_event(bytes: &[u8]) -> Result<BrokerId, ZkDataError> {
    get_i32(&parse(bytes)?, "broker")
}

/// `/latest_producer_id_block`: a block of producer ids handed to a broker; start and end are
/// inclusive and written as strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerIdBlock {
    pub broker: BrokerId,
    pub block_start: i64,
    pub block_end: i64,
}

impl ProducerIdBlock {
    pub fn encode(&self) -> Vec<u8> {
        js_obj_in_order(&[
            ("version", "1".to_string()),
            ("broker", self.broker.to_string()),
            ("block_start", js_str(&self.block_start.to_string())),
            ("block_end", js_str(&self.block_end.to_string())),
        ])
        .into_bytes()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, ZkDataError> {
        let m = parse(bytes)?;
        Ok(ProducerIdBlock {
            broker: get_i32(&m, "broker")?,
            block_start: get_str_i64(&m, "block_start")?,
            block_end: get_str_i64(&m, "block_end")?,
        })
    }
}

#[cfg(test)]
#[path = "zk_data_tests.rs"]
mod tests;
