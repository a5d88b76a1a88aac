//! Kafka's `ControllerBrokerRequestBatch`: the LeaderAndIsr, UpdateMetadata and StopReplica
//! requests that one controller decision produces, collected per broker while the state
//! machines run and then built and handed to the channel manager in Kafka's order: LeaderAndIsr
//! first, then UpdateMetadata, then StopReplica (`sendRequestsToBrokers`), so a broker learns
//! it leads a partition before anyone is told so.
//!
//! Every LeaderAndIsr added for a partition also adds the partition to the UpdateMetadata of
//! every live broker, as Kafka's `addLeaderAndIsrRequestForBrokers` does.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::codec::StrBytes;
use crate::protocol::messages::leader_and_isr_request::{
    LeaderAndIsrLiveLeader, LeaderAndIsrPartitionState, LeaderAndIsrRequest, LeaderAndIsrTopicState,
};
use crate::protocol::messages::stop_replica_request::{
    StopReplicaPartitionState, StopReplicaPartitionV0, StopReplicaRequest, StopReplicaTopicState,
    StopReplicaTopicV1,
};
use crate::protocol::messages::update_metadata_request::{
    UpdateMetadataBroker, UpdateMetadataEndpoint, UpdateMetadataPartitionState,
    UpdateMetadataRequest, UpdateMetadataTopicState,
};

use super::controller_context::{ControllerContext, LeaderIsrAndControllerEpoch};
use super::inter_broker_versions::ControllerRequestVersions;

/// The leader a partition has while its topic is being deleted (`LeaderAndIsr.LeaderDuringDelete`):
/// UpdateMetadata with it makes every broker drop the partition from its cache.
pub const LEADER_DURING_DELETE: BrokerId = -2;
/// The leader epoch of a StopReplica that deletes (`LeaderAndIsr.EpochDuringDelete`).
pub const EPOCH_DURING_DELETE: i32 = -2;
/// The leader epoch of a StopReplica that does not carry one (`LeaderAndIsr.NoEpoch`).
pub const NO_EPOCH: i32 = -1;

/// One request the controller sends to one broker.
#[derive(Debug, Clone, PartialEq)]
pub enum ControllerRequest {
    LeaderAndIsr {
        version: i16,
        request: LeaderAndIsrRequest,
    },
    UpdateMetadata {
        version: i16,
        request: UpdateMetadataRequest,
    },
    StopReplica {
        version: i16,
        request: StopReplicaRequest,
    },
}

impl ControllerRequest {
    /// Kafka's API name, for logs and tests.
    pub fn api_name(&self) -> &'static str {
        match self {
            ControllerRequest::LeaderAndIsr { .. } => "LeaderAndIsr",
            ControllerRequest::UpdateMetadata { .. } => "UpdateMetadata",
            ControllerRequest::StopReplica { .. } => "StopReplica",
        }
    }
}

/// Where and how the controller sends.
#[derive(Debug, Clone)]
pub struct BatchConfig {
    pub controller_id: BrokerId,
    pub versions: ControllerRequestVersions,
    /// The listener brokers reach each other on (`inter.broker.listener.name`).
    pub inter_broker_listener: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StopReplicaState {
    delete: bool,
    leader_epoch: i32,
}

/// The requests of one decision, not yet built.
#[derive(Debug, Default)]
pub struct ControllerBrokerRequestBatch {
    leader_and_isr: BTreeMap<BrokerId, BTreeMap<TopicPartition, LeaderAndIsrPartitionState>>,
    stop_replica: BTreeMap<BrokerId, BTreeMap<TopicPartition, StopReplicaState>>,
    update_metadata_brokers: BTreeSet<BrokerId>,
    update_metadata_partitions: BTreeSet<TopicPartition>,
}

impl ControllerBrokerRequestBatch {
    pub fn is_empty(&self) -> bool {
        self.leader_and_isr.is_empty()
            && self.stop_replica.is_empty()
            && self.update_metadata_brokers.is_empty()
    }

    /// `addLeaderAndIsrRequestForBrokers`: `tp`'s leadership to each of `brokers` (an `is_new`
    /// already queued stays set), and `tp` to every live broker's UpdateMetadata.
    pub fn add_leader_and_isr_request_for_brokers(
        &mut self,
        ctx: &ControllerContext,
        brokers: &[BrokerId],
        tp: &TopicPartition,
        leadership: &LeaderIsrAndControllerEpoch,
        is_new: bool,
    ) {
        let assignment = ctx.assignment(tp).cloned().unwrap_or_default();
        for broker in brokers.iter().filter(|b| **b >= 0) {
            let states = self.leader_and_isr.entry(*broker).or_default();
            let was_new = states.get(tp).is_some_and(|s| s.is_new);
            states.insert(
                tp.clone(),
                LeaderAndIsrPartitionState {
                    topic_name: StrBytes::from(tp.topic.as_str()),
                    partition_index: tp.partition,
                    controller_epoch: leadership.state.controller_epoch,
                    leader: leadership.state.leader,
                    leader_epoch: leadership.state.leader_epoch,
                    isr: leadership.state.isr.clone(),
                    partition_epoch: leadership.partition_epoch,
                    replicas: assignment.replicas.clone(),
                    adding_replicas: assignment.adding.clone(),
                    removing_replicas: assignment.removing.clone(),
                    is_new: is_new || was_new,
                    leader_recovery_state: leadership.state.leader_recovery_state,
                    ..LeaderAndIsrPartitionState::default()
                },
            );
        }
        let live: Vec<BrokerId> = ctx.live_broker_ids().into_iter().collect();
        self.add_update_metadata_request_for_brokers(&live, std::slice::from_ref(tp));
    }

    /// `addStopReplicaRequestForBrokers`: stop `tp` on each of `brokers`, deleting its log when
    /// `delete` (a delete already queued stays a delete).
    pub fn add_stop_replica_request_for_brokers(
        &mut self,
        ctx: &ControllerContext,
        brokers: &[BrokerId],
        tp: &TopicPartition,
        delete: bool,
    ) {
        let leader_epoch = if ctx.is_topic_queued_for_deletion(&tp.topic) {
            EPOCH_DURING_DELETE
        } else {
            ctx.leadership
                .get(tp)
                .map_or(NO_EPOCH, |l| l.state.leader_epoch)
        };
        for broker in brokers.iter().filter(|b| **b >= 0) {
            let states = self.stop_replica.entry(*broker).or_default();
            let was_delete = states.get(tp).is_some_and(|s| s.delete);
            states.insert(
                tp.clone(),
                StopReplicaState {
                    delete: delete || was_delete,
                    leader_epoch,
                },
            );
        }
    }

    /// `addUpdateMetadataRequestForBrokers`: `partitions` (possibly none: brokers only) to each of
    /// `brokers`' UpdateMetadata.
    pub fn add_update_metadata_request_for_brokers(
        &mut self,
        brokers: &[BrokerId],
        partitions: &[TopicPartition],
    ) {
        self.update_metadata_brokers
            .extend(brokers.iter().copied().filter(|b| *b >= 0));
        self.update_metadata_partitions
            .extend(partitions.iter().cloned());
    }

    /// Builds the requests, in Kafka's order, and empties the batch. Brokers that are not live
    /// get nothing (their requests would only queue for a broker that is gone).
    pub fn build(
        &mut self,
        ctx: &ControllerContext,
        config: &BatchConfig,
    ) -> Vec<(BrokerId, ControllerRequest)> {
        let batch = std::mem::take(self);
        let mut out = Vec::new();
        for (broker, states) in batch.leader_and_isr {
            if let Some(epoch) = ctx.broker_epoch(broker) {
                let request = leader_and_isr_request(ctx, config, epoch, states);
                out.push((
                    broker,
                    ControllerRequest::LeaderAndIsr {
                        version: config.versions.leader_and_isr,
                        request,
                    },
                ));
            }
        }
        if !batch.update_metadata_brokers.is_empty() {
            let partitions = update_metadata_partitions(ctx, &batch.update_metadata_partitions);
            let live_brokers = update_metadata_brokers(ctx);
            for broker in batch.update_metadata_brokers {
                if let Some(epoch) = ctx.broker_epoch(broker) {
                    let request = update_metadata_request(
                        ctx,
                        config,
                        epoch,
                        &partitions,
                        live_brokers.clone(),
                    );
                    out.push((
                        broker,
                        ControllerRequest::UpdateMetadata {
                            version: config.versions.update_metadata,
                            request,
                        },
                    ));
                }
            }
        }
        for (broker, states) in batch.stop_replica {
            if let Some(epoch) = ctx.broker_epoch(broker) {
                out.extend(
                    stop_replica_requests(ctx, config, epoch, states)
                        .into_iter()
                        .map(|r| (broker, r)),
                );
            }
        }
        out
    }
}

fn leader_and_isr_request(
    ctx: &ControllerContext,
    config: &BatchConfig,
    broker_epoch: i64,
    states: BTreeMap<TopicPartition, LeaderAndIsrPartitionState>,
) -> LeaderAndIsrRequest {
    let leaders: BTreeSet<BrokerId> = states.values().map(|s| s.leader).collect();
    let live_leaders = leaders
        .iter()
        .filter_map(|id| {
            let broker = ctx.live_brokers.get(id)?;
            let endpoint = broker
                .registration
                .endpoints
                .iter()
                .find(|e| e.listener_name == config.inter_broker_listener)?;
            Some(LeaderAndIsrLiveLeader {
                broker_id: *id,
                host_name: StrBytes::from(endpoint.host.as_str()),
                port: endpoint.port,
                ..LeaderAndIsrLiveLeader::default()
            })
        })
        .collect();
    let mut request = LeaderAndIsrRequest {
        controller_id: config.controller_id,
        controller_epoch: ctx.epoch,
        broker_epoch,
        live_leaders,
        ..LeaderAndIsrRequest::default()
    };
    if config.versions.leader_and_isr < 2 {
        request.ungrouped_partition_states = states.into_values().collect();
        return request;
    }
    let mut by_topic: BTreeMap<String, Vec<LeaderAndIsrPartitionState>> = BTreeMap::new();
    for (tp, state) in states {
        by_topic.entry(tp.topic).or_default().push(state);
    }
    request.topic_states = by_topic
        .into_iter()
        .map(|(topic, partition_states)| LeaderAndIsrTopicState {
            topic_id: ctx.topic_ids.get(&topic).copied().unwrap_or_default(),
            topic_name: StrBytes::from(topic),
            partition_states,
            ..LeaderAndIsrTopicState::default()
        })
        .collect();
    request
}

/// The partition states of an UpdateMetadata: the context's leadership, with leader -2 for a
/// topic being deleted and the replicas whose broker is down as offline.
fn update_metadata_partitions(
    ctx: &ControllerContext,
    partitions: &BTreeSet<TopicPartition>,
) -> Vec<(TopicPartition, UpdateMetadataPartitionState)> {
    partitions
        .iter()
        .filter_map(|tp| {
            let leadership = ctx.leadership.get(tp)?;
            let replicas = ctx.replicas(tp).to_vec();
            let leader = if ctx.is_topic_queued_for_deletion(&tp.topic) {
                LEADER_DURING_DELETE
            } else {
                leadership.state.leader
            };
            let offline_replicas = replicas
                .iter()
                .copied()
                .filter(|r| !ctx.is_replica_online(*r, tp))
                .collect();
            Some((
                tp.clone(),
                UpdateMetadataPartitionState {
                    topic_name: StrBytes::from(tp.topic.as_str()),
                    partition_index: tp.partition,
                    controller_epoch: leadership.state.controller_epoch,
                    leader,
                    leader_epoch: leadership.state.leader_epoch,
                    isr: leadership.state.isr.clone(),
                    zk_version: leadership.partition_epoch,
                    replicas,
                    offline_replicas,
                    ..UpdateMetadataPartitionState::default()
                },
            ))
        })
        .collect()
}

/// The live brokers with every endpoint of their registration and their rack.
fn update_metadata_brokers(ctx: &ControllerContext) -> Vec<UpdateMetadataBroker> {
    ctx.live_brokers
        .values()
        .map(|b| UpdateMetadataBroker {
            id: b.id,
            endpoints: b
                .registration
                .endpoints
                .iter()
                .map(|e| UpdateMetadataEndpoint {
                    port: e.port,
                    host: StrBytes::from(e.host.as_str()),
                    listener: StrBytes::from(e.listener_name.as_str()),
                    security_protocol: security_protocol_id(&e.security_protocol),
                    ..UpdateMetadataEndpoint::default()
                })
                .collect(),
            rack: b.registration.rack.as_deref().map(StrBytes::from),
            ..UpdateMetadataBroker::default()
        })
        .collect()
}

/// `SecurityProtocol.id`.
pub fn security_protocol_id(name: &str) -> i16 {
    match name {
        "SSL" => 1,
        "SASL_PLAINTEXT" => 2,
        "SASL_SSL" => 3,
        _ => 0,
    }
}

fn update_metadata_request(
    ctx: &ControllerContext,
    config: &BatchConfig,
    broker_epoch: i64,
    partitions: &[(TopicPartition, UpdateMetadataPartitionState)],
    live_brokers: Vec<UpdateMetadataBroker>,
) -> UpdateMetadataRequest {
    let mut request = UpdateMetadataRequest {
        controller_id: config.controller_id,
        controller_epoch: ctx.epoch,
        broker_epoch,
        live_brokers,
        ..UpdateMetadataRequest::default()
    };
    if config.versions.update_metadata < 5 {
        request.ungrouped_partition_states = partitions.iter().map(|(_, s)| s.clone()).collect();
        return request;
    }
    let mut by_topic: BTreeMap<&str, Vec<UpdateMetadataPartitionState>> = BTreeMap::new();
    for (tp, state) in partitions {
        by_topic
            .entry(tp.topic.as_str())
            .or_default()
            .push(state.clone());
    }
    request.topic_states = by_topic
        .into_iter()
        .map(|(topic, partition_states)| UpdateMetadataTopicState {
            topic_id: ctx.topic_ids.get(topic).copied().unwrap_or_default(),
            topic_name: StrBytes::from(topic),
            partition_states,
            ..UpdateMetadataTopicState::default()
        })
        .collect();
    request
}

/// StopReplica v3+ carries each partition's delete flag and leader epoch in one request; older
/// versions have one flag per request, so the partitions split into a deleting and a
/// non-deleting request, as Kafka's batch splits them.
fn stop_replica_requests(
    ctx: &ControllerContext,
    config: &BatchConfig,
    broker_epoch: i64,
    states: BTreeMap<TopicPartition, StopReplicaState>,
) -> Vec<ControllerRequest> {
    let version = config.versions.stop_replica;
    let base = StopReplicaRequest {
        controller_id: config.controller_id,
        controller_epoch: ctx.epoch,
        broker_epoch,
        ..StopReplicaRequest::default()
    };
    if version >= 3 {
        let mut by_topic: BTreeMap<String, Vec<StopReplicaPartitionState>> = BTreeMap::new();
        for (tp, s) in states {
            by_topic
                .entry(tp.topic)
                .or_default()
                .push(StopReplicaPartitionState {
                    partition_index: tp.partition,
                    leader_epoch: s.leader_epoch,
                    delete_partition: s.delete,
                    ..StopReplicaPartitionState::default()
                });
        }
        let request = StopReplicaRequest {
            topic_states: by_topic
                .into_iter()
                .map(|(topic, partition_states)| StopReplicaTopicState {
                    topic_name: StrBytes::from(topic),
                    partition_states,
                    ..StopReplicaTopicState::default()
                })
                .collect(),
            ..base
        };
        return vec![ControllerRequest::StopReplica { version, request }];
    }
    [true, false]
        .into_iter()
        .filter_map(|delete| {
            let partitions: Vec<&TopicPartition> = states
                .iter()
                .filter(|(_, s)| s.delete == delete)
                .map(|(tp, _)| tp)
                .collect();
            if partitions.is_empty() {
                return None;
            }
            let mut request = StopReplicaRequest {
                delete_partitions: delete,
                ..base.clone()
            };
            if version == 0 {
                request.ungrouped_partitions = partitions
                    .iter()
                    .map(|tp| StopReplicaPartitionV0 {
                        topic_name: StrBytes::from(tp.topic.as_str()),
                        partition_index: tp.partition,
                    })
                    .collect();
            } else {
                let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
                for tp in partitions {
                    by_topic
                        .entry(tp.topic.as_str())
                        .or_default()
                        .push(tp.partition);
                }
                request.topics = by_topic
                    .into_iter()
                    .map(|(name, partition_indexes)| StopReplicaTopicV1 {
                        name: StrBytes::from(name),
                        partition_indexes,
                        ..StopReplicaTopicV1::default()
                    })
                    .collect();
            }
            Some(ControllerRequest::StopReplica { version, request })
        })
        .collect()
}
