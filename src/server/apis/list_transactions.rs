//! ListTransactions (Kafka's `handleListTransactionsRequest`, KIP-664 and KIP-994), v0-1: the
//! transactional ids this broker coordinates, filtered by state names, producer ids and (v1) how
//! long their transaction has been open; ids the principal may not DESCRIBE are left out. The
//! admin client asks every broker. COORDINATOR_LOAD_IN_PROGRESS while any partition loads.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::list_transactions_request::ListTransactionsRequest;
use crate::protocol::messages::list_transactions_response::{
    ListTransactionsResponse, TransactionState,
};
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: ListTransactionsRequest,
) -> Response {
    let states: Vec<String> = request
        .state_filters
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let duration = if ctx.api_version >= 1 {
        request.duration_filter
    } else {
        -1
    };
    let listing = apis.txn_coordinator.handle_list_transactions(
        &request.producer_id_filters,
        &states,
        duration,
    );
    let transaction_states = listing
        .transactions
        .into_iter()
        .filter(|(id, _, _)| {
            apis.auth.authorize(
                ctx,
                AclOperation::Describe,
                ResourceType::TransactionalId,
                id,
            )
        })
        .map(|(id, producer_id, state)| TransactionState {
            transactional_id: StrBytes::from(id),
            producer_id,
            transaction_state: StrBytes::from(state.name()),
            ..TransactionState::default()
        })
        .collect();
    ctx.respond(ResponseKind::ListTransactions(ListTransactionsResponse {
        error_code: listing.error.unwrap_or(ErrorCode::None).code(),
        unknown_state_filters: listing
            .unknown_state_filters
            .into_iter()
            .map(StrBytes::from)
            .collect(),
        transaction_states,
        ..ListTransactionsResponse::default()
    }))
}
