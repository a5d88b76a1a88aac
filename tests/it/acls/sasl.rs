//! SASL users and ACLs together, configured as Kafka is: three kcli brokers on a real ZooKeeper
//! whose inter-broker listener is SASL_PLAINTEXT with SCRAM-SHA-512 (the brokers log in as
//! `kafka-broker`, a super user), the authorizer on. SCRAM users made by Kafka's
//! `ConfigCommand`, a PLAIN user from the listener's JAAS config, ACLs added with
//! `kcli acls --zookeeper`.
//!
//! - `alice` (SCRAM-SHA-512), allowed to write and read the `orders-` topics, produces and reads
//!   back with kcat, confluent-kafka and the Java client (kafka-clients 3.9.1, idempotent);
//!   `carol` (PLAIN) likewise with kafka-python pinned to `api_version=(0,10,1)` (unframed SASL
//!   after SaslHandshake v0).
//! - `bob`, authenticated but without ACLs, gets TOPIC_AUTHORIZATION_FAILED from each client,
//!   and nothing is written.
//! - A wrong password fails authentication.
//! - An ACL granting bob Write takes effect on every broker within 5 s: each broker's Metadata
//!   answers him for the topic, and his produce is acknowledged.
//!
//! The PLAINTEXT listener beside it serves the test's own setup and reads (`User:ANONYMOUS` is
//! a super user there), as an operator's admin listener would.

use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
use kcli::protocol::messages::{RequestKind, ResponseKind};
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};

use super::{ACL_AUTHORIZER, acls_ok, rows};
use crate::cluster::create_topic;
use crate::serve_clients::drivers::run_java_driver;
use crate::serve_sasl_clients::{
    PLAIN_JAAS, add_scram_user, kcat_round_trip, kcat_run, sasl_bootstrap, sasl_check,
    scram_connect,
};
use crate::serve_support::TestBroker;
use crate::support::cluster::{TestCluster, wait_until};

/// Within this every broker has applied an ACL change (the bound).
const PROPAGATION: Duration = Duration::from_secs(5);
/// Kafka's TOPIC_AUTHORIZATION_FAILED.
const TOPIC_AUTHORIZATION_FAILED: i16 = 29;

/// The topic's log end offset of partition 0, read as the super user over PLAINTEXT.
fn log_end(bootstrap: &str, topic: &str) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let (_, high) = consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(20))
        .unwrap();
    high
}

/// The error code bob's Metadata request for `topic` gets from `broker`.
fn metadata_error_as_bob(broker: &TestBroker, topic: &str) -> i16 {
    let mut conn = scram_connect(broker.port2(), "bob", "bob-secret").unwrap();
    let request = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(StrBytes::from(topic)),
            ..Default::default()
        }]),
        allow_auto_topic_creation: false,
        ..Default::default()
    });
    let ResponseKind::Metadata(r) = conn.call(&request, 9) else {
        panic!("no Metadata response");
    };
    r.topics[0].error_code
}

fn user_args<'a>(
    topic: &'a str,
    mechanism: &'a str,
    user: &'a str,
    password: &'a str,
) -> Vec<&'a str> {
    vec![
        "--topic",
        topic,
        "--mechanism",
        mechanism,
        "--username",
        user,
        "--password",
        password,
    ]
}

#[test]
fn sasl_users_are_authorized_by_acls_on_every_broker_of_a_sasl_cluster() {
    let overrides = [
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{port2}",
        ),
        ("inter.broker.listener.name", "SASL_PLAINTEXT"),
        ("sasl.enabled.mechanisms", "SCRAM-SHA-512,PLAIN"),
        ("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"),
        (
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"kafka-broker\" password=\"broker-secret\";",
        ),
        (
            "listener.name.sasl_plaintext.plain.sasl.jaas.config",
            PLAIN_JAAS,
        ),
        ("authorizer.class.name", ACL_AUTHORIZER),
        ("super.users", "User:kafka-broker;User:ANONYMOUS"),
        ("auto.create.topics.enable", "false"),
    ];
    let cluster = TestCluster::start_after(3, &overrides, |connect| {
        add_scram_user(connect, "kafka-broker", "broker-secret");
        add_scram_user(connect, "alice", "alice-secret");
        add_scram_user(connect, "bob", "bob-secret");
    });
    let connect = cluster.connect();
    let admin = cluster.bootstrap();
    for topic in ["orders-kcat", "orders-ck", "orders-kp", "orders-java"] {
        create_topic(&cluster, topic, 1, 3);
    }
    for (user, operations) in [
        ("User:alice", &["Write", "Read", "Create"][..]),
        ("User:carol", &["Write", "Read"][..]),
    ] {
        let mut args = vec![
            "add",
            "--topic",
            "orders-",
            "--resource-pattern-type",
            "prefixed",
            "--allow-principal",
            user,
            "--zookeeper",
            &connect,
        ];
        for operation in operations {
            args.extend(["--operation", operation]);
        }
        acls_ok(&args);
    }
    // confluent-kafka's consumer names a group, though it only assigns.
    acls_ok(&[
        "add",
        "--group",
        "sasl-check",
        "--resource-pattern-type",
        "prefixed",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Read",
        "--zookeeper",
        &connect,
    ]);
    // Every broker has the six ACLs before any client runs.
    for b in &cluster.brokers {
        let bootstrap = b.bootstrap();
        wait_until(
            &format!("broker {bootstrap} has the ACLs"),
            PROPAGATION,
            || {
                let out = acls_ok(&["list", "--bootstrap-server", &bootstrap, "--format", "json"]);
                (rows(&out, "listed").len() == 6).then_some(())
            },
        );
    }
    let via = &cluster.brokers[1];

    // Allowed users write and read, with every client.
    kcat_round_trip(via, "SCRAM-SHA-512", "alice", "alice-secret", "orders-kcat");
    let s = sasl_check(
        via,
        "confluent-kafka",
        &user_args("orders-ck", "SCRAM-SHA-512", "alice", "alice-secret"),
    );
    assert_eq!(s["consumed"], 20, "{s}");
    let mut kp = user_args("orders-kp", "PLAIN", "carol", "carol-secret");
    kp.extend(["--api-version", "0.10.1"]);
    let s = sasl_check(via, "kafka-python", &kp);
    assert_eq!(s["consumed"], 20, "{s}");
    // The Java client creates its topic (alice has Create on the prefix), then produces
    // idempotently (Write on a topic is enough for InitProducerId, KIP-679) and reads back.
    let java = run_java_driver(
        "SaslCheck",
        &[
            &sasl_bootstrap(via),
            "orders-java-new",
            "SCRAM-SHA-512",
            "alice",
            "alice-secret",
        ],
        via.scratch(),
    );
    assert_eq!(java["consumed"], 20, "{java}");

    // bob authenticates but may not write: every client is refused, nothing is written.
    let before: Vec<i64> = ["orders-kcat", "orders-ck", "orders-kp"]
        .iter()
        .map(|t| log_end(&admin, t))
        .collect();
    assert_eq!(before, [3, 20, 20]);
    let (code, _, err) = kcat_run(
        via,
        "SCRAM-SHA-512",
        "bob",
        "bob-secret",
        &["-P", "-t", "orders-kcat", "-X", "acks=all"],
        b"denied\n",
    );
    assert_ne!(code, 0, "kcat as bob was not refused");
    assert!(err.contains("authorization failed"), "{err}");
    let mut denied = user_args("orders-ck", "SCRAM-SHA-512", "bob", "bob-secret");
    denied.push("--expect-write-denied");
    let s = sasl_check(via, "confluent-kafka", &denied);
    assert_eq!(s["write_denied"], true, "{s}");
    let s = run_java_driver(
        "SaslCheck",
        &[
            &sasl_bootstrap(via),
            "orders-java",
            "SCRAM-SHA-512",
            "bob",
            "bob-secret",
            "denied",
        ],
        via.scratch(),
    );
    assert_eq!(s["write_denied"], true, "{s}");
    let after: Vec<i64> = ["orders-kcat", "orders-ck", "orders-kp"]
        .iter()
        .map(|t| log_end(&admin, t))
        .collect();
    assert_eq!(after, before, "a denied write reached a log");
    assert_eq!(log_end(&admin, "orders-java"), 0);

    // A wrong password fails authentication; the broker serves on.
    let mut wrong = user_args("orders-ck", "SCRAM-SHA-512", "alice", "not-her-password");
    wrong.push("--expect-auth-failure");
    let s = sasl_check(via, "confluent-kafka", &wrong);
    assert_eq!(s["auth_failed"], true, "{s}");

    // Granting bob Write reaches every broker within 5 s.
    for b in &cluster.brokers {
        assert_eq!(
            metadata_error_as_bob(b, "orders-ck"),
            TOPIC_AUTHORIZATION_FAILED
        );
    }
    acls_ok(&[
        "add",
        "--topic",
        "orders-ck",
        "--allow-principal",
        "User:bob",
        "--operation",
        "Write",
        "--zookeeper",
        &connect,
    ]);
    let granted = Instant::now();
    for b in &cluster.brokers {
        wait_until(
            &format!("broker on {} lets bob describe orders-ck", b.port2()),
            PROPAGATION.saturating_sub(granted.elapsed()),
            || (metadata_error_as_bob(b, "orders-ck") == 0).then_some(()),
        );
    }
    let (code, _, err) = kcat_run(
        via,
        "SCRAM-SHA-512",
        "bob",
        "bob-secret",
        &["-P", "-t", "orders-ck", "-p", "0", "-X", "acks=all"],
        b"granted\n",
    );
    assert_eq!(code, 0, "kcat as bob after the grant: {err}");
    assert_eq!(log_end(&admin, "orders-ck"), 21);
}
