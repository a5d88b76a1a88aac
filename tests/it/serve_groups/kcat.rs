//! `kcat -G` (Debian's kcat, librdkafka 2.0) consumer groups against `kcli serve`: three
//! members share a 6-partition topic; every record is consumed once while membership is stable
//! and after a clean leave; the leaver's partitions go to the others; after a broker restart a
//! new member resumes from the committed offsets.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use kcli::protocol::codec::Message;
use kcli::protocol::messages::consumer_protocol_assignment::ConsumerProtocolAssignment;
use kcli::protocol::messages::describe_groups_request::DescribeGroupsRequest;

use super::*;

const WAIT: Duration = Duration::from_secs(60);

/// One `kcat -G` process; killed on drop.
struct Member {
    child: Option<Child>,
    out: PathBuf,
    err: PathBuf,
}

impl Member {
    fn start(
        broker: &TestBroker,
        dir: &std::path::Path,
        name: &str,
        group: &str,
        topic: &str,
    ) -> Member {
        Self::start_with(broker, dir, name, group, topic, &[])
    }

    fn start_with(
        broker: &TestBroker,
        dir: &std::path::Path,
        name: &str,
        group: &str,
        topic: &str,
        extra: &[&str],
    ) -> Member {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        let child = Command::new("kcat")
            .args([
                "-b",
                &broker.bootstrap(),
                "-G",
                group,
                topic,
                "-u",
                "-q",
                "-f",
                "%p %o %s\\n",
            ])
            .args([
                "-X",
                "auto.offset.reset=earliest",
                "-X",
                "auto.commit.interval.ms=200",
            ])
            .args([
                "-X",
                "session.timeout.ms=6000",
                "-X",
                "heartbeat.interval.ms=500",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .spawn()
            .expect("kcat is missing: apt-get install kcat");
        Member {
            child: Some(child),
            out,
            err,
        }
    }

    /// The values this member printed.
    fn values(&self) -> Vec<String> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.splitn(3, ' ').nth(2).map(str::to_string))
            .collect()
    }

    /// SIGTERM: kcat closes its consumer (commit, LeaveGroup) and exits.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "kcat did not stop after SIGTERM: {}",
                    std::fs::read_to_string(&self.err).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn produce_values(broker: &TestBroker, topic: &str, values: &[String]) {
    let mut input = String::new();
    for v in values {
        input.push_str(&format!("{v}:{v}\n"));
    }
    let mut cmd = Command::new("kcat");
    cmd.args(["-b", &broker.bootstrap(), "-P", "-t", topic, "-K:"]);
    let (code, _, err) =
        crate::serve_support::run_within(cmd, input.as_bytes(), Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
}

/// The group's members and the partitions assigned to each, once it is Stable with `n`.
fn wait_stable(conn: &mut KafkaConn, group: &str, n: usize) -> BTreeMap<String, BTreeSet<i32>> {
    let deadline = Instant::now() + WAIT;
    loop {
        let r = conn.call(
            &RequestKind::DescribeGroups(DescribeGroupsRequest {
                groups: vec![s(group)],
                ..Default::default()
            }),
            5,
        );
        let ResponseKind::DescribeGroups(r) = r else {
            panic!()
        };
        let g = &r.groups[0];
        if g.group_state.to_string_lossy() == "Stable" && g.members.len() == n {
            let mut out = BTreeMap::new();
            for m in &g.members {
                let (_, a) =
                    ConsumerProtocolAssignment::decode_versioned(m.member_assignment.clone())
                        .unwrap();
                let parts: BTreeSet<i32> = a
                    .assigned_partitions
                    .iter()
                    .flat_map(|t| t.partitions.clone())
                    .collect();
                out.insert(m.member_id.to_string_lossy().into_owned(), parts);
            }
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "group {group} not Stable with {n} members: {g:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits until the members together printed every one of `expected`; returns all they printed.
fn wait_consumed(members: &[&Member], expected: &BTreeSet<String>) -> Vec<String> {
    let deadline = Instant::now() + WAIT;
    loop {
        let all: Vec<String> = members.iter().flat_map(|m| m.values()).collect();
        let seen: BTreeSet<&String> = all.iter().collect();
        if expected.iter().all(|v| seen.contains(v)) {
            return all;
        }
        let missing = expected.iter().filter(|v| !seen.contains(v)).count();
        assert!(
            Instant::now() < deadline,
            "{missing} records never consumed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn assert_no_duplicates(all: &[String]) {
    let mut seen = BTreeSet::new();
    let dups: Vec<&String> = all.iter().filter(|v| !seen.insert(*v)).collect();
    assert!(dups.is_empty(), "consumed more than once: {dups:?}");
}

#[test]
fn kcat_group_of_three_shares_partitions_rebalances_on_leave_and_resumes_after_restart() {
    let mut broker = TestBroker::start(&[
        ("group.initial.rebalance.delay.ms", "0"),
        ("offsets.topic.num.partitions", "5"),
        ("num.partitions", "6"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let first: Vec<String> = (0..600).map(|i| format!("a{i}")).collect();
    produce_values(&broker, "kg", &first[..1]);
    let mut conn = KafkaConn::connect(broker.port());
    let mut m1 = Member::start(&broker, dir.path(), "m1", "kg-group", "kg");
    let m2 = Member::start(&broker, dir.path(), "m2", "kg-group", "kg");
    let m3 = Member::start(&broker, dir.path(), "m3", "kg-group", "kg");
    let assignment = wait_stable(&mut conn, "kg-group", 3);
    let all: BTreeSet<i32> = assignment.values().flatten().copied().collect();
    assert_eq!(all, (0..6).collect(), "{assignment:?}");
    assert!(assignment.values().all(|p| p.len() == 2), "{assignment:?}");
    produce_values(&broker, "kg", &first[1..]);
    let expected: BTreeSet<String> = first.iter().cloned().collect();
    let consumed = wait_consumed(&[&m1, &m2, &m3], &expected);
    assert_no_duplicates(&consumed);
    for m in [&m1, &m2, &m3] {
        assert!(
            !m.values().is_empty(),
            "a member with two partitions consumed nothing"
        );
    }
    let before_leave = (m2.values().len(), m3.values().len());

    // A clean leave: the other two take over all six partitions, from the leaver's commits.
    m1.stop();
    let assignment = wait_stable(&mut conn, "kg-group", 2);
    let all: BTreeSet<i32> = assignment.values().flatten().copied().collect();
    assert_eq!(all, (0..6).collect(), "{assignment:?}");
    let second: Vec<String> = (0..300).map(|i| format!("b{i}")).collect();
    produce_values(&broker, "kg", &second);
    let mut expected: BTreeSet<String> = expected;
    expected.extend(second.iter().cloned());
    let consumed = wait_consumed(&[&m1, &m2, &m3], &expected);
    assert_no_duplicates(&consumed);
    assert_eq!(
        m2.values().len() + m3.values().len(),
        before_leave.0 + before_leave.1 + second.len(),
        "the remaining members did not get all of the second batch"
    );

    // Everyone leaves (committing), the broker restarts, a new member resumes where they were.
    let (mut m2, mut m3) = (m2, m3);
    m2.stop();
    m3.stop();
    drop(conn);
    broker.stop();
    broker.restart();
    let third: Vec<String> = (0..100).map(|i| format!("c{i}")).collect();
    produce_values(&broker, "kg", &third);
    let m4 = Member::start(&broker, dir.path(), "m4", "kg-group", "kg");
    let expected: BTreeSet<String> = third.iter().cloned().collect();
    let consumed = wait_consumed(&[&m4], &expected);
    assert_no_duplicates(&consumed);
    let old: Vec<&String> = consumed.iter().filter(|v| !v.starts_with('c')).collect();
    assert!(old.is_empty(), "consumed again after the restart: {old:?}");
}

/// The cooperative protocol (incremental rebalances, KIP-429) needs nothing of the coordinator
/// but the classic protocol: two cooperative-sticky members share the topic, and when one
/// leaves the other takes its partitions.
#[test]
fn kcat_cooperative_sticky_members_share_and_take_over_partitions() {
    let broker = TestBroker::start(&[
        ("group.initial.rebalance.delay.ms", "0"),
        ("offsets.topic.num.partitions", "5"),
        ("num.partitions", "6"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let coop = ["-X", "partition.assignment.strategy=cooperative-sticky"];
    let first: Vec<String> = (0..300).map(|i| format!("a{i}")).collect();
    produce_values(&broker, "coop", &first[..1]);
    let mut conn = KafkaConn::connect(broker.port());
    let mut m1 = Member::start_with(&broker, dir.path(), "c1", "coop-group", "coop", &coop);
    let m2 = Member::start_with(&broker, dir.path(), "c2", "coop-group", "coop", &coop);
    let assignment = wait_stable(&mut conn, "coop-group", 2);
    let deadline = Instant::now() + WAIT;
    let mut assignment = assignment;
    // An incremental rebalance may take two rounds before both members hold three partitions.
    while !assignment.values().all(|p| p.len() == 3) {
        assert!(Instant::now() < deadline, "{assignment:?}");
        std::thread::sleep(Duration::from_millis(200));
        assignment = wait_stable(&mut conn, "coop-group", 2);
    }
    produce_values(&broker, "coop", &first[1..]);
    let expected: BTreeSet<String> = first.iter().cloned().collect();
    assert_no_duplicates(&wait_consumed(&[&m1, &m2], &expected));
    m1.stop();
    let assignment = wait_stable(&mut conn, "coop-group", 1);
    assert_eq!(
        assignment.values().next().unwrap().len(),
        6,
        "{assignment:?}"
    );
    let second: Vec<String> = (0..100).map(|i| format!("b{i}")).collect();
    produce_values(&broker, "coop", &second);
    let mut expected = expected;
    expected.extend(second);
    assert_no_duplicates(&wait_consumed(&[&m1, &m2], &expected));
}
