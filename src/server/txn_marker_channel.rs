//! The transaction coordinator's wire to the partition leaders ([`TxnMarkerChannel`]): where
//! each partition's marker goes, from the metadata cache on the inter-broker listener (Kafka's
//! `getPartitionLeaderEndpoint`), and WriteTxnMarkers sent over the outbound inter-broker
//! client, at v1 from `inter.broker.protocol.version` 2.8 on, else v0 (Kafka's
//! `writeTxnMarkersRequestVersion`). This broker's own partitions go over the wire too, as in
//! Kafka: one path for every leader.
//!
//! One `NetworkClient` per destination address ([`InterBrokerClients`]), its client id
//! `broker-<id>-txn-marker-sender`; the coordinator keeps one request in flight per broker.

use std::sync::Arc;
use std::time::Duration;

use crate::cluster::inter_broker_protocol::InterBrokerProtocolVersion;
use crate::cluster::{BrokerId, TopicPartition};
use crate::coordinator::transaction::{
    MarkerDestination, MarkerFuture, MarkerSendError, TxnMarkerChannel,
};
use crate::network::ClientSecurity;
use crate::protocol::messages::write_txn_markers_request::WriteTxnMarkersRequest;
use crate::protocol::messages::{RequestKind, ResponseKind};

use super::inter_broker_clients::InterBrokerClients;
use super::metadata_cache::MetadataCache;

/// The channel; see the module doc.
#[derive(Debug)]
pub(crate) struct TxnMarkerSender {
    version: i16,
    brokers: InterBrokerClients,
}

impl TxnMarkerSender {
    pub(crate) fn new(
        broker_id: BrokerId,
        listener: impl Into<String>,
        ibp: InterBrokerProtocolVersion,
        request_timeout: Duration,
        metadata_cache: Arc<MetadataCache>,
        security: ClientSecurity,
    ) -> Self {
        TxnMarkerSender {
            version: if ibp.at_least(2, 8, 0) { 1 } else { 0 },
            brokers: InterBrokerClients::new(
                format!("broker-{broker_id}-txn-marker-sender"),
                listener,
                request_timeout,
                metadata_cache,
                security,
            ),
        }
    }
}

impl TxnMarkerChannel for TxnMarkerSender {
    fn destination(&self, tp: &TopicPartition) -> MarkerDestination {
        let Some(partition) = self
            .brokers
            .metadata_cache()
            .partition(&tp.topic, tp.partition)
        else {
            return MarkerDestination::NoPartition;
        };
        if self.brokers.is_reachable(partition.leader) {
            MarkerDestination::Broker(partition.leader)
        } else {
            MarkerDestination::UnknownBroker
        }
    }

    fn send(&self, broker: BrokerId, request: WriteTxnMarkersRequest) -> MarkerFuture<'_> {
        Box::pin(async move {
            let failed = |reason: String| MarkerSendError { broker, reason };
            let Some(address) = self.brokers.address(broker) else {
                return Err(failed(
                    "no live endpoint on the inter-broker listener".into(),
                ));
            };
            let client = self.brokers.client(&address);
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
