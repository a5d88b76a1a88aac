//! Kafka 3.9's ZooKeeper-mode `kafka.security.authorizer.AclAuthorizer` on the broker: every
//! ACL loaded from ZooKeeper (or the embedded store) into a cache at startup, the decisions of
//! `security::acl` over it, and `createAcls`/`deleteAcls`/`acls` writing and reading the store
//! in Kafka's layout (`zk::acl_store`).
//!
//! Updates of one resource re-apply the change to the znode's current ACLs at its zkVersion:
//! a set or delete at a stale version (another broker or `kafka-acls` wrote meanwhile) re-reads
//! the znode and tries again, at most 10 times with 100-150 ms pauses, as Kafka's
//! `updateResourceAcls`. A change that altered the ACLs writes a change notification, which
//! every broker's listener (here too) sees through its child watch and applies by re-reading
//! the named resource. The listener also purges notifications older than 15 minutes, and after
//! a ZooKeeper session expiry reloads every ACL (notifications may have been purged meanwhile).
//!
//! Lock order: `update` (a tokio mutex, Kafka's `lock`: one update or notification at a time)
//! before `cache` (a std lock, never held across an await).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::sync::{read, write};
use crate::protocol::errors::ErrorCode;
use crate::security::acl::{
    AccessControlEntry, AclBinding, AclBindingFilter, AclCache, AclOperation, AclPermissionType,
    AuthorizerSettings, PatternType, ResourcePattern, ResourceType, UNKNOWN_VERSION, VersionedAcls,
};
use crate::zk::acl_store::{self, ACL_CHANGE_PREFIX, AclEntryJson, AclStore};
use crate::zk::watch_dispatcher::WatchDispatcher;
use crate::zk::zk_node_change_notification_listener::{
    NotificationFuture, NotificationHandler, ZkNodeChangeNotificationListener,
};
use crate::zk::{ZkClient, ZkError};

/// `maxUpdateRetries`.
const MAX_UPDATE_RETRIES: u32 = 10;

/// What an ACL update failed with.
#[derive(Debug, thiserror::Error)]
pub enum AclError {
    #[error("acl store: {0}")]
    Zk(#[from] ZkError),
    #[error("failed to update ACLs for {resource} after trying a maximum of {retries} times")]
    TooManyRetries { resource: String, retries: u32 },
    #[error("unreadable ACLs at {path}: {reason}")]
    Unreadable { path: String, reason: String },
}

/// The broker's authorizer.
pub struct AclAuthorizer {
    zk: Arc<dyn ZkClient>,
    settings: AuthorizerSettings,
    cache: RwLock<AclCache>,
    update: tokio::sync::Mutex<()>,
    /// The change listeners, one per store (Kafka's `aclChangeListeners`), once started.
    listeners: std::sync::OnceLock<Vec<ZkNodeChangeNotificationListener>>,
}

impl std::fmt::Debug for AclAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AclAuthorizer")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// `InetAddress.getHostAddress` of a client address, the host ACLs name: dotted IPv4 (also
/// for an IPv4-mapped IPv6 address, which Java turns into an `Inet4Address`), IPv6 as eight
/// hex groups without zero compression.
pub(crate) fn host_address(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6
                .segments()
                .iter()
                .map(|s| format!("{s:x}"))
                .collect::<Vec<_>>()
                .join(":"),
        },
    }
}

fn store_of(pattern_type: PatternType) -> Option<AclStore> {
    match pattern_type {
        PatternType::Literal => Some(AclStore::Literal),
        PatternType::Prefixed => Some(AclStore::Prefixed),
        _ => None,
    }
}

fn entry_of(json: AclEntryJson) -> AccessControlEntry {
    AccessControlEntry {
        principal: json.principal,
        host: json.host,
        operation: AclOperation::parse(&json.operation),
        permission_type: AclPermissionType::parse(&json.permission_type),
    }
}

fn json_of(entry: &AccessControlEntry) -> AclEntryJson {
    AclEntryJson {
        principal: entry.principal.clone(),
        permission_type: entry.permission_type.name().to_string(),
        operation: entry.operation.name().to_string(),
        host: entry.host.clone(),
    }
}

/// Kafka's `validateAclBinding`: nothing unknown, no `/` in the name (it would be a znode
/// path), a stored pattern type.
fn validate_binding(binding: &AclBinding) -> Result<(), String> {
    if binding.is_unknown() {
        return Err("ACL binding contains unknown elements".into());
    }
    if binding
        .entry
        .principal
        .split_once(':')
        .is_none_or(|(t, _)| t.is_empty())
    {
        return Err(format!(
            "expected a string in format principalType:principalName but got {}",
            binding.entry.principal
        ));
    }
    if binding.pattern.name.contains('/') {
        return Err(format!(
            "ACL binding contains invalid resource name: {}",
            binding.pattern.name
        ));
    }
    if !binding.pattern.resource_type.is_specific() || !binding.pattern.pattern_type.is_specific() {
        return Err(format!("invalid resource pattern {}", binding.pattern));
    }
    if matches!(binding.entry.operation, AclOperation::Any)
        || matches!(binding.entry.permission_type, AclPermissionType::Any)
    {
        return Err("operation and permission type must not be ANY".into());
    }
    Ok(())
}

/// One filter's outcome in [`AclAuthorizer::delete_acls`]: each deleted binding, with the
/// error that kept it if its resource's update failed.
pub(crate) type DeleteResult = Vec<(AclBinding, Option<String>)>;

impl AclAuthorizer {
    /// An authorizer over `zk` with an empty cache; [`AclAuthorizer::startup`] loads it.
    pub fn new(zk: Arc<dyn ZkClient>, settings: AuthorizerSettings) -> Arc<AclAuthorizer> {
        Arc::new(AclAuthorizer {
            zk,
            settings,
            cache: RwLock::new(AclCache::new()),
            update: tokio::sync::Mutex::new(()),
            listeners: std::sync::OnceLock::new(),
        })
    }

    /// Kafka's `configure`: the ACL paths, every ACL loaded, then a change listener per store
    /// (`zk::zk_node_change_notification_listener`: watch and session handlers registered,
    /// its task tracked by `tasks` and ended by `stop`). `now_ms` is the clock notification
    /// ages are taken with. After a session expiry the literal store's listener reloads every
    /// ACL (one cache serves both stores).
    pub async fn startup(
        self: &Arc<Self>,
        watches: &WatchDispatcher,
        now_ms: impl Fn() -> i64 + Send + Sync + 'static,
        tasks: &TaskTracker,
        stop: CancellationToken,
    ) -> Result<(), AclError> {
        acl_store::create_acl_paths(self.zk.as_ref()).await?;
        self.load_cache().await?;
        // One clock for both stores' listeners.
        let now_ms: Arc<dyn Fn() -> i64 + Send + Sync> = Arc::new(now_ms);
        let listeners = AclStore::ALL
            .into_iter()
            .map(|store| {
                let handler = Arc::new(AclChangedNotificationHandler {
                    store,
                    authorizer: Arc::downgrade(self),
                });
                ZkNodeChangeNotificationListener::start(
                    watches,
                    store.change_path(),
                    ACL_CHANGE_PREFIX,
                    handler,
                    {
                        let now_ms = Arc::clone(&now_ms);
                        move || now_ms()
                    },
                    tasks,
                    stop.clone(),
                )
            })
            .collect();
        let _ = self.listeners.set(listeners);
        Ok(())
    }

    /// An authorizer for an admin tool (`kcli acls --zookeeper`, as Kafka's `AclCommand
    /// --authorizer-properties`): the ACL paths created and every ACL loaded, no watches. Its
    /// updates write the znodes and change notifications exactly as a broker's do.
    pub async fn load_offline(
        zk: Arc<dyn ZkClient>,
        settings: AuthorizerSettings,
    ) -> Result<Arc<AclAuthorizer>, AclError> {
        let authorizer = AclAuthorizer::new(zk, settings);
        acl_store::create_acl_paths(authorizer.zk.as_ref()).await?;
        authorizer.load_cache().await?;
        Ok(authorizer)
    }

    pub fn settings(&self) -> &AuthorizerSettings {
        &self.settings
    }

    /// Kafka's `authorize` of one action on a literal resource.
    pub fn authorize(
        &self,
        principal: &str,
        host: &str,
        operation: AclOperation,
        resource: &ResourcePattern,
    ) -> bool {
        let allowed =
            read(&self.cache).authorize(&self.settings, principal, host, operation, resource);
        if !allowed {
            tracing::debug!(principal, host, %operation, %resource, "authorization denied");
        }
        allowed
    }

    /// Kafka's `authorizeByResourceType`.
    pub fn authorize_by_resource_type(
        &self,
        principal: &str,
        host: &str,
        operation: AclOperation,
        resource_type: ResourceType,
    ) -> bool {
        read(&self.cache).authorize_by_resource_type(
            &self.settings,
            principal,
            host,
            operation,
            resource_type,
        )
    }

    /// Kafka's `acls(filter)`: the cached bindings the filter matches.
    pub fn acls(&self, filter: &AclBindingFilter) -> Vec<AclBinding> {
        read(&self.cache).acls(filter)
    }

    /// Kafka's `createAcls`: each binding's result in order, `Err` with its code and message.
    /// Invalid bindings fail alone (INVALID_REQUEST); the others are added per resource, all
    /// of a resource failing together (UNKNOWN_SERVER_ERROR).
    pub async fn create_acls(
        &self,
        bindings: &[AclBinding],
    ) -> Vec<Result<(), (ErrorCode, String)>> {
        let mut results: Vec<Result<(), (ErrorCode, String)>> = vec![Ok(()); bindings.len()];
        let mut by_resource: BTreeMap<ResourcePattern, Vec<usize>> = BTreeMap::new();
        for (i, b) in bindings.iter().enumerate() {
            match validate_binding(b) {
                Ok(()) => by_resource.entry(b.pattern.clone()).or_default().push(i),
                Err(e) => {
                    results[i] = Err((
                        ErrorCode::InvalidRequest,
                        format!("Failed to create ACL: {e}"),
                    ))
                }
            }
        }
        let _guard = self.update.lock().await;
        for (resource, indexes) in by_resource {
            let new: Vec<AccessControlEntry> =
                indexes.iter().map(|i| bindings[*i].entry.clone()).collect();
            let outcome = self
                .update_resource_acls(&resource, |current| {
                    let mut next = current.clone();
                    next.extend(new.iter().cloned());
                    next
                })
                .await;
            if let Err(err) = outcome {
                for i in indexes {
                    results[i] = Err((ErrorCode::UnknownServerError, err.to_string()));
                }
            }
        }
        results
    }

    /// Kafka's `deleteAcls`: for each filter, the bindings it deleted. The resources looked
    /// at are the cached ones and those definite filters name (so ACLs written by another
    /// broker and not yet seen here are deleted when a filter names their resource).
    pub async fn delete_acls(&self, filters: &[AclBindingFilter]) -> Vec<DeleteResult> {
        let _guard = self.update.lock().await;
        let mut resources: BTreeSet<ResourcePattern> =
            read(&self.cache).resources().cloned().collect();
        for f in filters {
            if f.pattern_filter.matches_at_most_one() {
                resources.extend(f.pattern_filter.to_resources());
            }
        }
        let mut deleted: BTreeMap<AclBinding, (usize, Option<String>)> = BTreeMap::new();
        for resource in resources {
            let matching: Vec<usize> = filters
                .iter()
                .enumerate()
                .filter(|(_, f)| f.pattern_filter.matches(&resource))
                .map(|(i, _)| i)
                .collect();
            if matching.is_empty() {
                continue;
            }
            let mut being_deleted: Vec<(AclBinding, usize)> = Vec::new();
            let outcome = self
                .update_resource_acls(&resource, |current| {
                    being_deleted.clear();
                    current
                        .iter()
                        .filter(|acl| {
                            let first = matching
                                .iter()
                                .find(|i| filters[**i].entry_filter.matches(acl));
                            if let Some(i) = first {
                                being_deleted.push((
                                    AclBinding {
                                        pattern: resource.clone(),
                                        entry: (*acl).clone(),
                                    },
                                    *i,
                                ));
                            }
                            first.is_none()
                        })
                        .cloned()
                        .collect()
                })
                .await;
            let error = outcome.err().map(|e| e.to_string());
            for (binding, i) in being_deleted {
                deleted.entry(binding).or_insert((i, error.clone()));
            }
        }
        let mut out: Vec<DeleteResult> = vec![Vec::new(); filters.len()];
        for (binding, (i, error)) in deleted {
            out[i].push((binding, error));
        }
        out
    }

    /// Reads one resource's ACLs from the store (`getAclsFromZk`).
    async fn read_acls(&self, resource: &ResourcePattern) -> Result<VersionedAcls, AclError> {
        let Some(store) = store_of(resource.pattern_type) else {
            return Ok(VersionedAcls::none());
        };
        let type_name = resource.resource_type.name();
        let Some((data, version)) =
            acl_store::get_versioned_acls(self.zk.as_ref(), store, type_name, &resource.name)
                .await?
        else {
            return Ok(VersionedAcls::none());
        };
        let entries = acl_store::decode_acls(&data).map_err(|e| AclError::Unreadable {
            path: store.resource_path(type_name, &resource.name),
            reason: e.to_string(),
        })?;
        Ok(VersionedAcls {
            acls: entries.into_iter().map(entry_of).collect(),
            zk_version: version,
        })
    }

    /// Kafka's `updateResourceAcls`; the caller holds `update`. Returns whether the ACLs
    /// changed.
    async fn update_resource_acls(
        &self,
        resource: &ResourcePattern,
        mut new_acls: impl FnMut(&BTreeSet<AccessControlEntry>) -> BTreeSet<AccessControlEntry>,
    ) -> Result<bool, AclError> {
        let Some(store) = store_of(resource.pattern_type) else {
            return Ok(false);
        };
        let type_name = resource.resource_type.name();
        let cached = read(&self.cache).get(resource).cloned();
        let mut current = match cached {
            Some(v) => v,
            None => self.read_acls(resource).await?,
        };
        let mut retries = 0;
        let (written, version) = loop {
            let next = new_acls(&current.acls);
            let zk = self.zk.as_ref();
            let outcome = if next.is_empty() {
                acl_store::conditional_delete(
                    zk,
                    store,
                    type_name,
                    &resource.name,
                    current.zk_version,
                )
                .await?
                .then_some(0)
            } else {
                let entries: Vec<AclEntryJson> = next.iter().map(json_of).collect();
                let data = acl_store::encode_acls(&entries);
                if current.exists() {
                    acl_store::conditional_set_acls(
                        zk,
                        store,
                        type_name,
                        &resource.name,
                        &data,
                        current.zk_version,
                    )
                    .await?
                } else {
                    acl_store::create_acls_if_not_exists(
                        zk,
                        store,
                        type_name,
                        &resource.name,
                        &data,
                    )
                    .await?
                }
            };
            if let Some(version) = outcome {
                break (next, version);
            }
            retries += 1;
            if retries > MAX_UPDATE_RETRIES {
                return Err(AclError::TooManyRetries {
                    resource: resource.to_string(),
                    retries: MAX_UPDATE_RETRIES,
                });
            }
            let jitter = rand::random_range(0..50);
            tokio::time::sleep(Duration::from_millis(100 + jitter)).await;
            current = self.read_acls(resource).await?;
        };
        let changed = written != current.acls;
        let zk_version = if written.is_empty() {
            UNKNOWN_VERSION
        } else {
            version
        };
        write(&self.cache).update(
            resource,
            VersionedAcls {
                acls: written,
                zk_version,
            },
        );
        if changed {
            tracing::info!(%resource, version = zk_version, "updated ACLs");
            let data = acl_store::encode_change(
                store,
                resource.resource_type.java_name(),
                &resource.name,
                resource.pattern_type.java_name(),
            );
            acl_store::create_change_notification(self.zk.as_ref(), store, &data).await?;
        }
        Ok(changed)
    }

    /// Kafka's `loadAllAcls` into a fresh cache, which then replaces the old one.
    async fn load_cache(&self) -> Result<(), AclError> {
        let _guard = self.update.lock().await;
        let mut fresh = AclCache::new();
        for store in AclStore::ALL {
            let pattern_type = match store {
                AclStore::Literal => PatternType::Literal,
                AclStore::Prefixed => PatternType::Prefixed,
            };
            for type_name in acl_store::get_resource_types(self.zk.as_ref(), store).await? {
                let resource_type = ResourceType::parse(&type_name);
                if !resource_type.is_specific() {
                    tracing::warn!(type_name, "ignoring unknown ResourceType");
                    continue;
                }
                let names =
                    acl_store::get_resource_names(self.zk.as_ref(), store, &type_name).await?;
                for name in names {
                    let resource = ResourcePattern::new(resource_type, name, pattern_type);
                    match self.read_acls(&resource).await {
                        Ok(v) => fresh.update(&resource, v),
                        Err(AclError::Unreadable { path, reason }) => {
                            tracing::error!(path, reason, "unreadable ACLs are ignored");
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        let count = fresh.resources().count();
        *write(&self.cache) = fresh;
        tracing::info!(resources = count, "loaded ACLs");
        Ok(())
    }

    /// What the listeners do after a new session; the tests' stand-in for a session expiry.
    #[cfg(test)]
    pub(crate) fn after_new_session(&self) {
        for listener in self.listeners.get().into_iter().flatten() {
            listener.after_new_session();
        }
    }

    /// Kafka's `processAclChangeNotification`: the resource re-read and cached as stored.
    async fn process_change(&self, resource: &ResourcePattern) -> Result<(), AclError> {
        let _guard = self.update.lock().await;
        let versioned = self.read_acls(resource).await?;
        tracing::info!(%resource, version = versioned.zk_version, "processing ACL change notification");
        write(&self.cache).update(resource, versioned);
        Ok(())
    }
}

/// The resource a notification names, from what it stores.
fn resource_of(store: AclStore, data: &[u8]) -> Result<ResourcePattern, String> {
    let (rt, name, pt) = acl_store::decode_change(store, data).map_err(|e| e.to_string())?;
    let resource_type = ResourceType::from_java_name(&rt)
        .or_else(|| Some(ResourceType::parse(&rt)))
        .filter(|t| t.is_specific())
        .ok_or_else(|| format!("unknown resource type {rt}"))?;
    let pattern_type = PatternType::from_java_name(&pt)
        .filter(|t| t.is_specific())
        .ok_or_else(|| format!("unknown pattern type {pt}"))?;
    Ok(ResourcePattern::new(resource_type, name, pattern_type))
}

/// Kafka's `AclChangedNotificationHandler` of one store: the resource a notification names is
/// re-read. Holds the authorizer weakly, so the listeners it keeps do not keep it alive.
struct AclChangedNotificationHandler {
    store: AclStore,
    authorizer: Weak<AclAuthorizer>,
}

impl NotificationHandler for AclChangedNotificationHandler {
    fn process_notification<'a>(&'a self, data: &'a [u8]) -> NotificationFuture<'a> {
        Box::pin(async move {
            let Some(authorizer) = self.authorizer.upgrade() else {
                return Ok(());
            };
            let resource = match resource_of(self.store, data) {
                Ok(resource) => resource,
                Err(reason) => {
                    tracing::error!(reason, "unreadable ACL change notification is skipped");
                    return Ok(());
                }
            };
            match authorizer.process_change(&resource).await {
                Ok(()) => Ok(()),
                Err(AclError::Zk(e)) => Err(e),
                Err(err) => {
                    tracing::error!(%resource, %err, "ACL change notification is skipped");
                    Ok(())
                }
            }
        })
    }

    fn reload_all(&self) -> NotificationFuture<'_> {
        Box::pin(async move {
            let Some(authorizer) = self.authorizer.upgrade() else {
                return Ok(());
            };
            if self.store != AclStore::Literal {
                return Ok(());
            }
            match authorizer.load_cache().await {
                Ok(()) => Ok(()),
                Err(AclError::Zk(e)) => Err(e),
                Err(err) => {
                    tracing::error!(%err, "reloading ACLs after a new session");
                    Ok(())
                }
            }
        })
    }
}

#[cfg(test)]
#[path = "acl_authorizer_tests.rs"]
mod tests;
