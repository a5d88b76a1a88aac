//! The ISR between broker processes: a follower stopped past `replica.lag.time.max.ms` leaves
//! the ISR in ZooKeeper (through the leader's AlterPartition to the controller) and rejoins
//! once it resumes and catches up; with both followers stopped, acks=-1 first times out and,
//! once the ISR is the leader alone, is refused with NOT_ENOUGH_REPLICAS before anything is
//! appended; a leader paused past its session has its AlterPartition refused with
//! STALE_BROKER_EPOCH after SIGCONT and acknowledges no acks=-1 write. The first case runs on
//! kcli's brokers and on Kafka 3.9.1's ([`kcli`], [`kafka`]).

use std::time::{Duration, Instant};

use ::kcli::protocol::messages::{ApiKey, RequestKind};

use super::create_topic;
use crate::describe_cluster::{describe_json, partition as described_partition};
use crate::serve_support::{KafkaConn, batch_of, produce_request, produce_result};
use crate::support::cluster::{
    TestCluster, log_end_offset, metadata, metadata_at, signal, wait_until,
};

const LAG_MS: u64 = 3_000;
/// Longer than any pause here but the one meant to outlast it.
const SESSION_MS: &str = "10000";

/// Kafka's error codes the tests expect.
const REQUEST_TIMED_OUT: i16 = 7;
const NOT_ENOUGH_REPLICAS: i16 = 19;

fn lag_settings() -> Vec<(&'static str, &'static str)> {
    vec![
        ("replica.lag.time.max.ms", "3000"),
        ("zookeeper.session.timeout.ms", SESSION_MS),
    ]
}

/// A produce request of one record with `acks` and `timeout_ms`.
fn produce(topic: &str, partition: i32, value: &str, acks: i16, timeout_ms: i32) -> RequestKind {
    let mut request = produce_request(
        topic,
        partition,
        batch_of(&[value.as_bytes().to_vec()]),
        acks,
    );
    if let RequestKind::Produce(p) = &mut request {
        p.timeout_ms = timeout_ms;
    }
    request
}

/// `(error code, base offset)` of one produce to the broker on `port`.
fn produce_to(
    at: std::net::SocketAddr,
    topic: &str,
    partition: i32,
    value: &str,
    acks: i16,
) -> (i16, i64) {
    let mut conn = KafkaConn::connect_to(at);
    produce_result(&conn.call(&produce(topic, partition, value, acks, 1_000), 9))
}

/// The partition of `topic` whose leader satisfies `pick`, with its leader.
fn partition_led_by(cluster: &TestCluster, topic: &str, pick: impl Fn(i32) -> bool) -> (i32, i32) {
    metadata_at(cluster.addr(1)).unwrap().topics[topic]
        .1
        .iter()
        .map(|(p, view)| (*p, view.leader))
        .find(|(_, leader)| pick(*leader))
        .unwrap()
}

/// The log end of a partition's replica on broker `id`, read from its segment files.
fn log_end(cluster: &TestCluster, id: i32, topic: &str, partition: i32) -> i64 {
    let dir = cluster.brokers[usize::try_from(id - 1).unwrap()]
        .data_dir()
        .join(format!("{topic}-{partition}"));
    log_end_offset(&dir)
}

/// Three kcli brokers or three Kafka brokers with these settings.
type Start = fn(&[(&str, &str)]) -> TestCluster;

/// The case that runs on both kinds of broker.
macro_rules! cases {
    ($kind:ident, $start:expr) => {
        mod $kind {
            #[test]
            fn a_follower_stopped_past_the_lag_leaves_the_isr_and_rejoins_after_sigcont() {
                super::follower_stopped_past_the_lag($start);
            }
        }
    };
}

cases!(kcli, super::kcli_brokers);
cases!(kafka, super::kafka_brokers);

fn kcli_brokers(settings: &[(&str, &str)]) -> TestCluster {
    TestCluster::start(3, settings)
}

fn kafka_brokers(settings: &[(&str, &str)]) -> TestCluster {
    TestCluster::start_kafka(3, settings)
}

fn follower_stopped_past_the_lag(brokers: Start) {
    let cluster = brokers(&lag_settings());
    create_topic(&cluster, "isr", 3, 3);
    let controller = cluster.controller_id().unwrap();
    // A partition with a follower that is not the controller (the controller must answer the
    // leader's AlterPartition).
    let (partition, leader) = partition_led_by(&cluster, "isr", |_| true);
    let follower = (1..=3)
        .find(|id| *id != leader && *id != controller)
        .unwrap();
    let pid = cluster.pid(follower);
    assert_eq!(cluster.isr("isr", partition).unwrap().len(), 3);

    signal(pid, "STOP");
    let stopped = Instant::now();
    // A follower at the leader's log end stays caught up however long it sleeps: records
    // keep coming, so it falls behind.
    let limit = Duration::from_millis(LAG_MS * 3 / 2 + 2_000);
    let mut n = 0;
    let shrunk = wait_until("the ISR without the stopped follower", limit, || {
        n += 1;
        let (code, _) = produce_to(cluster.addr(leader), "isr", partition, &format!("r{n}"), 1);
        assert_eq!(code, 0, "acks=1 to the leader");
        let isr = cluster.isr("isr", partition)?;
        (!isr.contains(&follower)).then_some(isr)
    });
    let took = stopped.elapsed();
    assert_eq!(shrunk.len(), 2, "{shrunk:?}");
    assert!(took <= limit, "{took:?}");
    // describe-cluster reads the same ISR from ZooKeeper, and calls it under-replicated.
    let (_, json) = describe_json(&cluster.connect(), &[]);
    let p = described_partition(&json, "isr", i64::from(partition));
    let isr: Vec<i64> = p["isr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(
        isr,
        shrunk.iter().map(|id| i64::from(*id)).collect::<Vec<_>>(),
        "{p}"
    );
    assert!(
        p["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "UNDER-REPLICATED"),
        "{p}"
    );

    // Asleep 8 s in all, under its 10 s session.
    std::thread::sleep(Duration::from_secs(8).saturating_sub(stopped.elapsed()));
    signal(pid, "CONT");
    let resumed = Instant::now();
    let rejoined = wait_until(
        "the follower back in the ISR",
        Duration::from_secs(10),
        || {
            let isr = cluster.isr("isr", partition)?;
            isr.contains(&follower).then_some(isr)
        },
    );
    assert_eq!(
        rejoined.len(),
        3,
        "{rejoined:?} after {:?}",
        resumed.elapsed()
    );
    // Still registered under the same session: it never left `/brokers/ids`.
    assert!(cluster.get(&format!("/brokers/ids/{follower}")).is_some());
}

#[test]
fn with_both_followers_stopped_acks_all_times_out_then_is_refused_with_not_enough_replicas() {
    let mut settings = lag_settings();
    settings.push(("min.insync.replicas", "2"));
    let mut cluster = TestCluster::start(3, &settings);
    create_topic(&cluster, "minisr", 3, 3);
    // The partition the controller leads: its AlterPartition needs no other broker.
    let controller = cluster.controller_id().unwrap();
    let (partition, leader) = partition_led_by(&cluster, "minisr", |l| l == controller);
    let (code, _) = produce_to(cluster.addr(leader), "minisr", partition, "before", -1);
    assert_eq!(code, 0, "acks=-1 with every replica in sync");
    let followers: Vec<i32> = (1..=3).filter(|id| *id != leader).collect();
    let pids: Vec<u32> = followers
        .iter()
        .map(|id| cluster.broker(*id).pid())
        .collect();
    for pid in &pids {
        signal(*pid, "STOP");
    }
    let stopped = Instant::now();
    // Before the ISR shrinks the write is appended but never acknowledged: the followers do
    // not fetch it.
    let (code, _) = produce_to(cluster.addr(leader), "minisr", partition, "waits", -1);
    assert_eq!(code, REQUEST_TIMED_OUT);
    // Records arrive meanwhile (acks=1 is not refused), so the followers fall behind.
    let limit = Duration::from_millis(LAG_MS * 3 / 2 + 2_000);
    let mut n = 0;
    wait_until(
        "the ISR is the leader alone",
        limit + Duration::from_secs(1),
        || {
            n += 1;
            let (code, _) = produce_to(
                cluster.addr(leader),
                "minisr",
                partition,
                &format!("a{n}"),
                1,
            );
            assert_eq!(code, 0);
            (cluster.isr("minisr", partition)? == vec![leader]).then_some(())
        },
    );
    assert!(
        stopped.elapsed() <= limit + Duration::from_secs(1),
        "{:?}",
        stopped.elapsed()
    );
    // The leader commits the new ISR when the controller's answer arrives, a moment after
    // ZooKeeper shows it: poll until the refusal, which leaves the log as it is.
    let end_before = log_end(&cluster, leader, "minisr", partition);
    let code = wait_until("NOT_ENOUGH_REPLICAS", Duration::from_secs(5), || {
        let (code, _) = produce_to(cluster.addr(leader), "minisr", partition, "refused", -1);
        (code == NOT_ENOUGH_REPLICAS).then_some(code)
    });
    assert_eq!(code, NOT_ENOUGH_REPLICAS);
    let (code, _) = produce_to(cluster.addr(leader), "minisr", partition, "refused", -1);
    assert_eq!(code, NOT_ENOUGH_REPLICAS);
    assert_eq!(
        log_end(&cluster, leader, "minisr", partition),
        end_before,
        "a refused write is not appended"
    );
    for pid in &pids {
        signal(*pid, "CONT");
    }
    // Back within their sessions, they catch up and acks=-1 works again.
    wait_until("acks=-1 accepted again", Duration::from_secs(20), || {
        let (code, _) = produce_to(cluster.addr(leader), "minisr", partition, "after", -1);
        (code == 0).then_some(())
    });
}

#[test]
fn a_leader_paused_past_its_session_gets_stale_broker_epoch_and_acknowledges_nothing() {
    let mut cluster = TestCluster::start(3, &[("replica.lag.time.max.ms", "3000")]);
    create_topic(&cluster, "paused", 3, 3);
    let controller = cluster.controller_id().unwrap();
    let (partition, leader) = partition_led_by(&cluster, "paused", |l| l != controller);
    let (code, _) = produce_to(cluster.addr(leader), "paused", partition, "before", -1);
    assert_eq!(code, 0);
    let others: Vec<i32> = (1..=3).filter(|id| *id != leader).collect();
    let follower_pids: Vec<u32> = others.iter().map(|id| cluster.broker(*id).pid()).collect();
    // The followers stop for a moment (well within their sessions and the lag) while the
    // leader takes acks=1 records they do not have: when the leader resumes after its own
    // pause, its followers are behind and have not been caught up for longer than the lag, so
    // its first ISR check proposes to drop them.
    for pid in &follower_pids {
        signal(*pid, "STOP");
    }
    for i in 0..5 {
        let (code, _) = produce_to(
            cluster.addr(leader),
            "paused",
            partition,
            &format!("u{i}"),
            1,
        );
        assert_eq!(code, 0, "acks=1 to the leader");
    }
    // Connections opened before the pause, so the writes reach the paused leader itself.
    let mut conns: Vec<KafkaConn> = (0..3)
        .map(|_| KafkaConn::connect(cluster.port(leader)))
        .collect();
    let pid = cluster.broker(leader).pid();
    signal(pid, "STOP");
    for pid in &follower_pids {
        signal(*pid, "CONT");
    }
    let new_leader = wait_until("another leader elected", Duration::from_secs(30), || {
        let m = metadata(cluster.port(others[0]))?;
        let l = m.topics.get("paused")?.1.get(&partition)?.leader;
        others.contains(&l).then_some(l)
    });
    assert!(
        cluster.get(&format!("/brokers/ids/{leader}")).is_none(),
        "its session expired"
    );
    // Writes sent to the paused leader wait in its socket.
    for (i, conn) in conns.iter_mut().enumerate() {
        let request = produce("paused", partition, &format!("paused-{i}"), -1, 5_000);
        conn.send(&request, 9).unwrap();
    }
    signal(pid, "CONT");
    for conn in &mut conns {
        let (_, response) = conn.recv(ApiKey::Produce, 9).unwrap();
        let (code, _) = produce_result(&response);
        assert_ne!(
            code, 0,
            "a leader past its session acknowledged an acks=-1 write"
        );
    }
    // Its ISR proposal, made for a leadership of its old registration, was refused as such.
    let log = wait_until(
        "STALE_BROKER_EPOCH in the old leader's log",
        Duration::from_secs(20),
        || {
            let log = cluster.broker(leader).stderr();
            log.contains("STALE_BROKER_EPOCH").then_some(log)
        },
    );
    assert!(log.contains("shrinking the ISR"), "{log}");
    // It rejoins as a follower of the new leader, which took none of the refused writes.
    wait_until(
        "the old leader registered again",
        Duration::from_secs(20),
        || cluster.get(&format!("/brokers/ids/{leader}")),
    );
    let (code, _) = produce_to(cluster.addr(new_leader), "paused", partition, "after", -1);
    assert_eq!(code, 0);
}
