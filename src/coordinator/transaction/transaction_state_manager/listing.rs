//! Kafka's `listTransactionStates` (ListTransactions, KIP-664 and KIP-994): the ids of the
//! partitions loaded here, filtered by state names, producer ids and how long their transaction
//! has been open. Dead ids are left out; an unknown state name is reported back, not an error.

use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;

use super::super::transaction_state::TransactionState;
use super::{LoadState, TransactionStateManager};

/// One listed id: transactional id, producer id, state.
pub(crate) type ListedTransaction = (String, i64, TransactionState);

/// What ListTransactions answers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TransactionListing {
    pub error: Option<ErrorCode>,
    pub unknown_state_filters: Vec<String>,
    pub transactions: Vec<ListedTransaction>,
}

impl TransactionStateManager {
    /// The listing; COORDINATOR_LOAD_IN_PROGRESS while any partition loads. `duration_filter_ms`
    /// (v1; -1 for none) keeps the ids whose transaction has been open longer than it (an id
    /// with no transaction open passes, as Kafka's start time of -1 does).
    pub fn list_transaction_states(
        &self,
        producer_id_filters: &[i64],
        state_filters: &[String],
        duration_filter_ms: i64,
    ) -> TransactionListing {
        let mut listing = TransactionListing::default();
        let mut states = Vec::new();
        for name in state_filters {
            match TransactionState::from_name(name) {
                Some(state) => states.push(state),
                None => listing.unknown_state_filters.push(name.clone()),
            }
        }
        let partitions = lock(&self.partitions);
        if partitions.any_loading() {
            listing.error = Some(ErrorCode::CoordinatorLoadInProgress);
            return listing;
        }
        // Only unknown state names: nothing can match.
        if !state_filters.is_empty() && states.is_empty() {
            return listing;
        }
        let now_ms = self.now_ms();
        let cache = lock(&self.cache);
        for (index, loaded) in cache.iter() {
            if partitions.state(*index) != Some(LoadState::Loaded) {
                continue;
            }
            for m in loaded.ids.values() {
                let m = lock(m);
                let listed = m.state != TransactionState::Dead
                    && (states.is_empty() || states.contains(&m.state))
                    && (producer_id_filters.is_empty()
                        || producer_id_filters.contains(&m.producer_id))
                    && (duration_filter_ms < 0
                        || now_ms - m.txn_start_timestamp_ms > duration_filter_ms);
                if listed {
                    listing
                        .transactions
                        .push((m.transactional_id.clone(), m.producer_id, m.state));
                }
            }
        }
        listing.transactions.sort();
        listing
    }
}
