//! `--format json`: one object, `{"cluster_id","controller":{"id","epoch"},"brokers":[..],
//! "topics":[..]}`, keys in the order docs/describe-cluster.md lists them (serde's derive keeps
//! field order). Values are as the znodes hold them; a partition without a state znode has a
//! `null` leader, epochs and recovery state and an empty ISR. Keys for what the source cannot
//! know (`--data-dir`, `--bootstrap-server`) are left out.

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

// A field the snapshot's source cannot know is left out (the outer `None`), so that `null`
// keeps ZooKeeper's meaning (no controller, no state znode, no host).

#[derive(Debug, Serialize)]
struct Controller {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Option<i32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    epoch: Option<Option<i32>>,
}

#[derive(Debug, Serialize)]
struct Broker<'a> {
    id: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    port: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rack: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    endpoints: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    registration_time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    broker_epoch: Option<i64>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_epoch: Option<Option<i32>>,
    replicas: &'a [i32],
    isr: &'a [i32],
    #[serde(skip_serializing_if = "Option::is_none")]
    adding_replicas: Option<&'a [i32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    removing_replicas: Option<&'a [i32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    leader_recovery_state: Option<Option<i8>>,
    flags: Vec<&'static str>,
}

/// The view as one pretty-printed JSON document.
pub(super) fn render(view: &ClusterView<'_>) -> serde_json::Result<String> {
    let s = view.snapshot;
    let (registrations, live, znodes) = (
        s.source.knows_registrations(),
        s.source.knows_live_brokers(),
        s.source.knows_znode_state(),
    );
    let cluster = Cluster {
        cluster_id: s.cluster_id.as_deref(),
        controller: Controller {
            id: live.then_some(s.controller.as_ref().map(|c| c.broker_id)),
            epoch: znodes.then_some(s.controller_epoch),
        },
        brokers: s
            .brokers
            .iter()
            .map(|b| Broker {
                id: b.id,
                host: live.then_some(b.znode.host.as_deref()),
                port: live.then_some(b.znode.port),
                rack: live.then_some(b.znode.registration.rack.as_deref()),
                endpoints: registrations.then(|| {
                    b.znode
                        .registration
                        .endpoints
                        .iter()
                        .map(|e| e.connection_string())
                        .collect()
                }),
                registration_time: registrations.then_some(b.znode.registration.timestamp_ms),
                broker_epoch: registrations.then_some(b.broker_epoch),
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
                            partition_epoch: znodes.then(|| state.map(|s| s.partition_epoch)),
                            replicas: &p.partition.replicas,
                            isr: state.map_or(&[], |s| &s.state.isr),
                            adding_replicas: znodes.then_some(&p.partition.adding_replicas),
                            removing_replicas: znodes.then_some(&p.partition.removing_replicas),
                            leader_recovery_state: znodes
                                .then(|| state.map(|s| s.state.leader_recovery_state)),
                            flags: p.flags.iter().map(|f| f.name()).collect(),
                        }
                    })
                    .collect(),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&cluster)
}
