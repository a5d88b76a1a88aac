//! One module per Kafka API, each with a `handle` function taking the shared [`KafkaApis`]
//! state, the request's context and its decoded body, and returning the network layer's
//! `Response`.
//!
//! [`KafkaApis`]: super::KafkaApis

pub mod allocate_producer_ids;
pub mod alter_configs;
pub mod alter_replica_log_dirs;
pub mod api_versions;
mod authorized_operations;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leader_and_isr;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod stop_replica;
pub mod sync_group;
pub mod update_metadata;
