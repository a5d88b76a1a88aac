//! Tests of the requests `kcli assign` builds and of what it reads from the responses: each
//! request survives the generated codec at the version sent, and the readers take Kafka's
//! answers (errors included) apart as the tool prints them.

use crate::protocol::codec::Message;
use crate::protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use crate::protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use crate::protocol::messages::list_partition_reassignments_response::{
    OngoingPartitionReassignment, OngoingTopicReassignment,
};
use crate::protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};

use super::*;

fn tp(t: &str, p: i32) -> TopicPartition {
    TopicPartition::new(t, p)
}

/// Encodes at `version` and decodes again.
fn round_trip<T: Message>(message: &T, version: i16) -> T {
    let bytes = message.encode_to_bytes(version).unwrap().freeze();
    T::decode_bytes(bytes, version).unwrap()
}

#[test]
fn requests_carry_what_the_command_asks() {
    let m = metadata_request(&["a".into(), "b".into()]);
    assert!(!m.allow_auto_topic_creation);
    let names: Vec<String> = m
        .topics
        .as_ref()
        .unwrap()
        .iter()
        .map(|t| t.name.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(round_trip(&m, METADATA_VERSION), m);

    let list = list_request(Some(&[tp("t", 2), tp("s", 0), tp("t", 0)]));
    let topics = list.topics.as_ref().unwrap();
    assert_eq!(topics.len(), 2);
    assert_eq!(topics[0].name, "s");
    assert_eq!(topics[1].partition_indexes, [2, 0]);
    assert_eq!(round_trip(&list, LIST_REASSIGNMENTS_VERSION), list);
    assert!(list_request(None).topics.is_none());

    let targets: BTreeMap<TopicPartition, Option<Vec<BrokerId>>> =
        [(tp("t", 0), Some(vec![1, 2, 3])), (tp("t", 1), None)]
            .into_iter()
            .collect();
    let alter = alter_request(&targets, 30_000);
    assert_eq!(alter.timeout_ms, 30_000);
    assert_eq!(alter.topics.len(), 1);
    assert_eq!(alter.topics[0].partitions[0].replicas, Some(vec![1, 2, 3]));
    assert_eq!(alter.topics[0].partitions[1].replicas, None, "a cancel");
    assert_eq!(round_trip(&alter, ALTER_REASSIGNMENTS_VERSION), alter);

    let dirs = describe_log_dirs_request();
    assert!(dirs.topics.is_none(), "every partition");
    assert_eq!(round_trip(&dirs, DESCRIBE_LOG_DIRS_VERSION), dirs);
}

#[test]
fn metadata_gives_brokers_racks_controller_and_replicas() {
    let response = MetadataResponse {
        brokers: vec![
            MetadataResponseBroker {
                node_id: 2,
                host: "::1".into(),
                port: 9093,
                rack: Some("r2".into()),
                ..MetadataResponseBroker::default()
            },
            MetadataResponseBroker {
                node_id: 1,
                host: "h1".into(),
                port: 9092,
                rack: None,
                ..MetadataResponseBroker::default()
            },
        ],
        controller_id: 2,
        topics: vec![
            MetadataResponseTopic {
                name: Some("t".into()),
                partitions: vec![MetadataResponsePartition {
                    partition_index: 0,
                    replica_nodes: vec![2, 1],
                    ..MetadataResponsePartition::default()
                }],
                ..MetadataResponseTopic::default()
            },
            MetadataResponseTopic {
                name: Some("gone".into()),
                error_code: 3,
                ..MetadataResponseTopic::default()
            },
        ],
        ..MetadataResponse::default()
    };
    let md = read_metadata(&response).unwrap();
    assert_eq!(md.brokers[0].address, "h1:9092");
    assert_eq!(md.brokers[1].address, "[::1]:9093");
    assert_eq!(md.brokers[1].metadata.rack.as_deref(), Some("r2"));
    assert_eq!(md.controller_id, 2);
    assert_eq!(md.topics["t"][&0], [2, 1]);
    assert_eq!(md.unknown_topics, ["gone"]);
    let mut failed = response.clone();
    failed.topics[0].error_code = 29;
    assert!(
        read_metadata(&failed)
            .unwrap_err()
            .starts_with("topic t: TopicAuthorizationFailed: ")
    );
}

#[test]
fn reassignment_answers_are_read_as_kafkas_tool_reads_them() {
    let listed = ListPartitionReassignmentsResponse {
        topics: vec![OngoingTopicReassignment {
            name: "t".into(),
            partitions: vec![OngoingPartitionReassignment {
                partition_index: 1,
                replicas: vec![1, 2, 3],
                adding_replicas: vec![3],
                removing_replicas: vec![1],
                ..OngoingPartitionReassignment::default()
            }],
            ..OngoingTopicReassignment::default()
        }],
        ..ListPartitionReassignmentsResponse::default()
    };
    let ongoing = read_list_response(&listed).unwrap();
    assert_eq!(
        ongoing[&tp("t", 1)],
        Ongoing {
            replicas: vec![1, 2, 3],
            adding: vec![3],
            removing: vec![1]
        }
    );
    let refused = ListPartitionReassignmentsResponse {
        error_code: 41,
        ..ListPartitionReassignmentsResponse::default()
    };
    assert_eq!(
        read_list_response(&refused).unwrap_err(),
        "NotController: This is not the correct controller for this cluster."
    );

    let altered = AlterPartitionReassignmentsResponse {
        responses: vec![ReassignableTopicResponse {
            name: "t".into(),
            partitions: vec![
                ReassignablePartitionResponse {
                    partition_index: 0,
                    ..ReassignablePartitionResponse::default()
                },
                ReassignablePartitionResponse {
                    partition_index: 1,
                    error_code: 85,
                    error_message: Some("No reassignment in progress for t-1".into()),
                    ..ReassignablePartitionResponse::default()
                },
            ],
            ..ReassignableTopicResponse::default()
        }],
        ..AlterPartitionReassignmentsResponse::default()
    };
    let asked = [tp("t", 0), tp("t", 1)];
    let errors = read_alter_response(&altered, &asked);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[&tp("t", 1)],
        "NoReassignmentInProgress: No reassignment in progress for t-1"
    );
    let all_refused = AlterPartitionReassignmentsResponse {
        error_code: 41,
        ..AlterPartitionReassignmentsResponse::default()
    };
    assert_eq!(read_alter_response(&all_refused, &asked).len(), 2);
}

#[test]
fn partition_sizes_take_the_largest_current_replica() {
    let dir = |size: i64, future: bool, error: i16| DescribeLogDirsResult {
        error_code: error,
        log_dir: "/d".into(),
        topics: vec![DescribeLogDirsTopic {
            name: "t".into(),
            partitions: vec![DescribeLogDirsPartition {
                partition_index: 0,
                partition_size: size,
                is_future_key: future,
                ..DescribeLogDirsPartition::default()
            }],
            ..DescribeLogDirsTopic::default()
        }],
        ..DescribeLogDirsResult::default()
    };
    let mut sizes = BTreeMap::new();
    let leader = DescribeLogDirsResponse {
        results: vec![dir(500, false, 0), dir(9000, true, 0)],
        ..DescribeLogDirsResponse::default()
    };
    let follower = DescribeLogDirsResponse {
        results: vec![dir(300, false, 0), dir(7000, false, 57)],
        ..DescribeLogDirsResponse::default()
    };
    add_partition_sizes(&follower, &mut sizes);
    add_partition_sizes(&leader, &mut sizes);
    assert_eq!(sizes[&tp("t", 0)], 500);
}
