//! DescribeCluster (Kafka's `handleDescribeCluster` and `AuthHelper.computeDescribeClusterResponse`):
//! the cluster id, the controller, and the live brokers with their address on the listener the
//! request came in on. A ZooKeeper-mode broker serves the broker endpoint type only (v1's
//! `endpoint_type` 2 asks for controllers, which answer only in KRaft mode).

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_cluster_request::DescribeClusterRequest;
use crate::protocol::messages::describe_cluster_response::{
    DescribeClusterBroker, DescribeClusterResponse,
};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;
use crate::security::acl::{AclOperation, CLUSTER_NAME, ResourceType};

/// `EndpointType` ids.
const BROKER: i8 = 1;
const CONTROLLER: i8 = 2;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DescribeClusterRequest,
) -> Response {
    let response = describe(apis, ctx, &request);
    ctx.respond(ResponseKind::DescribeCluster(response))
}

fn describe(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: &DescribeClusterRequest,
) -> DescribeClusterResponse {
    // v0 has no endpoint-type error codes; Kafka answers INVALID_REQUEST there.
    let error = |v1_code: ErrorCode, message: String| DescribeClusterResponse {
        error_code: if ctx.api_version == 0 {
            ErrorCode::InvalidRequest.code()
        } else {
            v1_code.code()
        },
        error_message: Some(StrBytes::from(message)),
        ..DescribeClusterResponse::default()
    };
    match request.endpoint_type {
        BROKER => {}
        CONTROLLER => {
            return error(
                ErrorCode::MismatchedEndpointType,
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER".into(),
            );
        }
        other => {
            return error(
                ErrorCode::UnsupportedEndpointType,
                format!("Unsupported endpoint type {other}"),
            );
        }
    }
    let brokers: Vec<DescribeClusterBroker> = apis
        .metadata_cache
        .alive_brokers()
        .into_iter()
        .filter_map(|b| {
            let e = b.endpoint(&ctx.listener_name)?;
            Some(DescribeClusterBroker {
                broker_id: b.id,
                host: StrBytes::from(e.host.as_str()),
                port: e.port,
                rack: b.rack.as_deref().map(StrBytes::from),
                ..DescribeClusterBroker::default()
            })
        })
        .collect();
    // A controller the answer does not list would confuse the client: Kafka gives -1.
    let controller_id = apis
        .metadata_cache
        .controller_id()
        .filter(|id| brokers.iter().any(|b| b.broker_id == *id))
        .unwrap_or(-1);
    DescribeClusterResponse {
        cluster_id: StrBytes::from(apis.metadata_cache.cluster_id()),
        controller_id,
        brokers,
        // Kafka's `computeDescribeClusterResponse`: 0 without Describe on the cluster.
        cluster_authorized_operations: if request.include_cluster_authorized_operations {
            if apis.auth.authorize_cluster(ctx, AclOperation::Describe) {
                apis.auth
                    .authorized_operations(ctx, ResourceType::Cluster, CLUSTER_NAME)
            } else {
                0
            }
        } else {
            i32::MIN
        },
        endpoint_type: BROKER,
        ..DescribeClusterResponse::default()
    }
}
