//! A cluster whose inter-broker listener is SASL_PLAINTEXT with SCRAM-SHA-512: the brokers'
//! own user is created by Kafka's `ConfigCommand --zookeeper` before they start, the
//! controller's LeaderAndIsr/UpdateMetadata, the followers' fetches and the leaders'
//! AlterPartition all authenticate first (the registration advertises both listeners; the
//! controller and fetchers use the SASL one). An RF-3 topic gets leaders, its ISR is all three
//! brokers, a client on SASL (another SCRAM user, confluent-kafka) produces with acks=all and
//! reads everything back, and the three replicas' logs are identical. The same again with a
//! SASL_SSL inter-broker listener (TLS, then SCRAM over it).

use std::process::Command;
use std::time::Duration;

use super::{create_topic, wait_for_identical_replica_logs};
use crate::kafka_tools::support::java;
use crate::serve_clients::drivers::{run_driver, venv_python};
use crate::serve_support::run_within;
use crate::support::cluster::{TestCluster, wait_until};
use crate::support::tls::TestPki;

const LIMIT: Duration = Duration::from_secs(120);
const TOPIC: &str = "sasl-replicated";

fn add_scram_user(zk_connect: &str, user: &str, password: &str) {
    let mut cmd = java("kafka.admin.ConfigCommand");
    cmd.args(["--zookeeper", zk_connect, "--alter", "--add-config"])
        .arg(format!(
            "SCRAM-SHA-512=[iterations=4096,password={password}]"
        ))
        .args(["--entity-type", "users", "--entity-name", user]);
    let (code, out, err) = run_within(cmd, b"", LIMIT);
    assert_eq!(code, 0, "ConfigCommand for {user}: {out}\n{err}");
}

/// tests/clients/sasl_check.py with confluent-kafka as alice (SCRAM-SHA-512; Debian's kcat
/// has no SCRAM): 20 records produced with acks=all to partition 0 of `topic`, read back; over
/// TLS trusting `ssl_ca` when given.
fn produce_and_read_back(bootstrap: &str, topic: &str, ssl_ca: Option<&str>) -> serde_json::Value {
    let mut cmd = Command::new(venv_python());
    cmd.arg("tests/clients/sasl_check.py")
        .args(["--client", "confluent-kafka", "--bootstrap", bootstrap])
        .args(["--topic", topic, "--mechanism", "SCRAM-SHA-512"])
        .args(["--username", "alice", "--password", "alice-secret"]);
    if let Some(ca) = ssl_ca {
        cmd.args(["--ssl-ca", ca]);
    }
    run_driver(cmd, "sasl_check.py")
}

/// Three brokers whose inter-broker listener is `listener` (SASL_PLAINTEXT or SASL_SSL, beside a
/// PLAINTEXT one) with SCRAM-SHA-512 and `extra` keys; an RF-3 topic replicates, a SASL client
/// produces with acks=all and reads back, and the three logs are identical.
fn replicate_over(listener: &str, extra: &[(&str, &str)], ssl_ca: Option<&str>) {
    let listeners = format!("PLAINTEXT://127.0.0.1:{{port}},{listener}://127.0.0.1:{{port2}}");
    let jaas_key = format!(
        "listener.name.{}.scram-sha-512.sasl.jaas.config",
        listener.to_ascii_lowercase()
    );
    let mut overrides = vec![
        ("listeners", listeners.as_str()),
        ("inter.broker.listener.name", listener),
        ("sasl.enabled.mechanisms", "SCRAM-SHA-512"),
        ("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"),
        (
            jaas_key.as_str(),
            "org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"kafka-broker\" password=\"broker-secret\";",
        ),
        ("min.insync.replicas", "2"),
    ];
    overrides.extend_from_slice(extra);
    let cluster = TestCluster::start_after(3, &overrides, |connect| {
        add_scram_user(connect, "kafka-broker", "broker-secret");
        add_scram_user(connect, "alice", "alice-secret");
    });
    // Leaders come from the controller's LeaderAndIsr, sent over SASL to the other brokers.
    create_topic(&cluster, TOPIC, 1, 3);
    wait_until("the ISR is every broker", Duration::from_secs(30), || {
        let mut isr = cluster.isr(TOPIC, 0)?;
        isr.sort_unstable();
        (isr == [1, 2, 3]).then_some(())
    });
    // The client bootstraps from broker 3's SASL listener; the leader may be any of them.
    let bootstrap = format!("127.0.0.1:{}", cluster.brokers[2].port2());
    let s = produce_and_read_back(&bootstrap, TOPIC, ssl_ca);
    assert_eq!(s["consumed"], 20, "{s}\n{}", cluster.logs());
    wait_for_identical_replica_logs(&cluster, TOPIC, 0, &[1, 2, 3]);
    let logs = cluster.logs();
    assert!(
        !logs.contains("cannot authenticate"),
        "an inter-broker connection failed to authenticate:\n{logs}"
    );
}

#[test]
fn an_rf_3_topic_replicates_over_a_scram_inter_broker_listener() {
    replicate_over("SASL_PLAINTEXT", &[], None);
}

/// The same over SASL_SSL: the brokers' connections to each other run the TLS handshake (the
/// inter-broker listener's trust store, the host checked) and then SCRAM over it.
#[test]
fn an_rf_3_topic_replicates_over_a_sasl_ssl_inter_broker_listener() {
    let pki = TestPki::new();
    let identity = pki.broker("broker");
    let key_store = identity.key_and_chain.display().to_string();
    let ca = pki.ca_pem().display().to_string();
    replicate_over(
        "SASL_SSL",
        &[
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", &key_store),
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", &ca),
        ],
        Some(&ca),
    );
}
