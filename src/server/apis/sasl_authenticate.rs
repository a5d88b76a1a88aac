//! SaslAuthenticate (api 36) after authentication, or on a listener without SASL (Kafka's
//! `KafkaApis.handleSaslAuthenticateRequest`): answered ILLEGAL_SASL_STATE with Kafka's message,
//! since tokens are only taken during the exchange (`server/sasl_authenticator.rs`) and kcli
//! offers no re-authentication.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::sasl_authenticate_response::SaslAuthenticateResponse;

use super::super::request_context::RequestContext;

pub(crate) fn handle(ctx: &RequestContext) -> Response {
    ctx.respond(ResponseKind::SaslAuthenticate(SaslAuthenticateResponse {
        error_code: ErrorCode::IllegalSaslState.code(),
        error_message: Some(StrBytes::from(
            "SaslAuthenticate request received after successful authentication",
        )),
        ..SaslAuthenticateResponse::default()
    }))
}
