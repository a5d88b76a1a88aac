//! The metrics endpoint of a real `kcli serve` (`kcli.metrics.listener`), scraped over HTTP
//! after kcat produced and consumed through it: the counts agree with what the clients did,
//! and every family served has a name, TYPE and label names that Kafka 3.9.1 has under the
//! JMX exporter with Strimzi's rules (tests/fixtures/metrics/kafka-3.9.1-series.txt, captured
//! from a real Kafka broker by tests/kafka/capture-jmx-metrics.sh).

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::serve_support::{KafkaConn, TestBroker, create_topic_with, free_port, run_within};
use crate::support::exposition::{families, get_metrics, samples};
use crate::support::zookeeper::ZkServer;

const LIMIT: Duration = Duration::from_secs(30);

fn kcat(broker: &TestBroker, args: &[&str], input: &[u8]) -> String {
    let mut cmd = Command::new("kcat");
    cmd.arg("-b").arg(broker.bootstrap()).args(args);
    let (code, out, err) = run_within(cmd, input, LIMIT);
    assert_eq!(code, 0, "kcat {args:?} failed:\n{err}");
    out
}

/// `GET /metrics`: the status line and the body.
fn scrape(port: u16) -> (String, String) {
    get_metrics(port, LIMIT).expect("the metrics endpoint answers")
}

/// A Kafka capture (`kafka-3.9.1-series.txt`, or `-confluent` for Confluent's rules): family
/// to (TYPE, label-name sets as `{a,b}`).
fn kafka_families(fixture: &str) -> BTreeMap<String, (String, String)> {
    let path = format!(
        "{}/tests/fixtures/metrics/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let (name, kind, labels) = (cols.next()?, cols.next()?, cols.next()?);
            Some((name.to_string(), (kind.to_string(), labels.to_string())))
        })
        .collect()
}

#[test]
fn serve_metrics_count_what_clients_did_under_kafkas_names() {
    let broker = TestBroker::start(&[("kcli.metrics.listener", "127.0.0.1:{port2}")]);
    let metrics_port = broker.port2();
    let records: String = (0..250).map(|i| format!("record-{i}\n")).collect();
    kcat(
        &broker,
        &["-P", "-t", "m", "-X", "acks=all"],
        records.as_bytes(),
    );
    let consumed = kcat(&broker, &["-C", "-t", "m", "-e", "-o", "beginning"], b"");
    assert_eq!(consumed.lines().count(), 250);

    let deadline = Instant::now() + LIMIT;
    let (status, text) = loop {
        let (status, text) = scrape(metrics_port);
        let all = samples(&text);
        // The fetch counters move when kcat's last fetch was answered, which the scrape may
        // overtake: look again until they did.
        // So do the request metrics, once each answer was written.
        let fetches_recorded = all.keys().any(|k| {
            k.starts_with(r#"kafka_network_requestmetrics_requests_total{request="FetchConsumer","#)
        });
        if (all.contains_key("kafka_server_brokertopicmetrics_bytesout_total{topic=\"m\"}")
            && fetches_recorded)
            || Instant::now() > deadline
        {
            break (status, text);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status, "HTTP/1.1 200 OK");
    let all = samples(&text);
    let value = |series: &str| {
        *all.get(series)
            .unwrap_or_else(|| panic!("{series} missing from:\n{text}"))
    };
    assert_eq!(
        value("kafka_server_brokertopicmetrics_messagesin_total{topic=\"m\"}"),
        250.0
    );
    assert_eq!(
        value("kafka_server_brokertopicmetrics_messagesin_total"),
        250.0
    );
    assert!(value("kafka_server_brokertopicmetrics_bytesin_total{topic=\"m\"}") > 250.0 * 8.0);
    assert!(
        value("kafka_server_brokertopicmetrics_totalproducerequests_total{topic=\"m\"}") >= 1.0
    );
    assert!(value("kafka_server_brokertopicmetrics_bytesout_total{topic=\"m\"}") > 250.0 * 8.0);
    assert!(value("kafka_server_brokertopicmetrics_totalfetchrequests_total") >= 1.0);
    assert_eq!(
        value("kafka_server_brokertopicmetrics_failedproducerequests_total"),
        0.0
    );
    assert_eq!(value("kafka_server_replicamanager_partitioncount"), 1.0);
    assert_eq!(value("kafka_server_replicamanager_leadercount"), 1.0);
    assert_eq!(
        value("kafka_server_replicamanager_underreplicatedpartitions"),
        0.0
    );
    assert_eq!(
        value("kafka_cluster_partition_underminisr{partition=\"0\",topic=\"m\"}"),
        0.0
    );
    assert_eq!(
        value("kafka_cluster_partition_atminisr{partition=\"0\",topic=\"m\"}"),
        1.0
    );
    assert_eq!(
        value("kafka_log_log_logendoffset{partition=\"0\",topic=\"m\"}"),
        250.0
    );
    assert!(value("kafka_log_log_size{partition=\"0\",topic=\"m\"}") > 250.0 * 8.0);
    // The request metrics: kcat's produce requests, each counted under its version, timed, and
    // answered without errors; its fetches as a consumer's.
    let sum = |prefix: &str| -> f64 {
        all.iter()
            .filter(|(series, _)| series.starts_with(prefix))
            .map(|(_, v)| v)
            .sum()
    };
    let produce_requests =
        sum(r#"kafka_network_requestmetrics_requests_total{request="Produce",version=""#);
    assert!(produce_requests >= 1.0, "{text}");
    assert_eq!(
        produce_requests,
        value("kafka_server_brokertopicmetrics_totalproducerequests_total{topic=\"m\"}")
    );
    assert_eq!(
        value(r#"kafka_network_requestmetrics_totaltimems_count_total{request="Produce"}"#),
        produce_requests
    );
    for quantile in ["0.50", "0.75", "0.95", "0.98", "0.99", "0.999"] {
        value(&format!(
            r#"kafka_network_requestmetrics_totaltimems{{quantile="{quantile}",request="Produce"}}"#
        ));
    }
    assert_eq!(
        value(r#"kafka_network_requestmetrics_errors_total{error="NONE",request="Produce"}"#),
        produce_requests
    );
    assert!(
        sum(r#"kafka_network_requestmetrics_requests_total{request="Fetch","#)
            >= sum(r#"kafka_network_requestmetrics_requests_total{request="FetchConsumer","#)
    );
    assert!(sum(r#"kafka_network_requestmetrics_requests_total{request="Metadata","#) >= 2.0);
    // Histograms exist for every request type from the start, as Kafka creates them.
    value(r#"kafka_network_requestmetrics_localtimems_count_total{request="FetchFollower"}"#);
    value(
        r#"kafka_network_requestmetrics_remotetimems_count_total{request="AddPartitionsToTxnVerification"}"#,
    );
    value("kafka_network_requestchannel_requestqueuesize");
    value("kafka_network_requestchannel_responsequeuesize");
    let idle = value("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent");
    assert!((0.0..=1.0).contains(&idle), "{idle}");
    // Both kcat runs connected (and closed) at least once; the scrape is not a Kafka client.
    let listener = r#"{listener="PLAINTEXT",networkProcessor="0"}"#;
    value(&format!(
        "kafka_server_socket_server_metrics_connection_count{listener}"
    ));
    assert!(
        value(&format!(
            "kafka_server_socket_server_metrics_connection_creation_total{listener}"
        )) >= 2.0
    );
    value(&format!(
        "kafka_server_socket_server_metrics_connection_creation_rate{listener}"
    ));
    value(&format!(
        "kafka_server_socket_server_metrics_connection_close_rate{listener}"
    ));
    value(&format!(
        "kafka_server_socket_server_metrics_connection_close_total{listener}"
    ));
    // A single broker is the controller, and its context has the one topic kcat made.
    assert_eq!(
        value("kafka_controller_kafkacontroller_activecontrollercount"),
        1.0
    );
    assert_eq!(
        value("kafka_controller_kafkacontroller_globaltopiccount"),
        1.0
    );
    assert_eq!(
        value("kafka_controller_kafkacontroller_globalpartitioncount"),
        1.0
    );
    assert_eq!(
        value("kafka_controller_kafkacontroller_offlinepartitionscount"),
        0.0
    );
    assert_eq!(
        value("kafka_controller_kafkacontroller_preferredreplicaimbalancecount"),
        0.0
    );
    assert_eq!(
        value("kafka_controller_controllerstats_uncleanleaderelections_total"),
        0.0
    );
    assert!(
        all.contains_key(
            "kafka_controller_controllerstats_leaderelectionrateandtimems_count_total"
        ),
        "the timer served from the start:\n{text}"
    );
    // A single broker's ISR never changes, it follows nothing, and no produce waits now.
    for series in [
        "kafka_server_replicamanager_isrshrinks_total",
        "kafka_server_replicamanager_isrexpands_total",
        "kafka_server_replicamanager_failedisrupdates_total",
        "kafka_server_replicafetchermanager_maxlag{clientId=\"Replica\"}",
        "kafka_server_replicafetchermanager_minfetchrate{clientId=\"Replica\"}",
        "kafka_server_delayedoperationpurgatory_purgatorysize{delayedOperation=\"Produce\"}",
    ] {
        assert_eq!(value(series), 0.0, "{series}");
    }
    // kcat's last long poll may still wait out its max wait after kcat went.
    assert!(
        value(
            "kafka_server_delayedoperationpurgatory_numdelayedoperations{delayedOperation=\"Fetch\"}"
        ) <= 1.0
    );
    assert!(value("process_open_fds") >= 3.0);
    assert!(value("process_cpu_seconds_total") > 0.0);

    assert_families_are_kafkas(&text, "kafka-3.9.1-series.txt");
}

/// Every family in `text` is one Kafka 3.9.1 serves under the same rules (the capture
/// `fixture`), with the same TYPE and label names.
fn assert_families_are_kafkas(text: &str, fixture: &str) {
    let kafka = kafka_families(fixture);
    for (name, (kind, label_sets)) in families(text) {
        if name.starts_with("process_") {
            continue; // the Java client's, not an MBean's (checked above)
        }
        let (kafka_kind, kafka_labels) = kafka
            .get(&name)
            .unwrap_or_else(|| panic!("{name} is not a family Kafka 3.9.1 serves"));
        assert_eq!(&kind, kafka_kind, "{name}'s TYPE");
        for labels in label_sets {
            assert!(
                kafka_labels
                    .split(' ')
                    .any(|set| set == format!("{{{labels}}}")),
                "{name} labelled {{{labels}}}, Kafka's: {kafka_labels}"
            );
        }
    }
}

/// A broker on a real ZooKeeper serves its client's latency and session states, and is the
/// controller of its one-broker cluster.
#[test]
fn serve_metrics_with_zookeeper_serve_the_clients_latency_and_session_states() {
    let _one = crate::support::cluster::exclusive();
    let zk = ZkServer::start();
    let connect = zk.connect_string();
    let broker = TestBroker::start(&[
        ("zookeeper.connect", &connect),
        ("broker.id", "1"),
        ("kcli.metrics.listener", "127.0.0.1:{port2}"),
    ]);
    kcat(&broker, &["-P", "-t", "z", "-X", "acks=all"], b"one\ntwo\n");
    let deadline = Instant::now() + LIMIT;
    let text = loop {
        let (_, text) = scrape(broker.port2());
        let all = samples(&text);
        if all.get("kafka_controller_kafkacontroller_globaltopiccount") == Some(&1.0)
            || Instant::now() > deadline
        {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let all = samples(&text);
    let value = |series: &str| {
        *all.get(series)
            .unwrap_or_else(|| panic!("{series} missing from:\n{text}"))
    };
    assert!(
        value("kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count_total") > 10.0,
        "every znode read and write is timed"
    );
    assert!(all.contains_key(
        "kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms{quantile=\"0.99\"}"
    ));
    assert_eq!(
        value("kafka_server_sessionexpirelistener_zookeepersyncconnects_total"),
        1.0
    );
    for series in [
        "kafka_server_sessionexpirelistener_zookeeperdisconnects_total",
        "kafka_server_sessionexpirelistener_zookeeperexpires_total",
        "kafka_server_sessionexpirelistener_zookeeperauthfailures_total",
    ] {
        assert_eq!(value(series), 0.0, "{series}");
    }
    assert_eq!(
        value("kafka_controller_kafkacontroller_activecontrollercount"),
        1.0
    );
    assert_eq!(
        value("kafka_controller_kafkacontroller_globalpartitioncount"),
        1.0
    );
    assert_families_are_kafkas(&text, "kafka-3.9.1-series.txt");
}

#[test]
fn serve_metrics_listener_is_refused_when_it_is_not_host_port() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("serve")
        .arg("--override")
        .arg(format!("listeners=PLAINTEXT://127.0.0.1:{}", free_port()))
        .arg("--override")
        .arg(format!("log.dirs={}", dir.path().display()))
        .arg("--override")
        .arg("kcli.metrics.listener=nowhere");
    let (code, _, err) = run_within(cmd, b"", LIMIT);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("kcli.metrics.listener") && err.contains("nowhere"),
        "{err}"
    );
}

#[test]
fn serve_metrics_take_the_rules_of_the_teams_own_exporter_config() {
    let rules = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/metrics/confluent-kafka_broker.yml"
    );
    let broker = TestBroker::start(&[
        ("kcli.metrics.listener", "127.0.0.1:{port2}"),
        ("kcli.metrics.jmx.exporter.config", rules),
    ]);
    let records: String = (0..40).map(|i| format!("c{i}\n")).collect();
    kcat(
        &broker,
        &["-P", "-t", "c", "-X", "acks=all"],
        records.as_bytes(),
    );
    let (status, text) = scrape(broker.port2());
    assert_eq!(status, "HTTP/1.1 200 OK");
    let all = samples(&text);
    // Confluent's rules keep `PerSec`, add no `_total` and leave the family untyped.
    assert_eq!(
        all.get("kafka_server_brokertopicmetrics_messagesinpersec{topic=\"c\"}"),
        Some(&40.0),
        "{text}"
    );
    assert!(text.contains("# TYPE kafka_server_brokertopicmetrics_messagesinpersec untyped\n"));
    assert_families_are_kafkas(&text, "kafka-3.9.1-series-confluent.txt");

    // A config that is not one refuses the start, naming the key and the file.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yml");
    std::fs::write(&bad, "rules:\n- pattern: \"(unclosed\"\n").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("serve")
        .arg("--override")
        .arg(format!("listeners=PLAINTEXT://127.0.0.1:{}", free_port()))
        .arg("--override")
        .arg(format!("log.dirs={}", dir.path().join("data").display()))
        .arg("--override")
        .arg(format!("kcli.metrics.listener=127.0.0.1:{}", free_port()))
        .arg("--override")
        .arg(format!(
            "kcli.metrics.jmx.exporter.config={}",
            bad.display()
        ));
    let (code, _, err) = run_within(cmd, b"", LIMIT);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("kcli.metrics.jmx.exporter.config") && err.contains("bad.yml"),
        "{err}"
    );
}

/// Every API's response counts its errors as Kafka's `errorCounts()` does (here CreateTopics
/// and Metadata, besides Produce and Fetch), and a request of a version Kafka 3.9 deprecates
/// counts under DeprecatedRequestsPerSec with the client software its connection named.
#[test]
fn serve_metrics_count_every_apis_errors_and_the_deprecated_requests_by_client_software() {
    use kcli::protocol::codec::StrBytes;
    use kcli::protocol::messages::api_versions_request::ApiVersionsRequest;
    use kcli::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
    use kcli::protocol::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
    use kcli::protocol::messages::{RequestKind, ResponseKind};

    let broker = TestBroker::start(&[("kcli.metrics.listener", "127.0.0.1:{port2}")]);
    let mut conn = KafkaConn::connect(broker.port());
    let versions = RequestKind::ApiVersions(ApiVersionsRequest {
        client_software_name: StrBytes::from("kcli-it"),
        client_software_version: StrBytes::from("0.1"),
        ..Default::default()
    });
    let ResponseKind::ApiVersions(answer) = conn.call(&versions, 3) else {
        unreachable!()
    };
    assert_eq!(answer.error_code, 0);
    create_topic_with(&mut conn, "e", 2, &[]);
    let again = RequestKind::CreateTopics(CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: StrBytes::from("e"),
            num_partitions: 1,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    });
    let ResponseKind::CreateTopics(answer) = conn.call(&again, 7) else {
        unreachable!()
    };
    assert_eq!(answer.topics[0].error_code, 36, "TOPIC_ALREADY_EXISTS");
    // Metadata v1 (deprecated: 0-3), twice: the topic and its two partitions count NONE.
    let metadata = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(StrBytes::from("e")),
            ..Default::default()
        }]),
        ..Default::default()
    });
    for _ in 0..2 {
        let ResponseKind::Metadata(answer) = conn.call(&metadata, 1) else {
            unreachable!()
        };
        assert_eq!(answer.topics[0].partitions.len(), 2);
    }

    // Strimzi's two-pair per-second rule takes the first three of the four tags as one label
    // name, as the javaagent does (see jmx_exporter's tests).
    let deprecated = concat!(
        "kafka_network_requestmetrics_deprecatedrequests_total{clientSoftwareVersion=\"0.1\",",
        "request_Metadata_version_1_clientSoftwareName=\"kcli-it\"}"
    );
    let deadline = Instant::now() + LIMIT;
    let text = loop {
        let (_, text) = scrape(broker.port2());
        // A request is recorded once its answer was written, which the scrape may overtake.
        if samples(&text).get(deprecated) == Some(&2.0) || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let all = samples(&text);
    let value = |series: &str| {
        *all.get(series)
            .unwrap_or_else(|| panic!("{series} missing from:\n{text}"))
    };
    let errors = |request: &str, error: &str| {
        value(&format!(
            "kafka_network_requestmetrics_errors_total{{error=\"{error}\",request=\"{request}\"}}"
        ))
    };
    assert_eq!(errors("CreateTopics", "TOPIC_ALREADY_EXISTS"), 1.0);
    assert_eq!(errors("CreateTopics", "NONE"), 1.0);
    assert_eq!(
        errors("Metadata", "NONE"),
        6.0,
        "a topic and 2 partitions, twice"
    );
    assert_eq!(errors("ApiVersions", "NONE"), 1.0);
    assert_eq!(value(deprecated), 2.0);
    // The versions Kafka does not deprecate are not counted.
    assert!(
        !all.keys()
            .any(|k| k.contains("deprecatedrequests") && !k.contains("version_1_")),
        "{text}"
    );
}
