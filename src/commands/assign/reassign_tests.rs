//! Tests of the ZooKeeper path of `--execute` and `--verify` over the embedded store: the
//! legacy znode as Kafka writes it, the refusals (a reassignment in progress, unknown brokers
//! and partitions), the states read back, and Kafka's status lines.

use std::sync::Arc;
use std::time::Duration;

use crate::zk::recipes::{create_recursive, ensure_persistent_paths};
use crate::zk::zk_data::{self, BrokerRegistration, TopicAssignment};
use crate::zk::{CreateMode, EmbeddedStore, ZkClient};

use super::*;

async fn cluster() -> (EmbeddedStore, Zk) {
    let store = EmbeddedStore::in_memory();
    let client: Arc<dyn ZkClient> = Arc::new(store.session());
    ensure_persistent_paths(client.as_ref()).await.unwrap();
    for id in 1..=4 {
        let registration = BrokerRegistration {
            endpoints: Vec::new(),
            rack: None,
            jmx_port: -1,
            timestamp_ms: 1,
        };
        client
            .create(
                &zk_data::broker_id_path(id),
                &registration.encode(),
                CreateMode::Ephemeral,
            )
            .await
            .unwrap();
    }
    let topic = TopicAssignment {
        partitions: [(0, vec![1, 2]), (1, vec![2, 3])].into_iter().collect(),
        ..TopicAssignment::default()
    };
    create_recursive(client.as_ref(), "/brokers/topics/t", &topic.encode())
        .await
        .unwrap();
    let zk = Zk::over(client, "embedded", Duration::from_secs(10));
    (store, zk)
}

fn targets(entries: &[(i32, &[BrokerId])]) -> BTreeMap<TopicPartition, Vec<BrokerId>> {
    entries
        .iter()
        .map(|(p, r)| (TopicPartition::new("t", *p), r.to_vec()))
        .collect()
}

async fn execute(
    zk: &Zk,
    additional: bool,
    t: &BTreeMap<TopicPartition, Vec<BrokerId>>,
) -> Result<String, String> {
    let mut out = Vec::new();
    match execute_zk(zk, additional, t, "started\n", &mut out).await {
        Ok(_) => Ok(String::from_utf8(out).unwrap()),
        Err(e) => Err(e.to_string()),
    }
}

#[tokio::test]
async fn execute_writes_the_legacy_znode_once() {
    let (store, zk) = cluster().await;
    let plan = targets(&[(0, &[3, 4]), (1, &[2, 3])]);
    let out = execute(&zk, false, &plan).await.unwrap();
    assert_eq!(
        out,
        "Current partition replica assignment\n\n\
         {\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[1,2],\"log_dirs\":[\"any\",\"any\"]},{\"topic\":\"t\",\"partition\":1,\"replicas\":[2,3],\"log_dirs\":[\"any\",\"any\"]}]}\n\n\
         Save this to use as the --reassignment-json-file option during rollback\nstarted\n"
    );
    let (data, _) = store
        .session()
        .get_data("/admin/reassign_partitions", false)
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8(data).unwrap(),
        r#"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3,4]},{"topic":"t","partition":1,"replicas":[2,3]}]}"#
    );
    let again = execute(&zk, true, &plan).await.unwrap_err();
    assert!(
        again.starts_with("a partition reassignment is in progress"),
        "{again}"
    );
    // While the znode is there, both partitions are in progress.
    let parts = plan.keys().cloned().collect();
    let states = zk_states(&zk, &parts).await.unwrap();
    assert!(states.values().all(|s| *s == State::InProgress));
}

#[tokio::test]
async fn execute_refuses_unknown_brokers_and_partitions_and_ongoing_moves() {
    let (store, zk) = cluster().await;
    assert_eq!(
        execute(&zk, false, &targets(&[(0, &[1, 9])]))
            .await
            .unwrap_err(),
        "Unknown broker id 9"
    );
    assert_eq!(
        execute(&zk, false, &targets(&[(0, &[1, 2]), (5, &[1, 2])]))
            .await
            .unwrap_err(),
        "Unable to find partition: t-5"
    );
    // An API-started reassignment shows in the topic's znode.
    let moving = TopicAssignment {
        partitions: [(0, vec![1, 2, 3]), (1, vec![2, 3])].into_iter().collect(),
        adding_replicas: [(0, vec![3])].into_iter().collect(),
        removing_replicas: [(0, vec![1])].into_iter().collect(),
        ..TopicAssignment::default()
    };
    store
        .session()
        .set_data("/brokers/topics/t", &moving.encode(), -1)
        .await
        .unwrap();
    let plan = targets(&[(1, &[3, 4])]);
    assert!(
        execute(&zk, false, &plan)
            .await
            .unwrap_err()
            .starts_with("Cannot execute because there is an existing partition assignment.")
    );
    let parts = [TopicPartition::new("t", 0), TopicPartition::new("t", 1)]
        .into_iter()
        .collect();
    let states = zk_states(&zk, &parts).await.unwrap();
    assert_eq!(states[&TopicPartition::new("t", 0)], State::InProgress);
    assert_eq!(
        states[&TopicPartition::new("t", 1)],
        State::Done {
            current: vec![2, 3]
        }
    );
    execute(&zk, true, &plan).await.unwrap();
}

#[test]
fn status_lines_are_kafkas() {
    let plan = vec![
        PartitionReassignment {
            partition: TopicPartition::new("t", 1),
            replicas: vec![3, 4],
            log_dirs: vec!["any".into(); 2],
        },
        PartitionReassignment {
            partition: TopicPartition::new("t", 0),
            replicas: vec![1, 2],
            log_dirs: vec!["any".into(); 2],
        },
        PartitionReassignment {
            partition: TopicPartition::new("s", 0),
            replicas: vec![1],
            log_dirs: vec!["any".into()],
        },
    ];
    let states: BTreeMap<TopicPartition, State> = [
        (
            TopicPartition::new("t", 0),
            State::Done {
                current: vec![1, 2],
            },
        ),
        (TopicPartition::new("t", 1), State::InProgress),
        (
            TopicPartition::new("s", 0),
            State::Done { current: vec![2] },
        ),
    ]
    .into_iter()
    .collect();
    let (text, complete) = verify_text(&plan, &states);
    assert!(!complete);
    assert_eq!(
        text,
        "Status of partition reassignment:\n\
         There is no active reassignment of partition s-0, but replica set is 2 rather than 1.\n\
         Reassignment of partition t-0 is completed.\n\
         Reassignment of partition t-1 is still in progress.\n"
    );
    let done: BTreeMap<TopicPartition, State> = [(
        TopicPartition::new("t", 0),
        State::Done {
            current: vec![1, 2],
        },
    )]
    .into_iter()
    .collect();
    assert!(verify_text(&plan[1..2], &done).1);
}
