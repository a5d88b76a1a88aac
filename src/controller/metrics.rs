//! The controller's MBeans as Kafka 3.9 registers them: `kafka.controller:type=KafkaController`
//! (ActiveControllerCount, OfflinePartitionsCount, PreferredReplicaImbalanceCount,
//! GlobalTopicCount, GlobalPartitionCount) and `kafka.controller:type=ControllerStats`
//! (UncleanLeaderElectionsPerSec, a Meter, and LeaderElectionRateAndTimeMs, a Timer).
//!
//! The controller's state belongs to its event task alone, so a scrape never reads the
//! [`ControllerContext`]: after each event the task publishes the counts into atomics
//! ([`ControllerMetrics::update`], Kafka's `updateMetrics`), and the source reads those.
//! ActiveControllerCount is read live from the atomic the controller's handle already shares.
//! As in Kafka, a controller that is not active publishes zeros.
//!
//! The stats move where Kafka's do: LeaderElectionRateAndTimeMs times every broker change event
//! (Kafka's `ControllerState.BrokerChange`, whose timer kept that name), active or not, and
//! UncleanLeaderElectionsPerSec is marked when an election finds a leader only outside the ISR.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

use crate::cluster::BrokerId;
use crate::metrics::{Histogram, MBeanName, Meter, MetricSample, MetricsSource, Reading};

use super::controller_context::ControllerContext;
use super::partition_state_machine::PartitionState;

/// Kafka's `ControllerStats` (the two of its meters and timers kcli records).
#[derive(Debug, Default)]
pub(crate) struct ControllerStats {
    pub unclean_leader_elections: Meter,
    leader_election_time_ms: Histogram,
    leader_election_rate: Meter,
}

impl ControllerStats {
    /// Records one broker change event's processing time (LeaderElectionRateAndTimeMs).
    pub(crate) fn record_leader_election(&self, took: Duration) {
        self.leader_election_time_ms
            .update(took.as_secs_f64() * 1000.0);
        self.leader_election_rate.mark(1);
    }
}

/// The controller's source; see the module doc.
#[derive(Debug)]
pub(crate) struct ControllerMetrics {
    broker_id: BrokerId,
    active_controller_id: Arc<AtomicI32>,
    offline_partitions: AtomicU64,
    preferred_replica_imbalance: AtomicU64,
    global_topics: AtomicU64,
    global_partitions: AtomicU64,
    pub(crate) stats: ControllerStats,
}

/// What [`ControllerMetrics::update`] publishes, counted from a context.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    offline_partitions: u64,
    preferred_replica_imbalance: u64,
    global_topics: u64,
    global_partitions: u64,
}

impl Counts {
    /// Kafka's `ControllerContext` counts: offline partitions of topics whose deletion has not
    /// begun, partitions (of topics not queued for deletion) whose leader is not their preferred
    /// replica (a preferred replica being added by a reassignment counts as preferred), the
    /// topics, and the partitions with a leader.
    fn of(ctx: &ControllerContext) -> Counts {
        let offline_partitions = ctx
            .partition_states
            .iter()
            .filter(|(tp, s)| {
                **s == PartitionState::Offline && !ctx.topics_to_be_deleted.contains(&tp.topic)
            })
            .count();
        let preferred_replica_imbalance = ctx
            .leadership
            .iter()
            .filter(|(tp, leadership)| {
                if ctx.topics_to_be_deleted.contains(&tp.topic) {
                    return false;
                }
                let Some(assignment) = ctx.assignment(tp) else {
                    return false;
                };
                let Some(&preferred) = assignment.replicas.first() else {
                    return false;
                };
                !(assignment.is_being_reassigned() && assignment.adding.contains(&preferred))
                    && leadership.state.leader != preferred
            })
            .count();
        Counts {
            offline_partitions: offline_partitions as u64,
            preferred_replica_imbalance: preferred_replica_imbalance as u64,
            global_topics: ctx.assignments.len() as u64,
            global_partitions: ctx.leadership.len() as u64,
        }
    }
}

impl ControllerMetrics {
    pub(crate) fn new(broker_id: BrokerId, active_controller_id: Arc<AtomicI32>) -> Self {
        ControllerMetrics {
            broker_id,
            active_controller_id,
            offline_partitions: AtomicU64::new(0),
            preferred_replica_imbalance: AtomicU64::new(0),
            global_topics: AtomicU64::new(0),
            global_partitions: AtomicU64::new(0),
            stats: ControllerStats::default(),
        }
    }

    fn is_active(&self) -> bool {
        self.active_controller_id.load(Ordering::Acquire) == self.broker_id
    }

    /// Publishes the counts of `ctx`, or zeros when this controller is not active (Kafka's
    /// `updateMetrics`); called by the event task after each event.
    pub(crate) fn update(&self, ctx: &ControllerContext) {
        let counts = if self.is_active() {
            Counts::of(ctx)
        } else {
            Counts::default()
        };
        self.offline_partitions
            .store(counts.offline_partitions, Ordering::Relaxed);
        self.preferred_replica_imbalance
            .store(counts.preferred_replica_imbalance, Ordering::Relaxed);
        self.global_topics
            .store(counts.global_topics, Ordering::Relaxed);
        self.global_partitions
            .store(counts.global_partitions, Ordering::Relaxed);
    }
}

fn gauge(name: &'static str, value: f64) -> MetricSample {
    MetricSample {
        mbean: MBeanName::yammer("kafka.controller", "KafkaController", name, &[]),
        reading: Reading::Gauge(value),
    }
}

impl MetricsSource for ControllerMetrics {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        let read = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
        out.push(gauge(
            "ActiveControllerCount",
            f64::from(u8::from(self.is_active())),
        ));
        out.push(gauge(
            "OfflinePartitionsCount",
            read(&self.offline_partitions),
        ));
        out.push(gauge(
            "PreferredReplicaImbalanceCount",
            read(&self.preferred_replica_imbalance),
        ));
        out.push(gauge("GlobalTopicCount", read(&self.global_topics)));
        out.push(gauge("GlobalPartitionCount", read(&self.global_partitions)));
        let stats = |name| MBeanName::yammer("kafka.controller", "ControllerStats", name, &[]);
        out.push(MetricSample {
            mbean: stats("LeaderElectionRateAndTimeMs"),
            reading: Reading::Timer(
                self.stats.leader_election_time_ms.snapshot(),
                self.stats.leader_election_rate.snapshot(),
            ),
        });
        out.push(MetricSample {
            mbean: stats("UncleanLeaderElectionsPerSec"),
            reading: Reading::Meter(self.stats.unclean_leader_elections.snapshot()),
        });
    }

    fn tick(&self) {
        self.stats.unclean_leader_elections.tick();
        self.stats.leader_election_rate.tick();
        self.stats.leader_election_time_ms.tick();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::TopicPartition;
    use crate::controller::controller_context::{LeaderIsrAndControllerEpoch, ReplicaAssignment};
    use crate::zk::zk_data;

    fn read(samples: &[MetricSample], name: &str) -> Reading {
        let found: Vec<&MetricSample> = samples
            .iter()
            .filter(|s| s.mbean.to_string().ends_with(&format!("name={name}")))
            .collect();
        assert_eq!(found.len(), 1, "{name} once in {samples:#?}");
        found[0].reading.clone()
    }

    fn gauge_of(samples: &[MetricSample], name: &str) -> f64 {
        match read(samples, name) {
            Reading::Gauge(v) => v,
            other => panic!("{name} is {other:?}"),
        }
    }

    fn led(leader: BrokerId) -> LeaderIsrAndControllerEpoch {
        LeaderIsrAndControllerEpoch {
            state: zk_data::PartitionState {
                leader,
                leader_epoch: 0,
                isr: vec![leader],
                controller_epoch: 1,
                leader_recovery_state: 0,
            },
            partition_epoch: 0,
        }
    }

    /// Topic `a` with two partitions (one led by its preferred replica, one not), topic `b`
    /// with one offline partition, and topic `gone` queued for deletion and offline.
    fn context() -> ControllerContext {
        let mut ctx = ControllerContext::default();
        for (topic, partition, replicas, leader, state) in [
            ("a", 0, vec![1, 2], Some(1), PartitionState::Online),
            ("a", 1, vec![2, 1], Some(1), PartitionState::Online),
            ("b", 0, vec![3], Some(3), PartitionState::Offline),
            ("gone", 0, vec![3], Some(1), PartitionState::Offline),
        ] {
            let tp = TopicPartition::new(topic, partition);
            ctx.update_partition_assignment(&tp, ReplicaAssignment::new(replicas));
            if let Some(leader) = leader {
                ctx.leadership.insert(tp.clone(), led(leader));
            }
            ctx.partition_states.insert(tp, state);
        }
        ctx.topics_to_be_deleted.insert("gone".to_string());
        ctx
    }

    #[test]
    fn the_active_controller_publishes_its_contexts_counts() {
        let active = Arc::new(AtomicI32::new(1));
        let metrics = ControllerMetrics::new(1, Arc::clone(&active));
        let mut samples = Vec::new();
        metrics.collect(&mut samples);
        assert_eq!(gauge_of(&samples, "ActiveControllerCount"), 1.0);
        assert_eq!(
            gauge_of(&samples, "GlobalTopicCount"),
            0.0,
            "nothing published yet"
        );

        metrics.update(&context());
        let mut samples = Vec::new();
        metrics.collect(&mut samples);
        assert_eq!(gauge_of(&samples, "GlobalTopicCount"), 3.0);
        assert_eq!(gauge_of(&samples, "GlobalPartitionCount"), 4.0);
        assert_eq!(
            gauge_of(&samples, "OfflinePartitionsCount"),
            1.0,
            "a topic being deleted is not counted"
        );
        assert_eq!(gauge_of(&samples, "PreferredReplicaImbalanceCount"), 1.0);

        // Another broker won: ActiveControllerCount moves at once, the rest at the next event.
        active.store(2, Ordering::Release);
        let mut samples = Vec::new();
        metrics.collect(&mut samples);
        assert_eq!(gauge_of(&samples, "ActiveControllerCount"), 0.0);
        metrics.update(&context());
        let mut samples = Vec::new();
        metrics.collect(&mut samples);
        for name in [
            "OfflinePartitionsCount",
            "PreferredReplicaImbalanceCount",
            "GlobalTopicCount",
            "GlobalPartitionCount",
        ] {
            assert_eq!(gauge_of(&samples, name), 0.0, "{name} on a non-controller");
        }
    }

    #[test]
    fn a_preferred_replica_being_added_counts_as_preferred() {
        let mut ctx = ControllerContext::default();
        let tp = TopicPartition::new("a", 0);
        ctx.update_partition_assignment(&tp, ReplicaAssignment::new(vec![1]).reassign_to(&[2]));
        ctx.leadership.insert(tp, led(1));
        assert_eq!(Counts::of(&ctx).preferred_replica_imbalance, 0);
    }

    #[test]
    fn controller_stats_are_a_timer_and_a_meter() {
        let metrics = ControllerMetrics::new(1, Arc::new(AtomicI32::new(-1)));
        metrics
            .stats
            .record_leader_election(Duration::from_millis(12));
        metrics.stats.unclean_leader_elections.mark(1);
        let mut samples = Vec::new();
        metrics.collect(&mut samples);
        assert_eq!(gauge_of(&samples, "ActiveControllerCount"), 0.0);
        match read(&samples, "LeaderElectionRateAndTimeMs") {
            Reading::Timer(histogram, meter) => {
                assert_eq!((histogram.count, meter.count), (1, 1));
                assert!((histogram.max - 12.0).abs() < 1.0, "{histogram:?}");
            }
            other => panic!("a timer, not {other:?}"),
        }
        match read(&samples, "UncleanLeaderElectionsPerSec") {
            Reading::Meter(meter) => assert_eq!(meter.count, 1),
            other => panic!("a meter, not {other:?}"),
        }
        assert_eq!(
            samples[0].mbean.to_string(),
            "kafka.controller:type=KafkaController,name=ActiveControllerCount"
        );
    }
}
