//! The controller mutation quota (KIP-599) on `kcli serve`, set with Kafka 3.9.1's
//! `kafka-configs --entity-type clients --add-config controller_mutation_rate=N`: raw
//! CreateTopics v6 (strict) over the burst gets THROTTLING_QUOTA_EXCEEDED for the topics past
//! it, with the throttle time in the response and the connection muted for it; v5
//! (permissive) creates every topic and is only throttled; DeleteTopics v5 and CreatePartitions
//! v3 are refused while the bucket is in debt. Kafka 3.9.1's Java Admin client, which retries
//! THROTTLING_QUOTA_EXCEEDED by default, creates a burst over its quota without an error in
//! about the time the quota implies, and without retries sees ThrottlingQuotaExceededException.

use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::create_partitions_request::{
    CreatePartitionsRequest, CreatePartitionsTopic,
};
use kcli::protocol::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
use kcli::protocol::messages::delete_topics_request::DeleteTopicsRequest;
use kcli::protocol::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
use kcli::protocol::messages::{RequestKind, ResponseKind};
use tempfile::TempDir;

use crate::serve_clients::drivers::run_java_driver;
use crate::serve_support::{KafkaConn, TestBroker};
use crate::users::kafka_configs;

/// The client id of [`KafkaConn`]'s requests.
const RAW_CLIENT: &str = "kcli-serve-test";
const THROTTLING_QUOTA_EXCEEDED: i16 = 89;

fn set_mutation_rate(broker: &TestBroker, client: &str, rate: &str) {
    let (code, out, err) = kafka_configs(&[
        "--bootstrap-server",
        &broker.bootstrap(),
        "--alter",
        "--entity-type",
        "clients",
        "--entity-name",
        client,
        "--add-config",
        &format!("controller_mutation_rate={rate}"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

fn create_topics(names: &[String]) -> RequestKind {
    RequestKind::CreateTopics(CreateTopicsRequest {
        topics: names
            .iter()
            .map(|name| CreatableTopic {
                name: StrBytes::from(name.as_str()),
                num_partitions: 1,
                replication_factor: 1,
                ..Default::default()
            })
            .collect(),
        timeout_ms: 10_000,
        ..Default::default()
    })
}

fn names(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}{i}")).collect()
}

#[test]
fn controller_mutation_rate_refuses_strict_requests_over_the_burst_and_throttles_the_rest() {
    let broker = TestBroker::start(&[]);
    // 1 partition per second for the raw client: a burst of 11 (11 one-second samples).
    set_mutation_rate(&broker, RAW_CLIENT, "1");
    set_mutation_rate(&broker, "java-retry", "2");
    set_mutation_rate(&broker, "java-no-retry", "2");
    let mut conn = KafkaConn::connect(broker.port());

    // CreateTopics v6 with 40 topics until the quota is in force (kafka-configs returns before
    // the broker has read the change): the first answer that refuses some is the one to check;
    // until then no quota is configured and nothing was counted.
    let deadline = Instant::now() + Duration::from_secs(15);
    let (response, burst) = (0..)
        .find_map(|round| {
            assert!(Instant::now() < deadline, "the quota never refused a topic");
            let burst = names(&format!("burst{round}-"), 40);
            let ResponseKind::CreateTopics(r) = conn.call(&create_topics(&burst), 6) else {
                unreachable!()
            };
            r.topics
                .iter()
                .any(|t| t.error_code != 0)
                .then_some((r, burst))
        })
        .unwrap();
    let accepted: Vec<String> = response
        .topics
        .iter()
        .filter(|t| t.error_code == 0)
        .map(|t| t.name.to_string_lossy().into_owned())
        .collect();
    let refused: Vec<String> = response
        .topics
        .iter()
        .filter(|t| t.error_code != 0)
        .map(|t| t.name.to_string_lossy().into_owned())
        .collect();
    // The burst and the one topic that finds the bucket at zero or more, then what refills
    // meanwhile (one a second).
    assert!(accepted.len() >= 12, "{response:?}");
    assert_eq!(accepted, burst[..accepted.len()], "{response:?}");
    for t in response.topics.iter().filter(|t| t.error_code != 0) {
        assert_eq!(t.error_code, THROTTLING_QUOTA_EXCEEDED, "{t:?}");
        assert_eq!(
            t.error_message, None,
            "Kafka sends the code's own message as null"
        );
        assert_eq!(t.num_partitions, -1, "{t:?}");
    }
    // The bucket is less than one token in debt: under a second to refill.
    let throttle = response.throttle_time_ms;
    assert!(throttle > 0 && throttle <= 1_000, "{response:?}");

    // The connection is muted for the throttle time: the next answer waits for it. None of the
    // refused topics exists.
    let sent = Instant::now();
    let metadata = RequestKind::Metadata(MetadataRequest {
        topics: Some(
            refused
                .iter()
                .map(|n| MetadataRequestTopic {
                    name: Some(StrBytes::from(n.as_str())),
                    ..Default::default()
                })
                .collect(),
        ),
        allow_auto_topic_creation: false,
        ..Default::default()
    });
    let ResponseKind::Metadata(md) = conn.call(&metadata, 12) else {
        unreachable!()
    };
    let waited = sent.elapsed();
    assert!(
        waited >= Duration::from_millis(u64::try_from(throttle).unwrap().saturating_sub(100)),
        "answered after {waited:?} while muted for {throttle} ms"
    );
    assert!(md.topics.iter().all(|t| t.error_code == 3), "{md:?}");

    // v5 is permissive: every topic is created, and the debt is the throttle time.
    let permissive = names("permissive-", 8);
    let ResponseKind::CreateTopics(r) = conn.call(&create_topics(&permissive), 5) else {
        unreachable!()
    };
    assert!(r.topics.iter().all(|t| t.error_code == 0), "{r:?}");
    assert!(
        (4_000..=10_000).contains(&r.throttle_time_ms),
        "8 partitions of debt at 1/s: {r:?}"
    );

    // Strict DeleteTopics (v5) and CreatePartitions (v3) are refused while in debt; a new
    // connection is not muted, the client id's bucket is the same.
    let mut other = KafkaConn::connect(broker.port());
    let delete = RequestKind::DeleteTopics(DeleteTopicsRequest {
        topic_names: vec![StrBytes::from(permissive[0].as_str())],
        timeout_ms: 10_000,
        ..Default::default()
    });
    let ResponseKind::DeleteTopics(d) = other.call(&delete, 5) else {
        unreachable!()
    };
    assert_eq!(
        d.responses[0].error_code, THROTTLING_QUOTA_EXCEEDED,
        "{d:?}"
    );
    assert!(d.throttle_time_ms > 0, "{d:?}");
    let grow = RequestKind::CreatePartitions(CreatePartitionsRequest {
        topics: vec![CreatePartitionsTopic {
            name: StrBytes::from(permissive[1].as_str()),
            count: 3,
            assignments: None,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    });
    let mut third = KafkaConn::connect(broker.port());
    let ResponseKind::CreatePartitions(p) = third.call(&grow, 3) else {
        unreachable!()
    };
    assert_eq!(p.results[0].error_code, THROTTLING_QUOTA_EXCEEDED, "{p:?}");
    assert_eq!(p.results[0].error_message, None, "{p:?}");

    // The Java Admin client without retries: the topics past the burst (2/s: 22, and one)
    // fail with ThrottlingQuotaExceededException.
    let scratch = TempDir::new().unwrap();
    let s = run_java_driver(
        "MutationQuotaCheck",
        &[
            &broker.bootstrap(),
            "java-no-retry",
            "jn-",
            "30",
            "no-retry",
        ],
        scratch.path(),
    );
    let created = s["created"].as_i64().unwrap();
    let throttled = s["throttled"].as_i64().unwrap();
    assert_eq!(created + throttled, 30, "{s}");
    assert!(created >= 23 && throttled >= 1, "{s}");
    assert!(s["max_throttle_ms"].as_i64().unwrap() > 0, "{s}");

    // With its default retries, 40 topics at 2/s from a full bucket of 22: the last one is
    // accepted once 39 - 22 = 17 tokens have refilled, 8.5 s in, and none fails.
    let s = run_java_driver(
        "MutationQuotaCheck",
        &[&broker.bootstrap(), "java-retry", "jr-", "40", "retry"],
        scratch.path(),
    );
    assert_eq!(s["created"], 40, "{s}");
    let elapsed = s["elapsed_ms"].as_i64().unwrap();
    assert!(
        (8_000..=15_000).contains(&elapsed),
        "40 topics at 2/s past a burst of 22 took {elapsed} ms: {s}"
    );
}
