//! A real Prometheus (Debian's `prometheus`, installed by tests/run) scraping brokers' metrics
//! endpoints every second, on 127.0.0.1 with a free port and a temp dir, stopped by PID; and
//! PromQL queries through its HTTP API.
//!
//! Each target carries the labels the Kafka dashboards match on (tests/fixtures/metrics/
//! dashboard-queries.txt says which): job `kafka-broker`, env, namespace, the Strimzi cluster
//! and pod names, container, so an expression runs unchanged once its Grafana variables are
//! substituted ([`substitute`]).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::exposition::dechunk;

const PROMETHEUS: &str = "/usr/bin/prometheus";
const START_LIMIT: Duration = Duration::from_secs(30);

/// A Prometheus process; killed on drop.
pub struct TestPrometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl TestPrometheus {
    /// Starts Prometheus scraping `targets` (broker id, metrics port on 127.0.0.1) every
    /// second, and waits until it answers queries.
    pub fn start(targets: &[(i32, u16)]) -> TestPrometheus {
        assert!(
            Path::new(PROMETHEUS).exists(),
            "{PROMETHEUS} missing: apt-get install --no-install-recommends prometheus (tests/run does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let mut config = String::from(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: kafka-broker\n    static_configs:\n",
        );
        for (id, port) in targets {
            config.push_str(&format!(
                "      - targets: ['127.0.0.1:{port}']\n        labels:\n          env: kcli\n          namespace: kcli\n          strimzi_io_cluster: kcli\n          strimzi_io_name: kcli-kafka\n          kubernetes_pod_name: kcli-kafka-{id}\n          pod: kcli-kafka-{id}\n          container: kafka\n"
            ));
        }
        let config_path = dir.path().join("prometheus.yml");
        std::fs::write(&config_path, config).unwrap();
        let port = crate::serve_support::free_port();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let prometheus = TestPrometheus {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + START_LIMIT;
        while prometheus
            .get("/-/ready")
            .is_none_or(|(status, _)| status != 200)
        {
            assert!(Instant::now() < deadline, "prometheus did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        prometheus
    }

    /// A plain HTTP/1.1 GET: status and body; `None` when nothing answers.
    fn get(&self, path_and_query: &str) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .ok()?;
        write!(
            stream,
            "GET {path_and_query} HTTP/1.1\r\nHost: prometheus\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).ok()?;
        let response = String::from_utf8_lossy(&response).into_owned();
        let (head, body) = response.split_once("\r\n\r\n")?;
        let status = head.split(' ').nth(1)?.parse().ok()?;
        // Prometheus answers small bodies whole; a chunked one is decoded here.
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(body)
        } else {
            body.to_string()
        };
        Some((status, body))
    }

    /// An instant query: each result's labels and value. Panics on a query Prometheus refuses
    /// (a bad expression is a test bug, not missing data).
    pub fn query(&self, expr: &str) -> Vec<(Value, f64)> {
        let (status, body) = self
            .get(&format!("/api/v1/query?query={}", encode(expr)))
            .expect("prometheus answers");
        let json: Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{expr}: {e}: {body}"));
        assert_eq!(status, 200, "{expr}: {body}");
        json["data"]["result"]
            .as_array()
            .map(|results| {
                results
                    .iter()
                    .filter_map(|r| {
                        let value = r["value"][1].as_str()?.parse::<f64>().ok()?;
                        Some((r["metric"].clone(), value))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Polls `expr` until `accept` holds for its results, within `limit`.
    pub fn wait_for(
        &self,
        expr: &str,
        limit: Duration,
        accept: impl Fn(&[(Value, f64)]) -> bool,
    ) -> Vec<(Value, f64)> {
        let deadline = Instant::now() + limit;
        loop {
            let results = self.query(expr);
            if accept(&results) {
                return results;
            }
            assert!(
                Instant::now() < deadline,
                "{expr} never gave what was waited for; last: {results:?}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for TestPrometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The dashboards' Grafana variables, as Grafana substitutes them with "All" selected, for
/// targets labelled as [`TestPrometheus::start`] labels them.
pub fn substitute(expr: &str) -> String {
    [
        ("$kubernetes_namespace", "kcli"),
        ("$strimzi_cluster_name", "kcli"),
        ("$kafka_broker", "kafka-.*"),
        ("$kafka_topic", ".*"),
        ("$kafka_partition", ".*"),
        ("${env}", "kcli"),
        ("$env", "kcli"),
        ("$percentile", "0.99"),
    ]
    .iter()
    .fold(expr.to_string(), |e, (var, value)| e.replace(var, value))
    // `instance="$instance"` with "All" is a regex match in Grafana.
    .replace("instance=\"$instance\"", "instance=~\".*\"")
    .replace("$instance", ".*")
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
