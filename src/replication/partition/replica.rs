//! A follower as its leader sees it (Kafka's `Replica` and `ReplicaState`): its log end as its
//! last fetch reported it, and when it was last caught up, which decides whether it stays in
//! (or may join) the ISR.

use crate::cluster::BrokerId;

/// A log end not known yet: the follower has not fetched since this broker became leader.
pub(crate) const UNKNOWN_OFFSET: i64 = -1;

/// One follower's fetch state. Invariant: `last_caught_up_time_ms` only moves forward between
/// resets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Replica {
    pub broker_id: BrokerId,
    /// The follower's log end: the offset of its last fetch ([`UNKNOWN_OFFSET`] before one).
    pub log_end_offset: i64,
    /// The leader's log end when the follower last fetched.
    pub last_fetch_leader_log_end_offset: i64,
    /// When the follower last fetched (ms).
    pub last_fetch_time_ms: i64,
    /// The last time the follower's log end reached the leader's log end as it stood at some
    /// fetch (ms); 0 for never.
    pub last_caught_up_time_ms: i64,
    /// The follower's broker epoch, as its fetches (v15+) report it; -1 when not known.
    pub broker_epoch: i64,
    /// The follower's log start, as its last fetch reported it ([`UNKNOWN_OFFSET`] before
    /// one): a consumer is only pointed at a follower that still has the fetch offset.
    pub log_start_offset: i64,
}

impl Replica {
    /// A follower this leader has not heard from, in the ISR (caught up as of `now_ms`) or not.
    pub(crate) fn new(broker_id: BrokerId, now_ms: i64, in_sync: bool) -> Self {
        Replica {
            broker_id,
            log_end_offset: UNKNOWN_OFFSET,
            last_fetch_leader_log_end_offset: UNKNOWN_OFFSET,
            last_fetch_time_ms: 0,
            last_caught_up_time_ms: if in_sync { now_ms } else { 0 },
            broker_epoch: -1,
            log_start_offset: UNKNOWN_OFFSET,
        }
    }

    /// Kafka's `updateFetchStateOrThrow`: a fetch from `fetch_offset` by a follower whose log
    /// starts at `log_start_offset`, at `fetch_time_ms`, when the leader's log end was
    /// `leader_end_offset`. The follower counts as caught up at this
    /// fetch when it asked for the leader's end, and as of its previous fetch when it asked for
    /// at least the leader's end at that time (it had everything the leader had then).
    pub(crate) fn update_fetch_state(
        &mut self,
        fetch_offset: i64,
        fetch_time_ms: i64,
        leader_end_offset: i64,
        log_start_offset: i64,
    ) {
        if fetch_offset >= leader_end_offset {
            self.last_caught_up_time_ms = self.last_caught_up_time_ms.max(fetch_time_ms);
        } else if fetch_offset >= self.last_fetch_leader_log_end_offset {
            self.last_caught_up_time_ms = self.last_caught_up_time_ms.max(self.last_fetch_time_ms);
        }
        self.log_end_offset = fetch_offset;
        self.log_start_offset = log_start_offset;
        self.last_fetch_leader_log_end_offset = leader_end_offset;
        self.last_fetch_time_ms = fetch_time_ms;
    }

    /// Kafka's `isCaughtUp`: at the leader's end, or caught up within the last `max_lag_ms`.
    pub(crate) fn is_caught_up(
        &self,
        leader_end_offset: i64,
        now_ms: i64,
        max_lag_ms: i64,
    ) -> bool {
        self.log_end_offset == leader_end_offset
            || now_ms - self.last_caught_up_time_ms <= max_lag_ms
    }

    /// Kafka's `resetReplicaState` when this broker becomes leader or is re-elected at a new
    /// epoch: a new leader forgets what the follower fetched; a re-elected one keeps it. Either
    /// way an ISR member counts as caught up now, and another as never, so that one does not
    /// hold the high watermark back.
    pub(crate) fn reset(
        &mut self,
        now_ms: i64,
        leader_end_offset: i64,
        new_leader: bool,
        in_sync: bool,
    ) {
        if new_leader {
            *self = Replica::new(self.broker_id, now_ms, in_sync);
            return;
        }
        self.last_fetch_leader_log_end_offset = leader_end_offset;
        self.last_fetch_time_ms = if in_sync { now_ms } else { 0 };
        self.last_caught_up_time_ms = if in_sync { now_ms } else { 0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caught_up_at_the_leaders_end_or_at_its_previous_end() {
        let mut r = Replica::new(2, 0, false);
        assert!(!r.is_caught_up(10, 40_000, 30_000));
        // Behind the leader's end (10) at t=1000: not caught up at this fetch.
        r.update_fetch_state(5, 1_000, 10, 0);
        assert_eq!(r.last_caught_up_time_ms, 0);
        // Asks for 10, the leader's end at the previous fetch, while the leader is at 12 now:
        // caught up as of the previous fetch (t=1000).
        r.update_fetch_state(10, 2_000, 12, 0);
        assert_eq!(r.last_caught_up_time_ms, 1_000);
        // At the leader's end: caught up now.
        r.update_fetch_state(12, 3_000, 12, 0);
        assert_eq!(r.last_caught_up_time_ms, 3_000);
        assert!(r.is_caught_up(12, 100_000, 30_000), "at the leader's end");
        assert!(r.is_caught_up(20, 33_000, 30_000), "within the lag");
        assert!(!r.is_caught_up(20, 33_001, 30_000), "past the lag");
        // Falling behind never moves the time back.
        r.update_fetch_state(11, 4_000, 20, 0);
        assert_eq!(r.last_caught_up_time_ms, 3_000);
    }

    #[test]
    fn reset_forgets_the_fetch_for_a_new_leader_and_keeps_it_for_a_reelected_one() {
        let mut r = Replica::new(2, 0, false);
        r.update_fetch_state(7, 1_000, 7, 0);
        let mut reelected = r;
        reelected.reset(5_000, 9, false, true);
        assert_eq!(reelected.log_end_offset, 7);
        assert_eq!(reelected.last_caught_up_time_ms, 5_000);
        assert_eq!(reelected.last_fetch_leader_log_end_offset, 9);
        r.reset(5_000, 9, true, false);
        assert_eq!(r.log_end_offset, UNKNOWN_OFFSET);
        assert_eq!(r.last_caught_up_time_ms, 0);
    }
}
