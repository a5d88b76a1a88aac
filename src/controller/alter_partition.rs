//! The controller's half of AlterPartition (Kafka's `KafkaController.processAlterPartition`):
//! a partition leader proposes a new ISR, and the controller checks it against what it knows,
//! writes the accepted ones to the partition state znodes (fenced by the controller epoch and
//! conditional on the leader's partition epoch), answers the leader with the new state and tells
//! every broker with UpdateMetadata.
//!
//! The checks, in Kafka's order: the requester's broker epoch (STALE_BROKER_EPOCH, for the whole
//! request); then per partition a newer partition or leader epoch than the controller's
//! (NOT_CONTROLLER: this controller is probably stale), an older leader epoch
//! (FENCED_LEADER_EPOCH), an identical state (answered as it is, so a retry is idempotent), an
//! older partition epoch (INVALID_UPDATE_VERSION), RECOVERING with more than the leader or a
//! move back to RECOVERING (INVALID_REQUEST), and an ISR member that is not a live broker or
//! is in controlled shutdown (INELIGIBLE_REPLICA from v2, OPERATION_NOT_ATTEMPTED before). A
//! write that finds the znode moved is INVALID_UPDATE_VERSION too. The leader epoch never
//! changes here: only elections bump it.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_request::AlterPartitionRequest;
use crate::protocol::messages::alter_partition_response::{
    AlterPartitionResponse, PartitionData, TopicData,
};
use crate::zk::kafka_zk_client::StateWrite;
use crate::zk::zk_data;

use super::controller_context::LeaderIsrAndControllerEpoch;
use super::error::ControllerError;
use super::kafka_controller::KafkaController;

/// One partition of the request, resolved to its name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ProposedState {
    leader_epoch: i32,
    isr: Vec<BrokerId>,
    leader_recovery_state: i8,
    partition_epoch: i32,
}

/// A partition's answer: the state now in ZooKeeper, or an error.
type Outcome = Result<LeaderIsrAndControllerEpoch, ErrorCode>;

impl KafkaController {
    /// Answers `request` (sent at `version`); an error that fences this controller is returned
    /// after answering NOT_CONTROLLER, so the event loop resigns.
    pub(super) async fn process_alter_partition(
        &mut self,
        request: AlterPartitionRequest,
        version: i16,
    ) -> (
        AlterPartitionResponse,
        Vec<TopicPartition>,
        Result<(), ControllerError>,
    ) {
        let top_level = |code: ErrorCode| AlterPartitionResponse {
            error_code: code.code(),
            ..AlterPartitionResponse::default()
        };
        match self.ctx.broker_epoch(request.broker_id) {
            Some(epoch) if epoch == request.broker_epoch => {}
            known => {
                tracing::info!(broker = request.broker_id, request_epoch = request.broker_epoch,
                    known_epoch = ?known, "ignoring AlterPartition: stale broker epoch");
                return (top_level(ErrorCode::StaleBrokerEpoch), Vec::new(), Ok(()));
            }
        }
        let mut outcomes: Vec<(Uuid, TopicPartition, Outcome)> = Vec::new();
        let mut accepted: Vec<(Uuid, TopicPartition, ProposedState)> = Vec::new();
        for topic in &request.topics {
            let (name, topic_id) = if version >= 2 {
                match self.topic_name_of(topic.topic_id) {
                    Some(name) => (name, topic.topic_id),
                    None => {
                        for p in &topic.partitions {
                            let tp = TopicPartition::new(String::new(), p.partition_index);
                            outcomes.push((topic.topic_id, tp, Err(ErrorCode::UnknownTopicId)));
                        }
                        continue;
                    }
                }
            } else {
                let name = topic.topic_name.to_string();
                let id = self.ctx.topic_ids.get(&name).copied().unwrap_or_default();
                (name, id)
            };
            for p in &topic.partitions {
                let tp = TopicPartition::new(name.clone(), p.partition_index);
                let isr: Vec<BrokerId> = if version >= 3 {
                    p.new_isr_with_epochs.iter().map(|b| b.broker_id).collect()
                } else {
                    p.new_isr.clone()
                };
                let proposed = ProposedState {
                    leader_epoch: p.leader_epoch,
                    isr,
                    leader_recovery_state: p.leader_recovery_state,
                    partition_epoch: p.partition_epoch,
                };
                match self.check_proposed(&tp, &proposed, version) {
                    Ok(None) => accepted.push((topic_id, tp, proposed)),
                    Ok(Some(current)) => outcomes.push((topic_id, tp, Ok(current))),
                    Err(code) => outcomes.push((topic_id, tp, Err(code))),
                }
            }
        }
        let mut fenced = Ok(());
        let mut updated = Vec::new();
        for (topic_id, tp, proposed) in accepted {
            if fenced.is_err() {
                outcomes.push((topic_id, tp, Err(ErrorCode::NotController)));
                continue;
            }
            match self.write_isr(&tp, &proposed).await {
                Ok(outcome) => {
                    if outcome.is_ok() {
                        updated.push(tp.clone());
                    }
                    outcomes.push((topic_id, tp, outcome));
                }
                Err(e) => {
                    outcomes.push((topic_id, tp, Err(ErrorCode::NotController)));
                    fenced = Err(e);
                }
            }
        }
        if !updated.is_empty() && fenced.is_ok() {
            let brokers: Vec<BrokerId> = self.ctx.live_broker_ids().into_iter().collect();
            self.batch
                .add_update_metadata_request_for_brokers(&brokers, &updated);
            self.send_batch();
        }
        // Kafka looks for completed reassignments among every partition answered with a state,
        // those already in the proposed one included.
        let succeeded: Vec<TopicPartition> = outcomes
            .iter()
            .filter(|(_, _, o)| o.is_ok())
            .map(|(_, tp, _)| tp.clone())
            .collect();
        (response(outcomes, version), succeeded, fenced)
    }

    fn topic_name_of(&self, topic_id: Uuid) -> Option<String> {
        self.ctx
            .topic_ids
            .iter()
            .find(|(_, id)| **id == topic_id)
            .map(|(name, _)| name.clone())
    }

    /// Kafka's per-partition checks: `Ok(None)` to write the proposal, `Ok(Some(state))` when the
    /// partition is already in it.
    fn check_proposed(
        &self,
        tp: &TopicPartition,
        proposed: &ProposedState,
        version: i16,
    ) -> Result<Option<LeaderIsrAndControllerEpoch>, ErrorCode> {
        let Some(current) = self.ctx.leadership.get(tp) else {
            return Err(ErrorCode::UnknownTopicOrPartition);
        };
        let state = &current.state;
        if proposed.partition_epoch > current.partition_epoch
            || proposed.leader_epoch > state.leader_epoch
        {
            return Err(ErrorCode::NotController);
        }
        if proposed.leader_epoch < state.leader_epoch {
            return Err(ErrorCode::FencedLeaderEpoch);
        }
        if proposed.isr == state.isr
            && proposed.leader_recovery_state == state.leader_recovery_state
        {
            return Ok(Some(current.clone()));
        }
        if proposed.partition_epoch < current.partition_epoch {
            tracing::info!(partition = %tp, proposed_partition_epoch = proposed.partition_epoch,
                partition_epoch = current.partition_epoch, proposed_isr = ?proposed.isr,
                isr = ?state.isr, "refusing AlterPartition: older partition epoch");
            return Err(ErrorCode::InvalidUpdateVersion);
        }
        if proposed.leader_recovery_state == RECOVERING
            && (proposed.isr.len() > 1 || state.leader_recovery_state != RECOVERING)
        {
            return Err(ErrorCode::InvalidRequest);
        }
        // A broker in controlled shutdown may not rejoin an ISR (Kafka's `liveBrokerIds`).
        let live = self.ctx.live_broker_ids_not_shutting_down();
        if proposed.isr.iter().any(|id| !live.contains(id)) {
            return Err(if version >= 2 {
                ErrorCode::IneligibleReplica
            } else {
                ErrorCode::OperationNotAttempted
            });
        }
        Ok(None)
    }

    /// Writes an accepted ISR at the leader's partition epoch and caches it.
    async fn write_isr(
        &mut self,
        tp: &TopicPartition,
        proposed: &ProposedState,
    ) -> Result<Outcome, ControllerError> {
        let Some(current) = self.ctx.leadership.get(tp) else {
            return Ok(Err(ErrorCode::UnknownTopicOrPartition));
        };
        let state = zk_data::PartitionState {
            leader: current.state.leader,
            leader_epoch: current.state.leader_epoch,
            isr: proposed.isr.clone(),
            controller_epoch: self.ctx.epoch,
            leader_recovery_state: proposed.leader_recovery_state,
        };
        match self
            .zk
            .update_leader_and_isr(
                self.ctx.fencing_epoch(),
                tp,
                &state,
                proposed.partition_epoch,
            )
            .await?
        {
            StateWrite::Stale => {
                tracing::info!(partition = %tp, isr = ?proposed.isr,
                    "AlterPartition lost to a newer partition state znode");
                Ok(Err(ErrorCode::InvalidUpdateVersion))
            }
            StateWrite::Written { partition_epoch } => {
                tracing::info!(partition = %tp, isr = ?proposed.isr, partition_epoch,
                    "ISR changed by the leader");
                let leadership = LeaderIsrAndControllerEpoch {
                    state,
                    partition_epoch,
                };
                self.ctx.leadership.insert(tp.clone(), leadership.clone());
                Ok(Ok(leadership))
            }
        }
    }
}

/// KIP-704's RECOVERING.
const RECOVERING: i8 = 1;

/// The response, grouped by topic (by id from v2, by name before).
fn response(
    outcomes: Vec<(Uuid, TopicPartition, Outcome)>,
    version: i16,
) -> AlterPartitionResponse {
    let mut topics: BTreeMap<(Uuid, String), Vec<PartitionData>> = BTreeMap::new();
    for (topic_id, tp, outcome) in outcomes {
        let data = match outcome {
            Ok(l) => PartitionData {
                partition_index: tp.partition,
                leader_id: l.state.leader,
                leader_epoch: l.state.leader_epoch,
                isr: l.state.isr.clone(),
                leader_recovery_state: l.state.leader_recovery_state,
                partition_epoch: l.partition_epoch,
                ..PartitionData::default()
            },
            Err(code) => PartitionData {
                partition_index: tp.partition,
                error_code: code.code(),
                ..PartitionData::default()
            },
        };
        let key = if version >= 2 {
            (topic_id, String::new())
        } else {
            (Uuid::nil(), tp.topic)
        };
        topics.entry(key).or_default().push(data);
    }
    AlterPartitionResponse {
        topics: topics
            .into_iter()
            .map(|((topic_id, name), partitions)| TopicData {
                topic_name: name.into(),
                topic_id,
                partitions,
                ..TopicData::default()
            })
            .collect(),
        ..AlterPartitionResponse::default()
    }
}
