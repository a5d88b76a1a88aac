//! ListPartitionReassignments (api 46; Kafka's `KafkaApis.handleListPartitionReassignmentsRequest`):
//! the reassignments in progress among the named partitions (null topics: all of them), each with
//! its full replica set and the replicas being added and removed, as the controller knows them.
//! A broker that is not the active controller answers NOT_CONTROLLER at the top level.

use std::collections::BTreeMap;

use crate::cluster::TopicPartition;
use crate::network::Response;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsRequest;
use crate::protocol::messages::list_partition_reassignments_response::{
    ListPartitionReassignmentsResponse, OngoingPartitionReassignment, OngoingTopicReassignment,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: ListPartitionReassignmentsRequest,
) -> Response {
    // Kafka's `authorizeClusterOperation(DESCRIBE)`: the request's error response.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::Describe)
    {
        return ctx.respond(ResponseKind::ListPartitionReassignments(
            crate::protocol::messages::ListPartitionReassignmentsResponse {
                error_code: crate::protocol::errors::ErrorCode::ClusterAuthorizationFailed.code(),
                ..Default::default()
            },
        ));
    }
    let partitions: Option<Vec<TopicPartition>> = request.topics.as_ref().map(|topics| {
        let mut named: Vec<TopicPartition> = topics
            .iter()
            .flat_map(|t| {
                t.partition_indexes
                    .iter()
                    .map(|p| TopicPartition::new(t.name.to_string(), *p))
            })
            .collect();
        named.sort();
        named.dedup();
        named
    });
    let response = match apis
        .controller
        .list_partition_reassignments(partitions)
        .await
    {
        Ok(ongoing) => {
            let mut topics: BTreeMap<String, Vec<OngoingPartitionReassignment>> = BTreeMap::new();
            for (tp, assignment) in ongoing {
                topics
                    .entry(tp.topic)
                    .or_default()
                    .push(OngoingPartitionReassignment {
                        partition_index: tp.partition,
                        replicas: assignment.replicas,
                        adding_replicas: assignment.adding,
                        removing_replicas: assignment.removing,
                        ..OngoingPartitionReassignment::default()
                    });
            }
            ListPartitionReassignmentsResponse {
                topics: topics
                    .into_iter()
                    .map(|(name, partitions)| OngoingTopicReassignment {
                        name: name.into(),
                        partitions,
                        ..OngoingTopicReassignment::default()
                    })
                    .collect(),
                ..ListPartitionReassignmentsResponse::default()
            }
        }
        Err(code) => ListPartitionReassignmentsResponse {
            error_code: code.code(),
            ..ListPartitionReassignmentsResponse::default()
        },
    };
    ctx.respond(ResponseKind::ListPartitionReassignments(response))
}
