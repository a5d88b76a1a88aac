//! Three brokers whose inter-broker listener is SSL: the controller's requests and the replica
//! fetchers go over TLS (each broker trusting the test CA, presenting its certificate), and an
//! RF-3 topic produced to over PLAINTEXT is replicated byte for byte to every replica.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

use super::create_topic;
use crate::support::cluster::{TestCluster, wait_until};
use crate::support::tls::TestPki;

const TOPIC: &str = "tls-replicated";

#[test]
fn an_ssl_inter_broker_listener_replicates() {
    let pki = TestPki::new();
    let broker = pki.broker("broker");
    let keystore = broker.key_and_chain.display().to_string();
    let truststore = pki.ca_pem().display().to_string();
    let cluster = TestCluster::start(
        3,
        &[
            (
                "listeners",
                "PLAINTEXT://127.0.0.1:{port},SSL://127.0.0.1:0",
            ),
            ("inter.broker.listener.name", "SSL"),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", &keystore),
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", &truststore),
            ("ssl.client.auth", "required"),
        ],
    );
    create_topic(&cluster, TOPIC, 1, 3);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("enable.idempotence", "false")
        .set("acks", "all")
        .set("message.timeout.ms", "30000")
        .create()
        .unwrap();
    runtime.block_on(async {
        for i in 0..200 {
            let key = format!("k{i}");
            let value = format!("v{i}");
            producer
                .send(
                    FutureRecord::to(TOPIC).key(&key).payload(&value),
                    Duration::from_secs(30),
                )
                .await
                .map_err(|(e, _)| e)
                .unwrap();
        }
    });
    let segment = |b: &crate::serve_support::TestBroker| {
        std::fs::read(
            b.data_dir()
                .join(format!("{TOPIC}-0"))
                .join("00000000000000000000.log"),
        )
        .unwrap_or_default()
    };
    wait_until(
        "every replica holds the leader's bytes",
        Duration::from_secs(30),
        || {
            let logs: Vec<Vec<u8>> = cluster.brokers.iter().map(segment).collect();
            (!logs[0].is_empty() && logs.iter().all(|l| *l == logs[0])).then_some(())
        },
    );
    // The brokers reached each other over TLS, with their certificates.
    let logs = cluster.logs();
    assert!(
        logs.contains("listener=SSL principal=User:CN=broker,O=kcli"),
        "{logs}"
    );
}
