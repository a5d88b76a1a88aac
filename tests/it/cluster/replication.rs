//! Replication between broker processes: an RF-3 topic's replicas hold byte-identical logs; an
//! idempotent acks=-1 producer (librdkafka's default retries) keeps producing through a kill -9
//! of a partition leader (not the controller) and loses nothing that was acknowledged; the
//! killed broker, restarted, catches up.

use std::collections::BTreeSet;
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

use super::{consume_keys, create_topic};
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata, wait_until};

const TOPIC: &str = "replicated";
const PARTITIONS: i32 = 3;

/// The size of each replica's first segment of `partition`, by broker.
fn segment_bytes(cluster: &TestCluster, partition: i32) -> Vec<Vec<u8>> {
    cluster
        .brokers
        .iter()
        .map(|b| {
            std::fs::read(
                b.data_dir()
                    .join(format!("{TOPIC}-{partition}"))
                    .join("00000000000000000000.log"),
            )
            .unwrap_or_default()
        })
        .collect()
}

#[test]
fn acks_all_survives_a_leader_kill_9_and_the_restarted_broker_catches_up() {
    let mut cluster = TestCluster::start(3, &[]);
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "60000")
        .create()
        .unwrap();
    // A partition leader that is not the controller dies once a third of the records are
    // acknowledged. (Were it the controller too, the new controller would keep it in the ISR
    // of the partitions it followed, as Kafka's failover does, and acks=-1 there would wait for
    // the leaders' ISR shrink after replica.lag.time.max.ms, which comes with AlterPartition.)
    let controller = cluster.controller_id().unwrap();
    let victim = metadata(cluster.port(1)).unwrap().topics[TOPIC]
        .1
        .values()
        .map(|p| p.leader)
        .find(|leader| *leader != controller)
        .unwrap();
    let total = 3000;
    let mut acked = BTreeSet::new();
    let mut failed = 0;
    runtime.block_on(async {
        let mut in_flight = Vec::new();
        for i in 0..total {
            let key = format!("k{i}");
            let payload = format!("v{i}");
            let record = FutureRecord::to(TOPIC).key(&key).payload(&payload);
            let delivery = producer.send_result(record).unwrap();
            in_flight.push((key, delivery));
            if in_flight.len() >= 100 {
                for (key, d) in in_flight.drain(..) {
                    match d.await.unwrap() {
                        Ok(_) => {
                            acked.insert(key);
                        }
                        Err(_) => failed += 1,
                    }
                }
                if failed > 0 {
                    // Fail now rather than wait out every later record's timeout.
                    break;
                }
                if acked.len() >= total / 3 && cluster.broker(victim).is_running() {
                    cluster.broker(victim).kill9();
                }
            }
        }
        for (key, d) in in_flight {
            match d.await.unwrap() {
                Ok(_) => {
                    acked.insert(key);
                }
                Err(_) => failed += 1,
            }
        }
    });
    assert!(
        !cluster.broker(victim).is_running(),
        "the leader was killed"
    );
    // librdkafka's retries carry the producer through the failover.
    assert_eq!(failed, 0, "deliveries failed:\n{}", cluster.logs());
    assert_eq!(acked.len(), total);

    let alive: BTreeSet<i32> = (1..=3).filter(|id| *id != victim).collect();
    let bootstrap: Vec<String> = alive
        .iter()
        .map(|id| format!("127.0.0.1:{}", cluster.port(*id)))
        .collect();
    let seen = consume_keys(&bootstrap.join(","), TOPIC, PARTITIONS, &acked);
    let lost: Vec<&String> = acked.difference(&seen).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged records lost: {lost:?}",
        lost.len()
    );

    // Restarted once its registration is gone, the killed broker catches up: every replica's
    // log holds the same bytes.
    cluster.restart_once_deregistered(victim, SESSION_TIMEOUT + Duration::from_secs(10));
    for p in 0..PARTITIONS {
        wait_until(
            "every replica's segment identical",
            Duration::from_secs(30),
            || {
                let logs = segment_bytes(&cluster, p);
                (!logs[0].is_empty() && logs.iter().all(|l| *l == logs[0])).then_some(())
            },
        );
    }
}
