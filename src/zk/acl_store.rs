//! ACLs in ZooKeeper exactly as Kafka 3.9's `ZkAclStore`, `ResourceZNode`, `ZkAclChangeStore`
//! and `KafkaZkClient`'s ACL methods keep them:
//!
//! - literal patterns under `/kafka-acl/<ResourceType>/<name>`, prefixed ones under
//!   `/kafka-acl-extended/prefixed/<ResourceType>/<name>` (`ResourceType` in Pascal case,
//!   `Topic`, `TransactionalId`);
//! - each holding `{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*",
//!   "operation":"Write"}],"version":1}` (Jackson over Java `HashMap`s: that key order);
//! - change notifications, sequential `acl_changes_<n>`: under `/kafka-acl-changes` the text
//!   `<RESOURCE_TYPE>:<name>` (`Topic` is written `TOPIC`, the Java enum's `toString`; read in
//!   any case), under `/kafka-acl-extended-changes` `{"version":1,"resourceType":"TOPIC",
//!   "name":"foo","patternType":"PREFIXED"}`.
//!
//! Updates are conditional on the znode's zkVersion: a set or delete at a stale version, or a
//! create of an existing znode, reports failure for the caller to re-read and retry.
//!
//! This module speaks strings (resource and pattern type names as stored); the ACL model is in
//! `security::acl`, which `zk` may not name.

use serde_json::Value;

use super::client::{CreateMode, ZkClient, ZkError};
use super::recipes::create_recursive;
use super::zk_data::ZkDataError;

/// Literal patterns' root.
pub(crate) const ACL_PATH: &str = "/kafka-acl";
/// Prefixed patterns' root (`ExtendedAclStore(PREFIXED)`: the pattern type in lower case).
pub(crate) const PREFIXED_ACL_PATH: &str = "/kafka-acl-extended/prefixed";
/// Literal patterns' change notifications.
pub(crate) const ACL_CHANGES_PATH: &str = "/kafka-acl-changes";
/// Other patterns' change notifications.
pub(crate) const EXTENDED_ACL_CHANGES_PATH: &str = "/kafka-acl-extended-changes";
/// The name every change notification has before its sequence number.
pub(crate) const ACL_CHANGE_PREFIX: &str = "acl_changes_";
/// The zkVersion of a znode that does not exist (`ZkVersion.UnknownVersion`).
pub(crate) const UNKNOWN_VERSION: i32 = -2;

/// The resource type names `createAclPaths` makes a child for in each store
/// (`AclEntry.RESOURCE_TYPES`).
pub(crate) const RESOURCE_TYPE_NAMES: [&str; 6] = [
    "Topic",
    "Group",
    "Cluster",
    "TransactionalId",
    "DelegationToken",
    "User",
];

/// One of the two stores: where a pattern type's ACLs and change notifications live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AclStore {
    Literal,
    Prefixed,
}

impl AclStore {
    pub(crate) const ALL: [AclStore; 2] = [AclStore::Literal, AclStore::Prefixed];

    pub(crate) fn acl_path(self) -> &'static str {
        match self {
            AclStore::Literal => ACL_PATH,
            AclStore::Prefixed => PREFIXED_ACL_PATH,
        }
    }

    pub(crate) fn change_path(self) -> &'static str {
        match self {
            AclStore::Literal => ACL_CHANGES_PATH,
            AclStore::Prefixed => EXTENDED_ACL_CHANGES_PATH,
        }
    }

    /// `/kafka-acl/<ResourceType>`.
    pub(crate) fn type_path(self, resource_type: &str) -> String {
        format!("{}/{resource_type}", self.acl_path())
    }

    /// `/kafka-acl/<ResourceType>/<name>`.
    pub(crate) fn resource_path(self, resource_type: &str, name: &str) -> String {
        format!("{}/{resource_type}/{name}", self.acl_path())
    }
}

/// One stored ACL entry, its fields as the JSON holds them (`AclEntry.toMap`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct AclEntryJson {
    /// `User:alice`.
    pub principal: String,
    /// `Allow` or `Deny`.
    pub permission_type: String,
    /// `Read`, `ClusterAction`, ...
    pub operation: String,
    pub host: String,
}

fn js_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A resource znode's payload (`ResourceZNode.encode`), entries in the order given.
pub(crate) fn encode_acls(entries: &[AclEntryJson]) -> Vec<u8> {
    let items: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{{\"principal\":{},\"permissionType\":{},\"host\":{},\"operation\":{}}}",
                js_str(&e.principal),
                js_str(&e.permission_type),
                js_str(&e.host),
                js_str(&e.operation)
            )
        })
        .collect();
    format!("{{\"acls\":[{}],\"version\":1}}", items.join(",")).into_bytes()
}

/// A resource znode's entries (`AclEntry.fromBytes`): empty data is none; version must be 1.
pub(crate) fn decode_acls(bytes: &[u8]) -> Result<Vec<AclEntryJson>, ZkDataError> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let v: Value = serde_json::from_slice(bytes).map_err(|e| ZkDataError::Json(e.to_string()))?;
    if v.is_null() {
        return Ok(Vec::new());
    }
    let m = v
        .as_object()
        .ok_or_else(|| ZkDataError::Invalid("not a JSON object".into()))?;
    if m.get("version").and_then(Value::as_i64) != Some(1) {
        return Err(ZkDataError::Field("version"));
    }
    let acls = m
        .get("acls")
        .and_then(Value::as_array)
        .ok_or(ZkDataError::Field("acls"))?;
    let field = |item: &serde_json::Map<String, Value>, key: &'static str| {
        item.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(ZkDataError::Field(key))
    };
    acls.iter()
        .map(|item| {
            let item = item.as_object().ok_or(ZkDataError::Field("acls"))?;
            Ok(AclEntryJson {
                principal: field(item, "principal")?,
                permission_type: field(item, "permissionType")?,
                operation: field(item, "operation")?,
                host: field(item, "host")?,
            })
        })
        .collect()
}

/// A change notification's payload for a pattern of `store`. `java_resource_type` and
/// `java_pattern_type` are the Java enum names (`TOPIC`, `PREFIXED`).
pub(crate) fn encode_change(
    store: AclStore,
    java_resource_type: &str,
    name: &str,
    java_pattern_type: &str,
) -> Vec<u8> {
    match store {
        AclStore::Literal => format!("{java_resource_type}:{name}").into_bytes(),
        AclStore::Prefixed => format!(
            "{{\"version\":1,\"resourceType\":{},\"name\":{},\"patternType\":{}}}",
            js_str(java_resource_type),
            js_str(name),
            js_str(java_pattern_type)
        )
        .into_bytes(),
    }
}

/// A change notification's (resource type, name, pattern type) as written: the literal
/// store's `type:name` (pattern type `LITERAL`), or the extended store's JSON (version ≤ 1).
pub(crate) fn decode_change(
    store: AclStore,
    bytes: &[u8],
) -> Result<(String, String, String), ZkDataError> {
    match store {
        AclStore::Literal => {
            let s =
                std::str::from_utf8(bytes).map_err(|_| ZkDataError::Invalid("not UTF-8".into()))?;
            let (t, n) = s.split_once(':').ok_or_else(|| {
                ZkDataError::Invalid(format!(
                    "expected a string in format ResourceType:ResourceName but got {s}"
                ))
            })?;
            Ok((t.to_string(), n.to_string(), "LITERAL".to_string()))
        }
        AclStore::Prefixed => {
            let v: Value =
                serde_json::from_slice(bytes).map_err(|e| ZkDataError::Json(e.to_string()))?;
            let version = v.get("version").and_then(Value::as_i64);
            if version.is_none_or(|v| v > 1) {
                return Err(ZkDataError::Field("version"));
            }
            let field = |key: &'static str| {
                v.get(key)
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or(ZkDataError::Field(key))
            };
            Ok((
                field("resourceType")?,
                field("name")?,
                field("patternType")?,
            ))
        }
    }
}

/// `createAclPaths`: each store's root with a child per resource type, and both change paths.
pub(crate) async fn create_acl_paths(zk: &dyn ZkClient) -> Result<(), ZkError> {
    let ok = |r: Result<(), ZkError>| match r {
        Ok(()) | Err(ZkError::NodeExists(_)) => Ok(()),
        Err(e) => Err(e),
    };
    for store in AclStore::ALL {
        ok(create_recursive(zk, store.acl_path(), b"").await)?;
        for t in RESOURCE_TYPE_NAMES {
            ok(create_recursive(zk, &store.type_path(t), b"").await)?;
        }
        ok(create_recursive(zk, store.change_path(), b"").await)?;
    }
    Ok(())
}

/// `getResourceTypes`: the type names a store has children for (none without the store).
pub(crate) async fn get_resource_types(
    zk: &dyn ZkClient,
    store: AclStore,
) -> Result<Vec<String>, ZkError> {
    children(zk, store.acl_path()).await
}

/// `getResourceNames`: the names a store holds ACLs for under one type.
pub(crate) async fn get_resource_names(
    zk: &dyn ZkClient,
    store: AclStore,
    resource_type: &str,
) -> Result<Vec<String>, ZkError> {
    children(zk, &store.type_path(resource_type)).await
}

async fn children(zk: &dyn ZkClient, path: &str) -> Result<Vec<String>, ZkError> {
    match zk.get_children(path, false).await {
        Ok((names, _)) => Ok(names),
        Err(ZkError::NoNode(_)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// `getVersionedAclsForResource`: the znode's raw data and version, or `None` without one.
pub(crate) async fn get_versioned_acls(
    zk: &dyn ZkClient,
    store: AclStore,
    resource_type: &str,
    name: &str,
) -> Result<Option<(Vec<u8>, i32)>, ZkError> {
    match zk
        .get_data(&store.resource_path(resource_type, name), false)
        .await
    {
        Ok((data, stat)) => Ok(Some((data, stat.version))),
        Err(ZkError::NoNode(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `conditionalSetAclsForResource`: `Some(new version)`, or `None` when the znode is gone or
/// at another version.
pub(crate) async fn conditional_set_acls(
    zk: &dyn ZkClient,
    store: AclStore,
    resource_type: &str,
    name: &str,
    data: &[u8],
    expected_version: i32,
) -> Result<Option<i32>, ZkError> {
    let path = store.resource_path(resource_type, name);
    match zk.set_data(&path, data, expected_version).await {
        Ok(stat) => Ok(Some(stat.version)),
        Err(ZkError::NoNode(_) | ZkError::BadVersion(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `createAclsForResourceIfNotExists`: `Some(0)`, or `None` when it exists already. The
/// type's parent is created first when missing (a store another tool pruned).
pub(crate) async fn create_acls_if_not_exists(
    zk: &dyn ZkClient,
    store: AclStore,
    resource_type: &str,
    name: &str,
    data: &[u8],
) -> Result<Option<i32>, ZkError> {
    let path = store.resource_path(resource_type, name);
    let mut attempt = zk.create(&path, data, CreateMode::Persistent).await;
    if let Err(ZkError::NoNode(_)) = attempt {
        match create_recursive(zk, &store.type_path(resource_type), b"").await {
            Ok(()) | Err(ZkError::NodeExists(_)) => {}
            Err(e) => return Err(e),
        }
        attempt = zk.create(&path, data, CreateMode::Persistent).await;
    }
    match attempt {
        Ok(_) => Ok(Some(0)),
        Err(ZkError::NodeExists(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `conditionalDelete`: true when deleted or already gone, false at another version.
pub(crate) async fn conditional_delete(
    zk: &dyn ZkClient,
    store: AclStore,
    resource_type: &str,
    name: &str,
    expected_version: i32,
) -> Result<bool, ZkError> {
    let path = store.resource_path(resource_type, name);
    // ZooKeeper answers a delete of a missing node NONODE whatever the version; an unknown
    // version (-2) would be refused by the embedded store's argument check first.
    let version = if expected_version < -1 {
        -1
    } else {
        expected_version
    };
    if expected_version == UNKNOWN_VERSION && zk.exists(&path, false).await?.is_some() {
        return Ok(false);
    }
    match zk.delete(&path, version).await {
        Ok(()) | Err(ZkError::NoNode(_)) => Ok(true),
        Err(ZkError::BadVersion(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// `createAclChangeNotification`: a sequential `acl_changes_` znode with `data`.
pub(crate) async fn create_change_notification(
    zk: &dyn ZkClient,
    store: AclStore,
    data: &[u8],
) -> Result<String, ZkError> {
    let path = format!("{}/{ACL_CHANGE_PREFIX}", store.change_path());
    let mut attempt = zk
        .create(&path, data, CreateMode::PersistentSequential)
        .await;
    if let Err(ZkError::NoNode(_)) = attempt {
        match create_recursive(zk, store.change_path(), b"").await {
            Ok(()) | Err(ZkError::NodeExists(_)) => {}
            Err(e) => return Err(e),
        }
        attempt = zk
            .create(&path, data, CreateMode::PersistentSequential)
            .await;
    }
    attempt.map(|(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::EmbeddedStore;

    fn entry(principal: &str, op: &str) -> AclEntryJson {
        AclEntryJson {
            principal: principal.into(),
            permission_type: "Allow".into(),
            operation: op.into(),
            host: "*".into(),
        }
    }

    #[test]
    fn payloads_are_kafkas() {
        let data = encode_acls(&[entry("User:alice", "Write")]);
        assert_eq!(
            std::str::from_utf8(&data).unwrap(),
            r#"{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Write"}],"version":1}"#
        );
        assert_eq!(
            decode_acls(&data).unwrap(),
            vec![entry("User:alice", "Write")]
        );
        // Any key order, as Kafka reads it.
        let other = br#"{"version":1,"acls":[{"host":"*","operation":"Write","permissionType":"Allow","principal":"User:alice"}]}"#;
        assert_eq!(
            decode_acls(other).unwrap(),
            vec![entry("User:alice", "Write")]
        );
        assert!(decode_acls(br#"{"version":2,"acls":[]}"#).is_err());
        assert!(decode_acls(b"").unwrap().is_empty());
        assert_eq!(
            encode_change(AclStore::Literal, "TOPIC", "foo", "LITERAL"),
            b"TOPIC:foo"
        );
        let ext = encode_change(AclStore::Prefixed, "TOPIC", "foo", "PREFIXED");
        assert_eq!(
            std::str::from_utf8(&ext).unwrap(),
            r#"{"version":1,"resourceType":"TOPIC","name":"foo","patternType":"PREFIXED"}"#
        );
        assert_eq!(
            decode_change(AclStore::Prefixed, &ext).unwrap(),
            ("TOPIC".into(), "foo".into(), "PREFIXED".into())
        );
        assert_eq!(
            decode_change(AclStore::Literal, b"Topic:a:b").unwrap(),
            ("Topic".into(), "a:b".into(), "LITERAL".into())
        );
        assert!(decode_change(AclStore::Literal, b"nocolon").is_err());
        assert_eq!(
            crate::zk::zk_node_change_notification_listener::change_number(
                ACL_CHANGE_PREFIX,
                "acl_changes_0000000042"
            ),
            Some(42)
        );
    }

    #[tokio::test]
    async fn updates_are_conditional_on_the_version() {
        let store = EmbeddedStore::in_memory();
        let session = store.session();
        let zk: &dyn ZkClient = &session;
        create_acl_paths(zk).await.unwrap();
        assert!(
            zk.exists("/kafka-acl-extended/prefixed/TransactionalId", false)
                .await
                .unwrap()
                .is_some()
        );
        let data = encode_acls(&[entry("User:a", "Read")]);
        assert_eq!(
            get_versioned_acls(zk, AclStore::Literal, "Topic", "t")
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            create_acls_if_not_exists(zk, AclStore::Literal, "Topic", "t", &data)
                .await
                .unwrap(),
            Some(0)
        );
        assert_eq!(
            create_acls_if_not_exists(zk, AclStore::Literal, "Topic", "t", &data)
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            conditional_set_acls(zk, AclStore::Literal, "Topic", "t", &data, 0)
                .await
                .unwrap(),
            Some(1)
        );
        assert_eq!(
            conditional_set_acls(zk, AclStore::Literal, "Topic", "t", &data, 0)
                .await
                .unwrap(),
            None
        );
        assert!(
            !conditional_delete(zk, AclStore::Literal, "Topic", "t", 0)
                .await
                .unwrap()
        );
        assert!(
            !conditional_delete(zk, AclStore::Literal, "Topic", "t", UNKNOWN_VERSION)
                .await
                .unwrap()
        );
        assert!(
            conditional_delete(zk, AclStore::Literal, "Topic", "t", 1)
                .await
                .unwrap()
        );
        assert!(
            conditional_delete(zk, AclStore::Literal, "Topic", "t", UNKNOWN_VERSION)
                .await
                .unwrap()
        );
        let path = create_change_notification(zk, AclStore::Prefixed, b"x")
            .await
            .unwrap();
        assert_eq!(path, "/kafka-acl-extended-changes/acl_changes_0000000000");
        assert_eq!(
            get_resource_types(zk, AclStore::Literal)
                .await
                .unwrap()
                .len(),
            6
        );
    }
}
