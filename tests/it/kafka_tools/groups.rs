//! The console producer and consumer (keys, headers, nulls, every formatter option),
//! kafka-consumer-groups on groups made by the console consumer and by `kcat -G` (list,
//! describe, reset-offsets, delete), and the perf tools, against their golden transcripts.

use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::describe_groups_request::DescribeGroupsRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};

use super::support::Session;
use super::*;
use crate::serve_support::KafkaConn;

/// Records with headers (`h1:v1,h2:v2`), keys and values, in the console producer's default
/// `parse.headers` format; `NULL` is the null marker.
const RECORDS: &[(&str, &str, &str)] = &[
    ("h1:v1,h2:v2", "k0", "first value"),
    ("h1:v1", "k1", "second"),
    ("h1:NULL", "NULL", "null key, null header value"),
    ("e:", "k3", "an empty header value"),
    ("h:x,h:y", "k4", "NULL"),
];

fn record_lines() -> String {
    RECORDS
        .iter()
        .map(|(h, k, v)| format!("{h}\t{k}\t{v}\n"))
        .collect()
}

/// `kcat -G <group> <topic>` without commits; killed on drop.
struct Kcat(Child);

impl Kcat {
    fn start(s: &Session, group: &str, topic: &str) -> Kcat {
        let err = File::create(s.scratch().join(format!("kcat-{group}.err"))).unwrap();
        let child = Command::new("kcat")
            .args(["-b", s.bootstrap(), "-G", group, topic, "-q", "-u"])
            .args(["-X", "enable.auto.commit=false"])
            .args(["-X", "session.timeout.ms=10000"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(err))
            .spawn()
            .expect("kcat is missing: apt-get install kcat");
        Kcat(child)
    }
}

impl Drop for Kcat {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (within a deadline) until `group` is Stable with `members` members that all have
/// their assignment, over the raw protocol (the coordinator is the one broker).
fn wait_stable(s: &Session, group: &str, members: usize) {
    let mut conn = KafkaConn::connect(s.port());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let req = DescribeGroupsRequest {
            groups: vec![StrBytes::from(group)],
            ..DescribeGroupsRequest::default()
        };
        let ResponseKind::DescribeGroups(r) = conn.call(&RequestKind::DescribeGroups(req), 1)
        else {
            panic!("not a DescribeGroups response")
        };
        let g = &r.groups[0];
        if g.group_state == "Stable"
            && g.members.len() == members
            && g.members.iter().all(|m| !m.member_assignment.is_empty())
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{group} never became Stable: {g:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn golden_console_tools_and_groups() {
    let mut s = Session::start("console_tools_and_groups");
    s.tool(
        "create c",
        TOPICS,
        &[BS, B, "--create", "--topic", "c", "--partitions", "1"],
        "",
    );
    s.tool(
        "create c2",
        TOPICS,
        &[BS, B, "--create", "--topic", "c2", "--partitions", "2"],
        "",
    );
    let out = s.tool(
        "console producer, keys and headers",
        PRODUCER,
        &[
            BS,
            B,
            "--topic",
            "c",
            "--property",
            "parse.key=true",
            "--property",
            "parse.headers=true",
            "--property",
            "null.marker=NULL",
        ],
        &record_lines(),
    );
    assert_eq!(out.code, 0, "{out:?}");
    s.tool(
        "console producer, keyed, c2",
        PRODUCER,
        &[BS, B, "--topic", "c2", "--property", "parse.key=true"],
        &super::keyed_lines(10),
    );
    let every = [
        "--property",
        "print.key=true",
        "--property",
        "print.headers=true",
        "--property",
        "print.partition=true",
        "--property",
        "print.offset=true",
        "--property",
        "print.timestamp=true",
        "--property",
        "print.value=true",
    ];
    let out = s.tool(
        "console consumer, every field, group g1",
        CONSUMER,
        &[
            &[
                BS,
                B,
                "--topic",
                "c",
                "--from-beginning",
                "--max-messages",
                "5",
                "--group",
                "g1",
            ][..],
            &every[..],
        ]
        .concat(),
        "",
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), RECORDS.len(), "{out:?}");
    for (i, ((h, k, v), line)) in RECORDS.iter().zip(&lines).enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f[0].starts_with("CreateTime:"), "{line}");
        assert_eq!(f[1], "Partition:0", "{line}");
        assert_eq!(f[2], format!("Offset:{i}"), "{line}");
        assert_eq!(f[3], h.replace("NULL", "null"), "{line}");
        assert_eq!(f[4], k.replace("NULL", "null"), "{line}");
        assert_eq!(f[5], v.replace("NULL", "null"), "{line}");
    }
    s.tool(
        "console consumer, separators and null literal",
        CONSUMER,
        &[
            BS,
            B,
            "--topic",
            "c",
            "--partition",
            "0",
            "--offset",
            "2",
            "--max-messages",
            "2",
            "--property",
            "print.key=true",
            "--property",
            "key.separator= => ",
            "--property",
            "print.headers=true",
            "--property",
            "headers.separator=|",
            "--property",
            "headers.key.separator==",
            "--property",
            "null.literal=<null>",
            "--property",
            "line.separator=;\n",
        ],
        "",
    );
    s.tool(
        "console consumer, group g2 on c2",
        CONSUMER,
        &[
            BS,
            B,
            "--topic",
            "c2",
            "--from-beginning",
            "--max-messages",
            "10",
            "--group",
            "g2",
            "--property",
            "print.key=true",
            "--property",
            "print.partition=true",
            "--property",
            "print.offset=true",
        ],
        "",
    );

    let g = |s: &mut Session, title: &str, args: &[&str]| {
        let mut all = vec![BS, B];
        all.extend_from_slice(args);
        s.tool(title, GROUPS, &all, "")
    };
    let out = g(&mut s, "groups: list", &["--list"]);
    assert_eq!(out.stdout, "g1\ng2\n", "{out:?}");
    g(&mut s, "groups: list with state", &["--list", "--state"]);
    g(
        &mut s,
        "groups: describe g1",
        &["--describe", "--group", "g1"],
    );
    g(
        &mut s,
        "groups: describe g1 members",
        &["--describe", "--group", "g1", "--members"],
    );
    g(
        &mut s,
        "groups: describe g1 state",
        &["--describe", "--group", "g1", "--state"],
    );
    g(
        &mut s,
        "groups: describe all",
        &["--describe", "--all-groups"],
    );
    g(
        &mut s,
        "groups: describe unknown",
        &["--describe", "--group", "nope"],
    );
    let reset = |extra: &[&'static str]| {
        [
            &["--reset-offsets", "--group", "g2", "--topic", "c2"][..],
            extra,
        ]
        .concat()
    };
    g(
        &mut s,
        "groups: reset to earliest, dry run",
        &reset(&["--to-earliest", "--dry-run"]),
    );
    g(
        &mut s,
        "groups: reset to earliest",
        &reset(&["--to-earliest", "--execute"]),
    );
    g(
        &mut s,
        "groups: reset to offset 3",
        &reset(&["--to-offset", "3", "--execute"]),
    );
    g(
        &mut s,
        "groups: shift by -1",
        &reset(&["--shift-by", "-1", "--execute"]),
    );
    g(
        &mut s,
        "groups: shift by 100, dry run",
        &reset(&["--shift-by", "100", "--dry-run"]),
    );
    g(&mut s, "groups: reset, no mode", &reset(&["--to-latest"]));
    g(
        &mut s,
        "groups: reset every topic to latest",
        &[
            "--reset-offsets",
            "--group",
            "g1",
            "--all-topics",
            "--to-latest",
            "--execute",
        ],
    );
    g(
        &mut s,
        "groups: reset to a datetime",
        &reset(&["--to-datetime", "2000-01-01T00:00:00.000", "--execute"]),
    );
    g(
        &mut s,
        "groups: reset to current, export",
        &reset(&["--to-current", "--export", "--dry-run"]),
    );
    g(
        &mut s,
        "groups: reset, a partition of the topic",
        &[
            "--reset-offsets",
            "--group",
            "g2",
            "--topic",
            "c2:1",
            "--to-offset",
            "2",
            "--execute",
        ],
    );
    g(
        &mut s,
        "groups: describe g2 after resets",
        &["--describe", "--group", "g2"],
    );
    g(
        &mut s,
        "groups: describe g2 offsets",
        &["--describe", "--group", "g2", "--offsets"],
    );
    g(
        &mut s,
        "groups: delete g2's offsets of c2",
        &["--delete-offsets", "--group", "g2", "--topic", "c2"],
    );
    g(
        &mut s,
        "groups: delete g2's offsets of an unknown topic",
        &["--delete-offsets", "--group", "g2", "--topic", "nope"],
    );
    g(
        &mut s,
        "groups: describe g2 without offsets",
        &["--describe", "--group", "g2"],
    );

    // A group with an active member (kcat -G, no commits, so the offsets stay those of g2's
    // absence: none).
    let kcat = Kcat::start(&s, "g3", "c2");
    wait_stable(&s, "g3", 1);
    g(
        &mut s,
        "groups: describe active g3",
        &["--describe", "--group", "g3"],
    );
    g(
        &mut s,
        "groups: describe active g3 state",
        &["--describe", "--group", "g3", "--state"],
    );
    g(
        &mut s,
        "groups: describe active g3 members",
        &["--describe", "--group", "g3", "--members", "--verbose"],
    );
    g(
        &mut s,
        "groups: list with state, g3 active",
        &["--list", "--state"],
    );
    g(
        &mut s,
        "groups: list stable groups",
        &["--list", "--state", "Stable"],
    );
    g(
        &mut s,
        "groups: delete offsets of an active group's topic",
        &["--delete-offsets", "--group", "g3", "--topic", "c2"],
    );
    g(
        &mut s,
        "groups: reset an active group",
        &[
            "--reset-offsets",
            "--group",
            "g3",
            "--topic",
            "c2",
            "--to-earliest",
            "--execute",
        ],
    );
    let out = g(
        &mut s,
        "groups: delete a non-empty group",
        &["--delete", "--group", "g3"],
    );
    assert!(out.stdout.contains("GroupNotEmptyException"), "{out:?}");
    drop(kcat);

    let out = g(&mut s, "groups: delete g1", &["--delete", "--group", "g1"]);
    assert_eq!(
        out.stdout, "Deletion of requested consumer groups ('g1') was successful.\n",
        "{out:?}"
    );
    g(
        &mut s,
        "groups: delete unknown",
        &["--delete", "--group", "nope"],
    );
    g(&mut s, "groups: list after deletes", &["--list"]);
    s.tool(
        "describe the offsets topic",
        TOPICS,
        &[BS, B, "--describe", "--topic", "__consumer_offsets"],
        "",
    );
    s.tool(
        "configs of the offsets topic",
        CONFIGS,
        &[
            BS,
            B,
            "--entity-type",
            "topics",
            "--entity-name",
            "__consumer_offsets",
            "--describe",
        ],
        "",
    );
    s.tool(
        "list, internal topics excluded",
        TOPICS,
        &[BS, B, "--list", "--exclude-internal"],
        "",
    );
    s.finish();
}

/// The producer and consumer perf tools finish and report the counts asked for.
#[test]
fn golden_perf_tools() {
    let mut s = Session::start("perf_tools");
    s.tool(
        "create p",
        TOPICS,
        &[BS, B, "--create", "--topic", "p", "--partitions", "2"],
        "",
    );
    let out = s.tool_figures(
        "producer perf",
        PRODUCER_PERF,
        &[
            "--topic",
            "p",
            "--num-records",
            "5000",
            "--record-size",
            "100",
            "--throughput",
            "-1",
            "--producer-props",
            "bootstrap.servers={bootstrap}",
            "acks=1",
        ],
        "",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("5000 records sent"),
        "{out:?}"
    );
    let out = s.tool_figures(
        "consumer perf",
        CONSUMER_PERF,
        &[
            BS,
            B,
            "--topic",
            "p",
            "--messages",
            "5000",
            "--timeout",
            "60000",
        ],
        "",
    );
    assert_eq!(out.code, 0, "{out:?}");
    // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, ...
    let row: Vec<&str> = out.stdout.lines().last().unwrap().split(", ").collect();
    assert_eq!(row[4], "5000", "{out:?}");
    assert_eq!(row[2], "0.4768", "{out:?}");
    s.finish();
}
