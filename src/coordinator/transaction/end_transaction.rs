//! EndTxn as Kafka 3.9's transaction coordinator decides it (`endTransaction`), for a client's
//! commit or abort and for the coordinator's own abort of a fenced or timed-out transaction:
//! before the Prepare record is appended ([`prepare_end_transaction`]), and after it is
//! committed, before the markers go out ([`prepare_send_markers`]).
//!
//! Before the append, in order:
//!
//! | check | answer |
//! |---|---|
//! | another producer id | INVALID_PRODUCER_ID_MAPPING |
//! | a client's epoch not the current one, or any epoch older than it | PRODUCER_FENCED |
//! | a move pending, other than a fence | CONCURRENT_TRANSACTIONS |
//! | Ongoing | PrepareCommit or PrepareAbort; a pending fence is dropped and its epoch taken first |
//! | CompleteCommit and commit, CompleteAbort and abort | NONE (a retry) |
//! | PrepareCommit and commit, PrepareAbort and abort | CONCURRENT_TRANSACTIONS |
//! | any other state and result (Empty: nothing was added) | INVALID_TXN_STATE |
//!
//! After the append, the id must still be the same producer at the same epoch, with nothing
//! pending, in the Prepare state the result asks for; then its completion is prepared and the
//! markers are sent. Anything else is answered as above and nothing is sent.

use crate::protocol::errors::ErrorCode;

use super::transaction_metadata::{
    NO_PRODUCER_EPOCH, TransactionMetadata, TransitionError, TxnTransitMetadata,
};
use super::transaction_state::TransactionState;

/// A transaction's outcome (Kafka's `TransactionResult`), as a marker carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransactionResult {
    Commit,
    Abort,
}

impl TransactionResult {
    /// EndTxn's `Committed`, WriteTxnMarkers' `TransactionResult`.
    pub fn from_committed(committed: bool) -> Self {
        if committed {
            TransactionResult::Commit
        } else {
            TransactionResult::Abort
        }
    }

    pub fn is_commit(self) -> bool {
        self == TransactionResult::Commit
    }

    /// The Prepare state of this outcome.
    fn prepare_state(self) -> TransactionState {
        match self {
            TransactionResult::Commit => TransactionState::PrepareCommit,
            TransactionResult::Abort => TransactionState::PrepareAbort,
        }
    }

    /// The Complete state of this outcome.
    fn complete_state(self) -> TransactionState {
        match self {
            TransactionResult::Commit => TransactionState::CompleteCommit,
            TransactionResult::Abort => TransactionState::CompleteAbort,
        }
    }
}

/// Who ends the transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndOrigin {
    /// EndTxn from the producer: its epoch must be the current one.
    Client,
    /// The coordinator's abort (a fence or a timeout), at the epoch it bumped to.
    Coordinator,
}

/// What the coordinator does with an end of transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EndDecision {
    /// Append this Prepare move; `epoch_fence` when it carries a fence's bumped epoch (a failed
    /// append then marks the fence failed, so the next one reuses the epoch).
    Append {
        transit: TxnTransitMetadata,
        epoch_fence: bool,
    },
    /// Answer this, changing nothing (NONE for a retry of a completed end).
    Answer(ErrorCode),
}

/// Decides an end of transaction on `metadata` (the caller holds its lock) at `producer_id`
/// and `producer_epoch`; see the module doc.
pub(crate) fn prepare_end_transaction(
    metadata: &mut TransactionMetadata,
    producer_id: i64,
    producer_epoch: i16,
    result: TransactionResult,
    origin: EndOrigin,
    now_ms: i64,
) -> Result<EndDecision, TransitionError> {
    if metadata.producer_id != producer_id {
        return Ok(EndDecision::Answer(ErrorCode::InvalidProducerIdMapping));
    }
    // A client must not bump the epoch; the coordinator's own abort comes with the bumped one.
    if (origin == EndOrigin::Client && producer_epoch != metadata.producer_epoch)
        || producer_epoch < metadata.producer_epoch
    {
        return Ok(EndDecision::Answer(ErrorCode::ProducerFenced));
    }
    let fencing = metadata.pending_state == Some(TransactionState::PrepareEpochFence);
    if metadata.pending_transition_in_progress() && !fencing {
        return Ok(EndDecision::Answer(ErrorCode::ConcurrentTransactions));
    }
    let answer = match (metadata.state, result) {
        (TransactionState::Ongoing, _) => {
            let epoch_fence = fencing && result == TransactionResult::Abort;
            if epoch_fence {
                // The fence's epoch goes into the abort's record (Kafka clears the pending
                // fence and takes its epoch in memory first; no client was given it).
                metadata.pending_state = None;
                metadata.producer_epoch = producer_epoch;
                metadata.last_producer_epoch = NO_PRODUCER_EPOCH;
            }
            let transit = metadata.prepare_abort_or_commit(result.prepare_state(), now_ms)?;
            return Ok(EndDecision::Append {
                transit,
                epoch_fence,
            });
        }
        (TransactionState::CompleteCommit, TransactionResult::Commit)
        | (TransactionState::CompleteAbort, TransactionResult::Abort) => ErrorCode::None,
        (TransactionState::PrepareCommit, TransactionResult::Commit)
        | (TransactionState::PrepareAbort, TransactionResult::Abort) => {
            ErrorCode::ConcurrentTransactions
        }
        (TransactionState::Dead | TransactionState::PrepareEpochFence, _) => {
            return Err(TransitionError::InvalidTransition {
                id: metadata.transactional_id.clone(),
                from: metadata.state,
                to: result.prepare_state(),
            });
        }
        _ => {
            tracing::debug!(transactional_id = %metadata.transactional_id, state = ?metadata.state,
                ?result, "end of transaction in a state that does not allow it");
            ErrorCode::InvalidTxnState
        }
    };
    Ok(EndDecision::Answer(answer))
}

/// After the Prepare record is committed: the completion to write once every marker is, or the
/// error to answer instead (and send nothing); see the module doc.
pub(crate) fn prepare_send_markers(
    metadata: &mut TransactionMetadata,
    producer_id: i64,
    producer_epoch: i16,
    result: TransactionResult,
    now_ms: i64,
) -> Result<Result<TxnTransitMetadata, ErrorCode>, TransitionError> {
    if metadata.producer_id != producer_id {
        return Ok(Err(ErrorCode::InvalidProducerIdMapping));
    }
    if metadata.producer_epoch != producer_epoch {
        return Ok(Err(ErrorCode::ProducerFenced));
    }
    if metadata.pending_transition_in_progress() {
        return Ok(Err(ErrorCode::ConcurrentTransactions));
    }
    if metadata.state != result.prepare_state() {
        if matches!(
            metadata.state,
            TransactionState::Dead | TransactionState::PrepareEpochFence
        ) {
            return Err(TransitionError::InvalidTransition {
                id: metadata.transactional_id.clone(),
                from: metadata.state,
                to: result.complete_state(),
            });
        }
        return Ok(Err(ErrorCode::InvalidTxnState));
    }
    metadata.prepare_complete(now_ms).map(Ok)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::TransactionState::*;
    use super::*;
    use crate::cluster::TopicPartition;
    use crate::coordinator::transaction::transaction_metadata::EpochBump;

    /// An id at epoch 3 with a transaction open on one partition.
    fn ongoing() -> TransactionMetadata {
        let mut m = TransactionMetadata::new("txn", 7, 60_000, 1);
        m.producer_epoch = 2;
        let EpochBump::Prepared(t) = m.prepare_increment_producer_epoch(60_000, None, 2).unwrap()
        else {
            panic!("not fenced");
        };
        m.complete_transition_to(&t).unwrap();
        let added: BTreeSet<_> = [TopicPartition::new("t", 0)].into();
        let t = m.prepare_add_partitions(&added, 10).unwrap();
        m.complete_transition_to(&t).unwrap();
        assert_eq!((m.producer_epoch, m.state), (3, Ongoing));
        m
    }

    fn end(
        m: &mut TransactionMetadata,
        epoch: i16,
        result: TransactionResult,
        origin: EndOrigin,
    ) -> EndDecision {
        prepare_end_transaction(m, 7, epoch, result, origin, 20).unwrap()
    }

    fn answer(code: ErrorCode) -> EndDecision {
        EndDecision::Answer(code)
    }

    #[test]
    fn a_commit_prepares_then_completes_once_written() {
        let mut m = ongoing();
        let EndDecision::Append {
            transit,
            epoch_fence: false,
        } = end(&mut m, 3, TransactionResult::Commit, EndOrigin::Client)
        else {
            panic!("an open transaction commits");
        };
        assert_eq!(
            (transit.state, transit.partitions.len()),
            (PrepareCommit, 1)
        );
        // While it is written, a second EndTxn waits.
        assert_eq!(
            end(&mut m, 3, TransactionResult::Commit, EndOrigin::Client),
            answer(ErrorCode::ConcurrentTransactions)
        );
        m.complete_transition_to(&transit).unwrap();
        let completion = prepare_send_markers(&mut m, 7, 3, TransactionResult::Commit, 30)
            .unwrap()
            .unwrap();
        assert_eq!(completion.state, CompleteCommit);
        assert!(completion.partitions.is_empty());
        // The markers are still being written: a retry waits, the other outcome is refused.
        assert_eq!(
            end(&mut m, 3, TransactionResult::Commit, EndOrigin::Client),
            answer(ErrorCode::ConcurrentTransactions)
        );
        m.complete_transition_to(&completion).unwrap();
        assert_eq!(
            end(&mut m, 3, TransactionResult::Commit, EndOrigin::Client),
            answer(ErrorCode::None)
        );
        assert_eq!(
            end(&mut m, 3, TransactionResult::Abort, EndOrigin::Client),
            answer(ErrorCode::InvalidTxnState)
        );
    }

    #[test]
    fn the_wrong_producer_or_epoch_or_state_is_refused_in_kafkas_order() {
        let mut m = ongoing();
        assert_eq!(
            prepare_end_transaction(
                &mut m,
                8,
                3,
                TransactionResult::Commit,
                EndOrigin::Client,
                1
            )
            .unwrap(),
            answer(ErrorCode::InvalidProducerIdMapping)
        );
        for epoch in [2, 4] {
            assert_eq!(
                end(&mut m, epoch, TransactionResult::Commit, EndOrigin::Client),
                answer(ErrorCode::ProducerFenced)
            );
        }
        // The coordinator's own abort may carry a newer epoch, never an older one.
        assert_eq!(
            end(&mut m, 2, TransactionResult::Abort, EndOrigin::Coordinator),
            answer(ErrorCode::ProducerFenced)
        );
        // Nothing added: there is nothing to end.
        let mut empty = TransactionMetadata::new("txn", 7, 60_000, 1);
        empty.producer_epoch = 0;
        assert_eq!(
            prepare_end_transaction(
                &mut empty,
                7,
                0,
                TransactionResult::Commit,
                EndOrigin::Client,
                1
            )
            .unwrap(),
            answer(ErrorCode::InvalidTxnState)
        );
    }

    #[test]
    fn a_fence_aborts_at_its_bumped_epoch_and_the_old_producer_is_then_fenced() {
        let mut m = ongoing();
        let fence = m.prepare_fence_producer_epoch().unwrap();
        assert_eq!((fence.state, fence.producer_epoch), (PrepareEpochFence, 4));
        let EndDecision::Append {
            transit,
            epoch_fence: true,
        } = end(
            &mut m,
            fence.producer_epoch,
            TransactionResult::Abort,
            EndOrigin::Coordinator,
        )
        else {
            panic!("a fence aborts");
        };
        assert_eq!((transit.state, transit.producer_epoch), (PrepareAbort, 4));
        assert_eq!(
            m.producer_epoch, 4,
            "the fence's epoch is taken in memory first"
        );
        m.complete_transition_to(&transit).unwrap();
        assert_eq!(
            end(&mut m, 3, TransactionResult::Commit, EndOrigin::Client),
            answer(ErrorCode::ProducerFenced)
        );
    }

    #[test]
    fn markers_are_not_sent_when_the_id_moved_on_meanwhile() {
        let mut m = ongoing();
        let EndDecision::Append { transit, .. } =
            end(&mut m, 3, TransactionResult::Abort, EndOrigin::Client)
        else {
            panic!("an open transaction aborts");
        };
        m.complete_transition_to(&transit).unwrap();
        assert_eq!(
            prepare_send_markers(&mut m, 7, 4, TransactionResult::Abort, 1).unwrap(),
            Err(ErrorCode::ProducerFenced)
        );
        assert_eq!(
            prepare_send_markers(&mut m, 7, 3, TransactionResult::Commit, 1).unwrap(),
            Err(ErrorCode::InvalidTxnState)
        );
        assert_eq!(
            prepare_send_markers(&mut m, 9, 3, TransactionResult::Abort, 1).unwrap(),
            Err(ErrorCode::InvalidProducerIdMapping)
        );
        let completion = prepare_send_markers(&mut m, 7, 3, TransactionResult::Abort, 1)
            .unwrap()
            .unwrap();
        assert_eq!(completion.state, CompleteAbort);
        assert_eq!(
            prepare_send_markers(&mut m, 7, 3, TransactionResult::Abort, 1).unwrap(),
            Err(ErrorCode::ConcurrentTransactions)
        );
    }
}
