//! Leadership moves without a failure: a leader's SIGTERM is a controlled shutdown (its
//! partitions get new leaders while its registration still exists, and an idempotent acks=-1
//! producer sending throughout sees no error and loses nothing), a restarted preferred leader
//! leads again after the imbalance check (once it is back in the ISR), and Kafka's own
//! `kafka-leader-election.sh` (LeaderElectionCommand) runs preferred and unclean elections
//! through ElectLeaders.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

use kcli::zk::{ZkClient, ZkError};

use super::{consume_keys, create_topic};
use crate::kafka_tools::support::java;
use crate::serve_support::run_within;
use crate::support::cluster::{SESSION_TIMEOUT, TestCluster, metadata, wait_until, with_zk};

/// Short controlled-shutdown retries, so a broker whose leaderships cannot move stops soon.
const FAST_RETRIES: &[(&str, &str)] = &[
    ("controlled.shutdown.max.retries", "2"),
    ("controlled.shutdown.retry.backoff.ms", "200"),
];

/// `(leader, isr)` of a partition's state znode.
fn leader_and_isr(data: &[u8]) -> (i32, Vec<i32>) {
    let state: serde_json::Value = serde_json::from_slice(data).unwrap();
    let leader = i32::try_from(state["leader"].as_i64().unwrap()).unwrap();
    let isr = state["isr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| i32::try_from(x.as_i64().unwrap()).unwrap())
        .collect();
    (leader, isr)
}

fn state_path(topic: &str, partition: i32) -> String {
    format!("/brokers/topics/{topic}/partitions/{partition}/state")
}

fn state(cluster: &TestCluster, topic: &str, partition: i32) -> (i32, Vec<i32>) {
    let (data, _) = cluster.get(&state_path(topic, partition)).unwrap();
    leader_and_isr(data.as_bytes())
}

/// What the producer thread saw: acknowledged keys and failed deliveries (with their errors).
struct Produced {
    acked: BTreeSet<String>,
    failures: Vec<String>,
}

/// Sends keyed records to `topic` (idempotent, acks=-1) in rounds of 50 until `stop`, then
/// waits for the last round; `acked` counts the acknowledgements as they come.
fn produce_until(
    bootstrap: String,
    topic: &'static str,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
) -> Produced {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "60000")
        .create()
        .unwrap();
    let mut produced = Produced {
        acked: BTreeSet::new(),
        failures: Vec::new(),
    };
    runtime.block_on(async {
        let mut i = 0;
        while !stop.load(Ordering::Acquire) && produced.failures.is_empty() {
            let mut round = Vec::new();
            for _ in 0..50 {
                let key = format!("k{i}");
                i += 1;
                let record = FutureRecord::to(topic).key(&key).payload("v");
                round.push((key.clone(), producer.send_result(record).unwrap()));
            }
            for (key, delivery) in round {
                match delivery.await.unwrap() {
                    Ok(_) => {
                        produced.acked.insert(key);
                        acked.fetch_add(1, Ordering::Release);
                    }
                    Err((e, _)) => produced.failures.push(format!("{key}: {e}")),
                }
            }
        }
    });
    produced
}

#[test]
fn sigterm_of_a_leader_moves_its_leaderships_before_it_deregisters_and_loses_nothing() {
    const TOPIC: &str = "moved";
    const PARTITIONS: i32 = 6;
    let mut cluster = TestCluster::start(3, &[]);
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    // A leader that is not the controller, so the controller that moves its leaderships stays.
    let controller = cluster.controller_id().unwrap();
    let led: BTreeMap<i32, i32> = metadata(cluster.port(1)).unwrap().topics[TOPIC]
        .1
        .iter()
        .map(|(p, v)| (*p, v.leader))
        .collect();
    let victim = (1..=3)
        .find(|id| *id != controller && led.values().any(|l| l == id))
        .unwrap();
    let victims_partitions: Vec<i32> = led
        .iter()
        .filter(|(_, l)| **l == victim)
        .map(|(p, _)| *p)
        .collect();

    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let producer = {
        let bootstrap = cluster.bootstrap();
        let (stop, acked) = (Arc::clone(&stop), Arc::clone(&acked));
        std::thread::spawn(move || produce_until(bootstrap, TOPIC, stop, acked))
    };
    wait_until("records acknowledged", Duration::from_secs(30), || {
        (acked.load(Ordering::Acquire) >= 200).then_some(())
    });

    // SIGTERM, and watch ZooKeeper until the registration goes: the victim's partitions must
    // show another leader, and an ISR without it, while `/brokers/ids/<victim>` still exists.
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(cluster.broker(victim).pid().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let broker_path = format!("/brokers/ids/{victim}");
    let moved_while_registered = with_zk(&cluster.connect(), async |zk: &dyn ZkClient| {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut moved = false;
        while Instant::now() < deadline {
            let mut all_moved = true;
            for p in &victims_partitions {
                let (data, _) = zk.get_data(&state_path(TOPIC, *p), false).await.unwrap();
                let (leader, isr) = leader_and_isr(&data);
                all_moved &= leader != victim && leader >= 0 && !isr.contains(&victim);
            }
            match zk.exists(&broker_path, false).await {
                Ok(Some(_)) => moved |= all_moved,
                Ok(None) | Err(ZkError::NoNode(_)) => return moved,
                Err(e) => panic!("{broker_path}: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("{broker_path} still registered 20 s after SIGTERM");
    });
    let exit = cluster.broker(victim).wait_exit(Duration::from_secs(20));
    assert!(exit.success(), "{}", cluster.broker(victim).stderr());
    assert!(
        moved_while_registered,
        "leaderships moved only after the registration went:\n{}",
        cluster.logs()
    );
    assert!(
        cluster
            .broker(victim)
            .stderr()
            .contains("controlled shutdown request returned successfully"),
        "{}",
        cluster.broker(victim).stderr()
    );

    // A few more rounds against the new leaders, then the producer stops.
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::Release);
    let produced = producer.join().unwrap();
    assert!(
        produced.failures.is_empty(),
        "deliveries failed: {:?}\n{}",
        produced.failures,
        cluster.logs()
    );
    assert!(
        produced.acked.len() >= 100,
        "{} acked",
        produced.acked.len()
    );
    let alive: Vec<String> = (1..=3)
        .filter(|id| *id != victim)
        .map(|id| format!("127.0.0.1:{}", cluster.port(id)))
        .collect();
    let seen = consume_keys(&alive.join(","), TOPIC, PARTITIONS, &produced.acked);
    let lost: Vec<&String> = produced.acked.difference(&seen).collect();
    assert!(lost.is_empty(), "{} acknowledged records lost", lost.len());
}

/// Runs `kafka-leader-election.sh` (Kafka 3.9.1's LeaderElectionCommand) with `args`.
fn leader_election(bootstrap: &str, args: &[&str]) -> (i32, String) {
    let mut cmd = java("org.apache.kafka.tools.LeaderElectionCommand");
    cmd.args(["--bootstrap-server", bootstrap]).args(args);
    let (code, stdout, stderr) = run_within(cmd, b"", Duration::from_secs(120));
    (code, format!("{stdout}{stderr}"))
}

#[test]
fn kafkas_leader_election_tool_runs_preferred_and_unclean_elections() {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    use rdkafka::client::DefaultClientContext;
    let mut cluster = TestCluster::start(3, FAST_RETRIES);
    // One partition on the two brokers that are not the controller, which stays up throughout.
    let controller = cluster.controller_id().unwrap();
    let others: Vec<i32> = (1..=3).filter(|id| *id != controller).collect();
    let (preferred, other) = (others[0], others[1]);
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .create()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let assignment: &[&[i32]] = &[&[preferred, other]];
    let results = runtime
        .block_on(admin.create_topics(
            &[NewTopic::new(
                "u",
                1,
                TopicReplication::Variable(assignment),
            )],
            &AdminOptions::new().request_timeout(Some(Duration::from_secs(30))),
        ))
        .unwrap();
    for r in results {
        r.unwrap_or_else(|(t, e)| panic!("creating {t}: {e}"));
    }
    wait_until(
        "u-0 led by its preferred replica",
        Duration::from_secs(30),
        || {
            (cluster.get(&state_path("u", 0)).is_some() && state(&cluster, "u", 0).0 == preferred)
                .then_some(())
        },
    );
    let bootstrap = cluster.broker(controller).bootstrap();
    // Led by its preferred replica: nothing to elect.
    let (code, out) = leader_election(
        &bootstrap,
        &[
            "--election-type",
            "preferred",
            "--topic",
            "u",
            "--partition",
            "0",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Valid replica already elected for partitions u-0"),
        "{out}"
    );

    // No clean leader left: the follower stops (and leaves the ISR), then the leader, which
    // cannot hand over its leadership; then the follower comes back, outside the ISR.
    cluster.broker(other).stop();
    cluster.broker(preferred).stop();
    // (The registration may outlive the process until its session times out.)
    let limit = SESSION_TIMEOUT + Duration::from_secs(10);
    wait_until("u-0 without a leader", limit, || {
        (state(&cluster, "u", 0) == (-1, vec![preferred])).then_some(())
    });
    cluster.broker(other).restart();
    wait_until(
        "the follower registered again",
        Duration::from_secs(30),
        || metadata(cluster.port(controller)).filter(|m| m.broker_ids().contains(&other)),
    );

    // Preferred cannot help: the preferred replica is down.
    let (code, out) = leader_election(
        &bootstrap,
        &["--election-type", "preferred", "--all-topic-partitions"],
    );
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("u-0") && out.contains("PreferredLeaderNotAvailable"),
        "{out}"
    );
    assert_eq!(state(&cluster, "u", 0).0, -1);

    // Unclean: the live replica outside the ISR leads, alone, RECOVERING.
    let (code, out) = leader_election(
        &bootstrap,
        &[
            "--election-type",
            "unclean",
            "--topic",
            "u",
            "--partition",
            "0",
        ],
    );
    assert_eq!(code, 0, "{out}\n{}", cluster.logs());
    assert!(
        out.contains("Successfully completed leader election (UNCLEAN) for partitions u-0"),
        "{out}"
    );
    assert_eq!(state(&cluster, "u", 0), (other, vec![other]));
    let (data, _) = cluster.get(&state_path("u", 0)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&data).unwrap();
    assert_eq!(json["leader_recovery_state"], 1, "{data}");

    // An admin tool writing /admin/preferred_replica_election directly: the controller's watch
    // sees it, serves it (the preferred replica is still down) and deletes it.
    let request = kcli::zk::zk_data::encode_preferred_replica_election(&[
        kcli::cluster::TopicPartition::new("u", 0),
    ]);
    with_zk(&cluster.connect(), async |zk: &dyn ZkClient| {
        zk.create(
            "/admin/preferred_replica_election",
            &request,
            kcli::zk::CreateMode::Persistent,
        )
        .await
        .unwrap();
    });
    wait_until(
        "the election request served and deleted",
        Duration::from_secs(15),
        || {
            cluster
                .get("/admin/preferred_replica_election")
                .is_none()
                .then_some(())
        },
    );
    assert_eq!(state(&cluster, "u", 0).0, other);
}

#[test]
fn a_restarted_preferred_leader_leads_again_after_the_imbalance_check() {
    let mut cluster = TestCluster::start(3, &[("leader.imbalance.check.interval.seconds", "5")]);
    create_topic(&cluster, "p", 3, 3);
    let controller = cluster.controller_id().unwrap();
    let preferred_of = |cluster: &TestCluster, p: i32| -> i32 {
        let (data, _) = cluster.get("/brokers/topics/p").unwrap();
        let assignment: serde_json::Value = serde_json::from_str(&data).unwrap();
        i32::try_from(assignment["partitions"][p.to_string()][0].as_i64().unwrap()).unwrap()
    };
    // A broker that is not the controller, and the partition it prefers.
    let (partition, victim) = (0..3)
        .map(|p| (p, preferred_of(&cluster, p)))
        .find(|(_, b)| *b != controller)
        .unwrap();
    cluster.broker(victim).stop();
    assert_ne!(state(&cluster, "p", partition).0, victim);
    cluster.broker(victim).restart();
    let back = Instant::now();
    // It must first catch up and rejoin the ISR (the leader's AlterPartition), then the
    // imbalance check, every 5 s, moves the leadership back.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (leader, isr) = state(&cluster, "p", partition);
        if leader == victim {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "broker {victim} does not lead p-{partition} 15 s after its return: leader {leader}, \
             isr {isr:?}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "preferred leader back {:?} after its return",
        back.elapsed()
    );
}
