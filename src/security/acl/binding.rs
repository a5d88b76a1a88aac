//! ACL bindings and their filters: Kafka's `ResourcePattern`, `AccessControlEntry`,
//! `AclBinding`, and the `ResourcePatternFilter`/`AccessControlEntryFilter`/`AclBindingFilter`
//! that DescribeAcls and DeleteAcls select with, matching as Kafka's do.
//!
//! Principals are kept as the `type:name` strings ACLs store (`User:alice`, the wildcard
//! `User:*`); hosts as strings (an IP address as `InetAddress.getHostAddress` prints it, or the
//! wildcard `*`).

use super::types::{AclOperation, AclPermissionType, PatternType, ResourceType};

/// `*`: a literal resource name that matches every name of its type.
pub(crate) const WILDCARD_RESOURCE: &str = "*";
/// `User:*`: the principal an ACL names to apply to everyone.
pub(crate) const WILDCARD_PRINCIPAL: &str = "User:*";
/// `*`: the host an ACL names to apply from everywhere.
pub(crate) const WILDCARD_HOST: &str = "*";
/// The name of the one cluster resource.
pub(crate) const CLUSTER_NAME: &str = "kafka-cluster";

/// A resource pattern: a type, a name and how the name matches.
///
/// Invariant for a stored pattern: `resource_type` and `pattern_type` are specific
/// ([`ResourceType::is_specific`], [`PatternType::is_specific`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourcePattern {
    pub resource_type: ResourceType,
    pub name: String,
    pub pattern_type: PatternType,
}

impl ResourcePattern {
    pub fn new(
        resource_type: ResourceType,
        name: impl Into<String>,
        pattern_type: PatternType,
    ) -> Self {
        ResourcePattern {
            resource_type,
            name: name.into(),
            pattern_type,
        }
    }

    /// A literal pattern, the form every authorized action names.
    pub fn literal(resource_type: ResourceType, name: impl Into<String>) -> Self {
        Self::new(resource_type, name, PatternType::Literal)
    }
}

impl std::fmt::Display for ResourcePattern {
    /// Kafka's `ResourcePattern.toString`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ResourcePattern(resourceType={}, name={}, patternType={})",
            self.resource_type.java_name(),
            self.name,
            self.pattern_type.java_name()
        )
    }
}

/// One access control entry: who, from where, what, and whether it is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AccessControlEntry {
    /// `type:name`, e.g. `User:alice` or `User:*`.
    pub principal: String,
    pub host: String,
    pub operation: AclOperation,
    pub permission_type: AclPermissionType,
}

/// A resource pattern with one entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AclBinding {
    pub pattern: ResourcePattern,
    pub entry: AccessControlEntry,
}

impl AclBinding {
    /// Kafka's `AclBinding.isUnknown`: some part has a code this version does not know.
    pub fn is_unknown(&self) -> bool {
        self.pattern.resource_type == ResourceType::Unknown
            || self.pattern.pattern_type == PatternType::Unknown
            || self.entry.operation == AclOperation::Unknown
            || self.entry.permission_type == AclPermissionType::Unknown
    }
}

/// Kafka's `ResourcePatternFilter`: `None` name matches every name; `Any` types match every
/// type; pattern type `Match` selects the stored patterns that apply to `name` (the literal
/// name, the literal wildcard `*`, and every prefix of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePatternFilter {
    pub resource_type: ResourceType,
    pub name: Option<String>,
    pub pattern_type: PatternType,
}

impl ResourcePatternFilter {
    /// The filter matching every pattern.
    pub fn any() -> Self {
        ResourcePatternFilter {
            resource_type: ResourceType::Any,
            name: None,
            pattern_type: PatternType::Any,
        }
    }

    pub fn matches(&self, pattern: &ResourcePattern) -> bool {
        if self.resource_type != ResourceType::Any && self.resource_type != pattern.resource_type {
            return false;
        }
        if !matches!(self.pattern_type, PatternType::Any | PatternType::Match)
            && self.pattern_type != pattern.pattern_type
        {
            return false;
        }
        let Some(name) = &self.name else {
            return true;
        };
        if self.pattern_type == PatternType::Any || self.pattern_type == pattern.pattern_type {
            return *name == pattern.name;
        }
        match pattern.pattern_type {
            PatternType::Literal => *name == pattern.name || pattern.name == WILDCARD_RESOURCE,
            PatternType::Prefixed => name.starts_with(&pattern.name),
            _ => false,
        }
    }

    /// Why this filter may match more than one pattern (`findIndefiniteField`), or `None`.
    pub fn find_indefinite_field(&self) -> Option<&'static str> {
        if self.resource_type == ResourceType::Any {
            return Some("Resource type is ANY.");
        }
        if self.resource_type == ResourceType::Unknown {
            return Some("Resource type is UNKNOWN.");
        }
        if self.name.is_none() {
            return Some("Resource name is NULL.");
        }
        if self.pattern_type == PatternType::Match {
            return Some("Resource pattern type is MATCH.");
        }
        if self.pattern_type == PatternType::Unknown {
            return Some("Resource pattern type is UNKNOWN.");
        }
        None
    }

    pub fn matches_at_most_one(&self) -> bool {
        self.find_indefinite_field().is_none()
    }

    /// The patterns a definite filter names (`AclAuthorizer.filterToResources`): itself, or
    /// for `Any` both the literal and the prefixed pattern of its name.
    pub fn to_resources(&self) -> Vec<ResourcePattern> {
        let Some(name) = &self.name else {
            return Vec::new();
        };
        let types: &[PatternType] = match self.pattern_type {
            PatternType::Literal => &[PatternType::Literal],
            PatternType::Prefixed => &[PatternType::Prefixed],
            PatternType::Any => &[PatternType::Literal, PatternType::Prefixed],
            _ => &[],
        };
        types
            .iter()
            .map(|t| ResourcePattern::new(self.resource_type, name.clone(), *t))
            .collect()
    }
}

/// Kafka's `AccessControlEntryFilter`: `None` principal or host matches any; `Any` operation
/// or permission type matches any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessControlEntryFilter {
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: AclOperation,
    pub permission_type: AclPermissionType,
}

impl AccessControlEntryFilter {
    /// The filter matching every entry.
    pub fn any() -> Self {
        AccessControlEntryFilter {
            principal: None,
            host: None,
            operation: AclOperation::Any,
            permission_type: AclPermissionType::Any,
        }
    }

    pub fn matches(&self, entry: &AccessControlEntry) -> bool {
        if self
            .principal
            .as_ref()
            .is_some_and(|p| *p != entry.principal)
        {
            return false;
        }
        if self.host.as_ref().is_some_and(|h| *h != entry.host) {
            return false;
        }
        if self.operation != AclOperation::Any && self.operation != entry.operation {
            return false;
        }
        self.permission_type == AclPermissionType::Any
            || self.permission_type == entry.permission_type
    }

    /// Why this filter may match more than one entry (`AccessControlEntryData
    /// .findIndefiniteField`), or `None`.
    pub fn find_indefinite_field(&self) -> Option<&'static str> {
        if self.principal.is_none() {
            return Some("Principal is NULL");
        }
        if self.host.is_none() {
            return Some("Host is NULL");
        }
        if self.operation == AclOperation::Any {
            return Some("Operation is ANY");
        }
        if self.operation == AclOperation::Unknown {
            return Some("Operation is UNKNOWN");
        }
        if self.permission_type == AclPermissionType::Any {
            return Some("Permission type is ANY");
        }
        if self.permission_type == AclPermissionType::Unknown {
            return Some("Permission type is UNKNOWN");
        }
        None
    }
}

/// Kafka's `AclBindingFilter`: a pattern filter and an entry filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclBindingFilter {
    pub pattern_filter: ResourcePatternFilter,
    pub entry_filter: AccessControlEntryFilter,
}

impl AclBindingFilter {
    /// The filter matching every binding.
    pub fn any() -> Self {
        AclBindingFilter {
            pattern_filter: ResourcePatternFilter::any(),
            entry_filter: AccessControlEntryFilter::any(),
        }
    }

    pub fn matches(&self, binding: &AclBinding) -> bool {
        self.pattern_filter.matches(&binding.pattern) && self.entry_filter.matches(&binding.entry)
    }

    /// Kafka's `AclBindingFilter.isUnknown`: some part has a code this version does not know.
    pub fn is_unknown(&self) -> bool {
        self.pattern_filter.resource_type == ResourceType::Unknown
            || self.pattern_filter.pattern_type == PatternType::Unknown
            || self.entry_filter.operation == AclOperation::Unknown
            || self.entry_filter.permission_type == AclPermissionType::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(name: &str, pattern_type: PatternType) -> ResourcePattern {
        ResourcePattern::new(ResourceType::Topic, name, pattern_type)
    }

    fn filter(name: Option<&str>, pattern_type: PatternType) -> ResourcePatternFilter {
        ResourcePatternFilter {
            resource_type: ResourceType::Topic,
            name: name.map(str::to_string),
            pattern_type,
        }
    }

    #[test]
    fn pattern_filters_match_as_kafkas() {
        let literal = pattern("payments", PatternType::Literal);
        let wildcard = pattern("*", PatternType::Literal);
        let prefixed = pattern("pay", PatternType::Prefixed);
        let other = pattern("orders", PatternType::Literal);
        let matching = filter(Some("payments"), PatternType::Match);
        assert!(matching.matches(&literal));
        assert!(matching.matches(&wildcard));
        assert!(matching.matches(&prefixed));
        assert!(!matching.matches(&other));
        assert!(!matching.matches(&pattern("payx", PatternType::Prefixed)));
        // ANY: exactly the name, whatever the pattern type.
        let any = filter(Some("pay"), PatternType::Any);
        assert!(any.matches(&prefixed));
        assert!(!any.matches(&literal));
        // A specific type: exactly that pattern.
        assert!(filter(Some("payments"), PatternType::Literal).matches(&literal));
        assert!(!filter(Some("payments"), PatternType::Prefixed).matches(&literal));
        assert!(!filter(Some("*"), PatternType::Literal).matches(&literal));
        // No name: every name.
        assert!(filter(None, PatternType::Literal).matches(&other));
        assert!(!filter(None, PatternType::Prefixed).matches(&other));
        let group = ResourcePattern::literal(ResourceType::Group, "payments");
        assert!(!matching.matches(&group));
        assert!(ResourcePatternFilter::any().matches(&group));
    }

    #[test]
    fn indefinite_fields_and_resources_of_a_filter() {
        assert_eq!(
            filter(Some("a"), PatternType::Match).find_indefinite_field(),
            Some("Resource pattern type is MATCH.")
        );
        assert!(filter(Some("a"), PatternType::Any).matches_at_most_one());
        assert_eq!(
            filter(Some("a"), PatternType::Any).to_resources(),
            vec![
                pattern("a", PatternType::Literal),
                pattern("a", PatternType::Prefixed)
            ]
        );
        let entry = AccessControlEntry {
            principal: "User:alice".into(),
            host: "*".into(),
            operation: AclOperation::Read,
            permission_type: AclPermissionType::Allow,
        };
        let mut ef = AccessControlEntryFilter::any();
        assert!(ef.matches(&entry));
        ef.principal = Some("User:bob".into());
        assert!(!ef.matches(&entry));
        ef.principal = Some("User:alice".into());
        ef.operation = AclOperation::Write;
        assert!(!ef.matches(&entry));
        ef.operation = AclOperation::Read;
        ef.permission_type = AclPermissionType::Deny;
        assert!(!ef.matches(&entry));
    }
}
