//! AlterPartitionReassignments (api 45; Kafka's `KafkaApis.handleAlterPartitionReassignmentsRequest`):
//! start, replace or (with null replicas) cancel the reassignment of partitions. The controller
//! carries it out through its queue (`controller/reassignment.rs`); the answer says only whether
//! each started, so a client follows progress with ListPartitionReassignments. A broker that is
//! not the active controller answers NOT_CONTROLLER at the top level.

use std::collections::BTreeMap;

use crate::cluster::{BrokerId, TopicPartition};
use crate::controller::reassignment::ReassignmentResults;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::alter_partition_reassignments_request::AlterPartitionReassignmentsRequest;
use crate::protocol::messages::alter_partition_reassignments_response::{
    AlterPartitionReassignmentsResponse, ReassignablePartitionResponse, ReassignableTopicResponse,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: AlterPartitionReassignmentsRequest,
) -> Response {
    // Kafka's `authorizeClusterOperation(ALTER)`: the request's error response.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::Alter)
    {
        return ctx.respond(ResponseKind::AlterPartitionReassignments(
            AlterPartitionReassignmentsResponse {
                error_code: ErrorCode::ClusterAuthorizationFailed.code(),
                ..AlterPartitionReassignmentsResponse::default()
            },
        ));
    }
    // A partition named twice keeps its last entry, as Kafka's `toMap` does.
    let mut reassignments: BTreeMap<TopicPartition, Option<Vec<BrokerId>>> = BTreeMap::new();
    for topic in &request.topics {
        for p in &topic.partitions {
            reassignments.insert(
                TopicPartition::new(topic.name.to_string(), p.partition_index),
                p.replicas.clone(),
            );
        }
    }
    let response = match apis
        .controller
        .alter_partition_reassignments(reassignments.into_iter().collect())
        .await
    {
        Ok(results) => response(results),
        Err(code) => AlterPartitionReassignmentsResponse {
            error_code: code.code(),
            ..AlterPartitionReassignmentsResponse::default()
        },
    };
    ctx.respond(ResponseKind::AlterPartitionReassignments(response))
}

/// The per-partition answers grouped by topic.
fn response(results: ReassignmentResults) -> AlterPartitionReassignmentsResponse {
    let mut topics: BTreeMap<String, Vec<ReassignablePartitionResponse>> = BTreeMap::new();
    for (tp, result) in results {
        let (code, message) = result.err().unwrap_or((ErrorCode::None, None));
        topics
            .entry(tp.topic)
            .or_default()
            .push(ReassignablePartitionResponse {
                partition_index: tp.partition,
                error_code: code.code(),
                error_message: message.map(Into::into),
                ..ReassignablePartitionResponse::default()
            });
    }
    AlterPartitionReassignmentsResponse {
        responses: topics
            .into_iter()
            .map(|(name, partitions)| ReassignableTopicResponse {
                name: name.into(),
                partitions,
                ..ReassignableTopicResponse::default()
            })
            .collect(),
        ..AlterPartitionReassignmentsResponse::default()
    }
}
