//! The broker's metrics as Prometheus reads them: what every layer records (the registry of
//! [`crate::metrics`]), ticked every five seconds, and served on `kcli.metrics.listener` (off
//! unless set) as the Prometheus JMX exporter serves a Kafka broker's.
//!
//! - `jmx_exporter`: the JMX exporter's rule engine (jmx_prometheus_javaagent 1.0.1): a JMX
//!   exporter YAML config, Strimzi's compiled in, applied to the collected MBeans, written in
//!   the text exposition format.
//! - `endpoint`: `GET /metrics` over HTTP/1.1.
//! - `kafka_server_metrics`: the KafkaServer gauges (BrokerState, the Linux disk bytes).
//! - `process_metrics`: the process series the Prometheus Java client adds, from `/proc`.

pub(crate) mod endpoint;
pub(crate) mod jmx_exporter;
pub(crate) mod kafka_server_metrics;
pub(crate) mod process_metrics;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::metrics::{MetricsRegistry, TICK};

use self::endpoint::{MetricsEndpointError, Render};
use self::jmx_exporter::Rules;
use self::process_metrics::ProcessStats;

/// Ticks `registry` until `shutdown`, on `tasks`.
pub(crate) fn spawn_ticker(
    registry: &Arc<MetricsRegistry>,
    shutdown: CancellationToken,
    tasks: &TaskTracker,
) {
    let registry = Arc::clone(registry);
    tasks.spawn(async move {
        let mut interval = tokio::time::interval(TICK);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval.tick().await;
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                _ = interval.tick() => registry.tick(),
            }
        }
    });
}

/// One scrape's text: the registry's MBeans under `rules`, then the process series.
pub(crate) fn scrape(registry: &MetricsRegistry, rules: &Rules) -> String {
    let mut text = String::new();
    if let Some(process) = ProcessStats::read() {
        process.render(&mut text);
    }
    rules.render_into(&registry.collect(), &mut text);
    text
}

/// Starts the endpoint on `address`, serving [`scrape`]s of `registry` with the JMX exporter
/// config at `rules_path` (`kcli.metrics.jmx.exporter.config`), Strimzi's rules without one.
pub(crate) async fn start_endpoint(
    address: &str,
    rules_path: Option<&str>,
    registry: &Arc<MetricsRegistry>,
    shutdown: CancellationToken,
    tasks: &TaskTracker,
) -> Result<SocketAddr, MetricsEndpointError> {
    let rules = Arc::new(match rules_path {
        None => Rules::strimzi(),
        Some(path) => {
            let yaml = std::fs::read_to_string(path).map_err(|source| {
                MetricsEndpointError::ReadRules {
                    path: path.to_string(),
                    source,
                }
            })?;
            Rules::from_yaml(&yaml).map_err(|source| MetricsEndpointError::Rules {
                path: path.to_string(),
                source,
            })?
        }
    });
    let registry = Arc::clone(registry);
    let render: Render = Arc::new(move || scrape(&registry, &rules));
    endpoint::start(address, render, shutdown, tasks).await
}
