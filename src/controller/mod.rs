//! The controller of a ZooKeeper-mode cluster (Kafka's `kafka.controller`): one
//! [`KafkaController`] per broker, active on the one that holds `/controller`, which elects
//! partition leaders, records them in ZooKeeper fenced by its epoch, and tells the brokers with
//! LeaderAndIsr, UpdateMetadata and StopReplica. The single-node default runs this same
//! controller over the embedded store.
//!
//! - `kafka_controller`: the event queue and the event handlers (election, failover,
//!   topics); `broker_change` its brokers joining and leaving; `topic_deletion` is its deletion part, `alter_partition` its answer to a
//!   leader's ISR change, `controlled_shutdown` its answer to a stopping broker.
//! - `replica_leader_election`: preferred and unclean elections on request (ElectLeaders,
//!   `/admin/preferred_replica_election`, the periodic imbalance check, a topic enabling
//!   unclean election).
//! - `reassignment`: partition reassignment carried out (AlterPartitionReassignments,
//!   `/admin/reassign_partitions`), and ListPartitionReassignments.
//! - `log_dir_failure`: replicas that went offline with a broker's failed log dir
//!   (`/log_dir_event_notification`, KAFKA_STORAGE_ERROR in LeaderAndIsr answers).
//! - `controller_event_manager`: the events, the handle that queues them, the watch mapping.
//! - `controller_context`: what the active controller knows, as plain data.
//! - `partition_state_machine` and `replica_state_machine`: the state machines, their
//!   states and valid transitions as data.
//! - `election`: the leader election rules, pure functions.
//! - [`controller_request_batch`]: one decision's requests, in Kafka's order and batches.
//! - [`channel_manager`]: a queue per broker over the [`channel_manager::BrokerChannel`] trait,
//!   which `server` implements.
//! - `inter_broker_versions`: the request versions `inter.broker.protocol.version` selects.
//! - `metrics`: the KafkaController gauges and ControllerStats, published by the event task
//!   after each event and read at scrape time.
//!
//! Layering: uses `zk`, `admin`, `cluster`, `protocol` and `metrics`; never `storage`, `server` or
//! `network`.

mod alter_partition;
mod broker_change;
pub mod channel_manager;
mod controlled_shutdown;
pub(crate) mod controller_context;
pub(crate) mod controller_event_manager;
pub mod controller_request_batch;
pub(crate) mod election;
pub(crate) mod error;
pub(crate) mod inter_broker_versions;
pub(crate) mod kafka_controller;
mod log_dir_failure;
pub(crate) mod metrics;
pub(crate) mod partition_state_machine;
mod partition_state_update;
pub(crate) mod reassignment;
pub(crate) mod replica_leader_election;
pub(crate) mod replica_state_machine;
mod topic_deletion;

#[cfg(test)]
mod alter_partition_tests;
#[cfg(test)]
mod controller_tests;
#[cfg(test)]
mod leadership_tests;
#[cfg(test)]
mod reassignment_tests;

pub use controller_event_manager::{ControllerEvent, ControllerHandle, event_for_watch};
pub use kafka_controller::{ControllerConfig, KafkaController};
pub use replica_leader_election::{ElectionResult, ElectionResults, ElectionType};
