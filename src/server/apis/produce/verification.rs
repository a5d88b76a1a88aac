//! KIP-890 part 1 on the produce path (Kafka's `ReplicaManager.handleProduceAppend`): a
//! request's transactional batches come from one producer (else INVALID_PRODUCER_ID_MAPPING for
//! the whole request); with `transaction.partition.verification.enable`, each partition where
//! that producer's transaction is not yet open gets a verification guard, and the coordinator
//! is asked whether the partition is in the transaction before anything is appended. The
//! coordinator's answers become the errors Kafka's leaders give (see [`produce_error`]).

use std::collections::BTreeSet;

use crate::cluster::TopicPartition;
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::batch::RecordBatchHeader;
use crate::replication::{AppendEntry, PartitionResponse, ReplicaManager};
use crate::storage::producer_state::VerificationGuard;

use super::super::super::add_partitions_to_txn_manager::TxnVerification;

/// The producer of a batch that must be verified: its id, epoch and first sequence.
struct TransactionalBatch {
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
}

fn transactional_batch(entry: &AppendEntry) -> Option<TransactionalBatch> {
    let header = RecordBatchHeader::parse(&entry.records).ok()?;
    (header.has_producer_id() && header.is_transactional()).then_some(TransactionalBatch {
        producer_id: header.producer_id,
        producer_epoch: header.producer_epoch,
        base_sequence: header.base_sequence,
    })
}

/// What the produce handler does before appending.
pub(super) enum Verification {
    /// Append as they are (verification off, or nothing to verify).
    Append,
    /// Transactional batches of more than one producer id or epoch: every partition of the
    /// request fails with this.
    Refused(ErrorCode),
    /// Ask the coordinator first.
    Ask(TxnVerification),
}

/// Sets each entry's guard when verification is `enabled` and the request has a transactional
/// id; a partition that cannot start one (not led here) gets its error in `refused`, by entry
/// index. `produce_version` decides whether the client knows TRANSACTION_ABORTABLE (v11+).
pub(super) fn start(
    replica_manager: &ReplicaManager,
    transactional_id: Option<&str>,
    produce_version: i16,
    enabled: bool,
    entries: &mut [AppendEntry],
    refused: &mut [Option<PartitionResponse>],
) -> Verification {
    // Without a transactional id, transactional batches were refused already: plain and
    // idempotent produce pays nothing here (no header is parsed).
    let Some(transactional_id) = transactional_id else {
        return Verification::Append;
    };
    let batches: Vec<Option<TransactionalBatch>> =
        entries.iter().map(transactional_batch).collect();
    let producers: BTreeSet<(i64, i16)> = batches
        .iter()
        .flatten()
        .map(|b| (b.producer_id, b.producer_epoch))
        .collect();
    if producers.len() > 1 {
        return Verification::Refused(ErrorCode::InvalidProducerIdMapping);
    }
    let (Some(&(producer_id, producer_epoch)), true) = (producers.first(), enabled) else {
        return Verification::Append;
    };
    let mut partitions = Vec::new();
    for (i, (entry, batch)) in entries.iter_mut().zip(&batches).enumerate() {
        // With verification on, every append is checked: those without a guard of their own
        // carry the sentinel, which passes only where the transaction is open already.
        entry.verification_guard = Some(VerificationGuard::SENTINEL);
        let Some(batch) = batch else { continue };
        match replica_manager.maybe_start_transaction_verification(
            &entry.topic_partition,
            batch.producer_id,
            batch.base_sequence,
            batch.producer_epoch,
        ) {
            Ok(guard) => {
                entry.verification_guard = Some(guard);
                if guard != VerificationGuard::SENTINEL {
                    partitions.push(entry.topic_partition.clone());
                }
            }
            Err(response) => refused[i] = Some(response),
        }
    }
    if partitions.is_empty() {
        return Verification::Append;
    }
    Verification::Ask(TxnVerification {
        transactional_id: transactional_id.to_string(),
        producer_id,
        producer_epoch,
        partitions,
        supports_transaction_abortable: produce_version >= 11,
    })
}

/// A partition's answer when its verification failed (Kafka's `postVerificationCallback`):
/// the coordinator's retriable answers become NOT_ENOUGH_REPLICAS, which every client retries
/// without refreshing its metadata; INVALID_TXN_STATE says why.
pub(super) fn produce_error(error: ErrorCode) -> PartitionResponse {
    match error {
        ErrorCode::InvalidTxnState => PartitionResponse::error_with_message(
            error,
            "Partition was not added to the transaction",
        ),
        ErrorCode::ConcurrentTransactions
        | ErrorCode::NetworkException
        | ErrorCode::CoordinatorLoadInProgress
        | ErrorCode::CoordinatorNotAvailable
        | ErrorCode::NotCoordinator => PartitionResponse::error_with_message(
            ErrorCode::NotEnoughReplicas,
            format!(
                "Unable to verify the partition has been added to the transaction. Underlying error: {}",
                kafka_name(error)
            ),
        ),
        other => PartitionResponse::error(other),
    }
}

/// Kafka's `Errors` constant name of `code` (`NOT_COORDINATOR`), as its messages print it.
fn kafka_name(code: ErrorCode) -> String {
    let mut name = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// Marks the entries whose partitions did not verify as refused.
pub(super) fn apply_errors(
    errors: &std::collections::HashMap<TopicPartition, ErrorCode>,
    entries: &[AppendEntry],
    refused: &mut [Option<PartitionResponse>],
) {
    for (entry, slot) in entries.iter().zip(refused.iter_mut()) {
        if let Some(error) = errors.get(&entry.topic_partition) {
            *slot = Some(produce_error(*error));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retriable_coordinator_answers_become_not_enough_replicas_naming_them() {
        let r = produce_error(ErrorCode::CoordinatorLoadInProgress);
        assert_eq!(r.error_code, ErrorCode::NotEnoughReplicas);
        assert_eq!(
            r.error_message.as_deref(),
            Some(
                "Unable to verify the partition has been added to the transaction. Underlying error: COORDINATOR_LOAD_IN_PROGRESS"
            )
        );
        let r = produce_error(ErrorCode::InvalidTxnState);
        assert_eq!(r.error_code, ErrorCode::InvalidTxnState);
        assert_eq!(
            r.error_message.as_deref(),
            Some("Partition was not added to the transaction")
        );
        assert_eq!(
            produce_error(ErrorCode::InvalidProducerEpoch).error_code,
            ErrorCode::InvalidProducerEpoch
        );
        assert_eq!(kafka_name(ErrorCode::NotCoordinator), "NOT_COORDINATOR");
    }
}
