//! UpdateMetadata (api 6, v0–8), the controller publishing the cluster: live brokers with every
//! endpoint and rack, and the leadership of partitions (Kafka's
//! `ReplicaManager.maybeUpdateMetadataCache` and `ZkMetadataCache.updateMetadata`). Every broker
//! answers Metadata from what this request last said. A partition with leader -2 is being
//! deleted and leaves the cache.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::update_metadata_request::{
    UpdateMetadataPartitionState, UpdateMetadataRequest,
};
use crate::protocol::messages::update_metadata_response::UpdateMetadataResponse;

use super::super::kafka_apis::KafkaApis;
use super::super::metadata_cache::{
    BrokerEndPoint, BrokerMetadata, PartitionMetadata, PartitionUpdate,
};
use super::super::request_context::RequestContext;
use super::super::topic_validation::is_internal;

/// The leader of a partition whose topic is being deleted.
const LEADER_DURING_DELETE: i32 = -2;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: UpdateMetadataRequest,
) -> Response {
    // Kafka's `authorizeClusterOperation(CLUSTER_ACTION)`: the request's error response.
    if !apis
        .auth
        .authorize_cluster(ctx, crate::security::acl::AclOperation::ClusterAction)
    {
        return ctx.respond(ResponseKind::UpdateMetadata(
            crate::protocol::messages::UpdateMetadataResponse {
                error_code: crate::protocol::errors::ErrorCode::ClusterAuthorizationFailed.code(),
                ..Default::default()
            },
        ));
    }
    let response = update_metadata(apis, ctx.api_version, request);
    ctx.respond(ResponseKind::UpdateMetadata(response))
}

pub(crate) fn update_metadata(
    apis: &KafkaApis,
    version: i16,
    request: UpdateMetadataRequest,
) -> UpdateMetadataResponse {
    let code = if apis.epochs.is_broker_epoch_stale(request.broker_epoch) {
        ErrorCode::StaleBrokerEpoch
    } else if !apis
        .epochs
        .accept_controller_epoch(request.controller_epoch)
    {
        ErrorCode::StaleControllerEpoch
    } else {
        apply(apis, version, request);
        ErrorCode::None
    };
    UpdateMetadataResponse {
        error_code: code as i16,
        ..UpdateMetadataResponse::default()
    }
}

fn apply(apis: &KafkaApis, version: i16, request: UpdateMetadataRequest) {
    let brokers = request
        .live_brokers
        .into_iter()
        .map(|b| {
            // v0 carries one plaintext address; v1+ every endpoint, named by listener from v3.
            let endpoints = if b.endpoints.is_empty() && version == 0 {
                vec![BrokerEndPoint {
                    listener_name: "PLAINTEXT".into(),
                    host: b.v0_host.to_string(),
                    port: b.v0_port,
                }]
            } else {
                b.endpoints
                    .into_iter()
                    .map(|e| BrokerEndPoint {
                        listener_name: if version >= 3 {
                            e.listener.to_string()
                        } else {
                            security_protocol_name(e.security_protocol).to_string()
                        },
                        host: e.host.to_string(),
                        port: e.port,
                    })
                    .collect()
            };
            BrokerMetadata {
                id: b.id,
                rack: b.rack.map(|r| r.to_string()),
                endpoints,
            }
        })
        .collect();
    let mut partitions = Vec::new();
    if version >= 5 {
        for topic in request.topic_states {
            for state in topic.partition_states {
                partitions.push(update(topic.topic_name.to_string(), topic.topic_id, state));
            }
        }
    } else {
        for state in request.ungrouped_partition_states {
            let name = state.topic_name.to_string();
            partitions.push(update(name, uuid::Uuid::nil(), state));
        }
    }
    apis.metadata_cache
        .apply_update_metadata(request.controller_id, brokers, partitions);
}

fn update(
    topic: String,
    topic_id: uuid::Uuid,
    state: UpdateMetadataPartitionState,
) -> PartitionUpdate {
    let metadata = (state.leader != LEADER_DURING_DELETE).then_some(PartitionMetadata {
        leader: state.leader,
        leader_epoch: state.leader_epoch,
        replicas: state.replicas,
        isr: state.isr,
        offline_replicas: state.offline_replicas,
    });
    PartitionUpdate {
        is_internal: is_internal(&topic),
        topic,
        topic_id,
        partition: state.partition_index,
        metadata,
    }
}

/// `SecurityProtocol.forId`, for v1–2 endpoints, which are named by their protocol.
fn security_protocol_name(id: i16) -> &'static str {
    match id {
        1 => "SSL",
        2 => "SASL_PLAINTEXT",
        3 => "SASL_SSL",
        _ => "PLAINTEXT",
    }
}
