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
    request: ApiVersionsRequest,
) -> Response {
    // Kafka's processor registers the client's software from a valid ApiVersions; the
    // connection counts under it in `socket-server-metrics` `connections`.
    if let Some((name, version)) = client_software(&request, ctx.api_version) {
        ctx.recorder.client_software(&name, &version);
    }
    ctx.respond(ResponseKind::ApiVersions(response()))
}

/// The client software a valid ApiVersions of `version` names (Kafka's
/// `ApiVersionsRequest.isValid`: below v3 any request is valid and names none, an empty name
/// being `unknown`); `None` for an invalid one.
pub(crate) fn client_software(
    request: &ApiVersionsRequest,
    version: i16,
) -> Option<(String, String)> {
    if version < 3 {
        return Some((String::new(), String::new()));
    }
    let name = request.client_software_name.to_string_lossy();
    let software_version = request.client_software_version.to_string_lossy();
    (is_valid_software_field(&name) && is_valid_software_field(&software_version))
        .then(|| (name.into_owned(), software_version.into_owned()))
}

/// Kafka's `ApiVersionsRequest.isValid` pattern for the client software's name and version:
/// `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`.
fn is_valid_software_field(field: &str) -> bool {
    let bytes = field.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'.')
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

/// The answer to an invalid ApiVersions (Kafka's `getErrorResponse` with INVALID_REQUEST: the
/// error alone).
pub(crate) fn invalid_request_response() -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: ErrorCode::InvalidRequest.code(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_software_fields_follow_kafkas_pattern() {
        assert!(is_valid_software_field("apache-kafka-java"));
        assert!(is_valid_software_field("3.9.1"));
        assert!(is_valid_software_field("a"));
        assert!(!is_valid_software_field(""));
        assert!(!is_valid_software_field("-x"));
        assert!(!is_valid_software_field("x."));
        assert!(!is_valid_software_field("a b"));
    }

    #[test]
    fn a_valid_api_versions_names_the_client_software_and_an_old_one_names_none() {
        let request = |name: &'static str| ApiVersionsRequest {
            client_software_name: name.into(),
            client_software_version: "1.0".into(),
            ..ApiVersionsRequest::default()
        };
        assert_eq!(
            client_software(&request("kcli-it"), 3),
            Some(("kcli-it".to_string(), "1.0".to_string()))
        );
        assert_eq!(client_software(&request(""), 3), None);
        assert_eq!(client_software(&request("a b"), 4), None);
        // Below v3 the fields are not on the wire; the request is valid and names nothing.
        assert_eq!(
            client_software(&request(""), 2),
            Some((String::new(), String::new()))
        );
    }
}
