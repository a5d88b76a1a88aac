//! One module per Kafka API, each with a `handle` function taking the shared [`KafkaApis`]
//! state, the request's context and its decoded body, and returning the network layer's
//! `Response`.
//!
//! [`KafkaApis`]: super::KafkaApis

pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod allocate_producer_ids;
pub mod alter_configs;
pub mod alter_partition;
pub mod alter_partition_reassignments;
pub mod alter_replica_log_dirs;
pub mod alter_user_scram_credentials;
pub mod api_versions;
pub mod controlled_shutdown;
pub mod create_acls;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_acls;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_transactions;
pub mod describe_user_scram_credentials;
pub mod elect_leaders;
pub mod end_txn;
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
pub mod list_partition_reassignments;
pub mod list_transactions;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod stop_replica;
pub mod sync_group;
pub mod txn_offset_commit;
pub mod update_metadata;
pub mod write_txn_markers;

use crate::protocol::errors::ErrorCode;

use super::metadata_cache::MetadataCache;

/// The code a produce or consumer fetch answers for one partition, given the replica manager's:
/// a partition this broker does not host is NOT_LEADER_OR_FOLLOWER when the metadata cache knows
/// it (its leader is another broker; the client refreshes its metadata and retries there), and
/// UNKNOWN_TOPIC_OR_PARTITION only when the cluster does not know it either (Kafka's
/// `ReplicaManager.getPartitionOrError`).
pub(crate) fn partition_error(
    metadata_cache: &MetadataCache,
    topic: &str,
    partition: i32,
    code: ErrorCode,
) -> ErrorCode {
    if code == ErrorCode::UnknownTopicOrPartition
        && metadata_cache.partition(topic, partition).is_some()
    {
        ErrorCode::NotLeaderOrFollower
    } else {
        code
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::metadata_cache::{PartitionMetadata, TopicMetadata};
    use super::*;

    #[test]
    fn an_unhosted_partition_the_cache_knows_is_not_leader_and_an_unknown_one_is_unknown() {
        let cache = MetadataCache::new("c".into());
        let partition = PartitionMetadata {
            leader: 2,
            leader_epoch: 1,
            replicas: vec![2, 3],
            isr: vec![2, 3],
            offline_replicas: Vec::new(),
        };
        cache.update_topic(TopicMetadata {
            name: "t".into(),
            topic_id: uuid::Uuid::from_u128(7),
            is_internal: false,
            partitions: BTreeMap::from([(0, partition)]),
        });
        let unknown = ErrorCode::UnknownTopicOrPartition;
        assert_eq!(
            partition_error(&cache, "t", 0, unknown),
            ErrorCode::NotLeaderOrFollower
        );
        for (topic, partition) in [("t", 1), ("other", 0)] {
            assert_eq!(partition_error(&cache, topic, partition, unknown), unknown);
        }
        // Other codes pass through, and a hosted partition's success stays one.
        for code in [ErrorCode::None, ErrorCode::NotEnoughReplicas] {
            assert_eq!(partition_error(&cache, "t", 0, code), code);
        }
    }
}
