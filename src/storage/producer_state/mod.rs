//! The idempotent producer's state in a partition (Kafka's `ProducerStateManager` family):
//! which producers wrote to the log, their epochs and last five batches, so that a leader can
//! reject out-of-order or fenced batches and answer a retried batch with its original offsets;
//! persisted in `<offset>.snapshot` files and rebuilt from them and the log's batch headers.
//!
//! - `entry`: one producer's state (`ProducerStateEntry`, `BatchMetadata`).
//! - `manager`: the partition's producers, the leader checks, snapshots on disk.
//! - [`snapshot`]: the snapshot file format, shared with `dump-segment`.
//! - `rebuild`: loading and replaying at log load and after truncation.
//! - `transactions`: the open and not yet replicated transactions, the first unstable
//!   offset, and what an aborted one's `.txnindex` entry records.
//! - `verification`: KIP-890's verification guards for a transaction's first batch.
//! - The `UnifiedLog` side (checks on leader appends, expiration, snapshot retention, the
//!   rebuild after a truncation) is `unified_log/producer_state_ops.rs`.
//!
//! Lock order: the state lives inside its `UnifiedLog` and is guarded by the log's lock.

pub(crate) mod entry;
pub(crate) mod manager;
pub(crate) mod rebuild;
pub mod snapshot;
pub(crate) mod transactions;
pub(crate) mod verification;

pub use entry::{BatchMetadata, NUM_BATCHES_TO_RETAIN, ProducerStateEntry};
pub use manager::{
    DEFAULT_PRODUCER_ID_EXPIRATION_MS, LeaderBatchCheck, ProducerStateError, ProducerStateManager,
};
pub use transactions::CompletedTxn;
pub use verification::{VerificationGuard, VerificationStateEntry};

use crate::protocol::record::batch::RecordBatchHeader;
use crate::protocol::record::control::{ControlRecord, EndTxnMarker, read_control_record};

/// The transaction marker `batch` (its header `header`) holds, if it is one: a control batch
/// of type ABORT or COMMIT.
pub fn end_txn_marker(
    batch: &[u8],
    header: &RecordBatchHeader,
) -> Result<Option<EndTxnMarker>, super::StorageError> {
    if !header.is_control() {
        return Ok(None);
    }
    match read_control_record(batch, header)? {
        ControlRecord::EndTxn(marker) => Ok(Some(marker)),
        ControlRecord::Other(_) => Ok(None),
    }
}
