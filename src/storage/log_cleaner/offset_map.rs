//! The cleaner's key → last offset map (Kafka's `SkimpyOffsetMap`): a fixed block of memory of
//! 24-byte slots, each a 16-byte hash of a key and the 8-byte offset of its latest record,
//! probed open-addressing style.
//!
//! Keys are never stored, only their hashes, so memory is bounded by
//! `log.cleaner.dedupe.buffer.size / log.cleaner.threads` whatever the key sizes. Kafka hashes
//! with MD5; the map lives only in memory for one cleaning, so kcli uses two independently
//! keyed SipHash-1-3 digests (128 bits, like MD5's), which needs no extra dependency. A
//! collision of two keys' 128-bit hashes would drop the older key's value, as it would in
//! Kafka.

use std::hash::{BuildHasher, Hasher};

/// Bytes of a key's hash.
const HASH_SIZE: usize = 16;
/// A slot: hash then big-endian offset.
const BYTES_PER_ENTRY: usize = HASH_SIZE + 8;

/// Invariant: `entries <= slots`; a slot is empty when all its 24 bytes are zero.
#[derive(Debug)]
pub struct SkimpyOffsetMap {
    bytes: Vec<u8>,
    slots: usize,
    entries: usize,
    lookups: u64,
    probes: u64,
    latest_offset: i64,
    hashers: (
        std::collections::hash_map::RandomState,
        std::collections::hash_map::RandomState,
    ),
}

impl SkimpyOffsetMap {
    /// A map in `memory` bytes (`memory / 24` slots). The memory is allocated at the first use
    /// (a broker without compacted topics never takes it), zeroed, so pages the probes never
    /// touch cost nothing.
    pub fn new(memory: usize) -> Self {
        let slots = memory / BYTES_PER_ENTRY;
        SkimpyOffsetMap {
            bytes: Vec::new(),
            slots,
            entries: 0,
            lookups: 0,
            probes: 0,
            latest_offset: -1,
            hashers: (Default::default(), Default::default()),
        }
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Entries put so far.
    pub fn size(&self) -> usize {
        self.entries
    }

    /// The offset of the last `put` (or [`update_latest_offset`](Self::update_latest_offset)),
    /// -1 after a clear.
    pub fn latest_offset(&self) -> i64 {
        self.latest_offset
    }

    pub fn update_latest_offset(&mut self, offset: i64) {
        self.latest_offset = offset;
    }

    /// The share of slots in use.
    pub fn utilization(&self) -> f64 {
        if self.slots == 0 {
            0.0
        } else {
            self.entries as f64 / self.slots as f64
        }
    }

    /// Empties the map: its block is released, and a fresh zeroed one taken at the next use
    /// (cheaper than writing zeros over the touched pages).
    pub fn clear(&mut self) {
        self.bytes = Vec::new();
        self.entries = 0;
        self.lookups = 0;
        self.probes = 0;
        self.latest_offset = -1;
    }

    /// Records `offset` as the latest for `key`. `false` (and no change) when the map is full
    /// and the key is new; the cleaner stops filling well before that (the load factor).
    pub fn put(&mut self, key: &[u8], offset: i64) -> bool {
        if self.slots == 0 {
            return false;
        }
        self.ensure_allocated();
        self.lookups += 1;
        let hash = self.hash(key);
        let mut attempt = 0;
        let mut pos = self.position_of(&hash, attempt);
        while !self.is_empty(pos) {
            if self.bytes[pos..pos + HASH_SIZE] == hash {
                self.bytes[pos + HASH_SIZE..pos + BYTES_PER_ENTRY]
                    .copy_from_slice(&offset.to_be_bytes());
                self.latest_offset = offset;
                return true;
            }
            attempt += 1;
            if attempt >= self.max_attempts() {
                return false;
            }
            pos = self.position_of(&hash, attempt);
        }
        self.bytes[pos..pos + HASH_SIZE].copy_from_slice(&hash);
        self.bytes[pos + HASH_SIZE..pos + BYTES_PER_ENTRY].copy_from_slice(&offset.to_be_bytes());
        self.latest_offset = offset;
        self.entries += 1;
        true
    }

    /// The latest offset recorded for `key`, -1 when none.
    pub fn get(&mut self, key: &[u8]) -> i64 {
        if self.slots == 0 {
            return -1;
        }
        self.ensure_allocated();
        self.lookups += 1;
        let hash = self.hash(key);
        for attempt in 0..self.max_attempts() {
            let pos = self.position_of(&hash, attempt);
            if self.is_empty(pos) {
                return -1;
            }
            if self.bytes[pos..pos + HASH_SIZE] == hash {
                let mut offset = [0u8; 8];
                offset.copy_from_slice(&self.bytes[pos + HASH_SIZE..pos + BYTES_PER_ENTRY]);
                return i64::from_be_bytes(offset);
            }
        }
        -1
    }

    fn ensure_allocated(&mut self) {
        if self.bytes.len() != self.slots * BYTES_PER_ENTRY {
            self.bytes = vec![0; self.slots * BYTES_PER_ENTRY];
        }
    }

    /// Once the hash's bytes are used up probing goes linear; this bounds a search of a full
    /// map (Kafka's `maxAttempts`).
    fn max_attempts(&self) -> usize {
        self.slots + HASH_SIZE - 4
    }

    fn is_empty(&self, pos: usize) -> bool {
        self.bytes[pos..pos + BYTES_PER_ENTRY]
            .iter()
            .all(|b| *b == 0)
    }

    /// Kafka's `positionOf`: the big-endian int at byte `min(attempt, 12)` of the hash, plus
    /// `attempt - 12` once past it, modulo the slots.
    fn position_of(&mut self, hash: &[u8; HASH_SIZE], attempt: usize) -> usize {
        self.probes += 1;
        let at = attempt.min(HASH_SIZE - 4);
        let word = i32::from_be_bytes([hash[at], hash[at + 1], hash[at + 2], hash[at + 3]]);
        let linear = i32::try_from(attempt.saturating_sub(HASH_SIZE - 4)).unwrap_or(i32::MAX);
        let probe = word.wrapping_add(linear);
        // Kafka's `Utils.abs`: MIN_VALUE maps to 0.
        let abs = if probe == i32::MIN {
            0
        } else {
            probe.unsigned_abs()
        } as usize;
        (abs % self.slots) * BYTES_PER_ENTRY
    }

    fn hash(&self, key: &[u8]) -> [u8; HASH_SIZE] {
        let digest = |state: &std::collections::hash_map::RandomState| {
            let mut h = state.build_hasher();
            h.write(key);
            h.finish()
        };
        let mut out = [0u8; HASH_SIZE];
        out[..8].copy_from_slice(&digest(&self.hashers.0).to_be_bytes());
        out[8..].copy_from_slice(&digest(&self.hashers.1).to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_offset_per_key_and_the_latest_put() {
        let mut map = SkimpyOffsetMap::new(24 * 1000);
        assert_eq!(map.slots(), 1000);
        for i in 0..500i64 {
            assert!(map.put(format!("key{}", i % 100).as_bytes(), i));
        }
        assert_eq!(map.size(), 100);
        assert_eq!(map.latest_offset(), 499);
        for k in 0..100i64 {
            assert_eq!(map.get(format!("key{k}").as_bytes()), 400 + k);
        }
        assert_eq!(map.get(b"absent"), -1);
        map.update_latest_offset(600);
        assert_eq!(map.latest_offset(), 600);
        map.clear();
        assert_eq!((map.size(), map.latest_offset()), (0, -1));
        assert_eq!(map.get(b"key1"), -1);
    }

    #[test]
    fn a_full_map_refuses_new_keys_but_updates_known_ones() {
        let mut map = SkimpyOffsetMap::new(24 * 8);
        for i in 0..8i64 {
            assert!(map.put(format!("k{i}").as_bytes(), i));
        }
        assert!(!map.put(b"one too many", 9));
        assert!(map.put(b"k3", 10));
        assert_eq!(map.get(b"k3"), 10);
        assert_eq!(map.get(b"one too many"), -1);
        assert!((map.utilization() - 1.0).abs() < f64::EPSILON);
        assert!(!SkimpyOffsetMap::new(10).put(b"k", 1));
    }
}
