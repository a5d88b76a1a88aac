//! Administrative algorithms that need no I/O: where a topic's replicas go.
//!
//! - [`replica_assignment`]: Kafka's `AdminUtils.assignReplicasToBrokers` (rack-unaware).
//!
//! Layering: uses only `cluster`.

pub mod replica_assignment;
