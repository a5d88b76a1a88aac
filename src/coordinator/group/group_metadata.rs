//! A classic group's state (Kafka's `GroupMetadata`): the state machine, the members in join
//! order, pending members (given an id by MEMBER_ID_REQUIRED, not yet joined), static members
//! by `group.instance.id`, the generation, protocol and leader, the committed offsets, and the
//! deadlines of the delayed operations (join, sync) that Kafka keeps in purgatories.
//!
//! States and their valid previous states (Kafka's `GroupState.validPreviousStates`):
//! Empty ← PreparingRebalance; PreparingRebalance ← Stable, CompletingRebalance, Empty;
//! CompletingRebalance ← PreparingRebalance; Stable ← CompletingRebalance; Dead ← any.
//!
//! Invariants: `leader_id` is a member's id or `None` when there are no members; every value of
//! `static_members` is a member's id; a pending member is not a member.

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;
use tokio::time::Instant;

use crate::cluster::TopicPartition;
use crate::protocol::codec::Message;
use crate::protocol::messages::consumer_protocol_subscription::ConsumerProtocolSubscription;

use super::member_metadata::MemberMetadata;
use super::offsets_records::OffsetAndMetadata;

/// The protocol type of Java-style consumers, whose subscriptions the coordinator can read.
pub(crate) const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
    Dead,
}

impl GroupState {
    /// The name Kafka reports (ListGroups, DescribeGroups).
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }

    /// Whether a group may move from `from` to `self`.
    pub fn valid_previous(self, from: GroupState) -> bool {
        use GroupState::*;
        match self {
            Empty => from == PreparingRebalance,
            PreparingRebalance => matches!(from, Stable | CompletingRebalance | Empty),
            CompletingRebalance => from == PreparingRebalance,
            Stable => from == CompletingRebalance,
            Dead => true,
        }
    }
}

/// The delayed join of a rebalance (Kafka's `DelayedJoin` / `InitialDelayedJoin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinTimer {
    /// Completes when every member has rejoined, or at `deadline`.
    Normal { deadline: Instant },
    /// The first rebalance of an empty group: completes only at `deadline`, then waits again
    /// (up to `remaining_ms` in all) while new members keep arriving.
    Initial {
        deadline: Instant,
        delay_ms: i64,
        remaining_ms: i64,
    },
}

/// One group.
#[derive(Debug)]
pub struct GroupMetadata {
    pub group_id: String,
    pub state: GroupState,
    /// Milliseconds since the epoch of the last generation change (or load).
    pub current_state_timestamp: Option<i64>,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub generation_id: i32,
    pub leader_id: Option<String>,
    /// Members in the order they joined.
    pub members: Vec<MemberMetadata>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, with the deadline to rejoin.
    pub pending_members: HashMap<String, Instant>,
    /// `group.instance.id` → member id.
    pub static_members: HashMap<String, String>,
    /// Members of the current generation that have not sent SyncGroup yet.
    pub pending_sync_members: HashSet<String>,
    pub new_member_added: bool,
    pub join_timer: Option<JoinTimer>,
    /// When members still in `pending_sync_members` are removed (Kafka's pending sync).
    pub sync_deadline: Option<Instant>,
    /// Topics the consumers subscribe to; `None` when unknown (not a consumer group).
    pub subscribed_topics: Option<HashSet<String>>,
    pub offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
    /// Where in the offsets partition each committed offset was written (at or after it: the
    /// log end when its append was made), which decides whether a transaction's offset,
    /// committed later, replaces it (Kafka's `CommitRecordMetadataAndOffset.olderThan`).
    pub offset_positions: HashMap<TopicPartition, i64>,
    /// Offsets written by open transactions, by producer id (Kafka's
    /// `pendingTransactionalOffsetCommits`): they become committed offsets with their
    /// transaction's COMMIT marker, and go with its ABORT.
    pub pending_txn_offsets: HashMap<i64, BTreeMap<TopicPartition, PendingTxnOffset>>,
}

/// An offset of an open transaction, and where it was written (`None` while its append is in
/// flight).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingTxnOffset {
    pub offset: OffsetAndMetadata,
    pub position: Option<i64>,
}

impl GroupMetadata {
    pub fn new(group_id: String, state: GroupState, now_ms: i64) -> Self {
        GroupMetadata {
            group_id,
            state,
            current_state_timestamp: Some(now_ms),
            protocol_type: None,
            protocol_name: None,
            generation_id: 0,
            leader_id: None,
            members: Vec::new(),
            pending_members: HashMap::new(),
            static_members: HashMap::new(),
            pending_sync_members: HashSet::new(),
            new_member_added: false,
            join_timer: None,
            sync_deadline: None,
            subscribed_topics: None,
            offsets: BTreeMap::new(),
            offset_positions: HashMap::new(),
            pending_txn_offsets: HashMap::new(),
        }
    }

    /// A committed offset, written at `position`.
    pub fn commit_offset(&mut self, tp: TopicPartition, offset: OffsetAndMetadata, position: i64) {
        self.offset_positions.insert(tp.clone(), position);
        self.offsets.insert(tp, offset);
    }

    /// Kafka's `completePendingTxnOffsetCommit`: the producer's transaction ended. On commit its
    /// written offsets replace the committed ones written before them.
    pub fn complete_pending_txn_offset_commit(&mut self, producer_id: i64, commit: bool) {
        let Some(pending) = self.pending_txn_offsets.remove(&producer_id) else {
            return;
        };
        if !commit {
            return;
        }
        for (tp, p) in pending {
            let Some(position) = p.position else {
                tracing::warn!(group = %self.group_id, producer_id, %tp,
                    "a transaction committed an offset whose append had not finished");
                continue;
            };
            if self
                .offset_positions
                .get(&tp)
                .is_none_or(|current| *current < position)
            {
                self.commit_offset(tp, p.offset, position);
            }
        }
    }

    /// Kafka's `hasPendingOffsetCommitsForTopicPartition` (the transactional half): an open
    /// transaction wrote an offset of `tp` (OffsetFetch's `RequireStable` answers
    /// UNSTABLE_OFFSET_COMMIT for it).
    pub fn has_pending_txn_offset(&self, tp: &TopicPartition) -> bool {
        self.pending_txn_offsets
            .values()
            .any(|p| p.contains_key(tp))
    }

    pub fn is(&self, state: GroupState) -> bool {
        self.state == state
    }

    /// Moves to `to`; `false` (and no change) when Kafka would refuse the transition.
    pub fn transition_to(&mut self, to: GroupState) -> bool {
        if !to.valid_previous(self.state) {
            tracing::error!(group = %self.group_id, from = self.state.name(), to = to.name(), "invalid group state transition");
            return false;
        }
        self.state = to;
        true
    }

    pub fn can_rebalance(&self) -> bool {
        GroupState::PreparingRebalance.valid_previous(self.state)
    }

    pub fn has(&self, member_id: &str) -> bool {
        self.members.iter().any(|m| m.member_id == member_id)
    }

    pub fn get(&self, member_id: &str) -> Option<&MemberMetadata> {
        self.members.iter().find(|m| m.member_id == member_id)
    }

    pub fn get_mut(&mut self, member_id: &str) -> Option<&mut MemberMetadata> {
        self.members.iter_mut().find(|m| m.member_id == member_id)
    }

    pub fn is_leader(&self, member_id: &str) -> bool {
        self.leader_id.as_deref() == Some(member_id)
    }

    pub fn leader_or_empty(&self) -> String {
        self.leader_id.clone().unwrap_or_default()
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn num_awaiting_join(&self) -> usize {
        self.members.iter().filter(|m| m.is_awaiting_join()).count()
    }

    pub fn has_all_members_joined(&self) -> bool {
        self.num_awaiting_join() == self.members.len() && self.pending_members.is_empty()
    }

    pub fn is_pending_member(&self, member_id: &str) -> bool {
        self.pending_members.contains_key(member_id)
    }

    pub fn has_static_member(&self, instance_id: &str) -> bool {
        self.static_members.contains_key(instance_id)
    }

    pub fn current_static_member_id(&self, instance_id: &str) -> Option<String> {
        self.static_members.get(instance_id).cloned()
    }

    /// A static member id that does not match the one registered for its instance id.
    pub fn is_static_member_fenced(&self, instance_id: Option<&str>, member_id: &str) -> bool {
        instance_id
            .and_then(|i| self.static_members.get(i))
            .is_some_and(|current| current != member_id)
    }

    /// The largest rebalance timeout of the members (Kafka's `rebalanceTimeoutMs`).
    pub fn rebalance_timeout_ms(&self) -> i32 {
        self.members
            .iter()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    /// Adds `member`; the first member fixes the protocol type and the first becomes leader.
    pub fn add(&mut self, member: MemberMetadata) {
        if self.members.is_empty() {
            self.protocol_type = Some(member.protocol_type.clone());
        }
        if self.leader_id.is_none() {
            self.leader_id = Some(member.member_id.clone());
        }
        if let Some(instance) = &member.group_instance_id {
            self.static_members
                .insert(instance.clone(), member.member_id.clone());
        }
        self.pending_members.remove(&member.member_id);
        self.members.push(member);
    }

    /// Removes a member (and its pending entries); a new leader is the first remaining member.
    pub fn remove(&mut self, member_id: &str) -> Option<MemberMetadata> {
        self.pending_members.remove(member_id);
        self.pending_sync_members.remove(member_id);
        let index = self.members.iter().position(|m| m.member_id == member_id)?;
        let member = self.members.remove(index);
        if let Some(instance) = &member.group_instance_id
            && self.static_members.get(instance) == Some(&member.member_id)
        {
            self.static_members.remove(instance);
        }
        if self.is_leader(member_id) {
            self.leader_id = self.members.first().map(|m| m.member_id.clone());
        }
        Some(member)
    }

    /// Whether a joining member with `protocol_type` and `protocols` fits the group (Kafka's
    /// `supportsProtocols`): anything non-empty fits an empty group; otherwise the type must
    /// match and one of its protocols must be supported by every member.
    pub fn supports_protocols(&self, protocol_type: &str, protocols: &[String]) -> bool {
        if self.is(GroupState::Empty) {
            return !protocol_type.is_empty() && !protocols.is_empty();
        }
        self.protocol_type.as_deref() == Some(protocol_type)
            && protocols.iter().any(|p| {
                self.members
                    .iter()
                    .all(|m| m.supported_protocols.iter().any(|(n, _)| n == p))
            })
    }

    /// Protocols every member supports, in the first member's order.
    pub fn candidate_protocols(&self) -> Vec<String> {
        let Some(first) = self.members.first() else {
            return Vec::new();
        };
        first
            .supported_protocols
            .iter()
            .map(|(n, _)| n.clone())
            .filter(|p| {
                self.members
                    .iter()
                    .all(|m| m.supported_protocols.iter().any(|(n, _)| n == p))
            })
            .collect()
    }

    /// Kafka's `selectProtocol`: every member votes for its preferred candidate; most votes
    /// wins (ties go to the candidate the first member prefers).
    pub fn select_protocol(&self) -> Option<String> {
        let candidates = self.candidate_protocols();
        let mut votes: HashMap<&str, usize> = HashMap::new();
        for m in &self.members {
            if let Some(v) = m.vote(&candidates) {
                *votes.entry(v).or_default() += 1;
            }
        }
        let mut best: Option<(&str, usize)> = None;
        for c in &candidates {
            let n = votes.get(c.as_str()).copied().unwrap_or(0);
            if best.is_none_or(|(_, b)| n > b) {
                best = Some((c.as_str(), n));
            }
        }
        best.map(|(p, _)| p.to_string())
    }

    /// Kafka's `maybeElectNewJoinedLeader`: a leader that did not rejoin is replaced by any
    /// member that did; `false` when nobody rejoined.
    pub fn maybe_elect_new_joined_leader(&mut self) -> bool {
        let Some(leader) = self.leader_id.clone() else {
            return false;
        };
        if self.get(&leader).is_some_and(|m| m.is_awaiting_join()) {
            return true;
        }
        match self.members.iter().find(|m| m.is_awaiting_join()) {
            Some(m) => {
                self.leader_id = Some(m.member_id.clone());
                true
            }
            None => false,
        }
    }

    /// Kafka's `initNextGeneration`.
    pub fn init_next_generation(&mut self, now_ms: i64) {
        self.generation_id += 1;
        if self.members.is_empty() {
            self.protocol_name = None;
            self.transition_to(GroupState::Empty);
        } else {
            self.protocol_name = self.select_protocol();
            self.transition_to(GroupState::CompletingRebalance);
        }
        self.subscribed_topics = self.compute_subscribed_topics();
        self.current_state_timestamp = Some(now_ms);
        self.pending_sync_members.clear();
    }

    /// The union of the consumers' subscriptions; `None` when the group is not a consumer group
    /// or a subscription does not parse.
    pub fn compute_subscribed_topics(&self) -> Option<HashSet<String>> {
        let protocol = self.protocol_name.as_deref()?;
        if self.protocol_type.as_deref() != Some(CONSUMER_PROTOCOL_TYPE) {
            return None;
        }
        let mut topics = HashSet::new();
        for m in &self.members {
            let (_, sub) =
                ConsumerProtocolSubscription::decode_versioned_lenient(m.metadata(protocol))?;
            topics.extend(sub.topics.iter().map(|t| t.to_string_lossy().into_owned()));
        }
        Some(topics)
    }

    pub fn is_subscribed_to_topic(&self, topic: &str) -> bool {
        self.subscribed_topics
            .as_ref()
            .is_some_and(|t| t.contains(topic))
    }

    pub fn is_consumer_group(&self) -> bool {
        self.protocol_type.as_deref() == Some(CONSUMER_PROTOCOL_TYPE)
    }

    /// `(member id, instance id, metadata of the chosen protocol)` of every member.
    pub fn current_member_metadata(&self) -> Vec<(String, Option<String>, Bytes)> {
        let protocol = self.protocol_name.clone().unwrap_or_default();
        self.members
            .iter()
            .map(|m| {
                (
                    m.member_id.clone(),
                    m.group_instance_id.clone(),
                    m.metadata(&protocol),
                )
            })
            .collect()
    }

    /// Kafka's `getExpiredOffsets`/`removeExpiredOffsets` rule (3.9): for an Empty group with a
    /// protocol type, offsets expire `retention_ms` after the group became empty; for a stable
    /// consumer group, offsets of topics nobody subscribes to expire `retention_ms` after their
    /// commit; for a group without a protocol type (offsets only), after their commit. An
    /// explicit expire timestamp (old commits) wins. Returns the expired partitions, removed.
    pub fn remove_expired_offsets(
        &mut self,
        now_ms: i64,
        retention_ms: i64,
    ) -> Vec<TopicPartition> {
        let base_is_state = match (&self.protocol_type, self.state) {
            (Some(_), GroupState::Empty) => true,
            (Some(t), GroupState::Stable)
                if t == CONSUMER_PROTOCOL_TYPE && self.subscribed_topics.is_some() =>
            {
                false
            }
            (None, _) => false,
            _ => return Vec::new(),
        };
        let subscribed = if self.is(GroupState::Stable) {
            self.subscribed_topics.clone().unwrap_or_default()
        } else {
            HashSet::new()
        };
        let state_ts = self.current_state_timestamp;
        let expired: Vec<TopicPartition> = self
            .offsets
            .iter()
            .filter(|(tp, o)| {
                if subscribed.contains(&tp.topic) {
                    return false;
                }
                match o.expire_timestamp_ms {
                    Some(expire) => now_ms >= expire,
                    None => {
                        let base = if base_is_state {
                            state_ts.unwrap_or(o.commit_timestamp_ms)
                        } else {
                            o.commit_timestamp_ms
                        };
                        now_ms - base >= retention_ms
                    }
                }
            })
            .map(|(tp, _)| tp.clone())
            .collect();
        for tp in &expired {
            self.offsets.remove(tp);
        }
        expired
    }
}

/// Parsing a subscription without failing the group: Kafka's `ConsumerProtocol
/// .deserializeSubscription` tolerates newer versions by reading the fields it knows.
trait LenientSubscription: Sized {
    fn decode_versioned_lenient(bytes: Bytes) -> Option<(i16, Self)>;
}

impl LenientSubscription for ConsumerProtocolSubscription {
    fn decode_versioned_lenient(bytes: Bytes) -> Option<(i16, Self)> {
        let mut r = crate::protocol::codec::Reader::new(bytes);
        let version = r.i16().ok()?;
        let capped = version.clamp(0, Self::VERSIONS.max);
        let sub = Self::decode(&mut r, capped).ok()?;
        Some((version, sub))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use GroupState::*;

    fn member(id: &str, protocols: &[&str]) -> MemberMetadata {
        MemberMetadata::new(
            id.into(),
            None,
            "c".into(),
            "/h".into(),
            1000,
            1000,
            "consumer".into(),
            protocols
                .iter()
                .map(|p| (p.to_string(), Bytes::new()))
                .collect(),
        )
    }

    #[test]
    fn transitions_are_kafkas() {
        let all = [Empty, PreparingRebalance, CompletingRebalance, Stable, Dead];
        let valid: Vec<(GroupState, GroupState)> = vec![
            (PreparingRebalance, Empty),
            (Stable, PreparingRebalance),
            (CompletingRebalance, PreparingRebalance),
            (Empty, PreparingRebalance),
            (PreparingRebalance, CompletingRebalance),
            (CompletingRebalance, Stable),
        ];
        for from in all {
            for to in all {
                let expected = to == Dead || valid.contains(&(from, to));
                let mut g = GroupMetadata::new("g".into(), from, 0);
                assert_eq!(g.transition_to(to), expected, "{from:?} -> {to:?}");
                assert_eq!(g.state, if expected { to } else { from });
            }
        }
    }

    #[test]
    fn leader_is_the_first_member_and_moves_on_removal() {
        let mut g = GroupMetadata::new("g".into(), Empty, 0);
        g.add(member("a", &["range"]));
        g.add(member("b", &["range"]));
        g.add(member("c", &["range"]));
        assert!(g.is_leader("a"));
        g.remove("b");
        assert!(g.is_leader("a"));
        g.remove("a");
        assert!(g.is_leader("c"));
        g.remove("c");
        assert_eq!(g.leader_id, None);
    }

    #[test]
    fn protocol_selection_by_vote_among_common_protocols() {
        let mut g = GroupMetadata::new("g".into(), Empty, 0);
        g.add(member("a", &["roundrobin", "range"]));
        g.add(member("b", &["range", "roundrobin"]));
        g.add(member("c", &["range", "sticky"]));
        assert_eq!(g.candidate_protocols(), vec!["range".to_string()]);
        assert_eq!(g.select_protocol().as_deref(), Some("range"));
        g.remove("c");
        // roundrobin and range each get a vote: the first member's preference wins the tie.
        assert_eq!(g.select_protocol().as_deref(), Some("roundrobin"));
        g.transition_to(PreparingRebalance);
        assert!(g.supports_protocols("consumer", &["range".into()]));
        assert!(!g.supports_protocols("consumer", &["sticky".into()]));
        assert!(!g.supports_protocols("connect", &["range".into()]));
    }

    #[test]
    fn static_members_are_fenced_by_member_id() {
        let mut g = GroupMetadata::new("g".into(), Empty, 0);
        let mut m = member("a", &["range"]);
        m.group_instance_id = Some("i".into());
        g.add(m);
        assert!(!g.is_static_member_fenced(Some("i"), "a"));
        assert!(g.is_static_member_fenced(Some("i"), "b"));
        assert!(!g.is_static_member_fenced(Some("j"), "b"));
        assert!(!g.is_static_member_fenced(None, "b"));
        g.remove("a");
        assert!(!g.has_static_member("i"));
    }

    #[test]
    fn empty_groups_expire_offsets_after_becoming_empty() {
        let mut g = GroupMetadata::new("g".into(), Empty, 1_000);
        g.protocol_type = Some("consumer".into());
        let o = OffsetAndMetadata {
            committed_offset: 1,
            leader_epoch: -1,
            metadata: String::new(),
            commit_timestamp_ms: 0,
            expire_timestamp_ms: None,
        };
        g.offsets.insert(TopicPartition::new("t", 0), o.clone());
        assert!(g.remove_expired_offsets(1_500, 1_000).is_empty());
        assert_eq!(
            g.remove_expired_offsets(2_000, 1_000),
            vec![TopicPartition::new("t", 0)]
        );
        // Without a protocol type (offsets only): from the commit timestamp.
        let mut simple = GroupMetadata::new("s".into(), Empty, 10_000);
        simple.offsets.insert(TopicPartition::new("t", 0), o);
        assert_eq!(simple.remove_expired_offsets(1_000, 1_000).len(), 1);
    }
}
