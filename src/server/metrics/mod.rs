//! The broker's metrics as Prometheus reads them: what every layer records (the registry of
//! [`crate::metrics`]) rendered as the Prometheus JMX exporter renders Kafka's MBeans.
//!
//! - `jmx_exporter`: the JMX exporter's rule engine (jmx_prometheus_javaagent 1.0.1): a JMX
//!   exporter YAML config, Strimzi's compiled in, applied to the collected MBeans, written in
//!   the text exposition format.

#[allow(
    dead_code,
    reason = "the HTTP endpoint (kcli.metrics.listener) that serves the rendering comes next"
)]
pub(crate) mod jmx_exporter;
