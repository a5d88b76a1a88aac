//! Kafka's znode paths (`kafka.zk.ZkData`), re-exported from `zk_data`.

use crate::cluster::{BrokerId, TopicPartition};

pub const CLUSTER_PATH: &str = "/cluster";
pub const CLUSTER_ID_PATH: &str = "/cluster/id";
pub const BROKERS_PATH: &str = "/brokers";
pub const BROKER_IDS_PATH: &str = "/brokers/ids";
pub const BROKER_SEQUENCE_ID_PATH: &str = "/brokers/seqid";
pub const TOPICS_PATH: &str = "/brokers/topics";
pub const CONTROLLER_PATH: &str = "/controller";
pub const CONTROLLER_EPOCH_PATH: &str = "/controller_epoch";
pub const CONFIG_PATH: &str = "/config";
pub const CONFIG_CHANGES_PATH: &str = "/config/changes";
/// Create with `PersistentSequential`; ZooKeeper appends `%010d`.
pub const CONFIG_CHANGE_PREFIX: &str = "/config/changes/config_change_";
pub const ADMIN_PATH: &str = "/admin";
pub const DELETE_TOPICS_PATH: &str = "/admin/delete_topics";
pub const REASSIGN_PARTITIONS_PATH: &str = "/admin/reassign_partitions";
pub const PREFERRED_REPLICA_ELECTION_PATH: &str = "/admin/preferred_replica_election";
pub const ISR_CHANGE_NOTIFICATION_PATH: &str = "/isr_change_notification";
/// Create with `PersistentSequential`.
pub const ISR_CHANGE_PREFIX: &str = "/isr_change_notification/isr_change_";
pub const LOG_DIR_EVENT_NOTIFICATION_PATH: &str = "/log_dir_event_notification";
/// Create with `PersistentSequential`.
pub const LOG_DIR_EVENT_PREFIX: &str = "/log_dir_event_notification/log_dir_event_";
pub const LATEST_PRODUCER_ID_BLOCK_PATH: &str = "/latest_producer_id_block";
pub const CONSUMERS_PATH: &str = "/consumers";
pub const FEATURE_PATH: &str = "/feature";

/// Config entity types under `/config`.
pub const CONFIG_ENTITY_TYPES: [&str; 5] = ["topics", "clients", "users", "brokers", "ips"];

/// The persistent paths every broker creates at startup (`ZkData.PersistentZkPaths`), parents
/// first.
pub const PERSISTENT_ZK_PATHS: [&str; 14] = [
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/config/changes",
    "/admin/delete_topics",
    "/brokers/seqid",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
];

pub fn broker_id_path(id: BrokerId) -> String {
    format!("{BROKER_IDS_PATH}/{id}")
}

pub fn topic_path(topic: &str) -> String {
    format!("{TOPICS_PATH}/{topic}")
}

pub fn topic_partitions_path(topic: &str) -> String {
    format!("{TOPICS_PATH}/{topic}/partitions")
}

pub fn topic_partition_path(tp: &TopicPartition) -> String {
    format!("{TOPICS_PATH}/{}/partitions/{}", tp.topic, tp.partition)
}

pub fn topic_partition_state_path(tp: &TopicPartition) -> String {
    format!("{}/state", topic_partition_path(tp))
}

pub fn config_entity_type_path(entity_type: &str) -> String {
    format!("{CONFIG_PATH}/{entity_type}")
}

pub fn config_entity_path(entity_type: &str, name: &str) -> String {
    format!("{CONFIG_PATH}/{entity_type}/{name}")
}

pub fn topic_config_path(topic: &str) -> String {
    config_entity_path("topics", topic)
}

pub fn delete_topic_path(topic: &str) -> String {
    format!("{DELETE_TOPICS_PATH}/{topic}")
}
