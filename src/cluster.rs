//! Shared vocabulary of the cluster: the names every layer uses for topics, partitions, brokers
//! and epochs, and UTC dates for printing times. Nothing here does I/O.

use std::fmt;

pub mod utc;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_kafka_names_partition_dirs() {
        assert_eq!(TopicPartition::new("orders", 3).to_string(), "orders-3");
    }
}
