//! Elections the controller runs on request rather than on failure (Kafka's
//! `processReplicaLeaderElection`, `onReplicaElection`, `checkAndTriggerAutoLeaderRebalance` and
//! `processTopicUncleanLeaderElectionEnable`):
//!
//! - **preferred**: the head of the assignment leads again, only where it is live (and not
//!   shutting down) and in the ISR; asked for by ElectLeaders, by `/admin/preferred_replica_election`
//!   (read, served, deleted), and every `leader.imbalance.check.interval.seconds` for the
//!   brokers whose share of preferred partitions led elsewhere exceeds
//!   `leader.imbalance.per.broker.percentage`;
//! - **unclean**: ElectLeaders of type UNCLEAN elects, for partitions without a live leader, a
//!   clean leader if there is one and else any live replica (RECOVERING, ISR of itself); a
//!   topic's `unclean.leader.election.enable` becoming true elects its offline partitions under
//!   the topic's setting.
//!
//! Per-partition outcomes are Kafka's: ELECTION_NOT_NEEDED where the leader already is what the
//! election would give, PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE where no
//! leader qualifies, INVALID_TOPIC_EXCEPTION for a topic being deleted,
//! UNKNOWN_TOPIC_OR_PARTITION for a partition the controller does not know, NOT_CONTROLLER when
//! this controller was fenced meanwhile.

use std::collections::BTreeMap;

use tokio::time::Instant;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::zk::kafka_zk_client::KafkaZkError;

use super::controller_context::ControllerContext;
use super::election::{self, ElectionInput};
use super::error::ControllerError;
use super::kafka_controller::KafkaController;
use super::partition_state_machine::{PartitionLeaderElectionStrategy, PartitionState};

/// ElectLeaders' `ElectionType` (Kafka's `ElectionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElectionType {
    Preferred,
    Unclean,
}

impl ElectionType {
    /// The wire byte: 0 preferred, 1 unclean.
    pub fn from_wire(value: i8) -> Option<ElectionType> {
        match value {
            0 => Some(ElectionType::Preferred),
            1 => Some(ElectionType::Unclean),
            _ => None,
        }
    }
}

/// Who asked (Kafka's `ElectionTrigger`): only an admin may get unclean leaders, and only the
/// znode's request is cleaned up afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ElectionTrigger {
    AdminClient,
    Zk,
    Auto,
}

/// One partition's outcome: the leader it now has, or an error code with an optional message.
pub type ElectionResult = Result<BrokerId, (ErrorCode, Option<String>)>;

/// The outcome per partition.
pub type ElectionResults = BTreeMap<TopicPartition, ElectionResult>;

/// How long after failover the first imbalance check runs (Kafka's fixed 5 s).
pub(super) const FIRST_REBALANCE_CHECK_DELAY: std::time::Duration =
    std::time::Duration::from_secs(5);

/// More `/admin/preferred_replica_election` requests than this in one event wait for the next
/// watch: a tool that rewrites the znode in a loop does not hold the queue.
const MAX_ZNODE_ROUNDS: usize = 8;

impl KafkaController {
    /// ElectLeaders from an admin client: every listed partition gets an outcome.
    pub(super) async fn process_admin_replica_leader_election(
        &mut self,
        partitions: Vec<TopicPartition>,
        election_type: ElectionType,
    ) -> (ElectionResults, Result<(), ControllerError>) {
        self.replica_leader_election(partitions, election_type, ElectionTrigger::AdminClient)
            .await
    }

    /// `/admin/preferred_replica_election` was created (or is there at failover): elect what it
    /// names, then delete it; the read re-arms the watch either way.
    pub(super) async fn process_zk_preferred_replica_election(
        &mut self,
    ) -> Result<(), ControllerError> {
        for _ in 0..MAX_ZNODE_ROUNDS {
            let partitions = match self
                .zk
                .get_partitions_for_preferred_replica_election()
                .await
            {
                Ok(Some(partitions)) => partitions,
                Ok(None) => return Ok(()),
                // Kafka reads an undecodable request as naming nothing, and deletes it.
                Err(KafkaZkError::Malformed { path, source }) => {
                    tracing::warn!(%path, %source, "ignoring a malformed preferred election request");
                    Vec::new()
                }
                Err(e) => return Err(e.into()),
            };
            let (_, result) = self
                .replica_leader_election(partitions, ElectionType::Preferred, ElectionTrigger::Zk)
                .await;
            result?;
            self.zk
                .delete_preferred_replica_election(self.ctx.fencing_epoch())
                .await?;
        }
        Ok(())
    }

    /// The periodic imbalance check; the next one is scheduled whatever this one does.
    pub(super) async fn process_auto_preferred_replica_leader_election(
        &mut self,
    ) -> Result<(), ControllerError> {
        self.auto_rebalance_at = Some(Instant::now() + self.config.leader_imbalance_check_interval);
        let threshold = f64::from(self.config.leader_imbalance_per_broker_percentage) / 100.0;
        for (broker, imbalance) in leader_imbalance(&self.ctx) {
            let ratio = imbalance.ratio();
            tracing::trace!(broker, ratio, "leader imbalance ratio");
            if ratio <= threshold {
                continue;
            }
            let candidates: Vec<TopicPartition> = imbalance
                .led_elsewhere
                .into_iter()
                .filter(|tp| can_preferred_replica_be_leader(&self.ctx, tp))
                .collect();
            if candidates.is_empty() {
                continue;
            }
            tracing::info!(
                broker,
                ratio,
                partitions = candidates.len(),
                "leader imbalance above the threshold; electing preferred leaders"
            );
            self.on_replica_election(&candidates, ElectionType::Preferred, ElectionTrigger::Auto)
                .await?;
        }
        Ok(())
    }

    /// A topic's `unclean.leader.election.enable` became true: its New and Offline partitions
    /// are elected again, now under the topic's setting.
    pub(super) async fn process_topic_unclean_leader_election_enable(
        &mut self,
        topic: &str,
    ) -> Result<(), ControllerError> {
        if self.ctx.is_topic_queued_for_deletion(topic) {
            return Ok(());
        }
        let offline: Vec<TopicPartition> = self
            .ctx
            .partitions_of(topic)
            .into_iter()
            .filter(|tp| {
                matches!(
                    self.ctx.partition_state(tp),
                    PartitionState::New | PartitionState::Offline
                )
            })
            .collect();
        if offline.is_empty() {
            return Ok(());
        }
        tracing::info!(
            topic,
            partitions = offline.len(),
            "unclean leader election enabled for the topic; electing its offline partitions"
        );
        self.partition_state_machine()
            .handle_state_changes(
                &offline,
                PartitionState::Online,
                &PartitionLeaderElectionStrategy::Offline {
                    allow_unclean: false,
                },
            )
            .await?;
        self.send_batch();
        Ok(())
    }

    /// Kafka's `processReplicaLeaderElection` once the partitions are known: sorts them into
    /// unknown, being deleted, not needing an election and electable, and elects the last.
    async fn replica_leader_election(
        &mut self,
        partitions: Vec<TopicPartition>,
        election_type: ElectionType,
        trigger: ElectionTrigger,
    ) -> (ElectionResults, Result<(), ControllerError>) {
        let mut results = ElectionResults::new();
        let mut electable = Vec::new();
        for tp in partitions {
            if self.ctx.assignment(&tp).is_none() {
                let message = "The partition does not exist.".to_string();
                results.insert(tp, Err((ErrorCode::UnknownTopicOrPartition, Some(message))));
            } else if self.ctx.is_topic_queued_for_deletion(&tp.topic) {
                let message = "The topic is being deleted".to_string();
                results.insert(tp, Err((ErrorCode::InvalidTopicException, Some(message))));
            } else if self.election_needed(&tp, election_type) {
                electable.push(tp);
            } else {
                results.insert(tp, Err((ErrorCode::ElectionNotNeeded, None)));
            }
        }
        if electable.is_empty() {
            return (results, Ok(()));
        }
        let outcome = self
            .on_replica_election(&electable, election_type, trigger)
            .await;
        let fenced = match outcome {
            Ok(elected) => {
                for tp in electable {
                    let leader = self.ctx.leadership.get(&tp).map(|l| l.state.leader);
                    let result = match leader {
                        Some(leader) if elected.contains(&tp) => Ok(leader),
                        _ => Err((not_available(election_type), None)),
                    };
                    results.insert(tp, result);
                }
                Ok(())
            }
            Err(e) => {
                for tp in electable {
                    results.insert(tp, Err((ErrorCode::NotController, None)));
                }
                Err(e)
            }
        };
        (results, fenced)
    }

    /// Whether an election could change the leader: for preferred, the head of the assignment
    /// does not lead; for unclean, no live broker leads.
    fn election_needed(&self, tp: &TopicPartition, election_type: ElectionType) -> bool {
        let leader = self.ctx.leadership.get(tp).map_or(-1, |l| l.state.leader);
        match election_type {
            ElectionType::Preferred => self.ctx.replicas(tp).first() != Some(&leader),
            ElectionType::Unclean => {
                leader < 0
                    || !self
                        .ctx
                        .live_broker_ids_not_shutting_down()
                        .contains(&leader)
                    || self.ctx.is_replica_on_offline_dir(leader, tp)
            }
        }
    }

    /// Kafka's `onReplicaElection`: the partitions go Online under the type's strategy; returns
    /// those elected. Unclean leaders only when an admin asked.
    async fn on_replica_election(
        &mut self,
        partitions: &[TopicPartition],
        election_type: ElectionType,
        trigger: ElectionTrigger,
    ) -> Result<Vec<TopicPartition>, ControllerError> {
        tracing::info!(
            ?election_type,
            ?trigger,
            partitions = partitions.len(),
            "starting replica leader election"
        );
        let strategy = match election_type {
            ElectionType::Preferred => PartitionLeaderElectionStrategy::Preferred,
            ElectionType::Unclean => PartitionLeaderElectionStrategy::Offline {
                allow_unclean: trigger == ElectionTrigger::AdminClient,
            },
        };
        let elected = self
            .partition_state_machine()
            .handle_state_changes(partitions, PartitionState::Online, &strategy)
            .await?;
        self.send_batch();
        if trigger != ElectionTrigger::AdminClient {
            for tp in partitions.iter().filter(|tp| !elected.contains(tp)) {
                tracing::warn!(partition = %tp, preferred = ?self.ctx.replicas(tp).first(),
                    "preferred replica leader election did not complete");
            }
        }
        Ok(elected)
    }
}

fn not_available(election_type: ElectionType) -> ErrorCode {
    match election_type {
        ElectionType::Preferred => ErrorCode::PreferredLeaderNotAvailable,
        ElectionType::Unclean => ErrorCode::EligibleLeadersNotAvailable,
    }
}

/// One preferred broker's standing in the imbalance check.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LeaderImbalance {
    /// The partitions it is the preferred replica of but does not lead.
    pub led_elsewhere: Vec<TopicPartition>,
    /// How many partitions it is the preferred replica of.
    pub preferred: usize,
}

impl LeaderImbalance {
    /// Kafka's imbalance ratio: the share of its preferred partitions led elsewhere.
    pub(crate) fn ratio(&self) -> f64 {
        if self.preferred == 0 {
            return 0.0;
        }
        self.led_elsewhere.len() as f64 / self.preferred as f64
    }
}

/// Per preferred broker (the head of each assignment), the partitions it prefers and those of
/// them another broker leads; topics being deleted are left out. A partition without a known
/// leadership counts as preferred but not as led elsewhere, as in Kafka.
pub(crate) fn leader_imbalance(ctx: &ControllerContext) -> BTreeMap<BrokerId, LeaderImbalance> {
    let mut out: BTreeMap<BrokerId, LeaderImbalance> = BTreeMap::new();
    for tp in ctx.all_partitions() {
        if ctx.is_topic_queued_for_deletion(&tp.topic) {
            continue;
        }
        let Some(&preferred) = ctx.replicas(&tp).first() else {
            continue;
        };
        let entry = out.entry(preferred).or_default();
        entry.preferred += 1;
        if ctx
            .leadership
            .get(&tp)
            .is_some_and(|l| l.state.leader != preferred)
        {
            entry.led_elsewhere.push(tp);
        }
    }
    out
}

/// Kafka's `canPreferredReplicaBeLeader`: the preferred replica is live, not shutting down,
/// and in the ISR.
fn can_preferred_replica_be_leader(ctx: &ControllerContext, tp: &TopicPartition) -> bool {
    let Some(leadership) = ctx.leadership.get(tp) else {
        return false;
    };
    let live = ctx.without_offline_dirs(ctx.live_broker_ids_not_shutting_down(), tp);
    let input = ElectionInput {
        assignment: ctx.replicas(tp),
        isr: &leadership.state.isr,
        live: &live,
    };
    election::leader_for_preferred_replica(&input).is_some()
}

/// Resolves at `at`, never when `None`: the auto rebalance timer of the controller's loop.
pub(super) async fn auto_rebalance_due(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
