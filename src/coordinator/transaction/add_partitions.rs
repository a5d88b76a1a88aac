//! AddPartitionsToTxn and AddOffsetsToTxn as Kafka 3.9's transaction coordinator decides them
//! (`handleAddPartitionsToTransaction`), and the partition leaders' verification of KIP-890
//! part 1 (`handleVerifyPartitionsInTransaction`).
//!
//! Adding, in order:
//!
//! | check | answer |
//! |---|---|
//! | another producer id | INVALID_PRODUCER_ID_MAPPING |
//! | another epoch | PRODUCER_FENCED |
//! | a move pending, or PrepareCommit, PrepareAbort | CONCURRENT_TRANSACTIONS |
//! | Ongoing with every partition in it already | NONE, nothing written |
//! | otherwise | Ongoing with the union, appended |
//!
//! Verifying writes nothing and does not look at a pending move (the append's own check covers
//! it): the same producer checks, CONCURRENT_TRANSACTIONS in PrepareCommit or PrepareAbort,
//! else per partition NONE when it is in the transaction and TRANSACTION_ABORTABLE when not.

use std::collections::BTreeSet;

use crate::cluster::TopicPartition;
use crate::protocol::errors::ErrorCode;

use super::transaction_metadata::{TransactionMetadata, TransitionError, TxnTransitMetadata};
use super::transaction_state::TransactionState;

/// What the coordinator does with an add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AddDecision {
    /// Append this move to Ongoing; once committed, answer NONE.
    Append(TxnTransitMetadata),
    /// Answer this, changing nothing.
    Answer(ErrorCode),
}

/// The producer checks adding and verifying share.
fn check_producer(
    metadata: &TransactionMetadata,
    producer_id: i64,
    producer_epoch: i16,
) -> Result<(), ErrorCode> {
    if metadata.producer_id != producer_id {
        Err(ErrorCode::InvalidProducerIdMapping)
    } else if metadata.producer_epoch != producer_epoch {
        Err(ErrorCode::ProducerFenced)
    } else {
        Ok(())
    }
}

fn is_preparing(metadata: &TransactionMetadata) -> bool {
    matches!(
        metadata.state,
        TransactionState::PrepareCommit | TransactionState::PrepareAbort
    )
}

/// Decides an add of `partitions` to `metadata`'s transaction (the caller holds its lock).
pub(crate) fn prepare_add_partitions(
    metadata: &mut TransactionMetadata,
    producer_id: i64,
    producer_epoch: i16,
    partitions: &BTreeSet<TopicPartition>,
    now_ms: i64,
) -> Result<AddDecision, TransitionError> {
    if let Err(code) = check_producer(metadata, producer_id, producer_epoch) {
        return Ok(AddDecision::Answer(code));
    }
    if metadata.pending_transition_in_progress() || is_preparing(metadata) {
        return Ok(AddDecision::Answer(ErrorCode::ConcurrentTransactions));
    }
    if metadata.state == TransactionState::Ongoing && partitions.is_subset(&metadata.partitions) {
        return Ok(AddDecision::Answer(ErrorCode::None));
    }
    metadata
        .prepare_add_partitions(partitions, now_ms)
        .map(AddDecision::Append)
}

/// A partition leader's question: is each of `partitions` in the producer's transaction?
/// Either one error for them all, or one answer each.
pub(crate) fn verify_partitions(
    metadata: &TransactionMetadata,
    producer_id: i64,
    producer_epoch: i16,
    partitions: &[TopicPartition],
) -> Result<Vec<(TopicPartition, ErrorCode)>, ErrorCode> {
    check_producer(metadata, producer_id, producer_epoch)?;
    if is_preparing(metadata) {
        return Err(ErrorCode::ConcurrentTransactions);
    }
    Ok(partitions
        .iter()
        .map(|tp| {
            let code = if metadata.partitions.contains(tp) {
                ErrorCode::None
            } else {
                ErrorCode::TransactionAbortable
            };
            (tp.clone(), code)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ps: &[(&str, i32)]) -> BTreeSet<TopicPartition> {
        ps.iter()
            .map(|(t, p)| TopicPartition::new(*t, *p))
            .collect()
    }

    /// An id at epoch 0, Empty.
    fn empty() -> TransactionMetadata {
        let mut m = TransactionMetadata::new("txn", 7, 60_000, 1);
        m.producer_epoch = 0;
        m
    }

    #[test]
    fn partitions_are_added_once_and_a_repeat_writes_nothing() {
        let mut m = empty();
        let AddDecision::Append(t) =
            prepare_add_partitions(&mut m, 7, 0, &set(&[("a", 0)]), 5).unwrap()
        else {
            panic!("a new partition is appended");
        };
        assert_eq!(
            prepare_add_partitions(&mut m, 7, 0, &set(&[("b", 0)]), 6).unwrap(),
            AddDecision::Answer(ErrorCode::ConcurrentTransactions),
            "one move at a time"
        );
        m.complete_transition_to(&t).unwrap();
        assert_eq!(
            prepare_add_partitions(&mut m, 7, 0, &set(&[("a", 0)]), 7).unwrap(),
            AddDecision::Answer(ErrorCode::None)
        );
        let AddDecision::Append(t) =
            prepare_add_partitions(&mut m, 7, 0, &set(&[("a", 0), ("b", 1)]), 8).unwrap()
        else {
            panic!("a new partition is appended");
        };
        assert_eq!(t.partitions, set(&[("a", 0), ("b", 1)]));
    }

    #[test]
    fn the_wrong_producer_or_a_transaction_being_completed_is_refused() {
        let mut m = empty();
        let tps = set(&[("a", 0)]);
        assert_eq!(
            prepare_add_partitions(&mut m, 8, 0, &tps, 1).unwrap(),
            AddDecision::Answer(ErrorCode::InvalidProducerIdMapping)
        );
        assert_eq!(
            prepare_add_partitions(&mut m, 7, 1, &tps, 1).unwrap(),
            AddDecision::Answer(ErrorCode::ProducerFenced)
        );
        m.state = TransactionState::PrepareCommit;
        assert_eq!(
            prepare_add_partitions(&mut m, 7, 0, &tps, 1).unwrap(),
            AddDecision::Answer(ErrorCode::ConcurrentTransactions)
        );
    }

    #[test]
    fn verification_answers_per_partition_and_ignores_a_pending_move() {
        let mut m = empty();
        m.state = TransactionState::Ongoing;
        m.partitions = set(&[("a", 0)]);
        m.pending_state = Some(TransactionState::Ongoing);
        let asked = [TopicPartition::new("a", 0), TopicPartition::new("b", 0)];
        assert_eq!(
            verify_partitions(&m, 7, 0, &asked).unwrap(),
            vec![
                (asked[0].clone(), ErrorCode::None),
                (asked[1].clone(), ErrorCode::TransactionAbortable)
            ]
        );
        assert_eq!(
            verify_partitions(&m, 7, 1, &asked),
            Err(ErrorCode::ProducerFenced)
        );
        m.state = TransactionState::PrepareAbort;
        assert_eq!(
            verify_partitions(&m, 7, 0, &asked),
            Err(ErrorCode::ConcurrentTransactions)
        );
    }
}
