//! User entity configs in ZooKeeper, as Kafka's `AdminZkClient` reads and writes them for
//! `ConfigType.USER`: `/config/users/<sanitized user>` holds `{"version":1,"config":{...}}`
//! (SCRAM credentials under their mechanism's name, quotas under theirs), and every change is
//! announced by a sequential `/config/changes/config_change_<n>` naming `users/<sanitized
//! user>`. User names are sanitized with [`sanitizer::sanitize`](super::sanitizer::sanitize);
//! these functions take the sanitized name, as Kafka's do.

use std::collections::BTreeMap;

use super::client::{CreateMode, ZkClient, ZkError};
use super::kafka_zk_client::KafkaZkError;
use super::recipes;
use super::zk_data;

/// `ConfigType.USER`: the entity type of users under `/config`.
pub(crate) const USER_ENTITY_TYPE: &str = "users";

/// The config of one user (`AdminZkClient.fetchEntityConfig(USER, sanitized)`): empty when the
/// znode does not exist.
pub(crate) async fn fetch_user_config(
    zk: &dyn ZkClient,
    sanitized_user: &str,
) -> Result<BTreeMap<String, String>, KafkaZkError> {
    let path = zk_data::config_entity_path(USER_ENTITY_TYPE, sanitized_user);
    match zk.get_data(&path, false).await {
        Ok((data, _)) => {
            zk_data::decode_entity_config(&data).map_err(|source| KafkaZkError::Malformed {
                path: path.clone(),
                source,
            })
        }
        Err(ZkError::NoNode(_)) => Ok(BTreeMap::new()),
        Err(e) => Err(e.into()),
    }
}

/// The sanitized names of every user with a znode under `/config/users`
/// (`KafkaZkClient.getAllEntitiesWithConfig(USER)`), sorted; none when the path is missing.
pub(crate) async fn all_sanitized_users(zk: &dyn ZkClient) -> Result<Vec<String>, KafkaZkError> {
    let path = zk_data::config_entity_type_path(USER_ENTITY_TYPE);
    match zk.get_children(&path, false).await {
        Ok((mut children, _)) => {
            children.sort();
            Ok(children)
        }
        Err(ZkError::NoNode(_)) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Every user's config (`AdminZkClient.fetchAllEntityConfigs(USER)`), by sanitized name. A user
/// znode deleted between the listing and the read reads as empty, as in Kafka.
pub(crate) async fn fetch_all_user_configs(
    zk: &dyn ZkClient,
) -> Result<BTreeMap<String, BTreeMap<String, String>>, KafkaZkError> {
    let mut out = BTreeMap::new();
    for user in all_sanitized_users(zk).await? {
        let config = fetch_user_config(zk, &user).await?;
        out.insert(user, config);
    }
    Ok(out)
}

/// Replaces a user's config, as `AdminZkClient.changeUserOrUserClientIdConfig` does for a user
/// entity: the new `config` is written whole (set, or created with its parents), except that an
/// empty config of a znode without children deletes the znode (Kafka's `tryCleanQuotaNodes`);
/// then a change notification `users/<sanitized user>` is created either way, so every broker
/// rereads the user.
///
/// Callers merge first: `config` is the user's whole config, quota keys included.
pub(crate) async fn change_user_config(
    zk: &dyn ZkClient,
    sanitized_user: &str,
    config: &BTreeMap<String, String>,
) -> Result<(), KafkaZkError> {
    let path = zk_data::config_entity_path(USER_ENTITY_TYPE, sanitized_user);
    let mut update = true;
    if config.is_empty() {
        match zk.get_children(&path, false).await {
            Ok((children, _)) if children.is_empty() => match zk.delete(&path, -1).await {
                Ok(()) | Err(ZkError::NoNode(_)) => update = false,
                Err(e) => return Err(e.into()),
            },
            Ok(_) => {}
            // Kafka's getChildren reads a missing node as childless, and deleting what is
            // not there succeeds: nothing is written.
            Err(ZkError::NoNode(_)) => update = false,
            Err(e) => return Err(e.into()),
        }
    }
    if update {
        set_or_create(zk, &path, &zk_data::encode_entity_config(config)).await?;
    }
    create_config_change_notification(zk, &format!("{USER_ENTITY_TYPE}/{sanitized_user}")).await
}

/// `KafkaZkClient.setOrCreateEntityConfigs`: set any version; on NONODE create it with its
/// parents; if another writer created it in between, set again.
pub(crate) async fn set_or_create(
    zk: &dyn ZkClient,
    path: &str,
    data: &[u8],
) -> Result<(), KafkaZkError> {
    match zk.set_data(path, data, -1).await {
        Ok(_) => Ok(()),
        Err(ZkError::NoNode(_)) => match recipes::create_recursive(zk, path, data).await {
            Ok(()) => Ok(()),
            Err(ZkError::NodeExists(_)) => zk
                .set_data(path, data, -1)
                .await
                .map(|_| ())
                .map_err(Into::into),
            Err(e) => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
}

/// `KafkaZkClient.createConfigChangeNotification`: makes sure `/config/changes` exists, then
/// creates the next `config_change_<n>` naming `entity_path` (`<type>/<sanitized name>`).
pub(crate) async fn create_config_change_notification(
    zk: &dyn ZkClient,
    entity_path: &str,
) -> Result<(), KafkaZkError> {
    match recipes::create_recursive(zk, zk_data::CONFIG_CHANGES_PATH, b"").await {
        Ok(()) | Err(ZkError::NodeExists(_)) => {}
        Err(e) => return Err(e.into()),
    }
    zk.create(
        zk_data::CONFIG_CHANGE_PREFIX,
        &zk_data::encode_config_change(entity_path),
        CreateMode::PersistentSequential,
    )
    .await?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::zk::EmbeddedStore;

    fn config(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Every config change notification's JSON, in sequence order (the quota configs' tests
    /// read them too).
    pub(crate) async fn changes(zk: &dyn ZkClient) -> Vec<String> {
        let (mut names, _) = zk
            .get_children(zk_data::CONFIG_CHANGES_PATH, false)
            .await
            .unwrap();
        names.sort();
        let mut out = Vec::new();
        for name in names {
            let (data, _) = zk
                .get_data(&format!("{}/{name}", zk_data::CONFIG_CHANGES_PATH), false)
                .await
                .unwrap();
            out.push(String::from_utf8(data).unwrap());
        }
        out
    }

    #[tokio::test]
    async fn change_writes_kafkas_znode_and_a_notification() {
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        assert!(
            fetch_user_config(zk.as_ref(), "alice")
                .await
                .unwrap()
                .is_empty()
        );
        assert!(all_sanitized_users(zk.as_ref()).await.unwrap().is_empty());

        let c = config(&[
            (
                "SCRAM-SHA-512",
                "salt=c2FsdA==,stored_key=AA==,server_key=AA==,iterations=4096",
            ),
            ("producer_byte_rate", "1024"),
        ]);
        change_user_config(zk.as_ref(), "User%3Aalice", &c)
            .await
            .unwrap();
        let (data, _) = zk
            .get_data("/config/users/User%3Aalice", false)
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8(data).unwrap(),
            r#"{"version":1,"config":{"SCRAM-SHA-512":"salt=c2FsdA==,stored_key=AA==,server_key=AA==,iterations=4096","producer_byte_rate":"1024"}}"#
        );
        assert_eq!(
            changes(zk.as_ref()).await,
            [r#"{"version":2,"entity_path":"users/User%3Aalice"}"#]
        );
        assert_eq!(
            fetch_user_config(zk.as_ref(), "User%3Aalice")
                .await
                .unwrap(),
            c
        );
        assert_eq!(
            fetch_all_user_configs(zk.as_ref()).await.unwrap(),
            BTreeMap::from([("User%3Aalice".to_string(), c)])
        );
    }

    #[tokio::test]
    async fn an_empty_config_removes_a_childless_znode_but_keeps_one_with_clients() {
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        let c = config(&[("SCRAM-SHA-256", "x")]);
        change_user_config(zk.as_ref(), "bob", &c).await.unwrap();
        change_user_config(zk.as_ref(), "bob", &BTreeMap::new())
            .await
            .unwrap();
        assert!(
            zk.exists("/config/users/bob", false)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(changes(zk.as_ref()).await.len(), 2);

        change_user_config(zk.as_ref(), "carol", &c).await.unwrap();
        recipes::create_recursive(zk.as_ref(), "/config/users/carol/clients/app", b"{}")
            .await
            .unwrap();
        change_user_config(zk.as_ref(), "carol", &BTreeMap::new())
            .await
            .unwrap();
        let (data, _) = zk.get_data("/config/users/carol", false).await.unwrap();
        assert_eq!(data, br#"{"version":1,"config":{}}"#);
        // A user that never had a znode: nothing is written, but the change is announced.
        change_user_config(zk.as_ref(), "dave", &BTreeMap::new())
            .await
            .unwrap();
        assert!(
            zk.exists("/config/users/dave", false)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(changes(zk.as_ref()).await.len(), 5);
    }

    #[tokio::test]
    async fn a_malformed_znode_is_named() {
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        recipes::create_recursive(zk.as_ref(), "/config/users/eve", b"not json")
            .await
            .unwrap();
        let err = fetch_user_config(zk.as_ref(), "eve").await.unwrap_err();
        assert!(err.to_string().contains("/config/users/eve"), "{err}");
    }
}
