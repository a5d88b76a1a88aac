//! The partitions of one LeaderAndIsr that need a new log here, admitted against the
//! descriptors and memory maps left ([`NewLogBudget`]) before any is opened; kcli's own
//! refusal, Kafka has none.
//!
//! A topic whose new logs do not fit whole is refused whole: each of its partitions is
//! answered KAFKA_STORAGE_ERROR, which the controller reads as the replica being offline (it
//! elects other leaders and does not send it again until this broker registers anew), and the
//! log dir stays online. Should an open still fail with EMFILE or ENFILE, or a map with
//! ENOMEM (the counts are a snapshot; other processes share ENFILE's table), that partition is
//! refused the same way and so is every later new log of the request, without trying. The
//! request's refusals are logged as one line with the counts, never a line per partition.

use std::collections::BTreeMap;

use crate::storage::descriptors::open_file_limits;

use super::super::error::PartitionError;
use super::ReplicaManager;
use super::leadership::PartitionLeadership;

/// The new-log refusals of one request.
#[derive(Debug, Default)]
pub(super) struct NewLogAdmission {
    /// The topics refused up front, with why.
    refused_topics: BTreeMap<String, String>,
    /// Why an open failed for a full descriptor table during the request, once it did.
    exhausted: Option<String>,
    /// Partitions that needed a new log, and those of them refused.
    new_logs: usize,
    refused: usize,
}

impl NewLogAdmission {
    /// Counts the request's new logs per topic (in request order) and admits whole topics
    /// while they fit.
    pub(super) fn admit(rm: &ReplicaManager, states: &[PartitionLeadership]) -> Self {
        let mut per_topic: Vec<(String, usize)> = Vec::new();
        for state in states {
            if !needs_new_log(rm, state) {
                continue;
            }
            let topic = &state.topic_partition.topic;
            match per_topic.iter_mut().find(|(t, _)| t == topic) {
                Some((_, n)) => *n += 1,
                None => per_topic.push((topic.clone(), 1)),
            }
        }
        let mut admission = NewLogAdmission {
            new_logs: per_topic.iter().map(|(_, n)| n).sum(),
            ..NewLogAdmission::default()
        };
        if admission.new_logs == 0 {
            return admission;
        }
        let mut budget = rm.log_manager().new_log_budget();
        for (topic, logs) in per_topic {
            if let Err(err) = budget.admit(&topic, logs) {
                admission.refused_topics.insert(topic, err.to_string());
            }
        }
        admission
    }

    /// Whether `state`'s partition is refused without trying: its topic did not fit, or the
    /// table filled up earlier in the request. Counts the refusal.
    pub(super) fn refuses(&mut self, rm: &ReplicaManager, state: &PartitionLeadership) -> bool {
        let refused = (self.exhausted.is_some()
            || self
                .refused_topics
                .contains_key(&state.topic_partition.topic))
            && needs_new_log(rm, state);
        if refused {
            self.refused += 1;
        }
        refused
    }

    /// Records a failure to host a partition; true when it was the descriptor table (counted
    /// as a refusal, and every later new log of the request is refused without trying).
    pub(super) fn record_failure(&mut self, err: &PartitionError) -> bool {
        let PartitionError::Storage(storage) = err else {
            return false;
        };
        if !storage.is_resource_exhaustion() {
            return false;
        }
        self.refused += 1;
        self.exhausted.get_or_insert_with(|| storage.to_string());
        true
    }

    /// Whether `err` is the descriptor table being full (see [`NewLogAdmission::record_failure`],
    /// which recorded it).
    pub(super) fn is_exhaustion(&self, err: &PartitionError) -> bool {
        matches!(err, PartitionError::Storage(storage) if storage.is_resource_exhaustion())
    }

    /// The request's one line about its refusals, if any.
    pub(super) fn log_summary(&self, controller_id: i32, partitions: usize) {
        if self.refused == 0 {
            return;
        }
        let (soft_limit, hard_limit) = open_file_limits().unwrap_or((0, 0));
        let reason = self
            .exhausted
            .as_deref()
            .or_else(|| self.refused_topics.values().next().map(String::as_str))
            .unwrap_or_default();
        tracing::error!(
            controller = controller_id,
            partitions,
            new_logs = self.new_logs,
            refused = self.refused,
            refused_topics = ?self.refused_topics.keys().collect::<Vec<_>>(),
            soft_limit,
            hard_limit,
            %reason,
            "LeaderAndIsr: refused {} of {} new partition logs: {reason}; the log dirs stay online and the refused replicas are answered KAFKA_STORAGE_ERROR",
            self.refused,
            self.new_logs,
        );
    }
}

/// Whether applying `state` would create a log here: this broker is a replica, hosts no
/// partition for it and has no log of it.
pub(super) fn needs_new_log(rm: &ReplicaManager, state: &PartitionLeadership) -> bool {
    let tp = &state.topic_partition;
    state.replicas.contains(&rm.local_broker_id)
        && rm.get_partition(tp).is_none()
        && rm.log_manager().get_log(tp).is_none()
}
