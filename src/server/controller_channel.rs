//! The controller's [`BrokerChannel`]: how this broker's controller reaches brokers. Requests to
//! this broker itself are handed to its own handlers in process (the same functions its
//! listener serves them with, so a broker obeys its own controller exactly as it obeys another
//! one); requests to other brokers go over the outbound inter-broker client, `NetworkClient`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::cluster::BrokerId;
use crate::controller::channel_manager::{
    BrokerChannel, BrokerNode, ChannelError, ChannelFuture, ControllerResponse,
};
use crate::controller::controller_request_batch::ControllerRequest;
use crate::network::ClientSecurity;
use crate::network::network_client::{NetworkClient, NetworkClientConfig};
use crate::protocol::messages::{RequestKind, ResponseKind};

use super::apis;
use super::kafka_apis::KafkaApis;

/// The channel; [`ControllerChannel::bind`] gives it the broker's handlers once they exist.
#[derive(Debug)]
pub struct ControllerChannel {
    local_broker_id: BrokerId,
    apis: OnceLock<Weak<KafkaApis>>,
    /// TLS and SASL for the connections to other brokers (the inter-broker listener's).
    security: ClientSecurity,
    /// One client per remote broker address; the channel manager keeps one request in flight
    /// per broker, so a client is never shared by two sends at once.
    clients: Mutex<HashMap<(BrokerId, String, i32), Arc<NetworkClient>>>,
}

impl ControllerChannel {
    pub fn new(local_broker_id: BrokerId) -> Self {
        ControllerChannel {
            local_broker_id,
            apis: OnceLock::new(),
            security: ClientSecurity::default(),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The same, securing its connections to other brokers with `security`.
    pub fn with_client_security(mut self, security: ClientSecurity) -> Self {
        self.security = security;
        self
    }

    pub fn bind(&self, apis: &Arc<KafkaApis>) {
        let _ = self.apis.set(Arc::downgrade(apis));
    }

    fn client(&self, node: &BrokerNode) -> Arc<NetworkClient> {
        let mut clients = crate::cluster::sync::lock(&self.clients);
        let key = (node.id, node.host.clone(), node.port);
        Arc::clone(clients.entry(key).or_insert_with(|| {
            let config = NetworkClientConfig {
                client_id: format!("broker-{}-controller", self.local_broker_id),
                authenticator: self.security.authenticator.clone(),
                tls: self.security.tls.clone(),
                ..NetworkClientConfig::default()
            };
            Arc::new(NetworkClient::new(
                format!("{}:{}", node.host, node.port),
                config,
            ))
        }))
    }

    /// A request to another broker, over the wire at the version the IBP chose.
    async fn send_remote(
        &self,
        node: &BrokerNode,
        request: &ControllerRequest,
    ) -> Result<ControllerResponse, ChannelError> {
        let (body, version) = match request.clone() {
            ControllerRequest::LeaderAndIsr { version, request } => {
                (RequestKind::LeaderAndIsr(request), version)
            }
            ControllerRequest::UpdateMetadata { version, request } => {
                (RequestKind::UpdateMetadata(request), version)
            }
            ControllerRequest::StopReplica { version, request } => {
                (RequestKind::StopReplica(request), version)
            }
        };
        let response = self
            .client(node)
            .send(&body, version)
            .await
            .map_err(|e| Self::unavailable(node, &e.to_string()))?;
        match response {
            ResponseKind::LeaderAndIsr(r) => Ok(ControllerResponse::LeaderAndIsr(r)),
            ResponseKind::UpdateMetadata(r) => Ok(ControllerResponse::UpdateMetadata(r)),
            ResponseKind::StopReplica(r) => Ok(ControllerResponse::StopReplica(r)),
            _ => Err(Self::unavailable(
                node,
                "answered with another API's response",
            )),
        }
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
                return self.send_remote(node, request).await;
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
