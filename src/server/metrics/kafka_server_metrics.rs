//! The broker's own `kafka.server:type=KafkaServer` gauges: BrokerState (3 while the broker
//! runs, Kafka's `BrokerState.RUNNING`; the endpoint starts with the broker and stops with it,
//! so no other state is ever scraped), and Kafka's Linux disk gauges, this process's bytes
//! read from and written to storage (`read_bytes` and `write_bytes` of `/proc/self/io`, which
//! Kafka's `LinuxIoMetricsCollector` reads). Where `/proc/self/io` cannot be read the disk
//! gauges are left out, as Kafka leaves them out.

use std::fs;

use crate::metrics::{MBeanName, MetricSample, MetricsSource, Reading};

/// Kafka's `BrokerState.RUNNING`.
const RUNNING: f64 = 3.0;

/// The source; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct KafkaServerMetrics;

/// `read_bytes` and `write_bytes` of `/proc/self/io`.
fn disk_bytes() -> Option<(f64, f64)> {
    let io = fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    Some((field("read_bytes:")?, field("write_bytes:")?))
}

fn gauge(name: &'static str, value: f64) -> MetricSample {
    MetricSample {
        mbean: MBeanName::yammer("kafka.server", "KafkaServer", name, &[]),
        reading: Reading::Gauge(value),
    }
}

impl MetricsSource for KafkaServerMetrics {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        out.push(gauge("BrokerState", RUNNING));
        if let Some((read, written)) = disk_bytes() {
            out.push(gauge("linux-disk-read-bytes", read));
            out.push(gauge("linux-disk-write-bytes", written));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_and_the_disk_bytes_of_this_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        fs::File::open(&path).unwrap().sync_all().unwrap();
        let mut samples = Vec::new();
        KafkaServerMetrics.collect(&mut samples);
        let names: Vec<String> = samples.iter().map(|s| s.mbean.to_string()).collect();
        assert_eq!(
            names,
            [
                "kafka.server:type=KafkaServer,name=BrokerState",
                "kafka.server:type=KafkaServer,name=linux-disk-read-bytes",
                "kafka.server:type=KafkaServer,name=linux-disk-write-bytes",
            ]
        );
        assert_eq!(samples[0].reading, Reading::Gauge(RUNNING));
    }
}
