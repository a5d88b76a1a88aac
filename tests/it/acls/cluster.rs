//! ACLs on a 3-broker kcli cluster over a real ZooKeeper, the authorizer on and the brokers'
//! PLAINTEXT principal `User:ANONYMOUS` a super user, so replication works (an acks=all
//! produce to three replicas completes, the logs identical); Kafka 3.9.1's
//! `AclCommand --authorizer-properties zookeeper.connect=...` writes ACLs that `kcli acls
//! --zookeeper` lists and every broker's cache (DescribeAcls) shows within 5 s;
//! `AclCommand --bootstrap-server` against one kcli broker adds (CreateAcls), lists
//! (DescribeAcls) and removes (DeleteAcls), the change reaching the other brokers within 5 s.

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

use super::{ACL_AUTHORIZER, acls_ok, kafka_acls, row, rows};
use crate::cluster::{create_topic, wait_for_identical_replica_logs};
use crate::support::cluster::{TestCluster, wait_until};

/// Within this every broker has applied an ACL change (the brief's bound).
const PROPAGATION: Duration = Duration::from_secs(5);

/// Waits until every broker's DescribeAcls lists exactly `want`.
fn every_broker_lists(cluster: &TestCluster, want: &[[String; 7]]) {
    for b in &cluster.brokers {
        let bootstrap = b.bootstrap();
        wait_until(
            &format!("broker {bootstrap} lists {want:?}"),
            PROPAGATION,
            || {
                let out = acls_ok(&["list", "--bootstrap-server", &bootstrap, "--format", "json"]);
                (rows(&out, "listed") == want).then_some(())
            },
        );
    }
}

#[test]
fn acl_changes_from_kafkas_tool_and_the_apis_reach_every_broker() {
    let cluster = TestCluster::start(
        3,
        &[
            ("authorizer.class.name", ACL_AUTHORIZER),
            ("super.users", "User:ANONYMOUS"),
        ],
    );
    let connect = cluster.connect();
    replicates_with_acks_all(&cluster);
    let props = format!("zookeeper.connect={connect}");

    // Kafka's tool writes through ZooKeeper; kcli reads the same znodes.
    let (code, out, err) = kafka_acls(&[
        "--authorizer-properties",
        &props,
        "--add",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Write",
        "--topic",
        "orders",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = kafka_acls(&[
        "--authorizer-properties",
        &props,
        "--add",
        "--deny-principal",
        "User:bob",
        "--operation",
        "Read",
        "--group",
        "team",
        "--resource-pattern-type",
        "prefixed",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let want = [
        row("Group", "team", "Prefixed", "User:bob", "Read", "Deny"),
        row("Topic", "orders", "Literal", "User:alice", "Write", "Allow"),
    ];
    let listed = acls_ok(&["list", "--zookeeper", &connect, "--format", "json"]);
    assert_eq!(rows(&listed, "listed"), want);
    let (data, _) = cluster.get("/kafka-acl/Topic/orders").unwrap();
    // Byte for byte as Kafka's tool wrote it (and as kcli writes it: zk/acl_store.rs).
    assert_eq!(
        data,
        r#"{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Write"}],"version":1}"#
    );
    every_broker_lists(&cluster, &want);

    // AclCommand through one kcli broker: CreateAcls, DescribeAcls, DeleteAcls.
    let bootstrap = cluster.brokers[0].bootstrap();
    let (code, out, err) = kafka_acls(&[
        "--bootstrap-server",
        &bootstrap,
        "--add",
        "--allow-principal",
        "User:carol",
        "--operation",
        "Describe",
        "--cluster",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let mut want = want.to_vec();
    want.insert(
        0,
        row(
            "Cluster",
            "kafka-cluster",
            "Literal",
            "User:carol",
            "Describe",
            "Allow",
        ),
    );
    every_broker_lists(&cluster, &want);
    let (code, out, err) = kafka_acls(&[
        "--bootstrap-server",
        &bootstrap,
        "--list",
        "--topic",
        "orders",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"),
        "{out}"
    );
    let (code, out, err) = kafka_acls(&[
        "--bootstrap-server",
        &bootstrap,
        "--remove",
        "--force",
        "--topic",
        "orders",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    want.retain(|r| r[1] != "orders");
    every_broker_lists(&cluster, &want);
    assert!(cluster.get("/kafka-acl/Topic/orders").is_none());

    // kcli through ZooKeeper removes; the brokers follow the notification.
    let removed = acls_ok(&[
        "remove",
        "--group",
        "team",
        "--resource-pattern-type",
        "prefixed",
        "--zookeeper",
        &connect,
        "--format",
        "json",
    ]);
    assert_eq!(
        rows(&removed, "removed"),
        [row("Group", "team", "Prefixed", "User:bob", "Read", "Deny")]
    );
    want.retain(|r| r[1] != "team");
    every_broker_lists(&cluster, &want);
}

/// With the authorizer on, the brokers (super users) still replicate: an acks=all produce to
/// a topic on all three completes and every replica holds the same log.
fn replicates_with_acks_all(cluster: &TestCluster) {
    create_topic(cluster, "replicated", 1, 3);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("acks", "all")
        .set("message.timeout.ms", "30000")
        .create()
        .unwrap();
    runtime.block_on(async {
        for i in 0..20 {
            let value = format!("v{i}");
            let record = FutureRecord::<(), _>::to("replicated").payload(&value);
            producer
                .send(record, Duration::from_secs(30))
                .await
                .unwrap_or_else(|(e, _)| panic!("acks=all produce: {e}\n{}", cluster.logs()));
        }
    });
    wait_for_identical_replica_logs(cluster, "replicated", 0, &[1, 2, 3]);
}
