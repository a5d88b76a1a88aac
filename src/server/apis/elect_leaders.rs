//! ElectLeaders (api 43; Kafka's `KafkaApis.handleElectLeaders` and
//! `ReplicaManager.electLeaders`): preferred (v0, and type 0 from v1) or unclean (type 1)
//! elections, run by the controller through its queue (`controller/replica_leader_election.rs`).
//! Null partitions mean every partition this broker knows, and then partitions that needed no
//! election are left out of the answer, as Kafka does. A broker that is not the active
//! controller answers NOT_CONTROLLER for each partition. An elected partition is answered once
//! this broker's metadata shows its new leader (Kafka's `DelayedElectLeader`), or
//! REQUEST_TIMED_OUT after the request's `timeout_ms`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::cluster::{BrokerId, TopicPartition};
use crate::controller::{ElectionResult, ElectionType};
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::elect_leaders_request::ElectLeadersRequest;
use crate::protocol::messages::elect_leaders_response::{
    ElectLeadersResponse, PartitionResult, ReplicaElectionResult,
};

use super::super::kafka_apis::KafkaApis;
use super::super::metadata_cache::MetadataCache;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: ElectLeadersRequest,
) -> Response {
    let partitions = requested_partitions(&request, &apis.metadata_cache);
    // Kafka authorizes ALTER on the cluster first: every partition refused, and the top level.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::Alter)
    {
        let code = ErrorCode::ClusterAuthorizationFailed;
        let refused = partitions
            .iter()
            .map(|tp| (tp.clone(), Err((code, None))))
            .collect();
        return respond(ctx, code, refused, request.topic_partitions.is_none());
    }
    // v0 has no type and means preferred; the decoder leaves the default 0 there.
    let Some(election_type) = ElectionType::from_wire(request.election_type) else {
        let invalid = partitions
            .iter()
            .map(|tp| (tp.clone(), Err((ErrorCode::InvalidRequest, None))))
            .collect();
        return respond(ctx, ErrorCode::InvalidRequest, invalid, false);
    };
    let mut results: BTreeMap<TopicPartition, ElectionResult> = match apis
        .controller
        .elect_leaders(Some(partitions.clone()), election_type)
        .await
    {
        Ok(results) => results,
        Err(code) => partitions
            .iter()
            .map(|tp| (tp.clone(), Err((code, None))))
            .collect(),
    };
    let expected: Vec<(TopicPartition, BrokerId)> = results
        .iter()
        .filter_map(|(tp, r)| r.as_ref().ok().map(|leader| (tp.clone(), *leader)))
        .collect();
    if !expected.is_empty() {
        let timeout = Duration::from_millis(u64::try_from(request.timeout_ms).unwrap_or(0));
        apis.metadata_cache
            .wait_for(timeout, |cache| {
                expected
                    .iter()
                    .all(|(tp, leader)| shows_leader(cache, tp, *leader))
            })
            .await;
        for (tp, leader) in expected {
            if !shows_leader(&apis.metadata_cache, &tp, leader) {
                results.insert(tp, Err((ErrorCode::RequestTimedOut, None)));
            }
        }
    }
    let all = request.topic_partitions.is_none();
    respond(ctx, ErrorCode::None, results, all)
}

/// The partitions asked for, each once; null: every partition in this broker's metadata.
fn requested_partitions(
    request: &ElectLeadersRequest,
    metadata_cache: &MetadataCache,
) -> Vec<TopicPartition> {
    let set: BTreeSet<TopicPartition> = match &request.topic_partitions {
        Some(topics) => topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| TopicPartition::new(t.topic.to_string(), *p))
            })
            .collect(),
        None => metadata_cache
            .all_topics()
            .into_iter()
            .flat_map(|t| {
                let name = t.name.clone();
                t.partitions
                    .into_keys()
                    .map(move |p| TopicPartition::new(name.clone(), p))
            })
            .collect(),
    };
    set.into_iter().collect()
}

fn shows_leader(cache: &MetadataCache, tp: &TopicPartition, leader: BrokerId) -> bool {
    cache
        .partition(&tp.topic, tp.partition)
        .is_some_and(|p| p.leader == leader)
}

/// The response grouped by topic; with `all`, ELECTION_NOT_NEEDED is left out.
fn respond(
    ctx: &RequestContext,
    error: ErrorCode,
    results: BTreeMap<TopicPartition, ElectionResult>,
    all: bool,
) -> Response {
    let mut topics: BTreeMap<String, Vec<PartitionResult>> = BTreeMap::new();
    for (tp, result) in results {
        let (code, message) = match result {
            Ok(_) => (ErrorCode::None, None),
            Err((code, message)) => (code, message),
        };
        if all && code == ErrorCode::ElectionNotNeeded {
            continue;
        }
        topics.entry(tp.topic).or_default().push(PartitionResult {
            partition_id: tp.partition,
            error_code: code.code(),
            error_message: message.map(Into::into),
            ..PartitionResult::default()
        });
    }
    ctx.respond(ResponseKind::ElectLeaders(ElectLeadersResponse {
        error_code: error.code(),
        replica_election_results: topics
            .into_iter()
            .map(|(topic, partition_result)| ReplicaElectionResult {
                topic: topic.into(),
                partition_result,
                ..ReplicaElectionResult::default()
            })
            .collect(),
        ..ElectLeadersResponse::default()
    }))
}
