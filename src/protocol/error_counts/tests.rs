//! Tests of [`super::error_counts`] against what Kafka 3.9's `errorCounts()` gives for the
//! same response data.

use std::collections::BTreeMap;

use super::error_counts;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::add_partitions_to_txn_response as aptt;
use crate::protocol::messages::create_topics_response::CreatableTopicResult;
use crate::protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use crate::protocol::messages::find_coordinator_response::Coordinator;
use crate::protocol::messages::leader_and_isr_response::{
    LeaderAndIsrPartitionError, LeaderAndIsrTopicError,
};
use crate::protocol::messages::metadata_response::{
    MetadataResponsePartition, MetadataResponseTopic,
};
use crate::protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use crate::protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use crate::protocol::messages::{
    AddPartitionsToTxnResponse, AddRaftVoterResponse, CreateTopicsResponse, DeleteAclsResponse,
    FindCoordinatorResponse, LeaderAndIsrResponse, MetadataResponse, OffsetFetchResponse,
    ProduceResponse, ResponseKind, StopReplicaResponse,
};

const NONE: i16 = 0;
const NOT_LEADER: i16 = ErrorCode::NotLeaderOrFollower as i16;
const UNKNOWN_TOPIC: i16 = ErrorCode::UnknownTopicOrPartition as i16;
const EXISTS: i16 = ErrorCode::TopicAlreadyExists as i16;
const STALE: i16 = ErrorCode::StaleControllerEpoch as i16;

/// The counts, as Kafka's map.
fn counts(body: &ResponseKind) -> BTreeMap<i16, u64> {
    let mut map = BTreeMap::new();
    error_counts(body, |code, n| *map.entry(code).or_default() += n);
    map
}

fn produce(codes: &[i16]) -> ResponseKind {
    ResponseKind::Produce(ProduceResponse {
        responses: vec![TopicProduceResponse {
            partition_responses: codes
                .iter()
                .map(|&error_code| PartitionProduceResponse {
                    error_code,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    })
}

#[test]
fn equal_codes_in_a_row_are_reported_as_one_run() {
    let mut calls = Vec::new();
    error_counts(&produce(&[NONE, NONE, NOT_LEADER, NONE]), |code, n| {
        calls.push((code, n));
    });
    assert_eq!(calls, [(NONE, 2), (NOT_LEADER, 1), (NONE, 1)]);
}

#[test]
fn a_response_with_nothing_to_count_counts_nothing() {
    assert!(counts(&produce(&[])).is_empty());
    assert!(counts(&ResponseKind::AddRaftVoter(AddRaftVoterResponse::default())).is_empty());
}

#[test]
fn metadata_counts_each_topic_and_each_partition() {
    let partition = |error_code| MetadataResponsePartition {
        error_code,
        ..Default::default()
    };
    let body = ResponseKind::Metadata(MetadataResponse {
        topics: vec![
            MetadataResponseTopic {
                partitions: vec![partition(NONE), partition(NOT_LEADER)],
                ..Default::default()
            },
            MetadataResponseTopic {
                error_code: UNKNOWN_TOPIC,
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    assert_eq!(
        counts(&body),
        BTreeMap::from([(NONE, 2), (NOT_LEADER, 1), (UNKNOWN_TOPIC, 1)])
    );
}

#[test]
fn create_topics_counts_each_topics_error_not_its_config_error() {
    let body = ResponseKind::CreateTopics(CreateTopicsResponse {
        topics: vec![
            CreatableTopicResult {
                error_code: EXISTS,
                topic_config_error_code: UNKNOWN_TOPIC,
                ..Default::default()
            },
            CreatableTopicResult::default(),
        ],
        ..Default::default()
    });
    assert_eq!(counts(&body), BTreeMap::from([(NONE, 1), (EXISTS, 1)]));
}

#[test]
fn leader_and_isr_counts_a_top_level_error_once_per_partition_and_once_more() {
    let partition = |error_code| LeaderAndIsrPartitionError {
        error_code,
        ..Default::default()
    };
    let topics = vec![LeaderAndIsrTopicError {
        partition_errors: vec![partition(NONE), partition(NOT_LEADER), partition(NONE)],
        ..Default::default()
    }];
    let ok = ResponseKind::LeaderAndIsr(LeaderAndIsrResponse {
        topics: topics.clone(),
        ..Default::default()
    });
    assert_eq!(counts(&ok), BTreeMap::from([(NONE, 3), (NOT_LEADER, 1)]));
    let stale = ResponseKind::LeaderAndIsr(LeaderAndIsrResponse {
        error_code: STALE,
        topics,
        ..Default::default()
    });
    assert_eq!(counts(&stale), BTreeMap::from([(STALE, 4)]));
    let stale = ResponseKind::StopReplica(StopReplicaResponse {
        error_code: STALE,
        ..Default::default()
    });
    assert_eq!(counts(&stale), BTreeMap::from([(STALE, 1)]));
}

#[test]
fn find_coordinator_counts_its_coordinators_or_else_its_top_level_error() {
    let v4 = ResponseKind::FindCoordinator(FindCoordinatorResponse {
        coordinators: vec![
            Coordinator::default(),
            Coordinator {
                error_code: ErrorCode::CoordinatorNotAvailable as i16,
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    assert_eq!(
        counts(&v4),
        BTreeMap::from([(NONE, 1), (ErrorCode::CoordinatorNotAvailable as i16, 1)])
    );
    let v3 = ResponseKind::FindCoordinator(FindCoordinatorResponse {
        error_code: ErrorCode::CoordinatorNotAvailable as i16,
        ..Default::default()
    });
    assert_eq!(
        counts(&v3),
        BTreeMap::from([(ErrorCode::CoordinatorNotAvailable as i16, 1)])
    );
}

#[test]
fn add_partitions_to_txn_counts_its_top_level_error_only_at_v4_and_later() {
    let topic = |codes: &[i16]| aptt::AddPartitionsToTxnTopicResult {
        results_by_partition: codes
            .iter()
            .map(
                |&partition_error_code| aptt::AddPartitionsToTxnPartitionResult {
                    partition_error_code,
                    ..Default::default()
                },
            )
            .collect(),
        ..Default::default()
    };
    let v3 = ResponseKind::AddPartitionsToTxn(AddPartitionsToTxnResponse {
        results_by_topic_v3_and_below: vec![topic(&[NONE, UNKNOWN_TOPIC])],
        ..Default::default()
    });
    assert_eq!(counts(&v3), BTreeMap::from([(NONE, 1), (UNKNOWN_TOPIC, 1)]));
    let v4 = ResponseKind::AddPartitionsToTxn(AddPartitionsToTxnResponse {
        results_by_transaction: vec![aptt::AddPartitionsToTxnResult {
            topic_results: vec![topic(&[UNKNOWN_TOPIC])],
            ..Default::default()
        }],
        ..Default::default()
    });
    assert_eq!(counts(&v4), BTreeMap::from([(NONE, 1), (UNKNOWN_TOPIC, 1)]));
}

#[test]
fn offset_fetch_with_groups_counts_the_groups_not_the_top_level_error() {
    let partition = |error_code| OffsetFetchResponsePartition {
        error_code,
        ..Default::default()
    };
    let v7 = ResponseKind::OffsetFetch(OffsetFetchResponse {
        topics: vec![OffsetFetchResponseTopic {
            partitions: vec![partition(UNKNOWN_TOPIC)],
            ..Default::default()
        }],
        ..Default::default()
    });
    assert_eq!(counts(&v7), BTreeMap::from([(NONE, 1), (UNKNOWN_TOPIC, 1)]));
    let v8 = ResponseKind::OffsetFetch(OffsetFetchResponse {
        groups: vec![
            OffsetFetchResponseGroup::default(),
            OffsetFetchResponseGroup {
                error_code: ErrorCode::NotCoordinator as i16,
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    assert_eq!(
        counts(&v8),
        BTreeMap::from([(NONE, 1), (ErrorCode::NotCoordinator as i16, 1)])
    );
}

#[test]
fn delete_acls_counts_each_filter_not_each_matching_acl() {
    let body = ResponseKind::DeleteAcls(DeleteAclsResponse {
        filter_results: vec![DeleteAclsFilterResult {
            matching_acls: vec![DeleteAclsMatchingAcl {
                error_code: UNKNOWN_TOPIC,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    assert_eq!(counts(&body), BTreeMap::from([(NONE, 1)]));
}
