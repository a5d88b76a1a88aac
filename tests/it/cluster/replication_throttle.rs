//! A reassignment under Kafka's replication throttle: 500 MB on broker 1 move to broker 2 with
//! Kafka 3.9.1's `kafka-reassign-partitions --execute --throttle 10000000`, which sets
//! `leader.replication.throttled.rate` and `follower.replication.throttled.rate` on both
//! brokers and the topic's `*.replication.throttled.replicas`. The new replica's log grows at
//! 10 MB/s (within 15%, every two seconds once under way), a producer to another topic on the
//! same brokers keeps going meanwhile, and `--verify` removes every throttle config once the
//! move is done. The replicas end identical.

use std::path::Path;
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use super::create_topic_assigned;
use crate::kafka_tools::support::java;
use crate::serve_support::run_within;
use crate::support::cluster::{TestCluster, log_end_offset, segment_bytes, wait_until};
use crate::support::produce_load::ProduceLoad;

const TOPIC: &str = "throttled";
const REASSIGN: &str = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
/// The throttle: 10 MB/s.
const RATE: f64 = 10_000_000.0;
/// 512 MB in 10 KiB records, batched to at most 64 KiB: a follower fetch of 1 MiB
/// (`replica.fetch.max.bytes`) ends in a partial batch that the next fetch asks for again, and
/// the throttle counts the bytes sent, partial batch and all (on Kafka as on kcli); small
/// batches keep that waste to a few percent, so the log grows at nearly the throttle's rate.
/// With 0.9 MB batches both move 12% below it.
const RECORD: usize = 10 * 1024;
const RECORDS: usize = 50_000;

/// `kafka-reassign-partitions` with `args`: (exit code, stdout + stderr).
fn reassign_tool(cluster: &TestCluster, args: &[&str]) -> (i32, String) {
    let mut cmd = java(REASSIGN);
    cmd.args(["--bootstrap-server", &cluster.bootstrap()])
        .args(args);
    let (code, out, err) = run_within(cmd, b"", Duration::from_secs(120));
    (code, format!("{out}{err}"))
}

/// The bytes of the partition's segments on disk under `data_dir`.
fn log_bytes(data_dir: &Path) -> u64 {
    segment_bytes(&data_dir.join(format!("{TOPIC}-0")))
}

/// Sends [`RECORDS`] records of [`RECORD`] bytes to partition 0 and waits for every ack.
fn fill(cluster: &TestCluster) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("acks", "1")
        .set("linger.ms", "5")
        .set("batch.size", "65536")
        .set("queue.buffering.max.kbytes", "262144")
        .create()
        .unwrap();
    let payload = vec![b'x'; RECORD];
    for _ in 0..RECORDS {
        loop {
            match producer.send(
                BaseRecord::<(), _>::to(TOPIC)
                    .partition(0)
                    .payload(&payload),
            ) {
                Ok(()) => break,
                Err((_, _)) => {
                    producer.poll(Duration::from_millis(10));
                }
            }
        }
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(120)).unwrap();
}

/// A config znode's keys (none when it is missing).
fn config_keys(cluster: &TestCluster, path: &str) -> Vec<String> {
    cluster
        .get(path)
        .and_then(|(data, _)| serde_json::from_str::<serde_json::Value>(&data).ok())
        .and_then(|json| json["config"].as_object().cloned())
        .map(|config| config.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn a_throttled_reassignment_moves_at_the_throttle_rate_and_verify_removes_the_throttle() {
    let cluster = TestCluster::start(2, &[("auto.leader.rebalance.enable", "false")]);
    throttled_move(&cluster);
}

/// The move, asserted; generic over the cluster's kind so that Kafka's own figures come from
/// the same code (docs/benchmarks.md, "Replication throttle").
fn throttled_move(cluster: &TestCluster) {
    create_topic_assigned(cluster, TOPIC, &[&[1]]);
    create_topic_assigned(cluster, "others", &[&[1, 2], &[2, 1]]);
    fill(cluster);
    let total = log_bytes(&cluster.data_dir(1));
    assert!(
        total >= (RECORDS * RECORD) as u64,
        "{total} bytes on broker 1"
    );

    let scratch = tempfile::tempdir().unwrap();
    let plan = scratch.path().join("plan.json");
    std::fs::write(
        &plan,
        format!(
            r#"{{"version":1,"partitions":[{{"topic":"{TOPIC}","partition":0,"replicas":[2]}}]}}"#
        ),
    )
    .unwrap();
    let plan = plan.display().to_string();
    let load = ProduceLoad::start(&cluster.bootstrap(), "others", 2);
    let (code, out) = reassign_tool(
        cluster,
        &[
            "--reassignment-json-file",
            &plan,
            "--execute",
            "--throttle",
            "10000000",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("The inter-broker throttle limit was set to 10000000 B/s"),
        "{out}"
    );
    for broker in [1, 2] {
        let keys = config_keys(cluster, &format!("/config/brokers/{broker}"));
        assert!(
            keys.contains(&"leader.replication.throttled.rate".to_string()),
            "{keys:?}"
        );
        assert!(
            keys.contains(&"follower.replication.throttled.rate".to_string()),
            "{keys:?}"
        );
    }
    let keys = config_keys(cluster, &format!("/config/topics/{TOPIC}"));
    assert!(
        keys.contains(&"leader.replication.throttled.replicas".to_string()),
        "{keys:?}"
    );

    // The new replica's log, every quarter second, until it holds everything.
    let started = Instant::now();
    let mut samples: Vec<(Duration, u64)> = Vec::new();
    let acks_before = load.acked_count();
    loop {
        let bytes = log_bytes(&cluster.data_dir(2));
        samples.push((started.elapsed(), bytes));
        if bytes >= total {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the move is stuck at {bytes} of {total} bytes"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let acks_during = load.acked_count() - acks_before;
    let elapsed = started.elapsed();
    let gap = load.longest_ack_gap(started, started + elapsed);

    // Every two seconds once under way (past 5% of the bytes, before the last 5%): each fetch
    // moves about 1 MB, so a single second holds 9 or 10 of them; two even that out.
    let under_way: Vec<&(Duration, u64)> = samples
        .iter()
        .filter(|(_, b)| *b > total / 20 && *b < total - total / 20)
        .collect();
    let mut rates = Vec::new();
    for pair in under_way.windows(9).step_by(8) {
        let ((t0, b0), (t1, b1)) = (pair[0], pair[8]);
        rates.push((b1 - b0) as f64 / (*t1 - *t0).as_secs_f64());
    }
    assert!(rates.len() >= 10, "too few seconds under way: {rates:?}");
    eprintln!(
        "{}: {total} bytes moved in {elapsed:?}; B/s every 2 s under way: {:?}",
        cluster.kind(),
        rates.iter().map(|r| *r as u64).collect::<Vec<_>>()
    );
    for rate in &rates {
        assert!(
            (rate - RATE).abs() / RATE <= 0.15,
            "two seconds at {rate:.0} B/s, not within 15% of {RATE} (all: {:?}; {total} bytes in {elapsed:?})",
            rates.iter().map(|r| *r as u64).collect::<Vec<_>>()
        );
    }
    assert!(
        acks_during > 0 && gap < Duration::from_secs(2),
        "the producer on the same brokers stalled during the move: {acks_during} acks, \
         longest gap {gap:?}"
    );

    // --verify completes the move's bookkeeping and removes the throttle configs.
    wait_until("the move verified", Duration::from_secs(60), || {
        let (_, out) = reassign_tool(cluster, &["--reassignment-json-file", &plan, "--verify"]);
        out.contains(&format!("Reassignment of partition {TOPIC}-0 is completed"))
            .then_some(())
    });
    wait_until(
        "the throttle configs removed",
        Duration::from_secs(30),
        || {
            let topic = config_keys(cluster, &format!("/config/topics/{TOPIC}"));
            let brokers: Vec<String> = [1, 2]
                .iter()
                .flat_map(|b| config_keys(cluster, &format!("/config/brokers/{b}")))
                .collect();
            (!topic
                .iter()
                .chain(&brokers)
                .any(|k| k.contains("replication.throttled")))
            .then_some(())
        },
    );
    wait_until(
        "broker 2 alone holds the partition",
        Duration::from_secs(30),
        || (cluster.isr(TOPIC, 0) == Some(vec![2])).then_some(()),
    );
    assert_eq!(
        log_end_offset(&cluster.data_dir(2).join(format!("{TOPIC}-0"))),
        i64::try_from(RECORDS).unwrap()
    );
    drop(load);
}

/// A replica in the ISR is never throttled, so a throttle cannot push it out: with both rates
/// at 1,000 B/s and every replica of the topic throttled (`*`), an acks=all producer keeps going
/// and the follower stays in the ISR past `replica.lag.time.max.ms` many times over.
#[test]
fn a_follower_in_the_isr_is_never_throttled_out_of_it() {
    let cluster = TestCluster::start(
        2,
        &[
            ("replica.lag.time.max.ms", "1000"),
            ("auto.leader.rebalance.enable", "false"),
        ],
    );
    create_topic_assigned(&cluster, "insync", &[&[1, 2]]);
    let bootstrap = cluster.bootstrap();
    for broker in ["1", "2"] {
        let (code, out, err) = crate::users::kafka_configs(&[
            "--bootstrap-server",
            &bootstrap,
            "--alter",
            "--entity-type",
            "brokers",
            "--entity-name",
            broker,
            "--add-config",
            "leader.replication.throttled.rate=1000,follower.replication.throttled.rate=1000",
        ]);
        assert_eq!(code, 0, "{out}{err}");
    }
    let (code, out, err) = crate::users::kafka_configs(&[
        "--bootstrap-server",
        &bootstrap,
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        "insync",
        "--add-config",
        "leader.replication.throttled.replicas=*,follower.replication.throttled.replicas=*",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let load = ProduceLoad::start(&bootstrap, "insync", 1);
    load.wait_for_more_acks(100, Duration::from_secs(30));
    let started = Instant::now();
    let acked = load.acked_count();
    while started.elapsed() < Duration::from_secs(8) {
        assert_eq!(
            cluster.isr("insync", 0),
            Some(vec![1, 2]),
            "the follower left the ISR {:?} into the throttle",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let gap = load.longest_ack_gap(started, Instant::now());
    assert!(
        load.acked_count() > acked + 100 && gap < Duration::from_secs(2),
        "acks=all stalled under the throttle: {} acks, longest gap {gap:?}",
        load.acked_count() - acked
    );
}
