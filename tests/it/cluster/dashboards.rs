//! The Kafka dashboards against a kcli cluster through a real Prometheus: three brokers with
//! `kcli.metrics.listener` on, scraped every second, and every PromQL expression of a dashboard
//! (tests/fixtures/metrics/dashboard-queries.txt) evaluated through Prometheus's HTTP API with
//! its Grafana variables substituted. Each expression over series kcli serves returns data;
//! then a broker is killed -9 and the Under Replicated Partitions and Offline Partitions Count
//! panels move.
//!
//! Strimzi's dashboard reads the names Strimzi's exporter rules make (kcli's default);
//! Confluent's reads those of Confluent's own rules, so its brokers run with
//! `kcli.metrics.jmx.exporter.config` pointing at them, as a team using that dashboard would.

use std::time::Duration;

use crate::support::cluster::TestCluster;
use crate::support::prometheus::{TestPrometheus, substitute};

use super::{create_topic, create_topic_assigned};

const LIMIT: Duration = Duration::from_secs(60);

/// Series Strimzi's dashboard reads that kcli does not serve yet (issue 34); each is checked
/// to be absent, so the list cannot outlive the series' arrival.
const STRIMZI_NOT_SERVED_YET: &[&str] = &[];

/// The same for Confluent's dashboard, under Confluent's names.
const CONFLUENT_NOT_SERVED_YET: &[&str] = &[];

/// Expressions that have data only once something happened that a healthy cluster does not
/// do, on Kafka as on kcli: per-topic failed requests (a topic's meter exists from its first
/// failure), requests answered with an error (a request's error meter exists from its first
/// such error); and offset commits, which this test's consumer (kcat without a group) does not
/// make. (Requests at a deprecated API version are made: see [`deprecated_requests`].)
fn needs_an_event(expr: &str) -> bool {
    let per_topic = expr.contains("topic!=\"\"");
    per_topic && (expr.contains("failedproducerequests") || expr.contains("failedfetchrequests"))
        || expr.contains("errorspersec{error!=\"NONE\"")
        || expr.contains("request=\"OffsetCommit\"")
}

/// A dashboard's expressions: (panel, class, series, expr).
fn expressions(dashboard: &str) -> Vec<(String, String, Vec<String>, String)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/metrics/dashboard-queries.txt"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.split('\t').next() == Some(dashboard))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (
                cols[1].to_string(),
                cols[2].to_string(),
                cols[4].split(',').map(String::from).collect(),
                cols[5].to_string(),
            )
        })
        .collect()
}

/// Metadata v1 (deprecated in Kafka 3.9) from a client that named its software, to broker `id`:
/// what the Deprecated API Requests panels chart.
fn deprecated_requests(cluster: &TestCluster, id: i32) {
    use kcli::protocol::codec::StrBytes;
    use kcli::protocol::messages::api_versions_request::ApiVersionsRequest;
    use kcli::protocol::messages::metadata_request::MetadataRequest;
    use kcli::protocol::messages::{RequestKind, ResponseKind};

    let mut conn = crate::serve_support::KafkaConn::connect_to(cluster.addr(id));
    let versions = RequestKind::ApiVersions(ApiVersionsRequest {
        client_software_name: StrBytes::from("old-client"),
        client_software_version: StrBytes::from("0.10"),
        ..Default::default()
    });
    conn.call(&versions, 3);
    let ResponseKind::Metadata(answer) =
        conn.call(&RequestKind::Metadata(MetadataRequest::default()), 1)
    else {
        unreachable!()
    };
    assert_eq!(answer.brokers.len(), 3, "{answer:?}");
}

/// Starts three brokers with `overrides` and Prometheus over them, puts a topic and some
/// records through, evaluates `dashboard`'s expressions, and kills a broker under the Under
/// Replicated Partitions and Offline Partitions Count panels.
fn dashboard_reads_a_kcli_cluster(
    dashboard: &str,
    overrides: &[(&str, &str)],
    not_served_yet: &[&str],
) {
    let mut all = vec![
        ("kcli.metrics.listener", "127.0.0.1:{port2}"),
        ("replica.lag.time.max.ms", "2000"),
    ];
    all.extend_from_slice(overrides);
    let mut cluster = TestCluster::start(3, &all);
    create_topic(&cluster, "dash", 3, 3);
    // A partition only the victim holds, which goes offline with it.
    let victim = cluster
        .ids()
        .into_iter()
        .find(|id| Some(*id) != cluster.controller_id())
        .unwrap();
    create_topic_assigned(&cluster, "solo", &[&[victim]]);
    let records: String = (0..100).map(|i| format!("r{i}\n")).collect();
    let mut kcat = std::process::Command::new("kcat");
    kcat.args([
        "-P",
        "-b",
        &cluster.bootstrap(),
        "-t",
        "dash",
        "-X",
        "acks=all",
    ]);
    let (code, _, err) = crate::serve_support::run_within(kcat, records.as_bytes(), LIMIT);
    assert_eq!(code, 0, "{err}");
    let mut kcat = std::process::Command::new("kcat");
    kcat.args([
        "-C",
        "-b",
        &cluster.bootstrap(),
        "-t",
        "dash",
        "-e",
        "-o",
        "beginning",
    ]);
    let (code, out, err) = crate::serve_support::run_within(kcat, b"", LIMIT);
    assert_eq!((code, out.lines().count()), (0, 100), "{err}");
    deprecated_requests(&cluster, victim);

    let targets: Vec<(i32, u16)> = cluster
        .ids()
        .into_iter()
        .map(|id| (id, cluster.broker(id).port2()))
        .collect();
    let prometheus = TestPrometheus::start(&targets);
    // Every target up, and a few scrapes since, so rates over [5m] have points to use.
    prometheus.wait_for("sum(up{job=\"kafka-broker\"})", LIMIT, |r| {
        r.first().is_some_and(|(_, v)| *v == 3.0)
    });
    prometheus.wait_for(
        "min(count_over_time(up{job=\"kafka-broker\"}[5m]))",
        LIMIT,
        |r| r.first().is_some_and(|(_, v)| *v >= 3.0),
    );

    for series in not_served_yet {
        assert!(
            prometheus.query(&format!("count({series})")).is_empty(),
            "{series} is served now: take it off the test's not-served list"
        );
    }
    let mut evaluated = 0;
    for (panel, class, series, expr) in expressions(dashboard) {
        let kcli_serves = class.starts_with("kafka") || class.starts_with("process");
        if !kcli_serves
            || series.iter().any(|s| not_served_yet.contains(&s.as_str()))
            || needs_an_event(&expr)
            // `count by (quantile) ({quantile!=""})`: the request-time quantiles.
            || (expr.contains("quantile!=") && not_served_yet.iter().any(|s| s.contains("timems")))
        {
            continue;
        }
        let query = substitute(&expr);
        let results = prometheus.query(&query);
        assert!(
            !results.is_empty(),
            "panel {panel:?}: {query} returned no data"
        );
        evaluated += 1;
    }
    assert!(evaluated >= 15, "only {evaluated} expressions evaluated");

    // Under Replicated Partitions and Offline Partitions Count: zero, then above zero once a
    // broker dies: the leaders drop it from their ISRs (replica.lag.time.max.ms 2 s), and once
    // its ZooKeeper session expires the controller finds its lone partition without a leader.
    let panel = |title: &str| {
        let expr = expressions(dashboard)
            .into_iter()
            .find(|(panel, ..)| panel == title)
            .map(|(_, _, _, expr)| substitute(&expr))
            .unwrap_or_else(|| panic!("the dashboard has no panel {title:?}"));
        format!("sum({expr})")
    };
    let (under_replicated, offline) = (
        panel("Under Replicated Partitions"),
        panel("Offline Partitions Count"),
    );
    for expr in [&under_replicated, &offline] {
        prometheus.wait_for(expr, LIMIT, |r| r.first().is_some_and(|(_, v)| *v == 0.0));
    }
    cluster.kill9(victim);
    for expr in [&under_replicated, &offline] {
        prometheus.wait_for(expr, LIMIT, |r| r.first().is_some_and(|(_, v)| *v > 0.0));
    }
}

#[test]
fn strimzis_dashboard_reads_a_kcli_cluster_and_its_under_replicated_and_offline_panels_move() {
    dashboard_reads_a_kcli_cluster("strimzi-kafka", &[], STRIMZI_NOT_SERVED_YET);
}

#[test]
fn confluents_dashboard_reads_kcli_brokers_given_confluents_exporter_rules() {
    let rules = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/metrics/confluent-kafka_broker.yml"
    );
    dashboard_reads_a_kcli_cluster(
        "confluent-kafka-cluster",
        &[("kcli.metrics.jmx.exporter.config", rules)],
        CONFLUENT_NOT_SERVED_YET,
    );
}
