//! `--bootstrap-server`: the cluster as a live broker answers for it, from the first bootstrap
//! broker that answers: Metadata (every topic, never creating one) for the live brokers, the
//! controller, topic ids, leaders, leader epochs, replicas and ISRs; then DescribeConfigs at the
//! same broker for the topics' overrides (source DYNAMIC_TOPIC_CONFIG, what
//! `/config/topics/<t>` holds) and the cluster-wide dynamic defaults (the broker resource `""`,
//! `/config/brokers/<default>`). Znode state (epochs of the controller and the partitions,
//! reassignments, recovery states, deletion marks) and broker registrations are not in these
//! answers, so the snapshot's `source` keeps the renderers from showing them.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, anyhow};

use super::snapshot::{
    BrokerSnapshot, ClusterSnapshot, PartitionSnapshot, Source, StateSnapshot, TopicSnapshot,
};
use crate::commands::assign::requests::error_text;
use crate::network::{NetworkClient, NetworkClientConfig};
use crate::protocol::codec::StrBytes;
use crate::protocol::messages::describe_configs_request::DescribeConfigsResource;
use crate::protocol::messages::{
    DescribeConfigsRequest, DescribeConfigsResponse, MetadataRequest, MetadataResponse,
    RequestKind, ResponseKind,
};
use crate::server::config_entries::{DYNAMIC_DEFAULT_BROKER_CONFIG, DYNAMIC_TOPIC_CONFIG};
use crate::zk::broker_znode::BrokerZNode;
use crate::zk::zk_data::{BrokerRegistration, ControllerRegistration, PartitionState};

/// The versions sent: the highest Kafka 3.9 and kcli both serve.
const METADATA_VERSION: i16 = 12;
const DESCRIBE_CONFIGS_VERSION: i16 = 4;
/// DescribeConfigs resource types.
const RESOURCE_TOPIC: i8 = 2;
const RESOURCE_BROKER: i8 = 4;

/// Asks the first of `bootstrap` (comma-separated) that answers Metadata.
pub(super) async fn read(bootstrap: &str, timeout: Duration) -> anyhow::Result<ClusterSnapshot> {
    let config = NetworkClientConfig {
        client_id: "kcli-describe-cluster".into(),
        request_timeout: timeout,
        connect_timeout: timeout,
        ..NetworkClientConfig::default()
    };
    let mut last = anyhow!("--bootstrap-server names no broker");
    for address in bootstrap
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        let client = NetworkClient::new(address, config.clone());
        let result = read_from(&client).await;
        client.disconnect().await;
        match result {
            Ok(snapshot) => return Ok(snapshot),
            Err(e) => last = e.context(format!("asking the broker {address}")),
        }
    }
    Err(last)
}

async fn read_from(client: &NetworkClient) -> anyhow::Result<ClusterSnapshot> {
    let request = RequestKind::Metadata(MetadataRequest {
        topics: None,
        allow_auto_topic_creation: false,
        ..MetadataRequest::default()
    });
    let ResponseKind::Metadata(metadata) = client
        .send(&request, METADATA_VERSION)
        .await
        .context("Metadata")?
    else {
        return Err(anyhow!("Metadata answered with another response"));
    };
    let mut snapshot = from_metadata(&metadata).map_err(|e| anyhow!("Metadata: {e}"))?;
    let request = RequestKind::DescribeConfigs(configs_request(&snapshot));
    let ResponseKind::DescribeConfigs(configs) = client
        .send(&request, DESCRIBE_CONFIGS_VERSION)
        .await
        .context("DescribeConfigs")?
    else {
        return Err(anyhow!("DescribeConfigs answered with another response"));
    };
    add_configs(&mut snapshot, &configs).map_err(|e| anyhow!("DescribeConfigs: {e}"))?;
    Ok(snapshot)
}

/// Brokers, controller and topics of a Metadata response. Fields Metadata does not carry hold
/// placeholders (-1, empty) that the renderers do not show for [`Source::Broker`].
fn from_metadata(m: &MetadataResponse) -> Result<ClusterSnapshot, String> {
    let mut brokers: Vec<BrokerSnapshot> = m
        .brokers
        .iter()
        .map(|b| BrokerSnapshot {
            id: b.node_id,
            znode: BrokerZNode {
                version: 0,
                host: Some(b.host.to_string_lossy().into_owned()),
                port: b.port,
                registration: BrokerRegistration {
                    endpoints: Vec::new(),
                    rack: b.rack.as_ref().map(|r| r.to_string_lossy().into_owned()),
                    jmx_port: -1,
                    timestamp_ms: -1,
                },
                features: Default::default(),
            },
            broker_epoch: -1,
        })
        .collect();
    brokers.sort_by_key(|b| b.id);
    let mut topics = Vec::new();
    for t in &m.topics {
        let name = t
            .name
            .as_ref()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if t.error_code != 0 {
            return Err(format!("topic {name}: {}", error_text(t.error_code, None)));
        }
        let mut partitions: Vec<PartitionSnapshot> = t
            .partitions
            .iter()
            .map(|p| PartitionSnapshot {
                partition: p.partition_index,
                replicas: p.replica_nodes.clone(),
                adding_replicas: Vec::new(),
                removing_replicas: Vec::new(),
                state: Some(StateSnapshot {
                    state: PartitionState {
                        leader: p.leader_id,
                        leader_epoch: p.leader_epoch,
                        isr: p.isr_nodes.clone(),
                        controller_epoch: -1,
                        leader_recovery_state: 0,
                    },
                    partition_epoch: -1,
                }),
            })
            .collect();
        partitions.sort_by_key(|p| p.partition);
        topics.push(TopicSnapshot {
            name,
            topic_id: (!t.topic_id.is_nil()).then_some(t.topic_id),
            configs: BTreeMap::new(),
            marked_for_deletion: false,
            partitions,
        });
    }
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(ClusterSnapshot {
        source: Source::Broker,
        cluster_id: m
            .cluster_id
            .as_ref()
            .map(|c| c.to_string_lossy().into_owned()),
        controller: (m.controller_id >= 0).then_some(ControllerRegistration {
            broker_id: m.controller_id,
            timestamp_ms: -1,
            kraft_controller_epoch: -1,
        }),
        controller_epoch: None,
        brokers,
        topics,
        broker_defaults: BTreeMap::new(),
    })
}

/// Every topic's configs and the cluster-wide defaults.
fn configs_request(snapshot: &ClusterSnapshot) -> DescribeConfigsRequest {
    let resource = |resource_type: i8, name: &str| DescribeConfigsResource {
        resource_type,
        resource_name: StrBytes::from(name.to_string()),
        configuration_keys: None,
        ..DescribeConfigsResource::default()
    };
    let mut resources: Vec<DescribeConfigsResource> = snapshot
        .topics
        .iter()
        .map(|t| resource(RESOURCE_TOPIC, &t.name))
        .collect();
    resources.push(resource(RESOURCE_BROKER, ""));
    DescribeConfigsRequest {
        resources,
        ..DescribeConfigsRequest::default()
    }
}

/// The overrides ZooKeeper would hold: each topic's DYNAMIC_TOPIC_CONFIG entries and the
/// cluster's DYNAMIC_DEFAULT_BROKER_CONFIG ones. A resource answered with an error is one.
fn add_configs(
    snapshot: &mut ClusterSnapshot,
    response: &DescribeConfigsResponse,
) -> Result<(), String> {
    for result in &response.results {
        let name = result.resource_name.to_string_lossy().into_owned();
        if result.error_code != 0 {
            let what = match result.resource_type {
                RESOURCE_TOPIC => format!("topic {name}"),
                _ => "the cluster's broker defaults".to_string(),
            };
            return Err(format!(
                "{what}: {}",
                error_text(result.error_code, result.error_message.as_ref())
            ));
        }
        let wanted = match result.resource_type {
            RESOURCE_TOPIC => DYNAMIC_TOPIC_CONFIG,
            _ => DYNAMIC_DEFAULT_BROKER_CONFIG,
        };
        let overrides: BTreeMap<String, String> = result
            .configs
            .iter()
            .filter(|c| c.config_source == wanted)
            .filter_map(|c| {
                let value = c.value.as_ref()?.to_string_lossy().into_owned();
                Some((c.name.to_string_lossy().into_owned(), value))
            })
            .collect();
        match result.resource_type {
            RESOURCE_TOPIC => {
                if let Some(topic) = snapshot.topics.iter_mut().find(|t| t.name == name) {
                    topic.configs = overrides;
                }
            }
            _ => snapshot.broker_defaults = overrides,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::describe_configs_response::{
        DescribeConfigsResourceResult, DescribeConfigsResult,
    };
    use crate::protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };

    fn metadata() -> MetadataResponse {
        MetadataResponse {
            brokers: vec![
                MetadataResponseBroker {
                    node_id: 2,
                    host: StrBytes::from("h2"),
                    port: 9093,
                    rack: Some(StrBytes::from("r2")),
                    ..MetadataResponseBroker::default()
                },
                MetadataResponseBroker {
                    node_id: 1,
                    host: StrBytes::from("h1"),
                    port: 9092,
                    rack: None,
                    ..MetadataResponseBroker::default()
                },
            ],
            cluster_id: Some(StrBytes::from("c")),
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                name: Some(StrBytes::from("t")),
                topic_id: uuid::Uuid::from_u128(7),
                partitions: vec![
                    MetadataResponsePartition {
                        partition_index: 1,
                        leader_id: -1,
                        leader_epoch: 4,
                        replica_nodes: vec![3],
                        isr_nodes: vec![3],
                        error_code: 5,
                        ..MetadataResponsePartition::default()
                    },
                    MetadataResponsePartition {
                        partition_index: 0,
                        leader_id: 2,
                        leader_epoch: 3,
                        replica_nodes: vec![2, 1],
                        isr_nodes: vec![2],
                        ..MetadataResponsePartition::default()
                    },
                ],
                ..MetadataResponseTopic::default()
            }],
            ..MetadataResponse::default()
        }
    }

    #[test]
    fn metadata_gives_brokers_controller_and_partitions_in_order() {
        let s = from_metadata(&metadata()).unwrap();
        assert_eq!(s.source, Source::Broker);
        assert_eq!(s.cluster_id.as_deref(), Some("c"));
        assert_eq!(s.controller.as_ref().map(|c| c.broker_id), Some(1));
        assert_eq!(s.controller_epoch, None);
        let brokers: Vec<(i32, Option<&str>, i32, Option<&str>)> = s
            .brokers
            .iter()
            .map(|b| {
                (
                    b.id,
                    b.znode.host.as_deref(),
                    b.znode.port,
                    b.znode.registration.rack.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            brokers,
            [
                (1, Some("h1"), 9092, None),
                (2, Some("h2"), 9093, Some("r2"))
            ]
        );
        let t = &s.topics[0];
        assert_eq!(t.topic_id, Some(uuid::Uuid::from_u128(7)));
        let p: Vec<(i32, i32, i32, &[i32])> = t
            .partitions
            .iter()
            .map(|p| {
                let st = &p.state.as_ref().unwrap().state;
                (p.partition, st.leader, st.leader_epoch, st.isr.as_slice())
            })
            .collect();
        assert_eq!(p, [(0, 2, 3, &[2][..]), (1, -1, 4, &[3][..])]);
        // No controller known: none.
        let mut m = metadata();
        m.controller_id = -1;
        assert!(from_metadata(&m).unwrap().controller.is_none());
        m.topics[0].error_code = 29;
        assert!(from_metadata(&m).unwrap_err().contains("topic t"));
    }

    fn entry(name: &str, value: &str, source: i8) -> DescribeConfigsResourceResult {
        DescribeConfigsResourceResult {
            name: StrBytes::from(name.to_string()),
            value: Some(StrBytes::from(value.to_string())),
            config_source: source,
            ..DescribeConfigsResourceResult::default()
        }
    }

    #[test]
    fn configs_keep_what_zookeeper_would_hold() {
        let mut s = from_metadata(&metadata()).unwrap();
        let request = configs_request(&s);
        let asked: Vec<(i8, String)> = request
            .resources
            .iter()
            .map(|r| {
                (
                    r.resource_type,
                    r.resource_name.to_string_lossy().into_owned(),
                )
            })
            .collect();
        assert_eq!(asked, [(2, "t".to_string()), (4, String::new())]);
        assert!(
            request
                .resources
                .iter()
                .all(|r| r.configuration_keys.is_none())
        );
        let response = DescribeConfigsResponse {
            results: vec![
                DescribeConfigsResult {
                    resource_type: 2,
                    resource_name: StrBytes::from("t"),
                    configs: vec![
                        entry("cleanup.policy", "compact", DYNAMIC_TOPIC_CONFIG),
                        entry("min.insync.replicas", "2", DYNAMIC_DEFAULT_BROKER_CONFIG),
                        entry("retention.ms", "604800000", 5),
                    ],
                    ..DescribeConfigsResult::default()
                },
                DescribeConfigsResult {
                    resource_type: 4,
                    resource_name: StrBytes::from(""),
                    configs: vec![entry(
                        "min.insync.replicas",
                        "2",
                        DYNAMIC_DEFAULT_BROKER_CONFIG,
                    )],
                    ..DescribeConfigsResult::default()
                },
            ],
            ..DescribeConfigsResponse::default()
        };
        add_configs(&mut s, &response).unwrap();
        let topic: Vec<(&str, &str)> = s.topics[0]
            .configs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(topic, [("cleanup.policy", "compact")]);
        assert_eq!(
            s.broker_defaults
                .get("min.insync.replicas")
                .map(String::as_str),
            Some("2")
        );
        let mut refused = response;
        refused.results[0].error_code = 29;
        assert!(
            add_configs(&mut s, &refused)
                .unwrap_err()
                .contains("topic t")
        );
    }
}
