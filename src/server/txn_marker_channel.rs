//! The transaction coordinator's wire to the partition leaders ([`TxnMarkerChannel`]): where
//! each partition's marker goes, from the metadata cache on the inter-broker listener (Kafka's
//! `getPartitionLeaderEndpoint`), and WriteTxnMarkers sent over the outbound inter-broker
//! client, at v1 from `inter.broker.protocol.version` 2.8 on, else v0 (Kafka's
//! `writeTxnMarkersRequestVersion`). This broker's own partitions go over the wire too, as in
//! Kafka: one path for every leader.
//!
//! One `NetworkClient` per destination address, its client id
//! `broker-<id>-txn-marker-sender`; the coordinator keeps one request in flight per broker.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cluster::inter_broker_protocol::InterBrokerProtocolVersion;
use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, TopicPartition};
use crate::coordinator::transaction::{
    MarkerDestination, MarkerFuture, MarkerSendError, TxnMarkerChannel,
};
use crate::network::{ClientSecurity, NetworkClient, NetworkClientConfig};
use crate::protocol::messages::write_txn_markers_request::WriteTxnMarkersRequest;
use crate::protocol::messages::{RequestKind, ResponseKind};

use super::metadata_cache::MetadataCache;

/// The channel; see the module doc.
#[derive(Debug)]
pub struct TxnMarkerSender {
    broker_id: BrokerId,
    listener: String,
    version: i16,
    request_timeout: Duration,
    metadata_cache: Arc<MetadataCache>,
    security: ClientSecurity,
    clients: Mutex<HashMap<String, Arc<NetworkClient>>>,
}

impl TxnMarkerSender {
    pub fn new(
        broker_id: BrokerId,
        listener: impl Into<String>,
        ibp: InterBrokerProtocolVersion,
        request_timeout: Duration,
        metadata_cache: Arc<MetadataCache>,
        security: ClientSecurity,
    ) -> Self {
        TxnMarkerSender {
            broker_id,
            listener: listener.into(),
            version: if ibp.at_least(2, 8, 0) { 1 } else { 0 },
            request_timeout,
            metadata_cache,
            security,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The address of `broker`'s inter-broker listener, if it is alive.
    fn address(&self, broker: BrokerId) -> Option<String> {
        let node = self
            .metadata_cache
            .alive_brokers()
            .into_iter()
            .find(|b| b.id == broker)?;
        let endpoint = node.endpoint(&self.listener)?;
        Some(format!("{}:{}", endpoint.host, endpoint.port))
    }

    fn client(&self, address: &str) -> Arc<NetworkClient> {
        let mut clients = lock(&self.clients);
        let client = clients.entry(address.to_string()).or_insert_with(|| {
            let config = NetworkClientConfig {
                client_id: format!("broker-{}-txn-marker-sender", self.broker_id),
                request_timeout: self.request_timeout,
                authenticator: self.security.authenticator.clone(),
                tls: self.security.tls.clone(),
                ..NetworkClientConfig::default()
            };
            Arc::new(NetworkClient::new(address, config))
        });
        Arc::clone(client)
    }
}

impl TxnMarkerChannel for TxnMarkerSender {
    fn destination(&self, tp: &TopicPartition) -> MarkerDestination {
        let Some(partition) = self.metadata_cache.partition(&tp.topic, tp.partition) else {
            return MarkerDestination::NoPartition;
        };
        let alive = self
            .metadata_cache
            .alive_brokers()
            .into_iter()
            .any(|b| b.id == partition.leader && b.endpoint(&self.listener).is_some());
        if alive {
            MarkerDestination::Broker(partition.leader)
        } else {
            MarkerDestination::UnknownBroker
        }
    }

    fn send(&self, broker: BrokerId, request: WriteTxnMarkersRequest) -> MarkerFuture<'_> {
        Box::pin(async move {
            let failed = |reason: String| MarkerSendError { broker, reason };
            let Some(address) = self.address(broker) else {
                return Err(failed(
                    "no live endpoint on the inter-broker listener".into(),
                ));
            };
            let client = self.client(&address);
            match client
                .send(&RequestKind::WriteTxnMarkers(request), self.version)
                .await
            {
                Ok(ResponseKind::WriteTxnMarkers(response)) => Ok(response),
                Ok(other) => Err(failed(format!(
                    "answered with a {:?} response",
                    other.api_key()
                ))),
                Err(e) => Err(failed(e.to_string())),
            }
        })
    }
}
