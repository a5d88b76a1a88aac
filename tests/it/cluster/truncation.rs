//! Epoch-based truncation between broker processes (KIP-101/279, truncation on fetch): a leader
//! whose followers are stopped takes acks=1 records only it has, dies by kill -9, and a
//! follower (still in the ISR) is elected and takes acks=-1 records; restarted, the old leader
//! follows it, is told by its diverging answer where their logs part, truncates its
//! unreplicated records away and ends up with the new leader's log batch for batch, and its
//! leader-epoch checkpoint holds the epochs of the batches it has.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kcli::protocol::record::batch::RecordBatchHeader;
use kcli::storage::leader_epoch_cache::{EpochEntry, LeaderEpochFileCache};

use super::create_topic;
use crate::serve_support::{KafkaConn, batch_of, list_offset, produce_request, produce_result};
use crate::support::cluster::{TestCluster, log_batches as batches, metadata, signal, wait_until};

const TOPIC: &str = "diverge";
const PARTITIONS: i32 = 3;
/// Long enough that a follower stopped for a second keeps its session (and its ISR place).
const SESSION_MS: &str = "10000";
/// How long a failover may take: the dead broker's session, then an election.
const FAILOVER: Duration = Duration::from_secs(30);

/// Produces one batch of `value` to `partition` on `port` with `acks`; the base offset, or
/// the error code.
fn produce(port: u16, partition: i32, value: &str, acks: i16) -> Result<i64, i16> {
    let mut conn = KafkaConn::connect(port);
    let request = produce_request(
        TOPIC,
        partition,
        batch_of(&[value.as_bytes().to_vec()]),
        acks,
    );
    let (code, base) = produce_result(&conn.call(&request, 9));
    if code == 0 { Ok(base) } else { Err(code) }
}

#[test]
fn a_restarted_leader_truncates_what_it_alone_had_and_matches_the_new_leader() {
    let mut cluster = TestCluster::start(
        3,
        &[
            ("zookeeper.session.timeout.ms", SESSION_MS),
            ("replica.lag.time.max.ms", "30000"),
        ],
    );
    create_topic(&cluster, TOPIC, PARTITIONS, 3);
    // A partition whose leader is not the controller: the controller elects its new leader
    // while the old one is dead.
    let controller = cluster.controller_id().unwrap();
    let (partition, old) = metadata(cluster.port(1)).unwrap().topics[TOPIC]
        .1
        .iter()
        .map(|(p, view)| (*p, view.leader))
        .find(|(_, leader)| *leader != controller)
        .unwrap();
    let followers: Vec<i32> = (1..=3).filter(|id| *id != old).collect();
    let dirs: Vec<std::path::PathBuf> = cluster
        .brokers
        .iter()
        .map(|b| b.data_dir().join(format!("{TOPIC}-{partition}")))
        .collect();
    let dir = |id: i32| dirs[usize::try_from(id - 1).unwrap()].clone();

    // Three committed records (every replica has them), at the first leader epoch.
    for i in 0..3 {
        let value = format!("committed-{i}");
        let base = wait_until("an acks=-1 write to the first leader", FAILOVER, || {
            produce(cluster.port(old), partition, &value, -1).ok()
        });
        assert_eq!(base, i);
    }
    let committed = batches(&dir(old));
    assert_eq!(committed.len(), 3);
    let first_epoch = committed[0].1;

    // Followers stopped (for well under their session and replica.lag.time.max.ms): five
    // acks=1 records that only the leader gets. (A follower's fetch parked on the leader
    // answers with the first of them into the stopped follower's socket, so a follower may
    // read that one when it resumes; none of the later ones.)
    let pids: Vec<u32> = followers
        .iter()
        .map(|id| cluster.broker(*id).pid())
        .collect();
    for pid in &pids {
        signal(*pid, "STOP");
    }
    let unreplicated: Vec<String> = (0..5).map(|i| format!("unreplicated-{i}")).collect();
    for (i, value) in unreplicated.iter().enumerate() {
        let written = produce(cluster.port(old), partition, value, 1);
        assert_eq!(written, Ok(3 + i as i64), "acks=1 to the leader");
    }
    cluster.broker(old).kill9();
    for pid in &pids {
        signal(*pid, "CONT");
    }
    let before = batches(&dir(old));
    assert_eq!(before.len(), 8, "the old leader's log has them");

    let alive: BTreeSet<i32> = followers.iter().copied().collect();
    let new = wait_until("a follower elected", FAILOVER, || {
        let m = metadata(cluster.port(followers[0]))?;
        let leader = m.topics.get(TOPIC)?.1.get(&partition)?.leader;
        alive.contains(&leader).then_some(leader)
    });
    // Four acks=-1 records to the new leader, at its new epoch, from its log end: 3, or 4
    // when it had read the first unreplicated record.
    let mut diverged_at = None;
    for i in 0..4 {
        let value = format!("after-{i}");
        let base = wait_until("an acks=-1 write to the new leader", FAILOVER, || {
            produce(cluster.port(new), partition, &value, -1).ok()
        });
        let start = *diverged_at.get_or_insert(base);
        assert_eq!(base, start + i, "{}", cluster.logs());
    }
    let diverged_at = diverged_at.unwrap();
    assert!((3..=4).contains(&diverged_at), "{diverged_at}");
    let high_watermark = {
        let mut conn = KafkaConn::connect(cluster.port(new));
        let (code, offset, _) = list_offset(&mut conn, TOPIC, partition, -1);
        assert_eq!(code, 0);
        offset
    };
    assert_eq!(high_watermark, diverged_at + 4);

    // The old leader comes back as a follower of the new one.
    cluster.restart_once_deregistered(old, FAILOVER);
    let expected = wait_until(
        "the old leader's log ends at the new leader's high watermark, batch for batch",
        Duration::from_secs(60),
        || {
            let theirs = batches(&dir(new));
            let ours = batches(&dir(old));
            let end = ours.last().map(|(base, _, _, bytes)| {
                let header = RecordBatchHeader::parse(bytes).unwrap();
                base + i64::from(header.last_offset_delta) + 1
            });
            (end == Some(high_watermark) && ours == theirs).then_some(theirs)
        },
    );
    let log = cluster.broker(old).stderr();
    assert!(
        log.contains("truncating on a diverging epoch"),
        "the fetch's diverging epoch truncated it:\n{log}"
    );
    let restarted = batches(&dir(old));
    let kept = usize::try_from(diverged_at).unwrap();
    assert_eq!(expected.len(), kept + 4);
    assert_eq!(
        restarted[..kept],
        before[..kept],
        "what the logs share stays as it was"
    );
    for (i, (base, epoch, _, _)) in restarted.iter().enumerate() {
        assert_eq!(*base, i as i64);
        if i < kept {
            assert_eq!(*epoch, first_epoch);
        } else {
            assert!(
                *epoch > first_epoch,
                "batch {i} is the new leader's: {epoch}"
            );
        }
    }
    for value in &unreplicated[kept - 3..] {
        assert!(
            !restarted
                .iter()
                .any(|(_, _, _, bytes)| contains(bytes, value.as_bytes())),
            "{value} survived the truncation"
        );
    }
    // The third replica has the same log.
    let third = followers.iter().copied().find(|id| *id != new).unwrap();
    wait_until("the third replica matches", Duration::from_secs(30), || {
        (batches(&dir(third)) == expected).then_some(())
    });
    // The restarted broker's epochs are those of its batches (each epoch from its first batch).
    // The checkpoint is written (fsynced and renamed) after the batches land in the segment, so
    // it may trail the log that was just read.
    let mut from_batches: Vec<EpochEntry> = Vec::new();
    for (base, epoch, _, _) in &restarted {
        if from_batches.last().is_none_or(|e| e.epoch != *epoch) {
            from_batches.push(EpochEntry {
                epoch: *epoch,
                start_offset: *base,
            });
        }
    }
    let path = dir(old).join("leader-epoch-checkpoint");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let checkpoint = LeaderEpochFileCache::read_entries(&path).unwrap();
        if checkpoint == from_batches || Instant::now() > deadline {
            assert_eq!(checkpoint, from_batches);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
