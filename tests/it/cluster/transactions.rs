//! Transactions on three brokers: `__transaction_state` with three replicas, a transaction's
//! markers sent by its coordinator to leaders on other brokers over the inter-broker listener,
//! and every replica of a data partition the same log, markers included, with the same
//! aborted transactions in its `.txnindex` (a follower indexes the aborts it replicates).
//! kafka-clients 3.9.1 runs tests/clients/java/TransactionsCheck.java: commits, an abort, an
//! open transaction holding the last stable offset back, fencing; read_committed reads exactly
//! the committed records.

use kcli::storage::transaction_index::TransactionIndex;

use super::wait_for_identical_replica_logs;
use crate::serve_clients::drivers::run_java_driver;
use crate::support::cluster::TestCluster;

const TOPIC: &str = "txns";

/// Every `.txnindex` entry of `dir`, in segment order.
fn aborted_transactions(
    dir: &std::path::Path,
) -> Vec<kcli::storage::transaction_index::AbortedTxn> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txnindex"))
        .collect();
    names.sort();
    names
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
