//! One module per Kafka API, each with a `handle` function taking the shared [`KafkaApis`]
//! state, the request's context and its decoded body, and returning the network layer's
//! `Response`.
//!
//! [`KafkaApis`]: super::KafkaApis

pub(crate) mod add_offsets_to_txn;
pub(crate) mod add_partitions_to_txn;
pub(crate) mod allocate_producer_ids;
pub(crate) mod alter_client_quotas;
pub(crate) mod alter_configs;
pub(crate) mod alter_partition;
pub(crate) mod alter_partition_reassignments;
pub(crate) mod alter_replica_log_dirs;
pub(crate) mod alter_user_scram_credentials;
pub(crate) mod api_versions;
pub(crate) mod controlled_shutdown;
pub(crate) mod create_acls;
pub(crate) mod create_partitions;
pub(crate) mod create_topics;
pub(crate) mod delete_acls;
pub(crate) mod delete_groups;
pub(crate) mod delete_records;
pub(crate) mod delete_topics;
pub(crate) mod describe_acls;
pub(crate) mod describe_client_quotas;
pub(crate) mod describe_cluster;
pub(crate) mod describe_configs;
pub(crate) mod describe_groups;
pub(crate) mod describe_log_dirs;
pub(crate) mod describe_producers;
pub(crate) mod describe_transactions;
pub(crate) mod describe_user_scram_credentials;
pub(crate) mod elect_leaders;
pub(crate) mod end_txn;
pub(crate) mod fetch;
pub(crate) mod find_coordinator;
pub(crate) mod heartbeat;
pub(crate) mod incremental_alter_configs;
pub(crate) mod init_producer_id;
pub(crate) mod join_group;
pub(crate) mod leader_and_isr;
pub(crate) mod leave_group;
pub(crate) mod list_groups;
pub(crate) mod list_offsets;
pub(crate) mod list_partition_reassignments;
pub(crate) mod list_transactions;
pub(crate) mod metadata;
pub(crate) mod offset_commit;
pub(crate) mod offset_delete;
pub(crate) mod offset_fetch;
pub(crate) mod offset_for_leader_epoch;
pub(crate) mod produce;
pub(crate) mod sasl_authenticate;
pub(crate) mod sasl_handshake;
pub(crate) mod stop_replica;
pub(crate) mod sync_group;
pub(crate) mod txn_offset_commit;
pub(crate) mod update_metadata;
pub(crate) mod write_txn_markers;

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
