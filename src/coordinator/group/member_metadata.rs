//! One member of a classic group (Kafka's `MemberMetadata`): its ids, timeouts, the protocols it
//! supports with their metadata, its assignment, and the JoinGroup/SyncGroup answers it waits
//! for. A parked answer is a oneshot sender: sending it completes the client's deferred response.
//!
//! Invariant: `awaiting_join` is set exactly while the member has a JoinGroup parked (the
//! group counts such members as "awaiting join"); `awaiting_sync` likewise for SyncGroup.

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::protocol::errors::ErrorCode;

/// The answer to a JoinGroup (Kafka's `JoinGroupResult`).
#[derive(Debug, Clone)]
pub struct JoinGroupResult {
    /// The members with their metadata for the chosen protocol: only for the leader.
    pub members: Vec<(String, Option<String>, Bytes)>,
    pub member_id: String,
    pub generation_id: i32,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub leader_id: String,
    pub skip_assignment: bool,
    pub error: ErrorCode,
}

impl JoinGroupResult {
    /// An error answer naming `member_id` (Kafka's `JoinGroupResult(memberId, error)`).
    pub fn error(member_id: &str, error: ErrorCode) -> Self {
        JoinGroupResult {
            members: Vec::new(),
            member_id: member_id.to_string(),
            generation_id: -1,
            protocol_type: None,
            protocol_name: None,
            leader_id: String::new(),
            skip_assignment: false,
            error,
        }
    }
}

/// The answer to a SyncGroup (Kafka's `SyncGroupResult`).
#[derive(Debug, Clone)]
pub struct SyncGroupResult {
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub assignment: Bytes,
    pub error: ErrorCode,
}

impl SyncGroupResult {
    pub fn error(error: ErrorCode) -> Self {
        SyncGroupResult {
            protocol_type: None,
            protocol_name: None,
            assignment: Bytes::new(),
            error,
        }
    }
}

/// A group member.
#[derive(Debug)]
pub struct MemberMetadata {
    pub member_id: String,
    /// `group.instance.id` of a static member.
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout_ms: i32,
    pub session_timeout_ms: i32,
    pub protocol_type: String,
    /// (name, metadata) in the member's order of preference.
    pub supported_protocols: Vec<(String, Bytes)>,
    /// The assignment of the current generation (empty until SyncGroup completes).
    pub assignment: Bytes,
    pub awaiting_join: Option<oneshot::Sender<JoinGroupResult>>,
    pub awaiting_sync: Option<oneshot::Sender<SyncGroupResult>>,
    /// Joined in the current rebalance and not yet given a generation.
    pub is_new: bool,
    /// When the member is expired unless it heartbeats (Kafka's `DelayedHeartbeat`); `None`
    /// when no expiration is scheduled.
    pub heartbeat_deadline: Option<Instant>,
}

impl MemberMetadata {
    /// Kafka's constructor, field for field.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        member_id: String,
        group_instance_id: Option<String>,
        client_id: String,
        client_host: String,
        rebalance_timeout_ms: i32,
        session_timeout_ms: i32,
        protocol_type: String,
        supported_protocols: Vec<(String, Bytes)>,
    ) -> Self {
        MemberMetadata {
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            session_timeout_ms,
            protocol_type,
            supported_protocols,
            assignment: Bytes::new(),
            awaiting_join: None,
            awaiting_sync: None,
            is_new: false,
            heartbeat_deadline: None,
        }
    }

    pub fn is_awaiting_join(&self) -> bool {
        self.awaiting_join.is_some()
    }

    pub fn is_awaiting_sync(&self) -> bool {
        self.awaiting_sync.is_some()
    }

    pub fn is_static(&self) -> bool {
        self.group_instance_id.is_some()
    }

    /// The metadata this member gave for `protocol` (empty when it does not support it).
    pub fn metadata(&self, protocol: &str) -> Bytes {
        self.supported_protocols
            .iter()
            .find(|(n, _)| n == protocol)
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }

    /// Whether `protocols` are exactly this member's (names, metadata and order).
    pub fn matches(&self, protocols: &[(String, Bytes)]) -> bool {
        self.supported_protocols == protocols
    }

    /// The member's vote: its most preferred protocol among `candidates`.
    pub fn vote<'a>(&'a self, candidates: &[String]) -> Option<&'a str> {
        self.supported_protocols
            .iter()
            .map(|(n, _)| n.as_str())
            .find(|n| candidates.iter().any(|c| c == n))
    }

    /// Kafka's `hasSatisfiedHeartbeat` when the heartbeat deadline passed without a heartbeat:
    /// new members expire; members waiting in a rebalance do not.
    pub fn survives_missed_heartbeat(&self) -> bool {
        !self.is_new && (self.is_awaiting_join() || self.is_awaiting_sync())
    }

    /// Answers a parked JoinGroup, if any.
    pub fn complete_join(&mut self, result: JoinGroupResult) -> bool {
        match self.awaiting_join.take() {
            Some(tx) => {
                let _ = tx.send(result);
                true
            }
            None => false,
        }
    }

    /// Answers a parked SyncGroup, if any.
    pub fn complete_sync(&mut self, result: SyncGroupResult) -> bool {
        match self.awaiting_sync.take() {
            Some(tx) => {
                let _ = tx.send(result);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(protocols: &[&str]) -> MemberMetadata {
        MemberMetadata::new(
            "m".into(),
            None,
            "c".into(),
            "/h".into(),
            1000,
            1000,
            "consumer".into(),
            protocols
                .iter()
                .map(|p| (p.to_string(), Bytes::from(p.to_string())))
                .collect(),
        )
    }

    #[test]
    fn votes_for_its_most_preferred_candidate() {
        let m = member(&["cooperative-sticky", "range"]);
        assert_eq!(m.vote(&["range".into()]), Some("range"));
        assert_eq!(
            m.vote(&["range".into(), "cooperative-sticky".into()]),
            Some("cooperative-sticky")
        );
        assert_eq!(m.vote(&["roundrobin".into()]), None);
        assert_eq!(m.metadata("range"), Bytes::from("range"));
        assert!(m.metadata("x").is_empty());
    }

    #[test]
    fn parked_answers_are_delivered_once() {
        let mut m = member(&["range"]);
        let (tx, mut rx) = oneshot::channel();
        m.awaiting_join = Some(tx);
        assert!(m.is_awaiting_join());
        assert!(m.survives_missed_heartbeat());
        assert!(m.complete_join(JoinGroupResult::error("m", ErrorCode::UnknownMemberId)));
        assert!(!m.complete_join(JoinGroupResult::error("m", ErrorCode::None)));
        assert_eq!(rx.try_recv().unwrap().error, ErrorCode::UnknownMemberId);
        m.is_new = true;
        assert!(!m.survives_missed_heartbeat());
    }
}
