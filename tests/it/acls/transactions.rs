//! Transactional ids under the authorizer, as Kafka 3.9 has them (KIP-679), over the raw
//! protocol on one kcli broker: PLAIN users `carol` and `dave` on a SASL_PLAINTEXT listener, a
//! PLAINTEXT admin listener whose `User:ANONYMOUS` is a super user and adds the ACLs with `kcli
//! acls --bootstrap-server`.
//!
//! - Without an ACL on the transactional id, FindCoordinator (key type 1), InitProducerId and a
//!   transactional Produce answer TRANSACTIONAL_ID_AUTHORIZATION_FAILED; Describe alone finds
//!   the coordinator but does not initialize the id.
//! - With Write on a prefix of ids, the id initializes, joins a transaction and produces;
//!   DescribeTransactions answers for it and refuses an id outside the prefix; ListTransactions
//!   lists only what the principal may describe.
//! - An idempotent (non-transactional) producer id needs IdempotentWrite on the cluster, or
//!   Write on any topic (KIP-679); without either, CLUSTER_AUTHORIZATION_FAILED.

use std::time::Duration;

use bytes::Bytes;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::add_partitions_to_txn_request::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnTopic,
};
use kcli::protocol::messages::describe_transactions_request::DescribeTransactionsRequest;
use kcli::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kcli::protocol::messages::list_transactions_request::ListTransactionsRequest;
use kcli::protocol::messages::produce_request::{
    PartitionProduceData, ProduceRequest, TopicProduceData,
};
use kcli::protocol::messages::{RequestKind, ResponseKind};
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;

use super::{ACL_AUTHORIZER, acls_ok};
use crate::serve_sasl_clients::{sasl_connect, sasl_overrides};
use crate::serve_support::{KafkaConn, TestBroker, auto_create_topic, now_ms};
use crate::serve_txn_verification::init_producer_id_answer;
use crate::support::cluster::wait_until;

const TOPIC: &str = "tx-acl";
const TXN_ID: &str = "tx-carol";
const CAROL: &str = "User:carol";
const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
/// How long an ACL change may take to apply.
const PROPAGATION: Duration = Duration::from_secs(10);

fn connect(broker: &TestBroker, user: &str) -> KafkaConn {
    sasl_connect(broker.port2(), "PLAIN", user, &format!("{user}-secret")).unwrap()
}

fn find_coordinator(conn: &mut KafkaConn, id: &str) -> i16 {
    let request = RequestKind::FindCoordinator(FindCoordinatorRequest {
        key: StrBytes::from(id.to_string()),
        key_type: 1,
        ..Default::default()
    });
    let ResponseKind::FindCoordinator(r) = conn.call(&request, 3) else {
        unreachable!()
    };
    r.error_code
}

fn produce(conn: &mut KafkaConn, id: &str, pid: i64, epoch: i16) -> i16 {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.producer_id = pid;
    b.producer_epoch = epoch;
    b.base_sequence = 0;
    b.is_transactional = true;
    b.records = vec![SimpleRecord::new(now_ms(), None, Some(b"v".to_vec()))];
    let request = RequestKind::Produce(ProduceRequest {
        transactional_id: Some(StrBytes::from(id.to_string())),
        acks: -1,
        timeout_ms: 10_000,
        topic_data: vec![TopicProduceData {
            name: StrBytes::from(TOPIC),
            partition_data: vec![PartitionProduceData {
                index: 0,
                records: Some(Bytes::from(b.build().unwrap())),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::Produce(p) = conn.call(&request, 11) else {
        unreachable!()
    };
    p.responses[0].partition_responses[0].error_code
}

fn describe_transaction(conn: &mut KafkaConn, id: &str) -> i16 {
    let request = RequestKind::DescribeTransactions(DescribeTransactionsRequest {
        transactional_ids: vec![StrBytes::from(id.to_string())],
        ..Default::default()
    });
    let ResponseKind::DescribeTransactions(r) = conn.call(&request, 0) else {
        unreachable!()
    };
    r.transaction_states[0].error_code
}

fn listed_transactions(conn: &mut KafkaConn) -> Vec<String> {
    let request = RequestKind::ListTransactions(ListTransactionsRequest::default());
    let ResponseKind::ListTransactions(r) = conn.call(&request, 0) else {
        unreachable!()
    };
    assert_eq!(r.error_code, 0);
    r.transaction_states
        .iter()
        .map(|t| t.transactional_id.to_string())
        .collect()
}

fn acl(admin: &str, args: &[&str]) {
    let mut all = vec!["add"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--bootstrap-server", admin]);
    acls_ok(&all);
}

#[test]
fn transactional_ids_and_idempotent_producers_need_their_acls() {
    let mut overrides = sasl_overrides();
    overrides.extend_from_slice(&[
        ("authorizer.class.name", ACL_AUTHORIZER),
        ("super.users", "User:ANONYMOUS"),
        ("transaction.state.log.num.partitions", "1"),
    ]);
    let broker = TestBroker::start(&overrides);
    let admin = broker.bootstrap();
    let mut super_user = KafkaConn::connect(broker.port());
    auto_create_topic(&mut super_user, TOPIC);
    // A transaction of the super user's, for the listings below.
    wait_until("the coordinator", PROPAGATION, || {
        (find_coordinator(&mut super_user, "admin-txn") == 0).then_some(())
    });
    let (code, ..) = wait_until("the admin's id", PROPAGATION, || {
        let answer = init_producer_id_answer(&mut super_user, Some("admin-txn"));
        (answer.0 != 15 && answer.0 != 14).then_some(answer)
    });
    assert_eq!(code, 0);

    let mut carol = connect(&broker, "carol");
    let mut dave = connect(&broker, "dave");
    // No ACLs: the id is not carol's to find, initialize or produce under.
    assert_eq!(
        find_coordinator(&mut carol, TXN_ID),
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    );
    assert_eq!(
        init_producer_id_answer(&mut carol, Some(TXN_ID)).0,
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    );
    assert_eq!(
        produce(&mut carol, TXN_ID, 0, 0),
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    );
    // Nor is an idempotent producer id.
    assert_eq!(
        init_producer_id_answer(&mut carol, None).0,
        CLUSTER_AUTHORIZATION_FAILED
    );

    // Describe finds the coordinator, but only Write initializes the id.
    acl(
        &admin,
        &[
            "--transactional-id",
            TXN_ID,
            "--allow-principal",
            CAROL,
            "--operation",
            "Describe",
        ],
    );
    wait_until("Describe applied", PROPAGATION, || {
        (find_coordinator(&mut carol, TXN_ID) == 0).then_some(())
    });
    assert_eq!(
        init_producer_id_answer(&mut carol, Some(TXN_ID)).0,
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    );

    // Write on the ids with carol's prefix, and on the topic.
    acl(
        &admin,
        &[
            "--transactional-id",
            "tx-",
            "--resource-pattern-type",
            "prefixed",
            "--allow-principal",
            CAROL,
            "--operation",
            "Write",
        ],
    );
    acl(
        &admin,
        &[
            "--topic",
            TOPIC,
            "--allow-principal",
            CAROL,
            "--operation",
            "Write",
        ],
    );
    let (pid, epoch) = wait_until("Write applied", PROPAGATION, || {
        let (code, pid, epoch) = init_producer_id_answer(&mut carol, Some(TXN_ID));
        (code == 0).then_some((pid, epoch))
    });
    let request = RequestKind::AddPartitionsToTxn(AddPartitionsToTxnRequest {
        v3_and_below_transactional_id: StrBytes::from(TXN_ID),
        v3_and_below_producer_id: pid,
        v3_and_below_producer_epoch: epoch,
        v3_and_below_topics: vec![AddPartitionsToTxnTopic {
            name: StrBytes::from(TOPIC),
            partitions: vec![0],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::AddPartitionsToTxn(r) = carol.call(&request, 3) else {
        unreachable!()
    };
    assert_eq!(
        r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code,
        0
    );
    assert_eq!(produce(&mut carol, TXN_ID, pid, epoch), 0);
    // Dave may not write under carol's id.
    assert_eq!(
        produce(&mut dave, TXN_ID, pid, epoch),
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    );
    // Write implies Describe: carol sees her transaction, not the admin's.
    assert_eq!(describe_transaction(&mut carol, TXN_ID), 0);
    assert_eq!(
        describe_transaction(&mut carol, "admin-txn"),
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    );
    assert_eq!(listed_transactions(&mut carol), vec![TXN_ID.to_string()]);
    let mut everything = listed_transactions(&mut super_user);
    everything.sort();
    assert_eq!(
        everything,
        vec!["admin-txn".to_string(), TXN_ID.to_string()]
    );

    // KIP-679: Write on a topic is enough for an idempotent producer; dave, with neither that
    // nor IdempotentWrite, is refused until he gets the latter.
    assert_eq!(init_producer_id_answer(&mut carol, None).0, 0);
    assert_eq!(
        init_producer_id_answer(&mut dave, None).0,
        CLUSTER_AUTHORIZATION_FAILED
    );
    acl(
        &admin,
        &[
            "--cluster",
            "--allow-principal",
            "User:dave",
            "--operation",
            "IdempotentWrite",
        ],
    );
    wait_until("IdempotentWrite applied", PROPAGATION, || {
        (init_producer_id_answer(&mut dave, None).0 == 0).then_some(())
    });
}
