//! `ControllerContext`: everything the active controller knows about the cluster, rebuilt from
//! ZooKeeper at failover and then changed only by the controller's event loop (Kafka's
//! `ControllerContext.scala`). Plain data: no I/O, no locks, since one task owns it.
//!
//! Invariants the state machines keep:
//! - every partition in `assignments` has a partition state, and every replica of it a replica
//!   state, once the controller has processed its creation;
//! - `leadership[tp]` is what the state znode of `tp` holds, with its zkVersion as the partition
//!   epoch: the context is written after ZooKeeper, never before;
//! - a live broker's epoch is the czxid of its `/brokers/ids/<id>` registration.

use std::collections::{BTreeMap, BTreeSet};

use uuid::Uuid;

use crate::cluster::{BrokerId, TopicPartition};
use crate::zk::kafka_zk_client::ControllerEpoch;
use crate::zk::zk_data::{self, BrokerRegistration};

use super::partition_state_machine::PartitionState;
use super::replica_state_machine::ReplicaState;

/// A registered broker: its registration znode and the epoch that registration gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveBroker {
    pub id: BrokerId,
    /// The czxid of `/brokers/ids/<id>`: a new registration is a new epoch.
    pub epoch: i64,
    pub registration: BrokerRegistration,
}

/// A partition's replicas (`ReplicaAssignment`): `replicas` in assignment order, the first the
/// preferred leader; during a reassignment it is the union of the original and target sets,
/// with `adding` and `removing` naming the difference.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplicaAssignment {
    pub replicas: Vec<BrokerId>,
    pub adding: Vec<BrokerId>,
    pub removing: Vec<BrokerId>,
}

impl ReplicaAssignment {
    pub fn new(replicas: Vec<BrokerId>) -> Self {
        ReplicaAssignment {
            replicas,
            ..ReplicaAssignment::default()
        }
    }

    /// ORS: the replicas before the reassignment (`replicas` without `adding`).
    pub fn origin_replicas(&self) -> Vec<BrokerId> {
        without(&self.replicas, &self.adding)
    }

    /// TRS: the replicas after it (`replicas` without `removing`), in the target's order.
    pub fn target_replicas(&self) -> Vec<BrokerId> {
        without(&self.replicas, &self.removing)
    }

    pub fn is_being_reassigned(&self) -> bool {
        !self.adding.is_empty() || !self.removing.is_empty()
    }

    /// Kafka's `reassignTo`: the full set is the target followed by the origin replicas not in
    /// it, so the target's order (its first replica the preferred leader) survives, and the
    /// origin stays recoverable from ZooKeeper until the reassignment completes. A target equal
    /// to the origin is no reassignment at all (it cancels one in progress).
    pub fn reassign_to(&self, target: &[BrokerId]) -> ReplicaAssignment {
        let origin = self.origin_replicas();
        let mut replicas: Vec<BrokerId> = Vec::with_capacity(target.len() + origin.len());
        for id in target.iter().chain(&origin) {
            if !replicas.contains(id) {
                replicas.push(*id);
            }
        }
        ReplicaAssignment {
            adding: without(&replicas, &origin),
            removing: without(&replicas, target),
            replicas,
        }
    }
}

/// `a` without the members of `b`, in `a`'s order (Scala's `diff` on lists of distinct ids).
fn without(a: &[BrokerId], b: &[BrokerId]) -> Vec<BrokerId> {
    a.iter().copied().filter(|id| !b.contains(id)).collect()
}

/// The state znode of a partition (`LeaderIsrAndControllerEpoch`) and its zkVersion, which is the
/// partition epoch sent in LeaderAndIsr and UpdateMetadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderIsrAndControllerEpoch {
    pub state: zk_data::PartitionState,
    pub partition_epoch: i32,
}

/// The controller's view of the cluster.
#[derive(Debug, Default)]
pub struct ControllerContext {
    /// This controller's epoch, and the zkVersion of `/controller_epoch` that fences its writes.
    pub epoch: i32,
    pub epoch_zk_version: i32,
    pub live_brokers: BTreeMap<BrokerId, LiveBroker>,
    /// Brokers in controlled shutdown: still live, no longer eligible to lead.
    pub shutting_down_broker_ids: BTreeSet<BrokerId>,
    pub topic_ids: BTreeMap<String, Uuid>,
    pub assignments: BTreeMap<String, BTreeMap<i32, ReplicaAssignment>>,
    pub leadership: BTreeMap<TopicPartition, LeaderIsrAndControllerEpoch>,
    pub partition_states: BTreeMap<TopicPartition, PartitionState>,
    pub replica_states: BTreeMap<(TopicPartition, BrokerId), ReplicaState>,
    /// Topics marked in `/admin/delete_topics` whose deletion has not completed.
    pub topics_to_be_deleted: BTreeSet<String>,
    /// Of those, the ones with a replica on a dead broker or a reassignment in progress: they
    /// wait until it returns or completes.
    pub topics_ineligible_for_deletion: BTreeSet<String>,
    /// The partitions with a reassignment in progress (`partitionsBeingReassigned`): those whose
    /// assignment has `adding` or `removing` replicas.
    pub partitions_being_reassigned: BTreeSet<TopicPartition>,
    /// Per live broker, the replicas it answered KAFKA_STORAGE_ERROR for in a LeaderAndIsr
    /// (`replicasOnOfflineDirs`): on a failed log dir, so neither online nor electable until
    /// the broker registers again.
    pub replicas_on_offline_dirs: BTreeMap<BrokerId, BTreeSet<TopicPartition>>,
}

impl ControllerContext {
    /// Forgets everything; the controller resigning or starting over.
    pub fn reset(&mut self) {
        *self = ControllerContext::default();
    }

    /// The token that fences this controller's ZooKeeper writes.
    pub fn fencing_epoch(&self) -> ControllerEpoch {
        ControllerEpoch {
            epoch: self.epoch,
            zk_version: self.epoch_zk_version,
        }
    }

    pub fn live_broker_ids(&self) -> BTreeSet<BrokerId> {
        self.live_brokers.keys().copied().collect()
    }

    /// The brokers eligible to lead: live and not shutting down.
    pub fn live_broker_ids_not_shutting_down(&self) -> BTreeSet<BrokerId> {
        self.live_brokers
            .keys()
            .copied()
            .filter(|id| !self.shutting_down_broker_ids.contains(id))
            .collect()
    }

    pub fn broker_epoch(&self, id: BrokerId) -> Option<i64> {
        self.live_brokers.get(&id).map(|b| b.epoch)
    }

    /// Kafka's `isReplicaOnline`: the replica's broker is registered and the replica is not on
    /// a log dir the broker reported failed.
    pub fn is_replica_online(&self, broker: BrokerId, tp: &TopicPartition) -> bool {
        self.live_brokers.contains_key(&broker) && !self.is_replica_on_offline_dir(broker, tp)
    }

    /// The broker answered KAFKA_STORAGE_ERROR for its replica of `tp`.
    pub fn is_replica_on_offline_dir(&self, broker: BrokerId, tp: &TopicPartition) -> bool {
        self.replicas_on_offline_dirs
            .get(&broker)
            .is_some_and(|offline| offline.contains(tp))
    }

    /// `live` without the brokers whose replica of `tp` is on a failed log dir: the brokers that
    /// may lead or stay in the ISR of `tp`.
    pub fn without_offline_dirs(
        &self,
        mut live: BTreeSet<BrokerId>,
        tp: &TopicPartition,
    ) -> BTreeSet<BrokerId> {
        live.retain(|b| !self.is_replica_on_offline_dir(*b, tp));
        live
    }

    pub fn all_topics(&self) -> impl Iterator<Item = &String> {
        self.assignments.keys()
    }

    pub fn topic_exists(&self, topic: &str) -> bool {
        self.assignments.contains_key(topic)
    }

    pub fn assignment(&self, tp: &TopicPartition) -> Option<&ReplicaAssignment> {
        self.assignments.get(&tp.topic)?.get(&tp.partition)
    }

    /// The replica list of `tp`, empty when unknown.
    pub fn replicas(&self, tp: &TopicPartition) -> &[BrokerId] {
        self.assignment(tp).map_or(&[], |a| a.replicas.as_slice())
    }

    pub fn partitions_of(&self, topic: &str) -> Vec<TopicPartition> {
        self.assignments.get(topic).map_or_else(Vec::new, |ps| {
            ps.keys().map(|p| TopicPartition::new(topic, *p)).collect()
        })
    }

    pub fn all_partitions(&self) -> Vec<TopicPartition> {
        self.assignments
            .iter()
            .flat_map(|(t, ps)| ps.keys().map(move |p| TopicPartition::new(t.clone(), *p)))
            .collect()
    }

    /// Every (partition, replica) hosted on `broker`.
    pub fn replicas_on_broker(&self, broker: BrokerId) -> Vec<(TopicPartition, BrokerId)> {
        self.all_partitions()
            .into_iter()
            .filter(|tp| self.replicas(tp).contains(&broker))
            .map(|tp| (tp, broker))
            .collect()
    }

    /// The partitions `broker` leads, by the context's leadership.
    pub fn partitions_led_by(&self, broker: BrokerId) -> Vec<TopicPartition> {
        self.leadership
            .iter()
            .filter(|(_, l)| l.state.leader == broker)
            .map(|(tp, _)| tp.clone())
            .collect()
    }

    /// Every (partition, replica) of `partitions`.
    pub fn replicas_of(&self, partitions: &[TopicPartition]) -> Vec<(TopicPartition, BrokerId)> {
        partitions
            .iter()
            .flat_map(|tp| self.replicas(tp).iter().map(move |r| (tp.clone(), *r)))
            .collect()
    }

    pub fn partition_state(&self, tp: &TopicPartition) -> PartitionState {
        self.partition_states
            .get(tp)
            .copied()
            .unwrap_or(PartitionState::NonExistent)
    }

    pub fn replica_state(&self, tp: &TopicPartition, replica: BrokerId) -> ReplicaState {
        self.replica_states
            .get(&(tp.clone(), replica))
            .copied()
            .unwrap_or(ReplicaState::NonExistent)
    }

    pub fn is_topic_queued_for_deletion(&self, topic: &str) -> bool {
        self.topics_to_be_deleted.contains(topic)
    }

    /// Adds or replaces a topic's assignment; returns the partitions that are new.
    pub fn update_assignment(
        &mut self,
        topic: &str,
        assignment: BTreeMap<i32, ReplicaAssignment>,
    ) -> Vec<TopicPartition> {
        let old = self.assignments.get(topic);
        let added: Vec<TopicPartition> = assignment
            .keys()
            .filter(|p| old.is_none_or(|o| !o.contains_key(p)))
            .map(|p| TopicPartition::new(topic, *p))
            .collect();
        self.assignments.insert(topic.to_string(), assignment);
        added
    }

    /// Forgets a deleted topic entirely.
    pub fn remove_topic(&mut self, topic: &str) {
        self.assignments.remove(topic);
        self.topic_ids.remove(topic);
        self.leadership.retain(|tp, _| tp.topic != topic);
        self.partition_states.retain(|tp, _| tp.topic != topic);
        self.replica_states.retain(|(tp, _), _| tp.topic != topic);
        self.topics_to_be_deleted.remove(topic);
        self.topics_ineligible_for_deletion.remove(topic);
        self.partitions_being_reassigned
            .retain(|tp| tp.topic != topic);
    }

    /// Replaces one partition's assignment (`updatePartitionFullReplicaAssignment`).
    pub fn update_partition_assignment(
        &mut self,
        tp: &TopicPartition,
        assignment: ReplicaAssignment,
    ) {
        self.assignments
            .entry(tp.topic.clone())
            .or_default()
            .insert(tp.partition, assignment);
    }

    /// The partitions with a leader that is not live (or none): what `onBrokerFailure` and
    /// failover must elect for.
    pub fn offline_partitions(&self) -> Vec<TopicPartition> {
        self.partition_states
            .iter()
            .filter(|(_, s)| **s == PartitionState::Offline)
            .map(|(tp, _)| tp.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_partitions_are_those_missing_from_the_old_assignment() {
        let mut ctx = ControllerContext::default();
        let one: BTreeMap<i32, ReplicaAssignment> =
            [(0, ReplicaAssignment::new(vec![1]))].into_iter().collect();
        assert_eq!(
            ctx.update_assignment("t", one.clone()),
            vec![TopicPartition::new("t", 0)]
        );
        let mut two = one;
        two.insert(1, ReplicaAssignment::new(vec![2]));
        assert_eq!(
            ctx.update_assignment("t", two),
            vec![TopicPartition::new("t", 1)]
        );
        assert_eq!(ctx.replicas(&TopicPartition::new("t", 1)), &[2]);
        assert_eq!(ctx.replicas_on_broker(2).len(), 1);
        ctx.remove_topic("t");
        assert!(!ctx.topic_exists("t"));
    }

    #[test]
    fn reassign_to_is_kafkas() {
        let a = ReplicaAssignment::new(vec![1, 2, 3]);
        // The target's order first, the origin's leftovers after (KafkaController's example).
        let r = a.reassign_to(&[3, 4, 2]);
        assert_eq!(
            (
                r.replicas.as_slice(),
                r.adding.as_slice(),
                r.removing.as_slice()
            ),
            (&[3, 4, 2, 1][..], &[4][..], &[1][..])
        );
        assert_eq!(
            (r.origin_replicas(), r.target_replicas()),
            (vec![3, 2, 1], vec![3, 4, 2])
        );
        assert!(r.is_being_reassigned());
        // A new target replaces the one in progress, measured from the same origin.
        let r2 = r.reassign_to(&[4, 5, 6]);
        assert_eq!(
            (
                r2.replicas.as_slice(),
                r2.adding.as_slice(),
                r2.removing.as_slice()
            ),
            (&[4, 5, 6, 3, 2, 1][..], &[4, 5, 6][..], &[3, 2, 1][..])
        );
        // Back to the origin: nothing left to reassign.
        let back = r.reassign_to(&r.origin_replicas());
        assert!(!back.is_being_reassigned());
        assert_eq!(back.replicas, vec![3, 2, 1]);
    }
}
