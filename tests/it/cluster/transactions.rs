//! Transactions on three brokers: `__transaction_state` with three replicas, a transaction's
//! markers sent by its coordinator to leaders on other brokers over the inter-broker listener,
//! and every replica of a data partition the same log, markers included, with the same
//! aborted transactions in its `.txnindex` (a follower indexes the aborts it replicates).
//! kafka-clients 3.9.1 runs tests/clients/java/TransactionsCheck.java: commits, an abort, an
//! open transaction holding the last stable offset back, fencing; read_committed reads exactly
//! the committed records. A coordinator killed between EndTxn and its markers is succeeded by
//! one that completes the transaction.

use kcli::storage::transaction_index::TransactionIndex;

use super::wait_for_identical_replica_logs;
use crate::serve_clients::drivers::run_java_driver;
use crate::support::cluster::TestCluster;

const TOPIC: &str = "txns";

/// Every `.txnindex` entry of `dir`, in segment order.
fn aborted_transactions(
    dir: &std::path::Path,
) -> Vec<kcli::storage::transaction_index::AbortedTxn> {
    crate::storage_support::txn_index_files(dir)
        .iter()
        .flat_map(|n| {
            TransactionIndex::open(&dir.join(n))
                .unwrap()
                .entries()
                .to_vec()
        })
        .collect()
}

#[test]
fn java_transactions_on_three_brokers_replicate_their_markers_and_aborts() {
    let cluster = TestCluster::start(3, &[("transaction.state.log.num.partitions", "5")]);
    let scratch = tempfile::tempdir().unwrap();
    let s = run_java_driver(
        "TransactionsCheck",
        &[&cluster.bootstrap(), TOPIC, "3", "2"],
        scratch.path(),
    );
    assert_eq!(s["committed"], 3 * (4 + 2 + 1) + 1, "{s}");
    assert_eq!(s["read_uncommitted"], 3 * (4 + 2 + 1) + 1 + 3 * 3, "{s}");
    for partition in 0..3 {
        wait_for_identical_replica_logs(&cluster, TOPIC, partition, &[1, 2, 3]);
        let indexes: Vec<_> = [1, 2, 3]
            .iter()
            .map(|id| {
                aborted_transactions(&cluster.data_dir(*id).join(format!("{TOPIC}-{partition}")))
            })
            .collect();
        assert_eq!(indexes[0].len(), 1, "partition {partition}: one abort");
        assert!(indexes.iter().all(|i| *i == indexes[0]), "{indexes:?}");
    }
    // The coordinator's state is replicated too: `__transaction_state` has three replicas.
    for id in [1, 2, 3] {
        assert!(
            (0..5).any(|p| cluster
                .data_dir(id)
                .join(format!("__transaction_state-{p}"))
                .is_dir()),
            "broker {id}"
        );
    }
}

/// The transaction coordinator of `id` as broker `addr` answers FindCoordinator (key type 1).
pub(super) fn coordinator_of(addr: std::net::SocketAddr, id: &str) -> Option<i32> {
    use kcli::protocol::codec::StrBytes;
    use kcli::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
    use kcli::protocol::messages::{RequestKind, ResponseKind};
    let mut conn = crate::serve_support::KafkaConn::connect_to(addr);
    let response = conn.call(
        &RequestKind::FindCoordinator(FindCoordinatorRequest {
            key: StrBytes::from(id),
            key_type: 1,
            ..Default::default()
        }),
        3,
    );
    let ResponseKind::FindCoordinator(r) = response else {
        return None;
    };
    (r.error_code == 0).then_some(r.node_id)
}

/// The coordinator dies between EndTxn and the markers. The transaction's one partition is on
/// a broker stopped (SIGSTOP) when the producer commits: EndTxn is answered once PrepareCommit
/// is replicated, and the marker cannot be written. Then the coordinator is killed for good
/// (kill -9) and the stopped broker resumed. The new coordinator loads PrepareCommit from
/// `__transaction_state`, sends the marker again at its own coordinator epoch, and the
/// transaction completes: a read_committed consumer reads every record of it, and never part
/// of it before.
#[test]
fn a_coordinator_killed_between_end_txn_and_the_markers_is_completed_by_its_successor() {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    use std::time::{Duration, Instant};

    use super::create_topic_assigned;
    use crate::support::cluster::{signal, wait_until};

    const ID: &str = "failover-txn";
    const RECORDS: usize = 10;
    let mut cluster = TestCluster::start(
        3,
        &[
            ("transaction.state.log.num.partitions", "1"),
            ("replica.lag.time.max.ms", "3000"),
        ],
    );
    let producer: BaseProducer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("transactional.id", ID)
        .set("transaction.timeout.ms", "120000")
        .create()
        .unwrap();
    let timeout = Duration::from_secs(60);
    producer.init_transactions(timeout).unwrap();
    let old = coordinator_of(cluster.addr(1), ID).expect("a coordinator");
    let data = *cluster.ids().iter().find(|b| **b != old).unwrap();
    create_topic_assigned(&cluster, "failover", &[&[data]]);
    producer.begin_transaction().unwrap();
    for i in 0..RECORDS {
        producer
            .send(
                BaseRecord::<(), str>::to("failover")
                    .partition(0)
                    .payload(&format!("r{i}")),
            )
            .unwrap();
    }
    producer.flush(timeout).unwrap();
    let stopped = cluster.pid(data);
    signal(stopped, "STOP");
    producer.commit_transaction(timeout).unwrap();
    cluster.kill9(old);
    let survivor = *cluster
        .ids()
        .iter()
        .find(|b| **b != old && **b != data)
        .unwrap();
    wait_until(
        "a new transaction coordinator",
        Duration::from_secs(60),
        || coordinator_of(cluster.addr(survivor), ID).filter(|c| *c != old),
    );
    signal(stopped, "CONT");
    // The data partition's read_committed end offset, asked of its leader (ListOffsets v7,
    // isolation read_committed): 0 until the marker is written, then past the marker.
    let read_committed_end = || {
        use kcli::protocol::codec::StrBytes;
        use kcli::protocol::messages::list_offsets_request::{
            ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic,
        };
        use kcli::protocol::messages::{RequestKind, ResponseKind};
        let mut conn = crate::serve_support::KafkaConn::connect_to(cluster.addr(data));
        let request = RequestKind::ListOffsets(ListOffsetsRequest {
            replica_id: -1,
            isolation_level: 1,
            topics: vec![ListOffsetsTopic {
                name: StrBytes::from("failover"),
                partitions: vec![ListOffsetsPartition {
                    partition_index: 0,
                    current_leader_epoch: -1,
                    timestamp: -1,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        });
        let ResponseKind::ListOffsets(r) = conn.call(&request, 7) else {
            unreachable!()
        };
        let p = &r.topics[0].partitions[0];
        (p.error_code == 0).then_some(p.offset)
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let end = read_committed_end();
        // The records and a COMMIT marker after them, all readable by read_committed. (The
        // old coordinator's WriteTxnMarkers may still reach the resumed broker from its socket
        // and write a marker too; a second marker of a transaction already ended is harmless,
        // as in Kafka.)
        let records = i64::try_from(RECORDS).unwrap();
        if end.is_some_and(|e| e > records) {
            break;
        }
        assert!(
            end.is_none_or(|e| e == 0),
            "read_committed saw part of the transaction: end offset {end:?}"
        );
        assert!(
            Instant::now() < deadline,
            "the new coordinator did not complete the transaction (end {end:?})\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // It was the successor that completed the transaction: its own state says so.
    wait_until(
        "the successor's state CompleteCommit",
        Duration::from_secs(30),
        || {
            use kcli::protocol::codec::StrBytes;
            use kcli::protocol::messages::describe_transactions_request::DescribeTransactionsRequest;
            use kcli::protocol::messages::{RequestKind, ResponseKind};
            let mut conn = crate::serve_support::KafkaConn::connect_to(cluster.addr(survivor));
            let request = RequestKind::DescribeTransactions(DescribeTransactionsRequest {
                transactional_ids: vec![StrBytes::from(ID)],
                ..Default::default()
            });
            let ResponseKind::DescribeTransactions(r) = conn.call(&request, 0) else {
                return None;
            };
            let state = r.transaction_states.first()?;
            (state.error_code == 0 && state.transaction_state == "CompleteCommit").then_some(())
        },
    );
    drop(producer);
}
