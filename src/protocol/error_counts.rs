//! Kafka's `AbstractResponse.errorCounts()`: the error codes a response counts in the request
//! metrics' `ErrorsPerSec`, as Kafka 3.9 counts them for each response type.
//!
//! Most responses count every `ErrorCode` field they hold, at any depth and whatever the version
//! (the generated [`ResponseKind::for_each_error_code`]). The exceptions are Kafka's own:
//!
//! - `AddPartitionsToTxn` counts its top-level error only at v4+ (when `ResultsByTopicV3AndBelow`
//!   is empty), and every partition's `PartitionErrorCode`.
//! - `AddRaftVoter`, `RemoveRaftVoter`, `UpdateRaftVoter` and `UnregisterBroker` count their
//!   error only when there is one (`NONE` is not counted); `FetchSnapshot` likewise for its
//!   top-level error.
//! - `AssignReplicasToDirs` counts only its top-level error; `DeleteAcls` only each filter
//!   result's (not each matching ACL's); `DescribeUserScramCredentials` only each user's.
//! - `FindCoordinator` counts each coordinator's error (v4+), or the top-level one when there are
//!   none.
//! - `LeaderAndIsr` and `StopReplica`: a top-level error counts once for each partition and once
//!   more; without one, each partition's error and `NONE` once.
//! - `OffsetFetch` at v8+ (groups) counts each group's error and its partitions', not the
//!   top-level error.
//!
//! A response with nothing to count counts nothing, as Kafka's empty map. Equal codes in a row
//! are reported as one run, so a Produce or Fetch response costs one report per run of equal
//! codes and no allocation.

use super::errors::ErrorCode;
use super::messages::ResponseKind;

/// Calls `count(code, n)` for the errors `body` counts as Kafka's `errorCounts()` does (a code
/// may be reported more than once; the counts add up).
pub fn error_counts(body: &ResponseKind, mut count: impl FnMut(i16, u64)) {
    let mut runs = Runs::new(&mut count);
    match body {
        ResponseKind::AddPartitionsToTxn(m) => {
            if m.results_by_topic_v3_and_below.is_empty() {
                runs.push(m.error_code);
            }
            let by_transaction = m
                .results_by_transaction
                .iter()
                .flat_map(|t| &t.topic_results);
            for topic in m.results_by_topic_v3_and_below.iter().chain(by_transaction) {
                runs.extend(
                    topic
                        .results_by_partition
                        .iter()
                        .map(|p| p.partition_error_code),
                );
            }
        }
        ResponseKind::AddRaftVoter(m) => runs.push_error(m.error_code),
        ResponseKind::RemoveRaftVoter(m) => runs.push_error(m.error_code),
        ResponseKind::UpdateRaftVoter(m) => runs.push_error(m.error_code),
        ResponseKind::UnregisterBroker(m) => runs.push_error(m.error_code),
        ResponseKind::AssignReplicasToDirs(m) => runs.push(m.error_code),
        ResponseKind::DeleteAcls(m) => runs.extend(m.filter_results.iter().map(|r| r.error_code)),
        ResponseKind::DescribeUserScramCredentials(m) => {
            runs.extend(m.results.iter().map(|r| r.error_code));
        }
        ResponseKind::FetchSnapshot(m) => {
            runs.push_error(m.error_code);
            runs.extend(
                m.topics
                    .iter()
                    .flat_map(|t| &t.partitions)
                    .map(|p| p.error_code),
            );
        }
        ResponseKind::FindCoordinator(m) => {
            if m.coordinators.is_empty() {
                runs.push(m.error_code);
            } else {
                runs.extend(m.coordinators.iter().map(|c| c.error_code));
            }
        }
        ResponseKind::LeaderAndIsr(m) => {
            let partitions = m
                .partition_errors
                .iter()
                .chain(m.topics.iter().flat_map(|t| &t.partition_errors))
                .map(|p| p.error_code);
            runs.top_level_for_all(m.error_code, partitions);
        }
        ResponseKind::StopReplica(m) => {
            runs.top_level_for_all(
                m.error_code,
                m.partition_errors.iter().map(|p| p.error_code),
            );
        }
        ResponseKind::OffsetFetch(m) if !m.groups.is_empty() => {
            for group in &m.groups {
                runs.push(group.error_code);
                runs.extend(
                    group
                        .topics
                        .iter()
                        .flat_map(|t| &t.partitions)
                        .map(|p| p.error_code),
                );
            }
        }
        other => other.for_each_error_code(|code| runs.push(code)),
    }
    runs.finish();
}

/// Calls `count(code, n)` for each run of `n` equal `codes`.
pub fn count_runs(codes: impl Iterator<Item = i16>, mut count: impl FnMut(i16, u64)) {
    let mut runs = Runs::new(&mut count);
    runs.extend(codes);
    runs.finish();
}

/// Runs of equal codes, reported when the code changes.
struct Runs<'a, F: FnMut(i16, u64)> {
    count: &'a mut F,
    run: Option<(i16, u64)>,
}

impl<'a, F: FnMut(i16, u64)> Runs<'a, F> {
    fn new(count: &'a mut F) -> Self {
        Runs { count, run: None }
    }

    fn push(&mut self, code: i16) {
        self.run = match self.run {
            Some((last, n)) if last == code => Some((last, n + 1)),
            Some((last, n)) => {
                (self.count)(last, n);
                Some((code, 1))
            }
            None => Some((code, 1)),
        };
    }

    fn extend(&mut self, codes: impl Iterator<Item = i16>) {
        for code in codes {
            self.push(code);
        }
    }

    /// Counts `code` only when it is an error.
    fn push_error(&mut self, code: i16) {
        if code != ErrorCode::None.code() {
            self.push(code);
        }
    }

    /// Kafka's LeaderAndIsr and StopReplica: a top-level error stands for every partition, and
    /// counts once for each and once more; without one, the partitions' errors and `NONE` once.
    fn top_level_for_all(&mut self, top: i16, partitions: impl Iterator<Item = i16>) {
        if top == ErrorCode::None.code() {
            self.extend(partitions);
            self.push(top);
        } else {
            self.finish();
            (self.count)(top, partitions.count() as u64 + 1);
        }
    }

    fn finish(&mut self) {
        if let Some((code, n)) = self.run.take() {
            (self.count)(code, n);
        }
    }
}

#[cfg(test)]
mod tests;
