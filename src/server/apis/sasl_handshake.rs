//! SaslHandshake (api 17) after authentication, or on a listener without SASL (Kafka's
//! `KafkaApis.handleSaslHandshakeRequest`): the exchange itself runs before requests reach the
//! handler (`server/sasl_authenticator.rs`), so one arriving here is out of place and answered
//! ILLEGAL_SASL_STATE.

use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::sasl_handshake_response::SaslHandshakeResponse;

use super::super::request_context::RequestContext;

pub(crate) fn handle(ctx: &RequestContext) -> Response {
    ctx.respond(ResponseKind::SaslHandshake(SaslHandshakeResponse {
        error_code: ErrorCode::IllegalSaslState.code(),
        mechanisms: Vec::new(),
    }))
}
