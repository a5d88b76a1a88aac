//! Offsets and the group admin operations of the coordinator (Kafka's `handleCommitOffsets`,
//! `handleFetchOffsets`, `handleListGroups`, `handleDescribeGroup`, `handleDeleteGroups`,
//! `handleDeleteOffsets`, and the offsets retention job `cleanupGroupMetadata`).
//!
//! An offset commit is appended to the group's offsets partition and answered once committed
//! (acks=all, within `offsets.commit.timeout.ms`); only then does OffsetFetch return it.

use bytes::Bytes;
use tokio::time::Instant;

use crate::cluster::TopicPartition;
use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::builder::SimpleRecord;

use super::group_coordinator::{GroupApi, GroupCoordinator};
use super::group_metadata::{GroupMetadata, GroupState};
use super::group_metadata_manager::{SharedGroup, commit_error, committed, settled};
use super::offsets_records::OffsetAndMetadata;

/// One OffsetCommit.
#[derive(Debug, Clone)]
pub struct CommitParams {
    pub group_id: String,
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub generation_id: i32,
    pub offsets: Vec<(TopicPartition, OffsetAndMetadata)>,
}

/// What DescribeGroups reports of one group (Kafka's `GroupSummary`).
#[derive(Debug, Clone, Default)]
pub struct GroupSummary {
    pub state: String,
    pub protocol_type: String,
    pub protocol: String,
    pub members: Vec<MemberSummary>,
}

#[derive(Debug, Clone)]
pub struct MemberSummary {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub metadata: Bytes,
    pub assignment: Bytes,
}

/// One ListGroups entry: id, protocol type, state.
pub(crate) type GroupOverview = (String, String, &'static str);

impl GroupCoordinator {
    /// Kafka's `validateOffsetCommit`: a transactional commit without member information is
    /// accepted into a group with members too.
    pub(super) fn validate_offset_commit(
        group: &GroupMetadata,
        p: &CommitParams,
        transactional: bool,
    ) -> Option<ErrorCode> {
        if group.is(GroupState::Dead) {
            Some(ErrorCode::CoordinatorNotAvailable)
        } else if p.generation_id >= 0 || !p.member_id.is_empty() || p.group_instance_id.is_some() {
            if group.is_static_member_fenced(p.group_instance_id.as_deref(), &p.member_id) {
                Some(ErrorCode::FencedInstanceId)
            } else if !group.has(&p.member_id) {
                Some(ErrorCode::UnknownMemberId)
            } else if p.generation_id != group.generation_id {
                Some(ErrorCode::IllegalGeneration)
            } else {
                None
            }
        } else if !transactional && !group.is(GroupState::Empty) {
            // Only members commit for a group with members.
            Some(ErrorCode::UnknownMemberId)
        } else {
            None
        }
    }

    /// Kafka's `handleCommitOffsets`: the error of each partition, once the commit is durable.
    pub async fn commit_offsets(&self, p: CommitParams) -> Vec<(TopicPartition, ErrorCode)> {
        let all = |e: ErrorCode, p: &CommitParams| {
            p.offsets
                .iter()
                .map(|(tp, _)| (tp.clone(), e))
                .collect::<Vec<_>>()
        };
        if let Some(e) = self.validate_group_status(&p.group_id, GroupApi::OffsetCommit) {
            return all(e, &p);
        }
        let shared = match self.manager.get_group(&p.group_id) {
            Some(g) => g,
            // Without group management (generation -1) a commit creates an empty group.
            None if p.generation_id < 0 => self.manager.get_or_create_group(&p.group_id),
            None => return all(ErrorCode::IllegalGeneration, &p),
        };
        let max = self.manager.config.metadata_max_bytes;
        let position;
        let (mut results, pending, accepted) = {
            let mut group = lock(&shared);
            if let Some(e) = Self::validate_offset_commit(&group, &p, false) {
                return all(e, &p);
            }
            match group.state {
                GroupState::Empty => {}
                GroupState::Stable | GroupState::PreparingRebalance => {
                    // A commit counts as a heartbeat.
                    Self::schedule_heartbeat(&mut group, &p.member_id, Instant::now());
                }
                _ => return all(ErrorCode::RebalanceInProgress, &p),
            }
            let mut results = Vec::with_capacity(p.offsets.len());
            let mut records: Vec<SimpleRecord> = Vec::new();
            let mut accepted = Vec::new();
            for (tp, o) in &p.offsets {
                if o.metadata.len() > max {
                    results.push((tp.clone(), ErrorCode::OffsetMetadataTooLarge));
                    continue;
                }
                match self.manager.offset_record(&p.group_id, tp, o) {
                    Some(r) => {
                        records.push(r);
                        accepted.push((tp.clone(), o.clone()));
                        results.push((tp.clone(), ErrorCode::None));
                    }
                    None => results.push((tp.clone(), ErrorCode::UnknownServerError)),
                }
            }
            if records.is_empty() {
                return results;
            }
            position = self.manager.log_end_offset(&p.group_id);
            match settled(self.manager.append(&p.group_id, records)) {
                Ok(ErrorCode::None) => {
                    for (tp, o) in accepted {
                        group.commit_offset(tp, o, position);
                    }
                    return results;
                }
                Ok(e) => {
                    mark(&mut results, &accepted, commit_error(e));
                    return results;
                }
                Err(delayed) => (results, delayed, accepted),
            }
        };
        let error = commit_error(committed(pending, &self.shutdown).await);
        if error == ErrorCode::None {
            let mut group = lock(&shared);
            for (tp, o) in accepted {
                group.commit_offset(tp, o, position);
            }
        } else {
            mark(&mut results, &accepted, error);
        }
        results
    }

    /// Kafka's `handleFetchOffsets`: `None` partitions means all the group has. Unknown
    /// partitions come back with offset -1 (in the returned `None`).
    pub fn fetch_offsets(
        &self,
        group_id: &str,
        partitions: Option<Vec<TopicPartition>>,
    ) -> (ErrorCode, Vec<(TopicPartition, Option<OffsetAndMetadata>)>) {
        if let Some(e) = self.validate_group_status(group_id, GroupApi::OffsetFetch) {
            return (e, Vec::new());
        }
        let group = self.manager.get_group(group_id);
        let group = group.as_ref().map(|g| lock(g));
        let live = group.as_ref().filter(|g| !g.is(GroupState::Dead));
        let out = match partitions {
            None => live
                .map(|g| {
                    g.offsets
                        .iter()
                        .map(|(tp, o)| (tp.clone(), Some(o.clone())))
                        .collect()
                })
                .unwrap_or_default(),
            Some(tps) => tps
                .into_iter()
                .map(|tp| {
                    let o = live.and_then(|g| g.offsets.get(&tp).cloned());
                    (tp, o)
                })
                .collect(),
        };
        (ErrorCode::None, out)
    }

    /// Kafka's `handleListGroups`, filtered by state names (any case) and by type (`classic`).
    pub fn list_groups(
        &self,
        states: &[String],
        types: &[String],
    ) -> (ErrorCode, Vec<GroupOverview>) {
        if !self.is_active() {
            return (ErrorCode::CoordinatorNotAvailable, Vec::new());
        }
        if !types.is_empty() && !types.iter().any(|t| t.eq_ignore_ascii_case("classic")) {
            return (ErrorCode::None, Vec::new());
        }
        let error = if self.manager.any_loading() {
            ErrorCode::CoordinatorLoadInProgress
        } else {
            ErrorCode::None
        };
        let mut out: Vec<GroupOverview> = self
            .manager
            .all_groups()
            .iter()
            .filter_map(|g| {
                let g = lock(g);
                let state = g.state.name();
                let keep =
                    states.is_empty() || states.iter().any(|s| s.eq_ignore_ascii_case(state));
                keep.then(|| {
                    (
                        g.group_id.clone(),
                        g.protocol_type.clone().unwrap_or_default(),
                        state,
                    )
                })
            })
            .collect();
        out.sort();
        (error, out)
    }

    /// Kafka's `handleDescribeGroup`.
    pub fn describe_group(&self, group_id: &str) -> (ErrorCode, GroupSummary) {
        if let Some(e) = self.validate_group_status(group_id, GroupApi::DescribeGroups) {
            return (e, GroupSummary::default());
        }
        let Some(shared) = self.manager.get_group(group_id) else {
            return (
                ErrorCode::None,
                GroupSummary {
                    state: GroupState::Dead.name().into(),
                    ..GroupSummary::default()
                },
            );
        };
        let g = lock(&shared);
        let stable = g.is(GroupState::Stable);
        let protocol = if stable {
            g.protocol_name.clone().unwrap_or_default()
        } else {
            String::new()
        };
        let members = g
            .members
            .iter()
            .map(|m| MemberSummary {
                member_id: m.member_id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                metadata: if stable {
                    m.metadata(&protocol)
                } else {
                    Bytes::new()
                },
                assignment: if stable {
                    m.assignment.clone()
                } else {
                    Bytes::new()
                },
            })
            .collect();
        (
            ErrorCode::None,
            GroupSummary {
                state: g.state.name().into(),
                protocol_type: g.protocol_type.clone().unwrap_or_default(),
                protocol,
                members,
            },
        )
    }

    /// Kafka's `handleDeleteGroups`: only empty groups are deleted, with tombstones for their
    /// offsets and metadata.
    pub fn delete_groups(&self, group_ids: &[String]) -> Vec<(String, ErrorCode)> {
        group_ids
            .iter()
            .map(|id| {
                if let Some(e) = self.validate_group_status(id, GroupApi::DeleteGroups) {
                    return (id.clone(), e);
                }
                let Some(shared) = self.manager.get_group(id) else {
                    return (id.clone(), ErrorCode::GroupIdNotFound);
                };
                let mut g = lock(&shared);
                let e = match g.state {
                    GroupState::Dead => ErrorCode::GroupIdNotFound,
                    GroupState::Empty => {
                        g.transition_to(GroupState::Dead);
                        let removed: Vec<TopicPartition> = g.offsets.keys().cloned().collect();
                        g.offsets.clear();
                        self.write_tombstones(&shared, &g, &removed);
                        ErrorCode::None
                    }
                    _ => ErrorCode::NonEmptyGroup,
                };
                (id.clone(), e)
            })
            .collect()
    }

    /// Kafka's `handleDeleteOffsets`: the group error, or one error per partition.
    pub fn delete_offsets(
        &self,
        group_id: &str,
        partitions: &[TopicPartition],
    ) -> (ErrorCode, Vec<(TopicPartition, ErrorCode)>) {
        if let Some(e) = self.validate_group_status(group_id, GroupApi::OffsetDelete) {
            return (e, Vec::new());
        }
        let Some(shared) = self.manager.get_group(group_id) else {
            return (ErrorCode::GroupIdNotFound, Vec::new());
        };
        let mut g = lock(&shared);
        let mut errors = Vec::new();
        let eligible: Vec<TopicPartition> = match g.state {
            GroupState::Dead => return (ErrorCode::GroupIdNotFound, Vec::new()),
            GroupState::Empty => partitions.to_vec(),
            _ if g.is_consumer_group() => {
                let mut free = Vec::new();
                for tp in partitions {
                    if g.is_subscribed_to_topic(&tp.topic) {
                        errors.push((tp.clone(), ErrorCode::GroupSubscribedToTopic));
                    } else {
                        free.push(tp.clone());
                    }
                }
                free
            }
            _ => return (ErrorCode::NonEmptyGroup, Vec::new()),
        };
        if !eligible.is_empty() {
            let removed: Vec<TopicPartition> = eligible
                .iter()
                .filter(|tp| g.offsets.remove(*tp).is_some())
                .cloned()
                .collect();
            if g.is(GroupState::Empty) && g.offsets.is_empty() {
                g.transition_to(GroupState::Dead);
            }
            self.write_tombstones(&shared, &g, &removed);
            errors.extend(eligible.into_iter().map(|tp| (tp, ErrorCode::None)));
        }
        (ErrorCode::None, errors)
    }

    /// Kafka's offsets retention job: expired offsets get tombstones; an empty group left
    /// without offsets dies (and gets a tombstone if it ever had a generation).
    pub fn cleanup_expired_offsets(&self, now_ms: i64) {
        let retention = self.manager.config.retention_ms;
        for shared in self.manager.all_groups() {
            let mut g = lock(&shared);
            if g.is(GroupState::Dead) {
                continue;
            }
            let removed = g.remove_expired_offsets(now_ms, retention);
            if g.is(GroupState::Empty) && g.offsets.is_empty() {
                g.transition_to(GroupState::Dead);
            }
            if !removed.is_empty() || g.is(GroupState::Dead) {
                tracing::info!(group = %g.group_id, expired = removed.len(), "removed expired offsets");
                self.write_tombstones(&shared, &g, &removed);
            }
        }
    }

    /// Kafka's `cleanupGroupMetadata` after the removal of `removed`: tombstones, and the
    /// group's own when it is dead (only if it ever had a generation: offsets-only groups have
    /// no metadata record).
    fn write_tombstones(
        &self,
        shared: &SharedGroup,
        g: &GroupMetadata,
        removed: &[TopicPartition],
    ) {
        let mut records: Vec<SimpleRecord> = removed
            .iter()
            .filter_map(|tp| self.manager.offset_tombstone(&g.group_id, tp))
            .collect();
        if g.is(GroupState::Dead) {
            self.manager.remove_group(&g.group_id, shared);
            if g.generation_id > 0
                && let Some(r) = self.manager.group_tombstone(&g.group_id)
            {
                records.push(r);
            }
        }
        // Nothing waits for the tombstones to replicate, as in Kafka.
        if !records.is_empty()
            && let Ok(e) = settled(self.manager.append(&g.group_id, records))
            && e != ErrorCode::None
        {
            tracing::warn!(group = %g.group_id, ?e, "failed to append tombstones");
        }
    }
}

fn mark(
    results: &mut [(TopicPartition, ErrorCode)],
    accepted: &[(TopicPartition, OffsetAndMetadata)],
    e: ErrorCode,
) {
    for (tp, err) in results.iter_mut() {
        if *err == ErrorCode::None && accepted.iter().any(|(a, _)| a == tp) {
            *err = e;
        }
    }
}
