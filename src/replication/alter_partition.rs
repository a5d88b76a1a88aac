//! The seam through which a partition leader proposes ISR changes to the controller (Kafka's
//! `AlterPartitionManager` trait): a [`Partition`](super::partition::Partition) submits the
//! state it wants and is called back with the controller's answer. `server` implements it over
//! the broker-to-controller channel; unit tests use a fake that answers as told.
//!
//! Invariant kept by the partition, not here: at most one proposal per partition is in flight
//! (Kafka's `isInflight`); a submission for a partition already queued is refused with
//! OPERATION_NOT_ATTEMPTED.

use uuid::Uuid;

use crate::cluster::{BrokerId, LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;

/// One partition's proposal: the leadership it has now with the ISR it wants. The leader epoch
/// and partition epoch are the leader's current ones; the controller accepts the change only at
/// those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterPartitionItem {
    pub topic_partition: TopicPartition,
    pub topic_id: Option<Uuid>,
    pub leader_and_isr: LeaderAndIsr,
    /// The broker epoch of the registration the leadership was granted to; `None` when not
    /// known (the manager then sends the broker's current epoch).
    pub broker_epoch: Option<i64>,
}

/// The controller's answer for one partition: the state now in ZooKeeper (its partition epoch
/// bumped) or the partition's error code. A top-level error (STALE_BROKER_EPOCH,
/// NOT_CONTROLLER) or a lost connection is not an answer: the manager sends again.
pub(crate) type AlterPartitionResult = Result<LeaderAndIsr, ErrorCode>;

/// Called once with the answer, on the manager's task; it must not block.
pub(crate) type AlterPartitionCallback = Box<dyn FnOnce(AlterPartitionResult) + Send>;

/// Queues proposals for the controller; see the module doc.
pub trait AlterPartitionManager: Send + Sync + std::fmt::Debug {
    /// Queues `item`; `callback` gets the answer. A partition already queued gets
    /// OPERATION_NOT_ATTEMPTED at once.
    fn submit(&self, item: AlterPartitionItem, callback: AlterPartitionCallback);
}

/// Whether a broker may be in an ISR (Kafka's `isReplicaIsrEligible`; in ZooKeeper mode: alive,
/// registered, in the metadata cache). A follower that is not joins no ISR, and does not hold
/// the high watermark back while it is outside the ISR.
pub trait ReplicaEligibility: Send + Sync + std::fmt::Debug {
    fn is_replica_isr_eligible(&self, broker_id: BrokerId) -> bool;
}

/// Every broker eligible: for a broker that knows no others (tools, tests).
#[derive(Debug, Default)]
pub(crate) struct AllEligible;

impl ReplicaEligibility for AllEligible {
    fn is_replica_isr_eligible(&self, _broker_id: BrokerId) -> bool {
        true
    }
}

/// What a broker without a controller to ask does (a partition created outside a broker, in
/// tools and tests that never change an ISR): every proposal is refused with
/// OPERATION_NOT_ATTEMPTED, so the partition keeps its committed ISR.
#[derive(Debug, Default)]
pub(crate) struct NoAlterPartitionManager;

impl AlterPartitionManager for NoAlterPartitionManager {
    fn submit(&self, _item: AlterPartitionItem, callback: AlterPartitionCallback) {
        callback(Err(ErrorCode::OperationNotAttempted));
    }
}
