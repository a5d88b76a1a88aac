//! Follower fetching (KIP-392): which replica a consumer should fetch a partition from (Kafka's
//! `ReplicaSelector` and `ReplicaManager.findPreferredReadReplica`).
//!
//! `replica.selector.class` names the selector. Unset (Kafka's default, `null`) there is none
//! and consumers always fetch from the leader; [`RACK_AWARE_REPLICA_SELECTOR`] picks, for a
//! consumer that sent a non-empty `rack_id` (Fetch v11+), the most caught-up in-sync replica in
//! the consumer's rack, or the leader when the leader is in that rack or no candidate is.
//!
//! Candidates are what Kafka offers its selector: the leader, and each follower that is in the
//! ISR, whose log end is at or past the fetch offset and whose log start is at or below it.
//! A replica whose broker is not alive, or has no endpoint on the listener the consumer came in
//! by, has no endpoint (Kafka's `Node.noNode()`): it is never chosen, and its rack matches none.
//! The leader's choice is never sent: a consumer only learns of a preferred read replica that
//! differs from the leader.

use crate::cluster::BrokerId;
pub use crate::cluster::RACK_AWARE_REPLICA_SELECTOR;

/// The selectors kcli has (Kafka's `ReplicaSelector` implementations it ships).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplicaSelector {
    /// No `replica.selector.class`: consumers fetch from the leader.
    #[default]
    Leader,
    /// `org.apache.kafka.common.replica.RackAwareReplicaSelector`.
    RackAware,
}

impl ReplicaSelector {
    /// The selector `replica.selector.class` names: empty (unset) is the leader-only default;
    /// `None` for a class kcli does not have.
    pub fn from_class_name(class: &str) -> Option<Self> {
        match class.trim() {
            "" => Some(ReplicaSelector::Leader),
            RACK_AWARE_REPLICA_SELECTOR => Some(ReplicaSelector::RackAware),
            _ => None,
        }
    }

    /// Kafka's `select`: the replica `client_rack`'s consumer should read from, as an index
    /// into `replicas`; `None` for the leader (or when none has an endpoint).
    ///
    /// `replicas` are the candidates other than the leader; `leader` is the leader's own view.
    fn select(
        self,
        client_rack: &str,
        leader: &ReplicaView,
        replicas: &[ReplicaView],
    ) -> Option<BrokerId> {
        match self {
            ReplicaSelector::Leader => None,
            ReplicaSelector::RackAware => {
                if client_rack.is_empty() {
                    return None;
                }
                let in_rack = |r: &&ReplicaView| {
                    r.endpoint
                        .as_ref()
                        .and_then(|e| e.rack.as_deref())
                        .is_some_and(|rack| rack == client_rack)
                };
                if in_rack(&leader) {
                    return None;
                }
                // Kafka's `ReplicaView.comparator()`: the largest log end, then the shortest
                // time since caught up, then the largest broker id.
                replicas
                    .iter()
                    .filter(in_rack)
                    .max_by(|a, b| {
                        a.log_end_offset
                            .cmp(&b.log_end_offset)
                            .then(
                                b.time_since_last_caught_up_ms
                                    .cmp(&a.time_since_last_caught_up_ms),
                            )
                            .then(a.broker_id.cmp(&b.broker_id))
                    })
                    .map(|r| r.broker_id)
            }
        }
    }
}

/// A replica's endpoint as the consumer's listener has it: present only for an alive broker
/// with that listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaEndpoint {
    /// `broker.rack` of the replica's broker.
    pub rack: Option<String>,
}

/// Where replicas can be reached (the metadata cache, in a broker): Kafka's
/// `getPartitionReplicaEndpoints`, one broker at a time.
pub trait ReplicaEndpoints: Send + Sync + std::fmt::Debug {
    /// `broker_id`'s endpoint on `listener_name`; `None` when the broker is not alive or has
    /// no such listener.
    fn replica_endpoint(&self, broker_id: BrokerId, listener_name: &str)
    -> Option<ReplicaEndpoint>;
}

/// What a consumer told the leader about itself (Kafka's `ClientMetadata`, the part a selector
/// uses): set for Fetch v11+, where `rack_id` exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientMetadata {
    /// The consumer's `client.rack`; empty when it set none.
    pub rack_id: String,
    /// The listener the request came in by: replicas are offered at their endpoint on it.
    pub listener_name: String,
}

/// One candidate (Kafka's `ReplicaView`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReplicaView {
    pub broker_id: BrokerId,
    pub endpoint: Option<ReplicaEndpoint>,
    pub log_end_offset: i64,
    /// Since the replica last caught up with the leader; 0 for the leader.
    pub time_since_last_caught_up_ms: i64,
}

/// Kafka's `findPreferredReadReplica` once the partition's candidates are known: the chosen
/// replica when it is not the leader and has an endpoint.
pub(crate) fn preferred_read_replica(
    selector: ReplicaSelector,
    client: &ClientMetadata,
    leader: &ReplicaView,
    followers: &[ReplicaView],
) -> Option<BrokerId> {
    let chosen = selector.select(&client.rack_id, leader, followers)?;
    followers
        .iter()
        .find(|r| r.broker_id == chosen && r.endpoint.is_some())
        .map(|r| r.broker_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(broker_id: BrokerId, rack: Option<&str>, leo: i64, since: i64) -> ReplicaView {
        ReplicaView {
            broker_id,
            endpoint: Some(ReplicaEndpoint {
                rack: rack.map(str::to_string),
            }),
            log_end_offset: leo,
            time_since_last_caught_up_ms: since,
        }
    }

    fn client(rack: &str) -> ClientMetadata {
        ClientMetadata {
            rack_id: rack.to_string(),
            listener_name: "PLAINTEXT".to_string(),
        }
    }

    #[test]
    fn class_names() {
        assert_eq!(
            ReplicaSelector::from_class_name(""),
            Some(ReplicaSelector::Leader)
        );
        assert_eq!(
            ReplicaSelector::from_class_name(RACK_AWARE_REPLICA_SELECTOR),
            Some(ReplicaSelector::RackAware)
        );
        assert_eq!(ReplicaSelector::from_class_name("com.example.Other"), None);
    }

    #[test]
    fn rack_aware_picks_a_follower_in_the_clients_rack() {
        let leader = view(1, Some("a"), 10, 0);
        let followers = [view(2, Some("b"), 10, 5), view(3, Some("c"), 10, 5)];
        let rack_aware = ReplicaSelector::RackAware;
        assert_eq!(
            preferred_read_replica(rack_aware, &client("b"), &leader, &followers),
            Some(2)
        );
        assert_eq!(
            preferred_read_replica(rack_aware, &client("c"), &leader, &followers),
            Some(3)
        );
        // The leader's own rack, a rack without replicas, no rack: the leader (not sent).
        for rack in ["a", "z", ""] {
            assert_eq!(
                preferred_read_replica(rack_aware, &client(rack), &leader, &followers),
                None
            );
        }
        assert_eq!(
            preferred_read_replica(ReplicaSelector::Leader, &client("b"), &leader, &followers),
            None
        );
    }

    #[test]
    fn rack_aware_prefers_the_most_caught_up_then_the_higher_id() {
        let leader = view(1, Some("a"), 10, 0);
        let followers = [
            view(2, Some("b"), 9, 0),
            view(3, Some("b"), 10, 50),
            view(4, Some("b"), 10, 20),
            view(5, Some("b"), 10, 20),
        ];
        assert_eq!(
            preferred_read_replica(
                ReplicaSelector::RackAware,
                &client("b"),
                &leader,
                &followers
            ),
            Some(5)
        );
    }

    #[test]
    fn a_replica_without_an_endpoint_is_never_chosen() {
        let leader = view(1, Some("a"), 10, 0);
        let mut gone = view(2, Some("b"), 10, 0);
        gone.endpoint = None;
        assert_eq!(
            preferred_read_replica(ReplicaSelector::RackAware, &client("b"), &leader, &[gone]),
            None
        );
    }
}
