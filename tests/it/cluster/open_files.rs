//! More replicas than descriptors in a cluster: broker 3 runs under `ulimit -n` 300 (soft and
//! hard) and is the preferred leader of every partition of a 400-partition topic, each with a
//! follower on broker 1 or 2. It keeps at most 172 segment files open and closes idle ones, so
//! it leads all 400: every partition takes a record with acks=-1 through it and reads back
//! there, with its descriptors under the limit. Killed -9, its partitions move to their
//! followers and take a second record; restarted under the same limit, it recovers its 400
//! logs, catches up as a follower of all of them and rejoins every ISR. Its log dir stays
//! online and nothing is refused. (Kafka, at a descriptor per segment, cannot host them.)

use std::time::Duration;

use super::create_topic_assigned;
use super::log_dirs::partitions_metadata;
use crate::serve_support::{KafkaConn, batch_of, produce_request, produce_result, read_partition};
use crate::support::cluster::{TestCluster, wait_until};

const LIMITED: i32 = 3;
const LIMIT: u64 = 300;
/// More partitions than broker 3 has descriptors.
const PARTITIONS: i32 = 400;

/// Broker 3's open descriptors.
fn open_descriptors(cluster: &TestCluster) -> u64 {
    std::fs::read_dir(format!("/proc/{}/fd", cluster.pid(LIMITED)))
        .unwrap()
        .count() as u64
}

/// Waits until broker 1's Metadata shows every partition of `big` led as `leader` says, with
/// the ISR `isr` says (as a sorted list).
fn wait_for_every_partition(
    cluster: &TestCluster,
    what: &str,
    leader: impl Fn(i32) -> i32,
    isr: impl Fn(i32) -> Vec<i32>,
) {
    wait_until(what, Duration::from_secs(60), || {
        let ps = partitions_metadata(cluster.port(1), "big");
        (ps.len() == PARTITIONS as usize
            && ps.iter().all(|p| {
                let mut got = p.isr_nodes.clone();
                got.sort_unstable();
                p.leader_id == leader(p.partition_index) && got == isr(p.partition_index)
            }))
        .then_some(())
    });
}

/// The follower of partition `p`.
fn follower(p: i32) -> i32 {
    1 + p % 2
}

/// A connection to each broker, made on first use.
struct Conns<'a> {
    cluster: &'a TestCluster,
    open: std::collections::BTreeMap<i32, KafkaConn>,
}

impl<'a> Conns<'a> {
    fn new(cluster: &'a TestCluster) -> Self {
        Conns {
            cluster,
            open: Default::default(),
        }
    }

    fn to(&mut self, id: i32) -> &mut KafkaConn {
        let port = self.cluster.port(id);
        self.open
            .entry(id)
            .or_insert_with(|| KafkaConn::connect(port))
    }
}

/// Produces a record of value `round` to every partition of `big` at its leader (acks=-1),
/// checking broker 3's descriptors every 50 partitions it leads.
fn produce_everywhere(cluster: &TestCluster, leader: impl Fn(i32) -> i32, round: u8) {
    let mut conns = Conns::new(cluster);
    for p in 0..PARTITIONS {
        let (error, _) = produce_result(
            &conns
                .to(leader(p))
                .call(&produce_request("big", p, batch_of(&[vec![round]]), -1), 9),
        );
        assert_eq!(
            error,
            0,
            "round {round}: produce to big-{p}\n{}",
            cluster.logs()
        );
        if leader(p) == LIMITED && p % 50 == 0 {
            let open = open_descriptors(cluster);
            assert!(open < LIMIT, "broker 3 has {open} descriptors open");
        }
    }
}

/// Reads every partition of `big` from its leader: the records of values 1 to `round`.
fn read_everywhere(cluster: &TestCluster, leader: impl Fn(i32) -> i32, round: u8) {
    let mut conns = Conns::new(cluster);
    let want: Vec<u8> = (1..=round).collect();
    for p in 0..PARTITIONS {
        let values: Vec<u8> = read_partition(conns.to(leader(p)), "big", p)
            .into_iter()
            .flat_map(|(_, v)| v)
            .collect();
        assert_eq!(values, want, "big-{p}");
    }
}

#[test]
fn a_broker_leads_and_follows_more_replicas_than_its_open_file_limit() {
    let mut cluster = TestCluster::start_with_open_file_limits(3, &[], &[(LIMITED, LIMIT)]);
    let started = cluster.brokers[2].stderr();
    assert!(
        started.contains(&format!("open_log_files={}", LIMIT - 128)),
        "{started}"
    );

    let assignment: Vec<[i32; 2]> = (0..PARTITIONS).map(|p| [LIMITED, follower(p)]).collect();
    let assignment: Vec<&[i32]> = assignment.iter().map(|a| a.as_slice()).collect();
    create_topic_assigned(&cluster, "big", &assignment);
    let both = |p: i32| {
        let mut isr = vec![follower(p), LIMITED];
        isr.sort_unstable();
        isr
    };
    wait_for_every_partition(
        &cluster,
        "broker 3 leading every partition",
        |_| LIMITED,
        both,
    );

    produce_everywhere(&cluster, |_| LIMITED, 1);
    read_everywhere(&cluster, |_| LIMITED, 1);

    // Killed -9: the followers take over and take a record each.
    cluster.kill9(LIMITED);
    wait_for_every_partition(
        &cluster,
        "every partition led by its follower",
        follower,
        |p| vec![follower(p)],
    );
    produce_everywhere(&cluster, follower, 2);

    // Restarted under the same limit: it recovers its logs and rejoins every ISR.
    cluster.restart_once_deregistered(LIMITED, Duration::from_secs(60));
    wait_for_every_partition(&cluster, "broker 3 back in every ISR", follower, both);
    let open = open_descriptors(&cluster);
    assert!(open < LIMIT, "broker 3 has {open} descriptors open");
    read_everywhere(&cluster, follower, 2);

    let log = cluster.brokers[2].stderr();
    for unwanted in ["log dir failed", "refused", "too many open files"] {
        assert!(!log.contains(unwanted), "{unwanted:?}\n{log}");
    }
    assert!(cluster.broker(LIMITED).is_running());
}
