//! DescribeTransactions (Kafka's `handleDescribeTransactionsRequest`, KIP-664), v0: each
//! transactional id's state at its coordinator (this broker): TRANSACTIONAL_ID_AUTHORIZATION_FAILED
//! without DESCRIBE on the id; NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
//! TRANSACTIONAL_ID_NOT_FOUND otherwise as the coordinator answers. The partitions of topics the
//! principal may not DESCRIBE are left out.

use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::describe_transactions_request::DescribeTransactionsRequest;
use crate::protocol::messages::describe_transactions_response::{
    DescribeTransactionsResponse, TopicData, TransactionState,
};
use crate::security::acl::{AclOperation, ResourceType};

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: DescribeTransactionsRequest,
) -> Response {
    let transaction_states = request
        .transactional_ids
        .iter()
        .map(|id| {
            let name = id.to_string_lossy();
            let failed = |code: ErrorCode| TransactionState {
                error_code: code.code(),
                transactional_id: id.clone(),
                transaction_state: StrBytes::default(),
                producer_id: -1,
                producer_epoch: -1,
                ..TransactionState::default()
            };
            if !apis.auth.authorize(
                ctx,
                AclOperation::Describe,
                ResourceType::TransactionalId,
                &name,
            ) {
                return failed(ErrorCode::TransactionalIdAuthorizationFailed);
            }
            let m = match apis.txn_coordinator.handle_describe_transaction(&name) {
                Ok(m) => m,
                Err(code) => return failed(code),
            };
            let mut topics: Vec<TopicData> = Vec::new();
            for tp in &m.partitions {
                if !apis
                    .auth
                    .authorize(ctx, AclOperation::Describe, ResourceType::Topic, &tp.topic)
                {
                    continue;
                }
                match topics.iter_mut().find(|t| t.topic == tp.topic.as_str()) {
                    Some(t) => t.partitions.push(tp.partition),
                    None => topics.push(TopicData {
                        topic: StrBytes::from(tp.topic.as_str()),
                        partitions: vec![tp.partition],
                        ..TopicData::default()
                    }),
                }
            }
            TransactionState {
                error_code: ErrorCode::None.code(),
                transactional_id: id.clone(),
                transaction_state: StrBytes::from(m.state.name()),
                transaction_timeout_ms: m.txn_timeout_ms,
                transaction_start_time_ms: m.txn_start_timestamp_ms,
                producer_id: m.producer_id,
                producer_epoch: m.producer_epoch,
                topics,
                ..TransactionState::default()
            }
        })
        .collect();
    ctx.respond(ResponseKind::DescribeTransactions(
        DescribeTransactionsResponse {
            transaction_states,
            ..DescribeTransactionsResponse::default()
        },
    ))
}
