//! FindCoordinator: which broker coordinates a consumer group or a transactional id. A single
//! broker coordinates every group (it leads every `__consumer_offsets` partition). Transactions
//! are not supported: a transactional id gets a non-retriable error, so a transactional producer
//! fails at once instead of retrying forever. v4+ look up several keys at once.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use crate::protocol::messages::find_coordinator_response::{Coordinator, FindCoordinatorResponse};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

const GROUP: i8 = 0;
const TRANSACTION: i8 = 1;

pub fn handle(apis: &KafkaApis, ctx: &RequestContext, request: FindCoordinatorRequest) -> Response {
    let keys: Vec<StrBytes> = if ctx.api_version >= 4 {
        request.coordinator_keys.clone()
    } else {
        vec![request.key.clone()]
    };
    let coordinators: Vec<Coordinator> = keys
        .into_iter()
        .map(|key| lookup(apis, ctx, request.key_type, key))
        .collect();
    let response = if ctx.api_version >= 4 {
        FindCoordinatorResponse {
            coordinators,
            ..FindCoordinatorResponse::default()
        }
    } else {
        let c = coordinators.into_iter().next().unwrap_or_default();
        FindCoordinatorResponse {
            error_code: c.error_code,
            error_message: if ctx.api_version >= 1 {
                c.error_message
            } else {
                None
            },
            node_id: c.node_id,
            host: c.host,
            port: c.port,
            ..FindCoordinatorResponse::default()
        }
    };
    ctx.respond(ResponseKind::FindCoordinator(response))
}

fn lookup(apis: &KafkaApis, ctx: &RequestContext, key_type: i8, key: StrBytes) -> Coordinator {
    let failed = |code: ErrorCode, message: &str| Coordinator {
        key: key.clone(),
        node_id: -1,
        host: StrBytes::default(),
        port: -1,
        error_code: code.code(),
        error_message: Some(StrBytes::from(message)),
        ..Coordinator::default()
    };
    match key_type {
        GROUP => {}
        TRANSACTION => {
            return failed(
                ErrorCode::TransactionalIdAuthorizationFailed,
                "transactions are not supported by this broker",
            );
        }
        _ => return failed(ErrorCode::InvalidRequest, "unknown coordinator key type"),
    }
    let me = apis.replica_manager.local_broker_id();
    let endpoint = apis
        .metadata_cache
        .alive_brokers()
        .into_iter()
        .find(|b| b.id == me)
        .and_then(|b| b.endpoint(&ctx.listener_name).cloned());
    match endpoint {
        Some(e) => Coordinator {
            key,
            node_id: me,
            host: StrBytes::from(e.host.as_str()),
            port: e.port,
            error_code: ErrorCode::None.code(),
            error_message: None,
            ..Coordinator::default()
        },
        None => failed(
            ErrorCode::CoordinatorNotAvailable,
            "The coordinator is not available.",
        ),
    }
}
