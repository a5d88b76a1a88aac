//! The transaction coordinator (Kafka 3.9's `kafka.coordinator.transaction`, ZooKeeper mode):
//! the states of a transactional id ([`transaction_state`]), one id's metadata and its
//! two-phase moves ([`transaction_metadata`]), the records of `__transaction_state`
//! ([`transaction_log`]), the ids of the partitions this broker leads, loaded, unloaded,
//! persisted and expired ([`transaction_state_manager`]), the decisions of InitProducerId
//! ([`init_producer_id`]), AddPartitionsToTxn ([`add_partitions`]) and EndTxn
//! ([`end_transaction`]), the markers sent to the partition leaders
//! ([`transaction_marker_channel_manager`]), and the coordinator that serves the requests with
//! them and runs the timeout abort ([`transaction_coordinator`]).

pub mod add_partitions;
pub mod end_transaction;
pub mod init_producer_id;
pub mod transaction_coordinator;
pub mod transaction_log;
pub mod transaction_marker_channel_manager;
pub mod transaction_metadata;
pub mod transaction_state;
pub mod transaction_state_manager;

pub use end_transaction::TransactionResult;
pub use transaction_coordinator::{
    InitProducerIdResult, ProducerIdGenerator, TransactionConfig, TransactionCoordinator,
};
pub use transaction_marker_channel_manager::{
    MarkerDestination, MarkerFuture, MarkerSendError, TxnMarkerChannel,
};
pub use transaction_state_manager::{TransactionLogConfig, TransactionStateManager};
