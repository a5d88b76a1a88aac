//! Real clients over a SASL_PLAINTEXT listener of `kcli serve` (a PLAINTEXT listener beside it):
//! SCRAM-SHA-512 users created in ZooKeeper by Kafka 3.9.1's own `ConfigCommand --zookeeper`
//! (which proves the `/config/users` format both ways) log in with kcat, confluent-kafka and
//! the Java client (tests/clients/java/SaslCheck.java: AdminClient, a default idempotent
//! producer, a consumer); PLAIN users of the listener's JAAS config with kcat, confluent-kafka
//! and kafka-python pinned to `api_version=(0,10,1)` (SaslHandshake v0, then unframed tokens),
//! on the embedded store. A wrong password fails authentication with Kafka's message, the
//! broker goes on serving others, and a user added while the broker runs logs in within 5 s (the config
//! change notification). A SASL_SSL listener (TLS, then SCRAM-SHA-512 over it) serves
//! confluent-kafka. Inter-broker SASL is in cluster/sasl.rs.

use std::process::Command;
use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::metadata_request::MetadataRequest;
use kcli::protocol::messages::sasl_authenticate_request::SaslAuthenticateRequest;
use kcli::protocol::messages::sasl_handshake_request::SaslHandshakeRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};
use kcli::security::sasl::client::new_sasl_client;

use crate::kafka_tools::support::java;
use crate::serve_clients::drivers::{run_driver, run_java_driver, venv_python};
use crate::serve_support::{KafkaConn, TestBroker, closed_within, run_within};
use crate::support::cluster::exclusive;
use crate::support::tls::TestPki;
use crate::support::zookeeper::ZkServer;

const CLIENT_LIMIT: Duration = Duration::from_secs(120);

pub(crate) const PLAIN_JAAS: &str = "org.apache.kafka.common.security.plain.PlainLoginModule required \
                          user_carol=\"carol-secret\" user_dave=\"dave-secret\";";
pub(crate) const SCRAM_JAAS: &str =
    "org.apache.kafka.common.security.scram.ScramLoginModule required;";

/// A PLAINTEXT listener on `{port}` and a SASL_PLAINTEXT one on `{port2}` with PLAIN (the JAAS
/// config's users) and SCRAM-SHA-512 (the users in `/config/users`).
pub(crate) fn sasl_overrides() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{port2}",
        ),
        ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512"),
        (
            "listener.name.sasl_plaintext.plain.sasl.jaas.config",
            PLAIN_JAAS,
        ),
        (
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
            SCRAM_JAAS,
        ),
    ]
}

pub(crate) fn sasl_bootstrap(broker: &TestBroker) -> String {
    format!("127.0.0.1:{}", broker.port2())
}

/// Kafka's own tool adds (or replaces) `user`'s SCRAM-SHA-512 credential in ZooKeeper.
pub(crate) fn add_scram_user(zk_connect: &str, user: &str, password: &str) {
    let mut cmd = java("kafka.admin.ConfigCommand");
    cmd.args(["--zookeeper", zk_connect, "--alter", "--add-config"])
        .arg(format!(
            "SCRAM-SHA-512=[iterations=4096,password={password}]"
        ))
        .args(["--entity-type", "users", "--entity-name", user]);
    let (code, out, err) = run_within(cmd, b"", CLIENT_LIMIT);
    assert_eq!(code, 0, "ConfigCommand for {user}: {out}\n{err}");
}

/// kcat over the SASL listener as `user`, which must succeed: its stdout.
fn kcat(
    broker: &TestBroker,
    mechanism: &str,
    user: &str,
    password: &str,
    args: &[&str],
    input: &[u8],
) -> String {
    let (code, out, err) = kcat_run(broker, mechanism, user, password, args, input);
    assert_eq!(code, 0, "kcat {mechanism} {user} {args:?}: {err}");
    out
}

/// kcat over the SASL listener as `user`: (exit code, stdout, stderr).
pub(crate) fn kcat_run(
    broker: &TestBroker,
    mechanism: &str,
    user: &str,
    password: &str,
    args: &[&str],
    input: &[u8],
) -> (i32, String, String) {
    let mut cmd = Command::new("kcat");
    // `cargo test` puts rdkafka-sys's build dir on LD_LIBRARY_PATH, and the librdkafka there
    // is built without OpenSSL (so without SCRAM); kcat must load the system's.
    cmd.env_remove("LD_LIBRARY_PATH")
        .arg("-b")
        .arg(sasl_bootstrap(broker))
        .args(["-X", "security.protocol=SASL_PLAINTEXT"])
        .arg("-X")
        .arg(format!("sasl.mechanisms={mechanism}"))
        .arg("-X")
        .arg(format!("sasl.username={user}"))
        .arg("-X")
        .arg(format!("sasl.password={password}"))
        .args(args);
    run_within(cmd, input, CLIENT_LIMIT)
}

/// Produces three lines to `topic` with kcat (acks=all) and reads them back.
pub(crate) fn kcat_round_trip(
    broker: &TestBroker,
    mechanism: &str,
    user: &str,
    password: &str,
    topic: &str,
) {
    kcat(
        broker,
        mechanism,
        user,
        password,
        &["-P", "-t", topic, "-X", "acks=all"],
        b"one\ntwo\nthree\n",
    );
    let out = kcat(
        broker,
        mechanism,
        user,
        password,
        &["-C", "-t", topic, "-o", "beginning", "-e", "-f", "%o:%s\n"],
        b"",
    );
    assert_eq!(out, "0:one\n1:two\n2:three\n", "{topic}");
}

/// One of tests/clients/sasl_check.py's runs.
pub(crate) fn sasl_check(broker: &TestBroker, client: &str, args: &[&str]) -> serde_json::Value {
    let mut cmd = Command::new(venv_python());
    cmd.arg("tests/clients/sasl_check.py")
        .args(["--client", client, "--bootstrap"])
        .arg(sasl_bootstrap(broker))
        .args(args);
    run_driver(cmd, "sasl_check.py")
}

/// A SCRAM-SHA-512 login over a raw connection to `port`, with kcli's own client state machine;
/// the authenticated connection, or the broker's error message (the connection was closed).
pub(crate) fn scram_connect(port: u16, user: &str, password: &str) -> Result<KafkaConn, String> {
    sasl_connect(port, "SCRAM-SHA-512", user, password)
}

/// A raw connection to the SASL listener on `port`, authenticated as `user` with `mechanism`
/// (SaslHandshake v1, then SaslAuthenticate); the broker's message when it refuses.
pub(crate) fn sasl_connect(
    port: u16,
    mechanism: &str,
    user: &str,
    password: &str,
) -> Result<KafkaConn, String> {
    let mut conn = KafkaConn::connect(port);
    let handshake = RequestKind::SaslHandshake(SaslHandshakeRequest {
        mechanism: StrBytes::from(mechanism.to_string()),
    });
    let ResponseKind::SaslHandshake(answer) = conn.call(&handshake, 1) else {
        panic!("no SaslHandshake response");
    };
    assert_eq!(answer.error_code, 0);
    let mut client = new_sasl_client(mechanism, user, password).unwrap();
    let mut token = client.initial_response().unwrap();
    loop {
        let request = RequestKind::SaslAuthenticate(SaslAuthenticateRequest {
            auth_bytes: token.into(),
            ..SaslAuthenticateRequest::default()
        });
        let ResponseKind::SaslAuthenticate(answer) = conn.call(&request, 2) else {
            panic!("no SaslAuthenticate response");
        };
        if answer.error_code != 0 {
            assert_eq!(answer.error_code, 58, "SASL_AUTHENTICATION_FAILED");
            // The broker closes a connection that failed to authenticate.
            assert!(closed_within(&mut conn.stream, Duration::from_secs(5)));
            return Err(answer
                .error_message
                .map(|m| m.to_string())
                .unwrap_or_default());
        }
        match client.evaluate_challenge(&answer.auth_bytes).unwrap() {
            Some(next) => token = next,
            None => return Ok(conn),
        }
    }
}

/// [`scram_connect`], then a Metadata request on the authenticated connection.
fn scram_login(port: u16, user: &str, password: &str) -> Result<(), String> {
    let mut conn = scram_connect(port, user, password)?;
    let metadata = RequestKind::Metadata(MetadataRequest {
        topics: Some(Vec::new()),
        ..MetadataRequest::default()
    });
    assert!(matches!(conn.call(&metadata, 9), ResponseKind::Metadata(_)));
    Ok(())
}

#[test]
fn scram_users_made_by_kafkas_config_command_log_in_with_every_client() {
    let _one = exclusive();
    let zk = ZkServer::start();
    add_scram_user(&zk.connect_string(), "alice", "alice-secret");
    let connect = zk.connect_string();
    let mut overrides = sasl_overrides();
    overrides.push(("zookeeper.connect", &connect));
    let broker = TestBroker::start(&overrides);

    kcat_round_trip(
        &broker,
        "SCRAM-SHA-512",
        "alice",
        "alice-secret",
        "kcat-scram",
    );
    kcat_round_trip(&broker, "PLAIN", "carol", "carol-secret", "kcat-plain");
    let s = sasl_check(
        &broker,
        "confluent-kafka",
        &[
            "--topic",
            "ck-scram",
            "--mechanism",
            "SCRAM-SHA-512",
            "--username",
            "alice",
            "--password",
            "alice-secret",
        ],
    );
    assert_eq!(s["consumed"], 20, "{s}");
    let s = run_java_driver(
        "SaslCheck",
        &[
            &sasl_bootstrap(&broker),
            "java-scram",
            "SCRAM-SHA-512",
            "alice",
            "alice-secret",
        ],
        broker.scratch(),
    );
    assert_eq!(s["consumed"], 20, "{s}");

    // A wrong password is refused with Kafka's fixed message, and the broker serves on.
    let err = scram_login(broker.port2(), "alice", "wrong").unwrap_err();
    assert_eq!(
        err,
        "Authentication failed during authentication due to invalid credentials with SASL \
         mechanism SCRAM-SHA-512"
    );
    sasl_check(
        &broker,
        "confluent-kafka",
        &[
            "--topic",
            "unused",
            "--mechanism",
            "SCRAM-SHA-512",
            "--username",
            "alice",
            "--password",
            "wrong",
            "--expect-auth-failure",
        ],
    );
    scram_login(broker.port2(), "alice", "alice-secret").unwrap();

    // A user added while the broker runs logs in within 5 s of the tool's return.
    assert!(scram_login(broker.port2(), "bob", "bob-secret").is_err());
    add_scram_user(&zk.connect_string(), "bob", "bob-secret");
    let added = Instant::now();
    loop {
        match scram_login(broker.port2(), "bob", "bob-secret") {
            Ok(()) => break,
            Err(e) => assert!(
                added.elapsed() < Duration::from_secs(5),
                "bob cannot log in 5 s after ConfigCommand: {e}\n{}",
                broker.stderr()
            ),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let s = sasl_check(
        &broker,
        "confluent-kafka",
        &[
            "--topic",
            "ck-bob",
            "--mechanism",
            "SCRAM-SHA-512",
            "--username",
            "bob",
            "--password",
            "bob-secret",
        ],
    );
    assert_eq!(s["consumed"], 20, "{s}");
    // A changed password replaces the old one.
    add_scram_user(&zk.connect_string(), "bob", "bob-new");
    let changed = Instant::now();
    while scram_login(broker.port2(), "bob", "bob-secret").is_ok() {
        assert!(
            changed.elapsed() < Duration::from_secs(5),
            "old password still accepted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    scram_login(broker.port2(), "bob", "bob-new").unwrap();
}

#[test]
fn jaas_plain_users_log_in_on_the_embedded_store_old_clients_too() {
    let broker = TestBroker::start(&sasl_overrides());
    let s = sasl_check(
        &broker,
        "kafka-python",
        &[
            "--api-version",
            "0.10.1",
            "--topic",
            "kp-plain",
            "--mechanism",
            "PLAIN",
            "--username",
            "carol",
            "--password",
            "carol-secret",
        ],
    );
    assert_eq!(s["consumed"], 20, "{s}");
    sasl_check(
        &broker,
        "kafka-python",
        &[
            "--api-version",
            "0.10.1",
            "--topic",
            "unused",
            "--mechanism",
            "PLAIN",
            "--username",
            "carol",
            "--password",
            "wrong",
            "--expect-auth-failure",
        ],
    );
    let s = sasl_check(
        &broker,
        "confluent-kafka",
        &[
            "--topic",
            "ck-plain",
            "--mechanism",
            "PLAIN",
            "--username",
            "dave",
            "--password",
            "dave-secret",
        ],
    );
    assert_eq!(s["consumed"], 20, "{s}");
    kcat_round_trip(&broker, "PLAIN", "carol", "carol-secret", "kcat-plain");
    // No SCRAM user exists on a fresh embedded store.
    assert!(scram_login(broker.port2(), "carol", "carol-secret").is_err());
    // The PLAINTEXT listener beside it serves without authentication.
    let mut cmd = Command::new("kcat");
    cmd.args([
        "-b",
        &broker.bootstrap(),
        "-C",
        "-t",
        "kcat-plain",
        "-o",
        "beginning",
        "-e",
    ]);
    let (code, out, err) = run_within(cmd, b"", CLIENT_LIMIT);
    assert_eq!((code, out.as_str()), (0, "one\ntwo\nthree\n"), "{err}");
}

/// A SASL_SSL listener: the TLS handshake (the broker's PEM key store, the client trusting the
/// test CA), then SCRAM-SHA-512 over it with a user made by Kafka's ConfigCommand. A wrong
/// password fails authentication; the right one produces and reads back.
#[test]
fn scram_over_tls_on_a_sasl_ssl_listener() {
    let _one = exclusive();
    let zk = ZkServer::start();
    add_scram_user(&zk.connect_string(), "alice", "alice-secret");
    let pki = TestPki::new();
    let identity = pki.broker("broker");
    let connect = zk.connect_string();
    let key_store = identity.key_and_chain.display().to_string();
    let broker = TestBroker::start(&[
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:{port},SASL_SSL://127.0.0.1:{port2}",
        ),
        ("zookeeper.connect", &connect),
        ("broker.id", "1"),
        ("sasl.enabled.mechanisms", "SCRAM-SHA-512"),
        (
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
            SCRAM_JAAS,
        ),
        ("listener.name.sasl_ssl.ssl.keystore.type", "PEM"),
        ("listener.name.sasl_ssl.ssl.keystore.location", &key_store),
    ]);
    let ca = pki.ca_pem().display().to_string();
    let login = |topic: &str, password: &str, extra: &[&str]| {
        let mut args = vec![
            "--ssl-ca",
            &ca,
            "--topic",
            topic,
            "--mechanism",
            "SCRAM-SHA-512",
            "--username",
            "alice",
            "--password",
            password,
        ];
        args.extend_from_slice(extra);
        sasl_check(&broker, "confluent-kafka", &args)
    };
    login("unused", "wrong", &["--expect-auth-failure"]);
    let s = login("ck-sasl-ssl", "alice-secret", &[]);
    assert_eq!(s["consumed"], 20, "{s}");
    let log = broker.stderr();
    assert!(
        log.contains("TLS handshake completed") && log.contains("listener=SASL_SSL"),
        "{log}"
    );
    assert!(log.contains("not authenticated"), "{log}");
}
