//! The coordinators (Kafka's `kafka.coordinator`): each owns the partitions of an internal topic
//! that this broker leads, keeps their state in memory, loads it from the log when it becomes
//! their leader and drops it when it stops, and appends its changes through the replica
//! manager, waiting for them to replicate.
//!
//! - [`group`]: the classic group coordinator and `__consumer_offsets`.
//! - `transaction`: the transaction coordinator and `__transaction_state`, being built.
//! - [`internal_topic`]: the partition of an internal topic a key maps to.
//! - `partition_loads`: which partitions of its internal topic a coordinator has loaded or is
//!   loading, at which coordinator epochs, and the read of one from its log.
//! - `leadership_listener`: the replica manager's leadership changes, dispatched to the
//!   coordinator of each internal topic, which loads or unloads its partitions.
//!
//! Layering: uses `replication` (appends, reads and the partitions' leadership), `protocol` (the
//! records' formats and error codes), `cluster` and `zk`; never `server` or `network`, which
//! call into it.

pub mod group;
pub mod internal_topic;
pub(crate) mod leadership_listener;
pub(crate) mod partition_loads;
pub(crate) mod transaction;

pub use leadership_listener::CoordinatorLeadership;
