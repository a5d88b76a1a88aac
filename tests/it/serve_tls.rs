//! `kcli serve` with SSL listeners (rustls), against real clients: confluent-kafka (librdkafka
//! with OpenSSL; kcat over SSL is in acls/tls.rs) producing and consuming through a PEM key
//! store; `ssl.client.auth=required`
//! refusing a client without a certificate and naming one with a certificate
//! `User:CN=alice,OU=eng,O=acme,C=US` (the broker logs each TLS principal at INFO); a JKS key
//! store refused at startup naming `ssl.keystore.type`; garbage on the TLS listener closing
//! only its own connection; a PKCS12 key store; the Java client (kafka-clients 3.9.1) with a
//! PEM trust store and a PKCS12 client certificate. Certificates are made in the test
//! (tests/it/support/tls.rs).

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::serve_support::{TestBroker, free_port, run_within};
use crate::support::tls::{Identity, TestPki};

/// The limit of one client run.
const CLIENT_LIMIT: Duration = Duration::from_secs(60);

/// The overrides of a broker whose only listener is SSL on the test's port, its key store the
/// PEM file of `broker`, trusting the test CA (also as the inter-broker client).
fn ssl_broker_overrides(pki: &TestPki, broker: &Identity) -> Vec<(String, String)> {
    [
        ("listeners", "SSL://127.0.0.1:{port}".to_string()),
        ("security.inter.broker.protocol", "SSL".to_string()),
        ("ssl.keystore.type", "PEM".to_string()),
        (
            "ssl.keystore.location",
            broker.key_and_chain.display().to_string(),
        ),
        ("ssl.truststore.type", "PEM".to_string()),
        (
            "ssl.truststore.location",
            pki.ca_pem().display().to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn start(overrides: &[(String, String)]) -> TestBroker {
    let pairs: Vec<(&str, &str)> = overrides
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    TestBroker::start(&pairs)
}

/// The confluent-kafka driver over SSL, trusting the test CA, with `extra` client settings;
/// its exit code and stderr.
fn round_trip_status(
    broker: &TestBroker,
    pki: &TestPki,
    extra: &[String],
    topic: &str,
    n: usize,
) -> (i32, String) {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(repo.join(".venv/bin/python"));
    cmd.arg(repo.join("tests/clients/ssl_round_trip.py"))
        .args(["--bootstrap", &broker.bootstrap(), "--topic", topic])
        .args(["--count", &n.to_string()])
        .args(["-X", "security.protocol=SSL"])
        .arg("-X")
        .arg(format!("ssl.ca.location={}", pki.ca_pem().display()));
    for x in extra {
        cmd.arg("-X").arg(x);
    }
    let (code, out, err) = run_within(cmd, b"", CLIENT_LIMIT);
    if code == 0 {
        assert_eq!(out.trim(), format!("OK {n}"));
    }
    (code, err)
}

/// Produces `n` records to `topic` and reads them back, both over SSL.
fn round_trip(broker: &TestBroker, pki: &TestPki, extra: &[String], topic: &str, n: usize) {
    let (code, err) = round_trip_status(broker, pki, extra, topic, n);
    assert_eq!(
        code,
        0,
        "confluent-kafka over SSL failed:\n{err}\n{}",
        broker.stderr()
    );
}

#[test]
fn confluent_kafka_produces_and_consumes_over_ssl() {
    let pki = TestPki::new();
    let broker_id = pki.broker("broker");
    let broker = start(&ssl_broker_overrides(&pki, &broker_id));
    // Enough records that a fetch response spans several TLS staging buffers.
    round_trip(&broker, &pki, &[], "tls-topic", 3000);
    assert!(
        broker
            .stderr()
            .contains("TLS handshake completed peer=127.0.0.1"),
        "{}",
        broker.stderr()
    );
    assert!(broker.stderr().contains("principal=User:ANONYMOUS"));
}

/// The `principal=` values the broker logged for TLS handshakes.
fn logged_principals(broker: &TestBroker) -> Vec<String> {
    broker
        .stderr()
        .lines()
        .filter(|l| l.contains("TLS handshake completed"))
        .filter_map(|l| l.split("principal=").nth(1))
        .map(|rest| rest.trim().to_string())
        .collect()
}

#[test]
fn required_client_auth_refuses_anonymous_and_names_the_certificate() {
    let pki = TestPki::new();
    let broker_id = pki.broker("broker");
    let mut overrides = ssl_broker_overrides(&pki, &broker_id);
    // The listener's own key wins over the plain one.
    overrides.push(("ssl.client.auth".into(), "none".into()));
    overrides.push((
        "listener.name.ssl.ssl.client.auth".into(),
        "required".into(),
    ));
    let broker = start(&overrides);

    // Without a certificate the handshake fails: nothing is produced.
    let (code, err) = round_trip_status(
        &broker,
        &pki,
        &[
            "message.timeout.ms=3000".into(),
            "socket.timeout.ms=3000".into(),
        ],
        "refused-topic",
        1,
    );
    assert_ne!(code, 0, "a client without a certificate was served:\n{err}");
    assert!(
        broker.stderr().contains("closing connection: TLS failed"),
        "{}",
        broker.stderr()
    );

    let alice = pki.client("alice");
    let with_cert = [
        format!("ssl.certificate.location={}", alice.cert.display()),
        format!("ssl.key.location={}", alice.key.display()),
    ];
    round_trip(&broker, &pki, &with_cert, "mtls-topic", 10);
    let principals = logged_principals(&broker);
    assert!(!principals.is_empty(), "{}", broker.stderr());
    assert!(
        principals
            .iter()
            .all(|p| p == "User:CN=alice,OU=eng,O=acme,C=US"),
        "{principals:?}"
    );
}

#[test]
fn mapping_rules_shape_the_principal() {
    let pki = TestPki::new();
    let broker_id = pki.broker("broker");
    let mut overrides = ssl_broker_overrides(&pki, &broker_id);
    overrides.push(("ssl.client.auth".into(), "requested".into()));
    overrides.push((
        "ssl.principal.mapping.rules".into(),
        "RULE:^CN=(.*?),OU=(.*?),O=.*$/$1@$2/U,DEFAULT".into(),
    ));
    let broker = start(&overrides);
    let bob = pki.client("bob");
    let with_cert = [
        format!("ssl.certificate.location={}", bob.cert.display()),
        format!("ssl.key.location={}", bob.key.display()),
    ];
    round_trip(&broker, &pki, &with_cert, "rules-topic", 5);
    assert!(
        logged_principals(&broker)
            .iter()
            .all(|p| p == "User:BOB@ENG"),
        "{:?}",
        logged_principals(&broker)
    );
    // Requested, not required: a client without a certificate is served as ANONYMOUS.
    round_trip(&broker, &pki, &[], "rules-anonymous", 5);
    assert!(logged_principals(&broker).contains(&"User:ANONYMOUS".to_string()));
}

/// `kcli serve` with `overrides` must exit 2 with a one-line message containing `want`.
fn refused_at_startup(overrides: &[(&str, &str)], want: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("serve")
        .arg("--override")
        .arg(format!("log.dirs={}", dir.path().join("data").display()));
    for (k, v) in overrides {
        cmd.arg("--override").arg(format!("{k}={v}"));
    }
    let (code, _, err) = run_within(cmd, b"", Duration::from_secs(30));
    assert_eq!(code, 2, "{overrides:?}: {err}");
    assert!(err.contains(want), "{overrides:?}: {err}");
}

#[test]
fn unusable_key_stores_are_refused_at_startup_naming_the_key() {
    let pki = TestPki::new();
    let broker_id = pki.broker("broker");
    let port = free_port();
    let listeners = format!(
        "PLAINTEXT://127.0.0.1:{port},SSL://127.0.0.1:{}",
        free_port()
    );
    let pem = broker_id.key_and_chain.display().to_string();
    // Kafka's default type is JKS.
    refused_at_startup(
        &[
            ("listeners", &listeners),
            ("ssl.keystore.location", "/etc/kafka/broker.jks"),
            ("ssl.keystore.password", "secret"),
        ],
        "ssl.keystore.type",
    );
    refused_at_startup(
        &[
            ("listeners", &listeners),
            ("listener.name.ssl.ssl.keystore.type", "PEM"),
            (
                "listener.name.ssl.ssl.keystore.location",
                "/nonexistent/broker.pem",
            ),
        ],
        "listener.name.ssl.ssl.keystore.location",
    );
    refused_at_startup(
        &[("listeners", &listeners), ("ssl.keystore.type", "PEM")],
        "ssl.keystore.location",
    );
    refused_at_startup(
        &[
            ("listeners", &listeners),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", &pem),
            ("ssl.client.auth", "required"),
        ],
        "ssl.truststore.location",
    );
    refused_at_startup(
        &[
            ("listeners", &listeners),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", &pem),
            ("ssl.key.password", "pw"),
        ],
        "ssl.key.password",
    );
}

#[test]
fn garbage_on_the_tls_listener_closes_only_its_connection() {
    let pki = TestPki::new();
    let broker_id = pki.broker("broker");
    let broker = start(&ssl_broker_overrides(&pki, &broker_id));
    let mut garbage = TcpStream::connect(broker.bootstrap()).unwrap();
    garbage
        .write_all(b"\x00\x00\x00\x10GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    // A silent peer too: it holds a connection without a handshake.
    let _silent = TcpStream::connect(broker.bootstrap()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !broker.stderr().contains("closing connection: TLS failed") {
        assert!(Instant::now() < deadline, "{}", broker.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    round_trip(&broker, &pki, &[], "after-garbage", 20);
}

#[test]
fn a_pkcs12_key_store_serves_tls() {
    let pki = TestPki::new();
    let broker_id = pki.broker("broker");
    let p12 = pki.pkcs12(&broker_id, "store-secret");
    let overrides: Vec<(String, String)> = [
        ("listeners", "SSL://127.0.0.1:{port}".to_string()),
        ("security.inter.broker.protocol", "SSL".to_string()),
        ("listener.name.ssl.ssl.keystore.type", "PKCS12".to_string()),
        (
            "listener.name.ssl.ssl.keystore.location",
            p12.display().to_string(),
        ),
        (
            "listener.name.ssl.ssl.keystore.password",
            "store-secret".to_string(),
        ),
        ("ssl.truststore.type", "PEM".to_string()),
        (
            "ssl.truststore.location",
            pki.ca_pem().display().to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let broker = start(&overrides);
    round_trip(&broker, &pki, &[], "p12-topic", 50);
    // A wrong password stops the broker naming the key.
    let wrong: Vec<(&str, &str)> = overrides
        .iter()
        .map(|(k, v)| {
            if k == "listener.name.ssl.ssl.keystore.password" {
                (k.as_str(), "wrong")
            } else {
                (k.as_str(), v.as_str())
            }
        })
        .filter(|(k, _)| *k != "listeners")
        .collect();
    let listeners = format!("SSL://127.0.0.1:{}", free_port());
    let mut wrong = wrong;
    wrong.push(("listeners", &listeners));
    refused_at_startup(&wrong, "listener.name.ssl.ssl.keystore.password");
}

/// kafka-clients 3.9.1 (tests/clients/java/SslCheck.java) over SSL with client authentication:
/// the CA as a PEM trust store, its certificate from a PKCS12 key store.
#[test]
fn the_java_client_produces_and_consumes_with_a_client_certificate() {
    let pki = TestPki::new();
    let broker_id = pki.broker("broker");
    let mut overrides = ssl_broker_overrides(&pki, &broker_id);
    overrides.push(("ssl.client.auth".into(), "required".into()));
    let broker = start(&overrides);
    let carol = pki.client("carol");
    let p12 = pki.pkcs12(&carol, "client-secret");
    let ca = pki.ca_pem().display().to_string();
    let p12 = p12.display().to_string();
    let s = crate::serve_clients::drivers::run_java_driver(
        "SslCheck",
        &[&broker.bootstrap(), "java-tls", &ca, &p12, "client-secret"],
        broker.scratch(),
    );
    assert_eq!(s["records"], 100, "{s}");
    let principals = logged_principals(&broker);
    assert!(!principals.is_empty(), "{}", broker.stderr());
    assert!(
        principals
            .iter()
            .all(|p| p == "User:CN=carol,OU=eng,O=acme,C=US"),
        "{principals:?}"
    );
}
