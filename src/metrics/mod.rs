//! Kafka's metrics as its MBeans name them, recorded without locks: the vocabulary every layer
//! records in ([`MBeanName`], [`Reading`]), the primitives ([`Meter`], [`Histogram`], gauges
//! read when collected), and the [`MetricsRegistry`] each layer adds its [`MetricsSource`]s to;
//! and Kafka's own windowed statistics (`sampled_stat`) and token bucket (`token_bucket`),
//! which quotas measure rates and take throttles from.
//!
//! A layer owns the figures it knows (the network layer its request times, `replication` its
//! ISR gauges, the controller its own) in a small `metrics` module of its own, and registers a
//! source that reports them as Kafka's MBeans would: `kafka.server:type=BrokerTopicMetrics,
//! name=MessagesInPerSec,topic=t` with a Yammer Meter's attributes. No layer here knows an
//! exposition format or HTTP: `server` renders what the registry collects, as the Prometheus
//! JMX exporter renders Kafka's MBeans.
//!
//! Depends on nothing in the crate.

mod histogram;
mod meter;
mod registry;
pub(crate) mod sampled_stat;
pub(crate) mod token_bucket;

pub use histogram::{Histogram, HistogramSnapshot};
pub(crate) use meter::TICK;
pub use meter::{Meter, MeterSnapshot};
pub use registry::{MetricsRegistry, MetricsSource};

use std::fmt;

/// An MBean's object name as Kafka registers it: `domain:key=value,...`, with its key
/// properties in Kafka's order, which the JMX exporter keeps when it matches its rules
/// (`kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec, topic=t>`): `type`, then
/// `name` for a Yammer metric, then the tags in the order Kafka builds them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MBeanName {
    /// `kafka.server`, `kafka.network`, `kafka.controller`, `kafka.log`, `kafka.cluster`, ...
    pub domain: &'static str,
    /// The key properties, in order. Values are as Kafka writes them (a topic name, a listener
    /// name, a request name), never quoted.
    pub properties: Vec<(&'static str, String)>,
}

impl MBeanName {
    /// A Yammer metric's name: `domain:type=<type>,name=<name>` and then `tags`.
    pub fn yammer(
        domain: &'static str,
        type_: &'static str,
        name: &'static str,
        tags: &[(&'static str, &str)],
    ) -> Self {
        let mut properties = Vec::with_capacity(2 + tags.len());
        properties.push(("type", type_.to_string()));
        properties.push(("name", name.to_string()));
        properties.extend(tags.iter().map(|(k, v)| (*k, (*v).to_string())));
        MBeanName { domain, properties }
    }

    /// A Kafka (`org.apache.kafka.common.metrics`) group's MBean: `domain:type=<group>` and
    /// then `tags` (`kafka.server:type=socket-server-metrics,listener=PLAINTEXT,
    /// networkProcessor=0`); each metric of the group is an attribute of it.
    pub fn kafka_group(
        domain: &'static str,
        group: &'static str,
        tags: &[(&'static str, &str)],
    ) -> Self {
        let mut properties = Vec::with_capacity(1 + tags.len());
        properties.push(("type", group.to_string()));
        properties.extend(tags.iter().map(|(k, v)| (*k, (*v).to_string())));
        MBeanName { domain, properties }
    }
}

impl fmt::Display for MBeanName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.domain)?;
        for (i, (k, v)) in self.properties.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// What one MBean reads when collected, by the kind of metric Kafka registers there. The
/// attributes each kind has are Yammer's (a Meter's `Count`, `MeanRate`, `OneMinuteRate`...);
/// [`Reading::attributes`] lists them in the order JMX shows them.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// A Yammer Gauge: `Value`.
    Gauge(f64),
    /// A Yammer Meter.
    Meter(MeterSnapshot),
    /// A Yammer Histogram.
    Histogram(HistogramSnapshot),
    /// A Yammer Timer: a histogram of durations in milliseconds and a meter of their rate.
    Timer(HistogramSnapshot, MeterSnapshot),
    /// Kafka (`org.apache.kafka.common.metrics`) metrics of one group: each is an attribute
    /// named after it (`connection-count`).
    KafkaMetrics(Vec<(&'static str, f64)>),
    /// Attributes named at run time, each with its JMX description where one is known: an
    /// MBean read from elsewhere (the JMX exporter rules' golden test reads a real Kafka
    /// broker's), or one whose attribute names are not known when the crate is built.
    Attributes(Vec<Attribute>),
}

/// One attribute of a [`Reading::Attributes`].
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// The attribute's name, as JMX shows it.
    pub name: String,
    pub value: f64,
    /// `MBeanAttributeInfo.getDescription()`, which the JMX exporter puts in its HELP text.
    pub description: Option<String>,
}

impl Reading {
    /// The numeric attributes of the MBean, named as JMX names them, in Yammer's order.
    pub fn attributes(&self) -> Vec<(&str, f64)> {
        match self {
            Reading::Gauge(value) => vec![("Value", *value)],
            Reading::Meter(meter) => meter.attributes().to_vec(),
            Reading::Histogram(histogram) => histogram.attributes().to_vec(),
            Reading::Timer(histogram, meter) => {
                let mut out = histogram.attributes().to_vec();
                out.extend(meter.attributes().iter().skip(1));
                out
            }
            Reading::KafkaMetrics(metrics) => metrics.clone(),
            Reading::Attributes(attributes) => attributes
                .iter()
                .map(|a| (a.name.as_str(), a.value))
                .collect(),
        }
    }
}

/// One MBean and its reading.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSample {
    pub mbean: MBeanName,
    pub reading: Reading,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_kafkas_property_order() {
        let name = MBeanName::yammer(
            "kafka.server",
            "BrokerTopicMetrics",
            "MessagesInPerSec",
            &[("topic", "t")],
        );
        assert_eq!(
            name.to_string(),
            "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t"
        );
        let group = MBeanName::kafka_group(
            "kafka.server",
            "socket-server-metrics",
            &[("listener", "PLAINTEXT"), ("networkProcessor", "0")],
        );
        assert_eq!(
            group.to_string(),
            "kafka.server:type=socket-server-metrics,listener=PLAINTEXT,networkProcessor=0"
        );
    }
}
