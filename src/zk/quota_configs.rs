//! Quota entity configs in ZooKeeper, as Kafka's `AdminZkClient` keeps them for the `users`,
//! `clients` and `ips` config types:
//!
//! | entity | znode |
//! |---|---|
//! | user | `/config/users/<user>` |
//! | user and client id | `/config/users/<user>/clients/<client-id>` |
//! | client id | `/config/clients/<client-id>` |
//! | IP | `/config/ips/<ip>` |
//!
//! each name sanitized (`sanitizer`), the default written `<default>`; each znode holds
//! `{"version":1,"config":{...}}` (a user's also holds its SCRAM credentials, which these
//! writes carry over untouched: callers change the whole config they fetched). Every change is
//! followed by a `/config/changes/config_change_N` naming `<type>/<full sanitized name>`
//! (`users/alice/clients/app`). An emptied config without children is deleted, with its
//! emptied parents for a user and client id (Kafka's `tryCleanQuotaNodes`).

use std::collections::BTreeMap;

use crate::cluster::client_quota::{ClientQuotaEntity, QuotaEntity, QuotaEntityName};

use super::client::{ZkClient, ZkError};
use super::kafka_zk_client::KafkaZkError;
use super::sanitizer::{desanitize, sanitize};
use super::user_configs::{USER_ENTITY_TYPE, create_config_change_notification, set_or_create};
use super::zk_data;

/// `ConfigType.CLIENT`.
pub(crate) const CLIENT_ENTITY_TYPE: &str = "clients";
/// `ConfigType.IP`.
pub(crate) const IP_ENTITY_TYPE: &str = "ips";
/// `ZooKeeperInternals.DEFAULT_STRING`: the default entity's znode name.
pub(crate) const DEFAULT_ENTITY: &str = "<default>";

/// Where an entity's config lives: its root config type and full sanitized name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntityConfigPath {
    pub(crate) root_type: &'static str,
    pub(crate) full_name: String,
}

impl EntityConfigPath {
    /// `/config/<root>/<full name>`.
    pub(crate) fn znode(&self) -> String {
        zk_data::config_entity_path(self.root_type, &self.full_name)
    }

    /// A change notification's `entity_path`.
    pub(crate) fn entity_path(&self) -> String {
        format!("{}/{}", self.root_type, self.full_name)
    }

    fn is_user_client_id(&self) -> bool {
        self.root_type == USER_ENTITY_TYPE && self.full_name.contains('/')
    }
}

fn sanitized(name: &QuotaEntityName) -> String {
    match name {
        QuotaEntityName::Default => DEFAULT_ENTITY.to_string(),
        QuotaEntityName::Named(n) => sanitize(n),
    }
}

fn desanitized(name: &str) -> Option<QuotaEntityName> {
    if name == DEFAULT_ENTITY {
        return Some(QuotaEntityName::Default);
    }
    desanitize(name).ok().map(QuotaEntityName::Named)
}

/// Where `entity`'s config is kept. `None` for an entity with neither user nor client id.
pub(crate) fn entity_config_path(entity: &QuotaEntity) -> Option<EntityConfigPath> {
    let (root_type, full_name) = match entity {
        QuotaEntity::Client(ClientQuotaEntity {
            user: Some(u),
            client_id: Some(c),
        }) => (
            USER_ENTITY_TYPE,
            format!("{}/{CLIENT_ENTITY_TYPE}/{}", sanitized(u), sanitized(c)),
        ),
        QuotaEntity::Client(ClientQuotaEntity {
            user: Some(u),
            client_id: None,
        }) => (USER_ENTITY_TYPE, sanitized(u)),
        QuotaEntity::Client(ClientQuotaEntity {
            user: None,
            client_id: Some(c),
        }) => (CLIENT_ENTITY_TYPE, sanitized(c)),
        QuotaEntity::Client(_) => return None,
        QuotaEntity::Ip(ip) => (IP_ENTITY_TYPE, sanitized(ip)),
    };
    Some(EntityConfigPath {
        root_type,
        full_name,
    })
}

/// The entity a config type and full sanitized name stand for (the reverse of
/// [`entity_config_path`]); `None` for a type that holds no quotas or a malformed name.
pub(crate) fn quota_entity_of(root_type: &str, full_name: &str) -> Option<QuotaEntity> {
    let parts: Vec<&str> = full_name.split('/').collect();
    match (root_type, parts.as_slice()) {
        (USER_ENTITY_TYPE, [u]) => Some(QuotaEntity::Client(ClientQuotaEntity {
            user: Some(desanitized(u)?),
            client_id: None,
        })),
        (USER_ENTITY_TYPE, [u, CLIENT_ENTITY_TYPE, c]) => {
            Some(QuotaEntity::Client(ClientQuotaEntity {
                user: Some(desanitized(u)?),
                client_id: Some(desanitized(c)?),
            }))
        }
        (CLIENT_ENTITY_TYPE, [c]) => Some(QuotaEntity::Client(ClientQuotaEntity {
            user: None,
            client_id: Some(desanitized(c)?),
        })),
        (IP_ENTITY_TYPE, [ip]) => Some(QuotaEntity::Ip(desanitized(ip)?)),
        _ => None,
    }
}

/// `AdminZkClient.fetchEntityConfig`: empty when the znode does not exist.
pub(crate) async fn fetch_entity_config(
    zk: &dyn ZkClient,
    path: &EntityConfigPath,
) -> Result<BTreeMap<String, String>, KafkaZkError> {
    let znode = path.znode();
    match zk.get_data(&znode, false).await {
        Ok((data, _)) => {
            zk_data::decode_entity_config(&data).map_err(|source| KafkaZkError::Malformed {
                path: znode.clone(),
                source,
            })
        }
        Err(ZkError::NoNode(_)) => Ok(BTreeMap::new()),
        Err(e) => Err(e.into()),
    }
}

/// The children of a znode, sorted; none when it does not exist.
async fn children(zk: &dyn ZkClient, path: &str) -> Result<Vec<String>, ZkError> {
    match zk.get_children(path, false).await {
        Ok((mut names, _)) => {
            names.sort();
            Ok(names)
        }
        Err(ZkError::NoNode(_)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The full sanitized names of every entity of `root_type` with a znode
/// (`getAllEntitiesWithConfig`), and for `users` also every `<user>/clients/<client-id>`
/// (`fetchAllChildEntityConfigs(USER, CLIENT)`).
pub(crate) async fn all_entity_names(
    zk: &dyn ZkClient,
    root_type: &str,
) -> Result<Vec<String>, ZkError> {
    let names = children(zk, &zk_data::config_entity_type_path(root_type)).await?;
    if root_type != USER_ENTITY_TYPE {
        return Ok(names);
    }
    let mut out = Vec::with_capacity(names.len());
    for user in names {
        let clients = format!("{user}/{CLIENT_ENTITY_TYPE}");
        let path = zk_data::config_entity_path(root_type, &clients);
        for client in children(zk, &path).await? {
            out.push(format!("{clients}/{client}"));
        }
        out.push(user);
    }
    Ok(out)
}

/// `AdminZkClient.changeEntityConfig` for a quota entity: `config` (the entity's whole config)
/// written, or, when empty and the znode has no children, the znode deleted (with its emptied
/// `clients` parent and user, for a user and client id); then the change notification.
pub(crate) async fn change_entity_config(
    zk: &dyn ZkClient,
    path: &EntityConfigPath,
    config: &BTreeMap<String, String>,
) -> Result<(), KafkaZkError> {
    let znode = path.znode();
    let cleaned = config.is_empty() && try_clean_quota_nodes(zk, path).await?;
    if !cleaned {
        set_or_create(zk, &znode, &zk_data::encode_entity_config(config)).await?;
    }
    create_config_change_notification(zk, &path.entity_path()).await
}

/// Kafka's `tryCleanQuotaNodes`: whether the entity's znode (missing or childless) was
/// deleted, with the parents it leaves empty.
async fn try_clean_quota_nodes(
    zk: &dyn ZkClient,
    path: &EntityConfigPath,
) -> Result<bool, KafkaZkError> {
    let znode = path.znode();
    if !children(zk, &znode).await?.is_empty() {
        return Ok(false);
    }
    let mut to_delete = znode;
    if path.is_user_client_id()
        && let Some((user, client)) = path
            .full_name
            .split_once('/')
            .and_then(|(u, rest)| Some((u, rest.rsplit_once('/')?.1)))
    {
        let clients_path =
            zk_data::config_entity_path(USER_ENTITY_TYPE, &format!("{user}/{CLIENT_ENTITY_TYPE}"));
        if children(zk, &clients_path).await? == [client] {
            to_delete = clients_path;
            let user_path = EntityConfigPath {
                root_type: USER_ENTITY_TYPE,
                full_name: user.to_string(),
            };
            let user_config = fetch_entity_config(zk, &user_path).await?;
            if user_config.is_empty()
                && children(zk, &user_path.znode()).await? == [CLIENT_ENTITY_TYPE]
            {
                to_delete = user_path.znode();
            }
        }
    }
    tracing::info!(path = to_delete, "deleting emptied quota config znode");
    delete_recursive(zk, &to_delete).await?;
    Ok(true)
}

/// `KafkaZkClient.deletePath`: the znode and everything below it; a missing one is fine.
async fn delete_recursive(zk: &dyn ZkClient, path: &str) -> Result<(), ZkError> {
    let mut stack = vec![(path.to_string(), false)];
    while let Some((node, expanded)) = stack.pop() {
        if !expanded {
            let kids = children(zk, &node).await?;
            stack.push((node.clone(), true));
            for k in kids {
                stack.push((format!("{node}/{k}"), false));
            }
        } else {
            match zk.delete(&node, -1).await {
                Ok(()) | Err(ZkError::NoNode(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "quota_configs_tests.rs"]
mod tests;
