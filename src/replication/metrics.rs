//! The replica manager's MBeans as Kafka 3.9 registers them, read from the hosted partitions
//! when the metrics are collected (nothing is recorded on the produce or fetch path):
//! `kafka.server:type=ReplicaManager` (LeaderCount, PartitionCount, UnderReplicatedPartitions,
//! UnderMinIsrPartitionCount, AtMinIsrPartitionCount, OfflineReplicaCount), and per partition
//! `kafka.cluster:type=Partition` (UnderReplicated, UnderMinIsr, AtMinIsr, ReplicasCount,
//! InSyncReplicasCount) and `kafka.log:type=Log` (Size, NumLogSegments, LogStartOffset,
//! LogEndOffset).
//!
//! Three ReplicaManager meters are recorded rather than read: IsrExpandsPerSec and
//! IsrShrinksPerSec, marked by a leader's partition when the controller commits the ISR change
//! it proposed, and FailedIsrUpdatesPerSec, marked when the controller refuses one or answers
//! for another epoch (Kafka's `AlterPartitionListener`). The partitions share them through
//! their context ([`IsrChangeMeters`]).
//!
//! Also read here: the replica fetchers' `kafka.server:type=ReplicaFetcherManager` MaxLag and
//! MinFetchRate (`clientId=Replica`), and the Produce and Fetch purgatories'
//! `kafka.server:type=DelayedOperationPurgatory` PurgatorySize and NumDelayedOperations.
//!
//! As in Kafka, a partition's ISR gauges are non-zero on its leader only, so the cluster-wide
//! sum of UnderReplicatedPartitions counts each partition once.

use std::sync::{Arc, Weak};

use crate::cluster::sync::lock;
use crate::metrics::{MBeanName, Meter, MetricSample, MetricsSource, Reading};

use super::partition::Partition;
use super::replica_manager::ReplicaManager;

/// The meters a leader's partitions mark as their ISR changes; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct IsrChangeMeters {
    pub expands: Meter,
    pub shrinks: Meter,
    pub failed: Meter,
}

impl IsrChangeMeters {
    /// The meters with their MBean names, in Kafka's order.
    fn named(&self) -> [(&'static str, &Meter); 3] {
        [
            ("IsrExpandsPerSec", &self.expands),
            ("IsrShrinksPerSec", &self.shrinks),
            ("FailedIsrUpdatesPerSec", &self.failed),
        ]
    }
}

/// The replica manager's source; see the module doc.
#[derive(Debug)]
pub(crate) struct ReplicaManagerMetrics {
    replica_manager: Weak<ReplicaManager>,
}

impl ReplicaManagerMetrics {
    pub(crate) fn new(replica_manager: &Arc<ReplicaManager>) -> Self {
        ReplicaManagerMetrics {
            replica_manager: Arc::downgrade(replica_manager),
        }
    }
}

/// One partition's figures.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct PartitionFigures {
    leader: bool,
    offline: bool,
    replicas: usize,
    in_sync: usize,
    under_replicated: bool,
    under_min_isr: bool,
    at_min_isr: bool,
}

fn figures(partition: &Partition) -> (PartitionFigures, Option<LogFigures>) {
    let offline = partition.is_offline();
    let leader = !offline && partition.is_leader();
    let replicas = partition.assignment().len();
    let in_sync = partition.leader_and_isr().isr.len();
    let log = (!offline).then(|| {
        let log = lock(partition.log());
        LogFigures {
            size: log.size(),
            segments: log.number_of_segments(),
            start: log.log_start_offset(),
            end: log.log_end_offset(),
            min_isr: usize::try_from(log.config().min_insync_replicas).unwrap_or(1),
        }
    });
    let min_isr = log.map_or(1, |l| l.min_isr);
    (
        PartitionFigures {
            leader,
            offline,
            replicas,
            in_sync,
            under_replicated: leader && in_sync < replicas,
            under_min_isr: leader && in_sync < min_isr,
            at_min_isr: leader && in_sync == min_isr,
        },
        log,
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LogFigures {
    size: u64,
    segments: usize,
    start: i64,
    end: i64,
    min_isr: usize,
}

fn gauge(
    domain: &'static str,
    type_: &'static str,
    name: &'static str,
    tags: &[(&'static str, &str)],
    value: f64,
) -> MetricSample {
    MetricSample {
        mbean: MBeanName::yammer(domain, type_, name, tags),
        reading: Reading::Gauge(value),
    }
}

impl MetricsSource for ReplicaManagerMetrics {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        let Some(replica_manager) = self.replica_manager.upgrade() else {
            return;
        };
        let mut partitions = replica_manager.all_partitions();
        partitions.sort_by(|a, b| a.topic_partition().cmp(b.topic_partition()));
        let mut totals = [0usize; 6];
        for partition in &partitions {
            let tp = partition.topic_partition();
            let index = tp.partition.to_string();
            let tags = [("topic", tp.topic.as_str()), ("partition", index.as_str())];
            let (p, log) = figures(partition);
            for (total, counted) in totals.iter_mut().zip([
                p.leader,
                true,
                p.under_replicated,
                p.under_min_isr,
                p.at_min_isr,
                p.offline,
            ]) {
                *total += usize::from(counted);
            }
            let flag = |b: bool| f64::from(u8::from(b));
            for (name, value) in [
                ("UnderReplicated", flag(p.under_replicated)),
                ("UnderMinIsr", flag(p.under_min_isr)),
                ("AtMinIsr", flag(p.at_min_isr)),
                (
                    "ReplicasCount",
                    if p.leader { p.replicas as f64 } else { 0.0 },
                ),
                (
                    "InSyncReplicasCount",
                    if p.leader { p.in_sync as f64 } else { 0.0 },
                ),
            ] {
                out.push(gauge("kafka.cluster", "Partition", name, &tags, value));
            }
            if let Some(log) = log {
                for (name, value) in [
                    ("NumLogSegments", log.segments as f64),
                    ("LogEndOffset", log.end as f64),
                    ("LogStartOffset", log.start as f64),
                    ("Size", log.size as f64),
                ] {
                    out.push(gauge("kafka.log", "Log", name, &tags, value));
                }
            }
        }
        for (name, total) in [
            "LeaderCount",
            "PartitionCount",
            "UnderReplicatedPartitions",
            "UnderMinIsrPartitionCount",
            "AtMinIsrPartitionCount",
            "OfflineReplicaCount",
        ]
        .into_iter()
        .zip(totals)
        {
            out.push(gauge(
                "kafka.server",
                "ReplicaManager",
                name,
                &[],
                total as f64,
            ));
        }
        for (name, meter) in replica_manager.isr_meters().named() {
            out.push(MetricSample {
                mbean: MBeanName::yammer("kafka.server", "ReplicaManager", name, &[]),
                reading: Reading::Meter(meter.snapshot()),
            });
        }
        let fetchers = replica_manager.replica_fetcher_manager();
        for (name, value) in [
            ("MaxLag", fetchers.max_lag() as f64),
            ("MinFetchRate", fetchers.min_fetch_rate()),
        ] {
            out.push(gauge(
                "kafka.server",
                "ReplicaFetcherManager",
                name,
                &[("clientId", "Replica")],
                value,
            ));
        }
        for (operation, purgatory) in replica_manager.purgatories() {
            for (name, value) in [
                ("PurgatorySize", purgatory.watchers()),
                ("NumDelayedOperations", purgatory.operations()),
            ] {
                out.push(gauge(
                    "kafka.server",
                    "DelayedOperationPurgatory",
                    name,
                    &[("delayedOperation", operation)],
                    value as f64,
                ));
            }
        }
    }

    fn tick(&self) {
        if let Some(replica_manager) = self.replica_manager.upgrade() {
            for (_, meter) in replica_manager.isr_meters().named() {
                meter.tick();
            }
            replica_manager.replica_fetcher_manager().tick_fetch_rates();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{LeaderAndIsr, TopicPartition};
    use crate::replication::replica_manager::{TempReplicaManager, become_compacted_replica};

    fn value(samples: &[MetricSample], mbean: &str) -> f64 {
        let found: Vec<f64> = samples
            .iter()
            .filter(|s| s.mbean.to_string() == mbean)
            .map(|s| match s.reading {
                Reading::Gauge(v) => v,
                ref other => panic!("{mbean} is {other:?}"),
            })
            .collect();
        assert_eq!(found.len(), 1, "{mbean} once in {samples:#?}");
        found[0]
    }

    #[test]
    fn leaders_count_their_replicas_and_followers_count_nothing_but_their_logs() {
        let trm = TempReplicaManager::new(0, 1_000_000);
        // Led here with one of its two replicas in sync; followed here.
        become_compacted_replica(
            &trm.rm,
            &TopicPartition::new("t", 0),
            vec![0, 1],
            LeaderAndIsr::new(0, vec![0]),
        );
        become_compacted_replica(
            &trm.rm,
            &TopicPartition::new("t", 1),
            vec![1, 0],
            LeaderAndIsr::new(1, vec![1, 0]),
        );
        let source = ReplicaManagerMetrics::new(&trm.rm);
        let mut samples = Vec::new();
        source.collect(&mut samples);
        let server = |name: &str| {
            value(
                &samples,
                &format!("kafka.server:type=ReplicaManager,name={name}"),
            )
        };
        assert_eq!(server("LeaderCount"), 1.0);
        assert_eq!(server("PartitionCount"), 2.0);
        assert_eq!(server("UnderReplicatedPartitions"), 1.0);
        assert_eq!(
            server("UnderMinIsrPartitionCount"),
            0.0,
            "min.insync.replicas is 1"
        );
        assert_eq!(server("AtMinIsrPartitionCount"), 1.0);
        assert_eq!(server("OfflineReplicaCount"), 0.0);
        trm.rm.isr_meters().shrinks.mark(2);
        trm.rm.isr_meters().failed.mark(1);
        let meter = |name: &str| {
            let mbean = format!("kafka.server:type=ReplicaManager,name={name}");
            let mut samples = Vec::new();
            source.collect(&mut samples);
            match samples.iter().find(|s| s.mbean.to_string() == mbean) {
                Some(MetricSample {
                    reading: Reading::Meter(m),
                    ..
                }) => m.count,
                other => panic!("{mbean}: {other:?}"),
            }
        };
        assert_eq!(meter("IsrExpandsPerSec"), 0);
        assert_eq!(meter("IsrShrinksPerSec"), 2);
        assert_eq!(meter("FailedIsrUpdatesPerSec"), 1);
        let fetcher = |name: &str| {
            value(
                &samples,
                &format!("kafka.server:type=ReplicaFetcherManager,name={name},clientId=Replica"),
            )
        };
        assert_eq!(
            fetcher("MaxLag"),
            0.0,
            "no fetcher started without an end point"
        );
        assert_eq!(fetcher("MinFetchRate"), 0.0);
        for operation in ["Produce", "Fetch"] {
            for name in ["PurgatorySize", "NumDelayedOperations"] {
                let mbean = format!(
                    "kafka.server:type=DelayedOperationPurgatory,name={name},delayedOperation={operation}"
                );
                assert_eq!(value(&samples, &mbean), 0.0, "{mbean}: nothing waits");
            }
        }
        let partition = |name: &str, p: i32| {
            value(
                &samples,
                &format!("kafka.cluster:type=Partition,name={name},topic=t,partition={p}"),
            )
        };
        assert_eq!(partition("UnderReplicated", 0), 1.0);
        assert_eq!(partition("ReplicasCount", 0), 2.0);
        assert_eq!(partition("InSyncReplicasCount", 0), 1.0);
        assert_eq!(
            partition("UnderReplicated", 1),
            0.0,
            "a follower reports nothing"
        );
        assert_eq!(partition("ReplicasCount", 1), 0.0);
        let log = |name: &str| {
            value(
                &samples,
                &format!("kafka.log:type=Log,name={name},topic=t,partition=0"),
            )
        };
        assert_eq!(log("NumLogSegments"), 1.0);
        assert_eq!(log("LogEndOffset"), 0.0);
        assert_eq!(log("Size"), 0.0);
        drop(trm);
        let mut after = Vec::new();
        source.collect(&mut after);
        assert!(after.is_empty(), "a replica manager gone reads nothing");
    }
}
