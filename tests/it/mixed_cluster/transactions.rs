//! Transactions across kinds: a Kafka 3.9.1 broker and two kcli brokers, the data topic led by
//! both kinds. kafka-clients runs tests/clients/java/TransactionsCheck.java (commits, an abort,
//! an open transaction, fencing, offsets sent to transactions) three times, with the
//! transactional id's `__transaction_state` partition led by Kafka, then by kcli, then by Kafka
//! again: each coordinator sends its markers to leaders of both kinds, and each loads the
//! transaction state the other kind wrote. After each run every replica of the data topic is
//! one log, markers and all, on kcli's reader and on Kafka's DumpLogSegments.

use kcli::coordinator::internal_topic::partition_for;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};

use super::{assert_identical_replicas, create_topic, move_leadership};
use crate::serve_clients::drivers::run_java_driver;
use crate::serve_support::KafkaConn;
use crate::support::mixed_cluster::MixedCluster;

const TXN_STATE: &str = "__transaction_state";
const TXN_STATE_PARTITIONS: i32 = 3;
/// TransactionsCheck's transactional id.
const TXN_ID: &str = "kcli-java-txn-check";
const ASSIGNMENT: &[&[i32]] = &[&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];

/// The transaction coordinator of [`TXN_ID`] as broker `port` answers FindCoordinator.
fn coordinator_of_txn_id(port: u16) -> i32 {
    let mut conn = KafkaConn::connect(port);
    let response = conn.call(
        &RequestKind::FindCoordinator(FindCoordinatorRequest {
            key: StrBytes::from(TXN_ID),
            key_type: 1,
            ..Default::default()
        }),
        3,
    );
    let ResponseKind::FindCoordinator(r) = response else {
        panic!("not a FindCoordinator response");
    };
    assert_eq!(r.error_code, 0, "{r:?}");
    r.node_id
}

#[test]
fn transactions_with_a_coordinator_of_either_kind_and_leaders_of_both() {
    let cluster = MixedCluster::start(
        &[1],
        &[2, 3],
        &[(
            "transaction.state.log.num.partitions",
            &TXN_STATE_PARTITIONS.to_string(),
        )],
    );
    // The coordinator's partition led by Kafka first.
    create_topic(
        &cluster,
        TXN_STATE,
        &[&[1, 2, 3], &[1, 2, 3], &[1, 2, 3]],
        &[
            ("cleanup.policy", "compact"),
            ("min.insync.replicas", "2"),
            ("compression.type", "uncompressed"),
        ],
    );
    let coordinator_partition = partition_for(TXN_ID, TXN_STATE_PARTITIONS);
    let scratch = tempfile::tempdir().unwrap();
    for (run, coordinator) in [(1, 1), (2, 2), (3, 1)] {
        if run > 1 {
            let mut order = vec![coordinator];
            order.extend([1, 2, 3].into_iter().filter(|b| *b != coordinator));
            move_leadership(&cluster, TXN_STATE, coordinator_partition, &order);
        }
        for id in [1, 2, 3] {
            assert_eq!(
                coordinator_of_txn_id(cluster.port(id)),
                coordinator,
                "run {run}, asking {id}"
            );
        }
        let topic = format!("txns{run}");
        create_topic(
            &cluster,
            &topic,
            ASSIGNMENT,
            &[("min.insync.replicas", "2")],
        );
        let s = run_java_driver(
            "TransactionsCheck",
            &[&cluster.bootstrap(), &topic, "3", "2"],
            scratch.path(),
        );
        assert_eq!(s["committed"], 3 * (4 + 2 + 1) + 1, "run {run}: {s}");
        assert_eq!(
            s["read_uncommitted"],
            3 * (4 + 2 + 1) + 1 + 3 * 3,
            "run {run}: {s}"
        );
        for partition in 0..3 {
            assert_identical_replicas(&cluster, &topic, partition, &[1, 2, 3]);
        }
    }
    assert_identical_replicas(&cluster, TXN_STATE, coordinator_partition, &[1, 2, 3]);
}
