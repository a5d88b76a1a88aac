//! Quotas on a mixed cluster under a kcli controller (kcli brokers 1 and 2, Kafka 3.9.1
//! broker 3), each set once with Kafka's own tools:
//!
//! - a client id's `producer_byte_rate`, set with `kafka-configs`, throttles that client on
//!   every broker, Kafka's and kcli's alike, for as long as each one's measure says for the
//!   same first request (Kafka's windowed rate and throttle formula; kcli's token bucket, which
//!   has the whole request repaid); a client without a quota is not throttled anywhere, and once
//!   the quota is deleted nobody is;
//! - a reassignment that `kafka-reassign-partitions --execute --throttle` starts through the
//!   kcli controller holds the new replicas' catch-up to the throttle both ways: onto the Kafka
//!   broker from a kcli leader, and onto a kcli broker from the Kafka leader. `--verify` then
//!   clears every throttle config it set, on both kinds of broker.

use std::time::{Duration, Instant};

use kcli::protocol::messages::ResponseKind;
use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use super::{create_topic, kafka_tool};
use crate::serve_support::{KafkaConn, PRODUCE_VERSION, batch_of, produce_request};
use crate::support::client_quotas::set_client_quota;
use crate::support::cluster::{segment_bytes, wait_until};
use crate::support::mixed_cluster::MixedCluster;
use crate::users::kafka_configs;

const KAFKA: i32 = 3;
/// Partition p is led by broker p+1 alone: kcli leads 0 and 1, Kafka 2.
const QUOTA_TOPIC: &str = "quota-mixed";
const QUOTA_ASSIGNMENT: &[&[i32]] = &[&[1], &[2], &[3]];
/// 1,000 B/s for the client id; each request sends 100 kB, which Kafka's rate spreads over
/// ten one-second windows: 10,000 B/s observed, so the first request recorded is throttled
/// for (10,000 - 1,000) / 1,000 of those ten seconds. kcli's bucket holds one second of the
/// quota, so it has the rest of the request repaid: 99,000 bytes at 1,000 B/s.
const QUOTA: &str = "1000";
const REQUEST: usize = 100_000;
const KAFKA_FIRST_THROTTLE_MS: f64 = 90_000.0;
const KCLI_FIRST_THROTTLE_MS: f64 = 99_000.0;

/// The moves: partition 0 from kcli broker 1 onto Kafka, partition 1 from Kafka onto kcli
/// broker 2.
const MOVED: &str = "moved";
const MOVED_BEFORE: &[&[i32]] = &[&[1], &[3]];
const MOVED_AFTER: [(i32, [i32; 2]); 2] = [(0, [1, 3]), (1, [3, 2])];
/// The throttle, 2 MB/s, over 20 MB a partition: some ten seconds a move.
const THROTTLE: f64 = 2_000_000.0;
const RECORD: usize = 10 * 1024;
const RECORDS: usize = 2_000;
const REASSIGN: &str = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";

/// The `throttle_time_ms` of one Produce of [`REQUEST`] bytes as `client` to the partition
/// broker `id` leads, on a new connection (a throttled one is muted).
fn produce_throttle(cluster: &MixedCluster, id: i32, client: &str) -> i32 {
    let mut conn = KafkaConn::connect(cluster.port(id));
    conn.set_client_id(client);
    let batch = batch_of(&[vec![b'q'; REQUEST]]);
    let request = produce_request(QUOTA_TOPIC, id - 1, batch, 1);
    let ResponseKind::Produce(response) = conn.call(&request, PRODUCE_VERSION) else {
        panic!("not a Produce response");
    };
    let partition = &response.responses[0].partition_responses[0];
    assert_eq!(partition.error_code, 0, "broker {id}: {response:?}");
    response.throttle_time_ms
}

fn kind(cluster: &MixedCluster, id: i32) -> &'static str {
    if cluster.node(id).is_kafka() {
        "Kafka"
    } else {
        "kcli"
    }
}

/// The bytes of `topic`-`partition`'s segments under broker `id`'s log dir.
fn log_bytes(cluster: &MixedCluster, id: i32, partition: i32) -> u64 {
    segment_bytes(&cluster.log_dir(id).join(format!("{MOVED}-{partition}")))
}

/// [`RECORDS`] records of [`RECORD`] bytes to each partition of [`MOVED`], batched to at most
/// 64 KiB (a follower's fetch of 1 MiB wastes little on a partial batch), every one acked.
fn fill(cluster: &MixedCluster) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("acks", "1")
        .set("linger.ms", "5")
        .set("batch.size", "65536")
        .create()
        .unwrap();
    let payload = vec![b'x'; RECORD];
    for n in 0..RECORDS * 2 {
        let partition = i32::try_from(n % 2).unwrap();
        while producer
            .send(
                BaseRecord::<(), _>::to(MOVED)
                    .partition(partition)
                    .payload(&payload),
            )
            .is_err()
        {
            producer.poll(Duration::from_millis(10));
        }
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(120)).unwrap();
}

/// A config znode's keys that name a replication throttle.
fn throttle_keys(cluster: &MixedCluster, path: &str) -> Vec<String> {
    cluster
        .get_json(path)
        .and_then(|json| json["config"].as_object().cloned())
        .map(|config| {
            config
                .keys()
                .filter(|k| k.contains("replication.throttled"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The rate a new replica's log grew at between 10% and 90% of `total` bytes, from samples
/// of (time, bytes).
fn catch_up_rate(samples: &[(Duration, u64)], total: u64) -> f64 {
    let at = |fraction: u64| {
        *samples
            .iter()
            .find(|(_, b)| *b >= total * fraction / 10)
            .unwrap_or_else(|| panic!("never {fraction}0% of {total}: {samples:?}"))
    };
    let ((t0, b0), (t1, b1)) = (at(1), at(9));
    (b1 - b0) as f64 / (t1 - t0).as_secs_f64()
}

#[test]
fn a_quota_and_a_reassignment_throttle_hold_on_kafka_and_kcli_brokers_alike() {
    let mut cluster =
        MixedCluster::start(&[], &[1, 2], &[("auto.leader.rebalance.enable", "false")]);
    cluster.start_kafka(KAFKA);
    cluster.wait_all_listed();
    let controller = cluster.controller_id().expect("a controller");
    assert!(
        !cluster.node(controller).is_kafka(),
        "broker {controller} (Kafka) is the controller"
    );
    let bootstrap = cluster.bootstrap();

    // A client id's quota, set once, on every broker.
    create_topic(&cluster, QUOTA_TOPIC, QUOTA_ASSIGNMENT, &[]);
    set_client_quota(&bootstrap, "capped", "producer_byte_rate", QUOTA);
    for id in [1, 2, KAFKA] {
        let what = format!("broker {id} ({}) throttling `capped`", kind(&cluster, id));
        let throttle = wait_until(&what, Duration::from_secs(30), || {
            Some(produce_throttle(&cluster, id, "capped")).filter(|t| *t > 0)
        });
        eprintln!(
            "broker {id} ({}): first throttle {throttle} ms",
            kind(&cluster, id)
        );
        // The first request recorded after the quota arrived is the first throttled.
        let expected = if cluster.node(id).is_kafka() {
            KAFKA_FIRST_THROTTLE_MS
        } else {
            KCLI_FIRST_THROTTLE_MS
        };
        assert!(
            (f64::from(throttle) - expected).abs() <= expected * 0.02,
            "broker {id} ({}) throttled the first request {throttle} ms, not {expected}",
            kind(&cluster, id)
        );
        assert_eq!(
            produce_throttle(&cluster, id, "uncapped"),
            0,
            "broker {id} ({}) throttled a client without a quota",
            kind(&cluster, id)
        );
    }
    let (code, out, err) = kafka_configs(&[
        "--bootstrap-server",
        &bootstrap,
        "--alter",
        "--entity-type",
        "clients",
        "--entity-name",
        "capped",
        "--delete-config",
        "producer_byte_rate",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for id in [1, 2, KAFKA] {
        let what = format!("broker {id} ({}) no longer throttling", kind(&cluster, id));
        wait_until(&what, Duration::from_secs(30), || {
            (produce_throttle(&cluster, id, "capped") == 0).then_some(())
        });
    }

    // A throttled reassignment through the kcli controller, onto Kafka and off it.
    create_topic(&cluster, MOVED, MOVED_BEFORE, &[]);
    fill(&cluster);
    let totals = [log_bytes(&cluster, 1, 0), log_bytes(&cluster, KAFKA, 1)];
    assert!(
        totals.iter().all(|t| *t >= (RECORDS * RECORD) as u64),
        "{totals:?} bytes before the move"
    );
    let scratch = tempfile::tempdir().unwrap();
    let plan = scratch.path().join("plan.json");
    let partitions: Vec<serde_json::Value> = MOVED_AFTER
        .iter()
        .map(|(p, replicas)| serde_json::json!({"topic": MOVED, "partition": p, "replicas": replicas}))
        .collect();
    std::fs::write(
        &plan,
        serde_json::json!({"version": 1, "partitions": partitions}).to_string(),
    )
    .unwrap();
    let plan = plan.display().to_string();
    let reassign = |action: &[&str]| {
        let mut args = vec![
            "--bootstrap-server",
            &bootstrap,
            "--reassignment-json-file",
            &plan,
        ];
        args.extend_from_slice(action);
        kafka_tool(REASSIGN, &args)
    };
    let out = reassign(&["--execute", "--throttle", "2000000"]);
    assert!(
        out.contains("The inter-broker throttle limit was set to 2000000 B/s"),
        "{out}"
    );
    for path in [
        "/config/brokers/1",
        "/config/brokers/2",
        "/config/brokers/3",
    ] {
        let keys = throttle_keys(&cluster, path);
        assert_eq!(keys.len(), 2, "{path}: {keys:?}");
    }
    let keys = throttle_keys(&cluster, &format!("/config/topics/{MOVED}"));
    assert_eq!(keys.len(), 2, "/config/topics/{MOVED}: {keys:?}");
    let started = Instant::now();
    let new_replicas = [(KAFKA, 0), (2, 1)];
    let mut samples: [Vec<(Duration, u64)>; 2] = [Vec::new(), Vec::new()];
    loop {
        let mut done = true;
        for (i, (id, partition)) in new_replicas.iter().enumerate() {
            let bytes = log_bytes(&cluster, *id, *partition);
            samples[i].push((started.elapsed(), bytes));
            done &= bytes >= totals[i];
        }
        if done {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the moves are stuck: {:?} of {totals:?}\n{}",
            samples
                .iter()
                .map(|s| s.last().map(|l| l.1))
                .collect::<Vec<_>>(),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    for (i, (id, partition)) in new_replicas.iter().enumerate() {
        let rate = catch_up_rate(&samples[i], totals[i]);
        eprintln!(
            "{MOVED}-{partition} onto broker {id} ({}): {rate:.0} B/s under way",
            kind(&cluster, *id)
        );
        assert!(
            (0.6 * THROTTLE..=1.2 * THROTTLE).contains(&rate),
            "{MOVED}-{partition} caught up on broker {id} ({}) at {rate:.0} B/s under a \
             {THROTTLE} B/s throttle: {:?}",
            kind(&cluster, *id),
            samples[i]
        );
    }

    // --verify completes the moves and clears the throttles it set, on every broker.
    wait_until("the moves verified", Duration::from_secs(60), || {
        let out = reassign(&["--verify"]);
        MOVED_AFTER
            .iter()
            .all(|(p, _)| {
                out.contains(&format!(
                    "Reassignment of partition {MOVED}-{p} is completed"
                ))
            })
            .then_some(())
    });
    wait_until(
        "every throttle config cleared",
        Duration::from_secs(30),
        || {
            let paths = [
                "/config/brokers/1",
                "/config/brokers/2",
                "/config/brokers/3",
            ]
            .map(String::from)
            .into_iter()
            .chain([format!("/config/topics/{MOVED}")]);
            paths
                .into_iter()
                .all(|p| throttle_keys(&cluster, &p).is_empty())
                .then_some(())
        },
    );
    for (partition, replicas) in MOVED_AFTER {
        wait_until(
            &format!("{MOVED}-{partition} in sync on {replicas:?}"),
            Duration::from_secs(30),
            || {
                let mut isr = cluster.isr(MOVED, partition)?;
                isr.sort_unstable();
                let mut all = replicas.to_vec();
                all.sort_unstable();
                (isr == all).then_some(())
            },
        );
    }
}
