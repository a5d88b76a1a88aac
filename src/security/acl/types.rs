//! The enums of Kafka's ACL model with their wire codes and names: `ResourceType`,
//! `PatternType`, `AclOperation`, `AclPermissionType` (`org.apache.kafka.common.acl` and
//! `.resource`). Names are `SecurityUtils`' Pascal case (`TransactionalId`, `ClusterAction`), as
//! ZooKeeper's ACL znodes and `kafka-acls` print them; parsing accepts that form or any case of
//! it without underscores, as `SecurityUtils.valueFromMap` does. The Java enum names
//! (`TRANSACTIONAL_ID`, `PREFIXED`) are what change notifications carry.

/// Declares a code-carrying enum with its Java enum name and `SecurityUtils` Pascal-case name.
macro_rules! kafka_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $code:expr, $java:literal, $pascal:literal;)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// Every value, in code order.
            pub const ALL_VALUES: &'static [$name] = &[$($name::$variant,)*];

            /// The wire code (an `int8`).
            pub fn code(self) -> i8 {
                match self { $($name::$variant => $code,)* }
            }

            /// The value of a wire code; an unknown code is `Unknown`, as Kafka's `fromCode`.
            pub fn from_code(code: i8) -> Self {
                match code {
                    $($code => $name::$variant,)*
                    _ => $name::Unknown,
                }
            }

            /// The Java enum constant's name (`TRANSACTIONAL_ID`).
            pub fn java_name(self) -> &'static str {
                match self { $($name::$variant => $java,)* }
            }

            /// `SecurityUtils`' Pascal-case name (`TransactionalId`).
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $pascal,)* }
            }

            /// Parses the Pascal-case name, or it in any case without underscores; anything
            /// else is `Unknown` (`SecurityUtils.valueFromMap`).
            pub fn parse(s: &str) -> Self {
                let upper = s.to_ascii_uppercase();
                for v in Self::ALL_VALUES {
                    if v.name() == s || v.name().to_ascii_uppercase() == upper {
                        return *v;
                    }
                }
                $name::Unknown
            }

            /// Parses the Java enum name in any case (`ResourceType.fromString`); `None` when
            /// it names no value.
            pub fn from_java_name(s: &str) -> Option<Self> {
                let upper = s.to_ascii_uppercase();
                Self::ALL_VALUES.iter().copied().find(|v| v.java_name() == upper)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

kafka_enum! {
    /// What an ACL is about. `Any` only in filters; `Unknown` for codes this version lacks.
    ResourceType {
        Unknown = 0, "UNKNOWN", "Unknown";
        Any = 1, "ANY", "Any";
        Topic = 2, "TOPIC", "Topic";
        Group = 3, "GROUP", "Group";
        /// The one resource `kafka-cluster`.
        Cluster = 4, "CLUSTER", "Cluster";
        TransactionalId = 5, "TRANSACTIONAL_ID", "TransactionalId";
        DelegationToken = 6, "DELEGATION_TOKEN", "DelegationToken";
        User = 7, "USER", "User";
    }
}

kafka_enum! {
    /// How a resource pattern's name matches. Stored patterns are `Literal` or `Prefixed`;
    /// `Any` and `Match` only in filters.
    PatternType {
        Unknown = 0, "UNKNOWN", "Unknown";
        Any = 1, "ANY", "Any";
        /// A filter matching literal, wildcard and prefixed patterns that apply to its name.
        Match = 2, "MATCH", "Match";
        Literal = 3, "LITERAL", "Literal";
        Prefixed = 4, "PREFIXED", "Prefixed";
    }
}

kafka_enum! {
    /// An operation. `All` in an ACL matches every operation; `Any` only in filters.
    AclOperation {
        Unknown = 0, "UNKNOWN", "Unknown";
        Any = 1, "ANY", "Any";
        All = 2, "ALL", "All";
        Read = 3, "READ", "Read";
        Write = 4, "WRITE", "Write";
        Create = 5, "CREATE", "Create";
        Delete = 6, "DELETE", "Delete";
        Alter = 7, "ALTER", "Alter";
        Describe = 8, "DESCRIBE", "Describe";
        ClusterAction = 9, "CLUSTER_ACTION", "ClusterAction";
        DescribeConfigs = 10, "DESCRIBE_CONFIGS", "DescribeConfigs";
        AlterConfigs = 11, "ALTER_CONFIGS", "AlterConfigs";
        IdempotentWrite = 12, "IDEMPOTENT_WRITE", "IdempotentWrite";
        CreateTokens = 13, "CREATE_TOKENS", "CreateTokens";
        DescribeTokens = 14, "DESCRIBE_TOKENS", "DescribeTokens";
    }
}

kafka_enum! {
    /// Allow or deny; `Any` only in filters.
    AclPermissionType {
        Unknown = 0, "UNKNOWN", "Unknown";
        Any = 1, "ANY", "Any";
        Deny = 2, "DENY", "Deny";
        Allow = 3, "ALLOW", "Allow";
    }
}

impl ResourceType {
    /// The operations an ACL on this resource type can grant (`AclEntry.supportedOperations`),
    /// the bits of the KIP-430 authorized-operations fields. Empty for filter-only types.
    pub fn supported_operations(self) -> &'static [AclOperation] {
        use AclOperation::*;
        match self {
            ResourceType::Topic => &[
                Read,
                Write,
                Create,
                Describe,
                Delete,
                Alter,
                DescribeConfigs,
                AlterConfigs,
            ],
            ResourceType::Group => &[Read, Describe, Delete],
            ResourceType::Cluster => &[
                Create,
                ClusterAction,
                DescribeConfigs,
                AlterConfigs,
                IdempotentWrite,
                Alter,
                Describe,
            ],
            ResourceType::TransactionalId => &[Describe, Write],
            ResourceType::DelegationToken => &[Describe],
            ResourceType::User => &[CreateTokens, DescribeTokens],
            ResourceType::Unknown | ResourceType::Any => &[],
        }
    }

    /// A type an ACL can be stored for (not `Any`, not `Unknown`).
    pub fn is_specific(self) -> bool {
        !matches!(self, ResourceType::Any | ResourceType::Unknown)
    }
}

impl PatternType {
    /// A type a stored pattern can have: `Literal` or `Prefixed`.
    pub fn is_specific(self) -> bool {
        matches!(self, PatternType::Literal | PatternType::Prefixed)
    }
}

impl AclOperation {
    /// The operations an ALLOW ACL for one of which grants `self`: Read, Write, Delete and
    /// Alter imply Describe; AlterConfigs implies DescribeConfigs (`AclAuthorizer.allowOps`).
    pub fn implied_by(self) -> &'static [AclOperation] {
        use AclOperation::*;
        match self {
            Describe => &[Describe, Read, Write, Delete, Alter],
            DescribeConfigs => &[DescribeConfigs, AlterConfigs],
            Read => &[Read],
            Write => &[Write],
            Create => &[Create],
            Delete => &[Delete],
            Alter => &[Alter],
            ClusterAction => &[ClusterAction],
            AlterConfigs => &[AlterConfigs],
            IdempotentWrite => &[IdempotentWrite],
            CreateTokens => &[CreateTokens],
            DescribeTokens => &[DescribeTokens],
            All => &[All],
            Any => &[Any],
            Unknown => &[Unknown],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_kafkas() {
        assert_eq!(ResourceType::TransactionalId.code(), 5);
        assert_eq!(ResourceType::TransactionalId.name(), "TransactionalId");
        assert_eq!(
            ResourceType::TransactionalId.java_name(),
            "TRANSACTIONAL_ID"
        );
        assert_eq!(
            ResourceType::parse("TRANSACTIONALID"),
            ResourceType::TransactionalId
        );
        assert_eq!(ResourceType::parse("topic"), ResourceType::Topic);
        assert_eq!(
            ResourceType::parse("TRANSACTIONAL_ID"),
            ResourceType::Unknown
        );
        assert_eq!(
            ResourceType::from_java_name("transactional_id"),
            Some(ResourceType::TransactionalId)
        );
        assert_eq!(AclOperation::from_code(12), AclOperation::IdempotentWrite);
        assert_eq!(AclOperation::from_code(99), AclOperation::Unknown);
        assert_eq!(AclOperation::ClusterAction.name(), "ClusterAction");
        assert_eq!(
            AclOperation::parse("IDEMPOTENTWRITE"),
            AclOperation::IdempotentWrite
        );
        assert_eq!(AclPermissionType::Allow.code(), 3);
        assert_eq!(PatternType::Prefixed.code(), 4);
        assert_eq!(PatternType::Match.code(), 2);
        for t in ResourceType::ALL_VALUES {
            assert_eq!(ResourceType::from_code(t.code()), *t);
            assert_eq!(ResourceType::parse(t.name()), *t);
        }
    }
}
