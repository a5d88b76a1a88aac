//! The classic group coordinator (Kafka 3.9's `kafka.coordinator.group`, ZooKeeper mode; not
//! KIP-848 consumer groups): membership and rebalances for JoinGroup/SyncGroup/Heartbeat/
//! LeaveGroup, committed offsets, and their persistence in `__consumer_offsets`.
//!
//! - `group_coordinator`: the operations, Kafka's checks, the delayed-operation timers.
//! - `group_join`: JoinGroup, static membership and the completion of a rebalance.
//! - `group_offsets`: OffsetCommit/OffsetFetch, ListGroups, DescribeGroups, DeleteGroups,
//!   OffsetDelete and offsets retention.
//! - `group_metadata`: one group's state machine and data.
//! - `member_metadata`: one member, with its parked JoinGroup/SyncGroup answers.
//! - `group_metadata_manager`: the groups in memory, appends to and loads from the offsets
//!   topic.
//! - [`offsets_records`]: the keys and values of `__consumer_offsets` and `partitionFor`.
//! - `txn_offsets`: TxnOffsetCommit, offsets pending until their transaction's marker.
//! - `metrics`: the GroupMetadataManager gauges (NumGroups, NumGroups by state).

pub(crate) mod group_coordinator;
pub(crate) mod group_join;
pub(crate) mod group_metadata;
pub(crate) mod group_metadata_manager;
pub(crate) mod group_offsets;
pub(crate) mod member_metadata;
pub(crate) mod metrics;
pub mod offsets_records;
pub(crate) mod txn_offsets;

#[cfg(test)]
mod coordinator_tests;

pub use group_coordinator::{GroupConfig, GroupCoordinator};
pub use group_metadata_manager::{GroupMetadataManager, OffsetsConfig};
