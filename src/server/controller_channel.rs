//! The controller's [`BrokerChannel`]: how this broker's controller reaches brokers. Requests to
//! this broker itself are handed to its own handlers in process (the same functions its
//! listener serves them with, so a broker obeys its own controller exactly as it obeys another
//! one); requests to other brokers go over the outbound inter-broker client.

use std::sync::{Arc, OnceLock, Weak};

use crate::cluster::BrokerId;
use crate::controller::channel_manager::{
    BrokerChannel, BrokerNode, ChannelError, ChannelFuture, ControllerResponse,
};
use crate::controller::controller_request_batch::ControllerRequest;

use super::apis;
use super::kafka_apis::KafkaApis;

/// The channel; [`ControllerChannel::bind`] gives it the broker's handlers once they exist.
#[derive(Debug)]
pub struct ControllerChannel {
    local_broker_id: BrokerId,
    apis: OnceLock<Weak<KafkaApis>>,
}

impl ControllerChannel {
    pub fn new(local_broker_id: BrokerId) -> Self {
        ControllerChannel {
            local_broker_id,
            apis: OnceLock::new(),
        }
    }

    pub fn bind(&self, apis: &Arc<KafkaApis>) {
        let _ = self.apis.set(Arc::downgrade(apis));
    }

    fn unavailable(node: &BrokerNode, reason: &str) -> ChannelError {
        ChannelError {
            broker: node.id,
            reason: reason.to_string(),
        }
    }
}

impl BrokerChannel for ControllerChannel {
    fn send<'a>(
        &'a self,
        node: &'a BrokerNode,
        request: &'a ControllerRequest,
    ) -> ChannelFuture<'a> {
        Box::pin(async move {
            if node.id != self.local_broker_id {
                return Err(Self::unavailable(
                    node,
                    "no inter-broker client: this build reaches only its own broker",
                ));
            }
            let Some(apis) = self.apis.get().and_then(Weak::upgrade) else {
                return Err(Self::unavailable(node, "the broker is not serving yet"));
            };
            Ok(match request.clone() {
                ControllerRequest::LeaderAndIsr { version, request } => {
                    ControllerResponse::LeaderAndIsr(
                        apis::leader_and_isr::become_leader_or_follower(&apis, version, request)
                            .await,
                    )
                }
                ControllerRequest::UpdateMetadata { version, request } => {
                    ControllerResponse::UpdateMetadata(apis::update_metadata::update_metadata(
                        &apis, version, request,
                    ))
                }
                ControllerRequest::StopReplica { request, .. } => ControllerResponse::StopReplica(
                    apis::stop_replica::stop_replicas(&apis, request),
                ),
            })
        })
    }
}
