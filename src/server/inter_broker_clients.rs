//! Connections from this broker to the other brokers' inter-broker listener, for the senders
//! that talk to whichever broker leads something (the transaction markers, the leaders'
//! transaction verification): a live broker's address from the metadata cache, and one
//! `NetworkClient` per address, kept for the next request, secured as the listener is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cluster::BrokerId;
use crate::cluster::sync::lock;
use crate::network::{ClientSecurity, NetworkClient, NetworkClientConfig};

use super::metadata_cache::MetadataCache;

/// See the module doc.
#[derive(Debug)]
pub(crate) struct InterBrokerClients {
    /// Every request's client id.
    client_id: String,
    listener: String,
    request_timeout: Duration,
    metadata_cache: Arc<MetadataCache>,
    security: ClientSecurity,
    clients: Mutex<HashMap<String, Arc<NetworkClient>>>,
}

impl InterBrokerClients {
    pub(crate) fn new(
        client_id: String,
        listener: impl Into<String>,
        request_timeout: Duration,
        metadata_cache: Arc<MetadataCache>,
        security: ClientSecurity,
    ) -> Self {
        InterBrokerClients {
            client_id,
            listener: listener.into(),
            request_timeout,
            metadata_cache,
            security,
            clients: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn metadata_cache(&self) -> &MetadataCache {
        &self.metadata_cache
    }

    /// Whether `broker` is alive with an endpoint on the inter-broker listener.
    pub(crate) fn is_reachable(&self, broker: BrokerId) -> bool {
        self.address(broker).is_some()
    }

    /// The address of `broker`'s inter-broker listener, if it is alive.
    pub(crate) fn address(&self, broker: BrokerId) -> Option<String> {
        let node = self
            .metadata_cache
            .alive_brokers()
            .into_iter()
            .find(|b| b.id == broker)?;
        let endpoint = node.endpoint(&self.listener)?;
        Some(format!("{}:{}", endpoint.host, endpoint.port))
    }

    /// The client of `address`, made on first use.
    pub(crate) fn client(&self, address: &str) -> Arc<NetworkClient> {
        let mut clients = lock(&self.clients);
        let client = clients.entry(address.to_string()).or_insert_with(|| {
            let config = NetworkClientConfig {
                client_id: self.client_id.clone(),
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
