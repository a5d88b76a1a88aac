//! A consumer group whose coordinator moves between kinds: the leader of its `__consumer_offsets`
//! partition goes from a Kafka broker to a kcli broker and back (Kafka's own
//! `kafka-reassign-partitions` reorders the replicas, `kafka-leader-election` makes the first
//! one lead). Each new coordinator loads the group from the offsets the other kind wrote, so a
//! member that joins after a move starts where the last one committed, and over the three
//! coordinators the group reads every record once. Kafka's `kafka-consumer-groups --describe`
//! on the mixed cluster shows the last commits.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kcli::coordinator::group::offsets_records::partition_for;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Message, Offset};

use super::{create_topic, kafka_tool, move_leadership, produce};
use crate::serve_support::KafkaConn;
use crate::support::cluster::{metadata, wait_until};
use crate::support::mixed_cluster::MixedCluster;

const TOPIC: &str = "events";
const GROUP: &str = "mixed-group";
const ASSIGNMENT: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];
const RECORDS: usize = 300;
/// Records each member reads before it commits and leaves.
const PER_MEMBER: usize = 100;
const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// The group's coordinator as broker `port` names it (FindCoordinator v3), once it has one.
fn coordinator(port: u16) -> Option<i32> {
    let mut conn = KafkaConn::connect(port);
    let response = conn.call(
        &RequestKind::FindCoordinator(FindCoordinatorRequest {
            key: StrBytes::from(GROUP.to_string()),
            key_type: 0,
            ..Default::default()
        }),
        3,
    );
    let ResponseKind::FindCoordinator(r) = response else {
        panic!("not a FindCoordinator response");
    };
    (r.error_code == 0).then_some(r.node_id)
}

/// One member's turn: joins the group, checks it starts at `committed` (the start of each
/// partition when empty), reads `PER_MEMBER` records, commits them and leaves. Returns the new
/// committed offsets and the (partition, offset) of each record read.
fn member_turn(
    cluster: &MixedCluster,
    committed: &BTreeMap<i32, i64>,
) -> (BTreeMap<i32, i64>, Vec<(i32, i64)>) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("group.id", GROUP)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", "6000")
        .set("fetch.wait.max.ms", "100")
        .create()
        .unwrap();
    consumer.subscribe(&[TOPIC]).unwrap();
    let mut read: Vec<(i32, i64)> = Vec::new();
    let mut first: BTreeMap<i32, i64> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while read.len() < PER_MEMBER {
        assert!(
            Instant::now() < deadline,
            "member read {} of {PER_MEMBER} records within 60 s\n{}",
            read.len(),
            cluster.logs()
        );
        if let Some(m) = consumer.poll(Duration::from_millis(200)) {
            let m = m.unwrap();
            first.entry(m.partition()).or_insert(m.offset());
            read.push((m.partition(), m.offset()));
        }
    }
    for (p, offset) in &first {
        assert_eq!(
            *offset,
            committed.get(p).copied().unwrap_or(0),
            "partition {p}: the member started where the group had committed"
        );
    }
    consumer.commit_consumer_state(CommitMode::Sync).unwrap();
    let mut now = committed.clone();
    for (p, offset) in &read {
        let next = now.entry(*p).or_insert(0);
        *next = (*next).max(offset + 1);
    }
    // What the coordinator holds now, read back through it.
    let stored = consumer
        .committed(Duration::from_secs(20))
        .unwrap()
        .elements()
        .iter()
        .filter_map(|e| match e.offset() {
            Offset::Offset(o) => Some((e.partition(), o)),
            _ => None,
        })
        .collect::<BTreeMap<_, _>>();
    assert_eq!(stored, now, "the coordinator's committed offsets");
    consumer.unsubscribe();
    (now, read)
}

#[test]
fn a_group_keeps_its_commits_as_its_coordinator_moves_between_kinds() {
    let cluster = MixedCluster::start(&[1], &[2, 3], &[]);
    create_topic(&cluster, TOPIC, ASSIGNMENT, &[]);
    produce(&cluster, TOPIC, 3, i32::try_from(RECORDS).unwrap());

    // The offsets topic exists once a broker has been asked for a coordinator.
    wait_until(
        "a coordinator for the group",
        Duration::from_secs(60),
        || coordinator(cluster.port(1)),
    );
    let offsets_partition = partition_for(GROUP, 3);
    wait_until("the offsets topic led", Duration::from_secs(60), || {
        metadata(cluster.port(1))?
            .led_partitions(OFFSETS_TOPIC, 3, &cluster.ids())
            .map(|_| ())
    });

    let mut committed = BTreeMap::new();
    let mut all_read = Vec::new();
    // Kafka, then kcli (which loads what Kafka wrote), then Kafka again (which loads kcli's).
    for order in [[1, 2, 3], [2, 3, 1], [1, 3, 2]] {
        move_leadership(&cluster, OFFSETS_TOPIC, offsets_partition, &order);
        for id in cluster.ids() {
            wait_until(
                &format!("broker {id} names broker {} the coordinator", order[0]),
                Duration::from_secs(30),
                || coordinator(cluster.port(id)).filter(|c| *c == order[0]),
            );
        }
        let (now, read) = member_turn(&cluster, &committed);
        committed = now;
        all_read.extend(read);
    }
    all_read.sort_unstable();
    let before = all_read.len();
    all_read.dedup();
    assert_eq!(all_read.len(), before, "no record read twice by the group");
    assert_eq!(all_read.len(), RECORDS.min(3 * PER_MEMBER));

    // Kafka's own tool agrees with the last commits (on the Kafka coordinator).
    let bootstrap = cluster.bootstrap();
    let stdout = kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--describe",
            "--group",
            GROUP,
        ],
    );
    for (p, offset) in &committed {
        let row = stdout
            .lines()
            .find(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.get(1) == Some(&TOPIC) && cols.get(2) == Some(&p.to_string().as_str())
            })
            .unwrap_or_else(|| panic!("no row for {TOPIC}-{p}:\n{stdout}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cols[3],
            offset.to_string(),
            "CURRENT-OFFSET of {TOPIC}-{p}: {row}"
        );
    }
}
