//! The fetch session cache (KIP-227; Kafka's `FetchSessionCache` and `FetchSessionCacheShard`):
//! the incremental fetch sessions this broker keeps, in 8 shards of
//! `max.incremental.fetch.session.cache.slots / 8` sessions each, and their metrics.
//!
//! A new session goes to the next shard in turn; its id is random, nonzero, unique, and inside
//! that shard's id range (`i32::MAX / 8` ids each), so an id names its shard. A full shard makes
//! room only by eviction, and only within itself (Kafka's `tryEvict`):
//! - the least recently used session, if unused for more than 120 s
//!   ([`MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS`]), whoever asks;
//! - else the smallest evictable session by (privileged, partitions, id), if the new session's
//!   key (privileged, partitions, 0) is not smaller. A session is evictable by a privileged
//!   (follower) newcomer when it is not privileged itself or is older than 120 s, and by
//!   anyone only when older than 120 s. So a consumer never evicts a young session, a follower
//!   evicts the smallest consumer session whatever its size (a privileged key is above every
//!   unprivileged one), and among old sessions a bigger one beats a smaller one.
//!
//! A session's eviction keys use its size when it was last touched (`cached_size`), as Kafka's
//! do. Lock order: a shard, then a session in it; a session is locked alone by the contexts in
//! `fetch_session`.
//!
//! Metrics (`kafka.server:type=FetchSessionCache`): the gauges NumIncrementalFetchSessions and
//! NumIncrementalFetchPartitionsCached, summed over the shards, and the meter
//! IncrementalFetchSessionEvictionsPerSec.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rand::Rng;

use crate::cluster::sync::lock;
use crate::metrics::{MBeanName, Meter, MetricSample, MetricsSource, Reading};

use super::fetch_session::{CachedPartitions, FetchSession};

/// Kafka's `NumFetchSessionCacheShards`.
pub(crate) const NUM_FETCH_SESSION_CACHE_SHARDS: usize = 8;

/// Kafka's `KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS`: how long a session is safe
/// from eviction by others, and how long unused before anyone may evict it (not a config key
/// in Kafka 3.9).
pub(crate) const MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: i64 = 120_000;

/// Kafka's `EvictableKey`, ordered by its fields in turn.
type EvictableKey = (bool, usize, i32);

/// A shard's bookkeeping of one session.
#[derive(Debug)]
struct Entry {
    session: Arc<Mutex<FetchSession>>,
    privileged: bool,
    creation_ms: i64,
    last_used_ms: i64,
    /// The session's size when last touched; `None` before the first touch.
    cached_size: Option<usize>,
}

impl Entry {
    fn evictable_key(&self, id: i32) -> Option<EvictableKey> {
        self.cached_size.map(|size| (self.privileged, size, id))
    }
}

/// One shard: at most `max_entries` sessions with ids in `[shard * range, (shard + 1) * range)`.
#[derive(Debug, Default)]
struct ShardState {
    sessions: HashMap<i32, Entry>,
    /// (last used, id), oldest first.
    last_used: BTreeMap<(i64, i32), i32>,
    evictable_by_all: BTreeMap<EvictableKey, i32>,
    evictable_by_privileged: BTreeMap<EvictableKey, i32>,
    num_partitions: usize,
}

/// A shard of the cache (Kafka's `FetchSessionCacheShard`); see the module doc.
#[derive(Debug)]
pub(crate) struct FetchSessionCacheShard {
    max_entries: usize,
    eviction_ms: i64,
    session_id_range: i32,
    shard_num: i32,
    evictions: Arc<Meter>,
    state: Mutex<ShardState>,
}

impl FetchSessionCacheShard {
    fn new(
        max_entries: usize,
        eviction_ms: i64,
        session_id_range: i32,
        shard_num: i32,
        evictions: Arc<Meter>,
    ) -> Self {
        FetchSessionCacheShard {
            max_entries,
            eviction_ms,
            session_id_range,
            shard_num,
            evictions,
            state: Mutex::new(ShardState::default()),
        }
    }

    /// The session with this id, if the shard holds it.
    pub(crate) fn get(&self, session_id: i32) -> Option<Arc<Mutex<FetchSession>>> {
        lock(&self.state)
            .sessions
            .get(&session_id)
            .map(|e| Arc::clone(&e.session))
    }

    /// Creates a session of `partitions` (`size` of them) if there is room or room can be made
    /// by eviction; its id, or 0 (no session) when not.
    pub(crate) fn maybe_create_session(
        &self,
        now: i64,
        privileged: bool,
        size: usize,
        uses_topic_ids: bool,
        partitions: impl FnOnce() -> CachedPartitions,
    ) -> i32 {
        let mut state = lock(&self.state);
        if state.sessions.len() >= self.max_entries
            && !self.try_evict(&mut state, privileged, (privileged, size, 0), now)
        {
            return 0;
        }
        let id = self.new_session_id(&state);
        let session = FetchSession::new(id, uses_topic_ids, partitions());
        state.sessions.insert(
            id,
            Entry {
                session: Arc::new(Mutex::new(session)),
                privileged,
                creation_ms: now,
                last_used_ms: now,
                cached_size: None,
            },
        );
        self.touch_locked(&mut state, id, now);
        id
    }

    fn new_session_id(&self, state: &ShardState) -> i32 {
        let low = (self.shard_num * self.session_id_range).max(1);
        let high = (self.shard_num + 1).saturating_mul(self.session_id_range);
        let mut rng = rand::rng();
        loop {
            let id = rng.random_range(low..high);
            if !state.sessions.contains_key(&id) {
                return id;
            }
        }
    }

    /// Kafka's `tryEvict`; see the module doc.
    fn try_evict(
        &self,
        state: &mut ShardState,
        privileged: bool,
        key: EvictableKey,
        now: i64,
    ) -> bool {
        let Some((&(last_used_ms, _), &stale)) = state.last_used.first_key_value() else {
            return false;
        };
        let victim = if now - last_used_ms > self.eviction_ms {
            stale
        } else {
            let map = if privileged {
                &state.evictable_by_privileged
            } else {
                &state.evictable_by_all
            };
            match map.first_key_value() {
                Some((first, &id)) if key >= *first => id,
                _ => return false,
            }
        };
        Self::remove_locked(state, victim);
        self.evictions.mark(1);
        true
    }

    /// Removes the session with this id; whether there was one.
    pub(crate) fn remove(&self, session_id: i32) -> bool {
        Self::remove_locked(&mut lock(&self.state), session_id)
    }

    fn remove_locked(state: &mut ShardState, session_id: i32) -> bool {
        let Some(entry) = state.sessions.remove(&session_id) else {
            return false;
        };
        state.last_used.remove(&(entry.last_used_ms, session_id));
        if let Some(key) = entry.evictable_key(session_id) {
            state.evictable_by_all.remove(&key);
            state.evictable_by_privileged.remove(&key);
        }
        state.num_partitions -= entry.cached_size.unwrap_or(0);
        true
    }

    /// Marks the session used now and refreshes its eviction keys from its size (Kafka's
    /// `touch`).
    pub(crate) fn touch(&self, session_id: i32, now: i64) {
        self.touch_locked(&mut lock(&self.state), session_id, now);
    }

    fn touch_locked(&self, state: &mut ShardState, id: i32, now: i64) {
        let ShardState {
            sessions,
            last_used,
            evictable_by_all,
            evictable_by_privileged,
            num_partitions,
        } = state;
        let Some(entry) = sessions.get_mut(&id) else {
            return;
        };
        last_used.remove(&(entry.last_used_ms, id));
        entry.last_used_ms = now;
        last_used.insert((now, id), id);
        if let Some(old) = entry.evictable_key(id) {
            evictable_by_all.remove(&old);
            evictable_by_privileged.remove(&old);
            *num_partitions -= old.1;
        }
        let size = lock(&entry.session).len();
        entry.cached_size = Some(size);
        let key = (entry.privileged, size, id);
        let aged = now - entry.creation_ms > self.eviction_ms;
        if !entry.privileged || aged {
            evictable_by_privileged.insert(key, id);
        }
        if aged {
            evictable_by_all.insert(key, id);
        }
        *num_partitions += size;
    }

    fn size(&self) -> usize {
        lock(&self.state).sessions.len()
    }

    fn total_partitions(&self) -> usize {
        lock(&self.state).num_partitions
    }
}

/// The broker's fetch sessions: [`NUM_FETCH_SESSION_CACHE_SHARDS`] shards, filled in turn.
#[derive(Debug)]
pub(crate) struct FetchSessionCache {
    shards: Vec<FetchSessionCacheShard>,
    next_shard: AtomicUsize,
    evictions: Arc<Meter>,
}

impl FetchSessionCache {
    /// A cache of `slots` sessions (`max.incremental.fetch.session.cache.slots`) over Kafka's 8
    /// shards, evicting by Kafka's 120 s rule.
    pub(crate) fn new(slots: usize) -> Self {
        Self::with_shards(
            NUM_FETCH_SESSION_CACHE_SHARDS,
            slots,
            MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
        )
    }

    /// A cache of `slots` sessions over `shards` shards (at least one), each holding
    /// `slots / shards`, and the given eviction time.
    pub(crate) fn with_shards(shards: usize, slots: usize, eviction_ms: i64) -> Self {
        let shards = shards.max(1);
        let count = i32::try_from(shards).unwrap_or(i32::MAX);
        let range = i32::MAX / count;
        let evictions = Arc::new(Meter::new());
        FetchSessionCache {
            shards: (0..count)
                .map(|n| {
                    FetchSessionCacheShard::new(
                        slots / shards,
                        eviction_ms,
                        range,
                        n,
                        Arc::clone(&evictions),
                    )
                })
                .collect(),
            next_shard: AtomicUsize::new(0),
            evictions,
        }
    }

    /// The shard whose id range holds `session_id`.
    pub(crate) fn shard_of(&self, session_id: i32) -> Option<&FetchSessionCacheShard> {
        let range = self.shards.first()?.session_id_range;
        let index = usize::try_from(session_id / range).ok()?;
        self.shards.get(index)
    }

    /// The shard a new session goes to: each in turn.
    pub(crate) fn next_shard(&self) -> &FetchSessionCacheShard {
        let n = self.next_shard.fetch_add(1, Ordering::Relaxed) % self.shards.len();
        &self.shards[n]
    }

    /// NumIncrementalFetchSessions.
    pub(crate) fn num_sessions(&self) -> usize {
        self.shards.iter().map(FetchSessionCacheShard::size).sum()
    }

    /// NumIncrementalFetchPartitionsCached.
    pub(crate) fn num_partitions_cached(&self) -> usize {
        self.shards
            .iter()
            .map(FetchSessionCacheShard::total_partitions)
            .sum()
    }

    /// IncrementalFetchSessionEvictionsPerSec.
    #[cfg(test)]
    pub(crate) fn evictions(&self) -> &Meter {
        &self.evictions
    }
}

impl MetricsSource for FetchSessionCache {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        let name = |n| MBeanName::yammer("kafka.server", "FetchSessionCache", n, &[]);
        out.push(MetricSample {
            mbean: name("NumIncrementalFetchSessions"),
            reading: Reading::Gauge(self.num_sessions() as f64),
        });
        out.push(MetricSample {
            mbean: name("NumIncrementalFetchPartitionsCached"),
            reading: Reading::Gauge(self.num_partitions_cached() as f64),
        });
        out.push(MetricSample {
            mbean: name("IncrementalFetchSessionEvictionsPerSec"),
            reading: Reading::Meter(self.evictions.snapshot()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::fetch_session::CachedPartition;
    use crate::server::fetch_session::tests::partition;

    fn partitions(n: usize) -> CachedPartitions {
        let mut p = CachedPartitions::default();
        for i in 0..n {
            let request = partition("t", i32::try_from(i).unwrap(), 0);
            p.insert(request.key(), CachedPartition::new(request, None));
        }
        p
    }

    fn create(shard: &FetchSessionCacheShard, now: i64, privileged: bool, size: usize) -> i32 {
        shard.maybe_create_session(now, privileged, size, false, || partitions(size))
    }

    fn one_shard(slots: usize) -> FetchSessionCache {
        FetchSessionCache::with_shards(1, slots, 1000)
    }

    #[test]
    fn ids_are_nonzero_unique_and_name_their_shard() {
        let cache = FetchSessionCache::with_shards(8, 80, 1000);
        let mut ids = std::collections::HashSet::new();
        for _ in 0..80 {
            let id = create(cache.next_shard(), 0, false, 1);
            assert_ne!(id, 0);
            assert!(ids.insert(id));
            assert!(cache.shard_of(id).unwrap().get(id).is_some());
        }
        assert_eq!(cache.num_sessions(), 80);
        assert_eq!(cache.num_partitions_cached(), 80);
        // Every shard is full: a consumer cannot evict young sessions.
        assert_eq!(create(cache.next_shard(), 1, false, 1), 0);
    }

    #[test]
    fn consumers_do_not_evict_young_sessions_but_evict_stale_ones() {
        let cache = one_shard(2);
        let shard = cache.next_shard();
        let a = create(shard, 0, false, 5);
        let b = create(shard, 10, false, 5);
        assert_eq!(create(shard, 20, false, 50), 0, "young sessions stay");
        // Unused for more than the eviction time: the least recently used goes, whoever asks.
        shard.touch(b, 500);
        let c = create(shard, 1001, false, 1);
        assert_ne!(c, 0);
        assert!(shard.get(a).is_none(), "the stale session was evicted");
        assert!(shard.get(b).is_some());
        assert_eq!(cache.evictions().count(), 1);
        assert_eq!(cache.num_partitions_cached(), 6);
    }

    #[test]
    fn followers_evict_the_smallest_consumer_session() {
        let cache = one_shard(2);
        let shard = cache.next_shard();
        let small = create(shard, 0, false, 3);
        let big = create(shard, 0, false, 10);
        // A consumer evicts nothing young...
        assert_eq!(create(shard, 100, false, 1000), 0);
        // ...a follower, even a small one, evicts the smallest consumer session.
        let f = create(shard, 100, true, 1);
        assert_ne!(f, 0);
        assert!(shard.get(small).is_none());
        assert!(shard.get(big).is_some());
        // A young follower session is safe from another follower, even a bigger one, while
        // the consumer's can go.
        let f2 = create(shard, 200, true, 100);
        assert_ne!(f2, 0);
        assert!(shard.get(big).is_none());
        assert!(shard.get(f).is_some());
        assert_eq!(create(shard, 300, true, 1000), 0);
        assert_eq!(cache.evictions().count(), 2);
    }

    #[test]
    fn aged_sessions_are_evicted_by_bigger_ones() {
        let cache = one_shard(1);
        let shard = cache.next_shard();
        let old = create(shard, 0, true, 5);
        // Touched after its eviction time: evictable by all, but only by a bigger key.
        shard.touch(old, 1500);
        assert_eq!(
            create(shard, 1600, false, 6),
            0,
            "a consumer is below a follower"
        );
        assert_eq!(
            create(shard, 1600, true, 5),
            0,
            "(true, 5, 0) is below (true, 5, id)"
        );
        assert_ne!(create(shard, 1600, true, 6), 0);
        assert!(shard.get(old).is_none());
    }

    #[test]
    fn zero_slots_keep_no_session() {
        let cache = FetchSessionCache::new(0);
        assert_eq!(create(cache.next_shard(), 0, true, 1), 0);
        assert_eq!(cache.num_sessions(), 0);
    }
}
