//! Apache Kafka 3.9.1 brokers and kcli brokers in one ZooKeeper cluster
//! (`support::mixed_cluster::MixedCluster`), replicating each other: Kafka's controller driving
//! kcli brokers ([`kafka_controller`]), a kcli controller driving a Kafka broker
//! ([`kcli_controller`]), a consumer group whose coordinator moves between kinds ([`groups`]),
//! a rolling migration from Kafka to kcli and back on the same log dirs ([`migration`]),
//! Kafka's tools beside kcli's on one cluster ([`tools`]), a client quota and a reassignment
//! throttle holding on both kinds ([`quotas`]), a restarted leader of either kind
//! truncating to a new leader of the other ([`truncation`]), a kcli broker's failed log dir
//! handed to Kafka's controller ([`log_dirs`]), transactions coordinated by either kind with
//! leaders of both ([`transactions`]), their metrics beside each other and beside describe-cluster
//! ([`metrics`]), a leader of either kind pointing a consumer at a follower of the other
//! ([`follower_fetch`]), followers fetching in sessions from leaders of the other kind
//! ([`fetch_sessions`]), and the inter-broker requests
//! Kafka sends a kcli broker, captured and kept as fixtures ([`frames`]). Each test checks that nothing acknowledged is lost and that, once
//! every replica has caught up, the replicas' logs are one log batch for batch, on kcli's
//! reader and on Kafka's own DumpLogSegments.

mod fetch_sessions;
mod follower_fetch;
mod frames;
mod groups;
mod kafka_controller;
mod kcli_controller;
mod log_dirs;
mod metrics;
mod migration;
mod quotas;
mod tools;
mod transactions;
mod truncation;

use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;

use crate::kafka_tools::support::java;
use crate::serve_support::{KafkaConn, list_offset, run_within};
use crate::support::cluster::{log_batches, metadata, wait_until};
use crate::support::mixed_cluster::{MixedCluster, dump_log_segments};
use crate::support::produce_load::{
    Acknowledged, ProduceLoad, assert_every_acknowledged_record_consumed,
};

/// An admin client of the cluster (librdkafka's: CreateTopics and DeleteTopics go to the
/// controller, whichever kind it is).
fn admin(cluster: &MixedCluster) -> AdminClient<DefaultClientContext> {
    ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .create()
        .unwrap()
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// Creates `topic` with partition `p` on `assignment[p]` (the first its preferred leader) and
/// `configs`, then waits until every broker's Metadata shows each partition led by its
/// preferred leader with every replica in sync.
fn create_topic(
    cluster: &MixedCluster,
    topic: &str,
    assignment: &[&[i32]],
    configs: &[(&str, &str)],
) {
    let mut new = NewTopic::new(
        topic,
        i32::try_from(assignment.len()).unwrap(),
        TopicReplication::Variable(assignment),
    );
    for (k, v) in configs {
        new = new.set(k, v);
    }
    let admin = admin(cluster);
    let results = block_on(admin.create_topics(
        &[new],
        &AdminOptions::new().request_timeout(Some(Duration::from_secs(30))),
    ))
    .unwrap();
    for r in results {
        r.unwrap_or_else(|(t, e)| panic!("creating {t}: {e}\n{}", cluster.logs()));
    }
    wait_for_preferred_leaders_in_sync(cluster, topic, assignment);
}

/// Waits (60 s) until every broker's Metadata shows partition `p` of `topic` led by
/// `assignment[p][0]` with ISR = the whole assignment.
fn wait_for_preferred_leaders_in_sync(cluster: &MixedCluster, topic: &str, assignment: &[&[i32]]) {
    let settled = || {
        cluster.ids().iter().all(|id| {
            metadata(cluster.port(*id)).is_some_and(|m| {
                m.topics.get(topic).is_some_and(|(_, partitions)| {
                    partitions.len() == assignment.len()
                        && assignment.iter().enumerate().all(|(p, replicas)| {
                            partitions.get(&i32::try_from(p).unwrap()).is_some_and(|v| {
                                let mut isr = v.isr.clone();
                                isr.sort_unstable();
                                let mut all = replicas.to_vec();
                                all.sort_unstable();
                                v.leader == replicas[0] && isr == all
                            })
                        })
                })
            })
        })
    };
    let start = std::time::Instant::now();
    while !settled() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{topic}: preferred leaders with full ISRs not within 60 s\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits (60 s) until the replicas of `topic`-`partition` on `brokers` all end at the leader's
/// high watermark and are one log batch for batch (headers and CRCs included, read with kcli's
/// storage reader over all segments), then checks that Kafka's DumpLogSegments lists the same
/// batches and records on every one of them.
fn assert_identical_replicas(cluster: &MixedCluster, topic: &str, partition: i32, brokers: &[i32]) {
    let dirs: Vec<_> = brokers
        .iter()
        .map(|id| cluster.log_dir(*id).join(format!("{topic}-{partition}")))
        .collect();
    let end = |log: &Vec<crate::support::cluster::Batch>| {
        log.last().map_or(0, |(base, _, _, bytes)| {
            let header = kcli::protocol::record::batch::RecordBatchHeader::parse(bytes).unwrap();
            base + i64::from(header.last_offset_delta) + 1
        })
    };
    wait_until(
        &format!("{topic}-{partition}: every replica's log identical"),
        Duration::from_secs(60),
        || {
            let leader = cluster.leader(topic, partition)?;
            let mut conn = KafkaConn::connect(cluster.port(leader));
            let (code, high_watermark, _) = list_offset(&mut conn, topic, partition, -1);
            let logs: Vec<_> = dirs.iter().map(|d| log_batches(d)).collect();
            (code == 0
                && high_watermark > 0
                && logs.iter().all(|l| end(l) == high_watermark)
                && logs.iter().all(|l| *l == logs[0]))
            .then_some(())
        },
    );
    let dumps: Vec<Vec<String>> = dirs.iter().map(|d| dump_log_segments(d)).collect();
    assert!(
        dumps[0].iter().any(|l| l.starts_with("baseOffset:")),
        "DumpLogSegments listed no batch in {}",
        dirs[0].display()
    );
    for (dump, (dir, id)) in dumps.iter().zip(dirs.iter().zip(brokers)).skip(1) {
        assert_eq!(
            dump,
            &dumps[0],
            "DumpLogSegments of broker {id} ({}) differs from broker {}'s",
            dir.display(),
            brokers[0]
        );
    }
}

/// Runs one of Kafka 3.9.1's tools (its main class) with `args`; its stdout, failing the test
/// on a non-zero exit.
fn kafka_tool(class: &str, args: &[&str]) -> String {
    let mut cmd = java(class);
    cmd.args(args);
    let (code, stdout, stderr) = run_within(cmd, b"", Duration::from_secs(120));
    assert_eq!(code, 0, "{class} {args:?}:\n{stdout}{stderr}");
    stdout
}

/// Makes `order[0]` lead `topic`-`partition`: Kafka's `kafka-reassign-partitions` sets the
/// replicas to `order` (`--execute`, then `--verify` until it reports the move complete), and
/// `kafka-leader-election --election-type preferred` elects the first; waits until every
/// broker's Metadata shows it leading.
fn move_leadership(cluster: &MixedCluster, topic: &str, partition: i32, order: &[i32]) {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let plan_json = serde_json::json!({
        "version": 1,
        "partitions": [{"topic": topic, "partition": partition, "replicas": order}],
    });
    std::fs::write(&plan, plan_json.to_string()).unwrap();
    reassign(cluster, &plan, &[(topic, partition)]);
    let bootstrap = cluster.bootstrap();
    let partition_text = partition.to_string();
    kafka_tool(
        "org.apache.kafka.tools.LeaderElectionCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--election-type",
            "preferred",
            "--topic",
            topic,
            "--partition",
            &partition_text,
        ],
    );
    for id in cluster.ids() {
        wait_until(
            &format!("broker {id} shows {topic}-{partition} led by {}", order[0]),
            Duration::from_secs(30),
            || {
                metadata(cluster.port(id))?
                    .topics
                    .get(topic)?
                    .1
                    .get(&partition)
                    .filter(|p| p.leader == order[0] && p.replicas == order)
                    .map(|_| ())
            },
        );
    }
}

/// Carries out the reassignment plan in `plan` (Kafka's reassignment JSON) with Kafka's
/// `kafka-reassign-partitions --execute`, then `--verify` until it reports every one of
/// `partitions` completed (90 s).
fn reassign(cluster: &MixedCluster, plan: &std::path::Path, partitions: &[(&str, i32)]) {
    let bootstrap = cluster.bootstrap();
    let plan = plan.display().to_string();
    let tool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
    let run = |action: &str| {
        kafka_tool(
            tool,
            &[
                "--bootstrap-server",
                &bootstrap,
                "--reassignment-json-file",
                &plan,
                action,
            ],
        )
    };
    let started = run("--execute");
    assert!(
        started.contains("Successfully started partition reassignment"),
        "{started}"
    );
    wait_until(
        "every partition's move completed",
        Duration::from_secs(90),
        || {
            let out = run("--verify");
            partitions
                .iter()
                .all(|(t, p)| {
                    out.contains(&format!("Reassignment of partition {t}-{p} is completed"))
                })
                .then_some(())
        },
    );
}

/// Sends `count` records (`record N`, round-robin over `partitions` partitions of `topic`) with
/// acks=all and waits until every one is acknowledged.
fn produce(cluster: &MixedCluster, topic: &str, partitions: i32, count: i32) {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("acks", "all")
        .create()
        .unwrap();
    for n in 0..count {
        let value = format!("record {n}");
        producer
            .send(
                BaseRecord::<(), _>::to(topic)
                    .partition(n % partitions)
                    .payload(&value),
            )
            .unwrap();
    }
    producer
        .flush(Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("{count} records to {topic}: {e}\n{}", cluster.logs()));
}

/// Deletes `topic` through the controller and waits until its znodes and every broker's
/// replica directories are gone (60 s).
fn delete_topic(cluster: &MixedCluster, topic: &str, partitions: i32) {
    let results = block_on(admin(cluster).delete_topics(
        &[topic],
        &AdminOptions::new().request_timeout(Some(Duration::from_secs(30))),
    ))
    .unwrap();
    for r in results {
        r.unwrap_or_else(|(t, e)| panic!("deleting {t}: {e}"));
    }
    wait_until(
        &format!("{topic}'s znodes and every replica dir gone"),
        Duration::from_secs(60),
        || {
            let dirs_gone = cluster.ids().iter().all(|b| {
                (0..partitions).all(|p| !cluster.log_dir(*b).join(format!("{topic}-{p}")).exists())
            });
            (dirs_gone
                && cluster.get(&format!("/brokers/topics/{topic}")).is_none()
                && cluster
                    .get(&format!("/admin/delete_topics/{topic}"))
                    .is_none())
            .then_some(())
        },
    );
}

/// Ends `load` (every record it sent answered, none failed), then checks that every
/// acknowledged record of `topic` is consumed and that each of its `partitions` partitions has
/// one log on all of `brokers`.
fn finish_and_check(
    cluster: &MixedCluster,
    load: ProduceLoad,
    topic: &str,
    partitions: i32,
    brokers: &[i32],
) -> Acknowledged {
    let acked = load.finish(|| cluster.logs());
    assert_every_acknowledged_record_consumed(&cluster.bootstrap(), topic, &acked, || {
        cluster.logs()
    });
    for p in 0..partitions {
        assert_identical_replicas(cluster, topic, p, brokers);
    }
    acked
}
