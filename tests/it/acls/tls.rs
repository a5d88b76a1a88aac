//! Distinct users by TLS client certificate on one kcli broker with the authorizer on: an SSL
//! listener requiring client certificates for the users, a PLAINTEXT one for the admin
//! (`super.users=User:ANONYMOUS`). Prefixed topic ACLs added with `kcli acls
//! --bootstrap-server` (CreateAcls) let `User:CN=alice,...` produce through confluent-kafka,
//! her consumer refused GROUP_AUTHORIZATION_FAILED until she may Read its group;
//! `User:CN=bob,...` without ACLs gets TOPIC_AUTHORIZATION_FAILED and nothing of his reaches the
//! log; kcat over SSL likewise; removing alice's Write (DeleteAcls) refuses her next produce. Kafka's `AclCommand`
//! writing through ZooKeeper is enforced by a running broker; the idempotent Java producer
//! needs only Write on a topic (KIP-679).

use std::process::Command;
use std::time::Duration;

use super::{ACL_AUTHORIZER, acls_ok, kafka_acls, row, rows};
use crate::serve_support::{TestBroker, free_port, run_within};
use kcli::protocol::record::batch::RecordBatchHeader;

use crate::support::cluster::{log_batches, log_end_offset};
use crate::support::tls::{Identity, TestPki};
use crate::support::zookeeper::ZkServer;

const CLIENT_LIMIT: Duration = Duration::from_secs(60);
const ALICE: &str = "User:CN=alice,OU=eng,O=acme,C=US";
const BOB: &str = "User:CN=bob,OU=eng,O=acme,C=US";

/// confluent-kafka's round trip over SSL as `who`: (exit code, stderr).
fn round_trip(
    broker: &TestBroker,
    pki: &TestPki,
    who: &Identity,
    topic: &str,
    n: usize,
) -> (i32, String) {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(repo.join(".venv/bin/python"));
    cmd.arg(repo.join("tests/clients/ssl_round_trip.py"))
        .args(["--bootstrap", &broker.bootstrap(), "--topic", topic])
        .args(["--count", &n.to_string()])
        .args([
            "-X",
            "security.protocol=SSL",
            "-X",
            "message.timeout.ms=8000",
        ])
        .arg("-X")
        .arg(format!("ssl.ca.location={}", pki.ca_pem().display()))
        .arg("-X")
        .arg(format!("ssl.certificate.location={}", who.cert.display()))
        .arg("-X")
        .arg(format!("ssl.key.location={}", who.key.display()));
    let (code, out, err) = run_within(cmd, b"", CLIENT_LIMIT);
    if code == 0 {
        assert_eq!(out.trim(), format!("OK {n}"));
    }
    (code, err)
}

/// kcat producing `lines` to partition 0 of `topic` over SSL as `who` (acks=all): (exit code,
/// stderr).
fn kcat_produce(
    broker: &TestBroker,
    pki: &TestPki,
    who: &Identity,
    topic: &str,
    lines: &[u8],
) -> (i32, String) {
    let mut cmd = Command::new("kcat");
    // `cargo test` puts rdkafka-sys's build dir, whose librdkafka lacks OpenSSL, on
    // LD_LIBRARY_PATH; kcat must load the system's.
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["-b", &broker.bootstrap(), "-P", "-t", topic, "-p", "0"])
        .args(["-X", "acks=all", "-X", "security.protocol=SSL"])
        .arg("-X")
        .arg(format!("ssl.ca.location={}", pki.ca_pem().display()))
        .arg("-X")
        .arg(format!("ssl.certificate.location={}", who.cert.display()))
        .arg("-X")
        .arg(format!("ssl.key.location={}", who.key.display()));
    let (code, _, err) = run_within(cmd, lines, CLIENT_LIMIT);
    (code, err)
}

/// A broker with the authorizer on: an SSL listener requiring client certificates on its
/// port, a PLAINTEXT one for the super user `User:ANONYMOUS`; the broker and the PLAINTEXT
/// address.
fn start(pki: &TestPki) -> (TestBroker, String) {
    start_with(pki, &[])
}

/// [`start`] with `extra` overrides.
fn start_with(pki: &TestPki, extra: &[(&str, &str)]) -> (TestBroker, String) {
    let broker_id = pki.broker("broker");
    let admin_port = free_port();
    let listeners = format!("SSL://127.0.0.1:{{port}},PLAINTEXT://127.0.0.1:{admin_port}");
    let keystore = broker_id.key_and_chain.display().to_string();
    let truststore = pki.ca_pem().display().to_string();
    let mut overrides = vec![
        ("listeners", listeners.as_str()),
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.location", keystore.as_str()),
        ("ssl.truststore.type", "PEM"),
        ("ssl.truststore.location", truststore.as_str()),
        ("ssl.client.auth", "required"),
        ("authorizer.class.name", ACL_AUTHORIZER),
        ("super.users", "User:ANONYMOUS"),
    ];
    overrides.extend_from_slice(extra);
    let broker = TestBroker::start(&overrides);
    (broker, format!("127.0.0.1:{admin_port}"))
}

#[test]
fn certificate_users_are_authorized_by_the_acls_kcli_adds() {
    let pki = TestPki::new();
    let (alice, bob) = (pki.client("alice"), pki.client("bob"));
    let (broker, admin) = start(&pki);
    let end_of = |topic: &str| log_end_offset(&broker.data_dir().join(format!("{topic}-0")));

    // Without ACLs nobody but the super user may write.
    let (code, err) = round_trip(&broker, &pki, &alice, "acl-a", 1);
    assert_ne!(code, 0, "alice wrote without an ACL:\n{err}");

    acls_ok(&[
        "add",
        "--topic",
        "acl-",
        "--resource-pattern-type",
        "prefixed",
        "--allow-principal",
        ALICE,
        "--operation",
        "Write",
        "--operation",
        "Read",
        "--operation",
        "Create",
        "--bootstrap-server",
        &admin,
    ]);
    let listed = acls_ok(&["list", "--bootstrap-server", &admin, "--format", "json"]);
    assert_eq!(
        rows(&listed, "listed"),
        [
            row("Topic", "acl-", "Prefixed", ALICE, "Create", "Allow"),
            row("Topic", "acl-", "Prefixed", ALICE, "Read", "Allow"),
            row("Topic", "acl-", "Prefixed", ALICE, "Write", "Allow"),
        ]
    );
    // Alice produces, but her consumer's group is not hers to read.
    let (code, err) = round_trip(&broker, &pki, &alice, "acl-a", 10);
    assert_ne!(code, 0, "alice consumed without Read on her group:\n{err}");
    assert!(err.contains("GROUP_AUTHORIZATION_FAILED"), "{err}");
    assert_eq!(end_of("acl-a"), 10);

    acls_ok(&[
        "add",
        "--group",
        "ssl-check",
        "--allow-principal",
        ALICE,
        "--operation",
        "Read",
        "--bootstrap-server",
        &admin,
    ]);
    let (code, err) = round_trip(&broker, &pki, &alice, "acl-b", 10);
    assert_eq!(
        code,
        0,
        "alice with Write and Read:\n{err}\n{}",
        broker.stderr()
    );

    // kcat too: alice's certificate may write, bob's may not.
    let (code, err) = kcat_produce(&broker, &pki, &alice, "acl-b", b"k1\nk2\n");
    assert_eq!(code, 0, "kcat as alice: {err}");
    assert_eq!(end_of("acl-b"), 12);
    let (code, err) = kcat_produce(&broker, &pki, &bob, "acl-b", b"denied\n");
    assert_ne!(code, 0, "kcat as bob wrote without an ACL");
    assert!(err.contains("authorization failed"), "{err}");

    // Bob has no ACL: his produce is refused and nothing of his is written.
    let (code, err) = round_trip(&broker, &pki, &bob, "acl-b", 5);
    assert_ne!(code, 0, "bob wrote without an ACL:\n{err}");
    assert!(err.contains("Topic authorization failed"), "{err}");
    assert_eq!(end_of("acl-b"), 12);

    // Bob may create and write acl-c and use the group, but not read the topic: his consumer's fetch is
    // TOPIC_AUTHORIZATION_FAILED.
    for (resource, op) in [
        ("--topic", "Write"),
        ("--topic", "Create"),
        ("--group", "Read"),
    ] {
        let name = if resource == "--topic" {
            "acl-c"
        } else {
            "ssl-check"
        };
        acls_ok(&[
            "add",
            resource,
            name,
            "--allow-principal",
            BOB,
            "--operation",
            op,
            "--bootstrap-server",
            &admin,
        ]);
    }
    let (code, err) = round_trip(&broker, &pki, &bob, "acl-c", 3);
    assert_ne!(code, 0, "bob read without Read:\n{err}");
    assert!(err.contains("consume:"), "{err}");
    assert!(err.contains("TOPIC_AUTHORIZATION_FAILED"), "{err}");
    assert_eq!(end_of("acl-c"), 3);

    // Alice loses Write: her next produce is refused too.
    let removed = acls_ok(&[
        "remove",
        "--topic",
        "acl-",
        "--resource-pattern-type",
        "prefixed",
        "--allow-principal",
        ALICE,
        "--operation",
        "Write",
        "--bootstrap-server",
        &admin,
        "--format",
        "json",
    ]);
    assert_eq!(
        rows(&removed, "removed"),
        [row("Topic", "acl-", "Prefixed", ALICE, "Write", "Allow")]
    );
    let (code, err) = round_trip(&broker, &pki, &alice, "acl-b", 1);
    assert_ne!(code, 0, "alice wrote after her Write was removed:\n{err}");
    assert!(err.contains("Topic authorization failed"), "{err}");
    assert_eq!(end_of("acl-b"), 12);
}

/// KIP-679: the Java producer (idempotent by default) gets a producer id with Write on the
/// topic alone, no IdempotentWrite on the cluster (tests/clients/java/SslCheck.java, a PKCS12
/// client certificate).
#[test]
fn the_idempotent_java_producer_needs_only_write_on_a_topic() {
    let pki = TestPki::new();
    let (broker, admin) = start(&pki);
    let carol = pki.client("carol");
    acls_ok(&[
        "add",
        "--topic",
        "java-acl",
        "--allow-principal",
        "User:CN=carol,OU=eng,O=acme,C=US",
        "--operation",
        "Write",
        "--operation",
        "Read",
        "--operation",
        "Create",
        "--bootstrap-server",
        &admin,
    ]);
    let p12 = pki.pkcs12(&carol, "client-secret").display().to_string();
    let ca = pki.ca_pem().display().to_string();
    let s = crate::serve_clients::drivers::run_java_driver(
        "SslCheck",
        &[&broker.bootstrap(), "java-acl", &ca, &p12, "client-secret"],
        broker.scratch(),
    );
    assert_eq!(s["records"], 100, "{s}");
    // Idempotent indeed: every batch carries a producer id.
    let batches = log_batches(&broker.data_dir().join("java-acl-0"));
    assert!(!batches.is_empty());
    for (_, _, _, bytes) in &batches {
        let header = RecordBatchHeader::parse(bytes).unwrap();
        assert!(header.producer_id >= 0, "{header:?}");
    }
}

/// Kafka 3.9.1's `AclCommand --authorizer-properties zookeeper.connect=...` writes ACLs into
/// the ZooKeeper of a running kcli broker: the broker enforces them from its notifications
/// (alice produces and consumes once granted; bob, denied Write explicitly beside an allow for
/// everyone, is TOPIC_AUTHORIZATION_FAILED), and `kcli acls list --zookeeper` shows them.
#[test]
fn acls_kafkas_tool_writes_in_zookeeper_are_enforced() {
    let zk = ZkServer::start();
    let connect = format!("{}/kafka", zk.connect_string());
    let pki = TestPki::new();
    let (alice, bob) = (pki.client("alice"), pki.client("bob"));
    let (broker, _admin) = start_with(&pki, &[("zookeeper.connect", &connect)]);
    let props = format!("zookeeper.connect={connect}");
    let (code, err) = round_trip(&broker, &pki, &alice, "zk-acl", 1);
    assert_ne!(code, 0, "alice wrote without an ACL:\n{err}");

    for args in [
        vec![
            "--topic",
            "zk-acl",
            "--allow-principal",
            "User:*",
            "--operation",
            "All",
        ],
        vec![
            "--topic",
            "zk-acl",
            "--deny-principal",
            BOB,
            "--operation",
            "Write",
        ],
        vec![
            "--group",
            "ssl-check",
            "--allow-principal",
            ALICE,
            "--operation",
            "Read",
        ],
    ] {
        let mut all = vec!["--authorizer-properties", props.as_str(), "--add"];
        all.extend(args);
        let (code, out, err) = kafka_acls(&all);
        assert_eq!(code, 0, "{out}{err}");
    }
    let listed = acls_ok(&["list", "--zookeeper", &connect, "--format", "json"]);
    assert_eq!(
        rows(&listed, "listed"),
        [
            row("Group", "ssl-check", "Literal", ALICE, "Read", "Allow"),
            row("Topic", "zk-acl", "Literal", "User:*", "All", "Allow"),
            row("Topic", "zk-acl", "Literal", BOB, "Write", "Deny"),
        ]
    );
    // The broker applies the notifications within seconds.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (code, err) = round_trip(&broker, &pki, &alice, "zk-acl", 10);
        if code == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "alice was not served within 5 s:\n{err}\n{}",
            broker.stderr()
        );
    }
    let (code, err) = round_trip(&broker, &pki, &bob, "zk-acl", 3);
    assert_ne!(code, 0, "bob wrote despite the deny:\n{err}");
    assert!(err.contains("Topic authorization failed"), "{err}");
    assert_eq!(log_end_offset(&broker.data_dir().join("zk-acl-0")), 10);
}
