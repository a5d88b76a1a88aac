//! JoinGroup and the rebalance it drives (Kafka's `handleJoinGroup`, `doNewMemberJoinGroup`,
//! `doCurrentMemberJoinGroup`, static membership, `DelayedJoin`/`InitialDelayedJoin` and
//! `onCompleteJoin`).
//!
//! A rebalance completes when every member has rejoined (or, for the first rebalance of an
//! empty group, when `group.initial.rebalance.delay.ms` passed without new members, up to the
//! rebalance timeout), or at the rebalance timeout, when members that did not rejoin are
//! removed. Then the generation is bumped, the protocol chosen by vote, and every parked
//! JoinGroup answered (the leader with the members' metadata).

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;

use super::group_coordinator::{
    AfterStore, GroupApi, GroupCoordinator, NEW_MEMBER_JOIN_TIMEOUT_MS, after,
};
use super::group_metadata::{GroupMetadata, GroupState, JoinTimer};
use super::group_metadata_manager::SharedGroup;
use super::member_metadata::{JoinGroupResult, MemberMetadata};

/// One JoinGroup, as the coordinator needs it.
#[derive(Debug, Clone)]
pub struct JoinParams {
    pub group_id: String,
    pub member_id: String,
    pub group_instance_id: Option<String>,
    /// JoinGroup v4+: a new member first gets MEMBER_ID_REQUIRED and an id.
    pub require_known_member_id: bool,
    /// JoinGroup v9+.
    pub support_skipping_assignment: bool,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout_ms: i32,
    pub session_timeout_ms: i32,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
}

/// A static member's replacement awaiting its group metadata write.
#[derive(Debug)]
pub(super) struct StaticRejoin {
    new_member_id: String,
    old_member_id: String,
    instance_id: String,
    current_leader: String,
    support_skipping_assignment: bool,
    old_protocols: Vec<(String, Bytes)>,
    old_rebalance_timeout_ms: i32,
    old_session_timeout_ms: i32,
}

impl GroupCoordinator {
    /// Kafka's `handleJoinGroup`; the receiver gets the answer when it is ready.
    pub fn handle_join_group(&self, p: JoinParams) -> oneshot::Receiver<JoinGroupResult> {
        let (tx, rx) = oneshot::channel();
        let reply = |tx: oneshot::Sender<JoinGroupResult>, id: &str, e| {
            let _ = tx.send(JoinGroupResult::error(id, e));
        };
        if let Some(e) = self.validate_group_status(&p.group_id, GroupApi::JoinGroup) {
            reply(tx, &p.member_id, e);
            return rx;
        }
        if p.session_timeout_ms < self.group_config.min_session_timeout_ms
            || p.session_timeout_ms > self.group_config.max_session_timeout_ms
        {
            reply(tx, &p.member_id, ErrorCode::InvalidSessionTimeout);
            return rx;
        }
        let unknown = p.member_id.is_empty();
        let shared = if unknown {
            self.manager.get_or_create_group(&p.group_id)
        } else {
            match self.manager.get_group(&p.group_id) {
                Some(g) => g,
                None => {
                    reply(tx, &p.member_id, ErrorCode::UnknownMemberId);
                    return rx;
                }
            }
        };
        let now = Instant::now();
        let mut group = lock(&shared);
        if !self.accept_joining_member(&group, &p.member_id) {
            group.remove(&p.member_id);
            reply(tx, "", ErrorCode::GroupMaxSizeReached);
        } else if unknown {
            self.do_new_member_join(&shared, &mut group, p, tx, now);
        } else {
            self.do_current_member_join(&mut group, p, tx, now);
        }
        if group.is(GroupState::PreparingRebalance) {
            self.try_complete_join(&shared, &mut group, now);
        }
        rx
    }

    fn accept_joining_member(&self, group: &GroupMetadata, member_id: &str) -> bool {
        let max = self.group_config.max_size;
        match group.state {
            GroupState::Empty | GroupState::Dead => true,
            GroupState::PreparingRebalance => {
                group.get(member_id).is_some_and(|m| m.is_awaiting_join())
                    || group.num_awaiting_join() < max
            }
            GroupState::CompletingRebalance | GroupState::Stable => {
                group.has(member_id) || group.size() < max
            }
        }
    }

    fn protocol_names(p: &JoinParams) -> Vec<String> {
        p.protocols.iter().map(|(n, _)| n.clone()).collect()
    }

    fn do_new_member_join(
        &self,
        shared: &SharedGroup,
        group: &mut GroupMetadata,
        p: JoinParams,
        tx: oneshot::Sender<JoinGroupResult>,
        now: Instant,
    ) {
        if group.is(GroupState::Dead) {
            let _ = tx.send(JoinGroupResult::error(
                &p.member_id,
                ErrorCode::CoordinatorNotAvailable,
            ));
            return;
        }
        if !group.supports_protocols(&p.protocol_type, &Self::protocol_names(&p)) {
            let _ = tx.send(JoinGroupResult::error(
                &p.member_id,
                ErrorCode::InconsistentGroupProtocol,
            ));
            return;
        }
        let prefix = p
            .group_instance_id
            .clone()
            .unwrap_or_else(|| p.client_id.clone());
        let new_member_id = format!("{prefix}-{}", uuid::Uuid::new_v4());
        match p.group_instance_id.clone() {
            Some(instance) => match group.current_static_member_id(&instance) {
                Some(old) => {
                    tracing::info!(group = %group.group_id, instance = %instance, old = %old, "static member rejoins with an unknown member id; replacing it");
                    self.update_static_member_and_rebalance(
                        shared,
                        group,
                        old,
                        new_member_id,
                        instance,
                        p,
                        tx,
                        now,
                    );
                }
                None => self.add_member_and_rebalance(group, new_member_id, p, tx, now),
            },
            None if p.require_known_member_id => {
                group
                    .pending_members
                    .insert(new_member_id.clone(), after(now, p.session_timeout_ms));
                let _ = tx.send(JoinGroupResult::error(
                    &new_member_id,
                    ErrorCode::MemberIdRequired,
                ));
            }
            None => self.add_member_and_rebalance(group, new_member_id, p, tx, now),
        }
    }

    fn do_current_member_join(
        &self,
        group: &mut GroupMetadata,
        p: JoinParams,
        tx: oneshot::Sender<JoinGroupResult>,
        now: Instant,
    ) {
        let id = p.member_id.clone();
        let reply = |tx: oneshot::Sender<JoinGroupResult>, e| {
            let _ = tx.send(JoinGroupResult::error(&id, e));
        };
        if group.is(GroupState::Dead) {
            return reply(tx, ErrorCode::CoordinatorNotAvailable);
        }
        if !group.supports_protocols(&p.protocol_type, &Self::protocol_names(&p)) {
            return reply(tx, ErrorCode::InconsistentGroupProtocol);
        }
        if group.is_pending_member(&id) {
            // A pending member is never static (static members skip MEMBER_ID_REQUIRED).
            return self.add_member_and_rebalance(group, id.clone(), p, tx, now);
        }
        let instance = p.group_instance_id.as_deref();
        let instance_unknown = instance.is_some_and(|i| !group.has_static_member(i));
        if group.is_static_member_fenced(instance, &id) {
            return reply(tx, ErrorCode::FencedInstanceId);
        }
        if !group.has(&id) || instance_unknown {
            return reply(tx, ErrorCode::UnknownMemberId);
        }
        let matches = group.get(&id).is_some_and(|m| m.matches(&p.protocols));
        let current = |group: &GroupMetadata, with_members: bool| JoinGroupResult {
            members: if with_members {
                group.current_member_metadata()
            } else {
                Vec::new()
            },
            member_id: id.clone(),
            generation_id: group.generation_id,
            protocol_type: group.protocol_type.clone(),
            protocol_name: group.protocol_name.clone(),
            leader_id: group.leader_or_empty(),
            skip_assignment: false,
            error: ErrorCode::None,
        };
        match group.state {
            GroupState::PreparingRebalance => self.update_member_and_rebalance(group, p, tx, now),
            GroupState::CompletingRebalance if matches => {
                // The member may have missed its JoinGroup answer: give it again.
                let result = current(group, group.is_leader(&id));
                let _ = tx.send(result);
            }
            GroupState::CompletingRebalance => self.update_member_and_rebalance(group, p, tx, now),
            GroupState::Stable if group.is_leader(&id) || !matches => {
                // A leader's rejoin forces a rebalance (it saw a metadata change).
                self.update_member_and_rebalance(group, p, tx, now)
            }
            GroupState::Stable => {
                let result = current(group, false);
                let _ = tx.send(result);
            }
            GroupState::Empty | GroupState::Dead => reply(tx, ErrorCode::UnknownMemberId),
        }
    }

    fn add_member_and_rebalance(
        &self,
        group: &mut GroupMetadata,
        member_id: String,
        p: JoinParams,
        tx: oneshot::Sender<JoinGroupResult>,
        now: Instant,
    ) {
        let mut member = MemberMetadata::new(
            member_id.clone(),
            p.group_instance_id,
            p.client_id,
            p.client_host,
            p.rebalance_timeout_ms,
            p.session_timeout_ms,
            p.protocol_type,
            p.protocols,
        );
        member.is_new = true;
        member.awaiting_join = Some(tx);
        // New members of a first rebalance extend the initial delay.
        if group.is(GroupState::PreparingRebalance) && group.generation_id == 0 {
            group.new_member_added = true;
        }
        group.add(member);
        if let Some(m) = group.get_mut(&member_id) {
            m.heartbeat_deadline = Some(after(now, NEW_MEMBER_JOIN_TIMEOUT_MS));
        }
        self.maybe_prepare_rebalance(group, now);
    }

    fn update_member_and_rebalance(
        &self,
        group: &mut GroupMetadata,
        p: JoinParams,
        tx: oneshot::Sender<JoinGroupResult>,
        now: Instant,
    ) {
        if let Some(m) = group.get_mut(&p.member_id) {
            m.supported_protocols = p.protocols;
            m.rebalance_timeout_ms = p.rebalance_timeout_ms;
            m.session_timeout_ms = p.session_timeout_ms;
            m.awaiting_join = Some(tx);
        }
        self.maybe_prepare_rebalance(group, now);
    }

    #[allow(clippy::too_many_arguments)]
    fn update_static_member_and_rebalance(
        &self,
        shared: &SharedGroup,
        group: &mut GroupMetadata,
        old_member_id: String,
        new_member_id: String,
        instance_id: String,
        p: JoinParams,
        tx: oneshot::Sender<JoinGroupResult>,
        now: Instant,
    ) {
        let current_leader = group.leader_or_empty();
        let was_leader = group.is_leader(&old_member_id);
        let Some(mut member) = group.remove(&old_member_id) else {
            let _ = tx.send(JoinGroupResult::error(
                &p.member_id,
                ErrorCode::UnknownMemberId,
            ));
            return;
        };
        // The old instance is fenced at once if it is waiting for an answer.
        member.complete_join(JoinGroupResult::error(
            &old_member_id,
            ErrorCode::FencedInstanceId,
        ));
        member.complete_sync(super::member_metadata::SyncGroupResult::error(
            ErrorCode::FencedInstanceId,
        ));
        let rejoin = StaticRejoin {
            new_member_id: new_member_id.clone(),
            old_member_id: old_member_id.clone(),
            instance_id: instance_id.clone(),
            current_leader: current_leader.clone(),
            support_skipping_assignment: p.support_skipping_assignment,
            old_protocols: member.supported_protocols.clone(),
            old_rebalance_timeout_ms: member.rebalance_timeout_ms,
            old_session_timeout_ms: member.session_timeout_ms,
        };
        member.member_id = new_member_id.clone();
        member.supported_protocols = p.protocols;
        member.rebalance_timeout_ms = p.rebalance_timeout_ms;
        member.session_timeout_ms = p.session_timeout_ms;
        member.awaiting_join = Some(tx);
        Self::reinsert_member(group, member, was_leader);
        group
            .static_members
            .insert(instance_id, new_member_id.clone());
        Self::schedule_heartbeat(group, &new_member_id, now);
        match group.state {
            GroupState::Stable => {
                if group.protocol_name == group.select_protocol() {
                    self.store_group(shared, group, None, AfterStore::StaticJoin(rejoin), now);
                } else {
                    self.maybe_prepare_rebalance(group, now);
                }
            }
            // The leader may already have assigned the old member id: rebalance again.
            GroupState::CompletingRebalance => self.prepare_rebalance(group, now),
            GroupState::PreparingRebalance | GroupState::Empty | GroupState::Dead => {}
        }
    }

    /// Puts a renamed member back, keeping leadership with it.
    fn reinsert_member(group: &mut GroupMetadata, member: MemberMetadata, was_leader: bool) {
        let leader = group.leader_id.clone();
        let new_id = member.member_id.clone();
        group.add(member);
        group.leader_id = if was_leader || leader.is_none() {
            Some(new_id)
        } else {
            leader
        };
    }

    pub(super) fn after_static_rejoin(
        &self,
        group: &mut GroupMetadata,
        r: StaticRejoin,
        error: ErrorCode,
        now: Instant,
    ) {
        if error != ErrorCode::None {
            tracing::warn!(group = %group.group_id, ?error, "failed to persist a static member's new id; reverting");
            let was_leader = group.is_leader(&r.new_member_id);
            let Some(mut member) = group.remove(&r.new_member_id) else {
                return;
            };
            let tx = member.awaiting_join.take();
            member.member_id = r.old_member_id.clone();
            member.supported_protocols = r.old_protocols;
            member.rebalance_timeout_ms = r.old_rebalance_timeout_ms;
            member.session_timeout_ms = r.old_session_timeout_ms;
            Self::reinsert_member(group, member, was_leader);
            group
                .static_members
                .insert(r.instance_id, r.old_member_id.clone());
            Self::schedule_heartbeat(group, &r.old_member_id, now);
            if let Some(tx) = tx {
                let _ = tx.send(JoinGroupResult {
                    generation_id: group.generation_id,
                    protocol_type: group.protocol_type.clone(),
                    protocol_name: group.protocol_name.clone(),
                    leader_id: r.current_leader,
                    ..JoinGroupResult::error("", error)
                });
            }
            return;
        }
        let is_leader = group.is_leader(&r.new_member_id);
        let members = if r.support_skipping_assignment && is_leader {
            group.current_member_metadata()
        } else {
            Vec::new()
        };
        let result = JoinGroupResult {
            members,
            member_id: r.new_member_id.clone(),
            generation_id: group.generation_id,
            protocol_type: group.protocol_type.clone(),
            protocol_name: group.protocol_name.clone(),
            // Before v9, the old leader id keeps the new member from assigning in a stable group.
            leader_id: if r.support_skipping_assignment {
                group.leader_or_empty()
            } else {
                r.current_leader
            },
            skip_assignment: r.support_skipping_assignment && is_leader,
            error: ErrorCode::None,
        };
        if let Some(m) = group.get_mut(&r.new_member_id) {
            m.complete_join(result);
        }
    }

    /// Completes the delayed join if it can (Kafka's `tryCompleteJoin`, and the expiry of
    /// `DelayedJoin`/`InitialDelayedJoin` when `now` passed its deadline).
    pub(super) fn try_complete_join(
        &self,
        shared: &SharedGroup,
        group: &mut GroupMetadata,
        now: Instant,
    ) {
        match group.join_timer {
            Some(JoinTimer::Normal { deadline })
                if group.has_all_members_joined() || now >= deadline =>
            {
                self.complete_join(shared, group, now);
            }
            Some(JoinTimer::Normal { .. }) => {}
            Some(JoinTimer::Initial {
                deadline,
                delay_ms,
                remaining_ms,
            }) => {
                if now < deadline {
                    return;
                }
                if group.new_member_added && remaining_ms != 0 {
                    group.new_member_added = false;
                    let configured = i64::from(self.group_config.initial_rebalance_delay_ms);
                    let delay = configured.min(remaining_ms);
                    group.join_timer = Some(JoinTimer::Initial {
                        deadline: after(now, i32::try_from(delay).unwrap_or(i32::MAX)),
                        delay_ms: delay,
                        remaining_ms: (remaining_ms - delay_ms).max(0),
                    });
                } else {
                    self.complete_join(shared, group, now);
                }
            }
            None => {}
        }
    }

    /// Kafka's `onCompleteJoin`.
    fn complete_join(&self, shared: &SharedGroup, group: &mut GroupMetadata, now: Instant) {
        group.join_timer = None;
        let not_rejoined: Vec<String> = group
            .members
            .iter()
            .filter(|m| !m.is_awaiting_join() && !m.is_static())
            .map(|m| m.member_id.clone())
            .collect();
        for id in &not_rejoined {
            tracing::info!(group = %group.group_id, member = %id, "member did not rejoin in time; removing it");
            group.remove(id);
        }
        if group.is(GroupState::Dead) {
            return;
        }
        if !group.maybe_elect_new_joined_leader() && !group.is_empty() {
            // Nobody rejoined: wait again until session timeouts remove the silent members.
            group.join_timer = Some(JoinTimer::Normal {
                deadline: after(now, group.rebalance_timeout_ms()),
            });
            return;
        }
        group.init_next_generation(self.manager.now_ms());
        if group.is(GroupState::Empty) {
            tracing::info!(group = %group.group_id, generation = group.generation_id, "group is now empty");
            self.store_group(shared, group, None, AfterStore::Nothing, now);
            return;
        }
        tracing::info!(group = %group.group_id, generation = group.generation_id, members = group.size(), "stabilized group");
        let all = group.current_member_metadata();
        let generation = group.generation_id;
        let protocol_type = group.protocol_type.clone();
        let protocol_name = group.protocol_name.clone();
        let leader = group.leader_or_empty();
        let ids: Vec<String> = group.members.iter().map(|m| m.member_id.clone()).collect();
        for id in ids {
            let result = JoinGroupResult {
                members: if id == leader {
                    all.clone()
                } else {
                    Vec::new()
                },
                member_id: id.clone(),
                generation_id: generation,
                protocol_type: protocol_type.clone(),
                protocol_name: protocol_name.clone(),
                leader_id: leader.clone(),
                skip_assignment: false,
                error: ErrorCode::None,
            };
            if let Some(m) = group.get_mut(&id) {
                m.complete_join(result);
                m.is_new = false;
            }
            Self::schedule_heartbeat(group, &id, now);
            group.pending_sync_members.insert(id);
        }
        group.sync_deadline = Some(after(now, group.rebalance_timeout_ms()));
    }
}
