//! The authorized-operations bit fields (KIP-430) of a broker without an authorizer: every
//! operation the resource type supports (`AuthHelper.authorizedOperations` with no authorizer
//! returns `AclEntry.supportedOperations`), as `Utils.to32BitField` of the operation codes.

/// `AclOperation` codes.
const CREATE: u32 = 5;
const READ: u32 = 3;
const WRITE: u32 = 4;
const DELETE: u32 = 6;
const ALTER: u32 = 7;
const DESCRIBE: u32 = 8;
const CLUSTER_ACTION: u32 = 9;
const DESCRIBE_CONFIGS: u32 = 10;
const ALTER_CONFIGS: u32 = 11;
const IDEMPOTENT_WRITE: u32 = 12;

const fn bits(codes: &[u32]) -> i32 {
    let mut out = 0u32;
    let mut i = 0;
    while i < codes.len() {
        out |= 1 << codes[i];
        i += 1;
    }
    out as i32
}

/// A topic's: read, write, create, delete, alter, describe, describe and alter configs.
pub const TOPIC_OPERATIONS: i32 = bits(&[
    READ,
    WRITE,
    CREATE,
    DELETE,
    ALTER,
    DESCRIBE,
    DESCRIBE_CONFIGS,
    ALTER_CONFIGS,
]);

/// The cluster's: create, cluster action, describe and alter configs, idempotent write, alter,
/// describe.
pub const CLUSTER_OPERATIONS: i32 = bits(&[
    CREATE,
    CLUSTER_ACTION,
    DESCRIBE_CONFIGS,
    ALTER_CONFIGS,
    IDEMPOTENT_WRITE,
    ALTER,
    DESCRIBE,
]);

/// A consumer group's: read, describe, delete.
pub const GROUP_OPERATIONS: i32 = bits(&[READ, DESCRIBE, DELETE]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_fields() {
        assert_eq!(TOPIC_OPERATIONS, 3576);
        assert_eq!(CLUSTER_OPERATIONS, 8096);
        assert_eq!(GROUP_OPERATIONS, 328);
    }
}
