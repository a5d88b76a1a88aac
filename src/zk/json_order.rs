//! The key order of the JSON objects Kafka writes. Kafka serializes Scala and Java maps with
//! Jackson, which walks a map in its iteration order; that order is a function of the map type
//! and the keys' `String.hashCode`. These functions reproduce it, so kcli writes the same bytes:
//!
//! - Scala 2.13 immutable `Map(...)` literals: up to 4 entries keep insertion order (`Map1`..
//!   `Map4`); from 5 on they are CHAMP tries (`immutable.HashMap`): at each level, keys alone in
//!   their 5-bit slot come first in slot order, then the sub-tries in slot order.
//! - Scala 2.13 `mutable.HashMap`: buckets in index order (`improveHash & (len - 1)`), a bucket
//!   sorted by improved hash; the table starts at `tableSizeFor` of the initial capacity and
//!   doubles when `size + 1 >= 0.75 * len`.
//! - `java.util.Properties` (a `ConcurrentHashMap` since Java 9): bins in index order of
//!   `spread(h) & (n - 1)`, a bin in insertion order; n starts at 16 and doubles at 75%.
//!   (A bin split by a resize may reorder colliding keys; with the short config maps Kafka
//!   writes this is not observed.)

/// Java's `String.hashCode` over UTF-16 code units.
pub(crate) fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Scala 2.13 `immutable.HashMap`'s `Hashing.improve`.
fn champ_improve(h: i32) -> u32 {
    let mut h = h.wrapping_add(!(h << 9));
    h ^= ((h as u32) >> 14) as i32;
    h = h.wrapping_add(h << 4);
    (h ^ ((h as u32) >> 10) as i32) as u32
}

/// Keys in the order a Scala 2.13 immutable `Map` built from them (in this order) iterates.
pub(crate) fn scala_immutable_order<'a>(keys: &[&'a str]) -> Vec<&'a str> {
    let mut unique: Vec<&str> = Vec::new();
    for k in keys {
        if !unique.contains(k) {
            unique.push(k);
        }
    }
    if unique.len() <= 4 {
        return unique;
    }
    let hashed: Vec<(u32, &str)> = unique
        .iter()
        .map(|k| (champ_improve(java_hash(k)), *k))
        .collect();
    let mut out = Vec::with_capacity(hashed.len());
    champ_walk(&hashed, 0, &mut out);
    out
}

fn champ_walk<'a>(keys: &[(u32, &'a str)], shift: u32, out: &mut Vec<&'a str>) {
    if shift >= 32 {
        // Full hash collision: a collision node keeps insertion order.
        out.extend(keys.iter().map(|(_, k)| *k));
        return;
    }
    let slot = |h: u32| (h >> shift) & 31;
    let mut slots: Vec<u32> = keys.iter().map(|(h, _)| slot(*h)).collect();
    slots.sort_unstable();
    slots.dedup();
    let mut subs = Vec::new();
    for s in slots {
        let group: Vec<(u32, &str)> = keys
            .iter()
            .filter(|(h, _)| slot(*h) == s)
            .copied()
            .collect();
        if group.len() == 1 {
            out.push(group[0].1);
        } else {
            subs.push(group);
        }
    }
    for group in subs {
        champ_walk(&group, shift + 5, out);
    }
}

/// Scala's `HashMap.tableSizeFor`.
fn table_size_for(capacity: usize) -> usize {
    let c = capacity.saturating_sub(1).max(4);
    (1usize << (usize::BITS - 1 - c.leading_zeros())) * 2
}

/// Keys in the order a Scala 2.13 `mutable.HashMap` iterates after they are added in this
/// order; `initial_capacity` is 16 for `mutable.Map()` and `((n + 1) / 0.75)` for a literal
/// `mutable.Map(k1 -> v1, ...)` of n entries.
pub(crate) fn scala_mutable_order<'a>(keys: &[&'a str], initial_capacity: usize) -> Vec<&'a str> {
    let mut len = table_size_for(initial_capacity);
    let mut unique: Vec<&str> = Vec::new();
    for k in keys {
        if !unique.contains(k) {
            if unique.len() + 1 >= len * 3 / 4 {
                len *= 2;
            }
            unique.push(k);
        }
    }
    let improved = |k: &str| {
        let h = java_hash(k);
        h ^ ((h as u32) >> 16) as i32
    };
    // A stable sort keeps insertion order among equal hashes, as the bucket lists do.
    unique.sort_by_key(|k| {
        let h = improved(k);
        ((h as u32 as usize) & (len - 1), h)
    });
    unique
}

/// The initial capacity Scala 2.13 gives a `mutable.Map` literal of `n` entries.
pub(crate) fn literal_capacity(n: usize) -> usize {
    ((n as f64 + 1.0) / 0.75) as usize
}

/// Keys in the order a `java.util.Properties` (Java 9+) holding them iterates.
pub(crate) fn java_properties_order<'a>(keys: &[&'a str]) -> Vec<&'a str> {
    let mut unique: Vec<&str> = Vec::new();
    for k in keys {
        if !unique.contains(k) {
            unique.push(k);
        }
    }
    let mut n = 16usize;
    while unique.len() >= n - (n >> 2) {
        n *= 2;
    }
    unique.sort_by_key(|k| {
        let h = java_hash(k);
        let spread = (h ^ ((h as u32) >> 16) as i32) & 0x7fff_ffff;
        (spread as usize) & (n - 1)
    });
    unique
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_matches_java() {
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("a"), 97);
        assert_eq!(java_hash("version"), 351_608_024);
        assert_eq!(java_hash("10"), 1567);
    }

    #[test]
    fn partition_state_order() {
        let keys = [
            "version",
            "leader",
            "leader_epoch",
            "controller_epoch",
            "isr",
        ];
        assert_eq!(
            scala_immutable_order(&keys),
            [
                "controller_epoch",
                "leader",
                "version",
                "leader_epoch",
                "isr"
            ]
        );
        assert_eq!(scala_immutable_order(&keys[..4]), keys[..4]);
    }

    #[test]
    fn mutable_orders() {
        let topic = [
            "version",
            "partitions",
            "adding_replicas",
            "removing_replicas",
            "topic_id",
        ];
        assert_eq!(
            scala_mutable_order(&topic, literal_capacity(4)),
            [
                "partitions",
                "topic_id",
                "adding_replicas",
                "removing_replicas",
                "version"
            ]
        );
        assert_eq!(table_size_for(16), 16);
        assert_eq!(table_size_for(6), 8);
        assert_eq!(table_size_for(9), 16);
    }
}
