//! A fetcher's side of a fetch session (KIP-227; Kafka's `FetchSessionHandler`): what each
//! Fetch to one leader carries, so that after the first (full) fetch only the partitions whose
//! request changed are sent, and the leader answers only partitions with news.
//!
//! The handler's next metadata is (session id, epoch). It starts at (0, 0): a full fetch of
//! every partition, asking for a session. A response with a nonzero session id makes the next
//! fetch incremental (epoch 1, then 2, ...): it carries the partitions added since the last
//! fetch or whose request changed (offset, log start, leader epochs, topic id), and forgets
//! those no longer fetched. A session error goes back to a full fetch: FETCH_SESSION_ID_NOT_FOUND
//! to (0, 0), any other error to (id, 0), which closes the old session and opens a new one; so
//! does a failed request, whose answer the handler never saw. A full fetch answered with
//! session id 0 (the leader's cache had no room) stays full.
//!
//! One handler per leader and fetcher, used by one request at a time.

use std::collections::HashMap;

use crate::cluster::TopicPartition;
use crate::protocol::errors::ErrorCode;

use super::leader_end_point::FetchPartition;

/// What one Fetch carries (Kafka's `FetchRequestData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FetchRequestData {
    pub(crate) session_id: i32,
    pub(crate) epoch: i32,
    /// The partitions to write into the request: all of them for a full fetch, the added and
    /// changed ones for an incremental one.
    pub(crate) to_send: Vec<FetchPartition>,
    /// The partitions the session drops (`forgotten_topics_data`); empty for a full fetch.
    pub(crate) to_forget: Vec<FetchPartition>,
}

impl FetchRequestData {
    /// Whether this is a full fetch (epoch 0 or -1).
    pub(crate) fn is_full(&self) -> bool {
        self.epoch <= 0
    }
}

/// Kafka's `FetchSessionHandler`; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct FetchSessionHandler {
    session_id: i32,
    epoch: i32,
    /// The partitions as the session holds them: as last sent.
    session: HashMap<TopicPartition, FetchPartition>,
}

/// Kafka's `FetchMetadata.nextEpoch`.
fn next_epoch(epoch: i32) -> i32 {
    match epoch {
        e if e < 0 => -1,
        i32::MAX => 1,
        e => e + 1,
    }
}

impl FetchSessionHandler {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The request for fetching `next` (every partition the fetcher wants now), and the
    /// session's partitions as they will be once the leader has it (Kafka's `build`).
    pub(crate) fn build(&mut self, next: &[FetchPartition]) -> FetchRequestData {
        if self.epoch == 0 {
            self.session = next
                .iter()
                .map(|p| (p.topic_partition.clone(), p.clone()))
                .collect();
            return FetchRequestData {
                session_id: self.session_id,
                epoch: 0,
                to_send: next.to_vec(),
                to_forget: Vec::new(),
            };
        }
        let mut to_send = Vec::new();
        let mut to_forget = Vec::new();
        let mut remaining = std::mem::take(&mut self.session);
        for p in next {
            match remaining.remove(&p.topic_partition) {
                Some(old) if old == *p => {}
                Some(old) => {
                    // A recreated topic is another partition to the leader: forget the old.
                    if old.topic_id != p.topic_id {
                        to_forget.push(old);
                    }
                    to_send.push(p.clone());
                }
                None => to_send.push(p.clone()),
            }
            self.session.insert(p.topic_partition.clone(), p.clone());
        }
        to_forget.extend(remaining.into_values());
        FetchRequestData {
            session_id: self.session_id,
            epoch: self.epoch,
            to_send,
            to_forget,
        }
    }

    /// Takes the response's top-level error and session id (Kafka's `handleResponse`); false
    /// when the response was a session error, whose partitions (none) are not to be used.
    pub(crate) fn handle_response(&mut self, error_code: i16, session_id: i32) -> bool {
        if error_code != ErrorCode::None.code() {
            if error_code == ErrorCode::FetchSessionIdNotFound.code() {
                self.session_id = 0;
            }
            self.epoch = 0;
            return false;
        }
        if session_id == 0 {
            self.session_id = 0;
            self.epoch = 0;
        } else if self.epoch == 0 {
            self.session_id = session_id;
            self.epoch = 1;
        } else {
            self.epoch = next_epoch(self.epoch);
        }
        true
    }

    /// The request failed without an answer (Kafka's `handleError`): the next fetch is full,
    /// closing the session, which may have moved on, and opening a new one.
    pub(crate) fn handle_error(&mut self) {
        self.epoch = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn p(partition: i32, offset: i64) -> FetchPartition {
        FetchPartition {
            topic_partition: TopicPartition::new("t".to_string(), partition),
            topic_id: Some(Uuid::from_u128(1)),
            fetch_offset: offset,
            log_start_offset: 0,
            current_leader_epoch: 0,
            last_fetched_epoch: None,
        }
    }

    fn partitions(r: &[FetchPartition]) -> Vec<i32> {
        r.iter().map(|p| p.topic_partition.partition).collect()
    }

    #[test]
    fn after_a_full_fetch_only_changes_are_sent() {
        let mut h = FetchSessionHandler::new();
        let first = h.build(&[p(0, 0), p(1, 0), p(2, 0)]);
        assert_eq!((first.session_id, first.epoch), (0, 0));
        assert_eq!(partitions(&first.to_send), vec![0, 1, 2]);
        assert!(h.handle_response(0, 42));

        let second = h.build(&[p(0, 0), p(1, 5), p(2, 0)]);
        assert_eq!((second.session_id, second.epoch), (42, 1));
        assert_eq!(partitions(&second.to_send), vec![1]);
        assert!(second.to_forget.is_empty());
        assert!(h.handle_response(0, 42));

        // Partition 2 is no longer fetched, 3 is new; nothing else changed.
        let third = h.build(&[p(0, 0), p(1, 5), p(3, 0)]);
        assert_eq!(third.epoch, 2);
        assert_eq!(partitions(&third.to_send), vec![3]);
        assert_eq!(partitions(&third.to_forget), vec![2]);
    }

    #[test]
    fn session_errors_and_failures_go_back_to_full_fetches() {
        let mut h = FetchSessionHandler::new();
        h.build(&[p(0, 0)]);
        h.handle_response(0, 42);
        h.build(&[p(0, 0)]);
        assert!(!h.handle_response(ErrorCode::InvalidFetchSessionEpoch.code(), 0));
        let full = h.build(&[p(0, 1)]);
        assert_eq!(
            (full.session_id, full.epoch),
            (42, 0),
            "closes 42, asks for a new one"
        );
        assert_eq!(partitions(&full.to_send), vec![0]);
        h.handle_response(0, 43);
        assert!(!h.handle_response(ErrorCode::FetchSessionIdNotFound.code(), 0));
        let full = h.build(&[p(0, 1)]);
        assert_eq!((full.session_id, full.epoch), (0, 0));
        h.handle_response(0, 44);
        h.build(&[p(0, 1)]);
        h.handle_error();
        assert_eq!(h.build(&[p(0, 1)]).epoch, 0);
    }

    #[test]
    fn no_session_from_the_leader_keeps_fetches_full() {
        let mut h = FetchSessionHandler::new();
        h.build(&[p(0, 0)]);
        assert!(h.handle_response(0, 0));
        let next = h.build(&[p(0, 0)]);
        assert!(next.is_full());
        assert_eq!(partitions(&next.to_send), vec![0]);
    }

    #[test]
    fn a_recreated_topic_is_forgotten_and_sent_again() {
        let mut h = FetchSessionHandler::new();
        h.build(&[p(0, 0)]);
        h.handle_response(0, 7);
        let mut recreated = p(0, 0);
        recreated.topic_id = Some(Uuid::from_u128(2));
        let next = h.build(&[recreated]);
        assert_eq!(next.to_forget[0].topic_id, Some(Uuid::from_u128(1)));
        assert_eq!(next.to_send[0].topic_id, Some(Uuid::from_u128(2)));
    }
}
