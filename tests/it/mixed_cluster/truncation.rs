//! Epoch-based truncation across kinds (truncation on fetch, KIP-279): a leader whose followers
//! are paused takes acks=1 records only it has and dies by kill -9; a follower of the other
//! kind is elected and takes acks=-1 records; restarted, the old leader fetches from it, is
//! answered with a diverging epoch, truncates what it alone had, and ends with the new leader's
//! log batch for batch. Once with a Kafka 3.9.1 leader truncating under a kcli leader, once with
//! a kcli leader truncating under a Kafka leader.

use std::time::Duration;

use kcli::protocol::record::batch::RecordBatchHeader;

use super::{assert_identical_replicas, create_topic};
use crate::serve_support::{KafkaConn, batch_of, list_offset, produce_request, produce_result};
use crate::support::cluster::{log_batches, metadata, signal, wait_until};
use crate::support::mixed_cluster::MixedCluster;

const TOPIC: &str = "diverge";
/// Long enough that a follower paused for a second keeps its session and its ISR place.
const SETTINGS: &[(&str, &str)] = &[
    ("zookeeper.session.timeout.ms", "10000"),
    ("replica.lag.time.max.ms", "30000"),
];
/// The dead leader's session, then an election (by a controller that may itself be new).
const FAILOVER: Duration = Duration::from_secs(45);
/// The acks=1 records only the first leader takes.
const UNREPLICATED: i64 = 20;

/// Produces one batch of `value` to partition 0 on `port` with `acks`; the base offset, or the
/// error code.
fn produce(port: u16, value: &str, acks: i16) -> Result<i64, i16> {
    let mut conn = KafkaConn::connect(port);
    let request = produce_request(TOPIC, 0, batch_of(&[value.as_bytes().to_vec()]), acks);
    let (code, base) = produce_result(&conn.call(&request, 9));
    if code == 0 { Ok(base) } else { Err(code) }
}

/// Partition 0 on `[leader, followers..]`: three committed records, then twenty acks=1 records
/// while the followers are paused, the leader killed, a follower elected and given four acks=-1
/// records, and the old leader restarted: its log ends as the new leader's.
fn a_restarted_leader_truncates_to_the_new_leader(
    mut cluster: MixedCluster,
    leader: i32,
    followers: [i32; 2],
) {
    create_topic(
        &cluster,
        TOPIC,
        &[&[leader, followers[0], followers[1]]],
        &[],
    );
    let dir = |cluster: &MixedCluster, id: i32| cluster.log_dir(id).join(format!("{TOPIC}-0"));
    for i in 0..3 {
        let base = wait_until("an acks=-1 write to the first leader", FAILOVER, || {
            produce(cluster.port(leader), &format!("committed-{i}"), -1).ok()
        });
        assert_eq!(base, i);
    }

    // Paused well under their session and the lag. A follower's fetch parked on the leader may
    // still carry acks=1 records into its socket: the first one from a kcli leader, and from a
    // Kafka leader as many as were appended when it read the log for that answer (it completes
    // the parked fetch after the produce answer). Not the last: each produce is sent after the
    // one before was answered, and nothing is read for a paused follower after that answer, so
    // of twenty some are always its own.
    let pids: Vec<u32> = followers.iter().map(|id| cluster.node(*id).pid()).collect();
    for pid in &pids {
        signal(*pid, "STOP");
    }
    for i in 0..UNREPLICATED {
        let written = produce(cluster.port(leader), &format!("unreplicated-{i}"), 1);
        assert_eq!(written, Ok(3 + i), "acks=1 to the leader");
    }
    cluster.kill9(leader);
    for pid in &pids {
        signal(*pid, "CONT");
    }
    assert_eq!(
        log_batches(&dir(&cluster, leader)).len(),
        usize::try_from(3 + UNREPLICATED).unwrap()
    );

    let new = wait_until("a follower elected", FAILOVER, || {
        let leader = metadata(cluster.port(followers[0]))?
            .topics
            .get(TOPIC)?
            .1
            .get(&0)?
            .leader;
        followers.contains(&leader).then_some(leader)
    });
    let mut diverged_at = None;
    for i in 0..4 {
        let base = wait_until("an acks=-1 write to the new leader", FAILOVER, || {
            produce(cluster.port(new), &format!("after-{i}"), -1).ok()
        });
        let start = *diverged_at.get_or_insert(base);
        assert_eq!(base, start + i, "{}", cluster.logs());
    }
    let diverged_at = diverged_at.unwrap();
    assert!(
        (3..3 + UNREPLICATED).contains(&diverged_at),
        "the new leader has some of the unreplicated records, not all: it ends at {diverged_at}"
    );
    let (code, high_watermark, _) =
        list_offset(&mut KafkaConn::connect(cluster.port(new)), TOPIC, 0, -1);
    assert_eq!((code, high_watermark), (0, diverged_at + 4));

    // Back on its dir, the old leader follows the new one of the other kind.
    cluster.restart(leader);
    wait_until(
        "the old leader's log ends at the new leader's high watermark, batch for batch",
        Duration::from_secs(60),
        || {
            let theirs = log_batches(&dir(&cluster, new));
            let ours = log_batches(&dir(&cluster, leader));
            let end = ours.last().map(|(base, _, _, bytes)| {
                let header = RecordBatchHeader::parse(bytes).unwrap();
                base + i64::from(header.last_offset_delta) + 1
            });
            (end == Some(high_watermark) && ours == theirs).then_some(())
        },
    );
    let kept = log_batches(&dir(&cluster, leader));
    for i in (diverged_at - 3)..UNREPLICATED {
        let value = format!("unreplicated-{i}");
        assert!(
            !kept
                .iter()
                .any(|(_, _, _, bytes)| bytes.windows(value.len()).any(|w| w == value.as_bytes())),
            "{value} was truncated away"
        );
    }
    let mut all = vec![new];
    all.extend(followers.iter().filter(|f| **f != new));
    all.push(leader);
    assert_identical_replicas(&cluster, TOPIC, 0, &all);
}

#[test]
fn a_kafka_leader_truncates_what_it_alone_had_under_a_kcli_leader() {
    let cluster = MixedCluster::start(&[1], &[2, 3], SETTINGS);
    a_restarted_leader_truncates_to_the_new_leader(cluster, 1, [2, 3]);
}

#[test]
fn a_kcli_leader_truncates_what_it_alone_had_under_a_kafka_leader() {
    let cluster = MixedCluster::start(&[2, 3], &[1], SETTINGS);
    a_restarted_leader_truncates_to_the_new_leader(cluster, 1, [2, 3]);
}
