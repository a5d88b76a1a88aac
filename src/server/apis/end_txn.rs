//! EndTxn (Kafka's `handleEndTxnRequest`), v0-4: commits or aborts the producer's transaction.
//! Needs WRITE on the transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED. Answered
//! once the coordinator's PrepareCommit or PrepareAbort record is committed; the markers follow
//! (`coordinator::transaction::end_transaction`). PRODUCER_FENCED is INVALID_PRODUCER_EPOCH
//! before v2.

use crate::coordinator::transaction::TransactionResult;
use crate::network::Response;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::end_txn_request::EndTxnRequest;
use crate::protocol::messages::end_txn_response::EndTxnResponse;
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: EndTxnRequest,
) -> Response {
    let id = request.transactional_id.to_string_lossy();
    let code = if !apis
        .auth
        .authorize(ctx, AclOperation::Write, ResourceType::TransactionalId, &id)
    {
        ErrorCode::TransactionalIdAuthorizationFailed
    } else {
        let code = apis
            .txn_coordinator
            .handle_end_transaction(
                &id,
                request.producer_id,
                request.producer_epoch,
                TransactionResult::from_committed(request.committed),
            )
            .await;
        if code == ErrorCode::ProducerFenced && ctx.api_version < 2 {
            ErrorCode::InvalidProducerEpoch
        } else {
            code
        }
    };
    ctx.respond(ResponseKind::EndTxn(EndTxnResponse {
        error_code: code.code(),
        ..EndTxnResponse::default()
    }))
}
