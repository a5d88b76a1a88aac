//! Kafka's classic `GroupCoordinator`: the operations the group APIs call, with Kafka's checks
//! in Kafka's order, and the delayed operations (join, sync, heartbeat expiry) that Kafka keeps
//! in purgatories, here deadlines on the group checked by one ticking task.
//!
//! JoinGroup ([`super::group_join`]) and SyncGroup answers are parked as oneshot senders on
//! their member and sent when the rebalance gets there; the API handler awaits the receiver in
//! a deferred response, holding no io thread. Offsets and the admin APIs are in
//! [`super::group_offsets`].
//!
//! Lock order: see [`super::group_metadata_manager`]. Group locks are std mutexes, held only
//! for the synchronous state changes; appends happen under the group lock (they do not wait),
//! and waiting for the high watermark happens in a tracked task.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;
use crate::zk::ZkClient;

use super::group_metadata::{GroupMetadata, GroupState};
use super::group_metadata_manager::{
    GroupMetadataManager, SharedGroup, committed, settled, store_group_error,
};
use super::member_metadata::{JoinGroupResult, SyncGroupResult};

/// How long a new member's JoinGroup may wait in a rebalance (Kafka's `NewMemberJoinTimeoutMs`).
pub(crate) const NEW_MEMBER_JOIN_TIMEOUT_MS: i32 = 5 * 60 * 1000;
/// How often the delayed operations' deadlines are checked.
pub(crate) const TICK: Duration = Duration::from_millis(50);

/// The `group.*` settings.
#[derive(Debug, Clone)]
pub struct GroupConfig {
    pub min_session_timeout_ms: i32,
    pub max_session_timeout_ms: i32,
    pub max_size: usize,
    pub initial_rebalance_delay_ms: i32,
}

/// The API a group request came through (`validateGroupStatus` differs by API).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupApi {
    JoinGroup,
    SyncGroup,
    Heartbeat,
    LeaveGroup,
    OffsetCommit,
    OffsetFetch,
    DescribeGroups,
    DeleteGroups,
    OffsetDelete,
}

/// What to do once a group metadata record is committed.
#[derive(Debug)]
pub(super) enum AfterStore {
    Nothing,
    /// The leader's SyncGroup of `generation`.
    Sync {
        generation: i32,
        assignment: HashMap<String, Bytes>,
    },
    /// A static member replaced in a Stable group (Kafka's `updateStaticMemberAndRebalance`).
    StaticJoin(super::group_join::StaticRejoin),
}

/// The coordinator.
#[derive(Debug)]
pub struct GroupCoordinator {
    pub group_config: GroupConfig,
    pub manager: Arc<GroupMetadataManager>,
    /// The metadata store: OffsetCommit/OffsetFetch v0 keep offsets in ZooKeeper's
    /// `/consumers/<group>/offsets/<topic>/<partition>`, as Kafka does.
    pub zk: Arc<dyn ZkClient>,
    active: AtomicBool,
    pub(super) shutdown: CancellationToken,
    pub(super) tasks: TaskTracker,
    me: Weak<GroupCoordinator>,
}

/// One SyncGroup, as the coordinator needs it.
#[derive(Debug, Clone)]
pub struct SyncParams {
    pub group_id: String,
    pub generation_id: i32,
    pub member_id: String,
    /// v5+: must match the group's.
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub group_instance_id: Option<String>,
    /// The leader's assignment by member id (empty from followers).
    pub assignment: HashMap<String, Bytes>,
}

/// A member identity in a LeaveGroup.
#[derive(Debug, Clone)]
pub struct LeavingMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
}

pub(super) fn after(now: Instant, ms: i32) -> Instant {
    now + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

impl GroupCoordinator {
    pub fn new(
        group_config: GroupConfig,
        manager: Arc<GroupMetadataManager>,
        zk: Arc<dyn ZkClient>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| GroupCoordinator {
            group_config,
            manager,
            zk,
            active: AtomicBool::new(false),
            shutdown: CancellationToken::new(),
            tasks: TaskTracker::new(),
            me: me.clone(),
        })
    }

    /// Accepts requests (Kafka's `isActive`); [`GroupCoordinator::startup`] does it too.
    pub fn activate(&self) {
        self.active.store(true, Ordering::SeqCst);
    }

    /// Starts the timers and loads `partitions` (the offsets partitions this broker leads,
    /// with their leader epochs).
    pub fn startup(&self, partitions: Vec<(i32, i32)>) {
        self.activate();
        for (p, _) in &partitions {
            self.manager.mark_loading(*p);
        }
        self.on_elected(partitions);
        let Some(me) = self.me.upgrade() else { return };
        let token = self.shutdown.clone();
        self.tasks.spawn(async move {
            let mut ticker = tokio::time::interval(TICK);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = token.cancelled() => break,
                    _ = ticker.tick() => me.tick(Instant::now()),
                }
            }
        });
        let Some(me) = self.me.upgrade() else { return };
        let token = self.shutdown.clone();
        let every = Duration::from_millis(
            u64::try_from(self.manager.config.retention_check_interval_ms).unwrap_or(600_000),
        );
        self.tasks.spawn(async move {
            let mut ticker = tokio::time::interval_at(Instant::now() + every, every);
            loop {
                tokio::select! {
                    _ = token.cancelled() => break,
                    _ = ticker.tick() => me.cleanup_expired_offsets(me.manager.now_ms()),
                }
            }
        });
    }

    /// Kafka's `onElection`: this broker became leader of offsets partitions (index, leader
    /// epoch): load them off the runtime's workers. A partition loaded already (re-elected at a
    /// new epoch) is not loaded again, as in Kafka; a stale election is ignored.
    pub fn on_elected(&self, partitions: Vec<(i32, i32)>) {
        let loads: Vec<(i32, u64)> = partitions
            .into_iter()
            .filter_map(|(p, epoch)| Some((p, self.manager.begin_loading(p, Some(epoch))?)))
            .collect();
        if loads.is_empty() {
            return;
        }
        let manager = Arc::clone(&self.manager);
        self.tasks.spawn(async move {
            let _ = tokio::task::spawn_blocking(move || {
                for (p, id) in loads {
                    manager.load(p, id);
                }
            })
            .await;
        });
    }

    /// Kafka's `onResignation`: this broker no longer leads (or no longer hosts) offsets
    /// partition `index`, as of leader epoch `epoch` (`None`: unconditionally). Its groups leave
    /// the cache and are unloaded (Kafka's `onGroupUnloaded`): each becomes Dead, parked
    /// JoinGroup and SyncGroup answers get NOT_COORDINATOR, its timers stop; their members'
    /// next requests (heartbeats too) get NOT_COORDINATOR, so the clients find the new
    /// coordinator. A stale resignation (older than the newest election) changes nothing.
    pub fn on_resignation(&self, index: i32, epoch: Option<i32>) {
        let Some(groups) = self.manager.remove_groups_for_partition(index, epoch) else {
            return;
        };
        for shared in groups {
            Self::on_group_unloaded(&mut lock(&shared));
        }
    }

    /// Kafka's `onGroupUnloaded`.
    fn on_group_unloaded(group: &mut GroupMetadata) {
        tracing::info!(group = %group.group_id, generation = group.generation_id,
            "unloading group metadata");
        group.transition_to(GroupState::Dead);
        for m in &mut group.members {
            let member_id = m.member_id.clone();
            m.complete_join(JoinGroupResult::error(
                &member_id,
                ErrorCode::NotCoordinator,
            ));
            m.complete_sync(SyncGroupResult::error(ErrorCode::NotCoordinator));
            m.heartbeat_deadline = None;
        }
        group.join_timer = None;
        group.sync_deadline = None;
    }

    /// Answers every parked JoinGroup/SyncGroup with NOT_COORDINATOR (Kafka's `onGroupUnloaded`)
    /// and stops the timers.
    pub async fn shutdown(&self) {
        self.active.store(false, Ordering::SeqCst);
        self.shutdown.cancel();
        for shared in self.manager.all_groups() {
            let mut group = lock(&shared);
            for m in &mut group.members {
                m.complete_join(JoinGroupResult::error(
                    &m.member_id.clone(),
                    ErrorCode::NotCoordinator,
                ));
                m.complete_sync(SyncGroupResult::error(ErrorCode::NotCoordinator));
            }
        }
        self.tasks.close();
        self.tasks.wait().await;
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// Kafka's `validateGroupStatus`.
    pub fn validate_group_status(&self, group_id: &str, api: GroupApi) -> Option<ErrorCode> {
        let empty_allowed = matches!(
            api,
            GroupApi::OffsetCommit
                | GroupApi::OffsetFetch
                | GroupApi::DescribeGroups
                | GroupApi::DeleteGroups
        );
        if group_id.is_empty() && !empty_allowed {
            Some(ErrorCode::InvalidGroupId)
        } else if !self.is_active() {
            Some(ErrorCode::CoordinatorNotAvailable)
        } else if self.manager.is_loading(group_id) {
            Some(ErrorCode::CoordinatorLoadInProgress)
        } else if !self.manager.is_coordinator_for(group_id) {
            Some(ErrorCode::NotCoordinator)
        } else {
            None
        }
    }

    /// Kafka's `completeAndScheduleNextHeartbeatExpiration`.
    pub(super) fn schedule_heartbeat(group: &mut GroupMetadata, member_id: &str, now: Instant) {
        if let Some(m) = group.get_mut(member_id) {
            let timeout = if m.is_new {
                NEW_MEMBER_JOIN_TIMEOUT_MS
            } else {
                m.session_timeout_ms
            };
            m.heartbeat_deadline = Some(after(now, timeout));
        }
    }

    /// Appends the group's metadata; runs `then` once it is committed (inline when the high
    /// watermark already passed it, else from a tracked task).
    pub(super) fn store_group(
        &self,
        shared: &SharedGroup,
        group: &mut GroupMetadata,
        assignment: Option<&HashMap<String, Bytes>>,
        then: AfterStore,
        now: Instant,
    ) {
        let Some(record) = self.manager.group_metadata_record(group, assignment) else {
            self.after_store(group, then, ErrorCode::UnknownServerError, now);
            return;
        };
        match settled(self.manager.append(&group.group_id, vec![record])) {
            Ok(error) => self.after_store(group, then, store_group_error(error), now),
            Err(delayed) => {
                let Some(me) = self.me.upgrade() else { return };
                let shared = Arc::clone(shared);
                let token = self.shutdown.clone();
                self.tasks.spawn(async move {
                    let error = store_group_error(committed(delayed, &token).await);
                    let mut group = lock(&shared);
                    me.after_store(&mut group, then, error, Instant::now());
                });
            }
        }
    }

    fn after_store(
        &self,
        group: &mut GroupMetadata,
        then: AfterStore,
        error: ErrorCode,
        now: Instant,
    ) {
        match then {
            AfterStore::Nothing => {
                if error != ErrorCode::None {
                    tracing::warn!(group = %group.group_id, ?error, "failed to write the empty group's metadata");
                }
            }
            AfterStore::Sync {
                generation,
                assignment,
            } => {
                // Another member may have joined meanwhile: only the same generation completes.
                if group.is(GroupState::CompletingRebalance) && group.generation_id == generation {
                    if error != ErrorCode::None {
                        Self::reset_and_propagate_assignment_error(group, error);
                        self.maybe_prepare_rebalance(group, now);
                    } else {
                        for m in &mut group.members {
                            m.assignment =
                                assignment.get(&m.member_id).cloned().unwrap_or_default();
                        }
                        Self::propagate_assignment(group, ErrorCode::None, now);
                        group.transition_to(GroupState::Stable);
                    }
                }
            }
            AfterStore::StaticJoin(rejoin) => self.after_static_rejoin(group, rejoin, error, now),
        }
    }

    /// Answers every parked SyncGroup with the member's assignment (or `error`).
    pub(super) fn propagate_assignment(group: &mut GroupMetadata, error: ErrorCode, now: Instant) {
        let protocol_type = group.protocol_type.clone();
        let protocol_name = group.protocol_name.clone();
        let mut answered = Vec::new();
        for m in &mut group.members {
            let result = SyncGroupResult {
                protocol_type: protocol_type.clone(),
                protocol_name: protocol_name.clone(),
                assignment: m.assignment.clone(),
                error,
            };
            if m.complete_sync(result) {
                answered.push(m.member_id.clone());
            }
        }
        for id in answered {
            Self::schedule_heartbeat(group, &id, now);
        }
    }

    pub(super) fn reset_and_propagate_assignment_error(
        group: &mut GroupMetadata,
        error: ErrorCode,
    ) {
        for m in &mut group.members {
            m.assignment = Bytes::new();
        }
        Self::propagate_assignment(group, error, Instant::now());
    }

    pub(super) fn maybe_prepare_rebalance(&self, group: &mut GroupMetadata, now: Instant) {
        if group.can_rebalance() {
            self.prepare_rebalance(group, now);
        }
    }

    /// Kafka's `prepareRebalance`: parked syncs are told to rejoin, and the delayed join starts
    /// (an initial one, with `group.initial.rebalance.delay.ms`, for an empty group).
    pub(super) fn prepare_rebalance(&self, group: &mut GroupMetadata, now: Instant) {
        if group.is(GroupState::CompletingRebalance) {
            Self::reset_and_propagate_assignment_error(group, ErrorCode::RebalanceInProgress);
        }
        group.sync_deadline = None;
        let rebalance_timeout = i64::from(group.rebalance_timeout_ms());
        let delay = i64::from(self.group_config.initial_rebalance_delay_ms);
        group.join_timer = Some(if group.is(GroupState::Empty) {
            super::group_metadata::JoinTimer::Initial {
                deadline: after(now, self.group_config.initial_rebalance_delay_ms),
                delay_ms: delay,
                remaining_ms: (rebalance_timeout - delay).max(0),
            }
        } else {
            super::group_metadata::JoinTimer::Normal {
                deadline: after(now, group.rebalance_timeout_ms()),
            }
        });
        group.transition_to(GroupState::PreparingRebalance);
        tracing::info!(group = %group.group_id, generation = group.generation_id, "preparing to rebalance");
    }

    /// Kafka's `removeMemberAndUpdateGroup`.
    pub(super) fn remove_member_and_update_group(
        &self,
        shared: &SharedGroup,
        group: &mut GroupMetadata,
        member_id: &str,
        now: Instant,
    ) {
        if let Some(m) = group.get_mut(member_id) {
            m.complete_join(JoinGroupResult::error("", ErrorCode::UnknownMemberId));
        }
        group.remove(member_id);
        match group.state {
            GroupState::Dead | GroupState::Empty => {}
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.maybe_prepare_rebalance(group, now);
                // Kafka's `tryCompleteElseWatch`: a join that can complete now (the last member
                // left, or every other member has rejoined) completes within this call, so the
                // group is Empty the moment its last member's LeaveGroup is answered.
                if group.is(GroupState::PreparingRebalance) {
                    self.try_complete_join(shared, group, now);
                }
            }
            GroupState::PreparingRebalance => self.try_complete_join(shared, group, now),
        }
    }

    /// The delayed operations whose deadline passed, for every group.
    pub fn tick(&self, now: Instant) {
        for shared in self.manager.all_groups() {
            let mut group = lock(&shared);
            self.tick_group(&shared, &mut group, now);
        }
    }

    fn tick_group(&self, shared: &SharedGroup, group: &mut GroupMetadata, now: Instant) {
        if group.is(GroupState::Dead) {
            return;
        }
        // A group loaded with more members than `group.max.size` allows rebalances; the
        // members beyond the limit are refused when they rejoin (Kafka's `onGroupLoaded`).
        if group.is(GroupState::Stable) && group.size() > self.group_config.max_size {
            tracing::info!(group = %group.group_id, members = group.size(), "group is over capacity; rebalancing");
            self.prepare_rebalance(group, now);
        }
        let expired_pending: Vec<String> = group
            .pending_members
            .iter()
            .filter(|(_, d)| **d <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired_pending {
            group.remove(&id);
            if group.is(GroupState::PreparingRebalance) {
                self.try_complete_join(shared, group, now);
            }
        }
        let missed: Vec<String> = group
            .members
            .iter()
            .filter(|m| m.heartbeat_deadline.is_some_and(|d| d <= now))
            .map(|m| m.member_id.clone())
            .collect();
        for id in missed {
            let Some(m) = group.get_mut(&id) else {
                continue;
            };
            if m.survives_missed_heartbeat() {
                m.heartbeat_deadline = None;
            } else {
                tracing::info!(group = %group.group_id, member = %id, "member failed to heartbeat; removing it from the group");
                self.remove_member_and_update_group(shared, group, &id, now);
            }
        }
        if group.join_timer.is_some() {
            self.try_complete_join(shared, group, now);
        }
        if group.sync_deadline.is_some_and(|d| d <= now) {
            group.sync_deadline = None;
            if matches!(
                group.state,
                GroupState::CompletingRebalance | GroupState::Stable
            ) && !group.pending_sync_members.is_empty()
            {
                let pending: Vec<String> = group.pending_sync_members.iter().cloned().collect();
                for id in &pending {
                    group.remove(id);
                }
                tracing::info!(group = %group.group_id, members = ?pending, "removing members that did not sync in time");
                self.prepare_rebalance(group, now);
            }
        }
    }

    /// Kafka's `handleSyncGroup`; the receiver gets the answer when it is ready.
    pub fn handle_sync_group(&self, p: SyncParams) -> oneshot::Receiver<SyncGroupResult> {
        let SyncParams {
            group_id,
            generation_id,
            member_id,
            protocol_type,
            protocol_name,
            group_instance_id,
            assignment,
        } = p;
        let (group_id, member_id) = (group_id.as_str(), member_id.as_str());
        let (protocol_type, protocol_name) = (protocol_type.as_deref(), protocol_name.as_deref());
        let group_instance_id = group_instance_id.as_deref();
        let (tx, rx) = oneshot::channel();
        let fail = |tx: oneshot::Sender<SyncGroupResult>, e| {
            let _ = tx.send(SyncGroupResult::error(e));
        };
        match self.validate_group_status(group_id, GroupApi::SyncGroup) {
            // The rebalance's state is lost while loading: rejoin without rediscovering.
            Some(ErrorCode::CoordinatorLoadInProgress) => {
                fail(tx, ErrorCode::RebalanceInProgress);
                return rx;
            }
            Some(e) => {
                fail(tx, e);
                return rx;
            }
            None => {}
        }
        let Some(shared) = self.manager.get_group(group_id) else {
            fail(tx, ErrorCode::UnknownMemberId);
            return rx;
        };
        let now = Instant::now();
        let mut group = lock(&shared);
        let error = if group.is(GroupState::Dead) {
            Some(ErrorCode::CoordinatorNotAvailable)
        } else if group.is_static_member_fenced(group_instance_id, member_id) {
            Some(ErrorCode::FencedInstanceId)
        } else if !group.has(member_id) {
            Some(ErrorCode::UnknownMemberId)
        } else if generation_id != group.generation_id {
            Some(ErrorCode::IllegalGeneration)
        } else if protocol_type.is_some_and(|t| group.protocol_type.as_deref() != Some(t))
            || protocol_name.is_some_and(|n| group.protocol_name.as_deref() != Some(n))
        {
            Some(ErrorCode::InconsistentGroupProtocol)
        } else {
            match group.state {
                GroupState::Empty => Some(ErrorCode::UnknownMemberId),
                GroupState::PreparingRebalance => Some(ErrorCode::RebalanceInProgress),
                _ => None,
            }
        };
        if let Some(e) = error {
            fail(tx, e);
            return rx;
        }
        if group.is(GroupState::Stable) {
            group.pending_sync_members.remove(member_id);
            let result = SyncGroupResult {
                protocol_type: group.protocol_type.clone(),
                protocol_name: group.protocol_name.clone(),
                assignment: group
                    .get(member_id)
                    .map(|m| m.assignment.clone())
                    .unwrap_or_default(),
                error: ErrorCode::None,
            };
            let _ = tx.send(result);
            Self::schedule_heartbeat(&mut group, member_id, now);
            return rx;
        }
        // CompletingRebalance: park the answer until the leader's assignment is stored.
        if let Some(m) = group.get_mut(member_id) {
            m.awaiting_sync = Some(tx);
        }
        group.pending_sync_members.remove(member_id);
        if group.is_leader(member_id) {
            let mut full = HashMap::new();
            for m in &group.members {
                full.insert(
                    m.member_id.clone(),
                    assignment.get(&m.member_id).cloned().unwrap_or_default(),
                );
            }
            tracing::info!(
                group = group_id,
                generation = group.generation_id,
                members = group.size(),
                "assignment received from the leader"
            );
            let generation = group.generation_id;
            let full_ref = full.clone();
            self.store_group(
                &shared,
                &mut group,
                Some(&full_ref),
                AfterStore::Sync {
                    generation,
                    assignment: full,
                },
                now,
            );
        }
        rx
    }

    /// Kafka's `handleHeartbeat`.
    pub fn handle_heartbeat(
        &self,
        group_id: &str,
        member_id: &str,
        group_instance_id: Option<&str>,
        generation_id: i32,
    ) -> ErrorCode {
        match self.validate_group_status(group_id, GroupApi::Heartbeat) {
            // Still loading: answer blindly.
            Some(ErrorCode::CoordinatorLoadInProgress) => return ErrorCode::None,
            Some(e) => return e,
            None => {}
        }
        let Some(shared) = self.manager.get_group(group_id) else {
            return ErrorCode::UnknownMemberId;
        };
        let now = Instant::now();
        let mut group = lock(&shared);
        if group.is(GroupState::Dead) {
            ErrorCode::CoordinatorNotAvailable
        } else if group.is_static_member_fenced(group_instance_id, member_id) {
            ErrorCode::FencedInstanceId
        } else if !group.has(member_id) {
            ErrorCode::UnknownMemberId
        } else if generation_id != group.generation_id {
            ErrorCode::IllegalGeneration
        } else {
            match group.state {
                GroupState::Empty | GroupState::Dead => ErrorCode::UnknownMemberId,
                GroupState::CompletingRebalance | GroupState::Stable => {
                    Self::schedule_heartbeat(&mut group, member_id, now);
                    ErrorCode::None
                }
                GroupState::PreparingRebalance => {
                    Self::schedule_heartbeat(&mut group, member_id, now);
                    ErrorCode::RebalanceInProgress
                }
            }
        }
    }

    /// Kafka's `handleLeaveGroup`: the top-level error and one error per leaving member.
    pub fn handle_leave_group(
        &self,
        group_id: &str,
        leaving: &[LeavingMember],
    ) -> (ErrorCode, Vec<ErrorCode>) {
        if let Some(e) = self.validate_group_status(group_id, GroupApi::LeaveGroup) {
            return (e, Vec::new());
        }
        let Some(shared) = self.manager.get_group(group_id) else {
            return (
                ErrorCode::None,
                vec![ErrorCode::UnknownMemberId; leaving.len()],
            );
        };
        let now = Instant::now();
        let mut group = lock(&shared);
        if group.is(GroupState::Dead) {
            return (ErrorCode::CoordinatorNotAvailable, Vec::new());
        }
        let mut errors = Vec::with_capacity(leaving.len());
        for l in leaving {
            let instance = l.group_instance_id.as_deref();
            let e = if l.member_id.is_empty() {
                match instance.and_then(|i| group.current_static_member_id(i)) {
                    Some(current) => {
                        self.remove_member_and_update_group(&shared, &mut group, &current, now);
                        ErrorCode::None
                    }
                    None => ErrorCode::UnknownMemberId,
                }
            } else if group.is_pending_member(&l.member_id) {
                group.remove(&l.member_id);
                if group.is(GroupState::PreparingRebalance) {
                    self.try_complete_join(&shared, &mut group, now);
                }
                ErrorCode::None
            } else if group.is_static_member_fenced(instance, &l.member_id) {
                ErrorCode::FencedInstanceId
            } else if group.has(&l.member_id) {
                tracing::info!(group = group_id, member = %l.member_id, "member left the group");
                self.remove_member_and_update_group(&shared, &mut group, &l.member_id, now);
                ErrorCode::None
            } else {
                ErrorCode::UnknownMemberId
            };
            errors.push(e);
        }
        (ErrorCode::None, errors)
    }
}
