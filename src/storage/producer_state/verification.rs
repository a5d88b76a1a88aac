//! Transaction verification on the partition side (KIP-890 part 1; Kafka's `VerificationGuard`
//! and `VerificationStateEntry`): before a leader appends the first transactional batch of a
//! producer that has no ongoing transaction in the partition, it asks the transaction
//! coordinator whether the partition is in the producer's transaction. The question is tied to
//! a [`VerificationGuard`] kept here; the append that follows must bring the same guard back.
//!
//! Why a unique guard and not a flag: between the coordinator's "yes" and the append, the
//! transaction may be aborted (its marker lands here) and a new one begun that does not include
//! this partition. The marker clears the entry, so the late append's guard matches nothing and
//! it is refused (INVALID_TXN_STATE) instead of opening a transaction the coordinator does not
//! know, which would pin the last stable offset forever (a hanging transaction).
//!
//! An entry lives from the first unverified batch until a transactional batch or marker of the
//! producer is appended, or until `producer.id.expiration.ms` after it was made. It also keeps
//! the lowest sequence seen while verifying: a batch above it is refused as out of order, so a
//! retried lower batch is never overtaken by a higher one that happened to verify first.

use std::sync::atomic::{AtomicU64, Ordering};

use super::manager::ProducerStateManager;

/// A unique token of one verification (Kafka's `VerificationGuard`). The sentinel stands for
/// "no verification" and verifies nothing, not even itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VerificationGuard(u64);

/// Guards are unique in the process (Kafka's global counter): 0 is the sentinel.
static NEXT_GUARD: AtomicU64 = AtomicU64::new(1);

impl VerificationGuard {
    /// No verification: what a producer with an ongoing transaction gets.
    pub const SENTINEL: VerificationGuard = VerificationGuard(0);

    fn next() -> Self {
        VerificationGuard(NEXT_GUARD.fetch_add(1, Ordering::Relaxed))
    }

    /// Whether `request_guard` (what an append brings) is this guard, and a real one.
    pub fn verify(self, request_guard: VerificationGuard) -> bool {
        request_guard != Self::SENTINEL && request_guard == self
    }
}

/// One producer's verification in progress (Kafka's `VerificationStateEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationStateEntry {
    /// When it was made: it expires `producer.id.expiration.ms` later.
    pub timestamp_ms: i64,
    pub guard: VerificationGuard,
    /// The lowest first sequence of the producer's batches seen while verifying, at `epoch`.
    pub lowest_sequence: i32,
    pub epoch: i16,
}

impl VerificationStateEntry {
    /// A lower sequence at the same epoch lowers the bar; a newer epoch starts over.
    fn maybe_update_lowest_sequence_and_epoch(&mut self, sequence: i32, epoch: i16) {
        if epoch == self.epoch && sequence < self.lowest_sequence {
            self.lowest_sequence = sequence;
        }
        if epoch > self.epoch {
            self.epoch = epoch;
            self.lowest_sequence = sequence;
        }
    }
}

impl ProducerStateManager {
    /// The producer's verification entry, made now if it has none, with `sequence` and `epoch`
    /// taken into its lowest sequence; its guard (Kafka's `maybeCreateVerificationStateEntry`).
    pub fn maybe_create_verification_state_entry(
        &mut self,
        producer_id: i64,
        sequence: i32,
        epoch: i16,
        now_ms: i64,
    ) -> VerificationGuard {
        let entry = self
            .verification_states_mut()
            .entry(producer_id)
            .or_insert_with(|| VerificationStateEntry {
                timestamp_ms: now_ms,
                guard: VerificationGuard::next(),
                lowest_sequence: sequence,
                epoch,
            });
        entry.maybe_update_lowest_sequence_and_epoch(sequence, epoch);
        entry.guard
    }

    pub fn verification_state_entry(&self, producer_id: i64) -> Option<&VerificationStateEntry> {
        self.verification_states().get(&producer_id)
    }

    /// The producer's guard, or the sentinel when it has no entry.
    pub fn verification_guard(&self, producer_id: i64) -> VerificationGuard {
        self.verification_state_entry(producer_id)
            .map_or(VerificationGuard::SENTINEL, |e| e.guard)
    }

    /// Forgets the producer's entry: a transactional batch or marker of it was appended.
    pub fn clear_verification_state_entry(&mut self, producer_id: i64) {
        self.verification_states_mut().remove(&producer_id);
    }

    /// Drops the entries made `expiration_ms` or longer before `now_ms`.
    pub(super) fn remove_expired_verification_states(&mut self, now_ms: i64, expiration_ms: i64) {
        self.verification_states_mut()
            .retain(|_, e| now_ms.saturating_sub(e.timestamp_ms) < expiration_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager() -> (tempfile::TempDir, ProducerStateManager) {
        let dir = tempfile::tempdir().unwrap();
        let m = ProducerStateManager::new(dir.path(), "t-0".into(), 1_000).unwrap();
        (dir, m)
    }

    #[test]
    fn the_sentinel_verifies_nothing_and_each_guard_only_itself() {
        let a = VerificationGuard::next();
        let b = VerificationGuard::next();
        assert!(a.verify(a));
        assert!(!a.verify(b));
        assert!(!a.verify(VerificationGuard::SENTINEL));
        assert!(!VerificationGuard::SENTINEL.verify(VerificationGuard::SENTINEL));
    }

    #[test]
    fn an_entry_keeps_its_guard_and_the_lowest_sequence_of_its_newest_epoch() {
        let (_dir, mut m) = manager();
        let guard = m.maybe_create_verification_state_entry(7, 5, 1, 100);
        assert_ne!(guard, VerificationGuard::SENTINEL);
        assert_eq!(m.maybe_create_verification_state_entry(7, 3, 1, 200), guard);
        assert_eq!(m.maybe_create_verification_state_entry(7, 9, 1, 200), guard);
        let entry = m.verification_state_entry(7).unwrap();
        assert_eq!(
            (entry.lowest_sequence, entry.epoch, entry.timestamp_ms),
            (3, 1, 100)
        );
        // An older epoch changes nothing; a newer one starts over.
        m.maybe_create_verification_state_entry(7, 0, 0, 200);
        assert_eq!(m.verification_state_entry(7).unwrap().lowest_sequence, 3);
        m.maybe_create_verification_state_entry(7, 8, 2, 200);
        let entry = m.verification_state_entry(7).unwrap();
        assert_eq!((entry.lowest_sequence, entry.epoch), (8, 2));
        assert_eq!(m.verification_guard(7), guard);
        m.clear_verification_state_entry(7);
        assert_eq!(m.verification_guard(7), VerificationGuard::SENTINEL);
        // A new entry has a new guard: a late answer to the old question verifies nothing.
        assert_ne!(m.maybe_create_verification_state_entry(7, 0, 2, 300), guard);
    }

    #[test]
    fn entries_expire_with_the_producer_id_expiration() {
        let (_dir, mut m) = manager();
        m.maybe_create_verification_state_entry(1, 0, 0, 0);
        m.maybe_create_verification_state_entry(2, 0, 0, 500);
        m.remove_expired_producers(999);
        assert!(m.verification_state_entry(1).is_some());
        m.remove_expired_producers(1_000);
        assert!(m.verification_state_entry(1).is_none());
        assert!(m.verification_state_entry(2).is_some());
    }
}
