//! The broker's coordinators, built from its config: the group coordinator over
//! `__consumer_offsets` and the transaction coordinator over `__transaction_state`, each hashing
//! its keys over its topic's partition count as read from ZooKeeper at startup (the topic's own
//! count when it exists, else the config's), so every broker maps a key to the same partition
//! whatever its own setting says and whichever kind of broker created the topic.

use std::sync::Arc;
use std::time::Duration;

use crate::cluster::{GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME};
use crate::config::BrokerConfig;
use crate::coordinator::group::{
    GroupConfig, GroupCoordinator, GroupMetadataManager, OffsetsConfig,
};
use crate::coordinator::transaction::{
    ProducerIdGenerator, TransactionConfig, TransactionCoordinator, TransactionLogConfig,
    TransactionStateManager, TxnMarkerChannel,
};
use crate::network::ClientSecurity;
use crate::protocol::record::compression::CompressionType;
use crate::replication::ReplicaManager;
use crate::zk::ZkClient;
use crate::zk::kafka_zk_client::KafkaZkClient;

use super::error::ServerError;
use super::metadata_cache::MetadataCache;
use super::rpc_producer_id_manager::RpcProducerIdManager;
use super::txn_marker_channel::TxnMarkerSender;

/// The partition count of internal topic `topic`: its own when it exists, else `configured`
/// (Kafka's `getTopicPartitionCount(...).getOrElse(...)` at startup).
async fn partition_count(
    zk: &Arc<dyn ZkClient>,
    topic: &str,
    configured: i32,
) -> Result<i32, ServerError> {
    let found = KafkaZkClient::new(Arc::clone(zk))
        .get_topic(topic, false)
        .await?;
    Ok(found
        .and_then(|t| i32::try_from(t.assignment.partitions.len()).ok())
        .filter(|count| *count > 0)
        .unwrap_or(configured))
}

/// The group coordinator with the `group.*` and `offsets.*` settings.
pub(crate) async fn new_group_coordinator(
    config: &BrokerConfig,
    replica_manager: &Arc<ReplicaManager>,
    zk: &Arc<dyn ZkClient>,
) -> Result<Arc<GroupCoordinator>, ServerError> {
    let offsets_partitions = partition_count(
        zk,
        GROUP_METADATA_TOPIC_NAME,
        config.offsets_topic_num_partitions,
    )
    .await?;
    let offsets = OffsetsConfig {
        num_partitions: offsets_partitions,
        commit_timeout_ms: i64::from(config.offsets_commit_timeout_ms),
        metadata_max_bytes: usize::try_from(config.offsets_metadata_max_bytes).unwrap_or(0),
        compression: CompressionType::from_id(
            u8::try_from(config.offsets_topic_compression_codec).unwrap_or(0),
        )
        .unwrap_or(CompressionType::None),
        retention_ms: i64::from(config.offsets_retention_minutes) * 60 * 1000,
        retention_check_interval_ms: config.offsets_retention_check_interval_ms,
        load_buffer_size: usize::try_from(config.offsets_load_buffer_size).unwrap_or(5 << 20),
    };
    let group = GroupConfig {
        min_session_timeout_ms: config.group_min_session_timeout_ms,
        max_session_timeout_ms: config.group_max_session_timeout_ms,
        max_size: usize::try_from(config.group_max_size).unwrap_or(usize::MAX),
        initial_rebalance_delay_ms: config.group_initial_rebalance_delay_ms,
    };
    let manager = Arc::new(GroupMetadataManager::new(
        offsets,
        Arc::clone(replica_manager),
    ));
    Ok(GroupCoordinator::new(group, manager, Arc::clone(zk)))
}

/// The transaction coordinator with the `transaction.*` and `transactional.id.*` settings,
/// sending its markers over the inter-broker listener.
pub(crate) async fn new_transaction_coordinator(
    config: &BrokerConfig,
    replica_manager: &Arc<ReplicaManager>,
    zk: &Arc<dyn ZkClient>,
    metadata_cache: &Arc<MetadataCache>,
    producer_ids: &Arc<RpcProducerIdManager>,
    client_security: ClientSecurity,
) -> Result<Arc<TransactionCoordinator>, ServerError> {
    let num_partitions = partition_count(
        zk,
        TRANSACTION_STATE_TOPIC_NAME,
        config.transaction_state_log_num_partitions,
    )
    .await?;
    let state_manager = Arc::new(TransactionStateManager::new(
        TransactionLogConfig {
            num_partitions,
            load_buffer_size: usize::try_from(config.transaction_state_log_load_buffer_size)
                .unwrap_or(5 << 20),
            request_timeout_ms: config.request_timeout_ms,
        },
        Arc::clone(replica_manager),
    ));
    let markers = TxnMarkerSender::new(
        config.broker_id,
        config.inter_broker_listener_name(),
        config.inter_broker_protocol_version,
        Duration::from_millis(u64::try_from(config.request_timeout_ms).unwrap_or(30_000)),
        Arc::clone(metadata_cache),
        client_security,
    );
    Ok(TransactionCoordinator::new(
        TransactionConfig {
            max_timeout_ms: config.transaction_max_timeout_ms,
            abort_timed_out_interval_ms: config
                .transaction_abort_timed_out_transaction_cleanup_interval_ms,
            remove_expired_interval_ms: config
                .transaction_remove_expired_transaction_cleanup_interval_ms,
            transactional_id_expiration_ms: config.transactional_id_expiration_ms,
        },
        state_manager,
        Arc::new(markers) as Arc<dyn TxnMarkerChannel>,
        Arc::clone(producer_ids) as Arc<dyn ProducerIdGenerator>,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::zk_data::{self, TopicAssignment};
    use crate::zk::{EmbeddedStore, recipes};

    #[tokio::test]
    async fn an_internal_topics_partition_count_is_its_own_once_it_exists() {
        let zk: Arc<dyn ZkClient> = Arc::new(EmbeddedStore::in_memory().session());
        for topic in [GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME] {
            assert_eq!(partition_count(&zk, topic, 7).await.unwrap(), 7);
            // Created by another broker (of either kind) with its own setting: keys map by
            // the topic's count, as every other broker maps them.
            let assignment = TopicAssignment {
                partitions: (0..3).map(|p| (p, vec![1, 2, 3])).collect(),
                ..TopicAssignment::default()
            };
            recipes::create_recursive(
                zk.as_ref(),
                &zk_data::topic_path(topic),
                &assignment.encode(),
            )
            .await
            .unwrap();
            assert_eq!(partition_count(&zk, topic, 7).await.unwrap(), 3);
        }
    }
}
