//! How a broker sends its requests to the active controller (Kafka's
//! `BrokerToControllerChannelManager`): AllocateProducerIds for the producer-id manager,
//! AlterPartition for the ISR changes of the partitions it leads, ControlledShutdown when it
//! stops. [`BrokerToControllerChannel`] is the producer-id manager's seam, so its unit tests use
//! a fake controller; the other requests are methods of the manager itself, behind seams of
//! their own users (`replication::alter_partition::AlterPartitionChannel`).
//!
//! [`BrokerToControllerChannelManager`] is the real one. The controller is the one the
//! `MetadataCache` names (UpdateMetadata's controller id), read afresh on every send, so a retry
//! after NOT_CONTROLLER or a lost connection reaches the new controller once the cache knows
//! it. When this broker is the controller the request is answered in process by the same
//! functions its listener serves it with; otherwise it goes over a `NetworkClient` to the
//! controller's endpoint on the inter-broker listener. Sends are not retried here: the caller
//! decides (the producer-id manager retries with backoff until it has a block, the
//! AlterPartition manager until the controller answers).
//!
//! Lock order: the client slot's std mutex is held only to pick or replace the client, never
//! across a send.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::cluster::BrokerId;
use crate::cluster::sync::lock;
use crate::controller::ControllerHandle;
use crate::network::ClientSecurity;
use crate::network::network_client::{NetworkClient, NetworkClientConfig, NetworkClientError};
use crate::protocol::messages::allocate_producer_ids_request::AllocateProducerIdsRequest;
use crate::protocol::messages::allocate_producer_ids_response::AllocateProducerIdsResponse;
use crate::protocol::messages::alter_partition_request::AlterPartitionRequest;
use crate::protocol::messages::alter_partition_response::AlterPartitionResponse;
use crate::protocol::messages::controlled_shutdown_request::ControlledShutdownRequest;
use crate::protocol::messages::controlled_shutdown_response::ControlledShutdownResponse;
use crate::protocol::messages::{RequestKind, ResponseKind};

use super::apis::allocate_producer_ids::allocate_producer_ids;
use super::metadata_cache::MetadataCache;
use super::zk_producer_id_manager::ZkProducerIdManager;

/// AllocateProducerIds exists only at version 0 in Kafka 3.9.
const ALLOCATE_PRODUCER_IDS_VERSION: i16 = 0;

/// AlterPartition v3 (KIP-903: the new ISR with broker epochs, by topic id), which Kafka 3.9's
/// brokers send at every IBP kcli accepts (topic ids came at 2.8) while every topic in the
/// request has an id.
pub(crate) const ALTER_PARTITION_VERSION: i16 = 3;

/// ControlledShutdown v3, which Kafka 3.9's brokers send from IBP 2.4-IV1 (below every IBP kcli
/// accepts).
pub(crate) const CONTROLLED_SHUTDOWN_VERSION: i16 = 3;

/// Why a request reached no controller (an error code in a response is not an error here).
#[derive(Debug, thiserror::Error)]
pub enum BrokerToControllerError {
    #[error("no controller is known to this broker yet")]
    NoController,
    #[error("controller {controller_id} has no endpoint on the inter-broker listener {listener}")]
    NoEndpoint {
        controller_id: BrokerId,
        listener: String,
    },
    #[error("sending to controller {controller_id}: {source}")]
    Network {
        controller_id: BrokerId,
        #[source]
        source: NetworkClientError,
    },
    #[error("controller {controller_id} answered {api} with another API's response")]
    UnexpectedResponse {
        controller_id: BrokerId,
        api: &'static str,
    },
}

/// A boxed, sendable future of the controller's answer.
pub(crate) type ControllerFuture<'a, T = AllocateProducerIdsResponse> =
    Pin<Box<dyn Future<Output = Result<T, BrokerToControllerError>> + Send + 'a>>;

/// The broker's channel to the active controller.
pub trait BrokerToControllerChannel: Send + Sync + std::fmt::Debug {
    /// Sends AllocateProducerIds to the controller this broker knows now.
    fn allocate_producer_ids(&self, request: AllocateProducerIdsRequest) -> ControllerFuture<'_>;
}

/// The connection to the controller last used: its id, `host:port` and client.
type ClientSlot = Option<(BrokerId, String, Arc<NetworkClient>)>;

/// The real channel; see the module doc.
#[derive(Debug)]
pub(crate) struct BrokerToControllerChannelManager {
    broker_id: BrokerId,
    inter_broker_listener: String,
    metadata_cache: Arc<MetadataCache>,
    /// The controller half of this broker, for requests while it is the controller.
    local: Arc<ZkProducerIdManager>,
    controller: ControllerHandle,
    client: Mutex<ClientSlot>,
    /// TLS and SASL for the connections to other brokers (the inter-broker listener's).
    security: ClientSecurity,
}

impl BrokerToControllerChannelManager {
    pub(crate) fn new(
        broker_id: BrokerId,
        inter_broker_listener: String,
        metadata_cache: Arc<MetadataCache>,
        local: Arc<ZkProducerIdManager>,
        controller: ControllerHandle,
    ) -> Self {
        BrokerToControllerChannelManager {
            broker_id,
            inter_broker_listener,
            metadata_cache,
            local,
            controller,
            client: Mutex::new(None),
            security: ClientSecurity::default(),
        }
    }

    /// The same, securing its connections to other brokers with `security`.
    pub(crate) fn with_client_security(mut self, security: ClientSecurity) -> Self {
        self.security = security;
        self
    }

    /// The controller this broker knows now: `Ok(None)` when that is this broker itself.
    fn remote_controller(&self) -> Result<Option<BrokerId>, BrokerToControllerError> {
        let controller_id = self
            .metadata_cache
            .controller_id()
            .ok_or(BrokerToControllerError::NoController)?;
        Ok((controller_id != self.broker_id).then_some(controller_id))
    }

    /// Sends `request` at `version` to the remote controller `controller_id`.
    async fn send_remote(
        &self,
        controller_id: BrokerId,
        request: &RequestKind,
        version: i16,
    ) -> Result<ResponseKind, BrokerToControllerError> {
        let client = self.client_for(controller_id)?;
        client
            .send(request, version)
            .await
            .map_err(|source| BrokerToControllerError::Network {
                controller_id,
                source,
            })
    }

    /// Sends AlterPartition at `version` ([`ALTER_PARTITION_VERSION`], or 1 for a topic
    /// without an id) to the controller.
    pub(crate) async fn alter_partition(
        &self,
        request: AlterPartitionRequest,
        version: i16,
    ) -> Result<AlterPartitionResponse, BrokerToControllerError> {
        let Some(controller_id) = self.remote_controller()? else {
            return Ok(self.controller.alter_partition(request, version).await);
        };
        match self
            .send_remote(
                controller_id,
                &RequestKind::AlterPartition(request),
                version,
            )
            .await?
        {
            ResponseKind::AlterPartition(r) => Ok(r),
            _ => Err(BrokerToControllerError::UnexpectedResponse {
                controller_id,
                api: "AlterPartition",
            }),
        }
    }

    /// Sends ControlledShutdown (v[`CONTROLLED_SHUTDOWN_VERSION`]) for this broker at
    /// `broker_epoch` to the controller.
    pub(crate) async fn controlled_shutdown(
        &self,
        broker_epoch: i64,
    ) -> Result<ControlledShutdownResponse, BrokerToControllerError> {
        let Some(controller_id) = self.remote_controller()? else {
            return Ok(self
                .controller
                .controlled_shutdown(self.broker_id, broker_epoch)
                .await);
        };
        let request = ControlledShutdownRequest {
            broker_id: self.broker_id,
            broker_epoch,
            ..ControlledShutdownRequest::default()
        };
        match self
            .send_remote(
                controller_id,
                &RequestKind::ControlledShutdown(request),
                CONTROLLED_SHUTDOWN_VERSION,
            )
            .await?
        {
            ResponseKind::ControlledShutdown(r) => Ok(r),
            _ => Err(BrokerToControllerError::UnexpectedResponse {
                controller_id,
                api: "ControlledShutdown",
            }),
        }
    }

    /// The client to `controller_id`, reusing the last one while the address is unchanged.
    fn client_for(
        &self,
        controller_id: BrokerId,
    ) -> Result<Arc<NetworkClient>, BrokerToControllerError> {
        let no_endpoint = || BrokerToControllerError::NoEndpoint {
            controller_id,
            listener: self.inter_broker_listener.clone(),
        };
        let brokers = self.metadata_cache.alive_brokers();
        let broker = brokers
            .iter()
            .find(|b| b.id == controller_id)
            .ok_or_else(no_endpoint)?;
        let endpoint = broker
            .endpoint(&self.inter_broker_listener)
            .ok_or_else(no_endpoint)?;
        let destination = format!("{}:{}", endpoint.host, endpoint.port);
        let mut slot = lock(&self.client);
        if let Some((id, address, client)) = slot.as_ref()
            && *id == controller_id
            && *address == destination
        {
            return Ok(Arc::clone(client));
        }
        let config = NetworkClientConfig {
            client_id: format!("broker-{}-to-controller", self.broker_id),
            authenticator: self.security.authenticator.clone(),
            tls: self.security.tls.clone(),
            ..NetworkClientConfig::default()
        };
        let client = Arc::new(NetworkClient::new(destination.clone(), config));
        *slot = Some((controller_id, destination, Arc::clone(&client)));
        Ok(client)
    }
}

impl BrokerToControllerChannel for BrokerToControllerChannelManager {
    fn allocate_producer_ids(&self, request: AllocateProducerIdsRequest) -> ControllerFuture<'_> {
        Box::pin(async move {
            let Some(controller_id) = self.remote_controller()? else {
                return Ok(allocate_producer_ids(&self.local, &request).await);
            };
            match self
                .send_remote(
                    controller_id,
                    &RequestKind::AllocateProducerIds(request),
                    ALLOCATE_PRODUCER_IDS_VERSION,
                )
                .await?
            {
                ResponseKind::AllocateProducerIds(r) => Ok(r),
                _ => Err(BrokerToControllerError::UnexpectedResponse {
                    controller_id,
                    api: "AllocateProducerIds",
                }),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::errors::ErrorCode;
    use crate::server::metadata_cache::{BrokerEndPoint, BrokerMetadata};
    use crate::zk::{EmbeddedStore, ZkClient};

    #[tokio::test]
    async fn answers_in_process_when_this_broker_is_the_controller_and_names_what_is_missing() {
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        crate::zk::recipes::ensure_persistent_paths(zk.as_ref())
            .await
            .unwrap();
        let cache = Arc::new(MetadataCache::new("c".into()));
        let channel = BrokerToControllerChannelManager::new(
            1,
            "PLAINTEXT".into(),
            Arc::clone(&cache),
            Arc::new(ZkProducerIdManager::new(1, zk)),
            ControllerHandle::detached(1),
        );
        let request = AllocateProducerIdsRequest {
            broker_id: 1,
            broker_epoch: 7,
            ..AllocateProducerIdsRequest::default()
        };
        assert!(matches!(
            channel.allocate_producer_ids(request.clone()).await,
            Err(BrokerToControllerError::NoController)
        ));
        // This broker named as controller: the in-process answer, here NOT_CONTROLLER since
        // `/controller` is not held (the same answer the listener gives).
        cache.apply_update_metadata(1, Vec::new(), Vec::new());
        let answer = channel
            .allocate_producer_ids(request.clone())
            .await
            .unwrap();
        assert_eq!(answer.error_code, ErrorCode::NotController.code());
        // Another controller without an endpoint on the listener.
        cache.apply_update_metadata(
            2,
            vec![BrokerMetadata {
                id: 2,
                rack: None,
                endpoints: vec![BrokerEndPoint {
                    listener_name: "INTERNAL".into(),
                    host: "127.0.0.1".into(),
                    port: 1,
                }],
            }],
            Vec::new(),
        );
        assert!(matches!(
            channel.allocate_producer_ids(request).await,
            Err(BrokerToControllerError::NoEndpoint {
                controller_id: 2,
                ..
            })
        ));
    }
}
