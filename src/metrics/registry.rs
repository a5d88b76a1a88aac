//! The broker's metrics registry: the [`MetricsSource`]s its layers registered, collected
//! together when the metrics are read, and ticked together every `TICK`
//! (meters' moving averages, histograms' windows) by one task the server runs.
//!
//! A source is held weakly: a component that goes (a partition deleted, a fetcher stopped)
//! drops out of the readings without unregistering.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use super::MetricSample;

/// What a layer registers: its figures, read when the metrics are collected.
pub trait MetricsSource: Send + Sync + std::fmt::Debug {
    /// Appends this source's MBeans and their readings.
    fn collect(&self, out: &mut Vec<MetricSample>);

    /// Moves the moving averages and windows of this source's meters and histograms; called
    /// every `TICK` by the registry's ticker only.
    fn tick(&self) {}
}

/// The registry; see the module doc.
#[derive(Default)]
pub struct MetricsRegistry {
    sources: Mutex<Vec<Weak<dyn MetricsSource>>>,
}

impl std::fmt::Debug for MetricsRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsRegistry")
            .field("sources", &lock(&self.sources).len())
            .finish()
    }
}

impl MetricsRegistry {
    pub fn new() -> Self {
        MetricsRegistry::default()
    }

    /// Adds `source`, held weakly: it reads until its last strong reference goes.
    pub fn register(&self, source: &Arc<dyn MetricsSource>) {
        lock(&self.sources).push(Arc::downgrade(source));
    }

    /// The live sources, forgetting the dropped ones.
    fn live(&self) -> Vec<Arc<dyn MetricsSource>> {
        let mut sources = lock(&self.sources);
        sources.retain(|s| s.strong_count() > 0);
        sources.iter().filter_map(Weak::upgrade).collect()
    }

    /// Every source's MBeans, in registration order.
    pub fn collect(&self) -> Vec<MetricSample> {
        let mut out = Vec::new();
        for source in self.live() {
            source.collect(&mut out);
        }
        out
    }

    /// Ticks every source; see [`MetricsSource::tick`].
    pub fn tick(&self) {
        for source in self.live() {
            source.tick();
        }
    }
}

/// Locks a mutex whose data stays valid if a holder panicked (every critical section here
/// leaves it consistent).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{MBeanName, Meter, Reading};

    #[derive(Debug)]
    struct One(Meter);

    impl MetricsSource for One {
        fn collect(&self, out: &mut Vec<MetricSample>) {
            out.push(MetricSample {
                mbean: MBeanName::yammer("kafka.server", "T", "EventsPerSec", &[]),
                reading: Reading::Meter(self.0.snapshot()),
            });
        }
        fn tick(&self) {
            self.0.tick();
        }
    }

    #[test]
    fn collects_live_sources_and_forgets_dropped_ones() {
        let registry = MetricsRegistry::new();
        let source: Arc<dyn MetricsSource> = Arc::new(One(Meter::new()));
        registry.register(&source);
        registry.tick();
        assert_eq!(registry.collect().len(), 1);
        drop(source);
        assert!(registry.collect().is_empty());
        assert_eq!(lock(&registry.sources).len(), 0);
    }
}
