//! The transaction coordinator (Kafka 3.9's `kafka.coordinator.transaction`, ZooKeeper mode),
//! being built: the states of a transactional id ([`transaction_state`]), one id's metadata and
//! its two-phase moves ([`transaction_metadata`]), the records of `__transaction_state` with
//! the partition an id maps to ([`transaction_log`]), and the ids of the partitions this broker
//! leads, loaded, unloaded and persisted ([`transaction_state_manager`]), and InitProducerId's
//! checks and decision ([`init_producer_id`]). Nothing serves transactions yet; a transactional
//! producer is still refused.

pub mod init_producer_id;
pub mod transaction_log;
pub mod transaction_metadata;
pub mod transaction_state;
pub mod transaction_state_manager;
