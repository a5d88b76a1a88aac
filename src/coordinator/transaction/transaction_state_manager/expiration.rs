//! Kafka's `removeExpiredTransactionalIds`: an id with no transaction open and nothing pending,
//! unchanged for `transactional.id.expiration.ms`, is written a tombstone and leaves the cache.
//!
//! Each loaded partition's expired ids are prepared Dead under their locks, then their
//! tombstones appended in batches of at most [`MAX_BATCH_BYTES`] of keys, at acks=-1, waiting
//! up to `request.timeout.ms`. An id leaves the cache only when its tombstone was committed,
//! its partition is still loaded at the same coordinator epoch, Dead is still its pending move
//! and its producer epoch has not moved; otherwise its pending mark is cleared and it stays.

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use crate::cluster::sync::lock;
use crate::cluster::{TRANSACTION_STATE_TOPIC_NAME, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;
use crate::replication::{AppendEntry, AppendParams, ProduceResult};

use super::super::transaction_log;
use super::super::transaction_state::TransactionState;
use super::{LoadState, SharedMetadata, TransactionStateManager, TxnTransitMetadata, first_error};

/// The most key bytes one tombstone batch holds, well under the default `message.max.bytes`
/// (1 MiB), which `__transaction_state` does not override.
pub(super) const MAX_BATCH_BYTES: usize = 512 * 1024;

/// One id on its way out.
struct Expiring {
    id: String,
    metadata: SharedMetadata,
    transit: TxnTransitMetadata,
    key: Vec<u8>,
}

impl TransactionStateManager {
    /// Expires the ids idle for `expiration_ms`; see the module doc. Returns how many left.
    pub async fn remove_expired_transactional_ids(
        &self,
        expiration_ms: i64,
        shutdown: &CancellationToken,
    ) -> usize {
        let now_ms = self.now_ms();
        let mut removed = 0;
        for (index, epoch, expiring) in self.prepare_expiry(now_ms, expiration_ms) {
            for batch in batches(expiring) {
                let code = self.append_tombstones(index, &batch, shutdown).await;
                removed += self.finish_expiry(index, epoch, batch, code);
            }
        }
        if removed > 0 {
            tracing::info!(removed, "removed expired transactional ids");
        }
        removed
    }

    /// Every loaded partition's expired ids, prepared Dead.
    fn prepare_expiry(&self, now_ms: i64, expiration_ms: i64) -> Vec<(i32, i32, Vec<Expiring>)> {
        let partitions = lock(&self.partitions);
        let cache = lock(&self.cache);
        let mut found = Vec::new();
        for (index, loaded) in cache.iter() {
            if partitions.state(*index) != Some(LoadState::Loaded) {
                continue;
            }
            let mut expiring = Vec::new();
            for (id, shared) in &loaded.ids {
                let mut m = lock(shared);
                let idle = m.txn_last_update_timestamp_ms <= now_ms.saturating_sub(expiration_ms);
                if !(m.state.is_expiration_allowed() && m.pending_state.is_none() && idle) {
                    continue;
                }
                let key = match transaction_log::key(id) {
                    Ok(key) => key,
                    Err(e) => {
                        tracing::error!(%e, "cannot encode a __transaction_state key");
                        continue;
                    }
                };
                match m.prepare_dead() {
                    Ok(transit) => expiring.push(Expiring {
                        id: id.clone(),
                        metadata: std::sync::Arc::clone(shared),
                        transit,
                        key,
                    }),
                    Err(e) => tracing::error!(%e, "cannot expire a transactional id"),
                }
            }
            if !expiring.is_empty() {
                found.push((*index, loaded.coordinator_epoch, expiring));
            }
        }
        found
    }

    /// Appends one batch of tombstones to partition `index`; the partition's error.
    async fn append_tombstones(
        &self,
        index: i32,
        batch: &[Expiring],
        shutdown: &CancellationToken,
    ) -> ErrorCode {
        let now_ms = self.now_ms();
        let mut builder = RecordBatchBuilder::new(CompressionType::None);
        builder.records = batch
            .iter()
            .map(|e| SimpleRecord::new(now_ms, Some(e.key.clone()), None))
            .collect();
        let bytes = match builder.build() {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::error!(%e, "cannot build a batch of __transaction_state tombstones");
                return ErrorCode::UnknownServerError;
            }
        };
        let entry = AppendEntry {
            topic_partition: TopicPartition::new(TRANSACTION_STATE_TOPIC_NAME, index),
            records: Bytes::from(bytes),
            verification_guard: None,
        };
        let result = self.replica_manager.append_records(
            AppendParams::coordinator(self.config.request_timeout_ms),
            vec![entry],
        );
        match result {
            ProduceResult::Ready(responses) => first_error(&responses),
            ProduceResult::Delayed(delayed) => tokio::select! {
                responses = delayed.complete() => first_error(&responses),
                _ = shutdown.cancelled() => ErrorCode::NotCoordinator,
            },
        }
    }

    /// Removes the batch's ids that may go; clears the others' pending mark. How many went.
    fn finish_expiry(
        &self,
        index: i32,
        epoch: i32,
        batch: Vec<Expiring>,
        code: ErrorCode,
    ) -> usize {
        if code != ErrorCode::None {
            tracing::warn!(
                partition = index,
                ?code,
                ids = batch.len(),
                "appending tombstones of expired transactional ids failed"
            );
        }
        let mut cache = lock(&self.cache);
        let Some(loaded) = cache
            .get_mut(&index)
            .filter(|l| l.coordinator_epoch == epoch)
        else {
            // Unloaded or reloaded meanwhile: these metadata are no longer the cache's.
            return 0;
        };
        let mut removed = 0;
        for e in batch {
            let mut m = lock(&e.metadata);
            let still_dead = m.pending_state == Some(TransactionState::Dead)
                && m.producer_epoch == e.transit.producer_epoch;
            if code == ErrorCode::None && still_dead {
                drop(m);
                loaded.ids.remove(&e.id);
                removed += 1;
            } else if m.pending_state == Some(TransactionState::Dead) {
                m.pending_state = None;
            }
        }
        removed
    }
}

/// Splits `expiring` into batches of at most [`MAX_BATCH_BYTES`] of keys (at least one id
/// each).
fn batches(expiring: Vec<Expiring>) -> Vec<Vec<Expiring>> {
    let mut out: Vec<Vec<Expiring>> = Vec::new();
    let mut bytes = 0;
    for e in expiring {
        let fits =
            out.last().is_some_and(|b| !b.is_empty()) && bytes + e.key.len() <= MAX_BATCH_BYTES;
        if !fits {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += e.key.len();
        if let Some(last) = out.last_mut() {
            last.push(e);
        }
    }
    out
}
