//! The ACL cache and the authorization decision of Kafka 3.9's ZooKeeper-mode `AclAuthorizer`:
//! `authorize` (super users, `allow.everyone.if.no.acl.found`, deny before allow, implied
//! operations, wildcard principal/host/resource, literal and prefixed patterns) and
//! `authorizeByResourceType` (KIP-679's "may the principal do this to any resource of the
//! type"), over the ACLs of every resource pattern, each with the zkVersion it was read at.
//!
//! Invariants: no pattern maps to an empty entry set (a resource whose last ACL went is
//! removed, as Kafka's `updateCache` does); the per-type index (`ResourceTypeKey` → names)
//! always holds exactly the cached entries.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::binding::{
    AccessControlEntry, AclBinding, AclBindingFilter, ResourcePattern, WILDCARD_HOST,
    WILDCARD_PRINCIPAL, WILDCARD_RESOURCE,
};
use super::types::{AclOperation, AclPermissionType, PatternType, ResourceType};

/// The zkVersion of a resource whose znode does not exist (`ZkVersion.UnknownVersion`).
pub(crate) const UNKNOWN_VERSION: i32 = -2;

/// A resource's ACLs and the version of the znode they were read from (Kafka's
/// `VersionedAcls`); [`UNKNOWN_VERSION`] when there is no znode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VersionedAcls {
    pub acls: BTreeSet<AccessControlEntry>,
    pub zk_version: i32,
}

impl VersionedAcls {
    /// No znode, no ACLs.
    pub(crate) fn none() -> Self {
        VersionedAcls {
            acls: BTreeSet::new(),
            zk_version: UNKNOWN_VERSION,
        }
    }

    /// Whether the znode exists.
    pub(crate) fn exists(&self) -> bool {
        self.zk_version != UNKNOWN_VERSION
    }
}

/// The authorizer's own settings: `super.users` and `allow.everyone.if.no.acl.found`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizerSettings {
    /// Principals as `type:name`, allowed everything without looking at ACLs.
    pub super_users: HashSet<String>,
    pub allow_everyone_if_no_acl_found: bool,
}

impl AuthorizerSettings {
    /// Parses `super.users` as Kafka's `AclAuthorizer.configure`: semicolon-separated
    /// principals, each trimmed; an empty value is none. An element that is not `type:name`
    /// is an error naming it.
    pub fn parse_super_users(value: &str) -> Result<HashSet<String>, String> {
        let mut out = HashSet::new();
        if value.trim().is_empty() {
            return Ok(out);
        }
        for part in value.split(';') {
            let p = part.trim();
            match p.split_once(':') {
                Some((t, n)) if !t.is_empty() && !n.is_empty() => {
                    out.insert(p.to_string());
                }
                _ => {
                    return Err(format!(
                        "expected a string in format principalType:principalName but got {p}"
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// `AclAuthorizer.ResourceTypeKey`: one entry on one pattern type of one resource type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ResourceTypeKey {
    principal: String,
    host: String,
    operation: AclOperation,
    permission_type: AclPermissionType,
    resource_type: ResourceType,
    pattern_type: PatternType,
}

impl ResourceTypeKey {
    fn of(entry: &AccessControlEntry, pattern: &ResourcePattern) -> Self {
        ResourceTypeKey {
            principal: entry.principal.clone(),
            host: entry.host.clone(),
            operation: entry.operation,
            permission_type: entry.permission_type,
            resource_type: pattern.resource_type,
            pattern_type: pattern.pattern_type,
        }
    }
}

/// Every cached ACL, by resource pattern, with the by-type index.
#[derive(Debug, Clone, Default)]
pub(crate) struct AclCache {
    acls: BTreeMap<ResourcePattern, VersionedAcls>,
    by_type: HashMap<ResourceTypeKey, BTreeSet<String>>,
}

impl AclCache {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The cached ACLs of one pattern, if any.
    pub(crate) fn get(&self, pattern: &ResourcePattern) -> Option<&VersionedAcls> {
        self.acls.get(pattern)
    }

    /// Every cached pattern.
    pub(crate) fn resources(&self) -> impl Iterator<Item = &ResourcePattern> {
        self.acls.keys()
    }

    /// Replaces one pattern's ACLs (Kafka's `updateCache`); an empty set removes it.
    pub(crate) fn update(&mut self, pattern: &ResourcePattern, versioned: VersionedAcls) {
        let old: BTreeSet<AccessControlEntry> = self
            .acls
            .get(pattern)
            .map(|v| v.acls.clone())
            .unwrap_or_default();
        for removed in old.difference(&versioned.acls) {
            let key = ResourceTypeKey::of(removed, pattern);
            if let Some(names) = self.by_type.get_mut(&key) {
                names.remove(&pattern.name);
                if names.is_empty() {
                    self.by_type.remove(&key);
                }
            }
        }
        for added in versioned.acls.difference(&old) {
            self.by_type
                .entry(ResourceTypeKey::of(added, pattern))
                .or_default()
                .insert(pattern.name.clone());
        }
        if versioned.acls.is_empty() {
            self.acls.remove(pattern);
        } else {
            self.acls.insert(pattern.clone(), versioned);
        }
    }

    /// Every binding `filter` matches (Kafka's `acls(filter)`), in pattern order.
    pub(crate) fn acls(&self, filter: &AclBindingFilter) -> Vec<AclBinding> {
        let mut out = Vec::new();
        for (pattern, versioned) in &self.acls {
            for entry in &versioned.acls {
                let binding = AclBinding {
                    pattern: pattern.clone(),
                    entry: entry.clone(),
                };
                if filter.matches(&binding) {
                    out.push(binding);
                }
            }
        }
        out
    }

    /// The entries that apply to a literal resource (`matchingAcls`): those of every prefixed
    /// pattern its name starts with, of the type's wildcard `*`, and of its own literal name.
    fn matching_acls<'a>(
        &'a self,
        resource_type: ResourceType,
        name: &str,
    ) -> Vec<&'a BTreeSet<AccessControlEntry>> {
        let mut out = Vec::new();
        let mut lookup = |n: &str, pattern_type| {
            let key = ResourcePattern::new(resource_type, n, pattern_type);
            if let Some(v) = self.acls.get(&key) {
                out.push(&v.acls);
            }
        };
        // Kafka's range over the reverse-ordered tree takes the prefixed names between
        // `name.take(1)` and `name` that `name` starts with: its non-empty prefixes (only
        // the empty one for an empty name).
        if name.is_empty() {
            lookup("", PatternType::Prefixed);
        }
        for (i, c) in name.char_indices() {
            lookup(&name[..i + c.len_utf8()], PatternType::Prefixed);
        }
        lookup(WILDCARD_RESOURCE, PatternType::Literal);
        lookup(name, PatternType::Literal);
        out
    }

    /// Kafka's `authorizeAction` for a literal resource: super users first; no matching ACL
    /// is `allow.everyone.if.no.acl.found`; a matching DENY refuses; else a matching ALLOW of
    /// the operation or one implying it grants. `principal` is `type:name`; `host` the client's
    /// address as `getHostAddress` prints it.
    pub(crate) fn authorize(
        &self,
        settings: &AuthorizerSettings,
        principal: &str,
        host: &str,
        operation: AclOperation,
        resource: &ResourcePattern,
    ) -> bool {
        if settings.super_users.contains(principal) {
            return true;
        }
        let acls = self.matching_acls(resource.resource_type, &resource.name);
        if acls.iter().all(|s| s.is_empty()) {
            return settings.allow_everyone_if_no_acl_found;
        }
        let exists = |op: AclOperation, permission: AclPermissionType| {
            acls.iter().flat_map(|s| s.iter()).any(|acl| {
                acl.permission_type == permission
                    && (acl.principal == principal || acl.principal == WILDCARD_PRINCIPAL)
                    && (acl.operation == op || acl.operation == AclOperation::All)
                    && (acl.host == host || acl.host == WILDCARD_HOST)
            })
        };
        if exists(operation, AclPermissionType::Deny) {
            return false;
        }
        operation
            .implied_by()
            .iter()
            .any(|op| exists(*op, AclPermissionType::Allow))
    }

    /// The name sets of the index keys for `principal` or `User:*`, `host` or `*`, `op` or
    /// `All` (`matchingResources`).
    fn matching_resources(
        &self,
        principal: &str,
        host: &str,
        op: AclOperation,
        permission_type: AclPermissionType,
        resource_type: ResourceType,
        pattern_type: PatternType,
    ) -> Vec<&BTreeSet<String>> {
        let mut out = Vec::new();
        for p in distinct(principal, WILDCARD_PRINCIPAL) {
            for h in distinct(host, WILDCARD_HOST) {
                let ops: &[AclOperation] = if op == AclOperation::All {
                    &[AclOperation::All]
                } else {
                    &[op, AclOperation::All]
                };
                for &o in ops {
                    let key = ResourceTypeKey {
                        principal: p.to_string(),
                        host: h.to_string(),
                        operation: o,
                        permission_type,
                        resource_type,
                        pattern_type,
                    };
                    if let Some(names) = self.by_type.get(&key) {
                        out.push(names);
                    }
                }
            }
        }
        out
    }

    /// Kafka's `AclAuthorizer.authorizeByResourceType`: whether `principal` may perform `op`
    /// on at least one resource of `resource_type`. A DENY on the literal wildcard refuses;
    /// `allow.everyone.if.no.acl.found` grants; without any DENY one ALLOW grants; else an
    /// ALLOW on a prefix no DENY prefix dominates, or on a literal name (or `*`) neither
    /// denied literally nor by a dominating prefix.
    pub(crate) fn authorize_by_resource_type(
        &self,
        settings: &AuthorizerSettings,
        principal: &str,
        host: &str,
        op: AclOperation,
        resource_type: ResourceType,
    ) -> bool {
        use AclPermissionType::{Allow, Deny};
        use PatternType::{Literal, Prefixed};
        if settings.super_users.contains(principal) {
            return true;
        }
        let deny_literals =
            self.matching_resources(principal, host, op, Deny, resource_type, Literal);
        if deny_literals.iter().any(|s| s.contains(WILDCARD_RESOURCE)) {
            return false;
        }
        if settings.allow_everyone_if_no_acl_found {
            return true;
        }
        let deny_prefixes =
            self.matching_resources(principal, host, op, Deny, resource_type, Prefixed);
        let allow_literals =
            self.matching_resources(principal, host, op, Allow, resource_type, Literal);
        let allow_prefixes =
            self.matching_resources(principal, host, op, Allow, resource_type, Prefixed);
        if deny_literals.is_empty() && deny_prefixes.is_empty() {
            return !allow_literals.is_empty() || !allow_prefixes.is_empty();
        }
        let dominated = |name: &str| {
            name.char_indices().any(|(i, c)| {
                let prefix = &name[..i + c.len_utf8()];
                deny_prefixes.iter().any(|s| s.contains(prefix))
            })
        };
        allow_prefixes
            .iter()
            .any(|s| s.iter().any(|prefix| !dominated(prefix)))
            || allow_literals.iter().any(|s| {
                s.iter().any(|literal| {
                    literal == WILDCARD_RESOURCE
                        || (!deny_literals.iter().any(|d| d.contains(literal))
                            && !dominated(literal))
                })
            })
    }
}

/// `a` and `b`, once when they are equal (Kafka iterates a `Set` of the two).
fn distinct<'a>(a: &'a str, b: &'a str) -> Vec<&'a str> {
    if a == b { vec![a] } else { vec![a, b] }
}

#[cfg(test)]
#[path = "acl_cache_tests.rs"]
mod tests;
