//! The network metrics' recording and readings, with made-up instants (no clock read).

use std::collections::BTreeSet;

use super::*;

fn metrics() -> (Arc<NetworkMetrics>, mpsc::Sender<QueuedRequest>) {
    let (tx, _rx) = mpsc::channel(4);
    let names = ["PLAINTEXT".to_string(), "INTERNAL".to_string()];
    (Arc::new(NetworkMetrics::new(&names, tx.downgrade(), 2)), tx)
}

fn collect(metrics: &NetworkMetrics) -> Vec<MetricSample> {
    let mut out = Vec::new();
    metrics.collect(&mut out);
    out
}

fn find<'a>(samples: &'a [MetricSample], mbean: &str) -> Option<&'a Reading> {
    samples
        .iter()
        .find(|s| s.mbean.to_string() == mbean)
        .map(|s| &s.reading)
}

fn count(samples: &[MetricSample], mbean: &str) -> u64 {
    match find(samples, mbean) {
        Some(Reading::Meter(m)) => m.count,
        Some(Reading::Histogram(h)) => h.count,
        other => panic!("{mbean}: {other:?}"),
    }
}

/// A request of 120 bytes received at 0 ms, dequeued at 2, handled by 5, answered by 12
/// (remote 7), written from 13 to 16.
fn times() -> RequestTimes {
    let t0 = Instant::now();
    let at = |ms| t0 + Duration::from_millis(ms);
    RequestTimes {
        received: t0,
        dequeued: at(2),
        local_done: at(5),
        response_done: at(12),
        send_start: at(13),
        sent: at(16),
        request_bytes: 120,
    }
}

#[test]
fn a_request_counts_under_its_version_with_kafkas_time_breakdown() {
    let (m, _tx) = metrics();
    m.record_request(ApiKey::Produce as i16, 9, Kind::Plain, &times());
    m.record_request(ApiKey::Produce as i16, 9, Kind::Plain, &times());
    m.record_request(ApiKey::Produce as i16, 11, Kind::Plain, &times());
    let out = collect(&m);
    let rm = "kafka.network:type=RequestMetrics";
    assert_eq!(
        count(
            &out,
            &format!("{rm},name=RequestsPerSec,request=Produce,version=9")
        ),
        2
    );
    assert_eq!(
        count(
            &out,
            &format!("{rm},name=RequestsPerSec,request=Produce,version=11")
        ),
        1
    );
    assert!(
        find(
            &out,
            &format!("{rm},name=RequestsPerSec,request=Produce,version=3")
        )
        .is_none()
    );
    for (name, ms) in [
        ("RequestQueueTimeMs", 2.0),
        ("LocalTimeMs", 3.0),
        ("RemoteTimeMs", 7.0),
        ("ResponseQueueTimeMs", 1.0),
        ("ResponseSendTimeMs", 3.0),
        ("TotalTimeMs", 16.0),
        ("RequestBytes", 120.0),
    ] {
        let Some(Reading::Histogram(h)) = find(&out, &format!("{rm},name={name},request=Produce"))
        else {
            panic!("{name} missing");
        };
        assert_eq!(h.count, 3, "{name}");
        assert!((h.max - ms).abs() <= ms / 4.0, "{name}: {h:?}");
    }
    // Unknown keys and versions past the table are ignored, never a panic.
    m.record_request(-1, 0, Kind::Plain, &times());
    m.record_request(ApiKey::Produce as i16, i16::MAX, Kind::Plain, &times());
    m.record_request(i16::MAX, -5, Kind::Plain, &times());
}

#[test]
fn fetches_count_under_their_kind_and_fetch_and_verifications_apart() {
    let (m, _tx) = metrics();
    let fetch = ApiKey::Fetch as i16;
    m.record_request(fetch, 17, Kind::FetchFollower, &times());
    m.record_request(fetch, 17, Kind::FetchConsumer, &times());
    m.record_request(fetch, 16, Kind::FetchConsumer, &times());
    m.record_request(
        ApiKey::AddPartitionsToTxn as i16,
        5,
        Kind::Verification,
        &times(),
    );
    let out = collect(&m);
    let rm = "kafka.network:type=RequestMetrics";
    let total = |request: &str| count(&out, &format!("{rm},name=TotalTimeMs,request={request}"));
    assert_eq!(total("Fetch"), 3);
    assert_eq!(total("FetchFollower"), 1);
    assert_eq!(total("FetchConsumer"), 2);
    assert_eq!(total("AddPartitionsToTxnVerification"), 1);
    assert_eq!(total("AddPartitionsToTxn"), 0);
    assert_eq!(
        count(
            &out,
            &format!("{rm},name=RequestsPerSec,request=FetchConsumer,version=16")
        ),
        1
    );
}

#[test]
fn the_recorder_carries_the_kind_of_one_request_and_counts_errors() {
    let (m, _tx) = metrics();
    let recorder = RequestRecorder::new(Arc::clone(&m), 0);
    assert_eq!(recorder.take_kind(), Kind::Plain);
    recorder.fetch_from_follower(true);
    assert_eq!(recorder.take_kind(), Kind::FetchFollower);
    assert_eq!(
        recorder.take_kind(),
        Kind::Plain,
        "reset for the next request"
    );
    recorder.fetch_from_follower(false);
    assert_eq!(recorder.clone().take_kind(), Kind::FetchConsumer);
    recorder.verify_only();
    assert_eq!(recorder.take_kind(), Kind::Verification);

    recorder.errors(ApiKey::Produce, 0, 3);
    recorder.errors(ApiKey::Produce, ErrorCode::NotLeaderOrFollower.code(), 2);
    recorder.errors(ApiKey::Fetch, -1, 1);
    recorder.errors(ApiKey::Fetch, i16::MAX, 1); // no such code: ignored
    recorder.errors(ApiKey::Fetch, -7, 1);
    let out = collect(&m);
    let errors = "kafka.network:type=RequestMetrics,name=ErrorsPerSec";
    assert_eq!(
        count(&out, &format!("{errors},request=Produce,error=NONE")),
        3
    );
    assert_eq!(
        count(
            &out,
            &format!("{errors},request=Produce,error=NOT_LEADER_OR_FOLLOWER")
        ),
        2
    );
    assert_eq!(
        count(
            &out,
            &format!("{errors},request=Fetch,error=UNKNOWN_SERVER_ERROR")
        ),
        1
    );
    let error_series = out
        .iter()
        .filter(|s| s.mbean.to_string().starts_with(errors))
        .count();
    assert_eq!(error_series, 3, "only errors seen are served");

    // A detached recorder (no connection) records nothing and does not panic.
    let detached = RequestRecorder::default();
    detached.fetch_from_follower(true);
    detached.errors(ApiKey::Produce, 0, 1);
    assert_eq!(detached.take_kind(), Kind::Plain);
}

#[test]
fn request_types_are_kafka_3_9s_for_a_zookeeper_broker() {
    // The request names of a real Kafka 3.9.1 broker's TotalTimeMs MBeans.
    let mbeans = include_str!("../../../tests/fixtures/metrics/kafka-3.9.1-strimzi-mbeans.txt");
    let kafka: BTreeSet<&str> = mbeans
        .lines()
        .filter_map(|l| {
            l.strip_prefix("M\tkafka.network\ttype=RequestMetrics,name=TotalTimeMs,request=")
        })
        .collect();
    let (m, _tx) = metrics();
    let out = collect(&m);
    let ours: BTreeSet<String> = out
        .iter()
        .filter(|s| s.mbean.to_string().contains("name=TotalTimeMs,"))
        .filter_map(|s| s.mbean.properties.iter().find(|(k, _)| *k == "request"))
        .map(|(_, v)| v.clone())
        .collect();
    let ours: BTreeSet<&str> = ours.iter().map(String::as_str).collect();
    assert_eq!(ours, kafka);
    // Nothing counted yet: no RequestsPerSec or ErrorsPerSec MBean.
    assert!(
        !out.iter()
            .any(|s| s.mbean.to_string().contains("PerSec,request"))
    );
}

#[test]
fn connections_count_per_listener_with_rates_over_two_samples() {
    let (m, _tx) = metrics();
    for _ in 0..6 {
        m.connection_created(0);
    }
    m.connection_closed(0);
    m.connection_created(1);
    m.connection_created(9); // no such listener: ignored
    let listener = &m.listeners[0];
    let t0 = listener.samples.lock().unwrap()[0].start;
    let attrs = |now| listener.attributes(now);
    // Within the first 30 s the rate is over 30 s, as Kafka's with one sample.
    assert_eq!(
        attrs(t0 + Duration::from_secs(10)),
        vec![
            ("connection-close-rate", 1.0 / 30.0),
            ("connection-close-total", 1.0),
            ("connection-count", 5.0),
            ("connection-creation-rate", 6.0 / 30.0),
            ("connection-creation-total", 6.0),
        ]
    );
    // A sample starts at 30 s; at 45 s the rate is still over all 45 s.
    listener.tick(t0 + Duration::from_secs(30));
    assert_eq!(attrs(t0 + Duration::from_secs(45))[3].1, 6.0 / 45.0);
    // At 60 s the first sample is dropped: nothing since 30 s.
    for _ in 0..3 {
        m.connection_closed(0);
    }
    listener.tick(t0 + Duration::from_secs(60));
    let later = attrs(t0 + Duration::from_secs(66));
    assert_eq!(later[0], ("connection-close-rate", 3.0 / 36.0));
    assert_eq!(later[2], ("connection-count", 2.0));
    assert_eq!(later[3], ("connection-creation-rate", 0.0));

    let out = collect(&m);
    let group = "kafka.server:type=socket-server-metrics";
    assert!(
        find(
            &out,
            &format!("{group},listener=PLAINTEXT,networkProcessor=0")
        )
        .is_some()
    );
    assert!(
        find(
            &out,
            &format!("{group},listener=INTERNAL,networkProcessor=0")
        )
        .is_some()
    );
}

#[test]
fn queues_and_handler_idle_time() {
    let (m, tx) = metrics();
    m.response_queued(1);
    m.response_queued(1);
    m.response_queued(-1);
    let t0 = m.created;
    m.handler_waiting(0, t0);
    m.handler_woke(0, t0 + Duration::from_secs(4));
    // Handler 1 still waits: the ticker counts its wait so far, and only once.
    m.handler_waiting(1, t0 + Duration::from_secs(1));
    m.flush_idle(t0 + Duration::from_secs(3));
    m.flush_idle(t0 + Duration::from_secs(3));
    m.handler_woke(1, t0 + Duration::from_secs(3));
    let out = collect(&m);
    let gauge = |mbean: &str| match find(&out, mbean) {
        Some(Reading::Gauge(v)) => *v,
        other => panic!("{mbean}: {other:?}"),
    };
    assert_eq!(
        gauge("kafka.network:type=RequestChannel,name=RequestQueueSize"),
        0.0
    );
    assert_eq!(
        gauge("kafka.network:type=RequestChannel,name=ResponseQueueSize"),
        1.0
    );
    // Two handler tasks: 4 s and 2 s of their idle time are 3 s of the pool's, in nanoseconds.
    let Some(Reading::Meter(idle)) = find(
        &out,
        "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent",
    ) else {
        panic!("no RequestHandlerAvgIdlePercent");
    };
    assert_eq!(idle.count, 3_000_000_000);
    drop(tx);
}

#[test]
fn error_names_and_request_headers() {
    assert_eq!(error_name(ErrorCode::None), "NONE");
    assert_eq!(
        error_name(ErrorCode::CoordinatorLoadInProgress),
        "COORDINATOR_LOAD_IN_PROGRESS"
    );
    assert_eq!(api_of(&[0, 1, 0, 17, 0, 0]), Some((1, 17)));
    assert_eq!(api_of(&[0, 1, 0]), None);
}

#[test]
fn an_acceptor_waiting_for_a_slot_counts_its_blocked_time_per_listener() {
    let (metrics, _tx) = metrics();
    metrics.acceptor_blocked(0, Duration::from_millis(1500));
    let samples = collect(&metrics);
    let mbean = "kafka.network:type=Acceptor,name=AcceptorBlockedPercent,listener=PLAINTEXT";
    assert_eq!(count(&samples, mbean), 1_500_000_000);
    let other = find(
        &samples,
        "kafka.network:type=Acceptor,name=AcceptorBlockedPercent,listener=INTERNAL",
    );
    assert!(
        matches!(other, Some(Reading::Meter(m)) if m.count == 0),
        "{other:?}"
    );
}

#[test]
fn connections_count_by_the_client_software_they_named() {
    let (metrics, _tx) = metrics();
    let connections = |samples: &[MetricSample], name: &str, version: &str| {
        let mbean = format!(
            "kafka.server:type=socket-server-metrics,clientSoftwareName={name},\
             clientSoftwareVersion={version},listener=PLAINTEXT,networkProcessor=0"
        );
        match find(samples, &mbean) {
            Some(Reading::KafkaMetrics(a)) => a[0].1,
            None => 0.0,
            other => panic!("{other:?}"),
        }
    };
    let first = RequestRecorder::new(Arc::clone(&metrics), 0);
    let second = RequestRecorder::new(Arc::clone(&metrics), 0);
    assert_eq!(connections(&collect(&metrics), "unknown", "unknown"), 2.0);
    first.client_software("apache-kafka-java", "3.9.1");
    // An ApiVersions below v3 names nothing: `unknown`, as Kafka's ClientInformation.
    second.client_software("", "");
    let samples = collect(&metrics);
    assert_eq!(connections(&samples, "unknown", "unknown"), 1.0);
    assert_eq!(connections(&samples, "apache-kafka-java", "3.9.1"), 1.0);
    drop(first);
    drop(second);
    let samples = collect(&metrics);
    assert_eq!(connections(&samples, "apache-kafka-java", "3.9.1"), 0.0);
    assert_eq!(connections(&samples, "unknown", "unknown"), 0.0);
}

#[test]
fn requests_of_a_deprecated_version_count_by_the_client_software_of_their_connection() {
    let (metrics, _tx) = metrics();
    let recorder = RequestRecorder::new(Arc::clone(&metrics), 0);
    let deprecated = "kafka.network:type=RequestMetrics,name=DeprecatedRequestsPerSec";
    // Metadata 0-3 and Fetch 0-3 are deprecated in 3.9; Metadata 4 and Produce 9 are not.
    metrics.record_deprecated(ApiKey::Metadata as i16, 1, Kind::Plain, &recorder);
    recorder.client_software("kafka-python", "2.0.2");
    metrics.record_deprecated(ApiKey::Metadata as i16, 1, Kind::Plain, &recorder);
    metrics.record_deprecated(ApiKey::Metadata as i16, 1, Kind::Plain, &recorder);
    metrics.record_deprecated(ApiKey::Metadata as i16, 4, Kind::Plain, &recorder);
    metrics.record_deprecated(ApiKey::Produce as i16, 9, Kind::Plain, &recorder);
    metrics.record_deprecated(ApiKey::Fetch as i16, 3, Kind::FetchConsumer, &recorder);
    metrics.record_deprecated(i16::MAX, 0, Kind::Plain, &recorder);
    let out = collect(&metrics);
    let software = "clientSoftwareName=kafka-python,clientSoftwareVersion=2.0.2";
    assert_eq!(
        count(
            &out,
            &format!(
                "{deprecated},request=Metadata,version=1,clientSoftwareName=unknown,\
                 clientSoftwareVersion=unknown"
            )
        ),
        1
    );
    assert_eq!(
        count(
            &out,
            &format!("{deprecated},request=Metadata,version=1,{software}")
        ),
        2
    );
    for name in ["Fetch", "FetchConsumer"] {
        assert_eq!(
            count(
                &out,
                &format!("{deprecated},request={name},version=3,{software}")
            ),
            1
        );
    }
    let series = out
        .iter()
        .filter(|s| s.mbean.to_string().starts_with(deprecated))
        .count();
    assert_eq!(series, 4, "only deprecated versions are counted");
}
