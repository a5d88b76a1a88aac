//! Authorization without I/O: Kafka 3.9's ACL model and `AclAuthorizer` decision.
//!
//! - [`types`]: resource types, pattern types, operations and permission types, with Kafka's
//!   codes and names.
//! - [`binding`]: resource patterns, access control entries, bindings and the filters
//!   DescribeAcls/DeleteAcls select with.
//! - [`acl_cache`]: every resource's ACLs and the decisions `authorize` and
//!   `authorize_by_resource_type` over them.
//!
//! The ZooKeeper layout is in `zk::acl_store`; the broker's authorizer (loading, change
//! notifications, the per-API checks) in `server::acl_authorizer` and `server::auth_helper`.

pub(crate) mod acl_cache;
pub(crate) mod binding;
pub(crate) mod types;

pub(crate) use acl_cache::{AclCache, AuthorizerSettings, UNKNOWN_VERSION, VersionedAcls};
pub(crate) use binding::{
    AccessControlEntry, AccessControlEntryFilter, AclBinding, AclBindingFilter, CLUSTER_NAME,
    ResourcePattern, ResourcePatternFilter, WILDCARD_HOST,
};
pub(crate) use types::{AclOperation, AclPermissionType, PatternType, ResourceType};
