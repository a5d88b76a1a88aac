//! InitProducerId with a transactional id, as Kafka 3.9's transaction coordinator decides it
//! (`handleInitProducerId`, `prepareInitProducerIdTransit`): the request's checks, then, under
//! the id's metadata, what to do.
//!
//! | the id's state | decision |
//! |---|---|
//! | a move pending | CONCURRENT_TRANSACTIONS |
//! | the expected producer (KIP-360) is not this id's | PRODUCER_FENCED |
//! | PrepareCommit, PrepareAbort | CONCURRENT_TRANSACTIONS |
//! | Empty, CompleteCommit, CompleteAbort, the epoch exhausted (and the expected epoch, if any, the current) | a new producer id at epoch 0 |
//! | Empty, CompleteCommit, CompleteAbort | the epoch bumped; a retry of a bump gets the same epoch; another expected epoch is PRODUCER_FENCED |
//! | Ongoing | the producer fenced (its epoch bumped) and its transaction aborted; the client is told CONCURRENT_TRANSACTIONS and retries |
//!
//! The expected producer is this id's when the id is new (epoch -1), when the producer id is
//! the current one (its epoch is checked by the bump), or when it is the previous producer id
//! and its epoch was exhausted (a retry of a rotation whose answer was lost).

use crate::protocol::errors::ErrorCode;

use super::transaction_metadata::{
    EpochBump, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionMetadata, TransitionError,
    TxnTransitMetadata, is_epoch_exhausted,
};
use super::transaction_state::TransactionState;

/// The producer id and epoch a client sends with InitProducerId (v3+) to keep its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExpectedProducer {
    pub producer_id: i64,
    pub epoch: i16,
}

/// What the coordinator does with an InitProducerId.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InitDecision {
    /// Append this move to Empty; once committed, answer its producer id and epoch.
    Append(TxnTransitMetadata),
    /// An open transaction: append this fence (PrepareEpochFence, the epoch bumped), abort the
    /// transaction with it, and answer CONCURRENT_TRANSACTIONS so the client retries.
    FenceOngoing(TxnTransitMetadata),
    /// Answer this error, changing nothing.
    Refused(ErrorCode),
}

/// The request's own checks (Kafka's, in order), before any coordinator is looked up: the
/// expected producer, or INVALID_REQUEST when only one of its id and epoch is given or the
/// transactional id is empty, or INVALID_TRANSACTION_TIMEOUT outside `(0, max_timeout_ms]`.
pub(crate) fn validate_request(
    transactional_id: &str,
    timeout_ms: i32,
    max_timeout_ms: i32,
    producer_id: i64,
    producer_epoch: i16,
) -> Result<Option<ExpectedProducer>, ErrorCode> {
    let expected = match (producer_id, producer_epoch) {
        (NO_PRODUCER_ID, NO_PRODUCER_EPOCH) => None,
        (NO_PRODUCER_ID, _) | (_, NO_PRODUCER_EPOCH) => return Err(ErrorCode::InvalidRequest),
        (producer_id, epoch) => Some(ExpectedProducer { producer_id, epoch }),
    };
    if transactional_id.is_empty() {
        return Err(ErrorCode::InvalidRequest);
    }
    if timeout_ms <= 0 || timeout_ms > max_timeout_ms {
        return Err(ErrorCode::InvalidTransactionTimeout);
    }
    Ok(expected)
}

/// Whether `expected` may take over `metadata`'s producer; see the module doc.
fn is_valid_producer(metadata: &TransactionMetadata, expected: ExpectedProducer) -> bool {
    metadata.producer_epoch == NO_PRODUCER_EPOCH
        || expected.producer_id == metadata.producer_id
        || (expected.producer_id == metadata.last_producer_id && is_epoch_exhausted(expected.epoch))
}

/// Decides an InitProducerId on `metadata` (the caller holds its lock), preparing the move it
/// makes. `new_producer_id` is asked only when the epoch is exhausted; its error is answered.
pub(crate) fn prepare_init_producer_id_transit(
    metadata: &mut TransactionMetadata,
    timeout_ms: i32,
    expected: Option<ExpectedProducer>,
    now_ms: i64,
    new_producer_id: impl FnOnce() -> Result<i64, ErrorCode>,
) -> Result<InitDecision, TransitionError> {
    if metadata.pending_transition_in_progress() {
        return Ok(InitDecision::Refused(ErrorCode::ConcurrentTransactions));
    }
    if expected.is_some_and(|e| !is_valid_producer(metadata, e)) {
        return Ok(InitDecision::Refused(ErrorCode::ProducerFenced));
    }
    match metadata.state {
        TransactionState::PrepareCommit | TransactionState::PrepareAbort => {
            Ok(InitDecision::Refused(ErrorCode::ConcurrentTransactions))
        }
        TransactionState::Empty
        | TransactionState::CompleteCommit
        | TransactionState::CompleteAbort => {
            if is_epoch_exhausted(metadata.producer_epoch)
                && expected.is_none_or(|e| e.epoch == metadata.producer_epoch)
            {
                let producer_id = match new_producer_id() {
                    Ok(id) => id,
                    Err(code) => return Ok(InitDecision::Refused(code)),
                };
                let transit = metadata.prepare_producer_id_rotation(
                    producer_id,
                    timeout_ms,
                    now_ms,
                    expected.is_some(),
                )?;
                return Ok(InitDecision::Append(transit));
            }
            match metadata.prepare_increment_producer_epoch(
                timeout_ms,
                expected.map(|e| e.epoch),
                now_ms,
            )? {
                EpochBump::Prepared(transit) => Ok(InitDecision::Append(transit)),
                EpochBump::Fenced => Ok(InitDecision::Refused(ErrorCode::ProducerFenced)),
            }
        }
        TransactionState::Ongoing => Ok(InitDecision::FenceOngoing(
            metadata.prepare_fence_producer_epoch()?,
        )),
        // Never a current state: Dead is a tombstone and a fence only ever pending.
        TransactionState::Dead | TransactionState::PrepareEpochFence => {
            Err(TransitionError::InvalidTransition {
                id: metadata.transactional_id.clone(),
                from: metadata.state,
                to: TransactionState::Empty,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::cluster::TopicPartition;

    const MAX: i32 = 900_000;

    fn decide(m: &mut TransactionMetadata, expected: Option<ExpectedProducer>) -> InitDecision {
        prepare_init_producer_id_transit(m, 60_000, expected, 100, || Ok(5000)).unwrap()
    }

    /// Completes an appended decision, as the manager does once the record is committed.
    fn commit(m: &mut TransactionMetadata, decision: InitDecision) -> (i64, i16) {
        let InitDecision::Append(t) = decision else {
            panic!("expected an append, got {decision:?}");
        };
        m.complete_transition_to(&t).unwrap();
        (m.producer_id, m.producer_epoch)
    }

    fn expect(producer_id: i64, epoch: i16) -> Option<ExpectedProducer> {
        Some(ExpectedProducer { producer_id, epoch })
    }

    #[test]
    fn the_request_is_checked_in_kafkas_order() {
        assert_eq!(validate_request("t", 60_000, MAX, -1, -1), Ok(None));
        assert_eq!(validate_request("t", 60_000, MAX, 7, 2), Ok(expect(7, 2)));
        assert_eq!(
            validate_request("t", 60_000, MAX, 7, -1),
            Err(ErrorCode::InvalidRequest)
        );
        assert_eq!(
            validate_request("", 60_000, MAX, -1, -1),
            Err(ErrorCode::InvalidRequest)
        );
        for timeout in [0, -5, MAX + 1] {
            assert_eq!(
                validate_request("t", timeout, MAX, -1, -1),
                Err(ErrorCode::InvalidTransactionTimeout)
            );
        }
        assert_eq!(validate_request("t", MAX, MAX, -1, -1), Ok(None));
    }

    #[test]
    fn a_new_id_gets_epoch_0_and_each_init_bumps_it() {
        let mut m = TransactionMetadata::new("t", 1000, 60_000, 1);
        let first = decide(&mut m, None);
        assert_eq!(commit(&mut m, first), (1000, 0));
        let second = decide(&mut m, None);
        assert_eq!(commit(&mut m, second), (1000, 1));
        // KIP-360: the producer at epoch 1 keeps its id, and a retry gets the same answer.
        let kept = decide(&mut m, expect(1000, 1));
        assert_eq!(commit(&mut m, kept), (1000, 2));
        let retried = decide(&mut m, expect(1000, 1));
        assert_eq!(commit(&mut m, retried), (1000, 2));
        // Another producer's expectation, or a stale epoch, is fenced.
        assert_eq!(
            decide(&mut m, expect(999, 2)),
            InitDecision::Refused(ErrorCode::ProducerFenced)
        );
        assert_eq!(
            decide(&mut m, expect(1000, 0)),
            InitDecision::Refused(ErrorCode::ProducerFenced)
        );
        assert!(!m.pending_transition_in_progress());
    }

    #[test]
    fn an_exhausted_epoch_rotates_the_producer_id() {
        let mut m = TransactionMetadata::new("t", 1000, 60_000, 1);
        let first = decide(&mut m, None);
        commit(&mut m, first);
        m.producer_epoch = i16::MAX - 1;
        let rotated = decide(&mut m, expect(1000, i16::MAX - 1));
        assert_eq!(commit(&mut m, rotated), (5000, 0));
        assert_eq!(
            (m.last_producer_id, m.last_producer_epoch),
            (1000, i16::MAX - 1)
        );
        // A retry of the rotation, with the old id and its exhausted epoch, is still this id's.
        let InitDecision::Append(retry) = decide(&mut m, expect(1000, i16::MAX - 1)) else {
            panic!("a lost rotation's retry is answered");
        };
        assert_eq!(retry.producer_id, 5000);
        m.pending_state = None;
        // The producer id manager's failure is the answer.
        m.producer_epoch = i16::MAX - 1;
        assert_eq!(
            prepare_init_producer_id_transit(&mut m, 60_000, None, 1, || Err(
                ErrorCode::CoordinatorLoadInProgress
            ))
            .unwrap(),
            InitDecision::Refused(ErrorCode::CoordinatorLoadInProgress)
        );
    }

    #[test]
    fn an_open_transaction_is_fenced_and_a_completing_one_makes_the_client_wait() {
        let mut m = TransactionMetadata::new("t", 1000, 60_000, 1);
        let first = decide(&mut m, None);
        commit(&mut m, first);
        let added = m
            .prepare_add_partitions(&BTreeSet::from([TopicPartition::new("a", 0)]), 5)
            .unwrap();
        m.complete_transition_to(&added).unwrap();
        let InitDecision::FenceOngoing(fence) = decide(&mut m, None) else {
            panic!("an open transaction is fenced");
        };
        assert_eq!(
            (fence.state, fence.producer_epoch),
            (TransactionState::PrepareEpochFence, 1)
        );
        // While the fence is pending, and while a transaction completes, the client waits.
        assert_eq!(
            decide(&mut m, None),
            InitDecision::Refused(ErrorCode::ConcurrentTransactions)
        );
        m.pending_state = None;
        let prepared = m
            .prepare_abort_or_commit(TransactionState::PrepareAbort, 6)
            .unwrap();
        m.complete_transition_to(&prepared).unwrap();
        assert_eq!(
            decide(&mut m, None),
            InitDecision::Refused(ErrorCode::ConcurrentTransactions)
        );
    }
}
