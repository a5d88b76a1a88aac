//! The ZooKeeper client's MBeans as Kafka 3.9 registers them (`ZooKeeperClient`):
//! `kafka.server:type=ZooKeeperClientMetrics,name=ZooKeeperRequestLatencyMs`, a Histogram of
//! each request's round trip in milliseconds, and the `kafka.server:type=SessionExpireListener`
//! meters, one per session state the client sees (ZooKeeperSyncConnectsPerSec,
//! ZooKeeperDisconnectsPerSec, ZooKeeperExpiresPerSec, ZooKeeperAuthFailuresPerSec,
//! ZooKeeperReadOnlyConnectsPerSec).
//!
//! [`ZkSession`](super::session::ZkSession) records them: a request's latency per attempt,
//! and a state each time the current session reports it, or a session it resumed or built
//! connects. The embedded store has no ZooKeeper and no such metrics.

use std::time::Duration;

use crate::metrics::{Histogram, MBeanName, Meter, MetricSample, MetricsSource, Reading};

/// The client's metrics; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct ZooKeeperClientMetrics {
    request_latency_ms: Histogram,
    pub sync_connects: Meter,
    pub disconnects: Meter,
    pub expires: Meter,
    pub auth_failures: Meter,
    pub read_only_connects: Meter,
}

impl ZooKeeperClientMetrics {
    /// Records one request's round trip.
    pub(crate) fn record_request(&self, took: Duration) {
        self.request_latency_ms.update(took.as_secs_f64() * 1000.0);
    }

    /// The meters with their MBean names, in Kafka's order.
    fn meters(&self) -> [(&'static str, &Meter); 5] {
        [
            ("ZooKeeperDisconnectsPerSec", &self.disconnects),
            ("ZooKeeperSyncConnectsPerSec", &self.sync_connects),
            ("ZooKeeperAuthFailuresPerSec", &self.auth_failures),
            ("ZooKeeperReadOnlyConnectsPerSec", &self.read_only_connects),
            ("ZooKeeperExpiresPerSec", &self.expires),
        ]
    }
}

impl MetricsSource for ZooKeeperClientMetrics {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        out.push(MetricSample {
            mbean: MBeanName::yammer(
                "kafka.server",
                "ZooKeeperClientMetrics",
                "ZooKeeperRequestLatencyMs",
                &[],
            ),
            reading: Reading::Histogram(self.request_latency_ms.snapshot()),
        });
        for (name, meter) in self.meters() {
            out.push(MetricSample {
                mbean: MBeanName::yammer("kafka.server", "SessionExpireListener", name, &[]),
                reading: Reading::Meter(meter.snapshot()),
            });
        }
    }

    fn tick(&self) {
        self.request_latency_ms.tick();
        for (_, meter) in self.meters() {
            meter.tick();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_is_a_histogram_and_each_state_a_meter() {
        let metrics = ZooKeeperClientMetrics::default();
        metrics.record_request(Duration::from_millis(3));
        metrics.disconnects.mark(1);
        metrics.expires.mark(1);
        let mut samples = Vec::new();
        metrics.collect(&mut samples);
        let names: Vec<String> = samples.iter().map(|s| s.mbean.to_string()).collect();
        assert_eq!(
            names[0],
            "kafka.server:type=ZooKeeperClientMetrics,name=ZooKeeperRequestLatencyMs"
        );
        assert!(names.contains(
            &"kafka.server:type=SessionExpireListener,name=ZooKeeperExpiresPerSec".to_string()
        ));
        match &samples[0].reading {
            Reading::Histogram(h) => assert_eq!(h.count, 1),
            other => panic!("{other:?}"),
        }
        let count = |name: &str| {
            samples
                .iter()
                .find_map(|s| match &s.reading {
                    Reading::Meter(m) if s.mbean.to_string().ends_with(name) => Some(m.count),
                    _ => None,
                })
                .unwrap()
        };
        assert_eq!(count("ZooKeeperDisconnectsPerSec"), 1);
        assert_eq!(count("ZooKeeperExpiresPerSec"), 1);
        assert_eq!(count("ZooKeeperSyncConnectsPerSec"), 0);
    }
}
