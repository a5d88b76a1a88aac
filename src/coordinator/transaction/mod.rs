//! The transaction coordinator (Kafka 3.9's `kafka.coordinator.transaction`, ZooKeeper mode):
//! the states of a transactional id ([`transaction_state`]), one id's metadata and its
//! two-phase moves ([`transaction_metadata`]), the records of `__transaction_state`
//! ([`transaction_log`]), the ids of the partitions this broker leads, loaded, unloaded,
//! persisted and expired ([`transaction_state_manager`]), the decisions of InitProducerId
//! ([`init_producer_id`]), AddPartitionsToTxn ([`add_partitions`]) and EndTxn
//! ([`end_transaction`]), the markers sent to the partition leaders
//! ([`transaction_marker_channel_manager`]), and the coordinator that serves the requests with
//! them and runs the timeout abort ([`transaction_coordinator`]).

pub(crate) mod add_partitions;
pub(crate) mod end_transaction;
pub(crate) mod init_producer_id;
pub(crate) mod transaction_coordinator;
pub(crate) mod transaction_log;
pub(crate) mod transaction_marker_channel_manager;
pub(crate) mod transaction_metadata;
pub(crate) mod transaction_state;
pub(crate) mod transaction_state_manager;

pub(crate) use end_transaction::TransactionResult;
pub(crate) use transaction_coordinator::{
    ProducerIdGenerator, TransactionConfig, TransactionCoordinator,
};
pub(crate) use transaction_marker_channel_manager::{
    MarkerDestination, MarkerFuture, MarkerSendError, TxnMarkerChannel,
};
pub(crate) use transaction_state_manager::{TransactionLogConfig, TransactionStateManager};
