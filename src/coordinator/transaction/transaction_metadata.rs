//! One transactional id's metadata in the coordinator (Kafka 3.9's `TransactionMetadata`), and
//! the two-phase way it changes: a `prepare_*` call checks the move against the current state,
//! marks it pending and returns the target ([`TxnTransitMetadata`]), which is appended to
//! `__transaction_state`; once the append is committed, [`TransactionMetadata::complete_transition_to`]
//! installs it, after checking that it is the pending one and keeps the invariants below. While
//! a move is pending no other may be prepared: the coordinator answers CONCURRENT_TRANSACTIONS.
//!
//! Invariants a completed move keeps (Kafka's `completeTransitionTo`):
//! - to Empty (InitProducerId): the same epoch, the epoch plus one, or epoch 0 of a new producer
//!   id; no partitions; no start time;
//! - to Ongoing (AddPartitionsToTxn): the same producer id and epoch and timeout; the partitions
//!   only grow;
//! - to PrepareCommit or PrepareAbort (EndTxn): the same producer id, epoch, timeout, partitions
//!   and start time;
//! - to CompleteCommit or CompleteAbort (the markers written): the same producer id, epoch and
//!   timeout, and a start time; the partitions are cleared;
//! - PrepareEpochFence and Dead are never completed: a fence moves on to PrepareAbort, and an
//!   expired id leaves the cache instead.
//!
//! A producer epoch stops one short of `i16::MAX`, so the coordinator can always fence the last
//! producer by bumping it (Kafka's `isEpochExhausted`).

use std::collections::BTreeSet;

use crate::cluster::TopicPartition;

use super::transaction_state::TransactionState;

/// Kafka's `RecordBatch.NO_PRODUCER_EPOCH`.
pub(crate) const NO_PRODUCER_EPOCH: i16 = -1;
/// Kafka's `RecordBatch.NO_PRODUCER_ID`.
pub(crate) const NO_PRODUCER_ID: i64 = -1;

/// Why a move was refused; the coordinator never prepares one of these on purpose (Kafka
/// throws `IllegalStateException`), so each is a bug or a corrupt log, answered as an unknown
/// server error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("transactional id {id}: cannot prepare {to:?} while {pending:?} is pending")]
    AlreadyPending {
        id: String,
        to: TransactionState,
        pending: TransactionState,
    },
    #[error("transactional id {id}: {to:?} cannot follow {from:?}")]
    InvalidTransition {
        id: String,
        from: TransactionState,
        to: TransactionState,
    },
    #[error("transactional id {id}: illegal producer id {producer_id} or epoch {epoch} for {to:?}")]
    IllegalProducer {
        id: String,
        producer_id: i64,
        epoch: i16,
        to: TransactionState,
    },
    #[error("transactional id {id}: producer id {producer_id} has no epochs left")]
    EpochExhausted { id: String, producer_id: i64 },
    #[error(
        "transactional id {id}: completing {to:?}, which is not the pending move ({pending:?})"
    )]
    NotPending {
        id: String,
        to: TransactionState,
        pending: Option<TransactionState>,
    },
    #[error("transactional id {id}: completing {to:?} would break its invariants")]
    BrokenInvariant { id: String, to: TransactionState },
    #[error("transactional id {id}: a transaction is open, its producer id cannot rotate")]
    TransactionOpen { id: String },
}

/// Whether the producer epoch cannot be bumped again without leaving no room to fence.
pub(crate) fn is_epoch_exhausted(epoch: i16) -> bool {
    epoch >= i16::MAX - 1
}

/// The target of a prepared move: what is appended to the log and, once committed, installed
/// (Kafka's `TxnTransitMetadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnTransitMetadata {
    pub producer_id: i64,
    pub last_producer_id: i64,
    pub producer_epoch: i16,
    pub last_producer_epoch: i16,
    pub txn_timeout_ms: i32,
    pub state: TransactionState,
    pub partitions: BTreeSet<TopicPartition>,
    pub txn_start_timestamp_ms: i64,
    pub txn_last_update_timestamp_ms: i64,
}

/// What InitProducerId's epoch bump decided (Kafka's `prepareIncrementProducerEpoch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EpochBump {
    /// The move to Empty at the bumped (or, for a retry, the current) epoch.
    Prepared(TxnTransitMetadata),
    /// The producer's expected epoch is neither the current nor the last one: it was fenced.
    Fenced,
}

/// One transactional id; see the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionMetadata {
    pub transactional_id: String,
    pub producer_id: i64,
    /// The producer id before the last rotation; not logged, so -1 after a load.
    pub last_producer_id: i64,
    pub producer_epoch: i16,
    /// The epoch before the last bump, so a retried InitProducerId gets the same answer; not
    /// logged, so -1 after a load.
    pub last_producer_epoch: i16,
    pub txn_timeout_ms: i32,
    pub state: TransactionState,
    pub partitions: BTreeSet<TopicPartition>,
    /// When the open transaction began (its first partition added); -1 when none is open.
    pub txn_start_timestamp_ms: i64,
    /// When this id last changed; what expiry measures.
    pub txn_last_update_timestamp_ms: i64,
    /// The move prepared and not yet completed.
    pub pending_state: Option<TransactionState>,
    /// A fence's append failed: the next fence reuses the epoch it bumped to, which no client
    /// was ever given (Kafka's KAFKA-9666 rule).
    pub has_failed_epoch_fence: bool,
}

impl TransactionMetadata {
    /// A new id, in Empty with no producer epoch yet.
    pub fn new(
        transactional_id: &str,
        producer_id: i64,
        txn_timeout_ms: i32,
        now_ms: i64,
    ) -> TransactionMetadata {
        TransactionMetadata {
            transactional_id: transactional_id.to_string(),
            producer_id,
            last_producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            last_producer_epoch: NO_PRODUCER_EPOCH,
            txn_timeout_ms,
            state: TransactionState::Empty,
            partitions: BTreeSet::new(),
            txn_start_timestamp_ms: -1,
            txn_last_update_timestamp_ms: now_ms,
            pending_state: None,
            has_failed_epoch_fence: false,
        }
    }

    /// Whether a move is pending.
    pub fn pending_transition_in_progress(&self) -> bool {
        self.pending_state.is_some()
    }

    /// Whether a transaction is open or being completed.
    pub fn has_pending_transaction(&self) -> bool {
        matches!(
            self.state,
            TransactionState::Ongoing
                | TransactionState::PrepareAbort
                | TransactionState::PrepareCommit
        )
    }

    /// InitProducerId on a known producer id: bumps the epoch, or repeats the last answer for a
    /// retry (`expected_epoch` the last epoch), or refuses a fenced producer.
    pub fn prepare_increment_producer_epoch(
        &mut self,
        new_txn_timeout_ms: i32,
        expected_epoch: Option<i16>,
        now_ms: i64,
    ) -> Result<EpochBump, TransitionError> {
        if is_epoch_exhausted(self.producer_epoch) {
            return Err(TransitionError::EpochExhausted {
                id: self.transactional_id.clone(),
                producer_id: self.producer_id,
            });
        }
        let bumped = self.producer_epoch + 1;
        let (epoch, last_epoch) = match expected_epoch {
            None => (bumped, NO_PRODUCER_EPOCH),
            Some(expected)
                if self.producer_epoch == NO_PRODUCER_EPOCH || expected == self.producer_epoch =>
            {
                (bumped, self.producer_epoch)
            }
            Some(expected) if expected == self.last_producer_epoch => {
                (self.producer_epoch, self.last_producer_epoch)
            }
            Some(_) => return Ok(EpochBump::Fenced),
        };
        self.prepare_transition_to(
            TransactionState::Empty,
            self.producer_id,
            epoch,
            last_epoch,
            new_txn_timeout_ms,
            BTreeSet::new(),
            -1,
            now_ms,
        )
        .map(EpochBump::Prepared)
    }

    /// InitProducerId when the epoch is exhausted (or a producer asks for a new id): a new
    /// producer id at epoch 0, remembering the old epoch when `record_last_epoch`.
    pub fn prepare_producer_id_rotation(
        &mut self,
        new_producer_id: i64,
        new_txn_timeout_ms: i32,
        now_ms: i64,
        record_last_epoch: bool,
    ) -> Result<TxnTransitMetadata, TransitionError> {
        if self.has_pending_transaction() {
            return Err(TransitionError::TransactionOpen {
                id: self.transactional_id.clone(),
            });
        }
        let last_epoch = if record_last_epoch {
            self.producer_epoch
        } else {
            NO_PRODUCER_EPOCH
        };
        self.prepare_transition_to(
            TransactionState::Empty,
            new_producer_id,
            0,
            last_epoch,
            new_txn_timeout_ms,
            BTreeSet::new(),
            -1,
            now_ms,
        )
    }

    /// Fencing the current producer (InitProducerId during a transaction, or its timeout): the
    /// epoch bumped, unless a fence already failed to be written.
    pub fn prepare_fence_producer_epoch(&mut self) -> Result<TxnTransitMetadata, TransitionError> {
        if self.producer_epoch == i16::MAX {
            return Err(TransitionError::EpochExhausted {
                id: self.transactional_id.clone(),
                producer_id: self.producer_id,
            });
        }
        let epoch = if self.has_failed_epoch_fence {
            self.producer_epoch
        } else {
            self.producer_epoch + 1
        };
        self.prepare_transition_to(
            TransactionState::PrepareEpochFence,
            self.producer_id,
            epoch,
            NO_PRODUCER_EPOCH,
            self.txn_timeout_ms,
            self.partitions.clone(),
            self.txn_start_timestamp_ms,
            self.txn_last_update_timestamp_ms,
        )
    }

    /// AddPartitionsToTxn or AddOffsetsToTxn: the transaction's partitions grow; a new one
    /// starts its clock.
    pub fn prepare_add_partitions(
        &mut self,
        added: &BTreeSet<TopicPartition>,
        now_ms: i64,
    ) -> Result<TxnTransitMetadata, TransitionError> {
        let start = match self.state {
            TransactionState::Empty
            | TransactionState::CompleteAbort
            | TransactionState::CompleteCommit => now_ms,
            _ => self.txn_start_timestamp_ms,
        };
        let partitions = self.partitions.union(added).cloned().collect();
        self.prepare_transition_to(
            TransactionState::Ongoing,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.txn_timeout_ms,
            partitions,
            start,
            now_ms,
        )
    }

    /// EndTxn: PrepareCommit or PrepareAbort, with every partition of the transaction.
    pub fn prepare_abort_or_commit(
        &mut self,
        to: TransactionState,
        now_ms: i64,
    ) -> Result<TxnTransitMetadata, TransitionError> {
        self.prepare_transition_to(
            to,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.txn_timeout_ms,
            self.partitions.clone(),
            self.txn_start_timestamp_ms,
            now_ms,
        )
    }

    /// Every marker written: CompleteCommit after PrepareCommit, else CompleteAbort.
    pub fn prepare_complete(&mut self, now_ms: i64) -> Result<TxnTransitMetadata, TransitionError> {
        let to = if self.state == TransactionState::PrepareCommit {
            TransactionState::CompleteCommit
        } else {
            TransactionState::CompleteAbort
        };
        // The Prepare state was written, so whatever fence it carried is in the log.
        self.has_failed_epoch_fence = false;
        self.prepare_transition_to(
            to,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.txn_timeout_ms,
            BTreeSet::new(),
            self.txn_start_timestamp_ms,
            now_ms,
        )
    }

    /// A partition's marker is written (or it needs none): it leaves the set the completion
    /// waits for. Only while the transaction is being completed (Kafka's `removePartition`).
    pub fn remove_partition(&mut self, tp: &TopicPartition) -> Result<(), TransitionError> {
        if !matches!(
            self.state,
            TransactionState::PrepareCommit | TransactionState::PrepareAbort
        ) {
            return Err(TransitionError::InvalidTransition {
                id: self.transactional_id.clone(),
                from: self.state,
                to: self.state,
            });
        }
        self.partitions.remove(tp);
        Ok(())
    }

    /// Expiry: the id goes (a tombstone), keeping its last update time.
    pub fn prepare_dead(&mut self) -> Result<TxnTransitMetadata, TransitionError> {
        self.prepare_transition_to(
            TransactionState::Dead,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.txn_timeout_ms,
            BTreeSet::new(),
            self.txn_start_timestamp_ms,
            self.txn_last_update_timestamp_ms,
        )
    }

    /// The checks every prepare makes, and the pending mark.
    #[allow(clippy::too_many_arguments)]
    fn prepare_transition_to(
        &mut self,
        to: TransactionState,
        producer_id: i64,
        epoch: i16,
        last_epoch: i16,
        txn_timeout_ms: i32,
        partitions: BTreeSet<TopicPartition>,
        txn_start_timestamp_ms: i64,
        now_ms: i64,
    ) -> Result<TxnTransitMetadata, TransitionError> {
        if let Some(pending) = self.pending_state {
            return Err(TransitionError::AlreadyPending {
                id: self.transactional_id.clone(),
                to,
                pending,
            });
        }
        if producer_id < 0 || (to != TransactionState::Dead && epoch < 0) {
            return Err(TransitionError::IllegalProducer {
                id: self.transactional_id.clone(),
                producer_id,
                epoch,
                to,
            });
        }
        if !to.can_enter_from(self.state) {
            return Err(TransitionError::InvalidTransition {
                id: self.transactional_id.clone(),
                from: self.state,
                to,
            });
        }
        self.pending_state = Some(to);
        Ok(TxnTransitMetadata {
            producer_id,
            last_producer_id: self.producer_id,
            producer_epoch: epoch,
            last_producer_epoch: last_epoch,
            txn_timeout_ms,
            state: to,
            partitions,
            txn_start_timestamp_ms,
            txn_last_update_timestamp_ms: now_ms,
        })
    }

    /// Installs a prepared move once its record is committed; see the module doc for what is
    /// checked. On an error the metadata is unchanged and the move stays pending.
    pub fn complete_transition_to(
        &mut self,
        transit: &TxnTransitMetadata,
    ) -> Result<(), TransitionError> {
        let to = transit.state;
        if self.pending_state != Some(to) {
            return Err(TransitionError::NotPending {
                id: self.transactional_id.clone(),
                to,
                pending: self.pending_state,
            });
        }
        let same_producer = transit.producer_epoch == self.producer_epoch
            && transit.producer_id == self.producer_id;
        let valid = match to {
            TransactionState::Empty => {
                let bump = transit.producer_epoch == self.producer_epoch.wrapping_add(1)
                    || (transit.producer_epoch == 0 && transit.producer_id != self.producer_id);
                (transit.producer_epoch == self.producer_epoch || bump)
                    && transit.partitions.is_empty()
                    && transit.txn_start_timestamp_ms == -1
            }
            TransactionState::Ongoing => {
                same_producer
                    && self.partitions.is_subset(&transit.partitions)
                    && self.txn_timeout_ms == transit.txn_timeout_ms
            }
            TransactionState::PrepareAbort | TransactionState::PrepareCommit => {
                same_producer
                    && self.partitions == transit.partitions
                    && self.txn_timeout_ms == transit.txn_timeout_ms
                    && self.txn_start_timestamp_ms == transit.txn_start_timestamp_ms
            }
            TransactionState::CompleteAbort | TransactionState::CompleteCommit => {
                same_producer
                    && self.txn_timeout_ms == transit.txn_timeout_ms
                    && transit.txn_start_timestamp_ms != -1
            }
            TransactionState::PrepareEpochFence | TransactionState::Dead => false,
        };
        if !valid {
            return Err(TransitionError::BrokenInvariant {
                id: self.transactional_id.clone(),
                to,
            });
        }
        match to {
            TransactionState::Empty => {
                self.txn_timeout_ms = transit.txn_timeout_ms;
                self.producer_epoch = transit.producer_epoch;
                self.last_producer_epoch = transit.last_producer_epoch;
                self.producer_id = transit.producer_id;
                self.last_producer_id = transit.last_producer_id;
            }
            TransactionState::Ongoing => {
                self.txn_start_timestamp_ms = transit.txn_start_timestamp_ms;
                self.partitions.extend(transit.partitions.iter().cloned());
            }
            TransactionState::CompleteAbort | TransactionState::CompleteCommit => {
                self.txn_start_timestamp_ms = transit.txn_start_timestamp_ms;
                self.partitions.clear();
            }
            _ => {}
        }
        self.txn_last_update_timestamp_ms = transit.txn_last_update_timestamp_ms;
        self.pending_state = None;
        self.state = to;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::TransactionState::*;
    use super::*;

    fn parts(ps: &[(&str, i32)]) -> BTreeSet<TopicPartition> {
        ps.iter()
            .map(|(t, p)| TopicPartition::new(*t, *p))
            .collect()
    }

    /// An id initialised once: epoch 0, Empty.
    fn initialised() -> TransactionMetadata {
        let mut m = TransactionMetadata::new("txn", 1000, 60_000, 1);
        let EpochBump::Prepared(t) = m.prepare_increment_producer_epoch(60_000, None, 2).unwrap()
        else {
            panic!("a new producer is never fenced");
        };
        m.complete_transition_to(&t).unwrap();
        m
    }

    #[test]
    fn a_commit_goes_through_every_state_and_clears_its_partitions() {
        let mut m = initialised();
        assert_eq!((m.producer_epoch, m.state), (0, Empty));
        let t = m.prepare_add_partitions(&parts(&[("a", 0)]), 10).unwrap();
        assert_eq!(t.txn_start_timestamp_ms, 10);
        m.complete_transition_to(&t).unwrap();
        // More partitions keep the start time.
        let t = m.prepare_add_partitions(&parts(&[("b", 1)]), 20).unwrap();
        assert_eq!(t.txn_start_timestamp_ms, 10);
        m.complete_transition_to(&t).unwrap();
        assert_eq!(m.partitions, parts(&[("a", 0), ("b", 1)]));
        let t = m.prepare_abort_or_commit(PrepareCommit, 30).unwrap();
        m.complete_transition_to(&t).unwrap();
        let t = m.prepare_complete(40).unwrap();
        assert_eq!(t.state, CompleteCommit);
        m.complete_transition_to(&t).unwrap();
        assert_eq!((m.state, m.partitions.len()), (CompleteCommit, 0));
        assert_eq!(m.txn_last_update_timestamp_ms, 40);
        // The next transaction starts its own clock.
        let t = m.prepare_add_partitions(&parts(&[("a", 0)]), 50).unwrap();
        assert_eq!(t.txn_start_timestamp_ms, 50);
    }

    #[test]
    fn a_second_move_waits_for_the_first_and_an_invalid_one_is_refused() {
        let mut m = initialised();
        let pending = m.prepare_add_partitions(&parts(&[("a", 0)]), 10).unwrap();
        assert!(matches!(
            m.prepare_abort_or_commit(PrepareAbort, 11),
            Err(TransitionError::AlreadyPending {
                pending: Ongoing,
                ..
            })
        ));
        m.complete_transition_to(&pending).unwrap();
        assert!(matches!(
            m.prepare_complete(12),
            Err(TransitionError::InvalidTransition {
                from: Ongoing,
                to: CompleteAbort,
                ..
            })
        ));
        assert!(!m.pending_transition_in_progress());
        // Completing what was not prepared changes nothing.
        let other = TxnTransitMetadata {
            state: PrepareCommit,
            ..pending
        };
        assert!(matches!(
            m.complete_transition_to(&other),
            Err(TransitionError::NotPending { pending: None, .. })
        ));
        assert_eq!(m.state, Ongoing);
    }

    #[test]
    fn init_producer_id_bumps_repeats_a_retry_and_fences_an_old_producer() {
        let mut m = initialised();
        let EpochBump::Prepared(t) = m
            .prepare_increment_producer_epoch(30_000, Some(0), 5)
            .unwrap()
        else {
            panic!("the current epoch bumps");
        };
        assert_eq!((t.producer_epoch, t.last_producer_epoch), (1, 0));
        m.complete_transition_to(&t).unwrap();
        assert_eq!(m.txn_timeout_ms, 30_000);
        // A retry of that call (it expects the epoch it had) gets the same epoch back.
        let EpochBump::Prepared(t) = m
            .prepare_increment_producer_epoch(30_000, Some(0), 6)
            .unwrap()
        else {
            panic!("a retry is answered");
        };
        assert_eq!((t.producer_epoch, t.last_producer_epoch), (1, 0));
        m.complete_transition_to(&t).unwrap();
        // Any other epoch was fenced; nothing is pending.
        assert_eq!(
            m.prepare_increment_producer_epoch(30_000, Some(7), 7),
            Ok(EpochBump::Fenced)
        );
        assert!(!m.pending_transition_in_progress());
    }

    #[test]
    fn a_fence_bumps_once_even_when_its_write_failed_and_aborts() {
        let mut m = initialised();
        let t = m.prepare_add_partitions(&parts(&[("a", 0)]), 10).unwrap();
        m.complete_transition_to(&t).unwrap();
        let fence = m.prepare_fence_producer_epoch().unwrap();
        assert_eq!((fence.state, fence.producer_epoch), (PrepareEpochFence, 1));
        // The fence itself never completes; the coordinator moves on to PrepareAbort.
        assert!(matches!(
            m.complete_transition_to(&fence),
            Err(TransitionError::BrokenInvariant {
                to: PrepareEpochFence,
                ..
            })
        ));
        // Say its write failed: the pending mark is cleared and the next fence reuses epoch 1.
        m.pending_state = None;
        m.producer_epoch = fence.producer_epoch;
        m.has_failed_epoch_fence = true;
        let again = m.prepare_fence_producer_epoch().unwrap();
        assert_eq!(again.producer_epoch, 1);
        m.pending_state = None;
        let abort = m.prepare_abort_or_commit(PrepareAbort, 20).unwrap();
        m.complete_transition_to(&abort).unwrap();
        let done = m.prepare_complete(30).unwrap();
        assert!(!m.has_failed_epoch_fence);
        assert_eq!(done.state, CompleteAbort);
    }

    #[test]
    fn exhausted_epochs_rotate_the_producer_id_but_never_mid_transaction() {
        let mut m = initialised();
        m.producer_epoch = i16::MAX - 1;
        assert!(matches!(
            m.prepare_increment_producer_epoch(60_000, None, 1),
            Err(TransitionError::EpochExhausted { .. })
        ));
        let t = m
            .prepare_producer_id_rotation(2000, 60_000, 2, true)
            .unwrap();
        assert_eq!(
            (
                t.producer_id,
                t.producer_epoch,
                t.last_producer_epoch,
                t.last_producer_id
            ),
            (2000, 0, i16::MAX - 1, 1000)
        );
        m.complete_transition_to(&t).unwrap();
        assert_eq!((m.producer_id, m.producer_epoch), (2000, 0));
        let t = m.prepare_add_partitions(&parts(&[("a", 0)]), 3).unwrap();
        m.complete_transition_to(&t).unwrap();
        assert!(matches!(
            m.prepare_producer_id_rotation(3000, 60_000, 4, false),
            Err(TransitionError::TransactionOpen { .. })
        ));
    }

    #[test]
    fn a_completed_move_keeps_the_invariants() {
        let mut m = initialised();
        let t = m.prepare_add_partitions(&parts(&[("a", 0)]), 10).unwrap();
        // The partitions of an Ongoing move may not shrink, nor its timeout change.
        let shrunk = TxnTransitMetadata {
            partitions: BTreeSet::new(),
            ..t.clone()
        };
        m.partitions = parts(&[("z", 9)]);
        assert!(matches!(
            m.complete_transition_to(&shrunk),
            Err(TransitionError::BrokenInvariant { to: Ongoing, .. })
        ));
        m.partitions.clear();
        let retimed = TxnTransitMetadata {
            txn_timeout_ms: 1,
            ..t.clone()
        };
        assert!(m.complete_transition_to(&retimed).is_err());
        m.complete_transition_to(&t).unwrap();
        // Expiry is prepared from a finished state only, and never completed.
        assert!(matches!(
            m.prepare_dead(),
            Err(TransitionError::InvalidTransition {
                from: Ongoing,
                to: Dead,
                ..
            })
        ));
    }
}
