//! The cluster through a broker (`--bootstrap-server`): Metadata from the bootstrap broker, the
//! reassignment APIs from the controller it names, DescribeLogDirs from every broker. One
//! `NetworkClient` per destination, each request bounded by the connection timeout.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, anyhow};

use crate::cluster::{BrokerId, TopicPartition};
use crate::network::{NetworkClient, NetworkClientConfig};
use crate::protocol::messages::incremental_alter_configs_request::IncrementalAlterConfigsRequest;
use crate::protocol::messages::{RequestKind, ResponseKind};

/// IncrementalAlterConfigs at v0 (every broker kcli and Kafka 3.9 run serves it).
const INCREMENTAL_ALTER_CONFIGS_VERSION: i16 = 0;

use super::requests::{self, ClusterMetadata, Ongoing};

/// Connections to the cluster.
#[derive(Debug)]
pub(super) struct BrokerAdmin {
    /// One client per address of `--bootstrap-server` (a comma-separated list, as Kafka's).
    bootstrap: Vec<NetworkClient>,
    config: NetworkClientConfig,
    timeout: Duration,
}

impl BrokerAdmin {
    pub(super) fn new(bootstrap: &str, timeout: Duration) -> Self {
        let config = NetworkClientConfig {
            client_id: "kcli-assign".into(),
            request_timeout: timeout,
            connect_timeout: timeout,
            ..NetworkClientConfig::default()
        };
        BrokerAdmin {
            bootstrap: bootstrap
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(|a| NetworkClient::new(a, config.clone()))
                .collect(),
            config,
            timeout,
        }
    }

    /// Brokers, controller, and `topics` (none: no topic), from the first bootstrap broker
    /// that answers.
    pub(super) async fn metadata(&self, topics: &[String]) -> anyhow::Result<ClusterMetadata> {
        let request = RequestKind::Metadata(requests::metadata_request(topics));
        let mut last = anyhow!("--bootstrap-server names no broker");
        for client in &self.bootstrap {
            let response = match client.send(&request, requests::METADATA_VERSION).await {
                Ok(response) => response,
                Err(e) => {
                    last = anyhow::Error::new(e).context("Metadata");
                    continue;
                }
            };
            let ResponseKind::Metadata(m) = response else {
                return Err(anyhow!(
                    "{} answered Metadata with another response",
                    client.destination()
                ));
            };
            return requests::read_metadata(&m)
                .map_err(|e| anyhow!("Metadata from {}: {e}", client.destination()));
        }
        Err(last)
    }

    /// A client for the controller `metadata` names.
    pub(super) fn controller(&self, metadata: &ClusterMetadata) -> anyhow::Result<NetworkClient> {
        let controller = metadata
            .brokers
            .iter()
            .find(|b| b.metadata.id == metadata.controller_id)
            .ok_or_else(|| {
                anyhow!(
                    "the cluster has no controller now (Metadata names {})",
                    metadata.controller_id
                )
            })?;
        Ok(NetworkClient::new(&controller.address, self.config.clone()))
    }

    /// A client for broker `id` as `metadata` lists it.
    pub(super) fn broker(
        &self,
        metadata: &ClusterMetadata,
        id: BrokerId,
    ) -> anyhow::Result<NetworkClient> {
        let broker = metadata
            .brokers
            .iter()
            .find(|b| b.metadata.id == id)
            .ok_or_else(|| anyhow!("broker {id} is not in the cluster's metadata"))?;
        Ok(NetworkClient::new(&broker.address, self.config.clone()))
    }

    /// IncrementalAlterConfigs on `client`; any resource refused is an error naming it.
    pub(super) async fn incremental_alter_configs(
        &self,
        client: &NetworkClient,
        request: IncrementalAlterConfigsRequest,
    ) -> anyhow::Result<()> {
        let response = client
            .send(
                &RequestKind::IncrementalAlterConfigs(request),
                INCREMENTAL_ALTER_CONFIGS_VERSION,
            )
            .await
            .context("IncrementalAlterConfigs")?;
        let ResponseKind::IncrementalAlterConfigs(r) = response else {
            return Err(anyhow!(
                "{} answered IncrementalAlterConfigs with another response",
                client.destination()
            ));
        };
        for resource in &r.responses {
            if resource.error_code != 0 {
                return Err(anyhow!(
                    "IncrementalAlterConfigs of {}: {}",
                    resource.resource_name.to_string_lossy(),
                    requests::error_text(resource.error_code, resource.error_message.as_ref())
                ));
            }
        }
        Ok(())
    }

    /// The reassignments in progress (of `partitions`, or all).
    pub(super) async fn list_reassignments(
        &self,
        controller: &NetworkClient,
        partitions: Option<&[TopicPartition]>,
    ) -> anyhow::Result<BTreeMap<TopicPartition, Ongoing>> {
        let mut request = requests::list_request(partitions);
        request.timeout_ms = self.timeout_ms();
        let response = controller
            .send(
                &RequestKind::ListPartitionReassignments(request),
                requests::LIST_REASSIGNMENTS_VERSION,
            )
            .await
            .context("ListPartitionReassignments")?;
        let ResponseKind::ListPartitionReassignments(r) = response else {
            return Err(anyhow!(
                "{} answered ListPartitionReassignments with another response",
                controller.destination()
            ));
        };
        requests::read_list_response(&r).map_err(|e| {
            anyhow!(
                "ListPartitionReassignments on {}: {e}",
                controller.destination()
            )
        })
    }

    /// Starts (`Some`) or cancels (`None`) reassignments; the partitions refused, with why.
    pub(super) async fn alter_reassignments(
        &self,
        controller: &NetworkClient,
        targets: &BTreeMap<TopicPartition, Option<Vec<BrokerId>>>,
    ) -> anyhow::Result<BTreeMap<TopicPartition, String>> {
        let request = requests::alter_request(targets, self.timeout_ms());
        let response = controller
            .send(
                &RequestKind::AlterPartitionReassignments(request),
                requests::ALTER_REASSIGNMENTS_VERSION,
            )
            .await
            .context("AlterPartitionReassignments")?;
        let ResponseKind::AlterPartitionReassignments(r) = response else {
            return Err(anyhow!(
                "{} answered AlterPartitionReassignments with another response",
                controller.destination()
            ));
        };
        let asked: Vec<TopicPartition> = targets.keys().cloned().collect();
        Ok(requests::read_alter_response(&r, &asked))
    }

    /// Every partition's size in bytes (its largest replica), asked of each broker.
    pub(super) async fn partition_sizes(
        &self,
        metadata: &ClusterMetadata,
    ) -> anyhow::Result<BTreeMap<TopicPartition, i64>> {
        let mut sizes = BTreeMap::new();
        for broker in &metadata.brokers {
            let client = NetworkClient::new(&broker.address, self.config.clone());
            let response = client
                .send(
                    &RequestKind::DescribeLogDirs(requests::describe_log_dirs_request()),
                    requests::DESCRIBE_LOG_DIRS_VERSION,
                )
                .await
                .with_context(|| format!("DescribeLogDirs on broker {}", broker.metadata.id))?;
            client.disconnect().await;
            let ResponseKind::DescribeLogDirs(r) = response else {
                return Err(anyhow!(
                    "broker {} answered DescribeLogDirs with another response",
                    broker.metadata.id
                ));
            };
            requests::add_partition_sizes(&r, &mut sizes);
        }
        Ok(sizes)
    }

    fn timeout_ms(&self) -> i32 {
        i32::try_from(self.timeout.as_millis()).unwrap_or(i32::MAX)
    }
}
