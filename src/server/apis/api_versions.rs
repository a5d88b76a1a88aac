//! ApiVersions: the APIs and versions this broker serves (see `server::api_versions`). A request
//! of a version the broker does not know is answered per KIP-511: a v0 response with
//! UNSUPPORTED_VERSION and the key list, so the client can retry with a version both know.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::api_versions_request::ApiVersionsRequest;
use crate::protocol::messages::api_versions_response::{ApiVersion, ApiVersionsResponse};

use super::super::api_versions::all_advertised;
use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

fn api_keys() -> Vec<ApiVersion> {
    all_advertised()
        .into_iter()
        .map(|(key, range)| ApiVersion {
            api_key: key as i16,
            min_version: range.min,
            max_version: range.max,
            ..ApiVersion::default()
        })
        .collect()
}

pub(crate) fn handle(
    _apis: &KafkaApis,
    ctx: &RequestContext,
    _request: ApiVersionsRequest,
) -> Response {
    ctx.respond(ResponseKind::ApiVersions(response()))
}

/// The answer to an ApiVersions this broker can read, on any listener (the SASL authenticator
/// gives the same one before authentication). ZooKeeper-mode brokers advertise no features
/// (Kafka's `ZkBrokerApiVersionManager`), and finalized features epoch -1; tagged fields at
/// their defaults are not written.
pub(crate) fn response() -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: ErrorCode::None.code(),
        api_keys: api_keys(),
        finalized_features_epoch: -1,
        ..ApiVersionsResponse::default()
    }
}

/// The KIP-511 answer to a version newer than the broker's, to be written at v0.
pub(crate) fn unsupported_version_response() -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: ErrorCode::UnsupportedVersion.code(),
        api_keys: api_keys(),
        ..ApiVersionsResponse::default()
    }
}

/// The KIP-511 answer to a version newer than the broker's: the body at v0.
pub(crate) fn unsupported_version(ctx: &RequestContext) -> Response {
    let v0 = RequestContext {
        api_version: 0,
        ..ctx.clone()
    };
    v0.respond(ResponseKind::ApiVersions(unsupported_version_response()))
}
