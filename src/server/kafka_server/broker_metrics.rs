//! The broker's metrics registry and the sources it holds, filled as the server starts.

use std::sync::Arc;

use crate::metrics::{MetricsRegistry, MetricsSource};

/// The metrics registry and its sources: the registry holds them weakly, so the server keeps
/// them alive. Every source is registered as it is added, in start-up order.
pub(super) struct BrokerMetrics {
    pub(super) registry: Arc<MetricsRegistry>,
    pub(super) sources: Vec<Arc<dyn MetricsSource>>,
}

impl BrokerMetrics {
    pub(super) fn new() -> Self {
        BrokerMetrics {
            registry: Arc::new(MetricsRegistry::new()),
            sources: Vec::new(),
        }
    }

    pub(super) fn add(&mut self, source: Arc<dyn MetricsSource>) {
        self.registry.register(&source);
        self.sources.push(source);
    }
}
