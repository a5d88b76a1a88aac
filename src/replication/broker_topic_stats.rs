//! Kafka's `BrokerTopicStats`: the `kafka.server:type=BrokerTopicMetrics` meters, per topic
//! (`topic=t`) and for all topics together (no tag): messages and bytes in, bytes out, bytes
//! rejected, produce and fetch requests and their failures, the records converted between
//! message formats for old clients (up on produce v0-2, down on fetch v0-3), and, for all
//! topics only, the bytes replicated in and out.
//!
//! Recording is lock-free: each hosted [`Partition`](super::partition::Partition) holds its
//! topic's [`BrokerTopicMetrics`] from creation, and marking is a relaxed atomic add. The map
//! of topics is locked only to create a topic's meters (the first partition of it hosted here)
//! and to drop them (its last partition deleted), and when the metrics are collected.
//!
//! As in Kafka, the all-topics meters exist from the start, a topic's once it is hosted, and
//! each of a topic's meters shows only once it has counted something (Kafka creates them at
//! their first mark).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::cluster::sync::{read, write};
use crate::metrics::{MBeanName, Meter, MetricSample, MetricsSource, Reading};

/// One topic's meters (or all topics').
#[derive(Debug, Default)]
pub(crate) struct BrokerTopicMetrics {
    pub messages_in: Meter,
    pub bytes_in: Meter,
    pub bytes_out: Meter,
    pub bytes_rejected: Meter,
    pub failed_produce_requests: Meter,
    pub failed_fetch_requests: Meter,
    pub total_produce_requests: Meter,
    pub total_fetch_requests: Meter,
    /// Records down-converted for a fetch below v4 (Kafka counts the records converted).
    pub fetch_message_conversions: Meter,
    /// Records up-converted from a produce below v3.
    pub produce_message_conversions: Meter,
}

impl BrokerTopicMetrics {
    /// The meters with their MBean names, in Kafka's order.
    fn named(&self) -> [(&'static str, &Meter); 10] {
        [
            ("MessagesInPerSec", &self.messages_in),
            ("BytesInPerSec", &self.bytes_in),
            ("BytesOutPerSec", &self.bytes_out),
            ("BytesRejectedPerSec", &self.bytes_rejected),
            ("FailedProduceRequestsPerSec", &self.failed_produce_requests),
            ("FailedFetchRequestsPerSec", &self.failed_fetch_requests),
            ("TotalProduceRequestsPerSec", &self.total_produce_requests),
            ("TotalFetchRequestsPerSec", &self.total_fetch_requests),
            (
                "FetchMessageConversionsPerSec",
                &self.fetch_message_conversions,
            ),
            (
                "ProduceMessageConversionsPerSec",
                &self.produce_message_conversions,
            ),
        ]
    }
}

/// The broker's stats; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct BrokerTopicStats {
    all_topics: BrokerTopicMetrics,
    replication_bytes_in: Meter,
    replication_bytes_out: Meter,
    topics: RwLock<BTreeMap<String, Arc<BrokerTopicMetrics>>>,
}

impl BrokerTopicStats {
    /// The meters of every topic together.
    pub(crate) fn all_topics(&self) -> &BrokerTopicMetrics {
        &self.all_topics
    }

    /// Bytes a follower here appended from its leaders.
    pub(crate) fn replication_bytes_in(&self) -> &Meter {
        &self.replication_bytes_in
    }

    /// Bytes this leader sent its followers.
    pub(crate) fn replication_bytes_out(&self) -> &Meter {
        &self.replication_bytes_out
    }

    /// `topic`'s meters, made on first use.
    pub(crate) fn topic(&self, topic: &str) -> Arc<BrokerTopicMetrics> {
        if let Some(found) = read(&self.topics).get(topic) {
            return Arc::clone(found);
        }
        Arc::clone(write(&self.topics).entry(topic.to_string()).or_default())
    }

    /// Forgets `topic`'s meters (its last partition here was deleted).
    pub(crate) fn remove_topic(&self, topic: &str) {
        write(&self.topics).remove(topic);
    }
}

fn meter(name: &'static str, tags: &[(&'static str, &str)], meter: &Meter) -> MetricSample {
    MetricSample {
        mbean: MBeanName::yammer("kafka.server", "BrokerTopicMetrics", name, tags),
        reading: Reading::Meter(meter.snapshot()),
    }
}

impl MetricsSource for BrokerTopicStats {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        for (name, m) in self.all_topics.named() {
            out.push(meter(name, &[], m));
        }
        out.push(meter(
            "ReplicationBytesInPerSec",
            &[],
            &self.replication_bytes_in,
        ));
        out.push(meter(
            "ReplicationBytesOutPerSec",
            &[],
            &self.replication_bytes_out,
        ));
        for (topic, metrics) in read(&self.topics).iter() {
            for (name, m) in metrics.named() {
                if m.count() > 0 {
                    out.push(meter(name, &[("topic", topic)], m));
                }
            }
        }
    }

    fn tick(&self) {
        for (_, m) in self.all_topics.named() {
            m.tick();
        }
        self.replication_bytes_in.tick();
        self.replication_bytes_out.tick();
        for metrics in read(&self.topics).values() {
            for (_, m) in metrics.named() {
                m.tick();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_topics_always_and_a_topics_meters_once_they_counted() {
        let stats = BrokerTopicStats::default();
        let t = stats.topic("t");
        assert!(
            Arc::ptr_eq(&t, &stats.topic("t")),
            "one set of meters per topic"
        );
        t.messages_in.mark(3);
        stats.all_topics().messages_in.mark(3);
        let mut samples = Vec::new();
        stats.collect(&mut samples);
        let names: Vec<String> = samples.iter().map(|s| s.mbean.to_string()).collect();
        assert_eq!(names.len(), 13, "{names:#?}");
        assert!(names.contains(
            &"kafka.server:type=BrokerTopicMetrics,name=FailedFetchRequestsPerSec".to_string()
        ));
        assert_eq!(
            names.last().map(String::as_str),
            Some("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t")
        );
        match &samples[12].reading {
            Reading::Meter(m) => assert_eq!(m.count, 3),
            other => panic!("{other:?}"),
        }
        stats.remove_topic("t");
        let mut samples = Vec::new();
        stats.collect(&mut samples);
        assert_eq!(samples.len(), 12);
    }
}
