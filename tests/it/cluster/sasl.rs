//! A cluster whose inter-broker listener is SASL_PLAINTEXT with SCRAM-SHA-512: the brokers'
//! own user is created by Kafka's `ConfigCommand --zookeeper` before they start, the
//! controller's LeaderAndIsr/UpdateMetadata, the followers' fetches and the leaders'
//! AlterPartition all authenticate first (the registration advertises both listeners; the
//! controller and fetchers use the SASL one). An RF-3 topic gets leaders, its ISR is all three
//! brokers, a client on SASL (another SCRAM user, confluent-kafka) produces with acks=all and
//! reads everything back, and the three replicas' logs are identical.

use std::process::Command;
use std::time::Duration;

use super::{create_topic, wait_for_identical_replica_logs};
use crate::kafka_tools::support::java;
use crate::serve_clients::drivers::{run_driver, venv_python};
use crate::serve_support::run_within;
use crate::support::cluster::{TestCluster, wait_until};

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
/// has no SCRAM): 20 records produced with acks=all to partition 0 of `topic`, read back.
fn produce_and_read_back(bootstrap: &str, topic: &str) -> serde_json::Value {
    let mut cmd = Command::new(venv_python());
    cmd.arg("tests/clients/sasl_check.py")
        .args(["--client", "confluent-kafka", "--bootstrap", bootstrap])
        .args(["--topic", topic, "--mechanism", "SCRAM-SHA-512"])
        .args(["--username", "alice", "--password", "alice-secret"]);
    run_driver(cmd, "sasl_check.py")
}

#[test]
fn an_rf_3_topic_replicates_over_a_scram_inter_broker_listener() {
    let overrides = [
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{port2}",
        ),
        ("inter.broker.listener.name", "SASL_PLAINTEXT"),
        ("sasl.enabled.mechanisms", "SCRAM-SHA-512"),
        ("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"),
        (
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"kafka-broker\" password=\"broker-secret\";",
        ),
        ("min.insync.replicas", "2"),
    ];
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
    let sasl = |id: i32| {
        format!(
            "127.0.0.1:{}",
            cluster.brokers[usize::try_from(id - 1).unwrap()].port2()
        )
    };
    // The client bootstraps from broker 3's SASL listener; the leader may be any of them.
    let s = produce_and_read_back(&sasl(3), TOPIC);
    assert_eq!(s["consumed"], 20, "{s}\n{}", cluster.logs());
    wait_for_identical_replica_logs(&cluster, TOPIC, 0, &[1, 2, 3]);
    let logs = cluster.logs();
    assert!(
        !logs.contains("cannot authenticate"),
        "an inter-broker connection failed to authenticate:\n{logs}"
    );
}
