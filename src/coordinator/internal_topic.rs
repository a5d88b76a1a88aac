//! What the coordinators' internal topics share: the partition a key (a group id, a
//! transactional id) maps to, as Kafka computes it.

/// Java's `String.hashCode` (over UTF-16 code units, wrapping), as Kafka hashes group and
/// transactional ids.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Kafka's `partitionFor(id)`: `Utils.abs(id.hashCode) % partitions`, where `Utils.abs` maps
/// `Integer.MIN_VALUE` to 0. `partitions` below 1 counts as 1.
pub fn partition_for(id: &str, partitions: i32) -> i32 {
    let h = java_string_hash(id);
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    abs % partitions.max(1)
}
