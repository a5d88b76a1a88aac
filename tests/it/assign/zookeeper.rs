//! `kcli assign --zookeeper` against a real ZooKeeper with hand-written znodes (as Kafka
//! writes them, under a chroot): brokers and racks from `/brokers/ids`, `--broker-list`, the
//! rack-aware modes, existing topics from `/brokers/topics` with and without
//! `--minimize-movement`, an unknown topic, and the legacy `/admin/reassign_partitions` path of
//! `--execute` and `--verify`.

use kcli::admin::minimize_movement::Constraints;
use kcli::admin::random::AssignmentStart;
use kcli::admin::replica_assignment::{Assignment, BrokerMetadata, assign_replicas_to_brokers};
use kcli::zk::ZkClient;

use super::{assign, proposal};
use crate::support::cluster::with_zk;
use crate::support::zookeeper::{ZkServer, write_znode};

/// AdminUtils' documented racks: alternated as 0,3,1,5,4,2.
const RACKS: &[(i32, &str)] = &[
    (0, "rack1"),
    (1, "rack3"),
    (2, "rack3"),
    (3, "rack2"),
    (4, "rack2"),
    (5, "rack1"),
];

fn registration(id: i32, rack: Option<&str>) -> String {
    let rack = rack.map_or(String::new(), |r| format!(r#","rack":"{r}""#));
    format!(
        r#"{{"features":{{}},"listener_security_protocol_map":{{"PLAINTEXT":"PLAINTEXT"}},"endpoints":["PLAINTEXT://h{id}:9092"],"jmx_port":-1,"port":9092,"host":"h{id}","version":5,"timestamp":"1"{rack}}}"#
    )
}

fn topic_znode(assignment: &Assignment) -> String {
    let parts: Vec<String> = assignment
        .iter()
        .map(|(p, r)| {
            let ids: Vec<String> = r.iter().map(i32::to_string).collect();
            format!(r#""{p}":[{}]"#, ids.join(","))
        })
        .collect();
    format!(
        r#"{{"version":3,"partitions":{{{}}},"adding_replicas":{{}},"removing_replicas":{{}}}}"#,
        parts.join(",")
    )
}

fn racked() -> Vec<BrokerMetadata> {
    RACKS
        .iter()
        .map(|(id, r)| BrokerMetadata::new(*id, Some(r)))
        .collect()
}

/// ZooKeeper with the documented brokers under `/kafka` and topic `t` (6 partitions, rf 3) laid
/// out by Kafka's algorithm from start index 0; broker 9 is registered without a rack when
/// `rackless` is given.
fn cluster(rackless: bool) -> (ZkServer, String, Assignment) {
    let server = ZkServer::start();
    let connect = format!("{}/kafka", server.connect_string());
    let t = assign_replicas_to_brokers(&racked(), 6, 3, AssignmentStart::fixed(0), 0).unwrap();
    let topic = topic_znode(&t);
    with_zk(&server.connect_string(), async |zk: &dyn ZkClient| {
        write_znode(zk, "/kafka/brokers/topics", b"").await;
        for (id, rack) in RACKS {
            let data = registration(*id, Some(rack));
            write_znode(zk, &format!("/kafka/brokers/ids/{id}"), data.as_bytes()).await;
        }
        if rackless {
            write_znode(zk, "/kafka/brokers/ids/9", registration(9, None).as_bytes()).await;
        }
        write_znode(zk, "/kafka/brokers/topics/t", topic.as_bytes()).await;
    });
    (server, connect, t)
}

fn as_assignment(stdout: &str) -> Assignment {
    proposal(stdout)
        .into_iter()
        .map(|(_, p, r)| {
            let replicas = r.iter().map(|b| i32::try_from(*b).unwrap()).collect();
            (i32::try_from(p).unwrap(), replicas)
        })
        .collect()
}

#[test]
fn brokers_racks_and_topics_come_from_zookeeper() {
    let (server, connect, current) = cluster(false);
    let zk = ["--zookeeper", connect.as_str()];
    let run = |extra: &[&str]| {
        let mut args = zk.to_vec();
        args.extend_from_slice(extra);
        assign(&args)
    };
    // A new topic over the registered brokers: the documented rack-aware example.
    let (code, out, err) = run(&[
        "--partitions",
        "7",
        "--replication-factor",
        "3",
        "--start-index",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}\n{}", server.log());
    let got = as_assignment(&out);
    assert_eq!(got[&0], [0, 3, 1]);
    assert_eq!(got[&6], [0, 4, 2]);
    // --broker-list keeps some; an unregistered one is named.
    let (code, out, err) = run(&[
        "--partitions",
        "4",
        "--replication-factor",
        "2",
        "--broker-list",
        "0,3",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        as_assignment(&out)
            .values()
            .flatten()
            .all(|b| [0, 3].contains(b))
    );
    let (code, _, err) = run(&[
        "--partitions",
        "4",
        "--replication-factor",
        "2",
        "--broker-list",
        "0,7",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--broker-list: broker 7 is not registered"),
        "{err}"
    );

    // The existing topic already meets Kafka's constraints: nothing moves, with any draws.
    let topics = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(topics.path(), r#"{"topics":[{"topic":"t"}],"version":1}"#).unwrap();
    let file = topics.path().to_str().unwrap();
    let (code, out, err) = run(&[
        "--topics-to-move-json",
        file,
        "--minimize-movement",
        "--seed",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Topic t: the current assignment meets the constraints; nothing moves"),
        "{out}"
    );
    assert!(
        out.contains("Replicas moved: 0 of 18 (Kafka's assignment"),
        "{out}"
    );
    assert!(out.contains("Bytes moved: unknown"), "{out}");
    assert!(
        out.contains("Current partition replica assignment\n"),
        "{out}"
    );

    // Without --minimize-movement: Kafka's --generate, from the printed draws.
    let (code, out, err) = run(&["--topics-to-move-json", file, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let start = printed_draws(&err);
    let kafka = assign_replicas_to_brokers(&racked(), 6, 3, start, 0).unwrap();
    assert_eq!(as_assignment(&out), kafka);

    // Leaving brokers 4 and 5: their replicas move, the rest as little as the constraints allow.
    let (code, out, err) = run(&[
        "--topics-to-move-json",
        file,
        "--minimize-movement",
        "--broker-list",
        "0,1,2,3",
        "--seed",
        "9",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let moved = as_assignment(&out);
    let targets: Vec<BrokerMetadata> = racked().into_iter().filter(|b| b.id < 4).collect();
    let start = printed_draws(&err);
    let kafka = assign_replicas_to_brokers(&targets, 6, 3, start, 0).unwrap();
    assert_eq!(Constraints::new(&targets, &kafka, 3).check(&moved), Ok(()));
    let on_leaving = current.values().flatten().filter(|b| **b >= 4).count();
    let line = err
        .lines()
        .find(|l| l.starts_with("Replicas moved: "))
        .unwrap();
    let count: usize = line["Replicas moved: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(count >= on_leaving, "{line}");

    // An unknown topic is named.
    std::fs::write(
        topics.path(),
        r#"{"topics":[{"topic":"t"},{"topic":"nope"}]}"#,
    )
    .unwrap();
    let (code, _, err) = run(&["--topics-to-move-json", file]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        "kcli: --topics-to-move-json: Topic nope not found."
    );
}

#[test]
fn rack_aware_modes_over_a_broker_without_a_rack() {
    let (_server, connect, _) = cluster(true);
    let base = [
        "--zookeeper",
        connect.as_str(),
        "--partitions",
        "7",
        "--replication-factor",
        "2",
        "--format",
        "json",
    ];
    let (code, _, err) = assign(&base);
    assert_eq!(code, 2);
    assert!(
        err.contains("not all brokers have rack information (no rack: 9)"),
        "{err}"
    );
    for mode in ["safe", "disabled"] {
        let mut args = base.to_vec();
        args.extend(["--rack-aware-mode", mode, "--start-index", "0"]);
        let (code, out, err) = assign(&args);
        assert_eq!(code, 0, "{mode}: {err}");
        // Rack-unaware over 0..5 and 9, by id.
        assert_eq!(as_assignment(&out)[&0], [0, 1], "{mode}");
        assert_eq!(as_assignment(&out)[&6], [9, 0], "{mode}");
    }
}

#[test]
fn execute_and_verify_through_the_legacy_znode() {
    let (server, connect, _) = cluster(false);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[5,4,2],"log_dirs":["any","any","any"]}]}"#,
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    let run =
        |action: &str| assign(&[action, "--reassignment-json", plan, "--zookeeper", &connect]);
    let (code, out, err) = run("--execute");
    assert_eq!(code, 0, "{err}\n{}", server.log());
    assert_eq!(
        out,
        "Current partition replica assignment\n\n\
         {\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[0,3,1],\"log_dirs\":[\"any\",\"any\",\"any\"]}]}\n\n\
         Save this to use as the --reassignment-json-file option during rollback\n\
         Successfully started partition reassignment for t-0\n"
    );
    let znode = with_zk(&connect, async |zk: &dyn ZkClient| {
        zk.get_data("/admin/reassign_partitions", false)
            .await
            .unwrap()
            .0
    });
    assert_eq!(
        String::from_utf8(znode).unwrap(),
        r#"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[5,4,2]}]}"#
    );
    let (code, out, _) = run("--verify");
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "Status of partition reassignment:\nReassignment of partition t-0 is still in progress.\n"
    );
    let (code, _, err) = run("--execute");
    assert_eq!(code, 2);
    assert!(
        err.contains("a partition reassignment is in progress"),
        "{err}"
    );
    // The controller's work, by hand: the target in place, the znode gone.
    let done: Assignment = [(0, vec![5, 4, 2])].into_iter().collect();
    with_zk(&connect, async |zk: &dyn ZkClient| {
        zk.delete("/admin/reassign_partitions", -1).await.unwrap();
        write_znode(zk, "/brokers/topics/t", topic_znode(&done).as_bytes()).await;
    });
    let (code, out, err) = run("--verify");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Reassignment of partition t-0 is completed."),
        "{out}"
    );
}

/// The start index and shift `kcli assign` printed for topic `t` on stderr.
fn printed_draws(err: &str) -> AssignmentStart {
    let draws = err
        .lines()
        .find_map(|l| l.strip_prefix("Topic t: start index "))
        .unwrap_or_else(|| panic!("no draws printed: {err}"));
    let (start, shift) = draws.split_once(", replica shift ").unwrap();
    AssignmentStart {
        start_index: start.parse().unwrap(),
        replica_shift: shift.parse().unwrap(),
    }
}
