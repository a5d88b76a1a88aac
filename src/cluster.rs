//! Shared vocabulary of the cluster: the names every layer uses for topics, partitions, brokers,
//! epochs and a partition's leadership ([`LeaderAndIsr`]); client quota entities and keys
//! (`client_quota`); the broker's clock (`time`), the
//! poison-tolerant lock helpers (`sync`) and UTC dates for printing times. Nothing here does
//! I/O.

use std::fmt;

/// The consumer-offsets topic, internal: the group coordinator's log.
pub const GROUP_METADATA_TOPIC_NAME: &str = "__consumer_offsets";
/// The transaction-state topic, internal: the transaction coordinator's log.
pub const TRANSACTION_STATE_TOPIC_NAME: &str = "__transaction_state";

/// Kafka's rack-aware replica selector (KIP-392), the one `replica.selector.class` kcli
/// accepts besides unset (leader only).
pub const RACK_AWARE_REPLICA_SELECTOR: &str =
    "org.apache.kafka.common.replica.RackAwareReplicaSelector";

/// Whether Kafka treats the topic as internal (`Topic.isInternal`): only the coordinators and
/// Kafka's admin client may append to it.
pub fn is_internal_topic(name: &str) -> bool {
    name == GROUP_METADATA_TOPIC_NAME || name == TRANSACTION_STATE_TOPIC_NAME
}

pub mod client_quota;
pub(crate) mod inter_broker_protocol;
pub mod kafka_principal;
pub(crate) mod sync;
pub(crate) mod time;
pub(crate) mod utc;

/// A broker's `broker.id`.
pub type BrokerId = i32;

/// A partition of a topic, `<topic>-<partition>` in directory names and log lines.
///
/// Invariant: `partition >= 0`. Topic names are Kafka's legal names (at most 249 characters of
/// `[a-zA-Z0-9._-]`), checked where names enter the system, not here.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// Kafka's `LeaderRecoveryState`: whether the leader was elected uncleanly and is still
/// recovering its log (`leader_recovery_state` 1 in the partition-state znode and LeaderAndIsr
/// from v6), or is a normal leader (0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LeaderRecoveryState {
    #[default]
    Recovered,
    Recovering,
}

impl LeaderRecoveryState {
    /// The wire and znode value.
    pub fn value(self) -> i8 {
        match self {
            LeaderRecoveryState::Recovered => 0,
            LeaderRecoveryState::Recovering => 1,
        }
    }

    /// The state for a wire or znode value; Kafka treats anything but 1 as recovered.
    pub fn of(value: i8) -> Self {
        if value == 1 {
            LeaderRecoveryState::Recovering
        } else {
            LeaderRecoveryState::Recovered
        }
    }
}

/// Kafka's `LeaderAndIsr`: a partition's leadership as the controller decides it and the
/// partition-state znode records it. Invariant: `leader` is -1 (no leader) or in `isr`.
///
/// The replica assignment is not part of it, as in Kafka: it lives in `/brokers/topics/<t>`,
/// changes only by reassignment, and a hosted partition keeps it beside this state
/// (`replication::Partition::assignment`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderAndIsr {
    pub leader: BrokerId,
    pub leader_epoch: i32,
    pub isr: Vec<BrokerId>,
    /// The partition state znode's version, bumped at every leader or ISR change.
    pub partition_epoch: i32,
    pub leader_recovery_state: LeaderRecoveryState,
}

impl LeaderAndIsr {
    /// Kafka's `LeaderAndIsr.NoLeader`.
    pub const NO_LEADER: BrokerId = -1;

    /// A recovered leadership at the first epochs, as a new partition gets it.
    pub fn new(leader: BrokerId, isr: Vec<BrokerId>) -> Self {
        LeaderAndIsr {
            leader,
            leader_epoch: 0,
            isr,
            partition_epoch: 0,
            leader_recovery_state: LeaderRecoveryState::Recovered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_kafka_names_partition_dirs() {
        assert_eq!(TopicPartition::new("orders", 3).to_string(), "orders-3");
    }

    #[test]
    fn leader_recovery_state_round_trips_its_wire_value() {
        for state in [
            LeaderRecoveryState::Recovered,
            LeaderRecoveryState::Recovering,
        ] {
            assert_eq!(LeaderRecoveryState::of(state.value()), state);
        }
        assert_eq!(LeaderRecoveryState::of(7), LeaderRecoveryState::Recovered);
    }
}
