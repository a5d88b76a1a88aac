//! `--format json`: one object, `{"cluster_id","controller":{"id","epoch"},"brokers":[..],
//! "topics":[..]}`, keys in the order docs/describe-cluster.md lists them (serde's derive keeps
//! field order). Values are as the znodes hold them; a partition without a state znode has a
//! `null` leader, epochs and recovery state and an empty ISR.

use std::collections::BTreeMap;

use serde::Serialize;

use super::view::ClusterView;
use crate::zk::zk_data::topic_id_to_string;

#[derive(Debug, Serialize)]
struct Cluster<'a> {
    cluster_id: Option<&'a str>,
    controller: Controller,
    brokers: Vec<Broker<'a>>,
    topics: Vec<Topic<'a>>,
}

#[derive(Debug, Serialize)]
struct Controller {
    id: Option<i32>,
    epoch: Option<i32>,
}

#[derive(Debug, Serialize)]
struct Broker<'a> {
    id: i32,
    host: Option<&'a str>,
    port: i32,
    rack: Option<&'a str>,
    endpoints: Vec<String>,
    registration_time: i64,
    broker_epoch: i64,
}

#[derive(Debug, Serialize)]
struct Topic<'a> {
    name: &'a str,
    topic_id: Option<String>,
    configs: &'a BTreeMap<String, String>,
    partitions: Vec<Partition<'a>>,
}

#[derive(Debug, Serialize)]
struct Partition<'a> {
    partition: i32,
    leader: Option<i32>,
    leader_epoch: Option<i32>,
    partition_epoch: Option<i32>,
    replicas: &'a [i32],
    isr: &'a [i32],
    adding_replicas: &'a [i32],
    removing_replicas: &'a [i32],
    leader_recovery_state: Option<i8>,
    flags: Vec<&'static str>,
}

/// The view as one pretty-printed JSON document.
pub(super) fn render(view: &ClusterView<'_>) -> serde_json::Result<String> {
    let s = view.snapshot;
    let cluster = Cluster {
        cluster_id: s.cluster_id.as_deref(),
        controller: Controller {
            id: s.controller.as_ref().map(|c| c.broker_id),
            epoch: s.controller_epoch,
        },
        brokers: s
            .brokers
            .iter()
            .map(|b| Broker {
                id: b.id,
                host: b.znode.host.as_deref(),
                port: b.znode.port,
                rack: b.znode.registration.rack.as_deref(),
                endpoints: b
                    .znode
                    .registration
                    .endpoints
                    .iter()
                    .map(|e| e.connection_string())
                    .collect(),
                registration_time: b.znode.registration.timestamp_ms,
                broker_epoch: b.broker_epoch,
            })
            .collect(),
        topics: view
            .topics
            .iter()
            .map(|t| Topic {
                name: &t.topic.name,
                topic_id: t.topic.topic_id.map(topic_id_to_string),
                configs: &t.topic.configs,
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| {
                        let state = p.partition.state.as_ref();
                        Partition {
                            partition: p.partition.partition,
                            leader: state.map(|s| s.state.leader),
                            leader_epoch: state.map(|s| s.state.leader_epoch),
                            partition_epoch: state.map(|s| s.partition_epoch),
                            replicas: &p.partition.replicas,
                            isr: state.map_or(&[], |s| &s.state.isr),
                            adding_replicas: &p.partition.adding_replicas,
                            removing_replicas: &p.partition.removing_replicas,
                            leader_recovery_state: state.map(|s| s.state.leader_recovery_state),
                            flags: p.flags.iter().map(|f| f.name()).collect(),
                        }
                    })
                    .collect(),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&cluster)
}
